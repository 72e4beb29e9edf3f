package server_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"xbo/client"
	"xbo/store/storetest"
)

// explain/paths explains an LCB study's proposals with the bound that chose
// them: the study's τ and se unless the query names others. Under se
// predictive each step's se is an observation's sd, so its square exceeds
// the latent one's by the proposing GP's fitted noise variance, while the
// mean is the same.
func TestExplainPathsFollowStudyBound(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "lcb", `{"strategy":"lcb","tau":3,"se":"predictive","output_warp":"none","seed":4,"initial_size":8}`)
	rng := rand.New(rand.NewPCG(1, 2))
	if err := e.c.Optimize(ctx, "lcb", 14, func(_ context.Context, t *client.Trial) (float64, error) {
		v, err := evalBranin(t)
		return v + 20*rng.NormFloat64(), err
	}); err != nil {
		t.Fatal(err)
	}
	type step struct {
		Trial       int64 `json:"trial"`
		Explanation struct {
			Outputs []struct {
				Output     string  `json:"output"`
				Prediction float64 `json:"prediction"`
			} `json:"outputs"`
		} `json:"explanation"`
	}
	get := func(q string) (tau float64, se string, steps []step) {
		t.Helper()
		code, body := raw(t, e, "GET", "/api/studies/lcb/explain/paths?proposals=2&samples=50"+q, "", false)
		if code != 200 {
			t.Fatalf("paths%s: %d %.300s", q, code, body)
		}
		var res struct {
			Tau   float64 `json:"tau"`
			SE    string  `json:"se"`
			Steps []step  `json:"steps"`
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil {
			t.Fatal(err)
		}
		return res.Tau, res.SE, res.Steps
	}
	tau, se, own := get("")
	if tau != 3 || se != "predictive" || len(own) != 2 {
		t.Fatalf("default paths: τ %v, se %q, %d steps; want the study's τ 3, se predictive, 2 steps", tau, se, len(own))
	}
	tau, se, latent := get("&tau=3&se=latent")
	if tau != 3 || se != "latent" || len(latent) != 2 {
		t.Fatalf("paths with se=latent: τ %v, se %q, %d steps", tau, se, len(latent))
	}
	pred := func(s step, name string) float64 {
		for _, o := range s.Explanation.Outputs {
			if o.Output == name {
				return o.Prediction
			}
		}
		t.Fatalf("trial %d: no output %q", s.Trial, name)
		return 0
	}
	for i := range own {
		if own[i].Trial != latent[i].Trial {
			t.Fatalf("steps explain trials %d and %d", own[i].Trial, latent[i].Trial)
		}
		if d := math.Abs(pred(own[i], "mean") - pred(latent[i], "mean")); d > 1e-9 {
			t.Errorf("trial %d: mean differs by %v between se kinds", own[i].Trial, d)
		}
		p, l := pred(own[i], "se"), pred(latent[i], "se")
		if !(p*p-l*l > 0) {
			t.Errorf("trial %d: predictive se %v, latent %v: want their squares apart by the fitted noise variance", own[i].Trial, p, l)
		}
		t.Logf("trial %d: se %.4g latent, %.4g predictive", own[i].Trial, l, p)
	}
}
