package acq

import (
	"math"
	"slices"
	"testing"

	"xbo/gp"
	"xbo/surrogate"
)

// named is a constant acquisition whose name identifies it.
type named struct {
	name  string
	value float64
}

func (n named) Name() string { return n.name }
func (n named) Score(_ surrogate.Model, x [][]float64, out []float64) error {
	for i := range out {
		out[i] = n.value
	}
	return nil
}

func fixedPolicy(name string) Policy {
	return Fixed{Label: name, Make: func(Step) (Acquisition, error) { return named{name: name}, nil }}
}

func TestInterleaveFollowsAlgorithm2(t *testing.T) {
	p := Interleave{K: 3, Every: fixedPolicy("eig"), Otherwise: fixedPolicy("ei")}
	for T := 0; T < 10; T++ {
		a, err := p.Choose(Step{Evaluations: T})
		if err != nil {
			t.Fatal(err)
		}
		want := "ei"
		if T%3 == 0 {
			want = "eig"
		}
		if a.Name() != want {
			t.Errorf("T = %d: chose %s, want %s", T, a.Name(), want)
		}
	}
	if _, err := (Interleave{K: 0, Every: fixedPolicy("a"), Otherwise: fixedPolicy("b")}).Choose(Step{}); err == nil {
		t.Error("k = 0 accepted")
	}
}

func TestProbabilisticFrequency(t *testing.T) {
	p := Probabilistic{Pi: 0.3, Then: fixedPolicy("eig"), Otherwise: fixedPolicy("ei")}
	rng := newRNG(1)
	const n = 20000
	hits := 0
	for range n {
		a, err := p.Choose(Step{Rng: rng})
		if err != nil {
			t.Fatal(err)
		}
		if a.Name() == "eig" {
			hits++
		}
	}
	// Binomial(20000, 0.3): sd ≈ 65; 5 sd.
	if math.Abs(float64(hits)-0.3*n) > 5*math.Sqrt(n*0.3*0.7) {
		t.Errorf("EIG chosen %d of %d times, want about %v", hits, n, 0.3*n)
	}
	if _, err := p.Choose(Step{}); err == nil {
		t.Error("missing random generator accepted")
	}
}

// scoresOf is an acquisition with given scores per call.
type scoresOf []float64

func (s scoresOf) Name() string { return "given" }
func (s scoresOf) Score(_ surrogate.Model, _ [][]float64, out []float64) error {
	copy(out, s)
	return nil
}

func TestProductMinMaxScaling(t *testing.T) {
	x := make([][]float64, 4)
	base := scoresOf{1, 2, 3, 4}
	info := scoresOf{10, 20, 30, 50}
	out := make([]float64, 4)
	if err := (Product{Base: base, Info: info, Exponent: 2}).Score(nil, x, out); err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 2 * 0.25 * 0.25, 3 * 0.5 * 0.5, 4}
	for i := range want {
		if math.Abs(out[i]-want[i]) > 1e-12 {
			t.Errorf("score %d = %v, want %v", i, out[i], want[i])
		}
	}
	// Exponent β/T → 0 as T grows: EIBAX tends to EI.
	p := Multiplicative{Beta: 20, Base: Fixed{Label: "b", Make: func(Step) (Acquisition, error) { return base, nil }},
		Info: Fixed{Label: "i", Make: func(Step) (Acquisition, error) { return info, nil }}}
	a, err := p.Choose(Step{Evaluations: 40})
	if err != nil {
		t.Fatal(err)
	}
	if e := a.(Product).Exponent; e != 0.5 {
		t.Errorf("exponent β/T = %v, want 0.5", e)
	}
	if err := (Product{Base: base, Info: scoresOf{3, 3, 3, 3}, Exponent: 1}).Score(nil, x, out); err != nil || !slices.Equal(out, []float64(base)) {
		t.Errorf("constant information: %v, %v; want the base scores", out, err)
	}
}

func TestRandomScoresPickUniformCandidate(t *testing.T) {
	rng := newRNG(3)
	counts := make([]int, 5)
	out := make([]float64, 5)
	for range 5000 {
		if err := (RandomScores{Rng: rng}).Score(nil, make([][]float64, 5), out); err != nil {
			t.Fatal(err)
		}
		counts[argmax(out)]++
	}
	for i, c := range counts {
		if math.Abs(float64(c)-1000) > 5*math.Sqrt(5000*0.2*0.8) {
			t.Errorf("candidate %d chosen %d times of 5000", i, c)
		}
	}
}

// TestAdaptiveSwitchesOnceBandsAreNarrow runs a-BOBAX on a GP that gets more
// data each step: it interleaves while the PD band is wide, switches to EI
// when it is narrow and never switches back.
func TestAdaptiveSwitchesOnceBandsAreNarrow(t *testing.T) {
	sp := unitCube(t, 2)
	path, err := NewPDPath(sp, nil, 8, 100, newRNG(5))
	if err != nil {
		t.Fatal(err)
	}
	h := gp.Hyper{Lengthscales: []float64{0.3, 0.3}, SignalVariance: 1, NoiseVariance: 1e-4}
	x := sp.Sample(newRNG(6), 40)
	y := make([]float64, len(x))
	for i := range x {
		y[i] = testObjective(x[i])
	}
	var widths []float64
	for T := 2; T <= len(x); T += 2 {
		g, err := gp.Fit(x[:T], y[:T], gp.Options{Kernel: gp.SquaredExponential, Fixed: &h})
		if err != nil {
			t.Fatal(err)
		}
		b, err := path.Bands(g, x[:T], nil)
		if err != nil {
			t.Fatal(err)
		}
		hw, _ := b.MeanHalfWidth(0.05)
		widths = append(widths, hw)
	}
	tol := (widths[0] + widths[len(widths)-1]) / 2
	p, err := NewPolicy(StrategyConfig{Strategy: "a-bobax", Tolerance: tol, EIG: EIGConfig{Path: path}})
	if err != nil {
		t.Fatal(err)
	}
	ad := p.(*Adaptive)
	switched := -1
	for k, T := 0, 2; T <= len(x); k, T = k+1, T+2 {
		g, err := gp.Fit(x[:T], y[:T], gp.Options{Kernel: gp.SquaredExponential, Fixed: &h})
		if err != nil {
			t.Fatal(err)
		}
		a, err := p.Choose(Step{Evaluations: T, Model: g, Inputs: x[:T], Best: slices.Min(y[:T]), Rng: newRNG(uint64(T))})
		if err != nil {
			t.Fatal(err)
		}
		if switched < 0 && widths[k] <= tol {
			switched = T
		}
		want := "ei"
		if switched < 0 && T%2 == 0 {
			want = "eig-pdp"
		}
		if a.Name() != want {
			t.Errorf("T = %d (half-width %.3g, tolerance %.3g): chose %s, want %s", T, widths[k], tol, a.Name(), want)
		}
	}
	at, ok := ad.SwitchedAt()
	if !ok || at != switched {
		t.Errorf("SwitchedAt = %d, %v; want %d", at, ok, switched)
	}
	log := ad.Log()
	if len(log) != len(widths) || math.Abs(log[0].HalfWidth-widths[0]) > 1e-12 {
		t.Errorf("log %+v does not record the band widths %v", log, widths)
	}
	if cur, ok := ad.CurrentHalfWidth(); !ok || cur != widths[len(widths)-1] {
		t.Errorf("current half-width %v, want %v", cur, widths[len(widths)-1])
	}
}

func TestNewPolicyNamesAndErrors(t *testing.T) {
	path, err := NewPDPath(unitCube(t, 2), nil, 4, 10, newRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Strategies() {
		c := StrategyConfig{Strategy: s, EIG: EIGConfig{Path: path}, Tolerance: 0.1}
		if _, err := NewPolicy(c); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	bad := []StrategyConfig{
		{Strategy: "nope", EIG: EIGConfig{Path: path}},
		{Strategy: "bobax"},
		{Strategy: "a-bobax", EIG: EIGConfig{Path: path}},
		{Strategy: "bobax", K: -1, EIG: EIGConfig{Path: path}},
		{Strategy: "bobax-prob", Pi: 2, EIG: EIGConfig{Path: path}},
	}
	for _, c := range bad {
		if _, err := NewPolicy(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// EIGConfig.New falls back to the BAX estimator when the closed form cannot
// apply (pending trials not listed in Inputs, non-SE kernel).
func TestEIGConfigFallsBackToBAX(t *testing.T) {
	g, x, _ := fixedGP(t, 2, 8, 1e-3, 9)
	path, err := NewPDPath(unitCube(t, 2), nil, 4, 10, newRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	c := EIGConfig{Path: path}
	e, err := c.New(Step{Model: g, Inputs: x})
	if err != nil || e.Estimator != "" {
		t.Fatalf("full inputs: estimator %q, %v", e.Estimator, err)
	}
	e, err = c.New(Step{Model: g, Inputs: x[:6]})
	if err != nil || e.Estimator != BAX {
		t.Fatalf("missing inputs: estimator %q, %v; want bax", e.Estimator, err)
	}
	out := make([]float64, 3)
	if err := e.Score(g, unitCube(t, 2).Sample(newRNG(2), 3), out); err != nil {
		t.Fatal(err)
	}
}
