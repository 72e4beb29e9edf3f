package explain

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"xbo/space"
)

// The extrapolation flag is a rank test against uniform designs: on
// uniformly random trials it flags about 1 grid point in 20, on a full
// factorial grid (more even than random) almost none, and on trials crowded
// into one corner the grid points far from them, where the curve's error
// is larger than where it is not flagged.
func TestExtrapolationFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("replicates")
	}
	ctx := context.Background()
	e := newEngine(t, Config{})
	flagged, total := 0, 0
	const reps = 20
	for s := range uint64(reps) {
		h := waveStudy(t, space.Minimize, 30, 500+s, nil)
		r, err := e.PDP(ctx, h, PDPRequest{Params: []string{"a"}, Band: BandApprox})
		if err != nil {
			t.Fatal(err)
		}
		if r.Extrapolation == nil || len(r.Extrapolation.Ratio) != len(r.Grid) {
			t.Fatalf("extrapolation %+v", r.Extrapolation)
		}
		flagged += len(r.Extrapolation.Beyond)
		total += len(r.Grid)
	}
	rate := float64(flagged) / float64(total)
	t.Logf("uniform trials: %d of %d grid points flagged (%.3f)", flagged, total, rate)
	// Nominal 0.05; grid points of a curve are correlated, so allow the
	// spread of a few curves' worth.
	if rate > 0.10 {
		t.Errorf("uniform trials: %.3f of grid points flagged, nominal 0.05", rate)
	}

	// A 6×6 factorial grid.
	var grid [][]float64
	for i := range 6 {
		for j := range 6 {
			grid = append(grid, []float64{(float64(i) + 0.5) / 6, (float64(j) + 0.5) / 6})
		}
	}
	rg, err := e.PDP(ctx, pointsStudy(t, grid, func(i int) float64 { return math.Sin(3*grid[i][0]) + grid[i][1]*grid[i][1] }),
		PDPRequest{Params: []string{"a"}, Band: BandApprox})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rg.Extrapolation.Beyond); n > 1 {
		t.Errorf("a full grid flagged at %d grid points: %v", n, rg.Extrapolation.Beyond)
	}

	// Thirty trials in the corner [0, 0.3]².
	rng := rand.New(rand.NewPCG(8, 9))
	corner := make([][]float64, 30)
	for i := range corner {
		corner[i] = []float64{0.3 * rng.Float64(), 0.3 * rng.Float64()}
	}
	rc, err := e.PDP(ctx, pointsStudy(t, corner, func(i int) float64 { return math.Sin(3*corner[i][0]) + corner[i][1]*corner[i][1] }),
		PDPRequest{Params: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	beyond := map[int]bool{}
	for _, g := range rc.Extrapolation.Beyond {
		beyond[g] = true
	}
	var errIn, errOut float64
	var nIn, nOut int
	for g, a := range rc.Grid {
		err := math.Abs(rc.Mean[g] - (math.Sin(3*a) + 1.0/3))
		if beyond[g] {
			errIn, nIn = errIn+err, nIn+1
		} else {
			errOut, nOut = errOut+err, nOut+1
		}
	}
	t.Logf("corner trials: %d of %d grid points flagged; mean error %.3f there, %.3f elsewhere", nIn, len(rc.Grid), errIn/float64(max(nIn, 1)), errOut/float64(max(nOut, 1)))
	if nIn < len(rc.Grid)/2 || beyond[0] || !(errIn/float64(nIn) > errOut/float64(max(nOut, 1))) {
		t.Errorf("corner trials: flagged %v", rc.Extrapolation.Beyond)
	}
}

// An importance index is flagged when its parameter's curve, averaged over
// a coarse grid, rests on extrapolation more than with any of the uniform
// designs: on uniformly random trials that is the same rank test, flagging
// about 1 index in 25 (at most 4 of 40 here, where 1.6 are expected), and
// trials crowded into one corner leave every average over the space to the
// prior, so both indices are flagged.
func TestImportanceExtrapolationFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("replicates")
	}
	ctx := context.Background()
	e := newEngine(t, Config{})
	flagged := 0
	const reps = 20
	for s := range uint64(reps) {
		h := waveStudy(t, space.Minimize, 30, 700+s, nil)
		r, err := e.Importance(ctx, h, ImportanceRequest{Posterior: 20, Refits: -1, Samples: 256})
		if err != nil {
			t.Fatal(err)
		}
		flagged += len(r.Extrapolated)
	}
	t.Logf("uniform trials: %d of %d indices flagged", flagged, 2*reps)
	if flagged > 4 {
		t.Errorf("uniform trials: %d of %d indices flagged, nominal 1 in 25", flagged, 2*reps)
	}
	rng := rand.New(rand.NewPCG(10, 11))
	corner := make([][]float64, 30)
	for i := range corner {
		corner[i] = []float64{0.25 * rng.Float64(), 0.25 * rng.Float64()}
	}
	rc, err := e.Importance(ctx, pointsStudy(t, corner, func(i int) float64 { return math.Sin(3*corner[i][0]) + corner[i][1]*corner[i][1] }),
		ImportanceRequest{Posterior: 20, Refits: -1, Samples: 256})
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.Extrapolated) != 2 {
		t.Errorf("corner trials: flagged %v, want both parameters", rc.Extrapolated)
	}
}
