package bench

import "testing"

// TestCornerOptimum: the minimum is the corner 0, and every step into the
// box from it raises the value, so it is the boundary minimizer the
// optimizer must reach.
func TestCornerOptimum(t *testing.T) {
	f, err := Lookup(NameCorner, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v := f.Eval(f.Argmin[0]); v != f.Optimum {
		t.Fatalf("f(corner) = %v, want %v", v, f.Optimum)
	}
	for j := range f.Dim {
		x := make([]float64, f.Dim)
		x[j] = 1e-3
		if v := f.Eval(x); !(v > f.Optimum) {
			t.Errorf("a step 1e-3 along x%d gives %v, not above the optimum %v", j+1, v, f.Optimum)
		}
	}
}
