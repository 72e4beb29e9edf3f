package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// The WAL's size. PASSIVE checkpoints (checkpointIfDue) copy the WAL into
// the database file without blocking anyone, but they never shrink the WAL
// file, and under a sustained load some reader always holds a snapshot in
// it, so the checkpoint is never complete, the writer never starts the WAL
// over, and the file grows for as long as the load lasts (docs/api.md,
// "The SQLite WAL"). Two rules bound it:
//
//   - past walLimit, a TRUNCATE checkpoint copies everything, waits for the
//     readers of old snapshots to finish and empties the file; writers wait
//     while it runs, which is the price of the bound;
//   - when the store has been idle for walIdleAfter, the same empties the
//     file, so a database at rest has no WAL to speak of.

// walLimit is the default size past which the WAL file is truncated.
const walLimit = 64 << 20

// walIdleAfter is how long the WAL must stay unchanged (no write by this or
// another process) before it is truncated.
const walIdleAfter = time.Second

// walCheckEvery wakes the checkpointer every this many write transactions,
// so that a fast load is caught between two ticks of checkpointEvery: a
// write transaction adds a few to some tens of KiB to the WAL, so the limit
// is passed by at most a few hundred KiB before it is looked at.
const walCheckEvery = 8

// truncateBusyTimeout bounds how long one TRUNCATE checkpoint waits for the
// writer and for readers (holding other writers off meanwhile); a
// checkpoint that cannot finish in it is tried again at the next tick.
const truncateBusyTimeout = 100 * time.Millisecond

// walState is what the checkpointer remembers between ticks to tell an idle
// store: the write transactions begun and the WAL's size when last seen,
// and since when neither has changed.
type walState struct {
	begun, size int64
	quietSince  time.Time
}

// walSize is the size of the WAL file (0 when there is none).
func (b *sqliteBackend) walSize() (int64, error) {
	fi, err := os.Stat(b.walPath)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: sqlite WAL size: %w", err)
	}
	return fi.Size(), nil
}

// maintainWAL is one round of the checkpointer: truncate the WAL when it
// is over its limit or the store is idle, else, at a tick, checkpoint
// passively when enough writes collected. A wake-up by the writes only
// looks at the size: a passive checkpoint in the middle of a burst of
// writes is complete for an instant, and the writes after it leave a WAL
// that the next burst cannot start over (checkpointAfter explains why the
// ticks wait for writes to collect). truncated reports a truncation that
// finished.
func (b *sqliteBackend) maintainWAL(ctx context.Context, st *walState, now time.Time, tick bool) (truncated bool, err error) {
	size, err := b.walSize()
	if err != nil {
		return false, err
	}
	if n := b.begun.Load(); n != st.begun || size != st.size {
		st.begun, st.size, st.quietSince = n, size, now
	}
	if size > b.walLimit || (size > 0 && now.Sub(st.quietSince) >= walIdleAfter) {
		return b.truncateWAL(ctx)
	}
	if tick {
		_, _, err = b.checkpointIfDue(ctx)
	}
	return false, err
}

// truncateWAL runs a TRUNCATE checkpoint on the store's one write
// connection, whose busy timeout is truncateBusyTimeout for the occasion:
// this process's writers then wait for the connection instead of taking
// the write lock from under the checkpoint again and again (on a reader
// connection it found the lock free too rarely to keep up with a fast
// load). done is false when a reader, or a writer of another process, kept
// it from finishing in that time.
func (b *sqliteBackend) truncateWAL(ctx context.Context) (done bool, err error) {
	conn, err := b.write.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("store: sqlite WAL truncation: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, truncateBusyTimeout.Milliseconds())); err != nil {
		return false, fmt.Errorf("store: sqlite WAL truncation: %w", err)
	}
	// The connection goes back to the pool: with the usual timeout.
	defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA busy_timeout = %d`, sqliteBusyTimeout.Milliseconds()))
	var busy, frames, copied int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &copied); err != nil {
		return false, fmt.Errorf("store: sqlite WAL truncation: %w", err)
	}
	if busy != 0 {
		return false, nil
	}
	// Everything is in the database file: no write waits for a passive
	// checkpoint any more.
	b.writes.Store(0)
	return true, nil
}

// wakeCheckpointer tells the checkpointer to look at the WAL now, without
// waiting (a wake-up already pending is enough).
func (b *sqliteBackend) wakeCheckpointer() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
