package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"xbo/metrics"
	"xbo/space"
)

// Learning-curve problems: configurations whose intermediate values at
// every step are known, and how well low steps rank the final values.
//
// A curve problem's value at step t = 1 … T of configuration x is
//
//	y(x, t) = f(x) + a(x)·(t^(−b(x)) − T^(−b(x))) + ε,  ε ~ N(0, σ²),
//
// a power-law learning curve (the shape Domhan, Springenberg & Hutter 2015
// and the LCBench curves show) that ends at the known response surface f:
// y(x, T) = f(x) + ε, so the regret of a configuration is f(x) − f*. The
// amplitude a(x) ≥ 0 and rate b(x) > 0 vary over the space, so curves cross:
// a configuration that learns slowly looks worse at low budgets than it
// ends. In the "crossing" problem the slow learners are the configurations
// near the optimum, so the lowest budgets mislead.
//
// The problem digits-mlp has real curves instead: a table of networks
// trained epoch by epoch (curvetable.go), f the validation loss at epoch T.

// Curve problems.
const (
	CurveBranin            = "branin-curves"
	CurveHartmann6         = "hartmann6-curves"
	CurveHartmann6Crossing = "hartmann6-crossing"
	// CurveQuadratic is a 2-d quadratic whose curves all fall by the same
	// 0.5/t, without noise: the case where a pruner is right at every rung
	// and the only question is what the optimizer learns from the trials
	// it stopped (Pruning).
	CurveQuadratic = "quadratic-curves"
)

// CurveProblems lists the curve problems in table order.
var CurveProblems = []string{CurveBranin, CurveHartmann6, CurveHartmann6Crossing, CurveQuadratic, CurveDigitsMLP}

// powerLawProblems are the curve problems whose curves are power laws
// (the rest are tables of real curves).
var powerLawProblems = CurveProblems[:4:4]

// CurveProblem is a learning-curve problem (see the file's comment).
type CurveProblem struct {
	Name     string
	Function *Function // f, over the space's natural values
	Space    *space.Space
	// Steps is T, the step at which a trial is fully trained.
	Steps int64
	// Budget is one run's resource, in steps.
	Budget int64
	// Scale is the amplitudes' unit: the median of f over random
	// configurations minus f*, so amplitudes compare with how much better
	// the optimum is than a typical configuration.
	Scale float64
	// Noise is σ, the sd of the noise of every step's value.
	Noise float64
	// amplitude is a(x)/Scale and rate b(x), of the unit encoding.
	amplitude, rate func(u []float64) float64
	// table, when set, holds the problem's curves (a tabular problem:
	// amplitude, rate and Noise are unused).
	table *curveTable
	// Perfect makes every step's value the final one (MFOptions.Perfect).
	Perfect bool
	// MaxTrials, when positive, ends an xbo run after that many trials
	// even if resource is left (Pruning compares at equal trials).
	MaxTrials int
}

// LoadCurveProblem builds a curve problem with T = steps (0: 27) and a
// run's resource of full trials·T (0: 6·d + 18 full trials' worth).
func LoadCurveProblem(name string, steps int64, fullTrials int) (*CurveProblem, error) {
	p, err := loadCurveProblem(name, steps, fullTrials)
	if err != nil {
		return nil, fmt.Errorf("bench: curve problem %s: %w", name, err)
	}
	return p, nil
}

func loadCurveProblem(name string, steps int64, fullTrials int) (*CurveProblem, error) {
	if steps == 0 {
		steps = 27
	}
	if steps < 2 || steps > 10_000 || fullTrials < 0 || fullTrials > 100_000 {
		return nil, fmt.Errorf("steps %d must lie in 2..10000 and full trials %d in 0..100000", steps, fullTrials)
	}
	var f *Function
	var err error
	p := &CurveProblem{Name: name, Steps: steps}
	switch name {
	case CurveBranin:
		f, err = Lookup(NameBranin, 0)
		// Slow learners at large x1 (where one of Branin's three minima is).
		p.amplitude = func(u []float64) float64 { return 0.25 + 0.5*u[0] }
		p.rate = func(u []float64) float64 { return 0.4 + 1.2*u[1] }
	case CurveHartmann6:
		f, err = Lookup(NameHartmann6, 0)
		p.amplitude = func(u []float64) float64 { return 0.25 + 0.25*(u[0]+u[3]) }
		p.rate = func(u []float64) float64 { return 0.4 + 1.2*u[5] }
	case CurveHartmann6Crossing:
		f, err = Lookup(NameHartmann6, 0)
		if err != nil {
			return nil, err
		}
		// The configurations near the optimum learn slowly: at step 1 they
		// look worse than a typical configuration, from step 3 or so better.
		sp, err := f.Space()
		if err != nil {
			return nil, err
		}
		centre, err := sp.Encode(f.Argmin[0])
		if err != nil {
			return nil, err
		}
		p.amplitude = func(u []float64) float64 {
			d2 := 0.0
			for j, c := range centre {
				d2 += (u[j] - c) * (u[j] - c)
			}
			return 0.25 + 1.5*math.Exp(-d2/(2*0.3*0.3))
		}
		p.rate = func(u []float64) float64 { return 0.5 + 0.5*u[1] }
	case CurveQuadratic:
		f = quadratic() // its amplitude is set below, in f's units
		p.rate = func([]float64) float64 { return 1 }
	case CurveDigitsMLP:
		f, err = loadTableProblem(p, digitsMLPCurves, steps)
	default:
		return nil, fmt.Errorf("unknown curve problem (valid: %s)", strings.Join(CurveProblems, ", "))
	}
	if err != nil {
		return nil, err
	}
	p.Function = f
	if p.Space, err = f.Space(); err != nil {
		return nil, err
	}
	if fullTrials == 0 {
		fullTrials = 6*p.Space.Dim() + 18
	}
	p.Budget = int64(fullTrials) * steps
	rng := rand.New(rand.NewPCG(20, 11))
	values := make([]float64, 2001)
	for i, u := range p.Space.Sample(rng, len(values)) {
		values[i] = f.Eval(p.Space.Decode(u))
	}
	slices.Sort(values)
	p.Scale = values[len(values)/2] - f.Optimum
	switch {
	case name == CurveQuadratic:
		// a(x) = 0.5 in f's units, whatever the scale; no noise.
		scale := p.Scale
		p.amplitude = func([]float64) float64 { return 0.5 / scale }
	case p.table == nil:
		p.Noise = 0.005 * p.Scale
	}
	return p, nil
}

// quadratic is (x₁ − 0.7)² + (x₂ − 0.3)² on [0, 1]², the response surface
// of CurveQuadratic.
func quadratic() *Function {
	return &Function{
		Name: "quadratic", Dim: 2, Low: []float64{0, 0}, High: []float64{1, 1},
		Optimum: 0, Argmin: [][]float64{{0.7, 0.3}},
		Eval: func(x []float64) float64 {
			if len(x) != 2 {
				return math.NaN()
			}
			return (x[0]-0.7)*(x[0]-0.7) + (x[1]-0.3)*(x[1]-0.3)
		},
	}
}

// Curve returns the values at steps 1 … T of the configuration with natural
// values x, the noise drawn from rng (nil: none). A table's curves are
// returned as stored: their noise is that of the training run, rng unused.
// A Perfect problem's curves are flat at their final value.
func (p *CurveProblem) Curve(x []float64, rng *rand.Rand) ([]float64, error) {
	c, err := p.curve(x, rng)
	if err != nil || !p.Perfect {
		return c, err
	}
	for t := range c {
		c[t] = c[len(c)-1]
	}
	return c, nil
}

func (p *CurveProblem) curve(x []float64, rng *rand.Rand) ([]float64, error) {
	if p.table != nil {
		c := p.table.curve(x)
		if c == nil {
			return nil, fmt.Errorf("%v is not a configuration of the table", x)
		}
		return append([]float64(nil), c[:p.Steps]...), nil
	}
	u, err := p.Space.Encode(x)
	if err != nil {
		return nil, err
	}
	fx := p.Function.Eval(x)
	a, b := p.Scale*p.amplitude(u), p.rate(u)
	if math.IsNaN(fx) || math.IsInf(fx, 0) || !(a >= 0) || !(b > 0) {
		return nil, fmt.Errorf("curve of %v: f %v, amplitude %v, rate %v", x, fx, a, b)
	}
	end := math.Pow(float64(p.Steps), -b)
	out := make([]float64, p.Steps)
	for t := range out {
		out[t] = fx + a*(math.Pow(float64(t+1), -b)-end)
		if rng != nil {
			out[t] += p.Noise * rng.NormFloat64()
		}
	}
	return out, nil
}

// FidelityCorrelation is the Spearman rank correlation, over n random
// configurations (seeded), between the noisy value at each of steps and the
// final value f: how far a low budget can be trusted (1: it ranks as the
// full budget does).
func (p *CurveProblem) FidelityCorrelation(steps []int64, n int, seed uint64) ([]float64, error) {
	if n < 2 || n > 100_000 {
		return nil, fmt.Errorf("%d configurations, want 2..100000", n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x636f7272))
	final := make([]float64, n)
	at := make([][]float64, len(steps))
	for k, s := range steps {
		if s < 1 || s > p.Steps {
			return nil, fmt.Errorf("step %d outside 1..%d", s, p.Steps)
		}
		at[k] = make([]float64, n)
	}
	for i, u := range p.Space.Sample(rng, n) {
		x := p.Space.Decode(u)
		c, err := p.Curve(x, rng)
		if err != nil {
			return nil, err
		}
		final[i] = p.Function.Eval(x)
		for k, s := range steps {
			at[k][i] = c[s-1]
		}
	}
	out := make([]float64, len(steps))
	for k := range steps {
		r, err := metrics.Spearman(at[k], final)
		if err != nil {
			return nil, err
		}
		out[k] = r
	}
	return out, nil
}

// fidelitySteps are the steps whose rank correlation with the final value
// the table shows: 1, T/9, T/3 (rounded up) and T.
func fidelitySteps(steps int64) []int64 {
	out := []int64{1}
	for _, s := range []int64{(steps + 8) / 9, (steps + 2) / 3, steps} {
		if s > out[len(out)-1] {
			out = append(out, s)
		}
	}
	return out
}
