package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// On functions drawn from the GP's own prior (a well-specified model with
// the true hyperparameters) the held-out average scale is about 1: its mean
// over 40 draws lies within [0.75, 1.3] (the sd of one draw's scale is
// about 0.5, so the mean's is about 0.08); and the discrepancy along x₀ is
// small: its mean over the draws is below 3% of the signal variance (a
// ripple of that variance is what TestDiscrepancyFindsARipple detects).
func TestVarianceScaleWellSpecified(t *testing.T) {
	h := Hyper{Lengthscales: []float64{0.3, 0.5}, SignalVariance: 1, NoiseVariance: 0.01}
	ref, err := Fit([][]float64{{0.5, 0.5}}, []float64{0}, Options{Kernel: Matern52, Fixed: &h, Output: &OutputScale{Mean: 0, Std: 1}})
	if err != nil {
		t.Fatal(err)
	}
	rng := newRNG(43)
	const draws, n = 40, 60
	sum, sumDisc := 0.0, 0.0
	for range draws {
		x := uniformPoints(rng, n, 2)
		y := make([]float64, n)
		drawPrior(priorFactor(t, ref, x, h.NoiseVariance), rng, y)
		g, err := Fit(x, y, Options{Kernel: Matern52, Fixed: &h, Output: &OutputScale{Mean: 0, Std: 1}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.VarianceScale()
		if err != nil {
			t.Fatal(err)
		}
		sum += c
		d, err := g.Discrepancy([]int{0})
		if err != nil {
			t.Fatal(err)
		}
		sumDisc += d
	}
	if mean := sum / draws; mean < 0.75 || mean > 1.3 {
		t.Errorf("mean scale over %d prior draws %.3f, want about 1", draws, mean)
	}
	if mean := sumDisc / draws; mean > 0.03*h.SignalVariance {
		t.Errorf("mean discrepancy along x₀ over %d prior draws %.4f, want below %.3f", draws, mean, 0.03*h.SignalVariance)
	}
}

func TestDiscrepancyInput(t *testing.T) {
	g, _, _ := fittedModel(t, 46, 30, 2, Matern52, []int{0, 3})
	for _, dims := range [][]int{{2}, {-1}, {0, 0}} {
		if _, err := g.Discrepancy(dims); err == nil {
			t.Errorf("dims %v accepted", dims)
		}
	}
	a, err := g.Discrepancy([]int{1}) // categorical: bins are levels
	if err != nil || a < 0 {
		t.Fatalf("along a categorical: %v, %v", a, err)
	}
	if b, _ := g.Discrepancy([]int{1}); b != a {
		t.Errorf("not cached: %v then %v", a, b)
	}
	both, err := g.Discrepancy([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := g.Discrepancy([]int{0})
	if math.Abs(both-(first+a)) > 1e-12*math.Max(both, 1) {
		t.Errorf("two dimensions %v, want the sum %v + %v", both, first, a)
	}
	if none, _ := g.Discrepancy(nil); none != 0 {
		t.Errorf("no dimensions: %v, want 0", none)
	}
}

// The expectation the discrepancy subtracts, E[ē_b²] = 1ᵀ[D⁻¹K⁻¹D⁻¹]_bb1/n_b²,
// against Monte Carlo: with the model's hyperparameters fixed, outputs
// drawn from its own prior give leave-one-out residuals whose bin means
// have that second moment (20,000 draws: the relative standard error of a
// mean of squares is about 1%, the tolerance 5%).
func TestDiscrepancyExpectationMatchesMonteCarlo(t *testing.T) {
	h := Hyper{Lengthscales: []float64{0.2, 0.4}, SignalVariance: 1, NoiseVariance: 0.05}
	rng := newRNG(7)
	const n = 24
	x := uniformPoints(rng, n, 2)
	ref, err := Fit(x, make([]float64, n), Options{Kernel: Matern52, Fixed: &h, Output: &OutputScale{Mean: 0, Std: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, cov, err := ref.looResiduals()
	if err != nil {
		t.Fatal(err)
	}
	bin := []int{}
	for i := range n {
		if x[i][0] < 0.3 {
			bin = append(bin, i)
		}
	}
	m := float64(len(bin))
	want := 0.0
	for _, a := range bin {
		for _, b := range bin {
			want += cov[a*n+b]
		}
	}
	want /= m * m
	l := priorFactor(t, ref, x, h.NoiseVariance)
	const draws = 20000
	got := 0.0
	y := make([]float64, n)
	for range draws {
		drawPrior(l, rng, y)
		g, err := Fit(x, y, Options{Kernel: Matern52, Fixed: &h, Output: &OutputScale{Mean: 0, Std: 1}})
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := g.looResiduals()
		if err != nil {
			t.Fatal(err)
		}
		e := 0.0
		for _, i := range bin {
			e += r[i]
		}
		e /= m
		got += e * e / draws
	}
	if math.Abs(got/want-1) > 0.05 {
		t.Errorf("E[ē²] by Monte Carlo %.5g, formula %.5g", got, want)
	}
}

// Ripples shorter than 100 points in 4-D can resolve (the cosine mixture,
// Σ z_j² − 0.1 Σ cos(5π z_j) with z = 2x − 1) are what a fitted GP explains
// as noise: its posterior is tight about the smooth bowl. The discrepancy
// along x₀ recovers the variance of x₀'s ripple, 0.1²·½ = 0.005 (within a
// factor 2 here: about 0.7 of it survives bins of width 1/20), while a
// coordinate without a ripple gets little.
func TestDiscrepancyFindsARipple(t *testing.T) {
	rng := newRNG(5)
	const n = 100
	x := uniformPoints(rng, n, 4)
	y := make([]float64, n)
	for i, p := range x {
		for j, v := range p {
			z := 2*v - 1
			y[i] += z * z
			if j < 3 {
				y[i] -= 0.1 * math.Cos(5*math.Pi*z)
			}
		}
	}
	g, err := Fit(x, y, Options{Kernel: Matern52})
	if err != nil {
		t.Fatal(err)
	}
	along, err := g.Discrepancy([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	across, err := g.Discrepancy([]int{3})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lengthscales %.3g, noise %.3g; discrepancy along the ripple %.4g, across %.4g", g.Hyper().Lengthscales, g.NoiseVariance(), along, across)
	if along < 0.0025 || along > 0.01 {
		t.Errorf("discrepancy along the ripple %.4g, want about 0.005", along)
	}
	if across > 0.001 {
		t.Errorf("discrepancy across the ripple %.4g, want near 0", across)
	}
}

func mustScale(t *testing.T, g *GP) float64 {
	c, err := g.VarianceScale()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A model whose noise is fixed far below the data's noise is overconfident:
// its scale is well above 1; one whose noise is far above is below 1.
func TestVarianceScaleDetectsMiscalibration(t *testing.T) {
	g, x, y := fittedModel(t, 42, 60, 2, Matern52, nil)
	h := g.Hyper()
	over := h.Clone()
	over.NoiseVariance = h.NoiseVariance / 100
	under := h.Clone()
	under.NoiseVariance = h.NoiseVariance * 100
	scale := func(hy Hyper) float64 {
		m, err := Fit(x, y, Options{Kernel: Matern52, Fixed: &hy})
		if err != nil {
			t.Fatal(err)
		}
		c, err := m.VarianceScale()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := scale(over); c < 3 {
		t.Errorf("overconfident model: scale %v, want well above 1", c)
	}
	if c := scale(under); c > 0.5 {
		t.Errorf("underconfident model: scale %v, want well below 1", c)
	}
}

// The Hessian from differences of the analytic gradient equals second
// differences of the log marginal likelihood itself.
func TestNegLMLHessianBruteForce(t *testing.T) {
	g, _, _ := fittedModel(t, 44, 30, 2, Matern52, nil)
	ystd := make([]float64, g.n)
	for i, v := range g.y {
		ystd[i] = (v - g.out.Mean) / g.out.Std
	}
	p := &problem{kernel: g.kernel, n: g.n, d: g.dim, x: g.x, y: ystd, cat: g.cat, minNoise: DefaultMinNoise, workers: 1}
	theta := p.toTheta(g.hyper)
	hess, err := p.negLMLHessian(theta)
	if err != nil {
		t.Fatal(err)
	}
	w := p.newWorkspace()
	defer w.release()
	grad := make([]float64, len(theta))
	f := func(th []float64) float64 {
		v, err := w.lml(th, grad)
		if err != nil {
			t.Fatal(err)
		}
		return -v
	}
	const h = 1e-3
	for i := range theta {
		for j := range theta {
			at := func(di, dj float64) float64 {
				th := append([]float64(nil), theta...)
				th[i] += di
				th[j] += dj
				return f(th)
			}
			want := (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
			if got := hess.At(i, j); math.Abs(got-want) > 1e-3*math.Max(1, math.Abs(want)) {
				t.Errorf("H[%d][%d] = %v, second differences %v", i, j, got, want)
			}
		}
	}
}

// Hyperparameter samples matter less as data grows: the sd across samples
// of the predicted mean at a point between the observations falls by more
// than half from 20 to 200 observations; every sample is a working model.
func TestHyperposteriorShrinksWithData(t *testing.T) {
	probe := [][]float64{{0.37, 0.61}}
	spread := func(n int) float64 {
		g, _, _ := fittedModel(t, 45, n, 2, Matern52, nil)
		s, err := g.HyperposteriorSamples(100, 3)
		if err != nil {
			t.Fatal(err)
		}
		means := make([]float64, len(s))
		mean, v := make([]float64, 1), make([]float64, 1)
		for k, h := range s {
			if err := h.Predict(probe, mean, v); err != nil || math.IsNaN(mean[0]) {
				t.Fatalf("sample model predicts %v, %v", mean, err)
			}
			means[k] = mean[0]
		}
		m, sd := 0.0, 0.0
		for _, x := range means {
			m += x / float64(len(means))
		}
		for _, x := range means {
			sd += (x - m) * (x - m) / float64(len(means)-1)
		}
		return math.Sqrt(sd)
	}
	few, many := spread(20), spread(200)
	if !(many < 0.5*few) || few == 0 {
		t.Errorf("sd of the mean across hyperparameter samples: %.4f at 20 observations, %.4f at 200", few, many)
	}
	if _, err := (&GP{}).HyperposteriorSamples(0, 1); err == nil {
		t.Error("0 samples accepted")
	}
}

// priorFactor is the lower Cholesky factor of the prior covariance of
// observations at x under ref's kernel plus noise.
func priorFactor(t *testing.T, ref *GP, x [][]float64, noise float64) *mat.TriDense {
	t.Helper()
	n := len(x)
	k := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			v := ref.KernelValue(x[i], x[j])
			if i == j {
				v += noise
			}
			k.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("prior covariance not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	return &l
}

// drawPrior fills y with a draw L·z, z standard normal.
func drawPrior(l *mat.TriDense, rng *rand.Rand, y []float64) {
	z := make([]float64, len(y))
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = 0
		for j := 0; j <= i; j++ {
			y[i] += l.At(i, j) * z[j]
		}
	}
}
