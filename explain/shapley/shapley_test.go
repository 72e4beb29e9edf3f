package shapley

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"xbo/space"
)

// closedForm is a surrogate.Model with a formula for mean and sd, so that
// every Shapley value can be checked by hand or by brute force.
type closedForm struct {
	dim      int
	mean, sd func(x []float64) float64
}

func (c closedForm) Dim() int { return c.dim }
func (c closedForm) Predict(x [][]float64, mean, variance []float64) error {
	for i, p := range x {
		mean[i] = c.mean(p)
		s := c.sd(p)
		variance[i] = s * s
	}
	return nil
}

func scalar(t *testing.T, dim int, f func(x []float64) float64) Function {
	t.Helper()
	fn, err := NewFunc("f", dim, func(x [][]float64, out []float64) error {
		for i, p := range x {
			out[i] = f(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

func toy(x []float64) float64 { return x[0] + x[1]*x[2] }

// The thesis' toy game (section 5.2, footnote 10): u = θ1 + θ2·θ3 on U(0,1)³
// explained at (0,0,0) has Shapley values (−1/2, −1/8, −1/8).
func TestToyExact(t *testing.T) {
	e, err := Explain(context.Background(), scalar(t, 3, toy), []float64{0, 0, 0},
		Options{Method: Exact, BackgroundSize: 40000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-0.5, -0.125, -0.125}
	a := e.Outputs[0]
	for j, w := range want {
		// LHS means of θ1 and θ2·θ3 over 40000 points are within ~1e-4.
		if math.Abs(a.Phi[j]-w) > 1e-3 {
			t.Errorf("φ_%d = %v, want %v", j+1, a.Phi[j], w)
		}
	}
	if math.Abs(a.Payout-(-0.75)) > 1e-3 {
		t.Errorf("payout %v, want −3/4", a.Payout)
	}
	if a.EfficiencyError > 1e-12 {
		t.Errorf("efficiency error %v", a.EfficiencyError)
	}
}

func TestToyMonteCarloCovers(t *testing.T) {
	e, err := Explain(context.Background(), scalar(t, 3, toy), []float64{0, 0, 0},
		Options{Method: MonteCarlo, Samples: 5000, BackgroundSize: 30000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-0.5, -0.125, -0.125}
	a := e.Outputs[0]
	for j, w := range want {
		if !(a.Lower[j] <= w && w <= a.Upper[j]) {
			t.Errorf("φ_%d interval [%v, %v] misses %v", j+1, a.Lower[j], a.Upper[j], w)
		}
		if a.StdErr[j] <= 0 || a.StdErr[j] > 0.01 {
			t.Errorf("φ_%d standard error %v", j+1, a.StdErr[j])
		}
	}
}

// The t intervals must have their nominal coverage: over 300 independent
// runs with K = 100 the 95% interval of φ_2 should cover −1/8 in 91%–99% of
// them (binomial 3-sigma band around 95%).
func TestMonteCarloCoverage(t *testing.T) {
	f := scalar(t, 3, toy)
	bg, err := UniformBackground(nil, 3, 20000, 3)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := Explain(context.Background(), f, []float64{0.1, 0.2, 0.9}, Options{Method: Exact, Background: bg})
	if err != nil {
		t.Fatal(err)
	}
	covered := make([]int, 3)
	const runs = 300
	for r := range runs {
		e, err := Explain(context.Background(), f, []float64{0.1, 0.2, 0.9},
			Options{Method: MonteCarlo, Samples: 100, Background: bg, Seed: uint64(100 + r), Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			if e.Outputs[0].Lower[j] <= exact.Outputs[0].Phi[j] && exact.Outputs[0].Phi[j] <= e.Outputs[0].Upper[j] {
				covered[j]++
			}
		}
	}
	for j, c := range covered {
		rate := float64(c) / runs
		if rate < 0.91 || rate > 0.99 {
			t.Errorf("coverage of φ_%d: %.3f", j+1, rate)
		}
	}
}

func wiggly(x []float64) float64 {
	return math.Sin(3*x[0]*x[1]) + math.Exp(x[2])*x[3] + x[4]*x[4]*x[5] - math.Cos(x[1]+x[5])
}

func TestExactEfficiency(t *testing.T) {
	f := scalar(t, 6, wiggly)
	x := []float64{0.9, 0.1, 0.35, 0.7, 0.05, 0.6}
	for _, workers := range []int{1, 2} {
		e, err := Explain(context.Background(), f, x, Options{Method: Exact, BackgroundSize: 777, Seed: 2, Workers: workers, BatchSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		a := e.Outputs[0]
		sum := 0.0
		for _, v := range a.Phi {
			sum += v
		}
		if math.Abs(sum-a.Payout) > 1e-9 {
			t.Errorf("Σφ = %v, payout %v", sum, a.Payout)
		}
		if math.Abs(a.Prediction-wiggly(x)) > 1e-15 {
			t.Errorf("prediction %v, want %v", a.Prediction, wiggly(x))
		}
	}
}

// Brute force over all p! orders (eq. 5) with the worths computed directly
// must equal the coalition formula (eq. 6).
func TestExactMatchesPermutationDefinition(t *testing.T) {
	const p = 5
	fx := func(x []float64) float64 { return wiggly(append(slices.Clone(x), 0.3)) }
	x := []float64{0.2, 0.8, 0.5, 0.1, 0.95}
	bg, _ := UniformBackground(nil, p, 60, 9)
	worth := func(mask int) float64 {
		s := 0.0
		pt := make([]float64, p)
		for _, z := range bg {
			for j := range pt {
				if mask&(1<<j) != 0 {
					pt[j] = x[j]
				} else {
					pt[j] = z[j]
				}
			}
			s += fx(pt)
		}
		return s / float64(len(bg))
	}
	want := make([]float64, p)
	perms := 0
	var rec func(order []int, used int)
	rec = func(order []int, used int) {
		if len(order) == p {
			perms++
			mask := 0
			for _, j := range order {
				want[j] += worth(mask|1<<j) - worth(mask)
				mask |= 1 << j
			}
			return
		}
		for j := 0; j < p; j++ {
			if used&(1<<j) == 0 {
				rec(append(order, j), used|1<<j)
			}
		}
	}
	rec(nil, 0)
	e, err := Explain(context.Background(), scalar(t, p, fx), x, Options{Method: Exact, Background: bg})
	if err != nil {
		t.Fatal(err)
	}
	for j := range want {
		want[j] /= float64(perms)
		if math.Abs(e.Outputs[0].Phi[j]-want[j]) > 1e-12 {
			t.Errorf("φ_%d = %v, brute force %v", j, e.Outputs[0].Phi[j], want[j])
		}
	}
}

func TestSymmetryAndDummy(t *testing.T) {
	// f is symmetric in x1, x2; ignores x4; x5 enters additively.
	f := scalar(t, 5, func(x []float64) float64 { return x[0]*x[1]*x[2] + math.Exp(x[0]+x[1]) + 3*x[4]*x[4] })
	x := []float64{0.7, 0.7, 0.2, 0.9, 0.4}
	raw, _ := UniformBackground(nil, 5, 300, 4)
	// A background closed under swapping x1 and x2 makes the two players
	// exactly interchangeable in every coalition.
	var bg [][]float64
	for _, z := range raw {
		bg = append(bg, z, []float64{z[1], z[0], z[2], z[3], z[4]})
	}
	for _, m := range []Method{Exact, MonteCarlo} {
		e, err := Explain(context.Background(), f, x, Options{Method: m, Background: bg, Samples: 500, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		a := e.Outputs[0]
		if m == Exact && math.Abs(a.Phi[0]-a.Phi[1]) > 1e-12 {
			t.Errorf("exact symmetry: φ1 = %v, φ2 = %v", a.Phi[0], a.Phi[1])
		}
		if a.Phi[3] != 0 {
			t.Errorf("%s: dummy x4 got φ = %v", m, a.Phi[3])
		}
		if m == MonteCarlo && a.StdErr[3] != 0 {
			t.Errorf("dummy x4 standard error %v", a.StdErr[3])
		}
		mean5 := 0.0
		for _, z := range bg {
			mean5 += 3 * z[4] * z[4]
		}
		want5 := 3*x[4]*x[4] - mean5/float64(len(bg))
		if m == Exact && math.Abs(a.Phi[4]-want5) > 1e-12 {
			t.Errorf("additive x5: φ = %v, want %v", a.Phi[4], want5)
		}
		if m == MonteCarlo && (a.Phi[4] != a.Phi[4] || math.Abs(a.Phi[4]-want5) > 4*a.StdErr[4]+1e-12) {
			t.Errorf("additive x5 (mc): φ = %v ± %v, want %v", a.Phi[4], a.StdErr[4], want5)
		}
	}
}

func lcbModel() closedForm {
	return closedForm{dim: 4,
		mean: func(x []float64) float64 {
			s := 0.0
			for j, v := range x {
				c := 10.24*v - 5.12
				s += float64(j+1) * c * c
			}
			return s
		},
		sd: func(x []float64) float64 { return 1 + math.Sin(5*x[0])*x[1] + x[2]*x[3] },
	}
}

// Linearity (eq. 8): with shared samples φ(cb) = φ(m) − τ·φ(se).
func TestLinearityLCB(t *testing.T) {
	for _, tau := range []float64{1, 10} {
		f, err := LCB(lcbModel(), tau)
		if err != nil {
			t.Fatal(err)
		}
		x := []float64{0.45, 0.52, 0.49, 0.51}
		for _, m := range []Method{Exact, MonteCarlo} {
			e, err := Explain(context.Background(), f, x, Options{Method: m, Samples: 800, Seed: 11})
			if err != nil {
				t.Fatal(err)
			}
			if e.Tau == nil || *e.Tau != tau {
				t.Fatalf("tau not recorded")
			}
			mean, _ := e.Output(OutputMean)
			se, _ := e.Output(OutputSE)
			cb, _ := e.Output(OutputCB)
			for j := range cb.Phi {
				want := mean.Phi[j] - tau*se.Phi[j]
				if math.Abs(cb.Phi[j]-want) > 1e-10*(1+math.Abs(want)) {
					t.Errorf("%s τ=%v: φ_%d(cb) = %v, φ(m) − τφ(se) = %v", m, tau, j, cb.Phi[j], want)
				}
			}
			if math.Abs(cb.Payout-(mean.Payout-tau*se.Payout)) > 1e-10 {
				t.Errorf("payouts: %v vs %v", cb.Payout, mean.Payout-tau*se.Payout)
			}
		}
	}
}

// Linearity across games: φ(a·f + b·g) = a·φ(f) + b·φ(g), exact and MC with
// the same seed.
func TestLinearityCombination(t *testing.T) {
	f := func(x []float64) float64 { return wiggly(append(slices.Clone(x), 0.5, 0.5)) }
	g := func(x []float64) float64 { return x[0]*x[3] - x[2] }
	h := func(x []float64) float64 { return 2*f(x) - 3*g(x) }
	x := []float64{0.3, 0.6, 0.9, 0.2}
	for _, m := range []Method{Exact, MonteCarlo} {
		opt := Options{Method: m, Samples: 300, BackgroundSize: 500, Seed: 12}
		ef, _ := Explain(context.Background(), scalar(t, 4, f), x, opt)
		eg, _ := Explain(context.Background(), scalar(t, 4, g), x, opt)
		eh, _ := Explain(context.Background(), scalar(t, 4, h), x, opt)
		for j := range 4 {
			want := 2*ef.Outputs[0].Phi[j] - 3*eg.Outputs[0].Phi[j]
			if math.Abs(eh.Outputs[0].Phi[j]-want) > 1e-10 {
				t.Errorf("%s: φ_%d(2f−3g) = %v, want %v", m, j, eh.Outputs[0].Phi[j], want)
			}
		}
	}
}

func TestBaselineShapley(t *testing.T) {
	// For f = x1 + x2·x3 against baseline b: φ1 = x1 − b1 and the interaction
	// splits equally: φ2 = φ3 = (x2x3 − b2b3)/2 when coalitions mix... the
	// closed form for a product is φ2 = ½[(x2−b2)b3 + (x2x3 − b2x3)].
	x := []float64{0.2, 0.9, 0.4}
	b := []float64{0.6, 0.3, 0.8}
	e, err := Explain(context.Background(), scalar(t, 3, toy), x, Options{Method: Baseline, Baseline: b})
	if err != nil {
		t.Fatal(err)
	}
	if e.Method != Baseline || e.BackgroundSize != 1 {
		t.Fatalf("method %v, background %d", e.Method, e.BackgroundSize)
	}
	a := e.Outputs[0]
	want := []float64{
		x[0] - b[0],
		0.5 * ((x[1]-b[1])*b[2] + (x[1]*x[2] - b[1]*x[2])),
		0.5 * ((x[2]-b[2])*b[1] + (x[1]*x[2] - x[1]*b[2])),
	}
	for j := range want {
		if math.Abs(a.Phi[j]-want[j]) > 1e-14 {
			t.Errorf("φ_%d = %v, want %v", j+1, a.Phi[j], want[j])
		}
	}
	if math.Abs(a.Average-toy(b)) > 1e-15 {
		t.Errorf("v(∅) = %v, want f(baseline) = %v", a.Average, toy(b))
	}
	if _, err := Explain(context.Background(), scalar(t, 3, toy), x, Options{Method: Baseline}); err == nil {
		t.Error("baseline without a baseline configuration accepted")
	}
}

// checkSampleSize grows K greedily and keeps the draws made so far, so the
// result at the final K equals a direct run with that K. Parameters the
// function ignores tie at 0 whatever K: the check leaves that pair out and
// says so, instead of growing K to the cap.
func TestCheckSampleSizeGrowth(t *testing.T) {
	// x1 and x2 are dummies: their values tie at exactly 0.
	dummies := scalar(t, 3, func(x []float64) float64 { return 5 * x[2] * x[2] })
	e, err := Explain(context.Background(), dummies, []float64{0.9, 0.9, 0.1}, Options{Method: MonteCarlo, Samples: 100, MaxSamples: 400, BackgroundSize: 300, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if a := e.Outputs[0]; e.Samples != 100 || !a.SampleSizeOK || a.Ties != 1 || a.MinGap == nil || a.EfficiencyError >= *a.MinGap {
		t.Errorf("two ignored parameters: K = %d, ok %v, %d ties, gap %v, error %v; want K = 100 passing with the pair of dummies left out", e.Samples, a.SampleSizeOK, a.Ties, a.MinGap, a.EfficiencyError)
	}
	// x1 and x2 have the same nonzero effect: their gap shrinks with K and
	// the check never passes, so K grows to the cap.
	f := scalar(t, 3, func(x []float64) float64 { return x[0] + x[1] + 5*x[2]*x[2] })
	x := []float64{0.9, 0.9, 0.1}
	e, err = Explain(context.Background(), f, x, Options{Method: MonteCarlo, Samples: 100, MaxSamples: 400, BackgroundSize: 300, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if e.Samples != 400 || len(e.SampleSize) != 3 {
		t.Fatalf("K = %d after %d steps, want 400 after 3", e.Samples, len(e.SampleSize))
	}
	for i, k := range []int{100, 200, 400} {
		if e.SampleSize[i].Samples != k {
			t.Errorf("step %d: K = %d, want %d", i, e.SampleSize[i].Samples, k)
		}
	}
	direct, err := Explain(context.Background(), f, x, Options{Method: MonteCarlo, Samples: 400, BackgroundSize: 300, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(direct.Outputs[0].Phi, e.Outputs[0].Phi) {
		t.Errorf("grown %v, direct %v", e.Outputs[0].Phi, direct.Outputs[0].Phi)
	}
	// Well separated values pass at once.
	g := scalar(t, 3, func(x []float64) float64 { return x[0] + 4*x[1] + 9*x[2] })
	e, err = Explain(context.Background(), g, []float64{0.9, 0.9, 0.9}, Options{Method: MonteCarlo, Samples: 200, MaxSamples: 6400, BackgroundSize: 300, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	last := e.SampleSize[len(e.SampleSize)-1]
	if !last.OK || e.Samples >= 6400 {
		t.Errorf("separated values: K = %d, ok = %v (%+v)", e.Samples, last.OK, e.SampleSize)
	}
	for _, a := range e.Outputs {
		if !a.SampleSizeOK || a.EfficiencyError >= *a.MinGap {
			t.Errorf("final check: error %v, gap %v", a.EfficiencyError, *a.MinGap)
		}
	}
}

func TestExactLimitMessage(t *testing.T) {
	f := scalar(t, 13, func(x []float64) float64 { return x[0] })
	x := make([]float64, 13)
	if _, err := Explain(context.Background(), f, x, Options{Method: Exact, BackgroundSize: 10}); err == nil {
		t.Error("exact with p = 13 accepted")
	}
	e, err := Explain(context.Background(), f, x, Options{BackgroundSize: 10, Samples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if e.Method != MonteCarlo {
		t.Errorf("automatic method at p = 13: %v", e.Method)
	}
}

func TestInputValidation(t *testing.T) {
	f := scalar(t, 2, func(x []float64) float64 { return x[0] })
	bad := []struct {
		name string
		x    []float64
		opt  Options
	}{
		{"short point", []float64{0.1}, Options{}},
		{"NaN", []float64{0.1, math.NaN()}, Options{}},
		{"one sample", []float64{0.1, 0.2}, Options{Method: MonteCarlo, Samples: 1}},
		{"level", []float64{0.1, 0.2}, Options{Level: 1.5}},
		{"background dim", []float64{0.1, 0.2}, Options{Background: [][]float64{{0.1}}}},
		{"empty background", []float64{0.1, 0.2}, Options{Background: [][]float64{}}},
		{"method", []float64{0.1, 0.2}, Options{Method: "magic"}},
		{"radius", []float64{0.1, 0.2}, Options{LocalRadius: -1}},
	}
	for _, c := range bad {
		if _, err := Explain(context.Background(), f, c.x, c.opt); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	nan, _ := NewFunc("nan", 2, func(x [][]float64, out []float64) error {
		for i := range out {
			out[i] = math.NaN()
		}
		return nil
	})
	if _, err := Explain(context.Background(), nan, []float64{0.1, 0.2}, Options{BackgroundSize: 5}); err == nil {
		t.Error("NaN outputs accepted")
	}
}

func TestLocalBackground(t *testing.T) {
	x := []float64{0.05, 0.5, 0.97}
	bg, err := LocalBackground(nil, x, 0.1, 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range bg {
		for j := range z {
			if z[j] < math.Max(0, x[j]-0.1) || z[j] > math.Min(1, x[j]+0.1) {
				t.Fatalf("point %v outside the box", z)
			}
		}
	}
	// A local explanation of a linear function: φ_j = c_j(x_j − mean z_j),
	// and the box around x makes the payout small.
	f := scalar(t, 3, func(x []float64) float64 { return x[0] + 2*x[1] + 3*x[2] })
	e, err := Explain(context.Background(), f, x, Options{Method: Exact, LocalRadius: 0.1, BackgroundSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if e.LocalRadius != 0.1 || math.Abs(e.Outputs[0].Payout) > 0.3 {
		t.Errorf("local explanation: radius %v payout %v", e.LocalRadius, e.Outputs[0].Payout)
	}
}

func conditionalSpace(t *testing.T) *space.Space {
	t.Helper()
	s, err := space.Parse([]byte(`{"params": [
		{"name": "kind", "type": "categorical", "choices": ["svm", "tree"]},
		{"name": "c", "type": "float", "low": 0.001, "high": 1000, "log": true, "condition": {"parent": "kind", "values": ["svm"]}},
		{"name": "depth", "type": "int", "low": 1, "high": 10, "condition": {"parent": "kind", "values": ["tree"]}},
		{"name": "split", "type": "categorical", "choices": ["gini", "entropy"], "condition": {"parent": "depth", "values": [5, 6, 7, 8, 9, 10]}},
		{"name": "lr", "type": "float", "low": 0, "high": 1}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every hybrid a coalition builds in a conditional space is valid, and
// active coordinates come from one of the two sources.
func TestConditionalHybridsAreValid(t *testing.T) {
	s := conditionalSpace(t)
	m := newMixer(s.Dim(), s)
	rng := rand.New(rand.NewPCG(1, 2))
	pts := s.Sample(rng, 200)
	dst := make([]float64, s.Dim())
	src := make([]bool, s.Dim())
	for i := 0; i+1 < len(pts); i += 2 {
		x, z := pts[i], pts[i+1]
		for mask := uint64(0); mask < 32; mask++ {
			m.mix(dst, x, z, mask, src)
			vals := s.Decode(dst)
			if err := s.Validate(vals); err != nil {
				t.Fatalf("hybrid %v of %v and %v (mask %05b): %v", dst, x, z, mask, err)
			}
			enc, _ := s.Encode(vals)
			for j := range dst {
				if math.Abs(enc[j]-dst[j]) > 1e-12 {
					t.Fatalf("hybrid %v is not a repaired encoding (%v)", dst, enc)
				}
				if dst[j] != space.Inactive && dst[j] != x[j] && dst[j] != z[j] {
					t.Fatalf("coordinate %d = %v from neither source (%v, %v)", j, dst[j], x[j], z[j])
				}
				if inCoalition(mask, j) && dst[j] != space.Inactive && x[j] != space.Inactive && dst[j] != x[j] {
					t.Fatalf("coalition member %d lost its explicand value", j)
				}
			}
		}
	}
}

// A parameter switched off in the explicand gets no credit, and the
// surrogate is only ever asked about valid configurations.
func TestConditionalInactiveGetsZero(t *testing.T) {
	s := conditionalSpace(t)
	f, _ := NewFunc("f", 5, func(x [][]float64, out []float64) error {
		for i, p := range x {
			vals := s.Decode(p)
			if err := s.Validate(vals); err != nil {
				return err
			}
			c, depth := 0.0, 0.0
			if p[1] >= 0 {
				c = math.Log(vals[1])
			}
			if p[2] >= 0 {
				depth = vals[2]
				if p[3] >= 0 {
					depth += 2 * vals[3]
				}
			}
			out[i] = c*c + depth*p[4] + p[0]
		}
		return nil
	})
	explicand, err := s.Encode([]float64{1, math.NaN(), 7, 1, 0.3}) // tree, depth 7, entropy
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Method{Exact, MonteCarlo} {
		e, err := Explain(context.Background(), f, explicand, Options{Method: m, Space: s, BackgroundSize: 500, Samples: 300, Seed: 8})
		if err != nil {
			t.Fatal(err)
		}
		a := e.Outputs[0]
		if a.Phi[1] != 0 {
			t.Errorf("%s: inactive c got φ = %v", m, a.Phi[1])
		}
		if m == Exact && math.Abs(a.EfficiencyError) > 1e-9 {
			t.Errorf("efficiency error %v", a.EfficiencyError)
		}
		if e.Params[2] != "depth" {
			t.Errorf("names %v", e.Params)
		}
	}
}

// With a noise variance σ_n², se is the sd of an observation, √(v + σ_n²),
// at every point, the mean is untouched, and cb = m − τ·se still holds.
func TestLCBObservationSD(t *testing.T) {
	model := lcbModel()
	f, err := LCB(model, 2)
	if err != nil {
		t.Fatal(err)
	}
	f.NoiseVariance = 0.36
	x := [][]float64{{0.1, 0.2, 0.3, 0.4}, {0.9, 0.5, 0.5, 0.1}, {0.5, 0.5, 0.5, 0.5}}
	out := [][]float64{make([]float64, 3), make([]float64, 3), make([]float64, 3)}
	if err := f.Eval(x, out); err != nil {
		t.Fatal(err)
	}
	for i, u := range x {
		sd := model.sd(u)
		if want := math.Sqrt(sd*sd + 0.36); math.Abs(out[1][i]-want) > 1e-12 {
			t.Errorf("point %d: se %v, want √(%v² + 0.36) = %v", i, out[1][i], sd, want)
		}
		if want := model.mean(u); math.Abs(out[0][i]-want) > 1e-12 {
			t.Errorf("point %d: mean %v, want %v", i, out[0][i], want)
		}
		if want := out[0][i] - 2*out[1][i]; math.Abs(out[2][i]-want) > 1e-12 {
			t.Errorf("point %d: cb %v, want m − 2·se = %v", i, out[2][i], want)
		}
	}
	if !strings.Contains(f.Formula(), "observation") {
		t.Errorf("formula %q does not say s is an observation's sd", f.Formula())
	}
	f.NoiseVariance = -1
	if err := f.Eval(x, out); err == nil {
		t.Error("a negative noise variance was accepted")
	}
}
