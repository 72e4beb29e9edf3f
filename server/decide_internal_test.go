package server

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
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
			reloaded := func(number int64) float64 { return reloadedChance(t, st, "d", number) }
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

// reloadedChance is the chance that an optimizer rebuilt from the whole
// stored history of study gives trial number.
func reloadedChance(t *testing.T, st store.Store, study string, number int64) float64 {
	t.Helper()
	h, err := store.LoadHistory(context.Background(), st, study)
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

// Decisions on trials that did not change since the previous decision's
// optimizer was built reuse it (the reports that queued behind one
// decision); a trial that reported since gets an optimizer built afresh.
// Every answer is the chance of an optimizer rebuilt from the store at the
// moment the one used was built.
func TestDecisionCacheReusesTheOptimizerForUnchangedTrials(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st, _ := storetest.Open(t, backend)
			ctx := context.Background()
			if _, err := st.CreateStudy(ctx, store.NewStudy{Name: "r", Direction: "minimize",
				Space:     json.RawMessage(`{"params":[{"name":"x","type":"float","low":0,"high":1},{"name":"y","type":"float","low":0,"high":1}]}`),
				Optimizer: json.RawMessage(`{"seed":1,"resource":{"name":"epochs","min":1,"max":9}}`),
				Pruner:    json.RawMessage(`{"type":"model"}`), Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 7))
			f := func(p map[string]any, step int64) float64 {
				x, y := p["x"].(float64), p["y"].(float64)
				return math.Pow(x-0.3, 2) + math.Pow(y-0.6, 2) + 0.5/float64(step) + 0.05*rng.NormFloat64()
			}
			ask := func() *store.Trial {
				tr, err := st.Ask(ctx, "r", store.AskRequest{Worker: "w", Now: time.Now()}, func(context.Context, store.AskView) (store.Proposal, error) {
					return store.Proposal{Params: map[string]any{"x": rng.Float64(), "y": rng.Float64()}, Acquisition: "random"}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return tr
			}
			report := func(tr *store.Trial, step int64) {
				if _, err := st.ReportIntermediate(ctx, "r", tr.Number, store.Report{Step: step, Value: f(tr.Params, step), Now: time.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			for range 12 {
				tr := ask()
				for _, step := range []int64{1, 3, 9} {
					report(tr, step)
				}
				if _, _, err := st.Tell(ctx, "r", tr.Number, store.Result{State: store.Complete, Value: f(tr.Params, 9), Now: time.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			running := []*store.Trial{ask(), ask(), ask()}
			for _, tr := range running {
				report(tr, 1)
			}
			d := &decisionCache{}
			decide := func(tr *store.Trial) float64 {
				t.Helper()
				p, err := d.continueChance(ctx, st, "r", tr.Number, 0.5, 1)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			var chances []float64
			first := decide(running[0])
			built := d.built
			for _, tr := range running {
				chances = append(chances, reloadedChance(t, st, "r", tr.Number))
			}
			for i, tr := range running {
				if got := decide(tr); got != chances[i] || d.built != built {
					t.Errorf("running trial %d, unchanged: chance %v (optimizer reused: %v), reloaded %v", i, got, d.built == built, chances[i])
				}
			}
			if first != chances[0] {
				t.Errorf("first decision %v, reloaded %v", first, chances[0])
			}
			if len(slices.Compact(slices.Sorted(slices.Values(chances)))) < 2 {
				t.Errorf("chances %v: all alike, the comparison says little", chances)
			}
			// Trial 1 reports step 3 and trial 2 step 3: trial 1's decision
			// builds afresh and sees both; trial 0's then reuses that one.
			report(running[1], 3)
			report(running[2], 3)
			if got, want := decide(running[1]), reloadedChance(t, st, "r", running[1].Number); got != want || d.built == built {
				t.Errorf("trial 1 after its report: chance %v (optimizer rebuilt: %v), reloaded %v", got, d.built != built, want)
			}
			rebuilt := d.built
			if got, want := decide(running[0]), reloadedChance(t, st, "r", running[0].Number); got != want || d.built != rebuilt {
				t.Errorf("trial 0, unchanged since the rebuild: chance %v (reused: %v), reloaded %v", got, d.built == rebuilt, want)
			}
		})
	}
}
