package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
)

// TestSQLiteLockedIsUnavailable: a database another process keeps locked
// past the busy timeout is an outage (ErrUnavailable: the server answers
// 503 and the client retries), not a fault; once the lock goes, the same
// write succeeds.
func TestSQLiteLockedIsUnavailable(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "locked.db")
	opened, err := OpenSQLite(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opened.Close() })
	b := opened.(*sqlStore).b.(*sqliteBackend)
	// The writer waits 100 ms for the lock instead of 10 s: the test's
	// time, the same error.
	if _, err := b.write.ExecContext(ctx, `PRAGMA busy_timeout = 100`); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+file)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	ns := NewStudy{Name: "a", Direction: "minimize", Space: []byte(`{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)}
	if _, err := opened.CreateStudy(ctx, ns); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a write while another process holds the lock: %v, want ErrUnavailable", err)
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if _, err := opened.CreateStudy(ctx, ns); err != nil {
		t.Fatalf("the write once the lock is released: %v", err)
	}
	// Other errors keep their kind: a duplicate is not an outage.
	if _, err := opened.CreateStudy(ctx, ns); !errors.Is(err, ErrExists) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("a duplicate study: %v", err)
	}
}
