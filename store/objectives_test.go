package store_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"xbo/store"
)

const moSpaceJSON = `{"objectives":[{"name":"error","direction":"minimize"},{"name":"size","direction":"minimize"}],
	"constraints":["memory","latency"],"params":[{"name":"x","type":"float","low":0,"high":1}]}`

// Objective and constraint values are stored with a complete trial, read
// back exactly, make a repeated tell the same only when they are equal,
// and an infeasible trial is never the best one, on both backends.
func TestObjectivesAndConstraints(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		if _, err := s.CreateStudy(ctx, store.NewStudy{Name: "mo", Direction: "minimize", Space: []byte(moSpaceJSON),
			Optimizer: []byte(`{"strategy":"random"}`), Now: t0}); err != nil {
			t.Fatal(err)
		}
		tell := func(number int64, r store.Result) (*store.Trial, error) {
			r.Now = t0
			tr, _, err := s.Tell(ctx, "mo", number, r)
			return tr, err
		}
		a := ask(t, s, "mo", "w", t0, 0)
		b := ask(t, s, "mo", "w", t0, 0)
		c := ask(t, s, "mo", "w", t0, 0)
		// a: best value but infeasible; b: feasible; c: feasible, worse.
		got, err := tell(a.Number, store.Result{State: store.Complete, Value: 0.1, Values: []float64{0.1, 5}, Constraints: []float64{0.5, -1}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Values, []float64{0.1, 5}) || !slices.Equal(got.Constraints, []float64{0.5, -1}) {
			t.Errorf("told values %v, constraints %v", got.Values, got.Constraints)
		}
		if _, err := tell(b.Number, store.Result{State: store.Complete, Value: 0.2, Values: []float64{0.2, 4}, Constraints: []float64{0, -1}}); err != nil {
			t.Fatal(err)
		}
		if _, err := tell(c.Number, store.Result{State: store.Complete, Value: 0.3, Values: []float64{0.3, 1}, Constraints: []float64{-2, -1}}); err != nil {
			t.Fatal(err)
		}
		// The same tell again is accepted; different values are a conflict.
		if _, err := tell(b.Number, store.Result{State: store.Complete, Value: 0.2, Values: []float64{0.2, 4}, Constraints: []float64{0, -1}}); err != nil {
			t.Errorf("repeated tell: %v", err)
		}
		if _, err := tell(b.Number, store.Result{State: store.Complete, Value: 0.2, Values: []float64{0.2, 3}, Constraints: []float64{0, -1}}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("tell with other values: %v, want a conflict", err)
		}
		best, err := s.Best(ctx, "mo")
		if err != nil {
			t.Fatal(err)
		}
		if best.Number != b.Number {
			t.Errorf("best is trial %d, want the feasible %d (trial %d is infeasible)", best.Number, b.Number, a.Number)
		}
		sums, err := s.Studies(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if sums[0].Best == nil || *sums[0].Best != 0.2 {
			t.Errorf("summary best %v, want 0.2", sums[0].Best)
		}
		read, err := s.Trial(ctx, "mo", a.Number)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(read.Values, []float64{0.1, 5}) || !slices.Equal(read.Constraints, []float64{0.5, -1}) {
			t.Errorf("read back values %v, constraints %v", read.Values, read.Constraints)
		}
		h, err := store.LoadHistory(ctx, s, "mo")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(h.Trials[0].Constraints, []float64{0.5, -1}) {
			t.Errorf("history constraints %v", h.Trials[0].Constraints)
		}

		// Refused: a first value that is not the value, a non-finite
		// value, values on a failed trial.
		d := ask(t, s, "mo", "w", t0, 0)
		for _, r := range []store.Result{
			{State: store.Complete, Value: 1, Values: []float64{2, 1}},
			{State: store.Complete, Value: 1, Values: []float64{1, math.NaN()}},
			{State: store.Complete, Value: 1, Constraints: []float64{math.Inf(1)}},
			{State: store.Failed, Values: []float64{1, 2}},
			// The study's shape: two objectives, two constraints.
			{State: store.Complete, Value: 1},
			{State: store.Complete, Value: 1, Values: []float64{1, 2}},
			{State: store.Complete, Value: 1, Values: []float64{1, 2, 3}, Constraints: []float64{0, 0}},
			{State: store.Complete, Value: 1, Values: []float64{1, 2}, Constraints: []float64{0}},
		} {
			if _, err := tell(d.Number, r); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("tell %+v: %v, want invalid", r, err)
			}
		}

		if tr, err := s.Trial(ctx, "mo", d.Number); err != nil || tr.State != store.Running {
			t.Errorf("after refused tells trial %d is %v (%v), want still running", d.Number, tr.State, err)
		}
		// A single-objective study refuses a list of values.
		mkStudy(t, s, "single")
		e := ask(t, s, "single", "w", t0, 0)
		if _, _, err := s.Tell(ctx, "single", e.Number, store.Result{State: store.Complete, Value: 1, Values: []float64{1, 2}, Now: t0}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("values told to a single-objective study: %v, want invalid", err)
		}

		// Added and imported trials keep their values too.
		v := 0.05
		added, err := s.AddTrial(ctx, "mo", store.NewTrial{Params: map[string]any{"x": 0.5}, Value: &v,
			Values: []float64{0.05, 9}, Constraints: []float64{1, 0}, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(added.Values, []float64{0.05, 9}) || !slices.Equal(added.Constraints, []float64{1, 0}) {
			t.Errorf("added trial's values %v, constraints %v", added.Values, added.Constraints)
		}
		if best, _ := s.Best(ctx, "mo"); best.Number != b.Number {
			t.Errorf("an infeasible added trial became best (%d)", best.Number)
		}
		ns := store.NewStudy{Name: "imported", Direction: "minimize", Space: []byte(moSpaceJSON), Optimizer: []byte(`{}`), Now: t0}
		if _, err := s.ImportStudy(ctx, ns, []store.ImportedTrial{
			{Params: map[string]any{"x": 0.1}, Value: &v, Values: []float64{0.05, 2}, Constraints: []float64{-1, -1}},
		}); err != nil {
			t.Fatal(err)
		}
		imp, err := s.Trial(ctx, "imported", 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(imp.Values, []float64{0.05, 2}) || !slices.Equal(imp.Constraints, []float64{-1, -1}) {
			t.Errorf("imported trial's values %v, constraints %v", imp.Values, imp.Constraints)
		}
	})
}
