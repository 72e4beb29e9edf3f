package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// On functions drawn from the GP's own prior (a well-specified model with
// the true hyperparameters) the held-out average scale is about 1: its mean
// over 40 draws lies within [0.75, 1.3] (the sd of one draw's scale is
// about 0.5, so the mean's is about 0.08).
func TestVarianceScaleWellSpecified(t *testing.T) {
	h := Hyper{Lengthscales: []float64{0.3, 0.5}, SignalVariance: 1, NoiseVariance: 0.01}
	ref, err := Fit([][]float64{{0.5, 0.5}}, []float64{0}, Options{Kernel: Matern52, Fixed: &h, Output: &OutputScale{Mean: 0, Std: 1}})
	if err != nil {
		t.Fatal(err)
	}
	rng := newRNG(43)
	const draws, n = 40, 60
	sum, sumAlong := 0.0, 0.0
	for range draws {
		x := uniformPoints(rng, n, 2)
		k := mat.NewSymDense(n, nil)
		for i := range n {
			for j := i; j < n; j++ {
				v := ref.KernelValue(x[i], x[j])
				if i == j {
					v += h.NoiseVariance
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
		z := make([]float64, n)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		y := make([]float64, n)
		for i := range n {
			for j := 0; j <= i; j++ {
				y[i] += l.At(i, j) * z[j]
			}
		}
		g, err := Fit(x, y, Options{Kernel: Matern52, Fixed: &h, Output: &OutputScale{Mean: 0, Std: 1}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.VarianceScale()
		if err != nil {
			t.Fatal(err)
		}
		sum += c
		a, err := g.VarianceScaleAlong([]int{0})
		if err != nil {
			t.Fatal(err)
		}
		sumAlong += a
	}
	if mean := sum / draws; mean < 0.75 || mean > 1.3 {
		t.Errorf("mean scale over %d prior draws %.3f, want about 1", draws, mean)
	}
	if mean := sumAlong / draws; mean < 0.75 || mean > 1.3 {
		t.Errorf("mean scale along x₀ over %d prior draws %.3f, want about 1", draws, mean)
	}
}

func TestVarianceScaleAlongInput(t *testing.T) {
	g, _, _ := fittedModel(t, 46, 30, 2, Matern52, []int{0, 3})
	for _, dims := range [][]int{{2}, {-1}, {0, 0}} {
		if _, err := g.VarianceScaleAlong(dims); err == nil {
			t.Errorf("dims %v accepted", dims)
		}
	}
	a, err := g.VarianceScaleAlong([]int{1}) // categorical: slabs are levels
	if err != nil || !(a > 0) {
		t.Fatalf("along a categorical: %v, %v", a, err)
	}
	if b, _ := g.VarianceScaleAlong([]int{1}); b != a {
		t.Errorf("not cached: %v then %v", a, b)
	}
	if c, _ := g.VarianceScaleAlong(nil); c != mustScale(t, g) {
		t.Errorf("no dimensions should be the global scale")
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
