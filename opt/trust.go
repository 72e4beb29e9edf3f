package opt

import (
	"fmt"
	"math"
	"math/rand/v2"

	"xbo/gp"
	"xbo/space"
	"xbo/surrogate"
)

// Trust regions (TuRBO-1: Eriksson, Pearce, Gardner, Turner and Poloczek,
// "Scalable global optimization via local Bayesian optimization", NeurIPS
// 2019). A confined proposal maximizes the acquisition only inside a box
// around the incumbent whose side in coordinate j is L·w_j, with w_j the
// GP lengthscale of j divided by the lengthscales' geometric mean (a
// coordinate the objective varies slowly along gets a wider side), clipped
// to the unit cube. Confinement starts trustDelay completions after the
// initial design. L starts at trustInitial after the design and is
// replayed over the completed trials in completion order: trustSuccesses
// improvements in a row double it (up to trustMaximal), failTolerance
// completions without one halve it, and below trustMinimal it starts again.
// TuRBO starts a new trust region with a fresh design at that point; here
// the data are kept and the box returns to its initial side around the same
// incumbent, so a study never throws evaluations away.
//
// Confining every proposal traps a run in the basin of its first good point
// (bimodal results on the LCBench-phoneme surrogate); the "alternate" rule
// confines every other ask and lets the others search the whole space,
// where a better basin found by a free ask becomes the next box's centre
// (docs/research/peers.md, "Trust regions", has the measurements).
const (
	trustInitial   = 0.8
	trustMaximal   = 1.6
	trustMinimal   = 1.0 / 128
	trustSuccesses = 3
	// trustImprovement is the relative improvement of the best value that
	// counts as a success (TuRBO's 1e-3·|best|).
	trustImprovement = 1e-3
	// trustCandidates are drawn uniformly in the box, beside the search's
	// own candidates (those outside the box score −Inf).
	trustCandidates = 1500
)

// trustDelay is the number of model-based completions before the first
// confined ask: one of TuRBO's failure tolerances, max(4, d), of free asks
// over the whole space first: confining from the first model-based ask
// did worse than no confinement on Hartmann6 at short budgets, and waiting
// twice as long gave back most of the gain on Styblinski-Tang
// (docs/research/peers.md, "Trust regions").
func trustDelay(dim int) int { return trustFailTolerance(dim) }

// trustFailTolerance is TuRBO's number of completions without an
// improvement that halves the side.
func trustFailTolerance(dim int) int { return max(4, dim) }

// confines says whether ask number n, proposed from observed completed
// trials by a GP with hyperparameters hyper (nil: none), is confined: by
// the rule, after the delay, and while the fitted noise is small.
func (o *Optimizer) confines(n, observed int, hyper *gp.Hyper) bool {
	return o.confinable(n, observed) && hyper != nil &&
		hyper.NoiseVariance < trustMaxNoise*hyper.SignalVariance
}

// confinable says whether ask number n, proposed from observed completed
// trials, is confined by the rule and the delay, before the noise rule.
func (o *Optimizer) confinable(n, observed int) bool {
	return o.confine != nil && o.confine(n) && observed >= len(o.design)+trustDelay(o.s.Dim())
}

// trustMaxNoise bounds the GP's fitted noise variance, relative to its
// signal variance, under which asks are confined. TuRBO counts an
// improvement of the best observed value as a success; under noise the best
// value is a lucky draw, and confining to a box around it costs noisy
// problems at short budgets (docs/research/peers.md, "Trust regions").
const trustMaxNoise = 0.01

// trustRule says whether ask number n is confined to the trust region.
type trustRule func(n int) bool

var trustRules = map[string]trustRule{
	"none":      nil,
	"alternate": func(n int) bool { return n%2 == 0 },
	"always":    func(int) bool { return true },
}

// trustBox is a box of the unit cube: a proposal outside it is ruled out.
type trustBox struct {
	lo, hi    []float64
	side      float64 // L
	incumbent int     // completion index of the centre
}

// contains reports whether u lies in the box; inactive coordinates are free.
func (b *trustBox) contains(u []float64) bool {
	for j, v := range u {
		if v != space.Inactive && (v < b.lo[j] || v > b.hi[j]) {
			return false
		}
	}
	return true
}

// trustSide replays L over the completions after the initial design (y in
// completion order, minimization units).
func trustSide(y []float64, designSize, dim int) float64 {
	start := min(designSize, len(y))
	best := math.Inf(1)
	for _, v := range y[:start] {
		best = min(best, v)
	}
	failTolerance := trustFailTolerance(dim)
	side, successes, failures := trustInitial, 0, 0
	for _, v := range y[start:] {
		if v < best-trustImprovement*math.Abs(best) {
			successes, failures = successes+1, 0
		} else {
			successes, failures = 0, failures+1
		}
		best = min(best, v)
		if successes == trustSuccesses {
			side, successes = min(2*side, trustMaximal), 0
		}
		if failures == failTolerance {
			side, failures = side/2, 0
		}
		if side < trustMinimal {
			side = trustInitial
		}
	}
	return side
}

// trustRegion is the box of a confined proposal: centred on the observed
// configuration with the lowest posterior mean (the best value itself is a
// lucky draw under noise), its sides scaled by the lengthscales. Categorical
// and inactive coordinates are not confined.
func (o *Optimizer) trustRegion(model surrogate.Model, x [][]float64, y []float64, lengthscales []float64) (*trustBox, error) {
	d := o.s.Dim()
	if len(lengthscales) != d || len(x) == 0 {
		return nil, fmt.Errorf("trust region: %d lengthscales and %d points for %d dimensions", len(lengthscales), len(x), d)
	}
	mean, variance := make([]float64, len(x)), make([]float64, len(x))
	if err := model.Predict(x, mean, variance); err != nil {
		return nil, fmt.Errorf("trust region: %w", err)
	}
	centre := 0
	for i, m := range mean {
		if m < mean[centre] || math.IsNaN(mean[centre]) {
			centre = i
		}
	}
	if math.IsNaN(mean[centre]) {
		return nil, fmt.Errorf("trust region: the model's mean is NaN at every observed point")
	}
	var logMean float64
	for _, l := range lengthscales {
		if !(l > 0) || math.IsInf(l, 0) {
			return nil, fmt.Errorf("trust region: lengthscale %v", l)
		}
		logMean += math.Log(l)
	}
	geometric := math.Exp(logMean / float64(d))
	b := &trustBox{lo: make([]float64, d), hi: make([]float64, d), side: trustSide(y, len(o.design), d), incumbent: centre}
	for j, p := range o.s.Params {
		c := x[centre][j]
		if c == space.Inactive || p.Type == space.Categorical {
			b.lo[j], b.hi[j] = 0, 1
			continue
		}
		half := b.side * lengthscales[j] / geometric / 2
		b.lo[j], b.hi[j] = max(0, c-half), min(1, c+half)
	}
	return b, nil
}

// candidates draws n configurations uniformly in the box, repaired onto the
// space.
func (b *trustBox) candidates(s *space.Space, n int, rng *rand.Rand) [][]float64 {
	out := make([][]float64, n)
	for k := range out {
		u := make([]float64, len(b.lo))
		for j := range u {
			u[j] = b.lo[j] + rng.Float64()*(b.hi[j]-b.lo[j])
		}
		s.Repair(u)
		out[k] = u
	}
	return out
}

// completionNumber is the number of the trial completed at index c.
func (o *Optimizer) completionNumber(c int) int {
	for i := range o.trials {
		if o.trials[i].State == Complete && o.trials[i].Completion == c {
			return o.trials[i].Number
		}
	}
	return -1
}
