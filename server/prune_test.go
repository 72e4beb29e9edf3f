package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"xbo/client"
	"xbo/prune"
	"xbo/server"
	"xbo/store"
	"xbo/store/storetest"
)

// A study's pruner is kept with every setting; a report answers with the
// trial and the pruner's decision; a tell {"state":"pruned"} ends the trial
// as pruned with its last intermediate value; pruned trials are counted as
// pruned (never failed), are never the best, and the optimizer carries on.
func TestReportPruneAndTellPruned(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, time.Minute)
		ctx := context.Background()
		study, err := e.c.CreateStudy(ctx, client.StudySpec{Name: "p", Space: json.RawMessage(space2D),
			Optimizer: map[string]any{"strategy": "random", "seed": 5}, Pruner: map[string]any{"type": "median", "n_startup_trials": 2}})
		if err != nil {
			t.Fatal(err)
		}
		if string(study.Pruner) != `{"type":"median","n_startup_trials":2,"n_warmup_steps":0,"interval_steps":1,"n_min_trials":1}` {
			t.Fatalf("stored pruner %s", study.Pruner)
		}
		// Two complete trials with values 1.0 and 0.9 at step 1: median 0.95.
		for _, v := range []float64{1.0, 0.9} {
			tr, err := e.c.Ask(ctx, "p")
			if err != nil {
				t.Fatal(err)
			}
			if prune, err := e.c.Report(ctx, "p", tr.Number, 1, v); err != nil || prune {
				t.Fatalf("report before any trial is complete: prune %v, %v", prune, err)
			}
			if err := e.c.Tell(ctx, "p", tr.Number, v-0.5); err != nil {
				t.Fatal(err)
			}
		}
		bad, _ := e.c.Ask(ctx, "p")
		good, _ := e.c.Ask(ctx, "p")
		// The raw answer keeps the trial's fields and adds the decision.
		code, body := raw(t, e, "POST", fmt.Sprintf("/api/studies/p/trials/%d/report", bad.Number), `{"step": 1, "value": 2.0}`, true)
		var ans map[string]any
		if err := json.Unmarshal([]byte(body), &ans); code != 200 || err != nil {
			t.Fatalf("report: %d %s", code, body)
		}
		if ans["prune"] != true || ans["number"] != float64(bad.Number) || ans["state"] != "running" || ans["intermediate"] == nil ||
			!strings.Contains(ans["prune_reason"].(string), "worse than the 50th percentile 0.95 of the 2 complete trials at step 1") {
			t.Fatalf("report answer: %s", body)
		}
		if prune, err := e.c.Report(ctx, "p", good.Number, 1, 0.5); err != nil || prune {
			t.Fatalf("a good trial: prune %v, %v", prune, err)
		}
		if err := e.c.Prune(ctx, "p", bad.Number); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Prune(ctx, "p", bad.Number); err != nil { // idempotent
			t.Fatalf("repeated prune: %v", err)
		}
		if err := e.c.PruneWithValue(ctx, "p", good.Number, 0.01); err != nil {
			t.Fatal(err)
		}
		got, err := e.c.Trial(ctx, "p", bad.Number)
		if err != nil || got.State != "pruned" || got.Value == nil || *got.Value != 2.0 || len(got.Intermediate) != 1 {
			t.Fatalf("pruned trial: %+v %v", got, err)
		}
		if err := e.c.Tell(ctx, "p", bad.Number, 2.0); !client.IsStatus(err, 409) {
			t.Fatalf("complete after pruned: %v", err)
		}
		sum, err := e.c.Study(ctx, "p")
		if err != nil || sum.Counts["pruned"] != 2 || sum.Counts["failed"] != 0 || sum.Counts["complete"] != 2 || *sum.Best != 0.4 {
			t.Fatalf("summary: %+v %v (pruned 0.01 is not the best)", sum, err)
		}
		if best, err := e.c.Best(ctx, "p"); err != nil || *best.Value != 0.4 {
			t.Fatalf("best: %+v %v", best, err)
		}
		if pruned, err := e.c.Trials(ctx, "p", "pruned"); err != nil || len(pruned) != 2 {
			t.Fatalf("pruned listing: %d %v", len(pruned), err)
		}
		// The optimizer takes the pruned trials in (applied in place here,
		// rebuilt from the store by a second server) and goes on.
		e2 := newEnv(t, st, time.Minute)
		for _, c := range []*client.Client{e.c, e2.c} {
			if tr, err := c.Ask(ctx, "p"); err != nil || tr.State != "running" {
				t.Fatalf("ask after pruned trials: %+v %v", tr, err)
			}
		}
		code, body = raw(t, e, "GET", "/metrics", "", false)
		if code != 200 || !strings.Contains(body, `xbo_trials{state="pruned"} 2`) {
			t.Errorf("metrics do not count the pruned trials: %d", code)
		}
	})
}

// Several servers on one database decide alike, from the store: workers
// report through two servers in turn, and every answer is the decision of
// package prune on the values reported so far (held here in memory), for
// each pruner type; the workers obey, so trials end pruned or complete.
func TestPrunersAgreeAcrossServers(t *testing.T) {
	configs := []string{
		`{"type":"median","n_startup_trials":2,"n_warmup_steps":1}`,
		`{"type":"percentile","percentile":40,"n_startup_trials":1,"interval_steps":2}`,
		`{"type":"asha","min_resource":1,"reduction_factor":2}`,
		`{"type":"hyperband","min_resource":1,"max_resource":9,"reduction_factor":3}`,
	}
	forBackends(t, func(t *testing.T, backend string) {
		st, dsn := storetest.Open(t, backend)
		st2, err := store.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st2.Close() })
		servers := []*env{newEnv(t, st, time.Minute), newEnv(t, st2, time.Minute)}
		ctx := context.Background()
		for k, doc := range configs {
			cfg, err := prune.Parse(json.RawMessage(doc))
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("agree-%d", k)
			if _, err := servers[0].c.CreateStudy(ctx, client.StudySpec{Name: name, Space: json.RawMessage(space2D),
				Optimizer: map[string]any{"strategy": "random", "seed": 2}, Pruner: json.RawMessage(doc)}); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(k), 7))
			mirror := prune.Curves{}
			index := map[int64]int{}
			type worker struct {
				number     int64
				final, amp float64
				step       int64
			}
			var workers []*worker
			started, prunes, reports := 0, 0, 0
			const trials, steps = 14, 9
			for call := 0; started < trials || len(workers) > 0; call++ {
				c := servers[call%2].c
				if len(workers) < 3 && started < trials {
					tr, err := c.Ask(ctx, name)
					if err != nil {
						t.Fatal(err)
					}
					started++
					index[tr.Number] = len(mirror)
					mirror = append(mirror, prune.Curve{Number: tr.Number})
					workers = append(workers, &worker{number: tr.Number, final: rng.Float64(), amp: rng.Float64()})
					continue
				}
				i := rng.IntN(len(workers))
				w := workers[i]
				w.step++
				v := w.final + w.amp*math.Exp(-float64(w.step)/3)
				cv := &mirror[index[w.number]]
				cv.Points = append(cv.Points, prune.Point{Step: w.step, Value: v})
				want, err := cfg.Decide(ctx, prune.Trial{Study: name, Number: w.number, Curve: cv.Points}, mirror)
				if err != nil {
					t.Fatal(err)
				}
				got, err := c.Report(ctx, name, w.number, w.step, v)
				if err != nil {
					t.Fatal(err)
				}
				if got != want.Prune {
					t.Fatalf("%s, trial %d step %d through server %d: prune %v, package prune says %v (%s)", doc, w.number, w.step, call%2, got, want.Prune, want.Reason)
				}
				reports++
				switch {
				case got:
					prunes++
					err = servers[(call+1)%2].c.Prune(ctx, name, w.number)
				case w.step == steps:
					cv.Complete = true
					err = servers[(call+1)%2].c.Tell(ctx, name, w.number, v)
				default:
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				workers = append(workers[:i], workers[i+1:]...)
			}
			if prunes == 0 || prunes == trials {
				t.Fatalf("%s: %d of %d trials pruned: the test does not discriminate", doc, prunes, trials)
			}
			sum, err := servers[1].c.Study(ctx, name)
			if err != nil || sum.Counts["pruned"] != prunes || sum.Counts["complete"] != trials-prunes || sum.Counts["failed"] != 0 {
				t.Fatalf("%s: counts %v, want %d pruned, %v", doc, sum.Counts, prunes, err)
			}
			t.Logf("%s: %d reports, %d trials pruned", doc, reports, prunes)
		}
	})
}

// The store's reads are the Source of package prune: a study created with
// NewStudyRecord keeps the pruner in the form package prune writes.
func TestNewStudyRecordPruner(t *testing.T) {
	rec, err := server.NewStudyRecord("r", json.RawMessage(space2D), nil, json.RawMessage(`{"type":"asha","reduction_factor":3}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if string(rec.Pruner) != `{"type":"asha","min_resource":1,"reduction_factor":3,"min_early_stopping_rate":0,"bootstrap_count":0}` {
		t.Errorf("pruner %s", rec.Pruner)
	}
	rec, err = server.NewStudyRecord("r", json.RawMessage(space2D), nil, nil, time.Now())
	if err != nil || string(rec.Pruner) != `{"type":"none"}` {
		t.Errorf("no pruner: %s %v", rec.Pruner, err)
	}
}
