package acq

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"xbo/internal/parallel"
	"xbo/space"
	"xbo/surrogate"
)

// Differentiable is implemented by acquisitions that give the gradient of
// their utility at one point with respect to its unit-cube coordinates. With
// a surrogate.Gradienter model, the local refinement of RandomSearch and
// FocusSearch then climbs that gradient on the float parameters instead of
// running the pattern search: a few dozen single-point evaluations instead
// of a thousand, and a maximum located to 1e-6 instead of the pattern's
// smallest step.
//
// ScoreGradient must be safe for concurrent use: the refinement climbs from
// several starts at once.
type Differentiable interface {
	Acquisition
	// Differentiable reports whether ScoreGradient may be used; a wrapper is
	// differentiable only when what it wraps is.
	Differentiable() bool
	// ScoreGradient returns the utility at x (as Score would) and writes its
	// gradient with respect to x into grad (len(x) elements).
	ScoreGradient(m surrogate.Gradienter, x, grad []float64) (float64, error)
}

func differentiable(a Acquisition) (Differentiable, bool) {
	d, ok := a.(Differentiable)
	return d, ok && d.Differentiable()
}

// Differentiable implements Differentiable.
func (EI) Differentiable() bool { return true }

// Differentiable implements Differentiable.
func (PI) Differentiable() bool { return true }

// Differentiable implements Differentiable.
func (LCB) Differentiable() bool { return true }

// Differentiable implements Differentiable.
func (PVAR) Differentiable() bool { return true }

// chain evaluates a utility u(mean, variance) at x and its gradient by the
// chain rule: ∇u = ∂u/∂m·∇m + ∂u/∂v·∇v.
func chain(m surrogate.Gradienter, x, grad []float64, u func(mean, variance float64) (val, dMean, dVar float64)) (float64, error) {
	if m == nil {
		return 0, errors.New("nil surrogate")
	}
	if len(grad) != len(x) {
		return 0, fmt.Errorf("gradient has %d slots for %d coordinates", len(grad), len(x))
	}
	dvar := make([]float64, len(x))
	mean, variance, err := m.PredictGradient(x, grad, dvar)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(mean) || math.IsNaN(variance) {
		return 0, errors.New("surrogate predicted NaN")
	}
	variance = math.Max(variance, 0)
	val, dm, dv := u(mean, variance)
	for j := range grad {
		grad[j] = dm*grad[j] + dv*dvar[j]
	}
	return val, nil
}

// ScoreGradient implements Differentiable: with z = (y* − ξ − m)/s,
// ∂EI/∂m = −Φ(z) and ∂EI/∂s = φ(z), and ∂s/∂v = 1/(2s).
func (a EI) ScoreGradient(m surrogate.Gradienter, x, grad []float64) (float64, error) {
	v, err := chain(m, x, grad, func(mean, variance float64) (float64, float64, float64) {
		sd := math.Sqrt(variance)
		val := ExpectedImprovement(mean, sd, a.Best, a.Xi)
		gap := a.Best - a.Xi - mean
		if !(sd > 0) {
			if gap > 0 {
				return val, -1, 0
			}
			return val, 0, 0
		}
		z := gap / sd
		return val, -NormCDF(z), NormPDF(z) / (2 * sd)
	})
	if err != nil {
		return 0, fmt.Errorf("acq: ei gradient: %w", err)
	}
	return v, nil
}

// ScoreGradient implements Differentiable: ∂Φ(z)/∂m = −φ(z)/s and
// ∂Φ(z)/∂s = −z·φ(z)/s.
func (a PI) ScoreGradient(m surrogate.Gradienter, x, grad []float64) (float64, error) {
	v, err := chain(m, x, grad, func(mean, variance float64) (float64, float64, float64) {
		sd := math.Sqrt(variance)
		val := ProbabilityOfImprovement(mean, sd, a.Best, a.Xi)
		if !(sd > 0) {
			return val, 0, 0
		}
		z := (a.Best - a.Xi - mean) / sd
		pdf := NormPDF(z)
		return val, -pdf / sd, -z * pdf / sd / (2 * sd)
	})
	if err != nil {
		return 0, fmt.Errorf("acq: pi gradient: %w", err)
	}
	return v, nil
}

// ScoreGradient implements Differentiable: ∇(τs − m) = τ∇v/(2s) − ∇m, with
// s = √(v + σ_n²) (σ_n² is constant in x).
func (a LCB) ScoreGradient(m surrogate.Gradienter, x, grad []float64) (float64, error) {
	if err := a.validate(); err != nil {
		return 0, err
	}
	v, err := chain(m, x, grad, func(mean, variance float64) (float64, float64, float64) {
		sd := math.Sqrt(variance + a.NoiseVariance)
		if !(sd > 0) {
			return -mean, -1, 0
		}
		return a.Tau*sd - mean, -1, a.Tau / (2 * sd)
	})
	if err != nil {
		return 0, fmt.Errorf("acq: lcb gradient: %w", err)
	}
	return v, nil
}

// ScoreGradient implements Differentiable.
func (PVAR) ScoreGradient(m surrogate.Gradienter, x, grad []float64) (float64, error) {
	v, err := chain(m, x, grad, func(_, variance float64) (float64, float64, float64) {
		return variance, 0, 1
	})
	if err != nil {
		return 0, fmt.Errorf("acq: pvar gradient: %w", err)
	}
	return v, nil
}

// Settings of the gradient climb. A step is accepted when it gains at least
// armijo times the first-order prediction; the climb stops when a step moves
// no coordinate by more than climbTol (the unit cube's 1e-6, finer than any
// hyperparameter's resolution), when the relative gain of a step falls below
// climbGain, or after climbIterations steps.
const (
	armijo          = 1e-4
	climbTol        = 1e-6
	climbGain       = 1e-10
	climbIterations = 60
	climbBacktracks = 30
	// discreteRounds bounds the alternation of climbs on the float
	// parameters and moves of the int and categorical ones.
	discreteRounds = 20
)

// climber refines points of one space with a differentiable acquisition.
type climber struct {
	a       Differentiable
	m       surrogate.Gradienter
	s       *space.Space
	initial float64 // length of the first step along the steepest coordinate
	parent  []bool  // parameters other parameters' conditions depend on
}

func newClimber(a Differentiable, m surrogate.Gradienter, s *space.Space, initial float64) *climber {
	c := &climber{a: a, m: m, s: s, initial: initial, parent: make([]bool, len(s.Params))}
	for _, p := range s.Params {
		if p.Condition == nil {
			continue
		}
		for i, q := range s.Params {
			if q.Name == p.Condition.Parent {
				c.parent[i] = true
			}
		}
	}
	return c
}

// climberFor returns a climber when a gradient refinement applies: a
// differentiable acquisition, a surrogate.Gradienter model, a float
// parameter, and no request for the pattern search.
func climberFor(a Acquisition, m surrogate.Model, s *space.Space, ps refineSettings) *climber {
	if ps.pattern {
		return nil
	}
	da, ok := differentiable(a)
	if !ok {
		return nil
	}
	gm, ok := m.(surrogate.Gradienter)
	if !ok {
		return nil
	}
	if !slices.ContainsFunc(s.Params, func(p space.Param) bool { return p.Continuous() }) {
		return nil
	}
	initial := ps.initial
	if initial <= 0 {
		initial = 0.05
	}
	return newClimber(da, gm, s, initial)
}

// free lists the coordinates a climb may move at u: active continuous float
// parameters (a stepped one moves by compass moves, as an int) that no condition depends on (moving a parent could switch children on or
// off, which a gradient cannot see).
func (c *climber) free(u []float64) []int {
	var out []int
	for j, p := range c.s.Params {
		if p.Continuous() && u[j] != space.Inactive && !c.parent[j] {
			out = append(out, j)
		}
	}
	return out
}

// refine climbs from u (whose utility is score) and returns the best point
// found, its utility and the number of points evaluated. On spaces with int
// or categorical parameters it alternates a climb on the floats with one
// batch of the discrete compass moves (neighbours), until no move improves.
func (c *climber) refine(u []float64, score float64) ([]float64, float64, int, error) {
	u = slices.Clone(u)
	evals := 0
	for range discreteRounds {
		var n int
		var err error
		u, score, n, err = c.climb(u, score)
		evals += n
		if err != nil {
			return nil, 0, evals, err
		}
		// A zero step leaves the floats alone: only int and categorical
		// moves remain.
		moves := neighbours(c.s, u, 0)
		if len(moves) == 0 {
			break
		}
		scores := make([]float64, len(moves))
		if err := c.a.Score(c.m, moves, scores); err != nil {
			return nil, 0, evals, err
		}
		evals += len(moves)
		ib := argmax(scores)
		if ib < 0 || !(scores[ib] > score+1e-12*math.Abs(score)) {
			break
		}
		u, score = moves[ib], scores[ib]
	}
	return u, score, evals, nil
}

// climb is projected gradient ascent on the free coordinates within [0,1]
// with Barzilai–Borwein step lengths and Armijo backtracking along the
// projection arc (the spectral projected gradient of Birgin, Martínez &
// Raydan 2000, with a monotone line search). score is not trusted: the start
// is evaluated again, with its gradient.
func (c *climber) climb(u []float64, score float64) ([]float64, float64, int, error) {
	free := c.free(u)
	if len(free) == 0 {
		return u, score, 0, nil
	}
	d := len(u)
	x, g := slices.Clone(u), make([]float64, d)
	f, err := c.a.ScoreGradient(c.m, x, g)
	if err != nil {
		return nil, 0, 0, err
	}
	evals := 1
	if math.IsNaN(f) || math.IsInf(f, -1) {
		return u, score, evals, nil
	}
	gmax := 0.0
	for _, j := range free {
		gmax = math.Max(gmax, math.Abs(g[j]))
	}
	if gmax == 0 || math.IsNaN(gmax) || math.IsInf(gmax, 0) {
		// No usable gradient: the start stays as it is.
		return x, f, evals, nil
	}
	step := c.initial / gmax
	xn, gn := make([]float64, d), make([]float64, d)
	for range climbIterations {
		var fn, moved, predicted float64
		accepted := false
		for range climbBacktracks {
			copy(xn, x)
			moved, predicted = 0, 0
			for _, j := range free {
				xn[j] = math.Min(1, math.Max(0, x[j]+step*g[j]))
				dx := xn[j] - x[j]
				moved = math.Max(moved, math.Abs(dx))
				predicted += g[j] * dx
			}
			if moved < climbTol {
				break
			}
			if fn, err = c.a.ScoreGradient(c.m, xn, gn); err != nil {
				return nil, 0, evals, err
			}
			evals++
			if fn >= f+armijo*predicted && !math.IsNaN(fn) && finite(gn, free) {
				accepted = true
				break
			}
			step /= 2
		}
		if !accepted {
			break
		}
		// Barzilai–Borwein: step = sᵀs / (−sᵀy) with s = x' − x and
		// y = g' − g; for a maximization −sᵀy > 0 where the utility is
		// concave along s. Otherwise keep twice the accepted step.
		var ss, sy float64
		for _, j := range free {
			s := xn[j] - x[j]
			ss += s * s
			sy += s * (gn[j] - g[j])
		}
		gain := fn - f
		x, xn = xn, x
		g, gn = gn, g
		f = fn
		if -sy > 0 {
			step = ss / -sy
		} else {
			step *= 2
		}
		// A step that no longer is a positive finite number (−sᵀy
		// underflowing to a denormal gives +Inf, and Inf times a zero
		// gradient component is NaN) or that would cross the whole cube
		// is cut to one cube width along the steepest coordinate.
		gmax := 0.0
		for _, j := range free {
			gmax = math.Max(gmax, math.Abs(g[j]))
		}
		if gmax == 0 || math.IsNaN(gmax) || math.IsInf(gmax, 0) {
			break
		}
		if math.IsNaN(step) || math.IsInf(step, 0) || step <= 0 || step*gmax > 1 {
			step = 1 / gmax
		}
		if moved < climbTol || gain <= climbGain*math.Abs(f) {
			break
		}
	}
	return x, f, evals, nil
}

// finite reports whether the gradient is a finite number on every free
// coordinate.
func finite(g []float64, free []int) bool {
	for _, j := range free {
		if math.IsNaN(g[j]) || math.IsInf(g[j], 0) {
			return false
		}
	}
	return true
}

// climbAll refines every start (in parallel: the model and the acquisition
// are read-only) and returns the best result.
func climbAll(c *climber, starts [][]float64, startScores []float64, workers int) ([]float64, float64, int, error) {
	type result struct {
		u     []float64
		score float64
		evals int
		err   error
	}
	results := make([]result, len(starts))
	parallel.Run(len(starts), workers, func() func(int) {
		return func(i int) {
			u, score, n, err := c.refine(starts[i], startScores[i])
			results[i] = result{u, score, n, err}
		}
	})
	// A climb that failed (a model that cannot give a gradient somewhere)
	// leaves the others: the best successful one wins; only when every
	// climb failed is the first error returned.
	best, evals := -1, 0
	var firstErr error
	for i, r := range results {
		evals += r.evals
		if r.err != nil {
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		if best < 0 || r.score > results[best].score {
			best = i
		}
	}
	if best < 0 {
		return nil, 0, evals, firstErr
	}
	return results[best].u, results[best].score, evals, nil
}
