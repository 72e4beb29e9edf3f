package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"xbo/store"
	"xbo/store/storetest"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const spaceJSON = `{"objective":"minimize","params":[{"name":"x","type":"float","low":0,"high":1}]}`

// backends runs f once per backend with a fresh store.
func backends(t *testing.T, f func(t *testing.T, s store.Store)) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s, _ := storetest.Open(t, backend)
			f(t, s)
		})
	}
}

func mkStudy(t *testing.T, s store.Store, name string) *store.Study {
	t.Helper()
	st, err := s.CreateStudy(context.Background(), store.NewStudy{Name: name, Direction: "minimize",
		Space: json.RawMessage(spaceJSON), Optimizer: json.RawMessage(`{"strategy":"random"}`), Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// counter proposes x = n/1000 for trial n and checks that the view shows the
// number it will get.
func counter(t *testing.T) store.ProposeFunc {
	return func(ctx context.Context, v store.AskView) (store.Proposal, error) {
		n := v.Study().NextNumber
		return store.Proposal{Params: map[string]any{"x": float64(n) / 1000}, Acquisition: "test"}, nil
	}
}

func ask(t *testing.T, s store.Store, study, worker string, now time.Time, timeout time.Duration) *store.Trial {
	t.Helper()
	tr, err := s.Ask(context.Background(), study, store.AskRequest{Worker: worker, Now: now, Timeout: timeout}, counter(t))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// snapshot is everything observable about a study, to show that a rejected
// request changed nothing.
func snapshot(t *testing.T, s store.Store, study string) string {
	t.Helper()
	st, err := s.Study(context.Background(), study)
	if err != nil {
		t.Fatal(err)
	}
	trials, _, err := s.Trials(context.Background(), study, store.TrialQuery{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(struct {
		S *store.Study
		T []store.Trial
	}{st, trials})
	return string(b)
}

func TestStudies(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "b")
		mkStudy(t, s, "a")
		_, err := s.CreateStudy(ctx, store.NewStudy{Name: "a", Direction: "minimize", Space: json.RawMessage(spaceJSON), Now: t0})
		if !errors.Is(err, store.ErrExists) {
			t.Fatalf("duplicate name: got %v, want ErrExists", err)
		}
		for _, bad := range []store.NewStudy{
			{Name: "", Direction: "minimize", Space: json.RawMessage(spaceJSON)},
			{Name: "c", Direction: "sideways", Space: json.RawMessage(spaceJSON)},
			{Name: "c", Direction: "minimize", Space: json.RawMessage(`{`)},
			{Name: "c/d", Direction: "minimize", Space: json.RawMessage(spaceJSON)},
		} {
			if _, err := s.CreateStudy(ctx, bad); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("CreateStudy(%+v): got %v, want ErrInvalid", bad, err)
			}
		}
		ask(t, s, "a", "w", t0, 0)
		tr := ask(t, s, "a", "w", t0, 0)
		if _, _, err := s.Tell(ctx, "a", tr.Number, store.Result{State: store.Complete, Value: 0.25, Now: t0}); err != nil {
			t.Fatal(err)
		}
		list, err := s.Studies(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].Name != "a" || list[1].Name != "b" {
			t.Fatalf("studies: %+v", list)
		}
		if list[0].Counts[store.Running] != 1 || list[0].Counts[store.Complete] != 1 || list[0].Best == nil || *list[0].Best != 0.25 {
			t.Fatalf("summary of a: counts %v best %v", list[0].Counts, list[0].Best)
		}
		if err := s.DeleteStudy(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Study(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted study: got %v", err)
		}
		if err := s.DeleteStudy(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete twice: got %v", err)
		}
		// A new study with the old name starts from scratch.
		mkStudy(t, s, "a")
		if _, total, _ := s.Trials(ctx, "a", store.TrialQuery{}); total != 0 {
			t.Fatalf("recreated study has %d trials", total)
		}
	})
}

func TestAskTellLifecycle(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		a := ask(t, s, "s", "w1", t0, time.Minute)
		b := ask(t, s, "s", "w2", t0, time.Minute)
		if a.Number != 0 || b.Number != 1 || a.State != store.Running || b.Worker != "w2" || a.Acquisition != "test" {
			t.Fatalf("asks: %+v %+v", a, b)
		}
		if a.Deadline == nil || !a.Deadline.Equal(t0.Add(time.Minute)) {
			t.Fatalf("deadline %v", a.Deadline)
		}
		got, changed, err := s.Tell(ctx, "s", 0, store.Result{State: store.Complete, Value: 1.5, UserAttrs: map[string]any{"epochs": 3.0}, Now: t0.Add(time.Second)})
		if err != nil || !changed || got.State != store.Complete || *got.Value != 1.5 || got.UserAttrs["epochs"] != 3.0 {
			t.Fatalf("tell: %+v changed=%v err=%v", got, changed, err)
		}
		before := snapshot(t, s, "s")
		// Same tell again: accepted, nothing changes.
		got, changed, err = s.Tell(ctx, "s", 0, store.Result{State: store.Complete, Value: 1.5, Now: t0.Add(time.Hour)})
		if err != nil || changed || *got.Value != 1.5 {
			t.Fatalf("repeated tell: %+v changed=%v err=%v", got, changed, err)
		}
		// Every rejected request leaves the study exactly as it was.
		rejects := []struct {
			name string
			err  error
			do   func() error
		}{
			{"different value", store.ErrConflict, func() error {
				_, _, err := s.Tell(ctx, "s", 0, store.Result{State: store.Complete, Value: 2, Now: t0})
				return err
			}},
			{"fail after complete", store.ErrConflict, func() error {
				_, _, err := s.Tell(ctx, "s", 0, store.Result{State: store.Failed, Now: t0})
				return err
			}},
			{"NaN", store.ErrInvalid, func() error {
				_, _, err := s.Tell(ctx, "s", 1, store.Result{State: store.Complete, Value: math.NaN(), Now: t0})
				return err
			}},
			{"+Inf", store.ErrInvalid, func() error {
				_, _, err := s.Tell(ctx, "s", 1, store.Result{State: store.Complete, Value: math.Inf(1), Now: t0})
				return err
			}},
			{"tell running state", store.ErrInvalid, func() error {
				_, _, err := s.Tell(ctx, "s", 1, store.Result{State: store.Running, Now: t0})
				return err
			}},
			{"unknown trial", store.ErrNotFound, func() error {
				_, _, err := s.Tell(ctx, "s", 99, store.Result{State: store.Complete, Value: 1, Now: t0})
				return err
			}},
			{"unknown study", store.ErrNotFound, func() error {
				_, _, err := s.Tell(ctx, "nope", 1, store.Result{State: store.Complete, Value: 1, Now: t0})
				return err
			}},
			{"report NaN", store.ErrInvalid, func() error {
				_, err := s.ReportIntermediate(ctx, "s", 1, store.Report{Step: 1, Value: math.NaN(), Now: t0})
				return err
			}},
			{"report on complete", store.ErrConflict, func() error {
				_, err := s.ReportIntermediate(ctx, "s", 0, store.Report{Step: 1, Value: 1, Now: t0})
				return err
			}},
			{"enqueue Inf", store.ErrInvalid, func() error {
				inf := math.Inf(-1)
				_, err := s.AddTrial(ctx, "s", store.NewTrial{Params: map[string]any{"x": 0.5}, Value: &inf, Now: t0})
				return err
			}},
			{"bad state filter", store.ErrInvalid, func() error {
				_, _, err := s.Trials(ctx, "s", store.TrialQuery{States: []store.State{"done"}})
				return err
			}},
		}
		for _, r := range rejects {
			if err := r.do(); !errors.Is(err, r.err) {
				t.Errorf("%s: got %v, want %v", r.name, err, r.err)
			}
			if after := snapshot(t, s, "s"); after != before {
				t.Errorf("%s changed the store:\nbefore %s\nafter  %s", r.name, before, after)
			}
		}
		// Failure is idempotent too.
		if _, changed, err := s.Tell(ctx, "s", 1, store.Result{State: store.Failed, Reason: "OOM", Now: t0}); err != nil || !changed {
			t.Fatalf("fail: %v %v", changed, err)
		}
		if tr, changed, err := s.Tell(ctx, "s", 1, store.Result{State: store.Failed, Reason: "again", Now: t0}); err != nil || changed || tr.FailReason != "OOM" {
			t.Fatalf("repeated fail: %+v %v %v", tr, changed, err)
		}
		best, err := s.Best(ctx, "s")
		if err != nil || best.Number != 0 {
			t.Fatalf("best: %+v %v", best, err)
		}
		list, total, err := s.Trials(ctx, "s", store.TrialQuery{States: []store.State{store.Failed}})
		if err != nil || total != 1 || len(list) != 1 || list[0].Number != 1 {
			t.Fatalf("failed trials: %+v %d %v", list, total, err)
		}
	})
}

func TestQueueExpiryAndReports(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		// An enqueued configuration is handed out before anything is proposed.
		q, err := s.AddTrial(ctx, "s", store.NewTrial{Params: map[string]any{"x": 0.9}, Now: t0})
		if err != nil || q.State != store.Pending || q.Number != 0 {
			t.Fatalf("enqueue: %+v %v", q, err)
		}
		v := 0.7
		imp, err := s.AddTrial(ctx, "s", store.NewTrial{Params: map[string]any{"x": 0.1}, Value: &v, Now: t0})
		if err != nil || imp.State != store.Complete || imp.Number != 1 {
			t.Fatalf("import: %+v %v", imp, err)
		}
		noPropose := func(context.Context, store.AskView) (store.Proposal, error) {
			return store.Proposal{}, errors.New("must not propose while the queue has trials")
		}
		a, err := s.Ask(ctx, "s", store.AskRequest{Worker: "w1", Now: t0, Timeout: 10 * time.Second}, noPropose)
		if err != nil || a.Number != 0 || a.State != store.Running || a.Params["x"] != 0.9 {
			t.Fatalf("claim: %+v %v", a, err)
		}
		b := ask(t, s, "s", "w2", t0, 10*time.Second)
		if b.Number != 2 {
			t.Fatalf("proposal number %d", b.Number)
		}
		// A report is a heartbeat: it moves trial 0's deadline.
		r, err := s.ReportIntermediate(ctx, "s", 0, store.Report{Step: 2, Value: 0.5, Now: t0.Add(8 * time.Second), Extend: 10 * time.Second})
		if err != nil || !r.Deadline.Equal(t0.Add(18*time.Second)) {
			t.Fatalf("report: %+v %v", r, err)
		}
		r, err = s.ReportIntermediate(ctx, "s", 0, store.Report{Step: 1, Value: 0.6, Now: t0.Add(9 * time.Second)})
		if err != nil || !reflect.DeepEqual(r.Intermediate, []store.Intermediate{{1, 0.6}, {2, 0.5}}) {
			t.Fatalf("intermediate values: %+v %v", r.Intermediate, err)
		}
		// At t0+12s only trial 2 is overdue.
		if exp, err := s.Expire(ctx, "s", t0.Add(9*time.Second)); err != nil || len(exp) != 0 {
			t.Fatalf("early expire: %+v %v", exp, err)
		}
		exp, err := s.Expire(ctx, "s", t0.Add(12*time.Second))
		if err != nil || len(exp) != 1 || exp[0].Number != 2 || exp[0].State != store.Expired {
			t.Fatalf("expire: %+v %v", exp, err)
		}
		if again, err := s.Expire(ctx, "s", t0.Add(12*time.Second)); err != nil || len(again) != 0 {
			t.Fatalf("second expire: %+v %v", again, err)
		}
		c, err := s.Ask(ctx, "s", store.AskRequest{Worker: "w3", Now: t0.Add(13 * time.Second)}, noPropose)
		if err != nil || c.Number != 3 || c.RequeuedFrom == nil || *c.RequeuedFrom != 2 || c.Params["x"] != b.Params["x"] || c.Acquisition != "requeue" {
			t.Fatalf("requeued trial: %+v %v", c, err)
		}
		// The slow worker's late result is kept.
		late, changed, err := s.Tell(ctx, "s", 2, store.Result{State: store.Complete, Value: 3, Now: t0.Add(20 * time.Second)})
		if err != nil || !changed || late.State != store.Complete {
			t.Fatalf("late tell: %+v %v", late, err)
		}
		counts := map[store.State]int{}
		all, _, _ := s.Trials(ctx, "s", store.TrialQuery{})
		for _, tr := range all {
			counts[tr.State]++
		}
		if want := map[store.State]int{store.Running: 2, store.Complete: 2}; !reflect.DeepEqual(counts, want) {
			t.Fatalf("states %v, want %v", counts, want)
		}
		// Paging.
		page, total, err := s.Trials(ctx, "s", store.TrialQuery{Offset: 1, Limit: 2})
		if err != nil || total != 4 || len(page) != 2 || page[0].Number != 1 || page[1].Number != 2 {
			t.Fatalf("page: %+v %d %v", page, total, err)
		}
		page, _, err = s.Trials(ctx, "s", store.TrialQuery{Offset: 3})
		if err != nil || len(page) != 1 || page[0].Number != 3 {
			t.Fatalf("offset only: %+v %v", page, err)
		}
	})
}

// A tell that arrives after its trial expired completes the trial and
// retires its requeued copy if no worker has it yet, so the configuration is
// not run a second time; a copy already running is left to
// its worker.
func TestLateTellRetiresTheWaitingCopy(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		a := ask(t, s, "s", "w1", t0, 10*time.Second)
		if _, err := s.Expire(ctx, "s", t0.Add(11*time.Second)); err != nil {
			t.Fatal(err)
		}
		all, _, _ := s.Trials(ctx, "s", store.TrialQuery{})
		if len(all) != 2 || all[1].State != store.Pending || all[1].RequeuedFrom == nil || *all[1].RequeuedFrom != a.Number {
			t.Fatalf("after expiry: %+v", all)
		}
		copyVersion := all[1].Version
		late, changed, err := s.Tell(ctx, "s", a.Number, store.Result{State: store.Complete, Value: 2, Now: t0.Add(12 * time.Second)})
		if err != nil || !changed || late.State != store.Complete {
			t.Fatalf("late tell: %+v %v", late, err)
		}
		cp, err := s.Trial(ctx, "s", all[1].Number)
		if err != nil || cp.State != store.Expired || cp.Version <= copyVersion {
			t.Fatalf("the waiting copy after the late tell: %+v %v", cp, err)
		}
		// The next ask does not hand the copy out: it proposes.
		proposed := false
		next, err := s.Ask(ctx, "s", store.AskRequest{Worker: "w2", Now: t0.Add(13 * time.Second)},
			func(context.Context, store.AskView) (store.Proposal, error) {
				proposed = true
				return store.Proposal{Params: map[string]any{"x": 0.3}, Acquisition: "ei"}, nil
			})
		if err != nil || !proposed || next.RequeuedFrom != nil {
			t.Fatalf("next ask: %+v %v (proposed %v)", next, err, proposed)
		}
	})
}

// TestVersionsCatchUp checks the property the optimizer cache relies on:
// applying Changed(since) deltas reproduces the full trial list.
func TestVersionsCatchUp(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		known := map[int64]store.Trial{}
		var mark int64
		for i := 0; i < 30; i++ {
			_, err := s.Ask(ctx, "s", store.AskRequest{Worker: "w", Now: t0, Timeout: time.Second}, func(ctx context.Context, v store.AskView) (store.Proposal, error) {
				changed, m, err := v.Changed(ctx, mark)
				if err != nil {
					return store.Proposal{}, err
				}
				for _, tr := range changed {
					known[tr.Number] = tr
				}
				mark = m
				if int64(len(known)) != v.Study().NextNumber {
					return store.Proposal{}, fmt.Errorf("proposer knows %d trials, study has %d", len(known), v.Study().NextNumber)
				}
				return store.Proposal{Params: map[string]any{"x": 0.5}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			switch i % 3 {
			case 0:
				s.Tell(ctx, "s", int64(i/2), store.Result{State: store.Complete, Value: float64(i), Now: t0})
			case 1:
				s.ReportIntermediate(ctx, "s", int64(i/2), store.Report{Step: int64(i), Value: 1, Now: t0})
			case 2:
				s.Expire(ctx, "s", t0.Add(time.Duration(i)*time.Second))
			}
		}
		all, _, _ := s.Trials(ctx, "s", store.TrialQuery{})
		changed, _, err := s.Trials(ctx, "s", store.TrialQuery{SinceVersion: mark})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range changed {
			known[tr.Number] = tr
		}
		if len(all) != len(known) {
			t.Fatalf("caught up with %d trials, store has %d", len(known), len(all))
		}
		for _, tr := range all {
			if !reflect.DeepEqual(known[tr.Number], tr) {
				t.Fatalf("trial %d: cached %+v, stored %+v", tr.Number, known[tr.Number], tr)
			}
		}
	})
}

// Read gives the view of one snapshot outside an ask: the study with the
// number the next trial will get, and Watch catching up with trials that
// changed; an unknown study and a missing reader are errors.
func TestReadView(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		for range 3 {
			ask(t, s, "s", "w", t0, 0)
		}
		if _, _, err := s.Tell(ctx, "s", 1, store.Result{State: store.Complete, Value: 2, Now: t0}); err != nil {
			t.Fatal(err)
		}
		var next int64
		var watched []store.Trial
		err := s.Read(ctx, "s", func(ctx context.Context, v store.AskView) error {
			next = v.Study().NextNumber
			var err error
			watched, err = v.Watch(ctx, []int64{1}, 2)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if next != 3 || len(watched) != 2 || watched[0].Number != 1 || watched[0].State != store.Complete || watched[1].Number != 2 {
			t.Fatalf("next number %d, watched %+v", next, watched)
		}
		err = s.Read(ctx, "nope", func(context.Context, store.AskView) error { return nil })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown study: %v", err)
		}
		if err := s.Read(ctx, "s", nil); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("no reader: %v", err)
		}
		failed := errors.New("reader failed")
		if err := s.Read(ctx, "s", func(context.Context, store.AskView) error { return failed }); !errors.Is(err, failed) {
			t.Errorf("a reader's error: %v", err)
		}
	})
}

// TestConcurrentAsks: 16 goroutines ask and tell 200 trials on one study;
// numbers are dense and unique, every proposal saw every earlier trial, and
// every value is stored once.
func TestConcurrentAsks(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		const workers, total = 16, 200
		var mu sync.Mutex
		handed := map[int64]string{}
		next := 0
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				name := fmt.Sprintf("w%d", w)
				for {
					mu.Lock()
					if next >= total {
						mu.Unlock()
						return
					}
					next++
					mu.Unlock()
					var tr *store.Trial
					var err error
					for attempt := 0; attempt < 50; attempt++ {
						tr, err = s.Ask(ctx, "s", store.AskRequest{Worker: name, Now: t0}, func(ctx context.Context, v store.AskView) (store.Proposal, error) {
							_, _, err := v.Changed(ctx, v.Study().Version)
							if err != nil {
								return store.Proposal{}, err
							}
							return store.Proposal{Params: map[string]any{"x": float64(v.Study().NextNumber) / total}}, nil
						})
						if !errors.Is(err, store.ErrConflict) {
							break
						}
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					if prev, dup := handed[tr.Number]; dup {
						mu.Unlock()
						errs <- fmt.Errorf("trial %d handed to %s and %s", tr.Number, prev, name)
						return
					}
					handed[tr.Number] = name
					mu.Unlock()
					if tr.Params["x"] != float64(tr.Number)/total {
						errs <- fmt.Errorf("trial %d has params of trial %v", tr.Number, tr.Params["x"].(float64)*total)
						return
					}
					if _, _, err := s.Tell(ctx, "s", tr.Number, store.Result{State: store.Complete, Value: float64(tr.Number), Now: t0}); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		all, _, _ := s.Trials(ctx, "s", store.TrialQuery{})
		if len(all) != total {
			t.Fatalf("%d trials stored, want %d", len(all), total)
		}
		for i, tr := range all {
			if tr.Number != int64(i) || tr.State != store.Complete || *tr.Value != float64(i) {
				t.Fatalf("trial %d: %+v", i, tr)
			}
		}
	})
}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "xbo.db")
	ctx := context.Background()
	s, err := store.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	mkStudy(t, s, "s")
	tr := ask(t, s, "s", "w", t0, 0)
	s.Tell(ctx, "s", tr.Number, store.Result{State: store.Complete, Value: 4, Now: t0})
	s.Close()
	s, err = store.Open(ctx, "sqlite:"+file)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Trial(ctx, "s", 0)
	if err != nil || *got.Value != 4 {
		t.Fatalf("after reopen: %+v %v", got, err)
	}
	if _, err := s.Trial(ctx, "s", 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown trial: %v", err)
	}
}

// TestAskBatch: one transaction serves several asks, queued trials first,
// proposals numbered consecutively.
func TestAskBatch(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		for _, x := range []float64{0.1, 0.2} {
			if _, err := s.AddTrial(ctx, "s", store.NewTrial{Params: map[string]any{"x": x}, Now: t0}); err != nil {
				t.Fatal(err)
			}
		}
		reqs := make([]store.AskRequest, 5)
		for i := range reqs {
			reqs[i] = store.AskRequest{Worker: fmt.Sprintf("w%d", i), Now: t0}
		}
		calls := 0
		got, err := s.AskBatch(ctx, "s", reqs, func(ctx context.Context, v store.AskView, n int) ([]store.Proposal, error) {
			calls++
			if n != 3 || v.Study().NextNumber != 2 {
				return nil, fmt.Errorf("asked for %d proposals from number %d", n, v.Study().NextNumber)
			}
			out := make([]store.Proposal, n)
			for i := range out {
				out[i] = store.Proposal{Params: map[string]any{"x": 0.5 + float64(i)/10}, Acquisition: "batch"}
			}
			return out, nil
		})
		if err != nil || calls != 1 || len(got) != 5 {
			t.Fatalf("batch: %d trials, %d calls, %v", len(got), calls, err)
		}
		for i, tr := range got {
			if tr.Number != int64(i) || tr.State != store.Running || tr.Worker != fmt.Sprintf("w%d", i) {
				t.Fatalf("trial %d: %+v", i, tr)
			}
		}
		if got[1].Acquisition != "enqueued" || got[4].Params["x"] != 0.7 {
			t.Fatalf("batch contents: %+v %+v", got[1], got[4])
		}
		// A proposer that returns the wrong count stores nothing.
		before := snapshot(t, s, "s")
		_, err = s.AskBatch(ctx, "s", reqs[:2], func(ctx context.Context, v store.AskView, n int) ([]store.Proposal, error) {
			return []store.Proposal{{Params: map[string]any{"x": 0.5}}}, nil
		})
		if !errors.Is(err, store.ErrInvalid) || snapshot(t, s, "s") != before {
			t.Fatalf("short batch: %v", err)
		}
	})
}

// A proposed trial's deadline counts from its hand-out, read after the
// proposals are made, not from when its ask arrived: with
// proposals that take 90 s and a 60 s timeout the trial reaches its worker
// with 60 s to go, not already expired. So does an enqueued trial claimed
// in the same batch, which reaches its worker with the proposed ones
// (it once came 22 s past a 2 s deadline); one handed out alone, with
// no proposal to wait for, counts from Now.
func TestDeadlineCountsFromHandOut(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		for _, x := range []float64{0.1, 0.2} {
			if _, err := s.AddTrial(ctx, "s", store.NewTrial{Params: map[string]any{"x": x}, Now: t0}); err != nil {
				t.Fatal(err)
			}
		}
		proposedAt := t0
		handOut := func() time.Time { return proposedAt }
		reqs := []store.AskRequest{{Worker: "a", Now: t0, Timeout: time.Minute, HandOut: handOut},
			{Worker: "b", Now: t0, Timeout: time.Minute, HandOut: handOut}}
		alone, err := s.AskBatch(ctx, "s", reqs[:1], func(ctx context.Context, v store.AskView, n int) ([]store.Proposal, error) {
			return nil, errors.New("an enqueued trial needs no proposal")
		})
		if err != nil || len(alone) != 1 || !alone[0].Deadline.Equal(t0.Add(time.Minute)) || !alone[0].StartedAt.Equal(t0) {
			t.Fatalf("an enqueued trial handed out alone: %+v, %v; want started %v, deadline %v", alone, err, t0, t0.Add(time.Minute))
		}
		got, err := s.AskBatch(ctx, "s", reqs, func(ctx context.Context, v store.AskView, n int) ([]store.Proposal, error) {
			proposedAt = t0.Add(90 * time.Second) // a slow proposal
			return []store.Proposal{{Params: map[string]any{"x": 0.5}, Acquisition: "ei"}}, nil
		})
		if err != nil || len(got) != 2 {
			t.Fatalf("%d trials, %v", len(got), err)
		}
		enq, prop := got[0], got[1]
		for _, tr := range []*store.Trial{enq, prop} {
			if !tr.StartedAt.Equal(t0.Add(90*time.Second)) || !tr.Deadline.Equal(t0.Add(150*time.Second)) {
				t.Errorf("%s trial: started %v, deadline %v; want %v and %v", tr.Acquisition, tr.StartedAt, tr.Deadline,
					t0.Add(90*time.Second), t0.Add(150*time.Second))
			}
		}
		if enq.Acquisition != "enqueued" || enq.Version != prop.Version {
			t.Errorf("the enqueued trial: %+v, version %d; the proposed one's %d", enq, enq.Version, prop.Version)
		}
		stored, err := s.Trial(ctx, "s", enq.Number)
		if err != nil || !stored.Deadline.Equal(*enq.Deadline) || stored.Version != enq.Version {
			t.Errorf("the enqueued trial as stored: %+v, %v", stored, err)
		}
	})
}

// TestSQLiteTwoProcessesConflict: a proposal that another process overtakes
// is made again under the write lock, seeing the other process's trial.
func TestSQLiteTwoProcessesConflict(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "xbo.db")
	a, err := store.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	mkStudy(t, a, "s")
	var seen []int64
	tr, err := a.Ask(ctx, "s", store.AskRequest{Worker: "a", Now: t0}, func(ctx context.Context, v store.AskView) (store.Proposal, error) {
		seen = append(seen, v.Study().NextNumber)
		if len(seen) == 1 { // the other process asks while we propose
			if _, err := b.Ask(ctx, "s", store.AskRequest{Worker: "b", Now: t0}, counter(t)); err != nil {
				return store.Proposal{}, err
			}
		}
		return store.Proposal{Params: map[string]any{"x": float64(v.Study().NextNumber) / 10}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, []int64{0, 1}) || tr.Number != 1 || tr.Params["x"] != 0.1 {
		t.Fatalf("proposals from numbers %v, trial %+v", seen, tr)
	}
	// When the other process enqueues instead, the queued trial is handed
	// out and no second proposal is needed.
	calls := 0
	tr, err = a.Ask(ctx, "s", store.AskRequest{Worker: "a", Now: t0}, func(ctx context.Context, v store.AskView) (store.Proposal, error) {
		calls++
		if _, err := b.AddTrial(ctx, "s", store.NewTrial{Params: map[string]any{"x": 0.99}, Now: t0}); err != nil {
			return store.Proposal{}, err
		}
		return store.Proposal{Params: map[string]any{"x": 0.5}}, nil
	})
	if err != nil || calls != 1 || tr.Params["x"] != 0.99 || tr.Worker != "a" {
		t.Fatalf("after enqueue: %+v, %d calls, %v", tr, calls, err)
	}
	all, _, _ := a.Trials(ctx, "s", store.TrialQuery{})
	if len(all) != 3 {
		t.Fatalf("%d trials", len(all))
	}
}

func TestRelease(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		a := ask(t, s, "s", "w1", t0, 10*time.Second)
		r, released, err := s.Release(ctx, "s", a.Number, t0.Add(time.Second))
		if err != nil || !released || r.State != store.Pending || r.Worker != "" || r.Deadline != nil || r.StartedAt != nil || r.Version <= a.Version {
			t.Fatalf("release: %+v %v %v", r, released, err)
		}
		// A released trial is the next ask's, with no new proposal.
		noPropose := func(context.Context, store.AskView) (store.Proposal, error) {
			return store.Proposal{}, errors.New("must not propose while the queue has trials")
		}
		b, err := s.Ask(ctx, "s", store.AskRequest{Worker: "w2", Now: t0.Add(2 * time.Second), Timeout: 10 * time.Second}, noPropose)
		if err != nil || b.Number != a.Number || b.Worker != "w2" || b.State != store.Running || b.Params["x"] != a.Params["x"] {
			t.Fatalf("ask after release: %+v %v", b, err)
		}
		// Only running trials are released.
		if _, _, err := s.Tell(ctx, "s", b.Number, store.Result{State: store.Complete, Value: 1, Now: t0.Add(3 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		if r, released, err := s.Release(ctx, "s", b.Number, t0.Add(4*time.Second)); err != nil || released || r.State != store.Complete {
			t.Fatalf("release of a complete trial: %+v %v %v", r, released, err)
		}
		if _, _, err := s.Release(ctx, "s", 99, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("release of an unknown trial: %v", err)
		}
		if _, _, err := s.Release(ctx, "nope", 0, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("release in an unknown study: %v", err)
		}
	})
}

// TestSQLiteWALCheckpointed writes in rounds and checks that the WAL file
// stops growing: commits do not checkpoint it, so without the background
// checkpointer it would grow by every page written, round after round.
func TestSQLiteWALCheckpointed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "xbo.db")
	s, err := store.Open(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	mkStudy(t, s, "s")
	var sizes []int64
	const rounds, perRound = 6, 250
	for r := 0; r < rounds; r++ {
		for i := 0; i < perRound; i++ {
			if _, err := s.AddTrial(ctx, "s", store.NewTrial{Params: map[string]any{"x": float64(i) / perRound}, Now: t0}); err != nil {
				t.Fatal(err)
			}
		}
		fi, err := os.Stat(file + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
		// Four ticks of the checkpointer: on a loaded machine one tick
		// can come late and the next round's commits start a new WAL
		// only after a complete checkpoint.
		time.Sleep(time.Second)
	}
	if last := sizes[len(sizes)-1]; last > 3*sizes[0] {
		t.Fatalf("WAL sizes after each round of %d commits: %v; it keeps growing", perRound, sizes)
	}
	t.Logf("WAL sizes after each round of %d commits: %v", perRound, sizes)
}

// TestWatch checks that Watch returns the trials from a number on and the
// listed ones, whatever their state.
func TestWatch(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		var seen []*store.Trial
		for i := 0; i < 4; i++ {
			seen = append(seen, ask(t, s, "s", "w", t0, 0))
		}
		if _, _, err := s.Tell(ctx, "s", 1, store.Result{State: store.Complete, Value: 1, Now: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReportIntermediate(ctx, "s", 2, store.Report{Step: 1, Value: 2, Now: t0}); err != nil {
			t.Fatal(err)
		}
		watched := []int64{seen[1].Number, seen[2].Number}
		var got [][]int64
		_, err := s.Ask(ctx, "s", store.AskRequest{Worker: "w", Now: t0}, func(ctx context.Context, v store.AskView) (store.Proposal, error) {
			for _, from := range []int64{3, 4} {
				trials, err := v.Watch(ctx, watched, from)
				if err != nil {
					return store.Proposal{}, err
				}
				var nums []int64
				for _, tr := range trials {
					nums = append(nums, tr.Number)
				}
				got = append(got, nums)
			}
			none, err := v.Watch(ctx, nil, 4)
			if err != nil || len(none) != 0 {
				return store.Proposal{}, fmt.Errorf("nothing watched, nothing new: %v %v", none, err)
			}
			return store.Proposal{Params: map[string]any{"x": 0.5}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Trial 0 is not listed; 1 was told, 2 got a report; 3 is new from 3.
		if want := [][]int64{{1, 2, 3}, {1, 2}}; !reflect.DeepEqual(got, want) {
			t.Fatalf("watched trials %v, want %v", got, want)
		}
	})
}

// A finished trial never changes: a repeated tell with the same outcome is
// accepted unchanged with the attributes it was told with, a part of them
// or none, and is a conflict with new or different ones (they once changed
// the trial, and before that were dropped with a 200), which leave the
// trial as it was.
func TestRepeatedTellNeverChangesAFinishedTrial(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		a := ask(t, s, "s", "w", t0, 0)
		told, _, err := s.Tell(ctx, "s", a.Number, store.Result{State: store.Complete, Value: 1, UserAttrs: map[string]any{"epochs": 3.0, "gpu": "a100"}, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		for _, attrs := range []map[string]any{{"epochs": 3, "gpu": "a100"}, {"epochs": 3}, nil} {
			if again, changed, err := s.Tell(ctx, "s", a.Number, store.Result{State: store.Complete, Value: 1, UserAttrs: attrs, Now: t0.Add(time.Second)}); err != nil || changed || again.Version != told.Version {
				t.Fatalf("a repeat with attributes %v: changed %v, %v", attrs, changed, err)
			}
		}
		for _, attrs := range []map[string]any{{"loss": 0.5}, {"epochs": 4}} {
			_, _, err := s.Tell(ctx, "s", a.Number, store.Result{State: store.Complete, Value: 1, UserAttrs: attrs, Now: t0.Add(2 * time.Second)})
			if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "other user attributes") {
				t.Fatalf("a repeat with new attributes %v: %v, want a conflict", attrs, err)
			}
		}
		if _, _, err := s.Tell(ctx, "s", a.Number, store.Result{State: store.Complete, Value: 2, UserAttrs: map[string]any{"x": 1.0}, Now: t0}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a different value: %v", err)
		}
		now, err := s.Trial(ctx, "s", a.Number)
		if err != nil || now.Version != told.Version || len(now.UserAttrs) != 2 || now.UserAttrs["epochs"] != 3.0 {
			t.Fatalf("the trial changed: %+v (%v), told %+v", now, err, told)
		}
	})
}

// ImportStudy creates the study and its finished trials in one transaction:
// complete trials with their values, failed ones with their reasons; a bad
// trial or a taken name leaves nothing behind.
func TestImportStudy(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		v1, v2 := 1.5, 0.5
		ns := store.NewStudy{Name: "imp", Direction: "minimize", Space: json.RawMessage(`{"params":[{"name":"x","type":"float","low":0,"high":1}]}`), Now: t0}
		st, err := s.ImportStudy(ctx, ns, []store.ImportedTrial{
			{Params: map[string]any{"x": 0.1}, Value: &v1, UserAttrs: map[string]any{"source_number": 7.0}},
			{Params: map[string]any{"x": 0.2}, Reason: "imported from optuna: pruned"},
			{Params: map[string]any{"x": 0.3}, Value: &v2},
		})
		if err != nil || st.Name != "imp" {
			t.Fatalf("import: %+v %v", st, err)
		}
		all, _, err := s.Trials(ctx, "imp", store.TrialQuery{})
		if err != nil || len(all) != 3 {
			t.Fatalf("trials: %d %v", len(all), err)
		}
		if all[0].State != store.Complete || *all[0].Value != 1.5 || all[0].UserAttrs["source_number"] != 7.0 ||
			all[1].State != store.Failed || all[1].FailReason != "imported from optuna: pruned" || all[1].Value != nil ||
			all[2].Number != 2 || all[2].Acquisition != "imported" {
			t.Fatalf("imported trials: %+v", all)
		}
		if best, err := s.Best(ctx, "imp"); err != nil || *best.Value != 0.5 {
			t.Fatalf("best: %+v %v", best, err)
		}
		// Nothing pending: an ask proposes rather than handing out an import.
		proposed := false
		if _, err := s.Ask(ctx, "imp", store.AskRequest{Worker: "w", Now: t0}, func(context.Context, store.AskView) (store.Proposal, error) {
			proposed = true
			return store.Proposal{Params: map[string]any{"x": 0.9}}, nil
		}); err != nil || !proposed {
			t.Fatalf("ask after import: proposed %v, %v", proposed, err)
		}
		// A bad trial and a taken name leave nothing behind.
		bad := math.NaN()
		ns.Name = "imp2"
		if _, err := s.ImportStudy(ctx, ns, []store.ImportedTrial{{Params: map[string]any{"x": 0.1}, Value: &v1}, {Params: map[string]any{"x": 0.2}, Value: &bad}}); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("NaN value: %v", err)
		}
		if _, err := s.Study(ctx, "imp2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a refused import left a study: %v", err)
		}
		ns.Name = "imp"
		if _, err := s.ImportStudy(ctx, ns, nil); !errors.Is(err, store.ErrExists) {
			t.Fatalf("taken name: %v", err)
		}
		if all2, _, _ := s.Trials(ctx, "imp", store.TrialQuery{}); len(all2) != 4 {
			t.Fatalf("the existing study changed: %d trials", len(all2))
		}
	})
}

// When PostgreSQL terminates the store's connections (an administrator's
// pg_terminate_backend, a failover), the next operations run again on fresh
// connections instead of failing (before, 106 asks and 45 tells got 500s
// after 6 backend kills).
func TestPostgresSurvivesTerminatedConnections(t *testing.T) {
	pg := storetest.NamedPostgres(t)
	ctx := context.Background()
	s, err := store.Open(ctx, pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mkStudy(t, s, "s")
	kill := func() int { return pg.Terminate(t) }
	// More dead idle connections than withTx has attempts: each retry must
	// not draw another dead one.
	const deadIdle = 6
	for round := range 5 {
		// Warm the pool with several connections, then kill them all.
		for try := 0; pg.Count(t) < deadIdle; try++ {
			if try == 50 {
				t.Fatalf("round %d: the pool did not grow to %d connections", round, deadIdle)
			}
			var wg sync.WaitGroup
			for range 2 * deadIdle {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 10 {
						if _, err := s.Studies(ctx); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
		}
		if n := kill(); n < deadIdle {
			t.Fatalf("round %d: %d connections of the store terminated, want at least %d", round, n, deadIdle)
		}
		tr := ask(t, s, "s", "w", t0, 0)
		if _, _, err := s.Tell(ctx, "s", tr.Number, store.Result{State: store.Complete, Value: float64(round), Now: t0}); err != nil {
			t.Fatalf("round %d: tell after the kill: %v", round, err)
		}
		kill()
		if _, err := s.Study(ctx, "s"); err != nil {
			t.Fatalf("round %d: read after the kill: %v", round, err)
		}
	}
}

// Trials stored before categorical choices kept their JSON types hold text
// forms ("32", "true"); opening the database rewrites them to the typed
// choices their study's space declares, once, on both backends. A value
// that already has its type, string choices and other studies stay as they
// are.
func TestOpenTypesOldCategoricalValues(t *testing.T) {
	const typedSpace = `{"objective":"minimize","params":[{"name":"units","type":"categorical","choices":[16,32,64]},
		{"name":"flag","type":"categorical","choices":[true,false]},{"name":"opt","type":"categorical","choices":["sgd","adam"]}]}`
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s, dsn := storetest.Open(t, backend)
			if _, err := s.CreateStudy(ctx, store.NewStudy{Name: "old", Direction: "minimize", Space: json.RawMessage(typedSpace), Now: t0}); err != nil {
				t.Fatal(err)
			}
			mkStudy(t, s, "plain")
			add := func(study string, params map[string]any) {
				t.Helper()
				if _, err := s.AddTrial(ctx, study, store.NewTrial{Params: params, Now: t0}); err != nil {
					t.Fatal(err)
				}
			}
			add("old", map[string]any{"units": "32", "flag": "true", "opt": "adam"}) // as an older xbo stored it
			add("old", map[string]any{"units": 64.0, "flag": false, "opt": "sgd"})   // typed already
			add("plain", map[string]any{"x": 0.5})
			before, _, err := s.Trials(ctx, "old", store.TrialQuery{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			// The upgrade ran when the (empty) database was created: undo its
			// record so that opening runs it on the old rows.
			switch backend {
			case "sqlite":
				db, err := sql.Open("sqlite", dsn)
				if err != nil {
					t.Fatal(err)
				}
				_, err = db.ExecContext(ctx, `DELETE FROM data_upgrades WHERE name = 'typed-choices'`)
				db.Close()
				if err != nil {
					t.Fatal(err)
				}
			default:
				conn, err := pgx.Connect(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				_, err = conn.Exec(ctx, `DELETE FROM data_upgrades WHERE name = 'typed-choices'`)
				conn.Close(ctx)
				if err != nil {
					t.Fatal(err)
				}
			}
			s2, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			after, _, err := s2.Trials(ctx, "old", store.TrialQuery{})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal([]map[string]any{after[0].Params, after[1].Params})
			if want := `[{"flag":true,"opt":"adam","units":32},{"flag":false,"opt":"sgd","units":64}]`; string(got) != want {
				t.Fatalf("params after the upgrade %s, want %s", got, want)
			}
			if after[0].Version != before[0].Version || after[1].Version != before[1].Version {
				t.Errorf("versions changed: %d,%d -> %d,%d", before[0].Version, before[1].Version, after[0].Version, after[1].Version)
			}
			plain, _, err := s2.Trials(ctx, "plain", store.TrialQuery{})
			if err != nil || len(plain) != 1 || plain[0].Params["x"] != 0.5 {
				t.Fatalf("other study: %+v %v", plain, err)
			}
			// The history reads both rows as the same choices as before.
			h, err := store.LoadHistory(ctx, s2, "old")
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(h.Trials[0].Params, h.Trials[1].Params) != "[1 0 1] [2 1 0]" {
				t.Fatalf("history params %v %v", h.Trials[0].Params, h.Trials[1].Params)
			}
		})
	}
}
