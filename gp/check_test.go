package gp

import (
	"context"
	"math"
	"testing"
)

// The closed-form leave-one-out predictions equal a refit on the other
// observations at the same hyperparameters and output scale, predicting
// the left-out point with the noise added.
func TestLeaveOneOutBruteForce(t *testing.T) {
	g, x, y := fittedModel(t, 3, 25, 3, Matern52, []int{0, 0, 3})
	mean, variance, err := g.LeaveOneOut()
	if err != nil {
		t.Fatal(err)
	}
	opts := g.Options()
	for _, i := range []int{0, 7, 24} {
		var rx [][]float64
		var ry []float64
		for k := range x {
			if k != i {
				rx, ry = append(rx, x[k]), append(ry, y[k])
			}
		}
		r, err := Fit(rx, ry, opts)
		if err != nil {
			t.Fatal(err)
		}
		m, v := make([]float64, 1), make([]float64, 1)
		if err := r.Predict([][]float64{x[i]}, m, v); err != nil {
			t.Fatal(err)
		}
		want := v[0] + g.NoiseVariance()
		if !relClose(mean[i], m[0], 1e-6) || !relClose(variance[i], want, 1e-5) {
			t.Errorf("observation %d: closed form %v ± %v, refit %v ± %v", i, mean[i], variance[i], m[0], want)
		}
	}
}

// A subset GP predicts the observations its mean part holds by their
// leave-one-out predictions and the others as new points.
func TestSubsetLeaveOneOut(t *testing.T) {
	rng := newRNG(9)
	x := uniformPoints(rng, 60, 2)
	y := make([]float64, len(x))
	for i, p := range x {
		y[i] = math.Sin(4*p[0]) + p[1]
	}
	s, err := FitSubset(context.Background(), x, y, SubsetOptions{Options: Options{Kernel: Matern52, Seed: 1}, MeanPoints: 30, VariancePoints: 20})
	if err != nil {
		t.Fatal(err)
	}
	mean, variance, err := s.LeaveOneOut(x, y)
	if err != nil {
		t.Fatal(err)
	}
	lm, lv, err := s.mean.LeaveOneOut()
	if err != nil {
		t.Fatal(err)
	}
	in := map[int]int{}
	for k, i := range s.meanIdx {
		in[i] = k
	}
	if len(in) != 30 {
		t.Fatalf("mean part holds %d observations, want 30", len(in))
	}
	checked := 0
	for i := range x {
		if k, ok := in[i]; ok {
			if mean[i] != lm[k] || variance[i] != lv[k] {
				t.Errorf("observation %d in the mean part: %v ± %v, its leave-one-out %v ± %v", i, mean[i], variance[i], lm[k], lv[k])
			}
			continue
		}
		m, v := make([]float64, 1), make([]float64, 1)
		if err := s.Predict([][]float64{x[i]}, m, v); err != nil {
			t.Fatal(err)
		}
		if mean[i] != m[0] || math.Abs(variance[i]-v[0]-s.variance.NoiseVariance()) > 1e-12 {
			t.Errorf("observation %d outside: %v ± %v, prediction %v ± %v", i, mean[i], variance[i], m[0], v[0])
		}
		checked++
	}
	if checked != 30 {
		t.Errorf("%d observations outside the mean part, want 30", checked)
	}
	if _, _, err := s.LeaveOneOut(x[:10], y[:10]); err == nil {
		t.Error("data of the wrong size accepted")
	}
}

// The likelihood at the fitted hyperparameters is the fit's, and the
// lengthscale limit lies where the likelihood has dropped by the given
// amount: just above it the drop is smaller, just below larger.
func TestLengthscaleLimit(t *testing.T) {
	rng := newRNG(4)
	x := uniformPoints(rng, 30, 2)
	y := make([]float64, len(x))
	for i, p := range x {
		y[i] = math.Sin(6*p[0]) + 0.01*rng.NormFloat64() // dimension 1 does nothing
	}
	g, err := Fit(x, y, Options{Kernel: Matern52, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := g.LogLikelihoodAt(g.Hyper()); err != nil || math.Abs(l-g.LogMarginalLikelihood()) > 1e-9 {
		t.Fatalf("likelihood at the fit %v (%v), want %v", l, err, g.LogMarginalLikelihood())
	}
	const drop = 1.92
	for j := range 2 {
		fitted := g.Hyper().Lengthscales[j]
		lim, err := g.LengthscaleLimit(j, drop)
		if err != nil {
			t.Fatal(err)
		}
		if lim > fitted || lim < minLengthscale {
			t.Fatalf("dimension %d: limit %v outside [%v, %v]", j, lim, minLengthscale, fitted)
		}
		at := func(l float64) float64 {
			h := g.Hyper()
			h.Lengthscales[j] = l
			v, err := g.LogLikelihoodAt(h)
			if err != nil {
				return math.Inf(-1)
			}
			return v
		}
		target := g.LogMarginalLikelihood() - drop
		if at(lim) < target || (lim > minLengthscale && at(lim/1.15) >= target) {
			t.Errorf("dimension %d (fitted %v): limit %v, likelihood drop there %v and at limit/1.15 %v, want ≤ and > %v",
				j, fitted, lim, g.LogMarginalLikelihood()-at(lim), g.LogMarginalLikelihood()-at(lim/1.15), drop)
		}
		t.Logf("dimension %d: fitted lengthscale %.3g, 95%% lower limit %.3g", j, fitted, lim)
	}
	if _, err := g.LengthscaleLimit(2, drop); err == nil {
		t.Error("dimension out of range accepted")
	}
	if _, err := g.LengthscaleLimit(0, 0); err == nil {
		t.Error("zero drop accepted")
	}
	// The model at another lengthscale keeps the data and the rest.
	alt, err := g.WithLengthscales([]int{1}, []float64{0.2})
	if err != nil {
		t.Fatal(err)
	}
	if h := alt.Hyper(); h.Lengthscales[1] != 0.2 || h.Lengthscales[0] != g.Hyper().Lengthscales[0] || h.SignalVariance != g.Hyper().SignalVariance {
		t.Errorf("hyperparameters %+v", h)
	}
	if _, err := g.WithLengthscales([]int{0, 0}, []float64{1, 1}); err == nil {
		t.Error("repeated dimension accepted")
	}
	if _, err := g.WithLengthscales([]int{0}, []float64{-1}); err == nil {
		t.Error("negative lengthscale accepted")
	}
}
