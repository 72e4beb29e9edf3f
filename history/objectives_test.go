package history

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"xbo/space"
)

func moSpace(t *testing.T, constraints []string) *space.Space {
	t.Helper()
	sp, err := space.NewWithObjectives("", []space.Objective{{Name: "err", Direction: space.Minimize}, {Name: "acc", Direction: space.Maximize}},
		constraints, []space.Param{{Name: "x", Type: space.Float, Low: 0, High: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// ParetoFront agrees with the definition checked by brute force on random
// histories with ties, infeasible and unusable trials; Best is feasible
// and on the front.
func TestParetoFrontBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for rep := range 200 {
		h := &History{Space: moSpace(t, []string{"mem"})}
		for i := range 30 {
			a, b := float64(rng.IntN(6)), float64(rng.IntN(6))
			tr := Trial{Number: int64(i), State: Complete, Params: []float64{rng.Float64()}, Value: a, Values: []float64{a, b},
				Constraints: []float64{float64(rng.IntN(3)) - 1.5}}
			switch rng.IntN(10) {
			case 0:
				tr.State, tr.Value, tr.Values = Failed, math.NaN(), nil
			case 1:
				tr.Constraints = nil // infeasible: a constrained study's trial without constraint values
			}
			h.Trials = append(h.Trials, tr)
		}
		if err := h.Validate(); err != nil {
			t.Fatal(err)
		}
		var want []int
		for i := range h.Trials {
			a := &h.Trials[i]
			if !a.Usable() || !h.Feasible(a) {
				continue
			}
			dominated := false
			for j := range h.Trials {
				b := &h.Trials[j]
				if b.Usable() && h.Feasible(b) && b.Values[0] <= a.Values[0] && b.Values[1] >= a.Values[1] &&
					(b.Values[0] < a.Values[0] || b.Values[1] > a.Values[1]) {
					dominated = true
				}
			}
			if !dominated {
				want = append(want, i)
			}
		}
		got, err := h.ParetoFront()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("rep %d: front %v, want %v", rep, got, want)
		}
		if best, ok := h.Best(); ok != (len(want) > 0) || ok && !slices.Contains(want, best) {
			t.Fatalf("rep %d: best %d (%v) is not on the front %v", rep, best, ok, want)
		}
	}
}

// ForObjective gives objective k's values and direction, keeps the
// constraints (so Best stays feasible), and refuses a k out of range.
func TestForObjective(t *testing.T) {
	h := &History{Space: moSpace(t, []string{"mem"}), Trials: []Trial{
		{Number: 0, State: Complete, Params: []float64{0.1}, Value: 1, Values: []float64{1, 5}, Constraints: []float64{1}},
		{Number: 1, State: Complete, Params: []float64{0.2}, Value: 2, Values: []float64{2, 3}, Constraints: []float64{-1}},
		{Number: 2, State: Complete, Params: []float64{0.3}, Value: 3, Values: []float64{3, 4}, Constraints: []float64{0}},
	}}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	acc, err := h.ForObjective(1)
	if err != nil {
		t.Fatal(err)
	}
	if acc.Direction() != space.Maximize || acc.Trials[0].Value != 5 || acc.Trials[0].Values != nil {
		t.Errorf("objective 1: direction %s, first value %v", acc.Direction(), acc.Trials[0].Value)
	}
	if best, _ := acc.Best(); best != 2 {
		t.Errorf("best on acc is trial %d, want 2 (trial 0 is higher but infeasible)", best)
	}
	if h.Trials[0].Value != 1 {
		t.Error("ForObjective changed the original history")
	}
	if _, err := h.ForObjective(2); err == nil {
		t.Error("objective 2 of 2 accepted")
	}
	h.Trials[1].Values = []float64{2}
	if err := h.Validate(); err == nil {
		t.Error("a trial with one value for two objectives validated")
	}
}
