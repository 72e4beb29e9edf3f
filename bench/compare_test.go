package bench

import (
	"context"
	"math"
	"reflect"
	"testing"

	"xbo/opt"
)

func TestQuartiles(t *testing.T) {
	// numpy.percentile([4, 1, 3, 2], [25, 50, 75]) = 1.75, 2.5, 3.25.
	q25, q50, q75 := quartiles([]float64{4, 1, 3, 2})
	if q25 != 1.75 || q50 != 2.5 || q75 != 3.25 {
		t.Errorf("quartiles = %v %v %v, want 1.75 2.5 3.25", q25, q50, q75)
	}
	if _, m, _ := quartiles([]float64{7}); m != 7 {
		t.Errorf("median of one value = %v", m)
	}
	if _, m, _ := quartiles(nil); !math.IsNaN(m) {
		t.Errorf("median of nothing = %v, want NaN", m)
	}
}

func TestParseFunctionSpec(t *testing.T) {
	if n, d, err := ParseFunctionSpec(" styblinski-tang:3 "); err != nil || n != "styblinski-tang" || d != 3 {
		t.Errorf("got %q %d %v", n, d, err)
	}
	if n, d, err := ParseFunctionSpec("branin"); err != nil || n != "branin" || d != 0 {
		t.Errorf("got %q %d %v", n, d, err)
	}
	for _, bad := range []string{"branin:", "branin:0", "branin:two"} {
		if _, _, err := ParseFunctionSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRun(t *testing.T) {
	var told []opt.Trial
	res, err := Run(context.Background(), RunOptions{
		Function: NameHartmann3, Budget: 20, Seed: 4, Strategy: "ei",
		OnTrial: func(tr opt.Trial) error { told = append(told, tr); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != 20 || len(res.History) != 20 || len(res.Trace) != 20 {
		t.Fatalf("%d callbacks, %d trials, %d trace points", len(told), len(res.History), len(res.Trace))
	}
	for i, tr := range told {
		if tr.State != opt.Complete || tr.Value != res.Function.Eval(tr.Params) {
			t.Errorf("trial %d: state %s value %v, want complete with f(params)", i, tr.State, tr.Value)
		}
		if i > 0 && res.Trace[i] > res.Trace[i-1] {
			t.Errorf("regret trace increases at %d: %v > %v", i, res.Trace[i], res.Trace[i-1])
		}
	}
	if want := res.Best.Value - res.Function.Optimum; math.Abs(res.Regret-want) > 1e-12 || res.Trace[19] != res.Regret {
		t.Errorf("regret %v, trace end %v, want best − optimum = %v", res.Regret, res.Trace[19], want)
	}

	// With noise, the regret is the noise-free value at the best observed
	// configuration.
	noisy, err := Run(context.Background(), RunOptions{Function: NameBranin, Budget: 12, Seed: 4, Strategy: "random", Noise: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := noisy.Function.Eval(noisy.Best.Params) - noisy.Function.Optimum; noisy.Regret != want {
		t.Errorf("noisy regret %v, want f(best params) − optimum = %v", noisy.Regret, want)
	}
	if noisy.Best.Value == noisy.Function.Eval(noisy.Best.Params) {
		t.Error("noise was not added")
	}

	for _, bad := range []RunOptions{
		{Function: "nope", Budget: 3},
		{Function: NameBranin, Budget: 0},
		{Function: NameBranin, Budget: 3, Noise: -1},
		{Function: NameBranin, Budget: 3, Strategy: "ucb"},
	} {
		if _, err := Run(context.Background(), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, RunOptions{Function: NameBranin, Budget: 3}); err == nil {
		t.Error("cancelled context ignored")
	}
}

func TestCompareDoesNotDependOnWorkers(t *testing.T) {
	var results [2]*CompareResult
	for k, workers := range []int{1, 2} {
		res, err := Compare(context.Background(), CompareOptions{
			Functions: []string{NameBranin, "styblinski-tang:2"}, Seeds: 3, BudgetPerDim: 6, Workers: workers,
		})
		if err != nil {
			t.Fatal(err)
		}
		results[k] = res
	}
	if !reflect.DeepEqual(results[0], results[1]) {
		t.Fatal("results depend on the number of workers")
	}
	res := results[0]
	if len(res.Rows) != 2 || len(res.Runs) != 12 {
		t.Fatalf("%d rows, %d runs", len(res.Rows), len(res.Runs))
	}
	row := res.Rows[0]
	var ei, rs []float64
	for _, r := range res.Runs {
		if r.Function == NameBranin {
			if r.Strategy == "ei" {
				ei = append(ei, r.Regret)
			} else {
				rs = append(rs, r.Regret)
			}
		}
	}
	_, medEI, _ := quartiles(ei)
	_, medRS, _ := quartiles(rs)
	wins := 0
	for i := range ei {
		if ei[i] < rs[i] {
			wins++
		}
	}
	if row.Budget != 12 || row.Strategies[0].Median != medEI || row.Strategies[1].Median != medRS || row.Wins != wins || row.FirstBeatsSecond != (medEI < medRS) {
		t.Errorf("row %+v disagrees with its runs (medians %v %v, wins %d)", row, medEI, medRS, wins)
	}
	if row.Strategies[0].MedianAt[3] != row.Strategies[0].Median {
		t.Errorf("median at 100%% of the budget %v differs from the final median %v", row.Strategies[0].MedianAt[3], row.Strategies[0].Median)
	}
	if _, err := Compare(context.Background(), CompareOptions{Functions: []string{"styblinski-tang"}}); err == nil {
		t.Error("a function without its dimension was accepted")
	}
}
