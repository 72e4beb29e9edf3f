package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
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

// BenchmarkReport measures a report with the study's pruner deciding, on a
// study of 1000 complete trials with 50 intermediate values each. median
// reads the complete trials' values at the step on every report; asha
// reads every trial's first value at a rung, the costliest read, on every
// report here (each one is the first report of a fresh trial, at rung 1).
//
//	go test -run '^$' -bench 'Report/' -benchtime 200x ./server
func BenchmarkReport(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, pr := range []struct{ name, doc string }{
			{"none", `{"type":"none"}`},
			{"median", `{"type":"median"}`},
			{"asha", `{"type":"asha","min_resource":1,"reduction_factor":3}`},
		} {
			b.Run(backend+"/"+pr.name, func(b *testing.B) {
				st, _ := storetest.Open(b, backend)
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(3, 4))
				imported := make([]store.ImportedTrial, 1000)
				for i := range imported {
					v := rng.Float64()
					it := store.ImportedTrial{Params: map[string]any{"x": 10 * rng.Float64(), "y": 15 * rng.Float64()}, Value: &v}
					for s := int64(1); s <= 50; s++ {
						it.Intermediate = append(it.Intermediate, store.Intermediate{Step: s, Value: v + 1/float64(s)})
					}
					imported[i] = it
				}
				ns := store.NewStudy{Name: "bench", Direction: "minimize", Space: json.RawMessage(space2D),
					Optimizer: json.RawMessage(`{"strategy":"random","seed":1}`), Pruner: json.RawMessage(pr.doc), Now: time.Now()}
				if _, err := st.ImportStudy(ctx, ns, imported); err != nil {
					b.Fatal(err)
				}
				e := newEnv(b, st, time.Hour)
				var tr *client.Trial
				pruned := 0
				b.ResetTimer()
				for i := range b.N {
					// A fresh trial every 50 reports (median), or every report (asha).
					step := int64(i%50) + 1
					if pr.name == "asha" {
						step = 1
					}
					if step == 1 {
						b.StopTimer()
						var err error
						if tr, err = e.c.Ask(ctx, "bench"); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					prune, err := e.c.Report(ctx, "bench", tr.Number, step, 0.5+1/float64(step))
					if err != nil {
						b.Fatal(err)
					}
					if prune {
						pruned++
					}
				}
				b.ReportMetric(float64(pruned)/float64(b.N), "pruned/op")
			})
		}
	}
}

// A server keeps each study's pruner, but a study deleted and created again
// under the same name by another server is read afresh.
func TestPrunerOfRecreatedStudy(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e1, e2 := newEnv(t, st, time.Minute), newEnv(t, st, time.Minute)
	ctx := context.Background()
	spec := client.StudySpec{Name: "r", Space: json.RawMessage(space2D), Optimizer: map[string]any{"strategy": "random"},
		// Every trial reaching rung 1 is pruned while at most 5 have.
		Pruner: map[string]any{"type": "asha", "min_resource": 1, "reduction_factor": 2, "bootstrap_count": 5}}
	if _, err := e1.c.CreateStudy(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tr, _ := e1.c.Ask(ctx, "r")
	if prune, err := e1.c.Report(ctx, "r", tr.Number, 1, 0.5); err != nil || !prune {
		t.Fatalf("bootstrap: prune %v, %v", prune, err)
	}
	if err := e2.c.DeleteStudy(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	spec.Pruner = nil
	if _, err := e2.c.CreateStudy(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tr, _ = e1.c.Ask(ctx, "r")
	if prune, err := e1.c.Report(ctx, "r", tr.Number, 1, 0.5); err != nil || prune {
		t.Fatalf("the recreated study has no pruner, server 1 still pruned: %v, %v", prune, err)
	}
}

// A study that names its resource proposes from the intermediate values of
// pruned and running trials (opt.Config.Resource): after four trials at
// step 1, the next proposal is the EI of the configuration × budget model,
// both from the server that holds the optimizer (applying the
// reports and prunings in place) and from a second one that rebuilds it from
// the store. Without the resource no trial is complete and the proposal is
// random.
func TestResourceProposalsFromIntermediateValues(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, time.Minute)
		ctx := context.Background()
		for _, withResource := range []bool{true, false} {
			name := fmt.Sprintf("mf-%v", withResource)
			optimizer := map[string]any{"seed": 3, "initial_size": 4}
			if withResource {
				optimizer["resource"] = map[string]any{"name": "epochs", "min": 1, "max": 9}
			}
			if _, err := e.c.CreateStudy(ctx, client.StudySpec{Name: name, Space: json.RawMessage(space2D),
				Optimizer: optimizer, Pruner: map[string]any{"type": "asha", "min_resource": 1, "reduction_factor": 3}}); err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				tr, err := e.c.Ask(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.c.Report(ctx, name, tr.Number, 1, float64(i)); err != nil {
					t.Fatal(err)
				}
				if i%2 == 0 {
					if err := e.c.Prune(ctx, name, tr.Number); err != nil {
						t.Fatal(err)
					}
				}
			}
			e2 := newEnv(t, st, time.Minute)
			for k, c := range []*client.Client{e.c, e2.c} {
				tr, err := c.Ask(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				var meta struct {
					Fidelity bool `json:"fidelity"`
				}
				json.Unmarshal(tr.Meta, &meta)
				if withResource && (tr.Acquisition != "ei" || !meta.Fidelity) {
					t.Errorf("server %d with a resource: acquisition %q, meta %s; want ei from the configuration × budget model", k+1, tr.Acquisition, tr.Meta)
				}
				if !withResource && tr.Acquisition != "random-fallback" {
					t.Errorf("server %d without a resource: acquisition %q, want random-fallback", k+1, tr.Acquisition)
				}
			}
		}
	})
}

// Desirability paths explain every model-chosen proposal by rebuilding its
// surrogate; a proposal of the configuration × budget model cannot be
// rebuilt (the intermediate values as of its proposal are not kept), so the
// paths leave such proposals out and say so instead of failing.
func TestPathsLeaveOutMultiFidelityProposals(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, time.Minute)
	ctx := context.Background()
	if _, err := e.c.CreateStudy(ctx, client.StudySpec{Name: "mf", Space: json.RawMessage(space2D),
		Optimizer: map[string]any{"seed": 3, "initial_size": 4, "resource": map[string]any{"name": "epochs", "min": 1, "max": 9}},
		Pruner:    map[string]any{"type": "asha", "min_resource": 1, "reduction_factor": 3}}); err != nil {
		t.Fatal(err)
	}
	fidelity := 0
	for i := range 8 {
		tr, err := e.c.Ask(ctx, "mf")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(tr.Meta), `"fidelity":true`) {
			fidelity++
		}
		if _, err := e.c.Report(ctx, "mf", tr.Number, 1, float64(i%3)); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if err := e.c.Prune(ctx, "mf", tr.Number); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := e.c.Tell(ctx, "mf", tr.Number, float64(i%3)); err != nil {
			t.Fatal(err)
		}
	}
	if fidelity == 0 {
		t.Fatal("no proposal of the configuration × budget model: the test would not exercise them")
	}
	var res struct {
		Proposals, Explained int
		Note                 string
	}
	if err := e.c.Explain(ctx, "mf", "paths", url.Values{"samples": {"64"}}, &res); err != nil {
		t.Fatalf("paths with %d multi-fidelity proposals: %v", fidelity, err)
	}
	if !strings.Contains(res.Note, fmt.Sprintf("%d proposals of the multi-fidelity", fidelity)) {
		t.Errorf("paths note %q, want it to name the %d multi-fidelity proposals left out", res.Note, fidelity)
	}
}

// The model pruner: a study must name its resource; at a rung, a trial
// whose first value is far above what the configuration × budget model
// expects of any good configuration is pruned, one far below every value
// seen goes on, and a step between rungs is not decided.
func TestModelPrunerInTheService(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, time.Minute)
		ctx := context.Background()
		_, err := e.c.CreateStudy(ctx, client.StudySpec{Name: "bare", Space: json.RawMessage(space2D), Pruner: map[string]any{"type": "model"}})
		if !client.IsStatus(err, 400) && !client.IsStatus(err, 422) || !strings.Contains(err.Error(), "name the resource") {
			t.Fatalf("model pruner without a resource: %v", err)
		}
		resource := map[string]any{"name": "epochs", "min": 1, "max": 9}
		if _, err := e.c.CreateStudy(ctx, client.StudySpec{Name: "m", Space: json.RawMessage(space2D),
			Optimizer: map[string]any{"seed": 3, "initial_size": 6, "resource": resource}, Pruner: map[string]any{"type": "model", "min_chance": 0.05}}); err != nil {
			t.Fatal(err)
		}
		f := func(p map[string]any) float64 {
			x, y := p["x"].(float64), p["y"].(float64)
			return math.Pow((x-2)/15, 2) + math.Pow((y-7)/15, 2)
		}
		for range 8 {
			tr, err := e.c.Ask(ctx, "m")
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []int64{1, 3, 9} {
				if _, err := e.c.Report(ctx, "m", tr.Number, step, f(tr.Params)+1/float64(step)); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.c.Tell(ctx, "m", tr.Number, f(tr.Params)+1.0/9); err != nil {
				t.Fatal(err)
			}
		}
		bad, _ := e.c.Ask(ctx, "m")
		good, _ := e.c.Ask(ctx, "m")
		code, body := raw(t, e, "POST", fmt.Sprintf("/api/studies/m/trials/%d/report", bad.Number), fmt.Sprintf(`{"step": 1, "value": %g}`, f(bad.Params)+6), true)
		var ans map[string]any
		if err := json.Unmarshal([]byte(body), &ans); code != 200 || err != nil {
			t.Fatalf("report: %d %s", code, body)
		}
		if ans["prune"] != true || !strings.Contains(ans["prune_reason"].(string), "chance of") {
			t.Fatalf("a trial far above the pattern: %s", body)
		}
		code, body = raw(t, e, "POST", fmt.Sprintf("/api/studies/m/trials/%d/report", good.Number), `{"step": 1, "value": -5}`, true)
		if err := json.Unmarshal([]byte(body), &ans); code != 200 || err != nil || ans["prune"] != false || !strings.Contains(ans["prune_reason"].(string), "chance of") {
			t.Fatalf("a trial far below every value: %d %s", code, body)
		}
		code, body = raw(t, e, "POST", fmt.Sprintf("/api/studies/m/trials/%d/report", good.Number), `{"step": 2, "value": -5}`, true)
		if err := json.Unmarshal([]byte(body), &ans); code != 200 || err != nil || ans["prune"] != false || !strings.Contains(ans["prune_reason"].(string), "no new rung") {
			t.Fatalf("a step between rungs: %d %s", code, body)
		}
	})
}

// A study with a pruner and no resource: the steps its workers report
// (counted from 0 here, as a loop over epochs does) are the budget the
// optimizer's configuration × budget model uses once ASHA, with its
// defaults, stopped a trial, so the stopped trials' values teach the
// proposals, both on the server that holds the optimizer and on one that
// rebuilds it from the store. Before any trial is pruned the proposals are
// the ordinary model's.
func TestPrunedTrialsTeachTheModelWithoutResource(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, time.Minute)
		ctx := context.Background()
		if _, err := e.c.CreateStudy(ctx, client.StudySpec{Name: "curves", Space: json.RawMessage(space2D),
			Optimizer: map[string]any{"seed": 7, "initial_size": 4}, Pruner: map[string]any{"type": "asha"}}); err != nil {
			t.Fatal(err)
		}
		type meta struct {
			Fidelity bool   `json:"fidelity"`
			Note     string `json:"note"`
		}
		pruned := 0
		for range 14 {
			tr, err := e.c.Ask(ctx, "curves")
			if err != nil {
				t.Fatal(err)
			}
			var m meta
			json.Unmarshal(tr.Meta, &m)
			if m.Fidelity != (pruned > 0 && tr.Acquisition == "ei") {
				t.Fatalf("trial %d after %d pruned: acquisition %q, meta %s", tr.Number, pruned, tr.Acquisition, tr.Meta)
			}
			x, y := tr.Params["x"].(float64), tr.Params["y"].(float64)
			f := (x-2)*(x-2)/10 + (y-5)*(y-5)/10
			stopped := false
			for step := int64(0); step < 27 && !stopped; step++ {
				if stopped, err = e.c.Report(ctx, "curves", tr.Number, step, f+0.5/float64(step+1)); err != nil {
					t.Fatal(err)
				}
			}
			if stopped {
				if err := e.c.Prune(ctx, "curves", tr.Number); err != nil {
					t.Fatal(err)
				}
				pruned++
				continue
			}
			if err := e.c.Tell(ctx, "curves", tr.Number, f+0.5/27); err != nil {
				t.Fatal(err)
			}
		}
		if pruned == 0 {
			t.Fatal("ASHA pruned no trial: the test shows nothing")
		}
		e2 := newEnv(t, st, time.Minute)
		for k, c := range []*client.Client{e.c, e2.c} {
			tr, err := c.Ask(ctx, "curves")
			if err != nil {
				t.Fatal(err)
			}
			var m meta
			json.Unmarshal(tr.Meta, &m)
			if tr.Acquisition != "ei" || !m.Fidelity || !strings.Contains(m.Note, "model over configuration × step") || !strings.Contains(m.Note, "read at step = 26") {
				t.Errorf("server %d after %d pruned trials: acquisition %q, meta %s; want ei from the model over configuration × step read at step 26", k+1, pruned, tr.Acquisition, tr.Meta)
			}
		}
	})
}
