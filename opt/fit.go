package opt

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"

	"xbo/forest"
	"xbo/gp"
	"xbo/surrogate"
)

// warmStart is the warm-start state of one kind of proposal model's GP
// hyperparameters.
type warmStart struct {
	hyper      *gp.Hyper
	lastFullAt int // completed count at the last full fit
	lastFitAt  int // completed count at the last fit of a gp.Subset's hyperparameters
	// subset is the last gp.Subset of this kind, whose mean part the next
	// fit extends while the hyperparameters stay fixed (gp.SubsetOptions.
	// Previous): between refits an ask then costs O(n²) instead of O(n³).
	subset *gp.Subset
}

// modelKind indexes the per-kind state of the proposal models: 0 for the
// model of the values, 1 for the model of the output-warped values.
func modelKind(warped bool) int {
	if warped {
		return 1
	}
	return 0
}

// data returns the first t completed trials (by completion order) as
// unit-cube points and minimization-unit values.
func (o *Optimizer) data(t int) ([][]float64, []float64) {
	x := make([][]float64, t)
	y := make([]float64, t)
	sign := o.s.Sign()
	for i := range o.trials {
		tr := &o.trials[i]
		if tr.State == Complete && tr.Completion < t {
			x[tr.Completion] = tr.U
			y[tr.Completion] = sign * tr.Value
		}
	}
	return x, y
}

// fit builds the surrogate on (x, y). With a warm state the GP is
// warm-started from the previous fit of its kind and updates that state;
// with nil (SurrogateAt) it is a full fit seeded by the number of
// observations.
//
// Beyond ExactPoints observations the GP is a gp.Subset (see fitGP), so an
// ask costs the same at T = 5,000 as at T = 1,000 instead of growing as T³.
// Its hyperparameters, fitted on a bounded subset, move little from one ask
// to the next: they are refitted (warm-started) only once the data grew by a
// tenth since the last fit, with all GPRestarts starts once it grew by half,
// and kept fixed in between. The choice depends only on the number of
// observations, and every proposal records the hyperparameters it used, so
// SurrogateOf rebuilds the same model.
func (o *Optimizer) fit(x [][]float64, y []float64, warm *warmStart) (surrogate.Model, *gp.Hyper, error) {
	return o.sur.fit(o, x, y, warm)
}

// fitWarmGP is the GP surrogate's fit (see fit).
func (o *Optimizer) fitWarmGP(x [][]float64, y []float64, warm *warmStart) (surrogate.Model, *gp.Hyper, error) {
	opts := gp.Options{
		Kernel:   o.kernel,
		Prior:    o.prior,
		Levels:   o.levels,
		Restarts: o.cfg.GPRestarts,
		Seed:     o.seedFor(streamFit, len(x)),
		Workers:  o.cfg.Workers,
		MinNoise: o.cfg.MinNoise,
	}
	subset := len(x) > o.cfg.ExactPoints
	refit, full := true, true
	if warm != nil && warm.hyper != nil {
		opts.Init = warm.hyper
		switch {
		case subset && grewLittle(len(x), warm.lastFitAt):
			opts.Fixed, refit, full = warm.hyper, false, false
		case subset && 2*(len(x)-warm.lastFullAt) < warm.lastFullAt,
			!subset && o.cfg.FullRefitEvery > 0 && len(x)-warm.lastFullAt < o.cfg.FullRefitEvery:
			opts.Restarts, full = 1, false
		}
	}
	var prev *gp.Subset
	if warm != nil {
		prev = warm.subset
	}
	m, h, err := fitScalableGP(x, y, opts, o.cfg.ExactPoints, o.cfg.MeanPoints, prev)
	if err != nil {
		return nil, nil, err
	}
	if warm != nil {
		warm.subset, _ = m.(*gp.Subset)
		warm.hyper = &h
		if refit && subset {
			warm.lastFitAt = len(x)
		}
		if full {
			warm.lastFullAt = len(x)
		}
	}
	return m, &h, nil
}

// grewLittle says whether data of n points grew by less than a tenth since
// a fit on at: a subset GP's hyperparameters are then kept (see fit).
func grewLittle(n, at int) bool { return 10*(n-at) < at }

// fitGP fits the GP to (x, y) with opts: exact up to ExactPoints
// observations, beyond them a gp.Subset whose hyperparameters and variance
// come from ExactPoints of them and whose mean from MeanPoints (the best
// quarter and a space-filling rest).
func (o *Optimizer) fitGP(x [][]float64, y []float64, opts gp.Options) (surrogate.Model, gp.Hyper, error) {
	m, h, err := fitScalableGP(x, y, opts, o.cfg.ExactPoints, o.cfg.MeanPoints, nil)
	if err != nil {
		return nil, gp.Hyper{}, err
	}
	return m, h, nil
}

// conditionable is a fitted GP that pending points can be added to.
type conditionable interface {
	surrogate.Model
	ConditionOn(xs [][]float64, ys []float64) (surrogate.Model, error)
}

// fitScalableGP fits an exact GP up to exact observations and a gp.Subset
// beyond (hyperparameters and variance from exact of them, the mean from
// mean of them), so a long study's fit costs the same at any length; prev,
// if non-nil, is the previous gp.Subset, whose mean part the fit extends
// when it can (gp.SubsetOptions.Previous).
func fitScalableGP(x [][]float64, y []float64, opts gp.Options, exact, mean int, prev *gp.Subset) (conditionable, gp.Hyper, error) {
	if len(x) > exact {
		s, err := gp.FitSubset(context.Background(), x, y, gp.SubsetOptions{Options: opts, MeanPoints: mean, VariancePoints: exact, Previous: prev})
		if err != nil {
			return nil, gp.Hyper{}, err
		}
		return s, s.Hyper(), nil
	}
	g, err := gp.Fit(x, y, opts)
	if err != nil {
		return nil, gp.Hyper{}, err
	}
	return g, g.Hyper(), nil
}

// forestOptions are the forest's settings for a fit on n observations.
func (o *Optimizer) forestOptions(n int) forest.Options {
	fo := o.cfg.Forest
	fo.Levels = o.levels
	fo.Seed = o.seedFor(streamFit, n)
	return fo
}

// condition adds the pending, failed and pruned trials to the proposal
// model with their lies (see the package doc), except those skip marks (nil
// for none: with a resource, the trials a multi-fidelity model was fitted on
// and the pruned ones; see multifidelity.go).
func (o *Optimizer) condition(model surrogate.Model, x [][]float64, y []float64, best float64, skip []bool) (surrogate.Model, error) {
	var px [][]float64
	var failed []bool
	var stopped []int // failed and pruned trials, in trial order
	for i := range o.trials {
		if skip != nil && skip[i] {
			continue
		}
		switch o.trials[i].State {
		case Pending:
			px = append(px, o.trials[i].U)
			failed = append(failed, false)
		case Failed, Pruned:
			stopped = append(stopped, i)
		}
	}
	for _, i := range o.stoppedToCondition(stopped, x, y) {
		px = append(px, o.trials[i].U)
		failed = append(failed, true)
	}
	if len(px) == 0 {
		return model, nil
	}
	lies, err := o.liar(model, px, y, best)
	if err != nil {
		return nil, err
	}
	worst := slices.Max(y)
	for i := range lies {
		if failed[i] {
			lies[i] = worst
		}
	}
	c, err := o.sur.condition(o, model, x, y, px, lies)
	if err != nil {
		return nil, fmt.Errorf("conditioning on %d pending trials: %w", len(px), err)
	}
	return c, nil
}

// stoppedToCondition returns which of the failed and pruned trials stopped
// (indices into o.trials, in trial order) a proposal model is conditioned
// on: all of them up to ExactPoints, else ExactPoints of them, half the
// nearest to the incumbent (the configuration of x with the least y, where
// the local candidates and the trust region look) and half the latest of
// the rest (where the search has just been); with no complete trial in x,
// the latest. Conditioning on k points costs O(k³), and under a median
// pruner most trials of a long study are pruned (BenchmarkAskPruned).
// Every stopped trial still keeps proposals MinDistance away (exclude) and
// is never proposed again (the duplicate check).
func (o *Optimizer) stoppedToCondition(stopped []int, x [][]float64, y []float64) []int {
	limit := o.cfg.ExactPoints
	if len(stopped) <= limit {
		return stopped
	}
	if len(x) == 0 || len(x) != len(y) {
		// No incumbent to be near: the latest.
		return stopped[len(stopped)-limit:]
	}
	incumbent := x[floats.MinIdx(y)]
	// Positions in stopped, nearest first.
	dist := make([]float64, len(stopped))
	byDistance := make([]int, len(stopped))
	for j, i := range stopped {
		dist[j] = squaredDistance(o.trials[i].U, incumbent)
		byDistance[j] = j
	}
	slices.SortStableFunc(byDistance, func(a, b int) int { return cmp.Compare(dist[a], dist[b]) })
	keep := make([]bool, len(stopped))
	for _, j := range byDistance[:limit/2] {
		keep[j] = true
	}
	for j, kept := len(stopped)-1, limit/2; kept < limit; j-- {
		if !keep[j] {
			keep[j] = true
			kept++
		}
	}
	chosen := make([]int, 0, limit)
	for j, i := range stopped {
		if keep[j] {
			chosen = append(chosen, i)
		}
	}
	return chosen
}
