package opt

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"xbo/history"
)

// Multi-fidelity proposals (Config.Resource).
//
// A study that names its resource — the step its workers count in their
// intermediate values: epochs, batches, a data fraction in percent — and
// runs under a pruner ends most trials early. Their values are at smaller
// budgets than the complete trials', so the full-budget surrogate cannot be
// fitted to them. Following BOHB (Falkner, Klein & Hutter, "BOHB: Robust and
// Efficient Hyperparameter Optimization at Scale", ICML 2018, section 4.2:
// "we always use the model for the largest budget for which enough
// observations are available"), the proposal model is a GP fitted at one
// budget b: the largest budget that at least BudgetMinPoints trials reached
// (complete trials reach Resource.Max, the others the last step they
// reported), each with its value at its first reported step at or above b
// (the value Optuna's and package prune's successive halving rank at a rung
// b), pruned and still-running trials included. When enough trials are
// complete, b is the full budget and the proposal is the ordinary one. Trials
// that did not reach b are conditioned on as everywhere else: pending ones
// with the model's mean, pruned and failed ones with the worst value at b
// (they were stopped because they were worse at a lower budget). The
// proposals then run under the study's pruner (successive halving or
// Hyperband in BOHB), which decides from the curves; the optimizer only
// chooses where to look.
//
// BOHB's model is a TPE density ratio and it draws a third of its proposals
// at random; here the model is the optimizer's GP and EI, whose variance
// explores. BOHB requires d + 1 points per budget; BudgetMinPoints is d + 2,
// so a GP with d lengthscales, a mean and a variance has one point more than
// its hyperparameters.

// Resource is a study's budget dimension: the name of what its workers'
// intermediate-value steps count, and its range. Max is the step at which a
// trial is fully trained (its final value counts at Max); steps below Min
// are ignored, steps beyond Max count as Max.
type Resource struct {
	Name string `json:"name"`
	Min  int64  `json:"min"`
	Max  int64  `json:"max"`
}

// MaxResourceStep bounds Resource.Max (as package prune bounds its steps).
const MaxResourceStep = 1_000_000_000

// Validate checks the resource's name and range.
func (r *Resource) Validate() error {
	if r == nil {
		return nil
	}
	switch {
	case strings.TrimSpace(r.Name) == "":
		return errors.New("resource: name is missing (what the steps count, e.g. \"epochs\")")
	case len(r.Name) > 200:
		return fmt.Errorf("resource: name is %d bytes long, at most 200", len(r.Name))
	case r.Min < 1:
		return fmt.Errorf("resource %q: min %d must be ≥ 1", r.Name, r.Min)
	case r.Max <= r.Min || r.Max > MaxResourceStep:
		return fmt.Errorf("resource %q: max %d must be above min %d and at most %d", r.Name, r.Max, r.Min, MaxResourceStep)
	}
	return nil
}

// BudgetMinPoints is the number of trials a budget must have been reached
// by for its model to be used: d + 2 (see the comment at the top of this
// file).
func BudgetMinPoints(d int) int { return d + 2 }

// MaxCurvePoints bounds one trial's intermediate values held by the
// optimizer (a report per step of a 10,000-epoch run fits).
const MaxCurvePoints = 100_000

// checkCurve validates intermediate values: finite, in strictly increasing
// step order, steps ≥ 0.
func checkCurve(curve []history.Intermediate) error {
	if len(curve) > MaxCurvePoints {
		return fmt.Errorf("%d intermediate values, at most %d", len(curve), MaxCurvePoints)
	}
	for i, p := range curve {
		switch {
		case p.Step < 0:
			return fmt.Errorf("intermediate step %d is negative", p.Step)
		case math.IsNaN(p.Value) || math.IsInf(p.Value, 0):
			return fmt.Errorf("intermediate value at step %d is %v, not finite", p.Step, p.Value)
		case i > 0 && p.Step <= curve[i-1].Step:
			return fmt.Errorf("intermediate steps must increase (step %d follows %d)", p.Step, curve[i-1].Step)
		}
	}
	return nil
}

// reach is the largest budget a trial was observed at: Resource.Max for a
// complete trial, the last reported step (at most Max) of a pending or
// pruned one, 0 when it has no step in [Min, Max] or failed.
func (r *Resource) reach(t *Trial) int64 {
	switch t.State {
	case Complete:
		return r.Max
	case Pending, Pruned:
		if len(t.Curve) == 0 {
			return 0
		}
		last := min(t.Curve[len(t.Curve)-1].Step, r.Max)
		if last < r.Min {
			return 0
		}
		return last
	}
	return 0
}

// valueAt is a trial's value at budget b (which it reached): the value at
// its first reported step ≥ b, or for a complete trial that reported no
// such step its final value.
func (r *Resource) valueAt(t *Trial, b int64) float64 {
	i, _ := slices.BinarySearchFunc(t.Curve, b, func(p history.Intermediate, s int64) int { return cmp.Compare(p.Step, s) })
	if i < len(t.Curve) && (t.State != Complete || t.Curve[i].Step <= r.Max) {
		return t.Curve[i].Value
	}
	return t.Value
}

// budgetData chooses the budget of the proposal model and returns its data:
// the unit-cube points and minimization-unit values of the trials that
// reached it, and for every trial whether it is among them. full is true
// when the budget is Resource.Max with enough complete trials (the ordinary
// full-budget model applies); ok is false when fewer than two trials have a
// value at any budget.
func (o *Optimizer) budgetData() (x [][]float64, y []float64, budget int64, inData []bool, full, ok bool) {
	r := o.cfg.Resource
	need := BudgetMinPoints(o.s.Dim())
	if o.completed >= need {
		return nil, nil, r.Max, nil, true, true
	}
	reaches := make([]int64, 0, len(o.trials))
	for i := range o.trials {
		if b := r.reach(&o.trials[i]); b > 0 {
			reaches = append(reaches, b)
		}
	}
	if len(reaches) < 2 {
		return nil, nil, 0, nil, false, false
	}
	slices.SortFunc(reaches, func(a, b int64) int { return cmp.Compare(b, a) })
	// The largest budget reached by `need` trials; with fewer trials than
	// that, the lowest budget any of them reached (all of them count).
	budget = reaches[min(need, len(reaches))-1]
	inData = make([]bool, len(o.trials))
	sign := o.s.Sign()
	for i := range o.trials {
		t := &o.trials[i]
		if r.reach(t) < budget {
			continue
		}
		inData[i] = true
		x = append(x, t.U)
		y = append(y, sign*r.valueAt(t, budget))
	}
	return x, y, budget, inData, false, true
}

// Report replaces the intermediate values of a pending trial (its whole
// curve so far, in increasing step order): with Config.Resource set, later
// proposals learn from them.
func (o *Optimizer) Report(id int64, curve []history.Intermediate) error {
	return o.endCurve(id, curve, "report", Pending)
}

// TellPruned ends a pending trial that a pruner stopped. curve, when not
// nil, replaces the intermediate values reported so far. Without
// Config.Resource a pruned trial steers proposals as a failed one does (see
// the package doc); with it, its values at the budgets it reached are data.
func (o *Optimizer) TellPruned(id int64, curve []history.Intermediate) error {
	return o.endCurve(id, curve, "tell pruned", Pruned)
}

// endCurve gives a pending trial its curve (unless nil) and its new state.
func (o *Optimizer) endCurve(id int64, curve []history.Intermediate, what string, state State) error {
	if err := checkCurve(curve); err != nil {
		return fmt.Errorf("opt: %s trial %d: %w", what, id, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	t, err := o.pending(id)
	if err != nil {
		return fmt.Errorf("opt: %s: %w", what, err)
	}
	if curve != nil {
		t.Curve = slices.Clone(curve)
	}
	t.State = state
	return nil
}
