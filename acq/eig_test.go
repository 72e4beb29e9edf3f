package acq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"xbo/gp"
	"xbo/space"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func unitCube(t testing.TB, d int) *space.Space {
	t.Helper()
	params := make([]space.Param, d)
	for j := range params {
		params[j] = space.Param{Name: fmt.Sprintf("x%d", j+1), Type: space.Float, Low: 0, High: 1}
	}
	s, err := space.New(space.Minimize, params)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testObjective is smooth with different effects per coordinate.
func testObjective(x []float64) float64 {
	v := 0.0
	for j, xj := range x {
		v += math.Sin(3*xj+float64(j)) * float64(j+1) / 2
	}
	return v + x[0]*x[len(x)-1]
}

// fixedGP fits an SE GP with fixed hyperparameters to t random points.
func fixedGP(t testing.TB, d, n int, noise float64, seed uint64) (*gp.GP, [][]float64, []float64) {
	t.Helper()
	rng := newRNG(seed)
	x := unitCube(t, d).Sample(rng, n)
	y := make([]float64, n)
	for i := range x {
		y[i] = testObjective(x[i])
	}
	ls := make([]float64, d)
	for j := range ls {
		ls[j] = 0.3 + 0.1*float64(j)
	}
	g, err := gp.Fit(x, y, gp.Options{Kernel: gp.SquaredExponential, Fixed: &gp.Hyper{Lengthscales: ls, SignalVariance: 1, NoiseVariance: noise}})
	if err != nil {
		t.Fatal(err)
	}
	return g, x, y
}

// bruteForcePD computes c = Cov(φ, f(x)) and Σ_φ (objective units) by
// averaging the GP's own posterior covariances over explicit path points.
func bruteForcePD(t testing.TB, g *gp.GP, p *PDPath, x [][]float64) (c *mat.Dense, sigma *mat.Dense) {
	t.Helper()
	P := p.Outputs()
	var pts [][][]float64
	for k := range P {
		pk, err := p.Points(k)
		if err != nil {
			t.Fatal(err)
		}
		pts = append(pts, pk)
	}
	c = mat.NewDense(P, len(x), nil)
	sigma = mat.NewDense(P, P, nil)
	for a := range P {
		cov, err := g.Covariance(pts[a], x)
		if err != nil {
			t.Fatal(err)
		}
		for j := range x {
			c.Set(a, j, stat.Mean(mat.Col(nil, j, cov), nil))
		}
		for b := range P {
			cb, err := g.Covariance(pts[a], pts[b])
			if err != nil {
				t.Fatal(err)
			}
			sigma.Set(a, b, mat.Sum(cb)/float64(len(pts[a])*len(pts[b])))
		}
	}
	return c, sigma
}

func TestFactorizedAveragesEqualBruteForce(t *testing.T) {
	g, x, _ := fixedGP(t, 3, 12, 1e-4, 1)
	p, err := NewPDPath(unitCube(t, 3), nil, 4, 25, newRNG(2))
	if err != nil {
		t.Fatal(err)
	}
	cands := unitCube(t, 3).Sample(newRNG(3), 7)
	st, err := newEIGState(p, g, x, DefaultRidge, Joint)
	if err != nil {
		t.Fatal(err)
	}
	c, sigma := bruteForcePD(t, g, p, cands)
	P, T := p.Outputs(), st.t
	v := g.OutputScale().Std * g.OutputScale().Std
	for a := range P {
		for b := range P {
			if got, want := st.post[a*P+b]*v, sigma.At(a, b); math.Abs(got-want) > 1e-9 {
				t.Fatalf("Σ_φ[%d,%d] = %v, brute force %v", a, b, got, want)
			}
		}
	}
	// c for each candidate, from the same formulas as scoreChunk.
	acc := make([]float64, len(p.Params))
	for j, cand := range cands {
		z := make([]float64, 3)
		if err := p.metricCoords(z, cand); err != nil {
			t.Fatal(err)
		}
		kb := make([]float64, P)
		st.ks.kbar(z, kb, acc)
		kx := make([]float64, T)
		for s := range T {
			kx[s] = st.ks.kernel(st.x[s*3:(s+1)*3], z)
		}
		w := mat.NewVecDense(T, kx)
		u := mat.NewTriDense(T, mat.Upper, st.u)
		if err := w.SolveVec(u.T(), w); err != nil {
			t.Fatal(err)
		}
		for a := range P {
			got := kb[a]
			for s := range T {
				got -= st.w[a*T+s] * w.AtVec(s)
			}
			if want := c.At(a, j); math.Abs(got*v-want) > 1e-9 {
				t.Fatalf("c[%d] of candidate %d = %v, brute force %v", a, j, got*v, want)
			}
		}
	}
}

// The closed form is the mutual information between y_x = f(x) + ε and
// φ + ε' (ε' ~ N(0, ρI)). Here it is estimated by Monte Carlo from joint
// posterior samples of f on the explicit path and at x: the Gaussian MI
// ½ log(var(y) / var(y | φ)) with the variances from the sample covariance.
// With K = 40000 samples of an 9-dimensional φ the estimate's standard error
// is about 0.005 nats; the tolerance is 0.015 nats + 3%.
func TestClosedFormEqualsMonteCarlo(t *testing.T) {
	const d, T, G, n, K = 2, 6, 3, 20, 40000
	ridge := 1e-3
	noise := 0.05
	g, x, _ := fixedGP(t, d, T, noise, 4)
	sp := unitCube(t, d)
	p, err := NewPDPath(sp, nil, G, n, newRNG(5))
	if err != nil {
		t.Fatal(err)
	}
	P := p.Outputs()
	cands := [][]float64{{0.9, 0.1}, {0.5, 0.5}, {0.05, 0.95}, x[0]}
	e := &EIGPDP{Path: p, Inputs: x, Ridge: ridge}
	got := make([]float64, len(cands))
	if err := e.Score(g, cands, got); err != nil {
		t.Fatal(err)
	}
	var all [][]float64
	for k := range P {
		pk, _ := p.Points(k)
		all = append(all, pk...)
	}
	scale2 := g.OutputScale().Std * g.OutputScale().Std
	rho := ridge * g.Hyper().SignalVariance * scale2
	sigma2 := g.NoiseVariance()
	rng := newRNG(6)
	for ci, cand := range cands {
		samples, err := g.Sample(append(slices.Clone(all), cand), K, rng)
		if err != nil {
			t.Fatal(err)
		}
		data := mat.NewDense(K, P+1, nil)
		for s := range K {
			row := samples.RawRowView(s)
			for k := range P {
				data.Set(s, k, stat.Mean(row[k*n:(k+1)*n], nil)+math.Sqrt(rho)*rng.NormFloat64())
			}
			data.Set(s, P, row[len(row)-1]+math.Sqrt(sigma2)*rng.NormFloat64())
		}
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, data, nil)
		// var(y | φ) = var(y) − c_yφ Σ_φφ⁻¹ c_φy from the sample covariance.
		sphi := mat.NewSymDense(P, nil)
		cy := mat.NewVecDense(P, nil)
		for a := range P {
			cy.SetVec(a, cov.At(a, P))
			for b := a; b < P; b++ {
				sphi.SetSym(a, b, cov.At(a, b))
			}
		}
		var sol mat.VecDense
		var chol mat.Cholesky
		if !chol.Factorize(sphi) {
			t.Fatal("sample covariance not positive definite")
		}
		if err := chol.SolveVecTo(&sol, cy); err != nil {
			t.Fatal(err)
		}
		vy := cov.At(P, P)
		mc := -0.5 * math.Log(1-mat.Dot(cy, &sol)/vy)
		t.Logf("candidate %v: closed form %.4f, Monte Carlo %.4f", cand, got[ci], mc)
		if math.Abs(got[ci]-mc) > 0.015+0.03*mc {
			t.Errorf("candidate %v: closed form %.4f, Monte Carlo %.4f", cand, got[ci], mc)
		}
	}
}

func TestEIGNonNegativeAndZeroAtObservedNoiseFreePoint(t *testing.T) {
	g, x, _ := fixedGP(t, 3, 15, 0, 7)
	p, err := NewPDPath(unitCube(t, 3), nil, 10, 200, newRNG(8))
	if err != nil {
		t.Fatal(err)
	}
	cands := append(unitCube(t, 3).Sample(newRNG(9), 300), x...)
	out := make([]float64, len(cands))
	e := &EIGPDP{Path: p, Inputs: x}
	if err := e.Score(g, cands, out); err != nil {
		t.Fatal(err)
	}
	maxRandom := 0.0
	for i, v := range out {
		if !(v >= 0) {
			t.Fatalf("EIG %v < 0 at %v", v, cands[i])
		}
		if i < 300 {
			maxRandom = math.Max(maxRandom, v)
		}
	}
	if maxRandom < 0.1 {
		t.Fatalf("largest EIG over random candidates %v: the test problem is not informative", maxRandom)
	}
	for i := range x {
		if v := out[300+i]; v > 1e-6 {
			t.Errorf("EIG at observed point %d = %v, want 0", i, v)
		}
	}
	// Summed over hyperparameters is ≥ joint only in general when PDs
	// share information; both must be ≥ 0 and equal for a single PD.
	one, _ := NewPDPath(unitCube(t, 3), []int{1}, 10, 200, newRNG(8))
	a, b := make([]float64, 50), make([]float64, 50)
	if err := (&EIGPDP{Path: one, Inputs: x}).Score(g, cands[:50], a); err != nil {
		t.Fatal(err)
	}
	if err := (&EIGPDP{Path: one, Inputs: x, Combine: Summed}).Score(g, cands[:50], b); err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			t.Fatalf("joint %v and summed %v differ for one hyperparameter", a[i], b[i])
		}
	}
}

// summedPDVariance is Σ_p Var(φ_p) from the GP's own AverageVariance (eq. 4
// of Moosbauer et al. 2021), independent of the EIG code.
func summedPDVariance(t *testing.T, g *gp.GP, p *PDPath) float64 {
	t.Helper()
	s := 0.0
	for k := range p.Outputs() {
		pts, _ := p.Points(k)
		v, err := g.AverageVariance(pts)
		if err != nil {
			t.Fatal(err)
		}
		s += v
	}
	return s
}

func TestBAXEvaluationShrinksPDVarianceMoreThanEI(t *testing.T) {
	sp := unitCube(t, 3)
	for seed := uint64(10); seed < 13; seed++ {
		g, x, y := fixedGP(t, 3, 10, 1e-4, seed)
		p, err := NewPDPath(sp, nil, 10, 300, newRNG(seed+100))
		if err != nil {
			t.Fatal(err)
		}
		cands := sp.Sample(newRNG(seed+200), 1500)
		pick := func(a Acquisition) []float64 {
			scores := make([]float64, len(cands))
			if err := a.Score(g, cands, scores); err != nil {
				t.Fatal(err)
			}
			return cands[argmax(scores)]
		}
		xb := pick(&EIGPDP{Path: p, Inputs: x})
		xe := pick(EI{Best: slices.Min(y)})
		after := func(xn []float64) float64 {
			mean, variance := []float64{0}, []float64{0}
			if err := g.Predict([][]float64{xn}, mean, variance); err != nil {
				t.Fatal(err)
			}
			c, err := g.Condition(xn, mean[0])
			if err != nil {
				t.Fatal(err)
			}
			return summedPDVariance(t, c, p)
		}
		before, vb, ve := summedPDVariance(t, g, p), after(xb), after(xe)
		if !(vb < ve) || !(vb < before) {
			t.Errorf("seed %d: summed PD variance before %.4g, after BAX point %.4g, after EI point %.4g", seed, before, vb, ve)
		}
	}
}

// In the Gaussian case the entropy of y_x given D ∪ (sampled path) does not
// depend on the sampled values: GPs conditioned on two different posterior
// samples of the path have the same predictive variance, which is what
// scoreBAX computes once.
func TestBAXSamplesShareEntropy(t *testing.T) {
	const d = 2
	g, x, y := fixedGP(t, d, 8, 1e-3, 20)
	sp := unitCube(t, d)
	p, err := NewPDPath(sp, []int{0}, 4, 10, newRNG(21))
	if err != nil {
		t.Fatal(err)
	}
	var path [][]float64
	for k := range p.Outputs() {
		pk, _ := p.Points(k)
		path = append(path, pk...)
	}
	cands := sp.Sample(newRNG(22), 5)
	bax := make([]float64, len(cands))
	if err := (&EIGPDP{Path: p, Estimator: BAX}).Score(g, cands, bax); err != nil {
		t.Fatal(err)
	}
	samples, err := g.Sample(path, 2, newRNG(23))
	if err != nil {
		t.Fatal(err)
	}
	h := g.Hyper()
	out := g.OutputScale()
	_, v0 := make([]float64, len(cands)), make([]float64, len(cands))
	if err := g.Predict(cands, make([]float64, len(cands)), v0); err != nil {
		t.Fatal(err)
	}
	noise := g.NoiseVariance()
	var variances [][]float64
	for s := range 2 {
		ax := append(slices.Clone(x), path...)
		ay := append(slices.Clone(y), samples.RawRowView(s)...)
		c, err := gp.Fit(ax, ay, gp.Options{Kernel: gp.SquaredExponential, Fixed: &h, Output: &out})
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float64, len(cands))
		if err := c.Predict(cands, make([]float64, len(cands)), v); err != nil {
			t.Fatal(err)
		}
		variances = append(variances, v)
	}
	for i := range cands {
		if math.Abs(variances[0][i]-variances[1][i]) > 1e-12 {
			t.Fatalf("conditional variances differ between samples: %v vs %v", variances[0][i], variances[1][i])
		}
		want := 0.5 * math.Log((v0[i]+noise)/(variances[0][i]+noise))
		if math.Abs(bax[i]-want) > 1e-6*(1+want) {
			t.Errorf("candidate %d: BAX estimator %v, conditioned GP %v", i, bax[i], want)
		}
		if bax[i] < 0 {
			t.Errorf("BAX EIG %v < 0", bax[i])
		}
	}
}

func TestEIGErrors(t *testing.T) {
	g, x, _ := fixedGP(t, 2, 6, 1e-4, 30)
	p, err := NewPDPath(unitCube(t, 2), nil, 5, 20, newRNG(31))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 1)
	pt := [][]float64{{0.5, 0.5}}
	if err := (&EIGPDP{Path: p, Inputs: x[:5]}).Score(g, pt, out); err == nil {
		t.Error("missing input accepted")
	}
	wrong := slices.Clone(x)
	wrong[0] = []float64{0.123, 0.456}
	if err := (&EIGPDP{Path: p, Inputs: wrong}).Score(g, pt, out); err == nil {
		t.Error("inputs that do not match the model accepted")
	}
	if err := (&EIGPDP{Path: p, Inputs: x}).Score(constant(0, 1), [][]float64{{0.5, 0.5}}, out); err == nil {
		t.Error("non-GP model accepted")
	}
	if err := (&EIGPDP{Inputs: x}).Score(g, pt, out); err == nil {
		t.Error("missing path accepted")
	}
	if err := (&EIGPDP{Path: p, Inputs: x, Estimator: "nope"}).Score(g, pt, out); err == nil {
		t.Error("unknown estimator accepted")
	}
	m, err := gp.Fit(x, make([]float64, 6), gp.Options{Kernel: gp.Matern52, Fixed: &gp.Hyper{Lengthscales: []float64{0.3, 0.3}, SignalVariance: 1, NoiseVariance: 1e-3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&EIGPDP{Path: p, Inputs: x}).Score(m, pt, out); err == nil {
		t.Error("closed form accepted a Matérn kernel")
	}
	if err := (&EIGPDP{Path: p, Estimator: BAX}).Score(m, pt, out); err != nil {
		t.Errorf("BAX estimator with Matérn kernel: %v", err)
	}
	if _, err := NewPDPath(unitCube(t, 2), []int{0, 0}, 5, 10, newRNG(1)); err == nil {
		t.Error("duplicate parameter accepted")
	}
	if _, err := NewPDPath(unitCube(t, 2), []int{2}, 5, 10, newRNG(1)); err == nil {
		t.Error("parameter out of range accepted")
	}
	if _, err := NewPDPath(unitCube(t, 2), nil, 1, 10, newRNG(1)); err == nil {
		t.Error("grid of one point accepted")
	}
}

func TestBandsMatchAverageVariance(t *testing.T) {
	g, x, y := fixedGP(t, 3, 14, 1e-4, 40)
	p, err := NewPDPath(unitCube(t, 3), []int{0, 2}, 6, 150, newRNG(41))
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Bands(g, x, y)
	if err != nil {
		t.Fatal(err)
	}
	for k := range p.Outputs() {
		pts, _ := p.Points(k)
		v, err := g.AverageVariance(pts)
		if err != nil {
			t.Fatal(err)
		}
		mean := make([]float64, len(pts))
		if err := g.Predict(pts, mean, make([]float64, len(pts))); err != nil {
			t.Fatal(err)
		}
		if math.Abs(b.SD[k]-math.Sqrt(v)) > 1e-7 || math.Abs(b.Mean[k]-stat.Mean(mean, nil)) > 1e-8 {
			t.Fatalf("output %d: bands (%v, %v), GP (%v, %v)", k, b.Mean[k], b.SD[k], stat.Mean(mean, nil), math.Sqrt(v))
		}
	}
	hw, err := b.MeanHalfWidth(0.05)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1.959963984540054 * stat.Mean(b.SD, nil); math.Abs(hw-want) > 1e-9 {
		t.Errorf("half-width %v, want %v", hw, want)
	}
}

// cpuTimer reports the process CPU time per operation next to the wall
// time, because this machine is shared: wall time alone overstates the cost
// when other jobs run (on an idle 2-core machine wall ≈ CPU/2 for the
// parallel parts).
func cpuTimer(b *testing.B) func() {
	var r0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	return func() {
		var r1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		ns := (r1.Utime.Nano() + r1.Stime.Nano()) - (r0.Utime.Nano() + r0.Stime.Nano())
		b.ReportMetric(float64(ns)/float64(b.N), "cpu-ns/op")
	}
}

// benchProblem is the speed target: 1500 candidates, T = 60, d = 6,
// n = 1000, G = 20, all six PDPs jointly.
func benchProblem(b *testing.B) (*gp.GP, [][]float64, *PDPath, [][]float64) {
	g, x, _ := fixedGP(b, 6, 60, 1e-4, 50)
	sp := unitCube(b, 6)
	p, err := NewPDPath(sp, nil, 20, 1000, newRNG(51))
	if err != nil {
		b.Fatal(err)
	}
	return g, x, p, sp.Sample(newRNG(52), 1500)
}

// BenchmarkEIGClosedFormStep is one BOBAX EIG step from scratch (prior
// Cov(φ) included, as after a change of kernel hyperparameters).
func BenchmarkEIGClosedFormStep(b *testing.B) {
	g, x, p, cands := benchProblem(b)
	out := make([]float64, len(cands))
	b.ResetTimer()
	defer cpuTimer(b)()
	for range b.N {
		p.cache = nil
		if err := (&EIGPDP{Path: p, Inputs: x}).Score(g, cands, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEIGClosedFormWarm is a step with fixed kernel hyperparameters (the
// benchmark setting): the prior Cov(φ) and the training rows are cached.
func BenchmarkEIGClosedFormWarm(b *testing.B) {
	g, x, p, cands := benchProblem(b)
	out := make([]float64, len(cands))
	if err := (&EIGPDP{Path: p, Inputs: x}).Score(g, cands, out); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	defer cpuTimer(b)()
	for range b.N {
		if err := (&EIGPDP{Path: p, Inputs: x}).Score(g, cands, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEIGBAXStep is the paper's estimator on the same problem, with the
// path cut to DefaultMaxBAXPath points (16 Monte Carlo points × 120 grid
// values); the full 120 000-point path cannot be factorized.
func BenchmarkEIGBAXStep(b *testing.B) {
	g, _, p, cands := benchProblem(b)
	out := make([]float64, len(cands))
	b.ResetTimer()
	defer cpuTimer(b)()
	for range b.N {
		if err := (&EIGPDP{Path: p, Estimator: BAX}).Score(g, cands, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEIGFirstVariableWarm is the reproduction's setting: the PD of the
// first of six variables, fixed kernel hyperparameters, T = 100.
func BenchmarkEIGFirstVariableWarm(b *testing.B) {
	g, x, _ := fixedGP(b, 6, 100, 1e-4, 50)
	sp := unitCube(b, 6)
	p, err := NewPDPath(sp, []int{0}, 20, 1000, newRNG(51))
	if err != nil {
		b.Fatal(err)
	}
	cands := sp.Sample(newRNG(52), 1500)
	out := make([]float64, len(cands))
	if err := (&EIGPDP{Path: p, Inputs: x}).Score(g, cands, out); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	defer cpuTimer(b)()
	for range b.N {
		if err := (&EIGPDP{Path: p, Inputs: x}).Score(g, cands, out); err != nil {
			b.Fatal(err)
		}
	}
}
