package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"math"
	"testing"

	"xbo/store"
)

// importedSeq yields n imported trials made on demand: trial i complete
// with x = i/n and the value i, every tenth failed with a reason and an
// intermediate value; bad(i), when it gives an error, is yielded instead
// of trial i.
func importedSeq(n int, read *int, bad func(i int) error) iter.Seq2[store.ImportedTrial, error] {
	return func(yield func(store.ImportedTrial, error) bool) {
		for i := range n {
			*read = i + 1
			if bad != nil {
				if err := bad(i); err != nil {
					yield(store.ImportedTrial{}, err)
					return
				}
			}
			t := store.ImportedTrial{Params: map[string]any{"x": float64(i) / float64(n)}}
			if i%10 == 9 {
				t.Reason = "imported: failed"
				t.Intermediate = []store.Intermediate{{Step: 1, Value: float64(i)}}
			} else {
				v := float64(i)
				t.Value = &v
			}
			if !yield(t, nil) {
				return
			}
		}
	}
}

// ImportStudyFrom writes a sequence of several batches in order, trial i
// as number i with its state, value, reason and intermediate value; an
// error the sequence yields, or a trial it refuses in a later batch, leaves
// no study and no trial behind (the batches are one transaction); a taken
// name is refused before the sequence is read.
func TestImportStudyFrom(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		const n = 2507 // two full batches of 1000 and a part
		ns := store.NewStudy{Name: "big", Direction: "minimize", Space: json.RawMessage(`{"params":[{"name":"x","type":"float","low":0,"high":1}]}`), Now: t0}
		read := 0
		if _, err := s.ImportStudyFrom(ctx, ns, importedSeq(n, &read, nil)); err != nil {
			t.Fatal(err)
		}
		all, _, err := s.Trials(ctx, "big", store.TrialQuery{})
		if err != nil || len(all) != n || read != n {
			t.Fatalf("%d trials stored, %d read, of %d: %v", len(all), read, n, err)
		}
		for i, tr := range all {
			wantState := store.Complete
			if i%10 == 9 {
				wantState = store.Failed
			}
			if tr.Number != int64(i) || tr.State != wantState || tr.Params["x"] != float64(i)/n {
				t.Fatalf("trial %d: %+v", i, tr)
			}
			if wantState == store.Complete && *tr.Value != float64(i) {
				t.Fatalf("trial %d: value %v", i, *tr.Value)
			}
			if wantState == store.Failed && (tr.FailReason != "imported: failed" || len(tr.Intermediate) != 1 || tr.Intermediate[0].Value != float64(i)) {
				t.Fatalf("trial %d: %+v", i, tr)
			}
		}
		if best, err := s.Best(ctx, "big"); err != nil || *best.Value != 0 {
			t.Fatalf("best: %+v %v", best, err)
		}

		// An error of the sequence in its third batch, or a NaN value
		// there, rolls back the two batches written before.
		boom := errors.New("the source broke")
		failAt := func(i int) error {
			if i == 2100 {
				return boom
			}
			return nil
		}
		ns.Name = "broken"
		if _, err := s.ImportStudyFrom(ctx, ns, importedSeq(n, &read, failAt)); !errors.Is(err, boom) || read != 2101 {
			t.Fatalf("sequence error: %v after %d trials read", err, read)
		}
		if _, err := s.Study(ctx, "broken"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a failed import left a study: %v", err)
		}
		nan := math.NaN()
		refused := func(yield func(store.ImportedTrial, error) bool) {
			for i := range 2100 {
				v := float64(i)
				if i == 2099 {
					v = nan
				}
				if !yield(store.ImportedTrial{Params: map[string]any{"x": 0.5}, Value: &v}, nil) {
					return
				}
			}
		}
		ns.Name = "refused"
		if _, err := s.ImportStudyFrom(ctx, ns, refused); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("NaN value in the third batch: %v", err)
		}
		if _, err := s.Study(ctx, "refused"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a refused import left a study: %v", err)
		}

		// A taken name: refused without reading the sequence.
		ns.Name = "big"
		read = 0
		if _, err := s.ImportStudyFrom(ctx, ns, importedSeq(n, &read, nil)); !errors.Is(err, store.ErrExists) || read != 0 {
			t.Fatalf("taken name: %v, %d trials read", err, read)
		}
		if _, err := s.ImportStudyFrom(ctx, store.NewStudy{Name: "nil", Direction: "minimize", Space: ns.Space, Now: t0}, nil); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("nil sequence: %v", err)
		}
	})
}
