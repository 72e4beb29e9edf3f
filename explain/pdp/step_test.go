package pdp_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"xbo/explain/pdp"
	"xbo/space"
)

// TestSteppedGridHoldsOnlyGridValues: the PDP of a stepped parameter is
// drawn at its grid values only, every one when there are at most
// GridSize, and so are its ICE curves' points (they are encoded grid
// values, Repair leaves them where they are).
func TestSteppedGridHoldsOnlyGridValues(t *testing.T) {
	sp, err := space.New(space.Minimize, []space.Param{
		{Name: "x", Type: space.Float, Low: -10, High: 10, Step: 0.5},
		{Name: "k", Type: space.Int, Low: 3, High: 9, Step: 2},
		{Name: "z", Type: space.Float, Low: 0, High: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 5))
	x, y := uniformData(rng, 40, 3, 0.1, quadratic)
	model, err := fitBLR(x, y, 0.1, 3)
	if err != nil {
		t.Fatal(err)
	}
	opts := pdp.Options{GridSize: 20, Samples: 50, Seed: 1}
	res, err := pdp.Compute(context.Background(), model, sp, []string{"x"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Grid) != 20 || res.Grid[0] != -10 || res.Grid[19] != 10 {
		t.Fatalf("x's grid %v: want 20 values from -10 to 10", res.Grid)
	}
	for _, v := range res.Grid {
		if v*2 != math.Trunc(v*2) {
			t.Fatalf("x's grid holds %v, off the step-0.5 grid", v)
		}
	}
	res, err = pdp.Compute(context.Background(), model, sp, []string{"k"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Grid, []float64{3, 5, 7, 9}) {
		t.Fatalf("k's grid %v, want 3 5 7 9", res.Grid)
	}
	ice, err := pdp.NewICE(context.Background(), model, sp, []int{1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for g := range ice.GridLen() {
		for _, u := range ice.PointsAt(g, nil) {
			v := sp.Decode(u)
			if err := sp.Validate(v); err != nil {
				t.Fatalf("ICE point %v: %v", v, err)
			}
			if enc, _ := sp.Encode(v); !slices.Equal(enc, u) {
				t.Fatalf("ICE point %v is not a repaired grid point (%v)", u, enc)
			}
		}
	}
}
