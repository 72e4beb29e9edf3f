package gp

import (
	"math"
	"testing"
)

// TestSignalPrior checks the signal variance's Gamma(2, 1) prior against
// its density σ e^(−σ) (by differences) and its derivative against finite
// differences.
func TestSignalPrior(t *testing.T) {
	ref, _ := signalNegLog(0)
	for _, th := range []float64{-7, -1, 0, 0.5, 3} {
		f, g := signalNegLog(th)
		s := math.Exp(th)
		if want := -(math.Log(s) - s) - 1; math.Abs(f-ref-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("θ = %v: %v, want %v", th, f-ref, want)
		}
		fp, _ := signalNegLog(th + 1e-6)
		fm, _ := signalNegLog(th - 1e-6)
		if fd := (fp - fm) / 2e-6; math.Abs(fd-g) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("θ = %v: derivative %v, finite difference %v", th, g, fd)
		}
	}
}

// TestPriorNegLog checks each prior's value against its density written
// out (up to the constant, compared by differences) and its derivative
// against central finite differences.
func TestPriorNegLog(t *testing.T) {
	for _, c := range []struct {
		p    LengthscalePrior
		d    int
		want func(l float64) float64 // −log density of ℓ, in θ = log ℓ
	}{
		{InverseSquaredPrior, 5, func(l float64) float64 { return 0.1*l*l + 0.1/(l*l) }},
		{DimensionScaledPrior, 20, func(l float64) float64 {
			mu := math.Sqrt2 + 0.5*math.Log(20)
			return (math.Log(l) - mu) * (math.Log(l) - mu) / (2 * 3)
		}},
		{NoPrior, 3, func(float64) float64 { return 0 }},
	} {
		ref, _ := c.p.negLog(0, c.d)
		for _, th := range []float64{-3, -0.7, 0, 0.4, 2.9, 6} {
			f, g := c.p.negLog(th, c.d)
			if want := c.want(math.Exp(th)) - c.want(1); math.Abs(f-ref-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%v at θ = %v: %v, want %v", c.p, th, f-ref, want)
			}
			const eps = 1e-6
			fp, _ := c.p.negLog(th+eps, c.d)
			fm, _ := c.p.negLog(th-eps, c.d)
			if fd := (fp - fm) / (2 * eps); math.Abs(fd-g) > 1e-5*math.Max(1, math.Abs(fd)) {
				t.Errorf("%v at θ = %v: derivative %v, finite difference %v", c.p, th, g, fd)
			}
		}
	}
	for _, name := range []string{"none", "inverse-squared", "dimension-scaled"} {
		p, err := ParsePrior(name)
		if err != nil || p.String() != name {
			t.Errorf("ParsePrior(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := ParsePrior("gamma"); err == nil {
		t.Error("unknown prior accepted")
	}
	if _, err := Fit([][]float64{{0.1}, {0.9}}, []float64{0, 1}, Options{Prior: LengthscalePrior(7)}); err == nil {
		t.Error("invalid prior accepted by Fit")
	}
}

// TestPriorKeepsDimensionsOn fits a function of the first of three
// dimensions: maximum likelihood sends the other two lengthscales to the
// upper bound, the inverse-squared prior keeps them below 10 (its penalty
// 0.1ℓ² would exceed the likelihood's gain), and every MAP fit ends at a
// point where the posterior's gradient vanishes: the fitted θ maximizes
// LML + log prior, not the LML alone.
func TestPriorKeepsDimensionsOn(t *testing.T) {
	rng := newRNG(41)
	x := uniformPoints(rng, 30, 3)
	y := make([]float64, len(x))
	for i, p := range x {
		y[i] = math.Sin(5 * p[0])
	}
	mle, err := Fit(x, y, Options{Kernel: Matern52, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if l := mle.Hyper().Lengthscales; l[1] < 100 || l[2] < 100 {
		t.Fatalf("maximum likelihood lengthscales %v, want the inert ones above 100", l)
	}
	for _, prior := range []LengthscalePrior{InverseSquaredPrior, DimensionScaledPrior} {
		g, err := Fit(x, y, Options{Kernel: Matern52, Seed: 1, Prior: prior})
		if err != nil {
			t.Fatal(err)
		}
		l := g.Hyper().Lengthscales
		if prior == InverseSquaredPrior && (l[1] > 10 || l[2] > 10) {
			t.Errorf("%v: lengthscales %v, want the inert ones below 10", prior, l)
		}
		if l[0] > 1 {
			t.Errorf("%v: lengthscale of the active dimension %v, want below 1", prior, l[0])
		}
		p := &problem{kernel: Matern52, n: g.n, d: g.dim, x: g.x, y: standardized(y, g.OutputScale()), cat: g.cat, minNoise: DefaultMinNoise, prior: prior}
		th := p.toTheta(g.Hyper())
		grad := make([]float64, len(th))
		if _, err := p.newWorkspace().lml(th, grad); err != nil {
			t.Fatal(err)
		}
		lo, hi := p.bounds()
		for j := range th {
			gj := grad[j]
			if j < g.dim {
				_, pg := prior.negLog(th[j], g.dim)
				gj -= pg
			}
			if j == g.dim {
				_, pg := signalNegLog(th[j])
				gj -= pg
			}
			if th[j]-lo[j] > 1e-3 && hi[j]-th[j] > 1e-3 && math.Abs(gj) > 0.05 {
				t.Errorf("%v: ∂(LML + log prior)/∂θ%d = %v at the fit %v", prior, j, gj, g.Hyper())
			}
		}
	}
}

func standardized(y []float64, out OutputScale) []float64 {
	s := make([]float64, len(y))
	for i, v := range y {
		s[i] = (v - out.Mean) / out.Std
	}
	return s
}
