package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
			err := s.withTx(ctx, writeTx, func(q tx) error {
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

// TestSQLiteStorageFull fills the database up to PRAGMA max_page_count
// (what a full disk does to SQLite: SQLITE_FULL): writes fail with
// ErrStorageFull and store nothing, reads still work, and writes succeed
// again once the limit is lifted.
func TestSQLiteStorageFull(t *testing.T) {
	ctx := context.Background()
	opened, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opened.Close() })
	b := opened.(*sqlStore).b.(*sqliteBackend)
	if _, err := opened.CreateStudy(ctx, NewStudy{Name: "a", Direction: "minimize", Space: []byte(`{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)}); err != nil {
		t.Fatal(err)
	}
	var pages int64
	if err := b.write.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := b.write.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages+2)); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<20)
	added, full := 0, 0
	for i := 0; i < 20 && full == 0; i++ {
		_, err := opened.AddTrial(ctx, "a", NewTrial{Params: map[string]any{"x": 0.5}, UserAttrs: map[string]any{"blob": big}, Now: time.Now()})
		switch {
		case err == nil:
			added++
		case errors.Is(err, ErrStorageFull):
			full++
		default:
			t.Fatalf("write %d: %v, want ErrStorageFull", i, err)
		}
	}
	if full == 0 {
		t.Fatalf("%d writes of 1 MiB fitted in %d pages", added, pages+2)
	}
	trials, _, err := opened.Trials(ctx, "a", TrialQuery{})
	if err != nil {
		t.Fatalf("reading while full: %v", err)
	}
	if len(trials) != added {
		t.Errorf("%d trials stored, %d writes succeeded", len(trials), added)
	}
	if _, err := b.write.ExecContext(ctx, "PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	if _, err := opened.AddTrial(ctx, "a", NewTrial{Params: map[string]any{"x": 0.5}, UserAttrs: map[string]any{"blob": big}, Now: time.Now()}); err != nil {
		t.Errorf("after the limit was lifted: %v", err)
	}
}
