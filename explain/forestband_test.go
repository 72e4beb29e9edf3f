package explain

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"xbo/explain/pdp"
	"xbo/space"
)

// The band is the union of the two bands around the GP's curve (checked by
// hand), and its sd half the width over the quantile.
func TestHullResultArithmetic(t *testing.T) {
	q := pdp.Quantile(0.05)
	gr := &pdp.Result{Mean: []float64{1, 2}, SD: []float64{0.1, 0.2}, Lower: []float64{0.8, 1.6}, Upper: []float64{1.2, 2.4}, Level: 0.95}
	fr := &pdp.Result{Mean: []float64{3, 2}, SD: []float64{0.3, 0.1}, Lower: []float64{2.4, 1.8}, Upper: []float64{3.6, 2.2}, Level: 0.95}
	out, curve, err := hullResult(gr, fr, &fitted{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Mean[0] != 1 || out.Lower[0] != 0.8 || out.Upper[0] != 3.6 || math.Abs(out.SD[0]-2.8/(2*q)) > 1e-12 {
		t.Errorf("grid point 0: %v [%v, %v] sd %v", out.Mean[0], out.Lower[0], out.Upper[0], out.SD[0])
	}
	if out.Lower[1] != 1.6 || out.Upper[1] != 2.4 {
		t.Errorf("grid point 1, the forest's band inside the GP's: [%v, %v]", out.Lower[1], out.Upper[1])
	}
	if curve.Mean[0] != 3 || gr.Upper[0] != 1.2 {
		t.Errorf("forest curve %+v, or the GP's result was changed (%v)", curve, gr.Upper)
	}
	if _, _, err := hullResult(gr, &pdp.Result{Mean: []float64{1}}, &fitted{}); err == nil {
		t.Error("curves of different grids combined")
	}
}

// On a staircase of wide plateaus, which trees represent exactly and a GP
// only smoothly, the calibrated band holds the forest's band and covers the
// true PD where the GP's band does not. The paper's exact band stays the
// GP's own.
func TestForestBandCoversWhatTheGPMisses(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	rng := rand.New(rand.NewPCG(42, 43))
	x := make([][]float64, 40)
	for i := range x {
		x[i] = []float64{rng.Float64(), rng.Float64()}
	}
	stairs := pointsStudy(t, x, func(i int) float64 { return math.Floor(3*x[i][0]) + 0.01*x[i][1] })
	truth := func(a float64) float64 { return math.Floor(3*a) + 0.005 }
	cal, err := e.PDP(ctx, stairs, PDPRequest{Params: []string{"a"}, Grid: 30, Samples: 300})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := e.PDP(ctx, stairs, PDPRequest{Params: []string{"a"}, Grid: 30, Samples: 300, Surrogate: Surrogate{Kind: SurrogateGP}, Band: BandExact})
	if err != nil {
		t.Fatal(err)
	}
	if cal.Forest == nil || alone.Forest != nil {
		t.Fatalf("forest curve %v in the calibrated band, %v in the exact one", cal.Forest != nil, alone.Forest != nil)
	}
	covered := func(r *PDPResult) int {
		c := 0
		for g, a := range r.Grid {
			if v := truth(a); r.Lower[g] <= v && v <= r.Upper[g] {
				c++
			}
		}
		return c
	}
	for g := range cal.Grid {
		if cal.Lower[g] > cal.Forest.Lower[g] || cal.Upper[g] < cal.Forest.Upper[g] {
			t.Fatalf("grid point %d: band [%v, %v] does not hold the forest's [%v, %v]", g, cal.Lower[g], cal.Upper[g], cal.Forest.Lower[g], cal.Forest.Upper[g])
		}
	}
	t.Logf("staircase: the calibrated band covers %d of %d grid points, the GP's exact band %d", covered(cal), len(cal.Grid), covered(alone))
	if covered(cal) < 27 || covered(cal) <= covered(alone) {
		t.Errorf("staircase: calibrated band covers %d of %d, the GP's exact band %d", covered(cal), len(cal.Grid), covered(alone))
	}
}

// One trial in a corner where training really diverges (a ≥ 0.95 scores
// 10 + 2b² everywhere): one trial cannot show a region, so the GP leaves
// it out as a failed run and its curve stays the clean one. Whether they are
// failures or the objective is a judgement the trials cannot settle, so
// the calibrated band, through the forest that keeps every trial, reaches
// the true PD there (10 + 2/3 at a = 1) while the curve stays below 2.
func TestBandReachesTrialsLeftOut(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	corner := map[int]float64{7: 0.97}
	h := waveStudy(t, space.Minimize, 60, 5, func(i int, f float64, rng *rand.Rand) float64 { return f })
	for i := range h.Trials {
		tr := &h.Trials[i]
		if a, ok := corner[i]; ok {
			tr.Params[0] = a
		} else if tr.Params[0] >= 0.95 {
			tr.Params[0] = 0.9 * tr.Params[0]
			tr.Value = math.Sin(3*tr.Params[0]) + tr.Params[1]*tr.Params[1]
		}
		if tr.Params[0] >= 0.95 {
			tr.Value = 10 + 2*tr.Params[1]*tr.Params[1]
		}
	}
	res, err := e.PDP(ctx, h, PDPRequest{Params: []string{"a"}, Grid: 21})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ModelCheck.Outliers) != 1 || res.ModelCheck.Outliers[0].Trial != 7 {
		t.Fatalf("left out %+v, want the corner's trial 7: the test no longer shows a real region left out", res.ModelCheck.Outliers)
	}
	last := len(res.Grid) - 1
	if res.Mean[last] > 2 {
		t.Errorf("curve at a = 1 is %.2f: the left-out trials moved the estimate", res.Mean[last])
	}
	if res.Upper[last] < 10+2.0/3 {
		t.Errorf("band at a = 1 [%.2f, %.2f] does not reach the corner's true PD %.2f", res.Lower[last], res.Upper[last], 10+2.0/3)
	}
}
