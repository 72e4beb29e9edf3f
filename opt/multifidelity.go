package opt

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"xbo/gp"
	"xbo/history"
	"xbo/metrics"
	"xbo/surrogate"
)

// Multi-fidelity proposals (Config.Resource).
//
// A study that names its resource — the step its workers count in their
// intermediate values: epochs, batches, a data fraction in percent — and
// runs under a pruner ends most trials early. Their values are at smaller
// budgets than the complete trials', so the full-budget surrogate cannot be
// fitted to them as results. Once some trial has stopped below the maximum,
// the proposal model is a GP over configuration × budget, the budget
// coordinate being z = log(s/Min)/log(Max/Min) (Swersky, Snoek & Adams,
// "Freeze-Thaw Bayesian Optimization", 2014, and Klein et al., "Fast Bayesian
// Optimization of Machine Learning Hyperparameters on Large Datasets"
// (FABOLAS), AISTATS 2017, model the budget as an input the same way; their
// kernels are specialized, this one is the optimizer's kernel with one more
// lengthscale). Its data are every complete, pruned or running trial's values
// at the levels Min·3^k and Max it reached (fidelityData); EI is taken at
// the full budget, z = 1, where the GP's budget lengthscale says how far the
// low-budget values carry. While all values are at one budget (every trial
// stopped at the first rung) that lengthscale is not identified, and the
// model is read at that budget instead. Pending trials are conditioned on
// with the model's mean and failed ones with the worst value at the budget
// read, as everywhere else; pruned trials are data, not lies — still never
// proposed again (the duplicate check) nor approached within MinDistance.
// With Config.OutputWarp (the default) the model is fitted to the values of
// all budgets warped together, as the whole-space model is: one monotone
// map, so the model pruner's question (ContinueChance) is the same question
// in warped units. On the curve suite of `xbo bench multifidelity` its
// effect is within the spread over seeds (docs/research/multifidelity.md); it is
// kept so that one study's models see the values one way.
// The proposals then run under the study's pruner (successive halving or
// Hyperband), which decides from the curves; the optimizer chooses where to
// look.
//
// Why not BOHB's rule (Falkner, Klein & Hutter, ICML 2018: a model at the
// largest budget that d + 1 trials reached, here a GP with d + 2): that
// model rests on a few points while hundreds of low-budget values go
// unused; the GP over budgets uses them all (the comparison is in
// docs/research/multifidelity.md, "How the multi-fidelity model was chosen").

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

// checkCurve validates intermediate values: finite, in strictly increasing
// step order, steps ≥ 0. Their number is not bounded here (the store holds
// whatever a worker reported): a proposal reads a curve at a handful of
// levels by binary search, whatever its length.
func checkCurve(curve []history.Intermediate) error {
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

// resource is the budget of the configuration × budget model: the study's
// own (Config.Resource), else the one its curves imply (inferResource)
// unless Config.PrunedAsFailed; nil for none.
func (o *Optimizer) resource() *Resource {
	switch {
	case o.cfg.Resource != nil:
		return o.cfg.Resource
	case o.cfg.PrunedAsFailed:
		return nil
	}
	return o.inferResource()
}

// inferredResourceName names the budget a study's curves imply.
const inferredResourceName = "step"

// inferResource is the resource a study's curves imply once a pruner has
// stopped a trial: its steps count the budget, from the lowest positive
// step any trial reported (Min) to the last step of the longest complete
// curve (Max: a complete trial is fully trained, whatever it counts). A
// user who adds a pruner seldom knows to name a resource, and without one
// the values of the trials it stopped (most of a pruned study's) would only
// steer proposals away as failures; Optuna's TPE uses them by default. It
// is nil, and pruned trials steer as failures, while no pruned trial has a
// step in [Min, Max), no complete trial has a curve, or Max ≤ Min: then the
// curves say nothing about how values change with the budget. Steps below
// 1 (a curve that counts from 0) are left out as Resource.Min ≥ 1 asks.
func (o *Optimizer) inferResource() *Resource {
	var lowest, full int64 = math.MaxInt64, 0
	for i := range o.trials {
		t := &o.trials[i]
		if len(t.Curve) == 0 || t.State == Failed {
			continue
		}
		if j := firstAtOrAfter(t.Curve, 1); j < len(t.Curve) {
			lowest = min(lowest, t.Curve[j].Step)
		}
		if t.State == Complete {
			full = max(full, t.Curve[len(t.Curve)-1].Step)
		}
	}
	full = min(full, MaxResourceStep)
	if full <= lowest {
		return nil
	}
	r := &Resource{Name: inferredResourceName, Min: lowest, Max: full}
	for i := range o.trials {
		if t := &o.trials[i]; t.State == Pruned {
			if reach := r.reach(t); reach > 0 && reach < r.Max {
				return r
			}
		}
	}
	return nil
}

// skipPruned marks, in skip (allocated when nil), every pruned trial: with a
// resource they are left out of the proposal model unless it was fitted on
// their values (see the top of this file).
func (o *Optimizer) skipPruned(skip []bool) []bool {
	if skip == nil {
		skip = make([]bool, len(o.trials))
	}
	for i := range o.trials {
		if o.trials[i].State == Pruned {
			skip[i] = true
		}
	}
	return skip
}

// Report replaces the intermediate values of a pending trial (its whole
// curve so far, in increasing step order): once the configuration × budget
// model is in use (Config.Resource, or the resource the curves imply once
// a trial was pruned), later proposals learn from them.
func (o *Optimizer) Report(id int64, curve []history.Intermediate) error {
	return o.endCurve(id, curve, "report", Pending)
}

// TellPruned ends a pending trial that a pruner stopped. curve, when not
// nil, replaces the intermediate values reported so far. Its values at the
// budgets it reached are data of the configuration × budget model, over
// Config.Resource or the resource the curves imply (inferResource); with
// Config.PrunedAsFailed, or when no resource can be inferred, it steers
// proposals as a failed one does (see the package doc).
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

// firstAtOrAfter is the index of the curve's first point at step s or
// later (len(curve) if there is none); the curve's steps increase
// (checkCurve).
func firstAtOrAfter(curve []history.Intermediate, s int64) int {
	j, _ := slices.BinarySearchFunc(curve, s, func(p history.Intermediate, s int64) int { return cmp.Compare(p.Step, s) })
	return j
}

// fidelityLevels are the budgets at which a trial's curve is sampled for
// the configuration × budget model: Min·3^k up to Max, and Max.
func (r *Resource) fidelityLevels() []int64 {
	var out []int64
	for b := r.Min; b < r.Max; b *= 3 {
		out = append(out, b)
		if b > r.Max/3 {
			break
		}
	}
	return append(out, r.Max)
}

// fidelity is the budget coordinate of step s: log(s/Min)/log(Max/Min),
// 0 at Min and 1 at Max.
func (r *Resource) fidelity(s int64) float64 {
	s = min(max(s, r.Min), r.Max)
	return math.Log(float64(s)/float64(r.Min)) / math.Log(float64(r.Max)/float64(r.Min))
}

// fidelityData is the data of the configuration × budget model: for every
// complete, pruned or pending trial, its value at each level of
// fidelityLevels it reached (the value at its first reported step at or
// above the level, with that step's fidelity coordinate; a complete trial's
// final value at Max), as points (u, z) in minimization units; configs
// holds the configurations with data, once each; read is the budget the
// model is read at: Max once the data hold values at two budgets or more
// (the GP then has a budget lengthscale to go by), else the one budget they
// hold (all trials stopped at the first rung: read there, not extrapolated
// to Max with nothing to say how values change with the budget). ok is
// false unless some trial stopped below Max (otherwise the ordinary model
// is the same data).
func (o *Optimizer) fidelityData(r *Resource) (xz [][]float64, y []float64, configs [][]float64, read int64, ok bool) {
	levels := r.fidelityLevels()
	sign := o.s.Sign()
	partial := false
	var steps []int64 // the step of every value
	for i := range o.trials {
		t := &o.trials[i]
		reach := r.reach(t)
		if reach == 0 {
			continue
		}
		partial = partial || reach < r.Max
		configs = append(configs, t.U)
		last := int64(-1)
		for _, g := range levels {
			if g > reach {
				break
			}
			step, v := r.Max, t.Value
			if j := firstAtOrAfter(t.Curve, g); j < len(t.Curve) && t.Curve[j].Step <= r.Max {
				step, v = t.Curve[j].Step, t.Curve[j].Value
			} else if t.State != Complete {
				continue
			}
			if step == last {
				continue
			}
			last = step
			steps = append(steps, step)
			xz = append(xz, append(slices.Clone(t.U), r.fidelity(step)))
			y = append(y, sign*v)
		}
	}
	if !partial || len(y) < 2 {
		return nil, nil, nil, 0, false
	}
	read = r.Max
	if slices.Min(steps) == slices.Max(steps) {
		read = steps[0]
	}
	return xz, y, configs, read, true
}

// atBudget is the configuration × budget model seen at one budget: a point
// u is predicted at (u, z).
type atBudget struct {
	model surrogate.Model // over d + 1 coordinates
	z     float64
}

func (m atBudget) Dim() int { return m.model.Dim() - 1 }

// NoiseVariance implements surrogate.NoiseVariancer when the model over
// budgets has a fitted noise (the noise does not depend on the budget), and
// is 0 otherwise.
func (m atBudget) NoiseVariance() float64 { return surrogate.NoiseVarianceOf(m.model) }

func (m atBudget) augment(x [][]float64) [][]float64 {
	out := make([][]float64, len(x))
	for i, u := range x {
		out[i] = append(slices.Clone(u), m.z)
	}
	return out
}

func (m atBudget) Predict(x [][]float64, mean, variance []float64) error {
	if err := surrogate.CheckPoints(m.Dim(), x, mean, variance); err != nil {
		return err
	}
	return m.model.Predict(m.augment(x), mean, variance)
}

// Mean writes the posterior mean alone where the model can (surrogate.Meaner:
// the GP's incumbent values at every configuration with data, thousands on a
// long study, need no variance), else Predict's mean.
func (m atBudget) Mean(x [][]float64, mean []float64) error {
	if err := surrogate.CheckPoints(m.Dim(), x, mean); err != nil {
		return err
	}
	return surrogate.PredictMean(m.model, m.augment(x), mean)
}

// PredictGradient implements surrogate.Gradienter when the model does.
func (m atBudget) PredictGradient(x []float64, dmean, dvar []float64) (float64, float64, error) {
	g, ok := m.model.(surrogate.Gradienter)
	if !ok {
		return 0, 0, errors.New("the configuration × budget model has no gradient")
	}
	d := m.Dim()
	if len(x) != d || len(dmean) != d || len(dvar) != d {
		return 0, 0, surrogate.ErrDim
	}
	dm, dv := make([]float64, d+1), make([]float64, d+1)
	mean, variance, err := g.PredictGradient(append(slices.Clone(x), m.z), dm, dv)
	copy(dmean, dm[:d])
	copy(dvar, dv[:d])
	return mean, variance, err
}

var _ surrogate.Conditioner = atBudget{}

// ConditionOn implements surrogate.Conditioner: the model conditioned on
// values at its budget.
func (m atBudget) ConditionOn(px [][]float64, lies []float64) (surrogate.Model, error) {
	c, ok := m.model.(surrogate.Conditioner)
	if !ok {
		return nil, fmt.Errorf("cannot condition a %T", m.model)
	}
	cm, err := c.ConditionOn(m.augment(px), lies)
	if err != nil {
		return nil, err
	}
	return atBudget{model: cm, z: m.z}, nil
}

// fidelityOptions are the configuration × budget GP's options on n values:
// the optimizer's kernel with the budget as one more coordinate.
func (o *Optimizer) fidelityOptions(n int) gp.Options {
	return gp.Options{
		Kernel:   o.kernel,
		Prior:    o.prior,
		Levels:   append(slices.Clone(o.levels), 0),
		Restarts: o.cfg.GPRestarts,
		Seed:     o.seedFor(streamFit, n) ^ 0x6d66,
		Workers:  o.cfg.Workers,
		MinNoise: o.cfg.MinNoise,
	}
}

// fitFidelity fits the configuration × budget GP, warm-started from the
// previous such fit with a full fit every FullRefitEvery new points and,
// beyond ExactPoints data, its hyperparameters kept until the data grew by a
// tenth (as fit does for the ordinary model), and returns it seen at budget b with the
// configurations' predicted means there (the data EI's incumbent and the
// local candidates are taken from).
func (o *Optimizer) fitFidelity(xz [][]float64, y []float64, configs [][]float64, r *Resource, b int64) (surrogate.Model, []float64, *gp.Hyper, error) {
	opts := o.fidelityOptions(len(xz))
	subset := len(xz) > o.cfg.ExactPoints
	switch {
	case subset && o.fidelityHyper != nil && grewLittle(len(xz), o.fidelityFitAt):
		// As for the ordinary model beyond ExactPoints (see fit): a subset's
		// hyperparameters move little per ask; refitting them at every ask
		// made a run with hundreds of pruned trials spend most of its time
		// there.
		opts.Fixed = o.fidelityHyper
	case o.fidelityHyper != nil && o.cfg.FullRefitEvery > 0 && len(xz)-o.fidelityFullAt < o.cfg.FullRefitEvery:
		opts.Init, opts.Restarts = o.fidelityHyper, 1
		o.fidelityFitAt = len(xz)
	default:
		opts.Init = o.fidelityHyper
		o.fidelityFullAt, o.fidelityFitAt = len(xz), len(xz)
	}
	m, h, err := o.fitGP(xz, y, opts)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("configuration × %s model: %w", r.Name, err)
	}
	o.fidelityHyper = &h
	full := atBudget{model: m, z: r.fidelity(b)}
	means := make([]float64, len(configs))
	if err := full.Mean(configs, means); err != nil {
		return nil, nil, nil, err
	}
	return full, means, &h, nil
}

// ContinueChance is the probability, under the configuration × budget
// model, that the pending trial id, trained on to Resource.Max, ends better
// than the best complete trial did: Φ((y* − μ)/σ) with μ, σ² the model's
// posterior mean and variance of the trial's configuration at the full
// budget, given every trial's values so far and its own reported curve
// (Report it first), and y* the best complete trial's final value
// (minimization units). minRank, in [−1, 1), is the bound of the ranking
// check below (the model pruner's min_rank_correlation, 0.5 by default).
// It is 1 while nothing is known to compare with (no
// complete trial yet, or no value of this trial in [Min, Max]) and once the
// trial reached Max (nothing is left to save). It is 1 as well while the
// complete trials do not show that values at the trial's latest step rank
// configurations as their final values do (budgetRanksFinal): the GP's
// budget coordinate is a stationary kernel, which cannot know that some
// configurations learn slowly, and on a problem whose slow learners are the
// best ones it stopped them at step 1 with confidence, ending worse than
// no pruning (docs/research/multifidelity.md, "Trusting a budget only where it
// ranks as the final", has the measurements).
//
// The rule is freeze-thaw's question (Swersky, Snoek & Adams 2014) asked of
// one trial at a time, as DyHPO (Wistuba, Kadra & Grabocka, "Supervising
// the Multi-Fidelity Race of Hyperparameter Configurations", NeurIPS 2022)
// asks its GP over configuration × budget whether a configuration deserves
// more budget: a trial is worth continuing while the model gives it a
// chance to become the incumbent. The hyperparameters are those of the
// latest proposal's model (recorded with it, so an optimizer rebuilt from
// the store uses the same; fitted afresh when there is none yet), so a
// decision costs one factorization.
func (o *Optimizer) ContinueChance(id int64, minRank float64) (float64, error) {
	if math.IsNaN(minRank) || minRank < -1 || minRank >= 1 {
		return 0, fmt.Errorf("opt: continue chance: the rank correlation bound %v is not in [-1, 1)", minRank)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.cfg.Resource
	if r == nil {
		return 0, errors.New("opt: continue chance: the optimizer has no resource (Config.Resource)")
	}
	t, err := o.pending(id)
	if err != nil {
		return 0, fmt.Errorf("opt: continue chance: %w", err)
	}
	incumbent := o.bestComplete()
	if reach := r.reach(t); incumbent < 0 || reach == 0 || reach >= r.Max {
		return 1, nil // nothing to compare with, or nothing left to save
	}
	if !o.budgetRanksFinal(t, minRank) {
		return 1, nil // the values at this budget are not shown to rank as the final ones
	}
	best := o.s.Sign() * o.trials[incumbent].Value
	xz, y, _, _, ok := o.fidelityData(o.cfg.Resource)
	if !ok {
		return 1, nil
	}
	hyper := o.fidelityHyper
	for i := len(o.trials) - 1; i >= 0 && hyper == nil; i-- {
		// An optimizer rebuilt from the store has not fitted the model yet:
		// the latest proposal of it recorded its hyperparameters.
		if tr := &o.trials[i]; tr.Fidelity && tr.Hyper != nil && len(tr.Hyper.Lengthscales) == o.s.Dim()+1 {
			hyper = tr.Hyper
		}
	}
	cm := o.chance
	if !cm.fittedTo(xz, y, hyper) {
		// The model sees the values warped, as the proposals' model does;
		// the warp keeps their order, so the best final value is compared
		// in warped units.
		apply, err := o.fitWarp(y)
		if err != nil {
			return 0, fmt.Errorf("opt: continue chance: output warp: %w", err)
		}
		raw := slices.Clone(y)
		opts := o.fidelityOptions(len(xz))
		opts.Fixed = hyper
		m, _, err := o.fitGP(xz, apply(y), opts)
		if err != nil {
			return 0, fmt.Errorf("opt: continue chance: configuration × %s model: %w", r.Name, err)
		}
		cm = &chanceModel{xz: xz, y: raw, hyper: hyper, model: m, apply: apply}
		o.chance = cm
		o.chanceFits++
	}
	best = cm.apply([]float64{best})[0]
	mean, variance := make([]float64, 1), make([]float64, 1)
	if err := (atBudget{model: cm.model, z: 1}).Predict([][]float64{t.U}, mean, variance); err != nil {
		return 0, fmt.Errorf("opt: continue chance: %w", err)
	}
	sd := math.Sqrt(math.Max(variance[0], 0))
	if !(sd > 0) {
		if mean[0] < best {
			return 1, nil
		}
		return 0, nil
	}
	return distuv.UnitNormal.CDF((best - mean[0]) / sd), nil
}

// chanceModel is the configuration × budget model of ContinueChance with
// the values (before the warp) and hyperparameters it was fitted to. Once
// fitted it is reused by the decisions on other pending trials while those
// are unchanged: with many workers the decisions that queued during one
// fit are answered from it (server/decide.go), not each by a fit of its
// own.
type chanceModel struct {
	xz    [][]float64
	y     []float64
	hyper *gp.Hyper
	model surrogate.Model
	apply func([]float64) []float64 // the output warp fitted to y
}

// fittedTo reports whether c was fitted to exactly these values with these
// hyperparameters (nil: fitted afresh, which depends only on the values).
func (c *chanceModel) fittedTo(xz [][]float64, y []float64, hyper *gp.Hyper) bool {
	if c == nil || !slices.Equal(c.y, y) || len(c.xz) != len(xz) || (c.hyper == nil) != (hyper == nil) ||
		hyper != nil && !reflect.DeepEqual(*c.hyper, *hyper) {
		return false
	}
	for i, row := range xz {
		if !slices.Equal(c.xz[i], row) {
			return false
		}
	}
	return true
}

// budgetRanksFinal reports whether the complete trials show that values at
// the pending trial t's last reported step rank configurations as their
// final values do: Spearman's correlation between the complete trials'
// values at that step (their first reported step at or above it) and their
// final values has a lower 90% bound of at least minRank, over at least
// metrics.MinRankIntervalPairs trials.
func (o *Optimizer) budgetRanksFinal(t *Trial, minRank float64) bool {
	level := t.Curve[len(t.Curve)-1].Step
	var at, final []float64
	for i := range o.trials {
		c := &o.trials[i]
		if c.State != Complete {
			continue
		}
		j := firstAtOrAfter(c.Curve, level)
		if j == len(c.Curve) {
			continue
		}
		at = append(at, c.Curve[j].Value)
		final = append(final, c.Value)
	}
	if len(at) < metrics.MinRankIntervalPairs {
		return false
	}
	r, err := metrics.Spearman(at, final)
	if err != nil {
		return false
	}
	lo, _, err := metrics.RankInterval(metrics.RankSpearman, r, len(at), 0.9)
	return err == nil && lo >= minRank
}
