package warp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// inverse of YeoJohnson, for drawing data whose true exponent is known.
func inverse(w, lambda float64) float64 {
	if w >= 0 {
		if lambda == 0 {
			return math.Expm1(w)
		}
		return math.Pow(1+lambda*w, 1/lambda) - 1
	}
	if lambda == 2 {
		return -math.Expm1(-w)
	}
	return 1 - math.Pow(1-(2-lambda)*w, 1/(2-lambda))
}

func TestYeoJohnsonClosedForms(t *testing.T) {
	for _, z := range []float64{-3, -0.5, 0, 0.7, 4} {
		if got := YeoJohnson(z, 1); math.Abs(got-z) > 1e-12 {
			t.Errorf("λ=1 at %v: %v, want the identity", z, got)
		}
		if z >= 0 {
			if got, want := YeoJohnson(z, 0), math.Log(1+z); math.Abs(got-want) > 1e-12 {
				t.Errorf("λ=0 at %v: %v, want log(1+z) %v", z, got, want)
			}
			if got, want := YeoJohnson(z, 0.5), 2*(math.Sqrt(1+z)-1); math.Abs(got-want) > 1e-12 {
				t.Errorf("λ=0.5 at %v: %v, want %v", z, got, want)
			}
		} else if got, want := YeoJohnson(z, 0), -((1-z)*(1-z)-1)/2; math.Abs(got-want) > 1e-12 {
			t.Errorf("λ=0 at %v: %v, want %v", z, got, want)
		}
		for _, l := range []float64{-1.5, 0, 0.4, 1} {
			if back := inverse(YeoJohnson(z, l), l); math.Abs(back-z) > 1e-9 {
				t.Errorf("inverse(ψ_%v(%v)) = %v", l, z, back)
			}
		}
	}
}

// The fitted λ maximizes the likelihood: no point of a fine grid does better.
func TestFitMaximizesLikelihood(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 5 {
		y := make([]float64, 60)
		for i := range y {
			y[i] = math.Exp(rng.NormFloat64() * float64(trial+1) / 2) // heavier upper tails
		}
		tr, err := Fit(y)
		if err != nil {
			t.Fatal(err)
		}
		z := make([]float64, len(y))
		jac := 0.0
		for i, v := range y {
			z[i] = (v - tr.Mean) / tr.SD
			jac += math.Copysign(math.Log1p(math.Abs(z[i])), z[i])
		}
		got := profileLogLikelihood(z, tr.Lambda, jac)
		for l := MinLambda; l <= 1; l += 0.001 {
			if v := profileLogLikelihood(z, l, jac); v > got+1e-9 {
				t.Fatalf("trial %d: λ=%v has log-likelihood %v above the fitted λ=%v's %v", trial, l, v, tr.Lambda, got)
			}
		}
		if tr.Lambda >= 1 {
			t.Errorf("trial %d: log-normal data kept λ=%v, want < 1", trial, tr.Lambda)
		}
	}
}

// profileLogLikelihood is Yeo and Johnson's eq. 3.1 written out from
// YeoJohnson, independently of Fit's own evaluation.
func profileLogLikelihood(z []float64, lambda, jacobian float64) float64 {
	psi := make([]float64, len(z))
	m := 0.0
	for i, v := range z {
		psi[i] = YeoJohnson(v, lambda)
		m += psi[i] / float64(len(z))
	}
	s := 0.0
	for _, p := range psi {
		s += (p - m) * (p - m) / float64(len(z))
	}
	return -float64(len(z))/2*math.Log(s) + (lambda-1)*jacobian
}

// Data that are the inverse transform of Gaussian draws come out symmetric
// (n = 4,000; skewness of a Gaussian sample of that size has sd 0.04).
func TestFitSymmetrizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, lambda := range []float64{0, 0.3, 0.7} {
		y := make([]float64, 4000)
		for i := range y {
			y[i] = 10 + 3*inverse(0.8*rng.NormFloat64(), lambda)
		}
		tr, err := Fit(y)
		if err != nil {
			t.Fatal(err)
		}
		z := make([]float64, len(y))
		for i, v := range y {
			z[i] = (v - tr.Mean) / tr.SD
		}
		w := make([]float64, len(z))
		for i, v := range z {
			w[i] = YeoJohnson(v, tr.Lambda)
		}
		if s := skewness(w); math.Abs(s) > 0.1 {
			t.Errorf("true λ %v: warped values have skewness %.3f (λ fitted %.3f), want |·| ≤ 0.1", lambda, s, tr.Lambda)
		}
		if s := skewness(y); lambda < 1 && s < 0.3 {
			t.Errorf("true λ %v: the raw data's skewness %.3f should be clearly positive", lambda, s)
		}
	}
}

func skewness(x []float64) float64 {
	n := float64(len(x))
	m := 0.0
	for _, v := range x {
		m += v / n
	}
	m2, m3 := 0.0, 0.0
	for _, v := range x {
		d := v - m
		m2 += d * d / n
		m3 += d * d * d / n
	}
	return m3 / math.Pow(m2, 1.5)
}

// Symmetric data and data with a heavy lower tail keep the identity: the
// good end is never compressed.
func TestFitKeepsGoodEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	y := make([]float64, 500)
	for i := range y {
		y[i] = -math.Exp(rng.NormFloat64()) // a deep lower tail, like a narrow optimum
	}
	tr, err := Fit(y)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Lambda != 1 {
		t.Errorf("lower-tailed data: λ = %v, want 1", tr.Lambda)
	}
	w := tr.Apply(y)
	for i := range y {
		if z := (y[i] - tr.Mean) / tr.SD; math.Abs(w[i]-z) > 1e-12 {
			t.Fatalf("λ=1 should standardize only: %v → %v, want %v", y[i], w[i], z)
		}
	}
}

func TestFitEdgeCases(t *testing.T) {
	if _, err := Fit(nil); err == nil {
		t.Error("no values: want an error")
	}
	if _, err := Fit([]float64{1, math.NaN(), 2}); err == nil {
		t.Error("NaN: want an error")
	}
	tr, err := Fit([]float64{5, 5, 5})
	if err != nil || tr.Lambda != 1 || tr.SD != 1 {
		t.Errorf("constant values: %+v, %v; want identity with SD 1", tr, err)
	}
	tr, err = Fit([]float64{1e300, -1e300, 3e299, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range tr.Apply([]float64{1e300, -1e300, 3e299, 2}) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("huge values warped to %v (%+v)", v, tr)
		}
	}
	// Monotone: order is kept.
	rng := rand.New(rand.NewPCG(7, 8))
	y := make([]float64, 200)
	for i := range y {
		y[i] = math.Exp(3 * rng.NormFloat64())
	}
	tr, _ = Fit(y)
	w := tr.Apply(y)
	for i := range y {
		for j := range y {
			if y[i] < y[j] && !(w[i] < w[j]) {
				t.Fatalf("order broken: %v<%v but %v≥%v", y[i], y[j], w[i], w[j])
			}
		}
	}
}
