package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeShapleyFixture writes a conditional space and 30 trials of a smooth
// function: 10 design rows, then rows labelled as LCB proposals.
func writeShapleyFixture(t *testing.T) (spacePath, dataPath string) {
	t.Helper()
	dir := t.TempDir()
	spacePath = filepath.Join(dir, "space.json")
	if err := os.WriteFile(spacePath, []byte(`{"objective": "maximize", "params": [
		{"name": "lr", "type": "float", "low": 0.0001, "high": 0.1, "log": true, "default": 0.01},
		{"name": "layers", "type": "int", "low": 1, "high": 4, "default": 2},
		{"name": "opt", "type": "categorical", "choices": ["sgd", "adam"], "default": "adam"},
		{"name": "momentum", "type": "float", "low": 0, "high": 0.99, "condition": {"parent": "opt", "values": ["sgd"]}}
	]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("lr,layers,opt,momentum,value,acquisition\n")
	for i := range 30 {
		lr := math.Exp(math.Log(1e-4) + rng.Float64()*math.Log(1e3))
		layers := 1 + rng.IntN(4)
		opt := []string{"sgd", "adam"}[rng.IntN(2)]
		mom := ""
		m := 0.0
		if opt == "sgd" {
			m = rng.Float64() * 0.99
			mom = fmt.Sprintf("%.4f", m)
		}
		acc := 0.9 - 0.02*math.Pow(math.Log10(lr)+2, 2) - 0.01*math.Abs(float64(layers)-3) + 0.03*m
		acq := "initial-design"
		if i >= 10 {
			acq = "lcb"
		}
		fmt.Fprintf(&b, "%.6g,%d,%s,%s,%.6f,%s\n", lr, layers, opt, mom, acc, acq)
	}
	dataPath = filepath.Join(dir, "trials.csv")
	if err := os.WriteFile(dataPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return spacePath, dataPath
}

func TestExplainShapleyJSONShape(t *testing.T) {
	sp, data := writeShapleyFixture(t)
	code, out, errOut := runCLI(t, "explain", "shapley", "--data", data, "--space", sp,
		"--point", `{"lr": 0.01, "layers": 3, "opt": "adam"}`, "--background", "500", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Direction   string         `json:"direction"`
		Point       map[string]any `json:"point"`
		Explanation struct {
			Method   string   `json:"method"`
			Params   []string `json:"params"`
			SEWeight float64  `json:"se_weight"`
			Outputs  []struct {
				Output string    `json:"output"`
				Payout float64   `json:"payout"`
				Phi    []float64 `json:"phi"`
				Lower  []float64 `json:"lower"`
			} `json:"outputs"`
		} `json:"explanation"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ex := got.Explanation
	if ex.Method != "exact" || got.Point["opt"] != "adam" || got.Point["layers"] != 3.0 || got.Direction != "maximize" || ex.SEWeight != 1 {
		t.Errorf("header %+v", got)
	}
	if _, ok := got.Point["momentum"]; ok {
		t.Errorf("inactive momentum in point")
	}
	phi := map[string][]float64{}
	for _, o := range ex.Outputs {
		sum := 0.0
		for _, v := range o.Phi {
			sum += v
		}
		if len(o.Phi) != 4 || len(o.Lower) != 4 || math.Abs(sum-o.Payout) > 1e-9 {
			t.Errorf("%s: %v sums to %v, payout %v", o.Output, o.Phi, sum, o.Payout)
		}
		phi[o.Output] = o.Phi
	}
	// Switched off at the point: no credit (package doc of explain/shapley).
	if phi["mean"][3] != 0 || phi["cb"][3] != 0 {
		t.Errorf("inactive momentum got %v / %v", phi["mean"][3], phi["cb"][3])
	}
	// A maximized objective: cb is the upper bound m + τ·s.
	if math.Abs(phi["cb"][0]-(phi["mean"][0]+phi["se"][0])) > 1e-9 {
		t.Errorf("φ(cb) ≠ φ(m) + τφ(se)")
	}
}

func TestExplainShapleyVariants(t *testing.T) {
	sp, data := writeShapleyFixture(t)
	svg := filepath.Join(t.TempDir(), "d.svg")
	for _, args := range [][]string{
		{"--trial", "20", "--method", "mc", "--k", "200", "--max-k", "800", "--background", "300", "--tau", "3", "--svg", svg},
		{"--point", "best", "--method", "baseline", "--baseline", "default"},
		{"--point", "last", "--target", "ei", "--background", "300"},
		{"--point", "default", "--local", "0.1", "--background", "300"},
	} {
		code, out, errOut := runCLI(t, append([]string{"explain", "shapley", "--data", data, "--space", sp}, args...)...)
		if code != 0 || !strings.Contains(out, "parameter") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.HasPrefix(string(b), "<svg") {
		t.Errorf("svg: %v", err)
	}
	for _, args := range [][]string{
		{"--point", `{"lr": 7}`},
		{"--point", `{"bogus": 1}`},
		{"--method", "magic"},
		{"--k", "1", "--method", "mc"},
		{"--target", "nope"},
		{"--trial", "999"},
	} {
		code, _, errOut := runCLI(t, append([]string{"explain", "shapley", "--data", data, "--space", sp}, args...)...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, want usage error 2 (%s)", args, code, errOut)
		}
	}
	if code, _, _ := runCLI(t, "explain", "shapley", "--space", sp); code != 2 {
		t.Errorf("missing --data: exit %d", code)
	}
}

func TestExplainPathsAblationLPI(t *testing.T) {
	sp, data := writeShapleyFixture(t)
	svg := filepath.Join(t.TempDir(), "p.svg")
	code, out, errOut := runCLI(t, "explain", "paths", "--trials", data, "--space", sp, "--k", "100", "--background", "200", "--svg", svg, "--json")
	if code != 0 {
		t.Fatalf("paths: exit %d: %s", code, errOut)
	}
	var paths struct {
		Params []string `json:"params"`
		Steps  []struct {
			Trial       int `json:"trial"`
			Observed    int `json:"observed"`
			Explanation struct {
				Outputs []struct {
					Phi []float64 `json:"phi"`
				} `json:"outputs"`
			} `json:"explanation"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &paths); err != nil {
		t.Fatal(err)
	}
	// The 20 rows labelled lcb are the proposals, each explained with the
	// surrogate of the trials before it.
	if len(paths.Steps) != 20 || paths.Steps[0].Trial != 10 || paths.Steps[0].Observed != 10 || len(paths.Steps[5].Explanation.Outputs[2].Phi) != 4 {
		t.Errorf("paths: %d steps, first %+v", len(paths.Steps), paths.Steps[0])
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.HasPrefix(string(b), "<svg") {
		t.Errorf("paths svg: %v", err)
	}
	code, out, errOut = runCLI(t, "explain", "ablation", "--data", data, "--space", sp, "--source", "default", "--target", "best")
	if code != 0 || !strings.Contains(out, "improvement") {
		t.Errorf("ablation: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "explain", "ablation", "--data", data, "--space", sp, "--json")
	var abl struct {
		Steps []struct {
			Contribution float64 `json:"contribution"`
		} `json:"steps"`
		SourcePrediction float64 `json:"source_prediction"`
		TargetPrediction float64 `json:"target_prediction"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &abl) != nil {
		t.Fatalf("ablation json: exit %d %s", code, errOut)
	}
	total := 0.0
	for _, s := range abl.Steps {
		total += s.Contribution
	}
	// A maximized objective: an improvement raises the predicted mean.
	if math.Abs(total-(abl.TargetPrediction-abl.SourcePrediction)) > 1e-9 {
		t.Errorf("ablation contributions sum to %v, want %v", total, abl.TargetPrediction-abl.SourcePrediction)
	}
	code, out, errOut = runCLI(t, "explain", "lpi", "--data", data, "--space", sp, "--hstat", "--hpoints", "20")
	if code != 0 || !strings.Contains(out, "H²") {
		t.Errorf("lpi: exit %d\n%s%s", code, out, errOut)
	}
}
