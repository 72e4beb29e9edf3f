package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"xbo/store"
)

func askKeyed(s store.Store, study, worker, key string, now time.Time, timeout time.Duration) (*store.Trial, error) {
	return s.Ask(context.Background(), study, store.AskRequest{Worker: worker, Now: now, Timeout: timeout, Key: key},
		func(ctx context.Context, v store.AskView) (store.Proposal, error) {
			return store.Proposal{Params: map[string]any{"x": float64(v.Study().NextNumber) / 1000}, Acquisition: "test"}, nil
		})
}

// An ask's idempotency key is stored with the trial it hands out (proposed
// or claimed from the queue), names one ask in the whole store, and leaves
// a trial that expires or is released.
func TestAskKeys(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "s")
		mkStudy(t, s, "other")
		asked := func(keys ...string) map[string]store.KeyedAsk {
			t.Helper()
			m, err := s.AskedWith(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		t1, err := askKeyed(s, "s", "w1", "k1", t0, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := asked("k1", "unknown")
		if len(got) != 1 || got["k1"].Study != "s" || got["k1"].Trial.Number != t1.Number || got["k1"].Trial.Worker != "w1" || got["k1"].Trial.State != store.Running {
			t.Fatalf("AskedWith(k1) = %+v, want trial %d of s running for w1", got, t1.Number)
		}
		// A second hand-out under a stored key is refused, in this study and
		// in another one, and creates nothing.
		for _, study := range []string{"s", "other"} {
			before := snapshot(t, s, study)
			if _, err := askKeyed(s, study, "w1", "k1", t0, 0); !errors.Is(err, store.ErrConflict) {
				t.Errorf("%s: second ask with key k1: %v, want ErrConflict", study, err)
			}
			if after := snapshot(t, s, study); after != before {
				t.Errorf("%s: a refused keyed ask changed the study:\n%s\n%s", study, before, after)
			}
		}
		t2, err := askKeyed(s, "s", "w1", "k2", t0, 0)
		if err != nil || t2.Number == t1.Number {
			t.Fatalf("ask with key k2: %v, %+v (k1 got %d)", err, t2, t1.Number)
		}
		// A queued trial claimed by a keyed ask carries the key too.
		queued, err := s.AddTrial(ctx, "s", store.NewTrial{Params: map[string]any{"x": 0.5}, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		t3, err := askKeyed(s, "s", "w2", "k3", t0, 0)
		if err != nil || t3.Number != queued.Number {
			t.Fatalf("keyed ask with a queued trial: %v, %+v, want trial %d", err, t3, queued.Number)
		}
		// A batch stores one key per request.
		reqs := []store.AskRequest{{Worker: "a", Now: t0, Key: "k4"}, {Worker: "b", Now: t0, Key: "k5"}, {Worker: "c", Now: t0}}
		batch, err := s.AskBatch(ctx, "s", reqs, func(ctx context.Context, v store.AskView, n int) ([]store.Proposal, error) {
			out := make([]store.Proposal, n)
			for i := range out {
				out[i] = store.Proposal{Params: map[string]any{"x": float64(i) / 10}, Acquisition: "test"}
			}
			return out, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got = asked("k1", "k2", "k3", "k4", "k5")
		for key, want := range map[string]int64{"k1": t1.Number, "k2": t2.Number, "k3": t3.Number, "k4": batch[0].Number, "k5": batch[1].Number} {
			if got[key].Trial.Number != want {
				t.Errorf("AskedWith(%s) = trial %d, want %d", key, got[key].Trial.Number, want)
			}
		}
		// Keys stay with finished trials.
		if _, _, err := s.Tell(ctx, "s", t2.Number, store.Result{State: store.Complete, Value: 1, Now: t0}); err != nil {
			t.Fatal(err)
		}
		if k := asked("k2")["k2"]; k.Trial.State != store.Complete {
			t.Errorf("after the tell, k2 gives %+v, want the complete trial", k.Trial)
		}
		// A released trial is no longer the ask's: its key is free again.
		if _, released, err := s.Release(ctx, "s", t1.Number, t0); err != nil || !released {
			t.Fatalf("release: %v %v", released, err)
		}
		if len(asked("k1")) != 0 {
			t.Error("a released trial kept its ask's key")
		}
		// So is an expired one; the key then hands out another trial (here the
		// expired trial's requeued copy, the oldest queued one after t1).
		t6, err := askKeyed(s, "s", "w6", "k6", t0, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Expire(ctx, "s", t0.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		if len(asked("k6")) != 0 {
			t.Error("an expired trial kept its ask's key")
		}
		if _, err := askKeyed(s, "s", "w6", "k6", t0.Add(3*time.Second), 0); err != nil {
			t.Errorf("the key of an expired trial (%d) cannot be used again: %v", t6.Number, err)
		}
		// Malformed keys and a key twice in one batch are refused.
		for _, bad := range []string{"has space", "tab\tkey", string(make([]byte, store.MaxAskKeyLength+1)), "é"} {
			if _, err := askKeyed(s, "s", "w", bad, t0, 0); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("key %q: %v, want ErrInvalid", bad, err)
			}
		}
		twice := []store.AskRequest{{Now: t0, Key: "same"}, {Now: t0, Key: "same"}}
		if _, err := s.AskBatch(ctx, "s", twice, func(context.Context, store.AskView, int) ([]store.Proposal, error) {
			return nil, errors.New("must not propose")
		}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("one key twice in a batch: %v, want ErrInvalid", err)
		}
		// Deleting a study deletes its keys.
		if err := s.DeleteStudy(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if m := asked("k3", "k4"); len(m) != 0 {
			t.Errorf("keys of a deleted study remain: %+v", m)
		}
	})
}
