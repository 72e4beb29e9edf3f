package bench

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeGrid writes a full 3 × 2 grid whose value is a + 10·b over the level
// values a ∈ {0.5, 0.1, 0.2} (unsorted on purpose) and b ∈ {7, 3}.
func writeGrid(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "grid.csv")
	text := "a,b,err,other\n0.5,7,70.5,x\n0.1,7,70.1,x\n0.2,7,70.2,x\n0.5,3,30.5,x\n0.1,3,30.1,x\n0.2,3,30.2,x\n" + extra
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadGrid(t *testing.T) {
	f, err := LoadGrid(writeGrid(t, ""), []string{"a", "b"}, "err")
	if err != nil {
		t.Fatal(err)
	}
	// Levels are sorted: a index 0 → 0.1, 2 → 0.5; b index 0 → 3.
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{0, 0}, 30.1}, {[]float64{2, 1}, 70.5}, {[]float64{1, 1}, 70.2},
	} {
		if got := f.Eval(c.x); got != c.want {
			t.Errorf("f(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if f.Optimum != 30.1 || f.Argmin[0][0] != 0 || f.Argmin[0][1] != 0 {
		t.Errorf("optimum %v at %v, want 30.1 at [0 0]", f.Optimum, f.Argmin)
	}
	if v := f.Eval([]float64{0.5, 0}); !math.IsNaN(v) {
		t.Errorf("off-grid point gave %v", v)
	}
	s, err := f.Space()
	if err != nil || s.Params[0].High != 2 || s.Params[1].High != 1 {
		t.Fatalf("space %+v, %v", s, err)
	}
	if _, err := LoadGrid(writeGrid(t, "0.5,7,1,x\n"), []string{"a", "b"}, "err"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate configuration: %v", err)
	}
	if _, err := LoadGrid(writeGrid(t, "0.3,7,1,x\n"), []string{"a", "b"}, "err"); err == nil || !strings.Contains(err.Error(), "full grid") {
		t.Errorf("incomplete grid: %v", err)
	}
	if _, err := LoadGrid(writeGrid(t, ""), []string{"a", "nope"}, "err"); err == nil {
		t.Error("missing column accepted")
	}
}

// TestPeersRegretIsMeasuredTheSameWay runs xbo and Optuna's random sampler on
// the conditional problem, with 3 workers: every run asks its whole budget
// and reports a finite regret, xbo beats random search there, and the cache
// gives the Optuna runs back unchanged.
func TestPeersRegretIsMeasuredTheSameWay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Python")
	}
	python := DefaultPython()
	if err := exec.Command(python, "-c", "import optuna").Run(); err != nil {
		if os.Getenv("XBO_REQUIRE_OPTUNA") != "" {
			t.Fatalf("XBO_REQUIRE_OPTUNA is set but %s cannot import optuna: %v", python, err)
		}
		t.Skipf("python3-optuna is not installed: %v", err)
	}
	cache := t.TempDir()
	o := PeersOptions{Problems: []string{ProblemConditionalMx}, Methods: []string{MethodXBO, MethodRandom}, Workers: []int{3}, Seeds: 2, Cache: cache}
	res, err := Peers(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 || len(res.Rows) != 1 {
		t.Fatalf("%d runs, %d rows", len(res.Runs), len(res.Rows))
	}
	for _, r := range res.Runs {
		if len(r.AskSeconds) != 120 || !(r.Regret >= 0) || math.IsInf(r.Regret, 0) {
			t.Errorf("%s seed %d: %d asks, regret %v", r.Method, r.Seed, len(r.AskSeconds), r.Regret)
		}
	}
	// On this smooth 4-d problem xbo beats random search at 120 evaluations.
	row := res.Rows[0]
	if !(row.Methods[0].Median < row.Methods[1].Median) || row.Wins[1] != 2 {
		t.Errorf("xbo median %v vs random %v, wins %d/2", row.Methods[0].Median, row.Methods[1].Median, row.Wins[1])
	}
	// Both methods' runs are cached (xbo's under the test binary's digest)
	// and read back, not rerun: the same regrets.
	files, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	if len(files) != 4 {
		t.Fatalf("cache holds %v", files)
	}
	if err := os.WriteFile(filepath.Join(cache, filepath.Base(files[0])), []byte(`{"problem":"conditional","method":"random","regret":123}`), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Peers(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// files[0] is the random run of seed 1 (sorted names), now doctored.
	if again.Runs[2].Regret != 123 {
		t.Errorf("the cached random run was not read back: regret %v", again.Runs[2].Regret)
	}
	for _, k := range []int{0, 1, 3} {
		if again.Runs[k].Regret != res.Runs[k].Regret {
			t.Errorf("run %d: cached regret %v, first run %v", k, again.Runs[k].Regret, res.Runs[k].Regret)
		}
	}
	if _, err := Peers(context.Background(), PeersOptions{Methods: []string{"smac"}}); err == nil {
		t.Error("unknown method accepted")
	}
}

// TestEightWorkersKeepQuality is the parallel case on Branin: with 7
// trials always pending, the default (kriging believer) keeps the regret of a
// sequential run's order, where the constant liar "best" left a median of
// 1.26 (it makes every running trial a fake optimum that EI proposes beside).
func TestEightWorkersKeepQuality(t *testing.T) {
	p, err := LoadProblem(ProblemBranin, "")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		var run PeerRun
		if err := xboRun(context.Background(), p, 8, seed, nil, &run); err != nil {
			t.Fatal(err)
		}
		if run.Regret > 0.01 {
			t.Errorf("seed %d: regret %.3g with 8 workers, want ≤ 0.01", seed, run.Regret)
		}
	}
}
