package explain

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"xbo/explain/pdp"
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
