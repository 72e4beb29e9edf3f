package opt

import (
	"math"
	"math/rand/v2"
	"testing"

	"xbo/acq"
	"xbo/surrogate"
)

func TestSEConfig(t *testing.T) {
	s := mustSpace(t, square2)
	o, err := New(Config{Space: s, Strategy: "lcb"})
	if err != nil || o.Config().SE != SELatent {
		t.Fatalf("default se: %v, %v", o.Config().SE, err)
	}
	for _, bad := range []Config{
		{Space: s, Strategy: "ei", SE: SEPredictive},
		{Space: s, Strategy: "lcb", Surrogate: "forest", SE: SEPredictive},
		{Space: s, Strategy: "lcb", SE: "observed"},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("strategy %q surrogate %q se %q was accepted", bad.Strategy, bad.Surrogate, bad.SE)
		}
	}
	set, err := ParseSettings([]byte(`{"strategy": "lcb", "se": "predictive", "tau": 10}`))
	if err != nil {
		t.Fatal(err)
	}
	if o, err := set.New(s, nil, 1); err != nil || o.Config().SE != SEPredictive {
		t.Fatalf("settings se predictive: %v", err)
	}
}

// Under se predictive the LCB an ask maximizes carries the fitted noise
// variance of the model it scores (0 under latent).
func TestSEPredictiveAcquisition(t *testing.T) {
	s := mustSpace(t, square2)
	rng := rand.New(rand.NewPCG(5, 5))
	noisy := func(p []float64) float64 { return bowl2(p) + 0.05*rng.NormFloat64() }
	for _, se := range []string{SELatent, SEPredictive} {
		o, err := New(Config{Space: s, Strategy: "lcb", Tau: 10, SE: se, OutputWarp: "none", Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		run(t, o, 15, noisy)
		model, err := o.SurrogateAt(15)
		if err != nil {
			t.Fatal(err)
		}
		a, err := o.acquisition(model, nil, nil, 0, 15, nil)
		if err != nil {
			t.Fatal(err)
		}
		lcb, ok := a.(acq.LCB)
		if !ok {
			t.Fatalf("acquisition %T, want acq.LCB", a)
		}
		nv := model.(surrogate.NoiseVariancer).NoiseVariance()
		want := 0.0
		if se == SEPredictive {
			want = nv
		}
		if !(nv > 0) || math.Abs(lcb.NoiseVariance-want) > 1e-15 || lcb.Tau != 10 {
			t.Errorf("se %s: LCB noise variance %v, τ %v; want %v (the model's is %v)", se, lcb.NoiseVariance, lcb.Tau, want, nv)
		}
	}
}
