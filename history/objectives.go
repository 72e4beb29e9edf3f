package history

import (
	"fmt"
	"slices"

	"xbo/pareto"
	"xbo/space"
)

// Several objectives and constraints. A study's space names its objectives
// (space.Space.Objectives) and constraints (space.Space.Constraints); each
// trial carries Values (every objective) and Constraints. The decisions
// every surface shares are made here:
//
//   - Feasible: every constraint value ≤ 0 (Optuna's convention). In a
//     constrained study a complete trial that reported no constraint values
//     is infeasible: nothing shows that it keeps the limits, and an
//     infeasible trial is never returned as best.
//   - The Pareto front: the usable feasible trials no other usable
//     feasible trial dominates (pareto.Dominates, in each objective's
//     direction). With one objective it is the best trial and its ties.
//   - One objective at a time: ForObjective gives the single-objective
//     history of objective k, which every explanation of that objective
//     reads (its own surrogate per objective). Infeasible trials stay in it:
//     their objective values were measured all the same (Best of the
//     projection is still the best feasible trial).

// Feasible reports whether trial t keeps every constraint of the study.
func (h *History) Feasible(t *Trial) bool {
	n := 0
	if h.Space != nil {
		n = len(h.Space.Constraints)
	}
	if n == 0 {
		return true
	}
	if len(t.Constraints) != n {
		return false
	}
	for _, c := range t.Constraints {
		if !(c <= 0) { // NaN is a violation too
			return false
		}
	}
	return true
}

// ObjectiveValues returns trial t's value of every objective (a fresh
// slice; [Value] for a single-objective study).
func (h *History) ObjectiveValues(t *Trial) []float64 {
	if len(t.Values) > 0 {
		return slices.Clone(t.Values)
	}
	return []float64{t.Value}
}

// checkOutcome checks that a trial's objective and constraint values fit
// the study: one value per objective on a multi-objective trial that has
// values, Values[0] equal to Value, and one value per constraint when it
// reported constraints.
func (h *History) checkOutcome(t *Trial) error {
	m := h.Space.NumObjectives()
	switch {
	case len(t.Values) == 0:
		if m > 1 && t.Usable() {
			return fmt.Errorf("%w: trial %d is complete without the values of its %d objectives", ErrBadTrial, t.Number, m)
		}
	case len(t.Values) != m:
		return fmt.Errorf("%w: trial %d has %d objective values for %d objectives", ErrBadTrial, t.Number, len(t.Values), m)
	case t.Values[0] != t.Value && !(t.Values[0] != t.Values[0] && t.Value != t.Value):
		return fmt.Errorf("%w: trial %d: value %v differs from its first objective value %v", ErrBadTrial, t.Number, t.Value, t.Values[0])
	}
	if n := len(t.Constraints); n > 0 && n != len(h.Space.Constraints) {
		return fmt.Errorf("%w: trial %d has %d constraint values for %d constraints", ErrBadTrial, t.Number, n, len(h.Space.Constraints))
	}
	return nil
}

// tieBetter breaks a tie on the first objective by the others in order
// (lexicographically, each in its direction): the trial it prefers is
// never dominated by the other, so Best stays on the Pareto front.
func (h *History) tieBetter(a, b *Trial) bool {
	dirs := h.Space.Directions()
	for k := 1; k < len(a.Values) && k < len(b.Values) && k < len(dirs); k++ {
		x, y := a.Values[k], b.Values[k]
		if x == y {
			continue
		}
		if dirs[k] == space.Maximize {
			return x > y
		}
		return x < y
	}
	return false
}

// ParetoFront returns the indices (into Trials) of the Pareto-optimal
// trials, in number order: usable, feasible, and dominated by no other
// usable feasible trial. Trials with equal values are all on the front.
func (h *History) ParetoFront() ([]int, error) {
	if h == nil || h.Space == nil {
		return nil, ErrNoSpace
	}
	var idx []int
	var vals [][]float64
	for i := range h.Trials {
		t := &h.Trials[i]
		if t.Usable() && h.Feasible(t) {
			idx = append(idx, i)
			vals = append(vals, h.ObjectiveValues(t))
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	front, err := pareto.Front(vals, h.Space.Directions())
	if err != nil {
		return nil, fmt.Errorf("history: pareto front: %w", err)
	}
	out := make([]int, len(front))
	for r, j := range front {
		out[r] = idx[j]
	}
	slices.Sort(out)
	return out, nil
}

// ForObjective returns the single-objective history of objective k (by
// index): the same trials with objective k's value as Value and no Values,
// their constraints kept (so Best stays feasible), and the space of that
// objective alone. The trials share
// their parameter slices with h. For a single-objective history and k = 0
// it returns h itself.
func (h *History) ForObjective(k int) (*History, error) {
	if h == nil || h.Space == nil {
		return nil, ErrNoSpace
	}
	if !h.Space.MultiObjective() && k == 0 {
		return h, nil
	}
	sp, err := h.Space.ForObjective(k)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	out := *h
	out.Space = sp
	out.Trials = make([]Trial, len(h.Trials))
	for i, t := range h.Trials {
		if len(t.Values) > 0 {
			t.Value = t.Values[k]
		}
		t.Values = nil
		out.Trials[i] = t
	}
	if h.Space.MultiObjective() {
		out.Objective = h.Space.ObjectiveNames()[k]
	}
	return &out, nil
}

// Directions is the direction of every objective.
func (h *History) Directions() []space.Direction {
	if h == nil || h.Space == nil {
		return []space.Direction{space.Minimize}
	}
	return h.Space.Directions()
}
