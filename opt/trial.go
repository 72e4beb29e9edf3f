package opt

import (
	"math/rand/v2"
	"slices"

	"xbo/gp"
	"xbo/history"
	"xbo/space"
	"xbo/surrogate"
)

// State of a trial.
type State string

// Trial states.
const (
	Pending  State = "pending"
	Complete State = "complete"
	Failed   State = "failed"
	// Pruned: stopped early by a pruner (see the package doc and
	// Config.Resource).
	Pruned State = "pruned"
)

// Acquisition names recorded for trials not chosen by an acquisition function.
const (
	AcqInitialDesign = "initial-design"
	AcqRandom        = "random"
	// AcqRandomFallback marks a random proposal made because the surrogate
	// could not be fitted, too few trials had completed, or the model's
	// proposal was a near-copy of an earlier trial with no other candidate
	// worth proposing (see Trial.Note and duplicate.go).
	AcqRandomFallback = "random-fallback"
)

// Trial is one configuration proposed by Ask. It is plain data, so the
// service can store it and give it back through Config.History. Params and
// Value may hold NaN, which encoding/json cannot represent: serialize
// Params with space.ToMap and Value as a nullable number.
type Trial struct {
	// ID identifies the trial in Tell; unique within an optimizer.
	ID int64
	// Number is the trial's position in the history (0-based ask order).
	Number int
	// Params are natural values (space package), NaN for inactive parameters.
	Params []float64
	// U is the unit-cube encoding of Params.
	U []float64
	// Acquisition names what chose the trial: "initial-design", "random",
	// "random-fallback", or the acquisition's Name ("ei", "lcb", ...).
	Acquisition string
	State       State
	// Value is the told objective value (NaN unless Complete).
	Value float64
	// Completion is the order in which the trial was completed (0 for the
	// first told value), −1 unless Complete. SurrogateAt(t) uses the trials
	// with Completion < t.
	Completion int
	// Observed is the number of completed trials the surrogate that proposed
	// this trial was fitted on (0 for design and random trials).
	Observed int
	// Hyper are the GP hyperparameters of that surrogate (nil when no GP was
	// used), so the proposing model can be rebuilt exactly.
	Hyper *gp.Hyper
	// Note explains unusual proposals, e.g. why a fallback was used.
	Note string
	// Curve holds the intermediate values the trial reported, in
	// increasing step order (Report, TellPruned; a resumed history).
	Curve []history.Intermediate
	// Fidelity marks a proposal of the configuration × budget model
	// (Config.Resource), whose data were intermediate values: it cannot be
	// rebuilt by SurrogateOf.
	Fidelity bool
	// Warped marks a proposal whose model was fitted to output-warped values
	// (Config.OutputWarp; a confined ask's model never is).
	Warped bool
	// Values and Constraints are a complete trial's objective and
	// constraint values in a history given to ParEGO (several objectives
	// or constraints); nil otherwise.
	Values, Constraints []float64
}

// Clone returns a deep copy.
func (t Trial) Clone() Trial {
	t.Params = slices.Clone(t.Params)
	t.U = slices.Clone(t.U)
	t.Curve = slices.Clone(t.Curve)
	t.Values = slices.Clone(t.Values)
	t.Constraints = slices.Clone(t.Constraints)
	if t.Hyper != nil {
		h := t.Hyper.Clone()
		t.Hyper = &h
	}
	return t
}

// Iteration is what a custom acquisition chooser (Config.Acquire) sees when
// a model-based proposal is to be made.
type Iteration struct {
	// Number of the trial being proposed.
	Number int
	Space  *space.Space
	// Model is the proposal surrogate (conditioned on pending trials), in
	// minimization units (values × Space.Sign()).
	Model surrogate.Model
	// Best is the incumbent in minimization units.
	Best float64
	// X and Y are the completed trials the model was fitted on (unit cube,
	// minimization units).
	X [][]float64
	Y []float64
	// Rng is this proposal's random stream.
	Rng *rand.Rand
}
