package server

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"xbo/opt"
	"xbo/store"
	"xbo/store/storetest"
)

// The decision cache, caught up step by step with a study that changes
// between decisions (trials asked, reported, completed, pruned, enqueued;
// the study deleted and created again under its name), gives exactly the
// chance an optimizer rebuilt from the whole stored history gives.
func TestDecisionCacheMatchesAReload(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st, _ := storetest.Open(t, backend)
			ctx := context.Background()
			d := &decisionCache{}
			reloaded := func(number int64) float64 {
				t.Helper()
				h, err := store.LoadHistory(ctx, st, "d")
				if err != nil {
					t.Fatal(err)
				}
				settings, err := opt.ParseSettings(h.Optimizer)
				if err != nil {
					t.Fatal(err)
				}
				trials, ids, err := opt.FromHistory(h)
				if err != nil {
					t.Fatal(err)
				}
				o, err := settings.New(h.Space, trials, 1)
				if err != nil {
					t.Fatal(err)
				}
				p, err := o.ContinueChance(ids[number], 0.5)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			below := 0
			for round := range 2 {
				if _, err := st.CreateStudy(ctx, store.NewStudy{Name: "d", Direction: "minimize",
					Space:     json.RawMessage(`{"params":[{"name":"x","type":"float","low":0,"high":1},{"name":"y","type":"float","low":0,"high":1}]}`),
					Optimizer: json.RawMessage(`{"seed":1,"resource":{"name":"epochs","min":1,"max":9}}`),
					Pruner:    json.RawMessage(`{"type":"model"}`), Now: time.Now()}); err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(uint64(round), 7))
				f := func(p map[string]any, step int64) float64 {
					x, y := p["x"].(float64), p["y"].(float64)
					return math.Pow(x-0.3, 2) + math.Pow(y-0.6, 2) + 0.5/float64(step) + 0.01*rng.NormFloat64()
				}
				for i := range 30 {
					if i == 10 {
						if _, err := st.AddTrial(ctx, "d", store.NewTrial{Params: map[string]any{"x": 0.5, "y": 0.5}, Now: time.Now()}); err != nil {
							t.Fatal(err)
						}
					}
					tr, err := st.Ask(ctx, "d", store.AskRequest{Worker: "w", Now: time.Now()}, func(context.Context, store.AskView) (store.Proposal, error) {
						return store.Proposal{Params: map[string]any{"x": rng.Float64(), "y": rng.Float64()}, Acquisition: "random"}, nil
					})
					if err != nil {
						t.Fatal(err)
					}
					for _, step := range []int64{1, 3} {
						if _, err := st.ReportIntermediate(ctx, "d", tr.Number, store.Report{Step: step, Value: f(tr.Params, step), Now: time.Now()}); err != nil {
							t.Fatal(err)
						}
						if i >= 8 && i%2 == 0 {
							got, err := d.continueChance(ctx, st, "d", tr.Number, 0.5, 1)
							if err != nil {
								t.Fatal(err)
							}
							if want := reloaded(tr.Number); got != want {
								t.Fatalf("round %d, trial %d at step %d: cached %v, reloaded %v", round, tr.Number, step, got, want)
							}
							if got < 1 {
								below++
							}
						}
					}
					r := store.Result{State: store.Pruned, Value: math.NaN(), Now: time.Now()}
					if i%3 != 2 {
						v := f(tr.Params, 9)
						if _, err := st.ReportIntermediate(ctx, "d", tr.Number, store.Report{Step: 9, Value: v, Now: time.Now()}); err != nil {
							t.Fatal(err)
						}
						r = store.Result{State: store.Complete, Value: v, Now: time.Now()}
					}
					if _, _, err := st.Tell(ctx, "d", tr.Number, r); err != nil {
						t.Fatal(err)
					}
				}
				if err := st.DeleteStudy(ctx, "d"); err != nil {
					t.Fatal(err)
				}
			}
			if below < 10 {
				t.Errorf("%d decisions had a chance below 1: the comparison says little", below)
			}
		})
	}
}
