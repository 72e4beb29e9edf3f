// Package prune decides whether a running trial should stop early — be
// pruned — from its intermediate values and the intermediate values the
// study's other trials reported (DESIGN.md, "The seams": multi-fidelity).
// A decision is a pure function of those values: the service reads them
// from the store at every report, so several servers on one PostgreSQL
// database decide alike, and nothing is remembered between decisions.
//
// The rules are Optuna's (learnt from its documentation and source, not
// copied: optuna/pruners/_percentile.py, _median.py, _successive_halving.py
// and _hyperband.py at commit 1d8ce7b of github.com/optuna/optuna, the same
// rules as Debian's python3-optuna 3.1; https://optuna.readthedocs.io,
// reference "optuna.pruners"), from the papers they implement: Hyperband
// (Li et al., "Hyperband: A Novel Bandit-Based Approach to Hyperparameter
// Optimization", JMLR 18(185), 2018) and asynchronous successive halving
// (Li et al., "A System for Massively Parallel Hyperparameter Tuning",
// MLSys 2020, arXiv:1810.05934). A trial's "step" is whatever resource its
// worker counts (epochs, batches, data seen); the last step of its curve is
// the one being decided about.
//
// Median and percentile: once NStartupTrials trials are complete, at the
// first report of every IntervalSteps steps from NWarmupSteps on, the
// trial's best intermediate value so far is compared with the given
// percentile (linear interpolation, as numpy's) of the values the complete
// trials reported at exactly that step (NMinTrials of them at least); it is
// pruned when worse. The median pruner is the 50th percentile. For a
// maximized objective the percentile is taken from the top (the 25th
// percentile keeps the best quarter in both directions).
//
// Successive halving (asha): rung k is at step MinResource·η^(rate+k)
// (η = ReductionFactor, rate = MinEarlyStoppingRate). When a report takes a
// trial to or past a rung, its value there is ranked among every trial
// that reached the rung (in any state: complete, pruned, failed and running
// trials count), each with its value at its first reported step at or
// above the rung; the trial goes on if it is among the best ⌊n/η⌋ (the
// best one while fewer than η trials are there), else it is pruned; while
// at most BootstrapCount trials have reached the rung, every trial there is
// pruned. Optuna records a trial's rung values when it consults the pruner;
// here they are read back from the intermediate values, which gives the
// same values whenever a worker reports its steps in increasing order and
// asks after every report (as the service does); a trial that jumps over
// several rungs in one report and is pruned at the first still counts at
// the others, where Optuna would not have recorded it.
//
// Hyperband: brackets s = 0 … n−1 with n = ⌊log_η(MaxResource/MinResource)⌋ + 1
// (computed with integers, where Optuna's floating logarithm can round an
// exact power down, e.g. 243/1 with η = 3: 6 brackets here, 5 in Optuna),
// bracket s being successive halving with rate s among the trials of that
// bracket only. A trial's bracket is drawn from the CRC-32 of
// "<study name>_<trial number>", as Optuna draws it, in proportion to the
// brackets' budgets ⌈n·η^(n−1−s)/(n−s)⌉: every server (and Optuna, for the
// same study name and bracket count) puts a trial in the same bracket.
//
// Model (xbo's own): at the first report at or past each rung
// MinResource·η^k, the study's optimizer is asked (Chancer) for the
// probability, under its configuration × budget GP, that the trial ends
// better than the best complete trial, and the trial is pruned below
// MinChance (opt.Optimizer.ContinueChance gives the rule and its sources,
// freeze-thaw BO and DyHPO). Unlike the rules above it needs the study's
// resource (optimizer setting "resource"). The optimizer is rebuilt from
// the stored trials, with the hyperparameters its latest proposal recorded,
// so several servers decide alike here too.
//
// What the store must provide is Source; Curves is a Source over trials
// held in memory (tests, simulations).
package prune

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strconv"
)

// Point is an intermediate value at a step.
type Point struct {
	Step  int64
	Value float64
}

// Trial is the trial a decision is about.
type Trial struct {
	// Study is the study's name (Hyperband draws brackets from it).
	Study  string
	Number int64
	// Curve is the trial's intermediate values in increasing step order;
	// its last point is the report being decided about.
	Curve []Point
	// Maximize is the objective's direction.
	Maximize bool
}

// StepValue is one trial's value at one step.
type StepValue struct {
	Number int64
	Step   int64
	Value  float64
}

// Source is what a pruner reads about the study's trials.
type Source interface {
	// CompleteAtStep returns the values that complete trials reported at
	// exactly step, in any order, and how many trials are complete.
	CompleteAtStep(ctx context.Context, step int64) (values []float64, complete int, err error)
	// FirstFromStep returns, for every trial in any state that reported a
	// step ≥ step (the trial decided about included), that first step and
	// its value.
	FirstFromStep(ctx context.Context, step int64) ([]StepValue, error)
}

// Chancer is a Source that can also say how likely a running trial is to
// end better than the best complete trial, given its curve so far (the
// model pruner asks it; the service answers with the study's optimizer,
// opt.Optimizer.ContinueChance).
type Chancer interface {
	// minRank is Config.MinRankCorrelation: the chance is 1 at a step
	// where the complete trials do not show, with that lower bound, that
	// values rank as the final ones do.
	ContinueChance(ctx context.Context, number int64, minRank float64) (float64, error)
}

// Decision is a pruner's answer and why, in words (for logs and clients).
type Decision struct {
	Prune  bool
	Reason string
}

// Decide says whether the trial should be pruned now.
func (c Config) Decide(ctx context.Context, t Trial, src Source) (Decision, error) {
	if err := c.Validate(); err != nil {
		return Decision{}, err
	}
	if err := checkCurve(t.Curve); err != nil {
		return Decision{}, fmt.Errorf("prune: trial %d: %w", t.Number, err)
	}
	if c.Type == None {
		return Decision{Reason: "the study has no pruner"}, nil
	}
	if len(t.Curve) == 0 {
		return Decision{Reason: "no intermediate value yet"}, nil
	}
	if src == nil {
		return Decision{}, errors.New("prune: no source of the other trials' values")
	}
	var d Decision
	var err error
	switch c.Type {
	case Median, Percentile:
		d, err = c.percentile(ctx, t, src)
	case ASHA:
		d, err = successiveHalving(ctx, t, src, c.MinResource, c.ReductionFactor, int64(c.MinEarlyStoppingRate), c.BootstrapCount, nil)
	case Hyperband:
		d, err = c.hyperband(ctx, t, src)
	case Model:
		d, err = c.model(ctx, t, src)
	}
	if err != nil {
		return Decision{}, fmt.Errorf("prune: %s pruner, trial %d: %w", c.Type, t.Number, err)
	}
	return d, nil
}

func checkCurve(curve []Point) error {
	for i, p := range curve {
		if p.Step < 0 {
			return fmt.Errorf("step %d is negative", p.Step)
		}
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			return fmt.Errorf("the value at step %d is %v, not a finite number", p.Step, p.Value)
		}
		if i > 0 && p.Step <= curve[i-1].Step {
			return fmt.Errorf("steps must increase (step %d follows %d)", p.Step, curve[i-1].Step)
		}
	}
	return nil
}

// percentile is the median and percentile pruners.
func (c Config) percentile(ctx context.Context, t Trial, src Source) (Decision, error) {
	last := t.Curve[len(t.Curve)-1]
	step := last.Step
	if step < c.NWarmupSteps {
		return Decision{Reason: fmt.Sprintf("step %d is in the warm-up (%d steps)", step, c.NWarmupSteps)}, nil
	}
	// Only the first report in each interval after the warm-up is checked.
	checkpoint := (step-c.NWarmupSteps)/c.IntervalSteps*c.IntervalSteps + c.NWarmupSteps
	if len(t.Curve) > 1 && t.Curve[len(t.Curve)-2].Step >= checkpoint {
		return Decision{Reason: fmt.Sprintf("step %d was checked at step %d already (interval %d)", step, t.Curve[len(t.Curve)-2].Step, c.IntervalSteps)}, nil
	}
	values, complete, err := src.CompleteAtStep(ctx, step)
	if err != nil {
		return Decision{}, err
	}
	if complete == 0 || complete < c.NStartupTrials {
		return Decision{Reason: fmt.Sprintf("%d complete trials, pruning starts at %d", complete, max(c.NStartupTrials, 1))}, nil
	}
	if len(values) < c.NMinTrials {
		return Decision{Reason: fmt.Sprintf("%d complete trials reported step %d, %d needed", len(values), step, c.NMinTrials)}, nil
	}
	best := t.Curve[0].Value
	for _, p := range t.Curve[1:] {
		if (t.Maximize && p.Value > best) || (!t.Maximize && p.Value < best) {
			best = p.Value
		}
	}
	q := c.Percentile
	if t.Maximize {
		q = 100 - q
	}
	ref := percentileOf(values, q)
	worse := best > ref
	if t.Maximize {
		worse = best < ref
	}
	verdict := "not worse than"
	if worse {
		verdict = "worse than"
	}
	return Decision{Prune: worse, Reason: fmt.Sprintf("best value so far %.6g is %s the %gth percentile %.6g of the %d complete trials at step %d",
		best, verdict, c.Percentile, ref, len(values), step)}, nil
}

// percentileOf is the q-th percentile (0 ≤ q ≤ 100) of values by linear
// interpolation between the closest ranks, computed as numpy's percentile
// does (interpolating from the upper neighbour past the midpoint), so that
// a value equal to Optuna's reference compares the same way.
func percentileOf(values []float64, q float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	rank := q / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(s)-1)
	frac := rank - float64(lo)
	diff := s[hi] - s[lo]
	if frac >= 0.5 {
		return s[hi] - diff*(1-frac)
	}
	return s[lo] + diff*frac
}

// rungStep is min·η^k, or MaxSteps+1 when that is larger.
func rungStep(min, eta, k int64) int64 {
	r := min
	for range k {
		if r > MaxSteps/eta {
			return MaxSteps + 1
		}
		r *= eta
	}
	return r
}

// lastReport is the report being decided about and the step of the one
// before it (−1 for none): a rung is new to the trial when it lies above
// prev and at or below last.Step. The curve is not empty.
func (t Trial) lastReport() (last Point, prev int64) {
	last, prev = t.Curve[len(t.Curve)-1], -1
	if len(t.Curve) > 1 {
		prev = t.Curve[len(t.Curve)-2].Step
	}
	return last, prev
}

// newRungs are the rungs minResource·η^k, k ≥ from, that the trial's last
// report reached for the first time (its previous report was below them),
// in increasing order.
func (t Trial) newRungs(minResource, eta, from int64) []int64 {
	last, prev := t.lastReport()
	var rungs []int64
	for k := from; ; k++ {
		rung := rungStep(minResource, eta, k)
		if rung > last.Step || rung > MaxSteps {
			return rungs
		}
		if rung > prev {
			rungs = append(rungs, rung)
		}
	}
}

// successiveHalving decides at every rung that the trial's last report
// reached for the first time (its previous report was below it). in, when
// set, keeps the competitors of one Hyperband bracket.
func successiveHalving(ctx context.Context, t Trial, src Source, minResource, eta, rate int64, bootstrap int, in func(number int64) bool) (Decision, error) {
	last, _ := t.lastReport()
	reason := fmt.Sprintf("step %d reaches no new rung (rungs at %d·%d^k from k = %d)", last.Step, minResource, eta, rate)
	for _, rung := range t.newRungs(minResource, eta, rate) {
		others, err := src.FirstFromStep(ctx, rung)
		if err != nil {
			return Decision{}, err
		}
		competing := []float64{last.Value}
		for _, o := range others {
			if o.Number != t.Number && (in == nil || in(o.Number)) {
				competing = append(competing, o.Value)
			}
		}
		if len(competing) <= bootstrap {
			return Decision{Prune: true, Reason: fmt.Sprintf("%d trials reached the rung at step %d; %d must before any goes on", len(competing), rung, bootstrap+1)}, nil
		}
		keep := max(len(competing)/int(eta), 1)
		slices.Sort(competing)
		bar := competing[keep-1]
		goesOn := last.Value <= bar
		if t.Maximize {
			bar = competing[len(competing)-keep]
			goesOn = last.Value >= bar
		}
		if !goesOn {
			return Decision{Prune: true, Reason: fmt.Sprintf("value %.6g at the rung at step %d is not among the best %d of the %d trials there (it needs %.6g or better)",
				last.Value, rung, keep, len(competing), bar)}, nil
		}
		reason = fmt.Sprintf("value %.6g at the rung at step %d is among the best %d of the %d trials there", last.Value, rung, keep, len(competing))
	}
	return Decision{Reason: reason}, nil
}

// model asks the source's model, at the first report at or past each rung
// MinResource·η^k, for the trial's chance of beating the best complete
// trial, and prunes below MinChance.
func (c Config) model(ctx context.Context, t Trial, src Source) (Decision, error) {
	if len(t.newRungs(c.MinResource, c.ReductionFactor, 0)) == 0 {
		last, _ := t.lastReport()
		return Decision{Reason: fmt.Sprintf("step %d reaches no new rung (rungs at %d·%d^k)", last.Step, c.MinResource, c.ReductionFactor)}, nil
	}
	ch, ok := src.(Chancer)
	if !ok {
		return Decision{}, errors.New("the model pruner needs the study's optimizer (a source with ContinueChance)")
	}
	p, err := ch.ContinueChance(ctx, t.Number, c.MinRankCorrelation)
	if err != nil {
		return Decision{}, err
	}
	if p < c.MinChance {
		return Decision{Prune: true, Reason: fmt.Sprintf("the model gives it a chance of %.3g to end better than the best complete trial (below %g)", p, c.MinChance)}, nil
	}
	return Decision{Reason: fmt.Sprintf("the model gives it a chance of %.3g to end better than the best complete trial", p)}, nil
}

// Brackets returns the Hyperband brackets' budgets (index s: bracket s,
// whose first rung is at MinResource·η^s); nil for other pruners.
func (c Config) Brackets() []int64 {
	if c.Type != Hyperband || c.Validate() != nil {
		return nil
	}
	n := int64(0)
	for rungStep(c.MinResource, c.ReductionFactor, n) <= c.MaxResource {
		n++
	}
	budgets := make([]int64, n)
	for s := range n {
		down := n - 1 - s
		pow := rungStep(1, c.ReductionFactor, down) // ≤ MaxResource/MinResource
		budgets[s] = (n*pow + down) / (down + 1)    // ⌈n·η^down/(down+1)⌉
	}
	return budgets
}

// Bracket returns the Hyperband bracket of a trial of the study.
func (c Config) Bracket(study string, number int64) (int, error) {
	budgets := c.Brackets()
	if budgets == nil {
		return 0, fmt.Errorf("prune: brackets belong to a valid hyperband pruner, not %q", c.Type)
	}
	return bracketOf(budgets, study, number), nil
}

func bracketOf(budgets []int64, study string, number int64) int {
	var total int64
	for _, b := range budgets {
		total += b
	}
	n := int64(crc32.ChecksumIEEE([]byte(study+"_"+strconv.FormatInt(number, 10)))) % total
	for s, b := range budgets {
		if n -= b; n < 0 {
			return s
		}
	}
	return len(budgets) - 1 // unreachable: n < total
}

func (c Config) hyperband(ctx context.Context, t Trial, src Source) (Decision, error) {
	budgets := c.Brackets()
	s := bracketOf(budgets, t.Study, t.Number)
	d, err := successiveHalving(ctx, t, src, c.MinResource, c.ReductionFactor, int64(s), c.BootstrapCount,
		func(number int64) bool { return bracketOf(budgets, t.Study, number) == s })
	if err != nil {
		return Decision{}, err
	}
	d.Reason = fmt.Sprintf("bracket %d of %d: %s", s, len(budgets), d.Reason)
	return d, nil
}

// Curve is one trial's intermediate values, for Curves.
type Curve struct {
	Number   int64
	Complete bool
	Points   []Point // in increasing step order
}

// Curves is a Source over trials held in memory.
type Curves []Curve

// CompleteAtStep implements Source.
func (cs Curves) CompleteAtStep(_ context.Context, step int64) ([]float64, int, error) {
	var values []float64
	complete := 0
	for _, c := range cs {
		if !c.Complete {
			continue
		}
		complete++
		if i, ok := slices.BinarySearchFunc(c.Points, step, func(p Point, s int64) int { return cmp.Compare(p.Step, s) }); ok {
			values = append(values, c.Points[i].Value)
		}
	}
	return values, complete, nil
}

// FirstFromStep implements Source.
func (cs Curves) FirstFromStep(_ context.Context, step int64) ([]StepValue, error) {
	var out []StepValue
	for _, c := range cs {
		i, _ := slices.BinarySearchFunc(c.Points, step, func(p Point, s int64) int { return cmp.Compare(p.Step, s) })
		if i < len(c.Points) {
			out = append(out, StepValue{Number: c.Number, Step: c.Points[i].Step, Value: c.Points[i].Value})
		}
	}
	return out, nil
}
