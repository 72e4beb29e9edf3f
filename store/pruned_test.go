package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"xbo/history"
	"xbo/store"
	"xbo/store/storetest"
)

func report(t *testing.T, s store.Store, study string, number, step int64, v float64) {
	t.Helper()
	if _, err := s.ReportIntermediate(context.Background(), study, number, store.Report{Step: step, Value: v, Now: t0}); err != nil {
		t.Fatal(err)
	}
}

// A pruned trial keeps its intermediate values and, as its value, the last
// of them (by step); it is finished, counted as pruned (not failed), and
// never the best trial, whatever its value.
func TestPrunedTrial(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "p")
		a := ask(t, s, "p", "w", t0, 0)
		b := ask(t, s, "p", "w", t0, 0)
		c := ask(t, s, "p", "w", t0, 0)
		d := ask(t, s, "p", "w", t0, 0)
		report(t, s, "p", a.Number, 2, 0.30)
		report(t, s, "p", a.Number, 1, 0.50) // out of order: the last step is still 2
		report(t, s, "p", b.Number, 0, 0.90)

		got, changed, err := s.Tell(ctx, "p", a.Number, store.Result{State: store.Pruned, Value: math.NaN(), Now: t0})
		if err != nil || !changed {
			t.Fatalf("tell pruned: %v (changed %v)", err, changed)
		}
		if got.State != store.Pruned || got.Value == nil || *got.Value != 0.30 || len(got.Intermediate) != 2 || got.FinishedAt == nil {
			t.Fatalf("pruned trial: state %s value %v intermediate %v", got.State, got.Value, got.Intermediate)
		}
		// The same tell again is a no-op; another outcome is a conflict,
		// and so is a report.
		if _, changed, err := s.Tell(ctx, "p", a.Number, store.Result{State: store.Pruned, Value: math.NaN(), Now: t0}); err != nil || changed {
			t.Fatalf("repeated tell: %v (changed %v)", err, changed)
		}
		if _, changed, err := s.Tell(ctx, "p", a.Number, store.Result{State: store.Pruned, Value: 0.30, Now: t0}); err != nil || changed {
			t.Fatalf("repeated tell with the value it has: %v (changed %v)", err, changed)
		}
		for _, r := range []store.Result{{State: store.Pruned, Value: 0.1}, {State: store.Complete, Value: 0.3}, {State: store.Failed}} {
			r.Now = t0
			if _, _, err := s.Tell(ctx, "p", a.Number, r); !errors.Is(err, store.ErrConflict) {
				t.Errorf("tell %+v after pruned: %v, want ErrConflict", r, err)
			}
		}
		if _, err := s.ReportIntermediate(ctx, "p", a.Number, store.Report{Step: 3, Value: 0.2, Now: t0}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("report after pruned: %v, want ErrConflict", err)
		}
		// An explicit value is recorded instead of the last intermediate.
		if got, _, err := s.Tell(ctx, "p", b.Number, store.Result{State: store.Pruned, Value: 0.05, Now: t0}); err != nil || *got.Value != 0.05 {
			t.Fatalf("pruned with a value: %+v %v", got, err)
		}
		// Without intermediate values a pruned trial has no value.
		if got, _, err := s.Tell(ctx, "p", c.Number, store.Result{State: store.Pruned, Value: math.NaN(), Now: t0}); err != nil || got.Value != nil {
			t.Fatalf("pruned without reports: %+v %v", got, err)
		}
		if _, _, err := s.Tell(ctx, "p", d.Number, store.Result{State: store.Complete, Value: 0.7, Now: t0}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Tell(ctx, "p", d.Number, store.Result{State: store.Pruned, Value: math.Inf(1), Now: t0}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("pruned with an infinite value: %v, want ErrInvalid", err)
		}

		list, err := s.Studies(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c := list[0].Counts; c[store.Pruned] != 3 || c[store.Failed] != 0 || c[store.Complete] != 1 || list[0].Best == nil || *list[0].Best != 0.7 {
			t.Fatalf("summary: counts %v best %v (the pruned 0.05 is not a result)", c, *list[0].Best)
		}
		if best, err := s.Best(ctx, "p"); err != nil || best.Number != d.Number {
			t.Fatalf("best: %+v %v", best, err)
		}
		pruned, total, err := s.Trials(ctx, "p", store.TrialQuery{States: []store.State{store.Pruned}})
		if err != nil || total != 3 || pruned[0].Number != a.Number {
			t.Fatalf("listing pruned trials: %d %v", total, err)
		}
		h, err := store.LoadHistory(ctx, s, "p")
		if err != nil {
			t.Fatal(err)
		}
		if ht := h.Trials[0]; ht.State != history.Pruned || ht.Value != 0.30 || ht.Usable() || len(ht.Intermediate) != 2 || ht.Completion != -1 {
			t.Fatalf("history trial: %+v", ht)
		}
		if c := h.Counts(); c[history.Pruned] != 3 || c[history.Failed] != 0 || len(h.Usable()) != 1 {
			t.Fatalf("history counts %v, %d usable", c, len(h.Usable()))
		}
	})
}

// The pruners' reads: the values complete trials reported at one step, and
// every trial's first value at or above a step, whatever its state; a value
// reported again at the same step replaces the earlier one; imported
// intermediate values are read too; a deleted study leaves nothing behind.
func TestStepReads(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "r")
		var n [5]int64
		for i := range n {
			n[i] = ask(t, s, "r", "w", t0, 0).Number
		}
		report(t, s, "r", n[0], 1, 0.9)
		report(t, s, "r", n[0], 3, 0.7)
		report(t, s, "r", n[0], 3, 0.6) // replaces 0.7
		report(t, s, "r", n[1], 1, 0.8)
		report(t, s, "r", n[1], 9, 0.2)
		report(t, s, "r", n[2], 3, 0.5)
		report(t, s, "r", n[3], 2, 0.4) // running, reported at 2 only
		for _, k := range []int{0, 1} {
			if _, _, err := s.Tell(ctx, "r", n[k], store.Result{State: store.Complete, Value: 0.1, Now: t0}); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := s.Tell(ctx, "r", n[2], store.Result{State: store.Pruned, Value: math.NaN(), Now: t0}); err != nil {
			t.Fatal(err)
		}
		vals, complete, err := s.CompleteAtStep(ctx, "r", 3)
		if err != nil || complete != 2 || !reflect.DeepEqual(vals, []float64{0.6}) {
			t.Fatalf("complete at step 3: %v, %d complete, %v", vals, complete, err)
		}
		if vals, _, err := s.CompleteAtStep(ctx, "r", 1); err != nil || !reflect.DeepEqual(sorted(vals), []float64{0.8, 0.9}) {
			t.Fatalf("complete at step 1: %v %v", vals, err)
		}
		if vals, _, err := s.CompleteAtStep(ctx, "r", 2); err != nil || len(vals) != 0 {
			t.Fatalf("complete at step 2 (only a running trial has it): %v %v", vals, err)
		}
		first, err := s.FirstFromStep(ctx, "r", 2)
		want := []store.StepValue{{n[0], 3, 0.6}, {n[1], 9, 0.2}, {n[2], 3, 0.5}, {n[3], 2, 0.4}}
		if err != nil || !reflect.DeepEqual(first, want) {
			t.Fatalf("first from step 2: %v %v, want %v", first, err, want)
		}
		if first, err := s.FirstFromStep(ctx, "r", 4); err != nil || !reflect.DeepEqual(first, []store.StepValue{{n[1], 9, 0.2}}) {
			t.Fatalf("first from step 4: %v %v", first, err)
		}
		if _, err := s.FirstFromStep(ctx, "nope", 0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown study: %v", err)
		}

		// Imported trials bring their intermediate values.
		v := 0.3
		ns := store.NewStudy{Name: "imp", Direction: "minimize", Space: json.RawMessage(spaceJSON), Now: t0}
		if _, err := s.ImportStudy(ctx, ns, []store.ImportedTrial{
			{Params: map[string]any{"x": 0.1}, Value: &v, Intermediate: []store.Intermediate{{Step: 0, Value: 0.8}, {Step: 4, Value: 0.3}}},
			{State: store.Pruned, Params: map[string]any{"x": 0.2}, Value: ptr(0.9), Intermediate: []store.Intermediate{{Step: 0, Value: 0.9}}},
		}); err != nil {
			t.Fatal(err)
		}
		if vals, complete, err := s.CompleteAtStep(ctx, "imp", 0); err != nil || complete != 1 || !reflect.DeepEqual(vals, []float64{0.8}) {
			t.Fatalf("imported, complete at step 0: %v %d %v", vals, complete, err)
		}
		if first, err := s.FirstFromStep(ctx, "imp", 0); err != nil || len(first) != 2 || first[1] != (store.StepValue{Number: 1, Step: 0, Value: 0.9}) {
			t.Fatalf("imported, first from 0: %v %v", first, err)
		}

		if err := s.DeleteStudy(ctx, "r"); err != nil {
			t.Fatal(err)
		}
		mkStudy(t, s, "r")
		if first, err := s.FirstFromStep(ctx, "r", 0); err != nil || len(first) != 0 {
			t.Fatalf("recreated study: %v %v", first, err)
		}
	})
}

func ptr(v float64) *float64 { return &v }

func sorted(v []float64) []float64 {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

// ImportStudy keeps a pruned trial's state, value and intermediate values,
// and refuses what cannot be stored.
func TestImportPrunedTrials(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		ns := store.NewStudy{Name: "imp", Direction: "minimize", Space: json.RawMessage(spaceJSON), Now: t0}
		inter := []store.Intermediate{{Step: 0, Value: 0.9}, {Step: 5, Value: 0.6}}
		if _, err := s.ImportStudy(ctx, ns, []store.ImportedTrial{
			{State: store.Pruned, Params: map[string]any{"x": 0.2}, Value: ptr(0.6), Intermediate: inter},
			{State: store.Pruned, Params: map[string]any{"x": 0.3}},
			{State: store.Failed, Params: map[string]any{"x": 0.4}, Reason: "crashed"},
		}); err != nil {
			t.Fatal(err)
		}
		all, _, err := s.Trials(ctx, "imp", store.TrialQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if all[0].State != store.Pruned || *all[0].Value != 0.6 || !reflect.DeepEqual(all[0].Intermediate, inter) || all[0].FailReason != "" {
			t.Errorf("pruned with values: %+v", all[0])
		}
		if all[1].State != store.Pruned || all[1].Value != nil {
			t.Errorf("pruned without values: %+v", all[1])
		}
		if all[2].State != store.Failed || all[2].FailReason != "crashed" {
			t.Errorf("failed: %+v", all[2])
		}
		for i, bad := range [][]store.ImportedTrial{
			{{State: store.Complete, Params: map[string]any{"x": 0.1}}},
			{{State: store.Failed, Params: map[string]any{"x": 0.1}, Value: ptr(1)}},
			{{State: store.Running, Params: map[string]any{"x": 0.1}}},
			{{State: store.Pruned, Params: map[string]any{"x": 0.1}, Intermediate: []store.Intermediate{{Step: 1, Value: math.NaN()}}}},
			{{State: store.Pruned, Params: map[string]any{"x": 0.1}, Intermediate: []store.Intermediate{{Step: -1, Value: 1}}}},
			{{State: store.Pruned, Params: map[string]any{"x": 0.1}, Intermediate: []store.Intermediate{{Step: 1, Value: 1}, {Step: 1, Value: 2}}}},
		} {
			ns.Name = "bad"
			if _, err := s.ImportStudy(ctx, ns, bad); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("bad import %d: %v, want ErrInvalid", i, err)
			}
		}
	})
}

// A study keeps its pruner configuration; a study without one has {}.
func TestStudyPruner(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		cfg := `{"type":"median","n_startup_trials":3}`
		if _, err := s.CreateStudy(ctx, store.NewStudy{Name: "m", Direction: "minimize", Space: json.RawMessage(spaceJSON),
			Pruner: json.RawMessage(cfg), Now: t0}); err != nil {
			t.Fatal(err)
		}
		mkStudy(t, s, "plain")
		if st, err := s.Study(ctx, "m"); err != nil || string(st.Pruner) != cfg {
			t.Fatalf("pruner: %s %v", st.Pruner, err)
		}
		if st, err := s.Study(ctx, "plain"); err != nil || string(st.Pruner) != "{}" {
			t.Fatalf("no pruner: %s %v", st.Pruner, err)
		}
		if _, err := s.CreateStudy(ctx, store.NewStudy{Name: "x", Direction: "minimize", Space: json.RawMessage(spaceJSON),
			Pruner: json.RawMessage(`{`), Now: t0}); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("bad pruner JSON: %v", err)
		}
	})
}

// A database written before migration 2 (no pruned state, intermediate
// values only in the trials' column) is migrated on open: its trials keep
// everything, their intermediate values become readable per step, and a
// trial can then be pruned.
func TestMigrationToPrunedState(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			init, err := os.ReadFile(filepath.Join("migrations", backend, "0001_init.sql"))
			if err != nil {
				t.Fatal(err)
			}
			statements := []string{string(init),
				`CREATE TABLE schema_version (version BIGINT PRIMARY KEY, applied_us BIGINT NOT NULL)`,
				`INSERT INTO schema_version VALUES (1, 0)`,
				`INSERT INTO studies (name, direction, space, optimizer, created_us, version, next_number)
					VALUES ('old', 'minimize', '` + spaceJSON + `', '{}', 0, 2, 2)`,
				`INSERT INTO trials (study_id, number, state, params, value, intermediate, created_us, updated_us, version)
					VALUES (1, 0, 'complete', '{"x":0.5}', 0.25, '[{"step":0,"value":0.9},{"step":4,"value":0.25}]', 0, 0, 1)`,
				`INSERT INTO trials (study_id, number, state, params, intermediate, created_us, updated_us, version)
					VALUES (1, 1, 'running', '{"x":0.1}', '[{"step":4,"value":0.5}]', 0, 0, 2)`,
			}
			var dsn string
			if backend == "sqlite" {
				dsn = filepath.Join(t.TempDir(), "old.db")
				db, err := sql.Open("sqlite", dsn)
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range statements {
					if _, err := db.ExecContext(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				db.Close()
			} else {
				dsn = storetest.PostgresDSN(t)
				conn, err := pgx.Connect(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range statements {
					if _, err := conn.Exec(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				conn.Close(ctx)
			}
			s, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if tr, err := s.Trial(ctx, "old", 0); err != nil || *tr.Value != 0.25 || len(tr.Intermediate) != 2 {
				t.Fatalf("migrated trial: %+v %v", tr, err)
			}
			if vals, complete, err := s.CompleteAtStep(ctx, "old", 4); err != nil || complete != 1 || !reflect.DeepEqual(vals, []float64{0.25}) {
				t.Fatalf("migrated values at step 4: %v %d %v", vals, complete, err)
			}
			first, err := s.FirstFromStep(ctx, "old", 1)
			if err != nil || !reflect.DeepEqual(first, []store.StepValue{{0, 4, 0.25}, {1, 4, 0.5}}) {
				t.Fatalf("migrated first values: %v %v", first, err)
			}
			tr, _, err := s.Tell(ctx, "old", 1, store.Result{State: store.Pruned, Value: math.NaN(), Now: t0})
			if err != nil || tr.State != store.Pruned || *tr.Value != 0.5 {
				t.Fatalf("pruning a migrated trial: %+v %v", tr, err)
			}
			if st, err := s.Study(ctx, "old"); err != nil || string(st.Pruner) != "{}" {
				t.Fatalf("migrated study: %+v %v", st, err)
			}
			// Migration 4 (objectives and constraints) leaves an old study
			// single-objective and unconstrained: its best trial stands,
			// and its trials have no lists of values.
			if best, err := s.Best(ctx, "old"); err != nil || best.Number != 0 || best.Values != nil || best.Constraints != nil {
				t.Fatalf("migrated best: %+v %v", best, err)
			}
			mkStudy(t, s, "new") // the rebuilt table takes new rows
			if tr := ask(t, s, "new", "w", t0, 0); tr.ID <= 2 {
				t.Fatalf("new trial id %d reuses an old one", tr.ID)
			}
		})
	}
}
