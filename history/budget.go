package history

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrBudget marks a budget no trial can be explained at (wrapped with the
// reason).
var ErrBudget = errors.New("budget not reached")

// ValueAt returns the trial's value at budget b: its finite intermediate
// value at the largest step ≤ b, provided it reported a finite value at some
// step ≥ b, and false otherwise (also for a trial that is not finished:
// neither complete nor pruned). The intermediate values need not be sorted.
func (t *Trial) ValueAt(b int64) (float64, bool) {
	if t.State != Complete && t.State != Pruned {
		return 0, false
	}
	reached := false
	bestStep, value := int64(math.MinInt64), 0.0
	found := false
	for _, iv := range t.Intermediate {
		if math.IsNaN(iv.Value) || math.IsInf(iv.Value, 0) {
			continue
		}
		if iv.Step >= b {
			reached = true
		}
		if iv.Step <= b && (!found || iv.Step >= bestStep) {
			bestStep, value, found = iv.Step, iv.Value, true
		}
	}
	return value, reached && found
}

// BudgetCount is a budget with the number of finished trials that have a
// value there, and how many of those were pruned.
type BudgetCount struct {
	Step   int64 `json:"step"`
	Trials int   `json:"trials"`
	Pruned int   `json:"pruned"`
}

// Budgets lists every step at which a finished trial reported a finite
// intermediate value, in increasing order, each with the number of trials
// that have a value at that budget (ValueAt). Its cost is O(V log V) for V
// intermediate values in all.
func (h *History) Budgets() []BudgetCount {
	// A trial has a value at b exactly when its first finite step ≤ b ≤ its
	// last finite step, so the counts are a sweep over those intervals.
	type event struct {
		step   int64
		delta  int
		pruned bool
	}
	var events []event
	var steps []int64
	for i := range h.Trials {
		t := &h.Trials[i]
		if t.State != Complete && t.State != Pruned {
			continue
		}
		first, last, seen := int64(0), int64(0), false
		for _, iv := range t.Intermediate {
			if math.IsNaN(iv.Value) || math.IsInf(iv.Value, 0) {
				continue
			}
			steps = append(steps, iv.Step)
			if !seen || iv.Step < first {
				first = iv.Step
			}
			if !seen || iv.Step > last {
				last = iv.Step
			}
			seen = true
		}
		if !seen {
			continue
		}
		pruned := t.State == Pruned
		events = append(events, event{first, 1, pruned})
		if last < math.MaxInt64 {
			events = append(events, event{last + 1, -1, pruned})
		}
	}
	slices.Sort(steps)
	steps = slices.Compact(steps)
	slices.SortFunc(events, func(a, b event) int { return cmp.Compare(a.step, b.step) })
	out := make([]BudgetCount, 0, len(steps))
	trials, pruned, k := 0, 0, 0
	for _, s := range steps {
		for ; k < len(events) && events[k].step <= s; k++ {
			trials += events[k].delta
			if events[k].pruned {
				pruned += events[k].delta
			}
		}
		out = append(out, BudgetCount{Step: s, Trials: trials, Pruned: pruned})
	}
	return out
}

// AtBudget returns the study as it stood at budget b: the trials that have a
// value at b (ValueAt), each complete with that value as its objective
// value, its intermediate values up to b, and everything else as it was;
// other trials are left out. Explaining it is explaining the performance at
// b. It fails with ErrBudget when no trial has a value at b, naming the
// budgets that do have values.
func (h *History) AtBudget(b int64) (*History, error) {
	if h == nil || h.Space == nil {
		return nil, ErrNoSpace
	}
	if b < 0 {
		return nil, fmt.Errorf("%w: budget %d is negative (steps are ≥ 0)", ErrBudget, b)
	}
	out := *h
	out.Trials = nil
	out.Source = fmt.Sprintf("%s at budget %d", h.Source, b)
	for i := range h.Trials {
		t := h.Trials[i]
		v, ok := t.ValueAt(b)
		if !ok {
			continue
		}
		t.State, t.Value, t.FailReason = Complete, v, ""
		var upTo []Intermediate
		for _, iv := range t.Intermediate {
			if iv.Step <= b {
				upTo = append(upTo, iv)
			}
		}
		t.Intermediate = upTo
		out.Trials = append(out.Trials, t)
	}
	if len(out.Trials) == 0 {
		return nil, fmt.Errorf("%w: no complete or pruned trial has a value at budget %d (one that reported at a step ≤ %d and at a step ≥ %d)%s",
			ErrBudget, b, b, b, budgetRange(h.Budgets()))
	}
	out.CompletionOrder(func(t *Trial) int64 { return t.Number })
	return &out, nil
}

// budgetRange describes the budgets that have values, for error messages.
func budgetRange(list []BudgetCount) string {
	if len(list) == 0 {
		return " (no finished trial reported intermediate values)"
	}
	return fmt.Sprintf(" (finished trials have values at %d budget(s) from %d to %d)", len(list), list[0].Step, list[len(list)-1].Step)
}

// CurvesFingerprint identifies what comparisons between budgets depend on:
// the space, and the number, state, parameters, value and finite
// intermediate values of every finished (complete or pruned) trial.
func (h *History) CurvesFingerprint() (string, error) {
	if h == nil || h.Space == nil {
		return "", ErrNoSpace
	}
	f, err := newFingerprinter(h.Space)
	if err != nil {
		return "", err
	}
	for i := range h.Trials {
		t := &h.Trials[i]
		if t.State != Complete && t.State != Pruned {
			continue
		}
		f.putInt(t.Number)
		f.putString(string(t.State))
		for _, v := range t.Params {
			f.putFloat(v)
		}
		f.putFloat(t.Value)
		f.putInt(int64(len(t.Intermediate)))
		for _, iv := range t.Intermediate {
			f.putInt(iv.Step)
			f.putFloat(iv.Value)
		}
	}
	return f.sum(), nil
}
