package opt

import (
	"math"
	"testing"

	"xbo/space"
)

// TestBOBAXThroughAcquire runs BOBAX (k = 2) through Config.Acquire: after
// the initial design, proposals alternate between EIG_PDP (T even) and EI.
func TestBOBAXThroughAcquire(t *testing.T) {
	s, err := space.New(space.Minimize, []space.Param{
		{Name: "a", Type: space.Float, Low: -2, High: 2},
		{Name: "b", Type: space.Float, Low: 0, High: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := NewBOBAXPolicy(s, BOBAXConfig{Strategy: "bobax", Params: []string{"a"}, GridSize: 8, Samples: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	o, err := New(Config{Space: s, Kernel: "se", Seed: 2, InitialSize: 5, Acquire: PolicyAcquire(policy)})
	if err != nil {
		t.Fatal(err)
	}
	f := func(p []float64) float64 { return math.Sin(2*p[0]) + (p[1]-0.3)*(p[1]-0.3) }
	for n := 0; n < 12; n++ {
		tr, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		want := AcqInitialDesign
		if n >= 5 {
			want = "ei"
			if n%2 == 0 {
				want = "eig-pdp"
			}
		}
		if tr.Acquisition != want {
			t.Errorf("trial %d chosen by %q, want %q", n, tr.Acquisition, want)
		}
		if err := o.Tell(tr.ID, f(tr.Params)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewBOBAXPolicy(s, BOBAXConfig{Strategy: "bobax", Params: []string{"zz"}}); err == nil {
		t.Error("unknown hyperparameter accepted")
	}
	if _, err := NewBOBAXPolicy(s, BOBAXConfig{Strategy: "nope"}); err == nil {
		t.Error("unknown strategy accepted")
	}
	// A pending trial: the model is conditioned on a point Iteration.X does
	// not list; EIG_PDP must still work (BAX estimator fallback).
	if _, err := o.Ask(); err != nil {
		t.Fatal(err)
	}
	tr, err := o.Ask()
	if err != nil {
		t.Fatalf("ask with a pending trial: %v", err)
	}
	if tr.Acquisition != "eig-pdp" {
		t.Errorf("with a pending trial at T = 12 the proposal came from %q, want eig-pdp", tr.Acquisition)
	}
}
