package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestCheckpointWaitsForWrites checks the checkpointer's policy on a real
// SQLite file: no checkpoint before checkpointAfter write transactions, a
// complete one after them that starts the count again, and a count kept
// when a reader's snapshot stops the checkpoint from copying the whole WAL.
func TestCheckpointWaitsForWrites(t *testing.T) {
	ctx := context.Background()
	opened, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "ckpt.db"))
	if err != nil {
		t.Fatal(err)
	}
	s := opened.(*sqlStore)
	b := s.b.(*sqliteBackend)
	// The test drives the policy itself: stop the background checkpointer.
	b.closeOnce.Do(func() {
		close(b.stop)
		<-b.stopped
	})
	t.Cleanup(func() { opened.Close() })
	st, err := s.CreateStudy(ctx, NewStudy{Name: "a", Direction: "minimize", Space: []byte(`{"x": {"type": "float", "low": 0, "high": 1}}`)})
	if err != nil {
		t.Fatal(err)
	}
	write := func(n int) {
		t.Helper()
		for range n {
			err := s.withTx(ctx, true, func(q tx) error {
				_, err := q.exec(ctx, `UPDATE studies SET version = version + 1 WHERE id = $1`, st.ID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	due := func(wantRan, wantComplete bool) {
		t.Helper()
		ran, complete, err := b.checkpointIfDue(ctx)
		if err != nil || ran != wantRan || complete != wantComplete {
			t.Fatalf("after %d writes: ran %v complete %v err %v; want ran %v complete %v",
				b.writes.Load(), ran, complete, err, wantRan, wantComplete)
		}
	}

	b.writes.Store(0)
	write(checkpointAfter - 1)
	due(false, false)
	write(1)
	due(true, true)
	if n := b.writes.Load(); n != 0 {
		t.Fatalf("%d writes counted after a complete checkpoint, want 0", n)
	}
	due(false, false)

	// A reader whose snapshot predates the last writes keeps them in the
	// WAL: the checkpoint is partial and the count stays, so the next tick
	// tries again.
	write(checkpointAfter / 2)
	reader, err := b.begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := getStudy(ctx, reader, "a"); err != nil {
		t.Fatal(err)
	}
	write(checkpointAfter)
	due(true, false)
	if n := b.writes.Load(); n != checkpointAfter*3/2 {
		t.Fatalf("%d writes counted after a partial checkpoint, want %d", n, checkpointAfter*3/2)
	}
	reader.rollback(ctx)
	due(true, true)
}
