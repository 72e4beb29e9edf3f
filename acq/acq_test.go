package acq

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"xbo/space"
	"xbo/surrogate"
)

// analytic is a surrogate.Model given by closed-form mean and variance
// functions, so acquisition values can be checked against hand computation.
type analytic struct {
	dim      int
	mean     func(x []float64) float64
	variance func(x []float64) float64
}

func (a analytic) Dim() int { return a.dim }

func (a analytic) Predict(x [][]float64, mean, variance []float64) error {
	if err := surrogate.CheckPoints(a.dim, x, mean, variance); err != nil {
		return err
	}
	for i, p := range x {
		mean[i] = a.mean(p)
		variance[i] = a.variance(p)
	}
	return nil
}

// constant predicts N(m, s²) everywhere.
func constant(m, s float64) analytic {
	return analytic{dim: 1, mean: func([]float64) float64 { return m }, variance: func([]float64) float64 { return s * s }}
}

func scoreOne(t *testing.T, a Acquisition, m surrogate.Model) float64 {
	t.Helper()
	out := make([]float64, 1)
	if err := a.Score(m, [][]float64{{0.5}}, out); err != nil {
		t.Fatal(err)
	}
	return out[0]
}

func TestClosedForms(t *testing.T) {
	// Values of Φ and φ from tables: Φ(−0.5) = 0.3085375387259869,
	// φ(−0.5) = 0.3520653267642995, φ(0) = 0.3989422804014327.
	const tol = 1e-12
	cases := []struct {
		name string
		acq  Acquisition
		m, s float64
		want float64
	}{
		{"ei at the incumbent", EI{Best: 0}, 0, 1, 0.3989422804014327},
		// z = (0 − 1)/2 = −0.5: EI = −1·Φ(−0.5) + 2·φ(−0.5).
		{"ei above the incumbent", EI{Best: 0}, 1, 2, -0.3085375387259869 + 2*0.3520653267642995},
		// ξ shifts the incumbent: best − ξ − m = 3 − 1 − 2.5 = −0.5, s = 1.
		{"ei with xi", EI{Best: 3, Xi: 1}, 2.5, 1, -0.5*0.3085375387259869 + 0.3520653267642995},
		{"ei without uncertainty, improving", EI{Best: 2}, 0.5, 0, 1.5},
		{"ei without uncertainty, not improving", EI{Best: 2}, 2.5, 0, 0},
		{"pi", PI{Best: 0}, 1, 2, 0.3085375387259869},
		{"pi with xi", PI{Best: 3, Xi: 1}, 2.5, 1, 0.3085375387259869},
		{"pi at the incumbent", PI{Best: 0}, 0, 1, 0.5},
		{"pi without uncertainty", PI{Best: 2}, 1, 0, 1},
		{"lcb tau 1", LCB{Tau: 1}, 1, 2, -(1 - 2)},
		{"lcb tau 2", LCB{Tau: 2}, 1.5, 0.5, -(1.5 - 2*0.5)},
		// s = √(0.5² + 0.75) = 1: the observation sd, not the latent 0.5.
		{"lcb with noise", LCB{Tau: 2, NoiseVariance: 0.75}, 1.5, 0.5, -(1.5 - 2*1)},
		{"lcb with noise, no latent variance", LCB{Tau: 3, NoiseVariance: 4}, 1, 0, -(1 - 3*2)},
		{"pvar", PVAR{}, 7, 3, 9},
	}
	for _, c := range cases {
		got := scoreOne(t, c.acq, constant(c.m, c.s))
		if math.Abs(got-c.want) > tol {
			t.Errorf("%s: got %.15g, want %.15g", c.name, got, c.want)
		}
	}
}

// TestEIMonteCarlo checks EI = E[max(best − Y, 0)] for Y ~ N(m, s²) by
// simulation: 10⁶ draws give a standard error below 1e-3 here.
func TestEIMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7^0x9e3779b97f4a7c15))
	for _, c := range []struct{ m, s, best float64 }{{0.3, 0.7, 0}, {-1, 0.5, -0.2}, {2, 3, 1}} {
		const n = 1_000_000
		var sum, sumSq float64
		for range n {
			imp := math.Max(c.best-(c.m+c.s*rng.NormFloat64()), 0)
			sum += imp
			sumSq += imp * imp
		}
		mc := sum / n
		se := math.Sqrt((sumSq/n - mc*mc) / n)
		got := ExpectedImprovement(c.m, c.s, c.best, 0)
		if math.Abs(got-mc) > 4*se {
			t.Errorf("EI(m=%v, s=%v, best=%v) = %v, Monte Carlo %v ± %v", c.m, c.s, c.best, got, mc, se)
		}
	}
}

func TestEIProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.Float64Range(-1e6, 1e6).Draw(t, "mean")
		s := rapid.Float64Range(0, 1e4).Draw(t, "sd")
		best := rapid.Float64Range(-1e6, 1e6).Draw(t, "best")
		xi := rapid.Float64Range(0, 10).Draw(t, "xi")
		ei := ExpectedImprovement(m, s, best, xi)
		if !(ei >= 0) {
			t.Fatalf("EI = %v < 0", ei)
		}
		// EI is at least the certain improvement and at most it plus s·φ(0).
		gap := best - xi - m
		if ei < math.Max(gap, 0)-1e-9*math.Max(1, math.Abs(gap)) {
			t.Fatalf("EI %v below max(gap, 0) = %v", ei, math.Max(gap, 0))
		}
		if ei > math.Max(gap, 0)+s*NormPDF(0)+1e-9*math.Max(1, math.Abs(gap)) {
			t.Fatalf("EI %v above max(gap,0) + s·φ(0)", ei)
		}
		pi := ProbabilityOfImprovement(m, s, best, xi)
		if pi < 0 || pi > 1 {
			t.Fatalf("PI = %v", pi)
		}
	})
}

func TestNew(t *testing.T) {
	two := 2.0
	a, err := New("LCB", Params{Tau: &two})
	if err != nil || a.(LCB).Tau != 2 {
		t.Fatalf("New(LCB, τ=2) = %v, %v", a, err)
	}
	a, err = New("lcb", Params{})
	if err != nil || a.(LCB).Tau != DefaultTau {
		t.Fatalf("default τ: %v, %v", a, err)
	}
	if _, err := New("ei", Params{Best: math.NaN()}); err == nil {
		t.Error("EI with a NaN incumbent was accepted")
	}
	neg := -1.0
	if _, err := New("lcb", Params{Tau: &neg}); err == nil {
		t.Error("negative τ was accepted")
	}
	if _, err := New("ucb", Params{}); err == nil {
		t.Error("unknown name was accepted")
	}
	a, err = New("lcb", Params{NoiseVariance: 0.5})
	if err != nil || a.(LCB).NoiseVariance != 0.5 {
		t.Fatalf("New(lcb, σ_n²=0.5) = %v, %v", a, err)
	}
	for _, nv := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := New("lcb", Params{NoiseVariance: nv}); err == nil {
			t.Errorf("noise variance %v was accepted", nv)
		}
	}
	if _, err := New("ei", Params{NoiseVariance: 0.5}); err == nil {
		t.Error("a noise variance was accepted for ei, which ignores it")
	}
	if err := (LCB{Tau: 1, NoiseVariance: -1}).Score(constant(0, 1), [][]float64{{0.1}}, make([]float64, 1)); err == nil {
		t.Error("a literal LCB with a negative noise variance scored")
	}
}

func TestScoreErrors(t *testing.T) {
	m := constant(0, 1)
	if err := (EI{}).Score(m, [][]float64{{0.1}}, make([]float64, 2)); err == nil {
		t.Error("wrong output length accepted")
	}
	err := (EI{}).Score(m, [][]float64{{0.1, 0.2}}, make([]float64, 1))
	if !errors.Is(err, surrogate.ErrDim) {
		t.Errorf("wrong dimension: got %v", err)
	}
	if err := (PVAR{}).Score(nil, [][]float64{{0.1}}, make([]float64, 1)); err == nil {
		t.Error("nil model accepted")
	}
}

func mustSpace(t *testing.T, js string) *space.Space {
	t.Helper()
	s, err := space.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bowl is a surrogate whose mean is a quadratic with its minimum at centre and
// zero variance, so LCB (any τ) has its maximum exactly at centre.
func bowl(centre []float64) analytic {
	return analytic{
		dim: len(centre),
		mean: func(x []float64) float64 {
			var sum float64
			for j, c := range centre {
				sum += float64(j+1) * (x[j] - c) * (x[j] - c)
			}
			return sum
		},
		variance: func([]float64) float64 { return 0 },
	}
}

func TestMaximizersFindTheBowlMinimum(t *testing.T) {
	s := mustSpace(t, `{"params":[
		{"name":"a","type":"float","low":0,"high":1},
		{"name":"b","type":"float","low":0,"high":1},
		{"name":"c","type":"float","low":0,"high":1},
		{"name":"d","type":"float","low":0,"high":1}]}`)
	centre := []float64{0.123, 0.9, 0.5, 0.314}
	m := bowl(centre)
	cases := []struct {
		name string
		opt  Maximizer
		tol  float64
	}{
		// 1500 random points land ≈ 0.15 from the centre in 4-d; refinement
		// must bring the answer to the pattern search's resolution.
		{"random+refine", RandomSearch{}, 1e-3},
		// Focus search halves the box 5 times: resolution ≈ 1/32 of the range
		// sampled by 1000 points per iteration.
		{"focus", FocusSearch{}, 0.03},
		{"focus+refine", FocusSearch{Refine: 3}, 1e-3},
	}
	for _, c := range cases {
		rng := rand.New(rand.NewPCG(1, 1^0x9e3779b97f4a7c15))
		res, err := c.opt.Maximize(LCB{Tau: 1}, m, s, rng)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for j := range centre {
			if math.Abs(res.U[j]-centre[j]) > c.tol {
				t.Errorf("%s: coordinate %d = %v, want %v ± %v", c.name, j, res.U[j], centre[j], c.tol)
			}
		}
		if res.Score != -m.mean(res.U) {
			t.Errorf("%s: reported score %v is not the score of the point (%v)", c.name, res.Score, -m.mean(res.U))
		}
	}
	// Without refinement the plain best-of-1500 is coarse but still the best
	// of what it sampled; refinement must strictly improve on it here.
	rng := rand.New(rand.NewPCG(1, 1^0x9e3779b97f4a7c15))
	plain, err := RandomSearch{Refine: -1}.Maximize(LCB{}, m, s, rng)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Evaluations != DefaultCandidates {
		t.Errorf("plain search scored %d points, want %d", plain.Evaluations, DefaultCandidates)
	}
	rng = rand.New(rand.NewPCG(1, 1^0x9e3779b97f4a7c15))
	refined, err := RandomSearch{}.Maximize(LCB{}, m, s, rng)
	if err != nil {
		t.Fatal(err)
	}
	if !(refined.Score > plain.Score) {
		t.Errorf("refinement did not improve: %v vs %v", refined.Score, plain.Score)
	}
}

// mixedConditional is a space with a categorical, an int, a log float and
// a float active only for one level, and a target whose minimum is opt =
// sgd, layers = 7, lr = 1e-2, momentum = 0.8; other optimizers are worse by
// 0.5 whatever their other values.
func mixedConditional(t *testing.T) (*space.Space, func(x []float64) float64) {
	t.Helper()
	s := mustSpace(t, `{"params":[
		{"name":"opt","type":"categorical","choices":["sgd","adam","rms"]},
		{"name":"layers","type":"int","low":1,"high":12},
		{"name":"lr","type":"float","low":1e-4,"high":1,"log":true},
		{"name":"momentum","type":"float","low":0,"high":1,"condition":{"parent":"opt","values":["sgd"]}}]}`)
	return s, func(x []float64) float64 {
		vals := s.Decode(x)
		v := math.Pow((vals[1]-7)/11, 2) + math.Pow(math.Log10(vals[2])+2, 2)/16
		if vals[0] != 0 {
			return v + 0.5
		}
		return v + math.Pow(vals[3]-0.8, 2)
	}
}

func TestMaximizersOnMixedConditionalSpace(t *testing.T) {
	s, target := mixedConditional(t)
	m := analytic{dim: 4, mean: target, variance: func([]float64) float64 { return 0 }}
	for _, opt := range []Maximizer{RandomSearch{}, FocusSearch{Refine: 3}} {
		rng := rand.New(rand.NewPCG(3, 3^0x9e3779b97f4a7c15))
		res, err := opt.Maximize(LCB{}, m, s, rng)
		if err != nil {
			t.Fatal(err)
		}
		vals := s.Decode(res.U)
		if err := s.Validate(vals); err != nil {
			t.Fatalf("%T proposed an invalid configuration: %v", opt, err)
		}
		if vals[0] != 0 || vals[1] != 7 || math.Abs(math.Log10(vals[2])+2) > 0.01 || math.Abs(vals[3]-0.8) > 0.005 {
			t.Errorf("%T: got %v, want [0 7 0.01 0.8]", opt, vals)
		}
		repaired := append([]float64(nil), res.U...)
		s.Repair(repaired)
		for j := range repaired {
			if repaired[j] != res.U[j] {
				t.Errorf("%T: result is not repaired: %v vs %v", opt, res.U, repaired)
			}
		}
	}
	// When the unconditional branch wins, the child must come back inactive.
	m.mean = func(x []float64) float64 {
		vals := s.Decode(x)
		if vals[0] == 1 {
			return 0
		}
		return 1
	}
	res, err := RandomSearch{}.Maximize(LCB{}, m, s, rand.New(rand.NewPCG(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if res.U[3] != space.Inactive || s.Decode(res.U)[0] != 1 {
		t.Errorf("got %v, want adam with momentum inactive", res.U)
	}
}

func TestMaximizeErrors(t *testing.T) {
	s := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1}]}`)
	rng := rand.New(rand.NewPCG(1, 2))
	two := analytic{dim: 2, mean: func([]float64) float64 { return 0 }, variance: func([]float64) float64 { return 1 }}
	if _, err := (RandomSearch{}).Maximize(EI{}, two, s, rng); err == nil {
		t.Error("dimension mismatch accepted")
	}
	if _, err := (FocusSearch{}).Maximize(nil, constant(0, 1), s, rng); err == nil {
		t.Error("nil acquisition accepted")
	}
	if _, err := (RandomSearch{Candidates: -3}).Maximize(EI{}, constant(0, 1), s, rng); err == nil {
		t.Error("negative candidate count accepted")
	}
	if _, err := (RandomSearch{Extra: [][]float64{{0.1, 0.2}}}).Maximize(EI{}, constant(0, 1), s, rng); err == nil {
		t.Error("extra candidate of the wrong dimension accepted")
	}
}

// notPointwise hides the Pointwise method of the wrapped acquisition, so the
// pattern search scores every neighbour afresh.
type notPointwise struct{ a Acquisition }

func (n notPointwise) Name() string { return n.a.Name() }
func (n notPointwise) Score(m surrogate.Model, x [][]float64, out []float64) error {
	return n.a.Score(m, x, out)
}

// Remembering scores of pointwise acquisitions must not change the search
// (same point, same score) but must save evaluations, on a float space and
// on a mixed conditional one.
func TestPatternSearchMemoKeepsThePath(t *testing.T) {
	spaces := []string{
		`{"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1},{"name":"c","type":"float","low":0,"high":1}]}`,
		`{"params":[
		{"name":"opt","type":"categorical","choices":["sgd","adam","rms"]},
		{"name":"layers","type":"int","low":1,"high":12},
		{"name":"lr","type":"float","low":1e-4,"high":1,"log":true},
		{"name":"momentum","type":"float","low":0,"high":1,"condition":{"parent":"opt","values":["sgd"]}}]}`,
	}
	for i, js := range spaces {
		s := mustSpace(t, js)
		centre := make([]float64, s.Dim())
		for j := range centre {
			centre[j] = 0.2 + 0.15*float64(j)
		}
		m := bowl(centre)
		for _, a := range []Acquisition{LCB{Tau: 1}, EI{Best: 0.05}} {
			run := func(a Acquisition) Result {
				res, err := RandomSearch{Refine: 5}.Maximize(a, m, s, rand.New(rand.NewPCG(9, 9)))
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			memo, plain := run(a), run(notPointwise{a})
			if !slices.Equal(memo.U, plain.U) || memo.Score != plain.Score {
				t.Fatalf("space %d %s: with memo %v (%v), without %v (%v)", i, a.Name(), memo.U, memo.Score, plain.U, plain.Score)
			}
			if !(memo.Evaluations < plain.Evaluations) {
				t.Fatalf("space %d %s: memo scored %d points, plain %d: nothing saved", i, a.Name(), memo.Evaluations, plain.Evaluations)
			}
			t.Logf("space %d %s: %d evaluations instead of %d", i, a.Name(), memo.Evaluations, plain.Evaluations)
		}
	}
}
