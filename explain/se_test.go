package explain

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"xbo/space"
)

// se=predictive explains the sd of an observation: at any point its square
// is the latent variance plus the surrogate's one fitted noise variance, so
// predictive² − latent² is the same positive number at every point, and
// the mean is explained exactly as before.
func TestShapleyPredictiveSE(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	h := linearStudy(t, space.Minimize, 40)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range h.Trials {
		h.Trials[i].Value += 0.3 * rng.NormFloat64()
	}
	var gaps []float64
	for _, point := range []string{PointBest, PointLast, `{"a": 0.5, "b": 0.1, "c": "y"}`} {
		var pred, lat [2]float64 // prediction, average
		var meanPhi [2][]float64
		for k, se := range []string{"latent", "predictive"} {
			res, err := e.Shapley(ctx, h, ShapleyRequest{Point: point, SE: se, Background: 100})
			if err != nil {
				t.Fatalf("%s, se %s: %v", point, se, err)
			}
			s, _ := res.Explanation.Output("se")
			m, _ := res.Explanation.Output("mean")
			meanPhi[k] = m.Phi
			if k == 0 {
				lat = [2]float64{s.Prediction, s.Average}
			} else {
				pred = [2]float64{s.Prediction, s.Average}
			}
		}
		for j := range meanPhi[0] {
			if math.Abs(meanPhi[0][j]-meanPhi[1][j]) > 1e-9 {
				t.Errorf("%s: φ_%d(m) %v under latent, %v under predictive", point, j, meanPhi[0][j], meanPhi[1][j])
			}
		}
		if !(pred[1] > lat[1]) {
			t.Errorf("%s: average se %v under predictive, not above latent's %v", point, pred[1], lat[1])
		}
		gaps = append(gaps, pred[0]*pred[0]-lat[0]*lat[0])
	}
	for i, g := range gaps {
		if !(g > 1e-4) || math.Abs(g-gaps[0]) > 1e-9*gaps[0] {
			t.Fatalf("predictive² − latent² at the points: %v; want one positive noise variance (point %d)", gaps, i)
		}
	}
	if _, err := e.Shapley(ctx, h, ShapleyRequest{SE: "observed", Background: 100}); err == nil {
		t.Error("se observed was accepted")
	}
	if _, err := e.Shapley(ctx, h, ShapleyRequest{SE: "predictive", Target: TargetEI, Background: 100}); err == nil {
		t.Error("se predictive was accepted for an acquisition target")
	}
}
