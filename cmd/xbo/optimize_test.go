package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xbo/bench"
	"xbo/trials"
)

// TestOptimizeBraninRegret is the acceptance check, through the real
// CLI path: `xbo optimize --function branin --budget 40 --seed 1 --strategy
// ei` must reach a simple regret below 0.05 (optimum 0.397887).
func TestOptimizeBraninRegret(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trials.csv")
	code, stdout, stderr := runCLI(t, "optimize", "--function", "branin", "--budget", "40", "--seed", "1", "--strategy", "ei", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got struct {
		Best struct {
			Params map[string]float64 `json:"params"`
			Value  float64            `json:"value"`
		} `json:"best"`
		Trials    int  `json:"trials"`
		Fallbacks *int `json:"random_fallbacks"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	// The count of random fallbacks is the CSV's.
	csv, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Count(string(csv), ",random-fallback"); got.Fallbacks == nil || *got.Fallbacks != want {
		t.Errorf("random_fallbacks %v, want %d (the CSV's)", got.Fallbacks, want)
	}
	f, err := bench.Lookup("branin", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Trials != 40 {
		t.Errorf("trials = %d, want 40", got.Trials)
	}
	// The reported value must be the function at the reported parameters.
	if v := f.Eval([]float64{got.Best.Params["x1"], got.Best.Params["x2"]}); math.Abs(v-got.Best.Value) > 1e-12 {
		t.Errorf("reported value %v, but branin(params) = %v", got.Best.Value, v)
	}
	if regret := got.Best.Value - f.Optimum; regret >= 0.05 {
		t.Errorf("simple regret %v, want < 0.05", regret)
	}

	// The CSV has every trial with the acquisition that chose it.
	s, err := f.Space()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := trials.ReadFile(out, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Usable()) != 40 || len(tab.Trials) != 40 {
		t.Fatalf("CSV has %d usable rows of %d, want 40 of 40", len(tab.Usable()), len(tab.Trials))
	}
	counts := map[string]int{}
	for _, tr := range tab.Trials {
		counts[tr.Acquisition]++
	}
	// After the design EI chose every trial, except the odd near-copy of
	// an earlier trial that the optimizer replaced by a random one.
	if counts["initial-design"] != 8 || counts["ei"]+counts["random-fallback"] != 32 || counts["ei"] < 28 {
		t.Errorf("acquisitions %v, want 8 initial-design and 32 ei or random-fallback, at least 28 ei", counts)
	}
	if b, _ := tab.Best(); tab.Trials[b].Value != got.Best.Value {
		best := tab.Trials[b].Value
		t.Errorf("CSV best %v differs from the JSON best %v", best, got.Best.Value)
	}
	header, _ := os.ReadFile(out)
	if !strings.HasPrefix(string(header), "x1,x2,value,acquisition\n") {
		t.Errorf("CSV header %q", strings.SplitN(string(header), "\n", 2)[0])
	}
}

func TestOptimizeTextAndStrategies(t *testing.T) {
	code, stdout, stderr := runCLI(t, "optimize", "--function", "styblinski-tang", "--dims", "3", "--budget", "15", "--seed", "2", "--strategy", "lcb", "--tau", "2", "--noise", "0.1")
	if code != 0 || !strings.Contains(stdout, "best value") || !strings.Contains(stdout, "simple regret") {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "optimize", "--function", "hartmann3", "--budget", "6", "--strategy", "random", "--json")
	if code != 0 || !strings.Contains(stdout, `"trials":6`) {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

func TestOptimizeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"optimize", "--budget", "10"},
		{"optimize", "--function", "branin"},
		{"optimize", "--function", "nope", "--budget", "3"},
		{"optimize", "--function", "branin", "--budget", "3", "--strategy", "ucb"},
		{"optimize", "--function", "branin", "--budget", "3", "--tau", "-1"},
		{"optimize", "--function", "branin", "--budget", "3", "--noise", "-1"},
		{"optimize", "--function", "styblinski-tang", "--budget", "3"},
		{"optimize", "--function", "branin", "--budget", "3", "stray"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.HasPrefix(stderr, "xbo optimize: ") && !strings.Contains(stderr, "xbo optimize: ") {
			t.Errorf("%v: exit %d, stderr %q (want usage error, exit 2)", args, code, stderr)
		}
	}
}

func TestBenchDispatch(t *testing.T) {
	code, _, stderr := runCLI(t, "bench")
	if code != 2 || !strings.Contains(stderr, "compare") {
		t.Errorf("bare bench: exit %d stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "bench", "nope")
	if code != 2 || !strings.Contains(stderr, `unknown benchmark "nope"`) {
		t.Errorf("unknown benchmark: exit %d stderr %q", code, stderr)
	}
	// A reduced comparison (2 seeds, 5 evaluations per dimension) checks the
	// plumbing and the JSON shape, not the statistics.
	code, stdout, stderr := runCLI(t, "bench", "compare", "--functions", "branin,styblinski-tang:2", "--seeds", "2", "--budget-per-dim", "5", "--json")
	if code != 0 {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	var res bench.CompareResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || len(res.Runs) != 8 || res.Rows[0].Budget != 10 || len(res.Rows[0].Strategies) != 2 {
		t.Fatalf("result %+v", res)
	}
	code, stdout, _ = runCLI(t, "bench", "compare", "--functions", "branin", "--seeds", "1", "--budget-per-dim", "3")
	if code != 0 || !strings.Contains(stdout, "median regret ei") || !strings.Contains(stdout, "branin") {
		t.Errorf("table output: exit %d %q", code, stdout)
	}
}

func TestOptimizeABOBAXRecordsBandWidthAndSwitch(t *testing.T) {
	code, _, errOut := runCLI(t, "optimize", "--function", "branin", "--budget", "12", "--strategy", "a-bobax")
	if code != 2 || !strings.Contains(errOut, "--pd-tolerance") {
		t.Fatalf("a-bobax without a tolerance: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut := runCLI(t, "optimize", "--function", "branin", "--budget", "20", "--seed", "1",
		"--strategy", "a-bobax", "--pd-tolerance", "8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Trials int `json:"trials"`
		ABOBAX *struct {
			SwitchedAt int `json:"switched_at"`
			Log        []struct {
				Evaluations int     `json:"evaluations"`
				HalfWidth   float64 `json:"half_width"`
				Phase       string  `json:"phase"`
				Acquisition string  `json:"acquisition"`
			} `json:"log"`
		} `json:"a_bobax"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.ABOBAX == nil || len(res.ABOBAX.Log) != 20-8 {
		t.Fatalf("want a band record for each of the 12 model-based proposals: %s", out)
	}
	sawEIG := false
	for _, r := range res.ABOBAX.Log {
		if r.Phase == "interleave" && r.Acquisition == "eig-pdp" {
			sawEIG = true
		}
		// After the switch only EI is used, and the switch happens at the
		// first record whose band is within the tolerance.
		if r.Phase == "optimize" && r.Acquisition != "ei" {
			t.Fatalf("after the switch: %+v", r)
		}
		if r.Phase == "interleave" && r.HalfWidth <= 8 {
			t.Fatalf("band %v within tolerance but still interleaving", r.HalfWidth)
		}
	}
	if !sawEIG {
		t.Fatal("a-bobax never used EIG_PDP before the switch")
	}
	if res.ABOBAX.SwitchedAt >= 0 && res.ABOBAX.Log[res.ABOBAX.SwitchedAt-8].Phase != "optimize" {
		t.Fatalf("switched_at %d does not match the log", res.ABOBAX.SwitchedAt)
	}
}

// A run that stops part-way (cancelled once its temporary CSV holds rows)
// leaves an existing --out file as it was and no temporary file beside it;
// a run that finishes replaces it (D10).
func TestOptimizeOutIsAtomic(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "trials.csv")
	if err := os.WriteFile(out, []byte("previous\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sawRows := make(chan bool, 1)
	go func() {
		defer cancel()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(time.Millisecond) {
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp") {
					b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
					if strings.Count(string(b), "\n") >= 4 {
						sawRows <- true
						return
					}
				}
			}
		}
		sawRows <- false
	}()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"optimize", "--function", "branin", "--budget", "60", "--seed", "1", "--out", out},
		&cliEnv{stdout: &stdout, stderr: &stderr, stdin: strings.NewReader("")})
	if !<-sawRows {
		t.Fatal("the run never streamed rows into a temporary file")
	}
	if code == 0 {
		t.Fatalf("a cancelled run exited 0")
	}
	if b, _ := os.ReadFile(out); string(b) != "previous\n" {
		t.Fatalf("--out after a cancelled run holds %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files left beside --out: %v", entries)
	}
	code, _, errOut := runCLI(t, "optimize", "--function", "branin", "--budget", "10", "--seed", "1", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") != 11 {
		t.Fatalf("--out after a finished run:\n%s", b)
	}
}
