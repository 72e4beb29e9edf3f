package history

import (
	"errors"
	"math"
	"testing"

	"xbo/space"
)

// curveStudy is a hand-made multi-fidelity study: workers report at steps
// 1, 2, 4, 8 (trial 4 on another grid: 1, 3, 8); some trials were pruned.
func curveStudy(t *testing.T) *History {
	t.Helper()
	sp, err := space.New(space.Minimize, []space.Param{{Name: "x", Type: space.Float, Low: 0, High: 1}})
	if err != nil {
		t.Fatal(err)
	}
	c := func(steps ...float64) []Intermediate {
		var out []Intermediate
		for k := 0; k < len(steps); k += 2 {
			out = append(out, Intermediate{Step: int64(steps[k]), Value: steps[k+1]})
		}
		return out
	}
	nan := math.NaN()
	return &History{Space: sp, Source: "hand", Trials: []Trial{
		{Number: 0, State: Complete, Params: []float64{0.1}, Value: 1.5, Intermediate: c(1, 9, 2, 6, 4, 3, 8, 2)},
		{Number: 1, State: Pruned, Params: []float64{0.2}, Value: 7, Intermediate: c(1, 8, 2, 7)},
		{Number: 2, State: Complete, Params: []float64{0.3}, Value: 0.9, Intermediate: c(8, 1, 1, 5, 4, 2, 2, 4)}, // unsorted
		{Number: 3, State: Running, Params: []float64{0.4}, Value: nan, Intermediate: c(1, 1, 2, 1, 4, 1)},
		{Number: 4, State: Complete, Params: []float64{0.5}, Value: 2.5, Intermediate: c(1, 7, 3, 5, 8, 3)},
		{Number: 5, State: Pruned, Params: []float64{0.6}, Value: 4, Intermediate: c(1, 6, 2, 5, 4, 4)},
		{Number: 6, State: Failed, Params: []float64{0.7}, Value: nan, Intermediate: c(1, 2, 2, 2)},
		{Number: 7, State: Complete, Params: []float64{0.8}, Value: 3, Intermediate: c(2, 6, 4, 4, 8, nan)}, // NaN at 8 is no report
		{Number: 8, State: Complete, Params: []float64{0.9}, Value: 5},                                      // no curve
	}}
}

func TestValueAtAndAtBudget(t *testing.T) {
	h := curveStudy(t)
	// Values at each budget by the rule (largest step ≤ b, trial reported at
	// a step ≥ b, complete or pruned), worked out by hand; absent: no value.
	want := map[int64]map[int64]float64{
		0: {},
		1: {0: 9, 1: 8, 2: 5, 4: 7, 5: 6},
		2: {0: 6, 1: 7, 2: 4, 4: 7, 5: 5, 7: 6},
		3: {0: 6, 2: 4, 4: 5, 5: 5, 7: 6},
		4: {0: 3, 2: 2, 4: 5, 5: 4, 7: 4},
		5: {0: 3, 2: 2, 4: 5},
		8: {0: 2, 2: 1, 4: 3},
		9: {},
	}
	for b, vals := range want {
		for i := range h.Trials {
			tr := &h.Trials[i]
			v, ok := tr.ValueAt(b)
			w, wok := vals[tr.Number]
			if ok != wok || (ok && v != w) {
				t.Errorf("budget %d, trial %d: ValueAt = %v, %v; want %v, %v", b, tr.Number, v, ok, w, wok)
			}
		}
		view, err := h.AtBudget(b)
		if len(vals) == 0 {
			if !errors.Is(err, ErrBudget) {
				t.Errorf("budget %d: AtBudget err %v, want ErrBudget", b, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("budget %d: %v", b, err)
		}
		if len(view.Trials) != len(vals) || len(view.Usable()) != len(vals) {
			t.Fatalf("budget %d: view has %d trials (%d usable), want %d", b, len(view.Trials), len(view.Usable()), len(vals))
		}
		for _, tr := range view.Trials {
			if tr.State != Complete || tr.Value != vals[tr.Number] {
				t.Errorf("budget %d: trial %d in view is %s %v, want complete %v", b, tr.Number, tr.State, tr.Value, vals[tr.Number])
			}
			for _, iv := range tr.Intermediate {
				if iv.Step > b {
					t.Errorf("budget %d: trial %d keeps step %d", b, tr.Number, iv.Step)
				}
			}
		}
	}
	if h.Trials[1].State != Pruned || h.Trials[1].Value != 7 {
		t.Fatal("AtBudget changed the original history")
	}
	if _, err := h.AtBudget(-1); !errors.Is(err, ErrBudget) {
		t.Errorf("negative budget: %v", err)
	}
	_, err := h.AtBudget(9)
	if err == nil || err.Error() != "budget not reached: no complete or pruned trial has a value at budget 9 (one that reported at a step ≤ 9 and at a step ≥ 9) (finished trials have values at 5 budget(s) from 1 to 8)" {
		t.Errorf("budget 9: %v", err)
	}
}

func TestBudgetsCountsMatchValueAt(t *testing.T) {
	h := curveStudy(t)
	got := h.Budgets()
	steps := []int64{1, 2, 3, 4, 8}
	if len(got) != len(steps) {
		t.Fatalf("budgets %+v, want steps %v", got, steps)
	}
	for k, b := range steps {
		trials, pruned := 0, 0
		for i := range h.Trials {
			if _, ok := h.Trials[i].ValueAt(b); ok {
				trials++
				if h.Trials[i].State == Pruned {
					pruned++
				}
			}
		}
		if got[k] != (BudgetCount{Step: b, Trials: trials, Pruned: pruned}) {
			t.Errorf("budget %d: %+v, want %d trials, %d pruned", b, got[k], trials, pruned)
		}
	}
}

func TestCurvesFingerprint(t *testing.T) {
	h := curveStudy(t)
	a, err := h.CurvesFingerprint()
	if err != nil {
		t.Fatal(err)
	}
	h.Trials[3].Intermediate[0].Value = 99 // a running trial's curve does not count
	if b, _ := h.CurvesFingerprint(); b != a {
		t.Error("a running trial's curve changed the fingerprint")
	}
	h.Trials[1].Intermediate[0].Value = 99 // a pruned one's does
	if b, _ := h.CurvesFingerprint(); b == a {
		t.Error("a pruned trial's curve did not change the fingerprint")
	}
}
