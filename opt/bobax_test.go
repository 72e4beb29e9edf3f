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

// TestBOBAXByStrategyName: Config.Strategy alone selects a BOBAX strategy,
// with the settings of Config.BOBAX.
func TestBOBAXByStrategyName(t *testing.T) {
	s, err := space.New(space.Minimize, []space.Param{
		{Name: "a", Type: space.Float, Low: -2, High: 2},
		{Name: "b", Type: space.Float, Low: 0, High: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	o, err := New(Config{Space: s, Strategy: "bobax", Seed: 3, InitialSize: 5,
		BOBAX: BOBAXConfig{K: 3, GridSize: 8, Samples: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for n := 0; n < 11; n++ {
		tr, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tr.Acquisition)
		if err := o.Tell(tr.ID, math.Cos(3*tr.Params[0])+tr.Params[1]); err != nil {
			t.Fatal(err)
		}
	}
	eig := 0
	for _, a := range got[5:] {
		if a == "eig-pdp" {
			eig++
		}
	}
	if eig != 2 { // T = 5..10: every third proposal (T = 6, 9) maximizes EIG_PDP
		t.Fatalf("k = 3 over 6 proposals should give 2 EIG_PDP proposals, got %v", got)
	}
	if _, err := New(Config{Space: s, Strategy: "a-bobax"}); err == nil {
		t.Fatal("a-bobax without a tolerance accepted")
	}
	if _, err := New(Config{Space: s, Strategy: "bobax", Acquire: PolicyAcquire(nil)}); err == nil {
		t.Fatal("a BOBAX strategy together with a custom Acquire accepted")
	}
}
