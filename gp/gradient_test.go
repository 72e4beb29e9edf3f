package gp

import (
	"errors"
	"math"
	"testing"

	"xbo/surrogate"
)

// TestPredictGradientFiniteDifferences checks PredictGradient's value
// against Predict and its gradient against central differences of Predict,
// for every kernel, on a model with a categorical dimension (whose
// derivative must be 0) and after conditioning (the constant-liar model).
func TestPredictGradientFiniteDifferences(t *testing.T) {
	for _, k := range []Kernel{SquaredExponential, Matern32, Matern52} {
		g, _, _ := fittedModel(t, 11, 30, 3, k, []int{0, 0, 3})
		c, err := g.Condition([]float64{0.3, 0.6, 0.5}, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		rng := newRNG(12)
		for _, model := range []*GP{g, c} {
			for range 20 {
				x := []float64{rng.Float64(), rng.Float64(), rng.Float64()}
				dm, dv := make([]float64, 3), make([]float64, 3)
				m, v, err := model.PredictGradient(x, dm, dv)
				if err != nil {
					t.Fatal(err)
				}
				pm, pv := make([]float64, 1), make([]float64, 1)
				if err := model.Predict([][]float64{x}, pm, pv); err != nil {
					t.Fatal(err)
				}
				if !relClose(m, pm[0], 1e-10) || math.Abs(v-pv[0]) > 1e-12*(1+pv[0]) {
					t.Fatalf("%v: value (%v, %v), Predict (%v, %v)", k, m, v, pm[0], pv[0])
				}
				if dm[2] != 0 || dv[2] != 0 {
					t.Fatalf("%v: categorical derivative (%v, %v), want 0", k, dm[2], dv[2])
				}
				const h = 1e-6
				for j := range 2 {
					lo, hi := append([]float64(nil), x...), append([]float64(nil), x...)
					lo[j] -= h
					hi[j] += h
					ms, vs := make([]float64, 2), make([]float64, 2)
					if err := model.Predict([][]float64{lo, hi}, ms, vs); err != nil {
						t.Fatal(err)
					}
					fdm, fdv := (ms[1]-ms[0])/(2*h), (vs[1]-vs[0])/(2*h)
					if math.Abs(dm[j]-fdm) > 1e-5*(1+math.Abs(fdm)) {
						t.Errorf("%v: ∂m/∂x%d = %v, finite difference %v", k, j, dm[j], fdm)
					}
					if math.Abs(dv[j]-fdv) > 1e-5*(1+math.Abs(fdv)) {
						t.Errorf("%v: ∂v/∂x%d = %v, finite difference %v", k, j, dv[j], fdv)
					}
				}
			}
		}
	}
}

// TestPredictGradientEdges: an inactive coordinate gets derivative 0 and
// bad input is refused.
func TestPredictGradientEdges(t *testing.T) {
	g, _, _ := fittedModel(t, 13, 25, 2, Matern52, nil)
	dm, dv := make([]float64, 2), make([]float64, 2)
	if _, _, err := g.PredictGradient([]float64{-1, 0.5}, dm, dv); err != nil {
		t.Fatal(err)
	}
	if dm[0] != 0 || dv[0] != 0 {
		t.Errorf("inactive coordinate: derivative (%v, %v), want 0", dm[0], dv[0])
	}
	if _, _, err := g.PredictGradient([]float64{0.5}, dm, dv); !errors.Is(err, surrogate.ErrDim) {
		t.Errorf("short point: %v, want ErrDim", err)
	}
	if _, _, err := g.PredictGradient([]float64{0.5, 0.5}, dm[:1], dv); err == nil {
		t.Error("short gradient slice accepted")
	}
	if _, _, err := g.PredictGradient([]float64{math.NaN(), 0.5}, dm, dv); err == nil {
		t.Error("NaN coordinate accepted")
	}
}

// TestPredictBound: the mean equals Predict's to the last bit and the bound
// is never below the exact variance, for every kernel, with a categorical
// dimension, after conditioning on a duplicate (refactored with a larger
// jitter) and at the observations themselves, where the bound is tightest.
func TestPredictBound(t *testing.T) {
	for _, k := range []Kernel{SquaredExponential, Matern32, Matern52} {
		g, x, _ := fittedModel(t, 21, 40, 3, k, []int{0, 0, 3})
		c, err := g.Condition(x[3], 0.5)
		if err != nil {
			t.Fatal(err)
		}
		rng := newRNG(22)
		pts := append(uniformPoints(rng, 500, 3), x...)
		for _, model := range []*GP{g, c} {
			mean, vr := make([]float64, len(pts)), make([]float64, len(pts))
			bm, bound := make([]float64, len(pts)), make([]float64, len(pts))
			if err := model.Predict(pts, mean, vr); err != nil {
				t.Fatal(err)
			}
			if err := model.PredictBound(pts, bm, bound); err != nil {
				t.Fatal(err)
			}
			tight := 0
			for i := range pts {
				if bm[i] != mean[i] {
					t.Fatalf("%v: bound's mean %v, Predict's %v", k, bm[i], mean[i])
				}
				if bound[i] < vr[i] {
					t.Fatalf("%v: point %d: bound %v below the variance %v", k, i, bound[i], vr[i])
				}
				if bound[i] < 0.5*model.out.Std*model.out.Std*model.hyper.SignalVariance {
					tight++
				}
			}
			// Not the vacuous prior bound: at least at the observations it is
			// below half the prior variance (it is about σ_n² there).
			if tight < len(x) {
				t.Errorf("%v: only %d of %d bounds below half the prior variance", k, tight, len(pts))
			}
		}
	}
	g, _, _ := fittedModel(t, 23, 10, 2, Matern52, nil)
	if err := g.PredictBound([][]float64{{0.1}}, make([]float64, 1), make([]float64, 1)); err == nil {
		t.Error("short point accepted")
	}
	if err := g.PredictBound([][]float64{{0.1, 0.2}}, make([]float64, 1), nil); err == nil {
		t.Error("missing output accepted")
	}
}
