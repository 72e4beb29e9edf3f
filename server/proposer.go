package server

import (
	"xbo/history"
	"xbo/opt"
	"xbo/store"
)

// proposer is a study's optimizer as the asks' cache drives it: package
// opt's Optimizer for one objective, its EHVI or ParEGO for several
// objectives or constraints (opt.Settings.NewMultiObjective). Both take the cache's changes in
// place, so neither is rebuilt on every ask.
type proposer interface {
	AskBatch(n int) ([]opt.Trial, error)
	// Report gives a pending trial's curve so far.
	Report(id int64, curve []history.Intermediate) error
	// Complete tells a pending trial's outcome, as stored.
	Complete(id int64, t *store.Trial) error
	TellFailed(id int64) error
	TellPruned(id int64, curve []history.Intermediate) error
}

// singleObjective drives an opt.Optimizer.
type singleObjective struct{ *opt.Optimizer }

func (o singleObjective) Complete(id int64, t *store.Trial) error { return o.Tell(id, *t.Value) }

// multiObjective drives an optimizer of several objectives, which learns
// from final values only: a curve is not used, and a pruned trial counts
// as one without values.
type multiObjective struct{ opt.MultiObjective }

func (o multiObjective) Report(int64, []history.Intermediate) error { return nil }

func (o multiObjective) Complete(id int64, t *store.Trial) error {
	return o.Tell(id, outcomeValues(t), t.Constraints)
}

func (o multiObjective) TellPruned(id int64, _ []history.Intermediate) error { return o.TellFailed(id) }

// outcomeValues is a complete trial's value of every objective.
func outcomeValues(t *store.Trial) []float64 {
	if len(t.Values) > 0 {
		return t.Values
	}
	return []float64{*t.Value}
}
