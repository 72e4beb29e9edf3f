package store

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations
var migrations embed.FS

// sqliteBackend keeps one pool for writes, whose transactions begin
// IMMEDIATE (they take the write lock at BEGIN, so two writers never deadlock
// upgrading read locks), and one for reads, which see a WAL snapshot.
//
// The hot statements are prepared once per connection and reused
// (stmts): parsing SQL took an eighth of the CPU of an ask/tell round trip,
// and modernc.org/sqlite keeps no statement cache of its own.
type sqliteBackend struct {
	write, read           *sql.DB
	writeStmts, readStmts map[string]*sql.Stmt
	stop, stopped         chan struct{} // of the checkpointer, nil until it runs
	closeOnce             sync.Once
	// writes counts the write transactions begun since the WAL was last
	// copied into the database file completely.
	writes atomic.Int64
	// begun counts every write transaction begun (the checkpointer tells
	// an idle store by it); wake has the checkpointer look at the WAL
	// before its next tick (sqlite_wal.go).
	begun atomic.Int64
	wake  chan struct{}
	// walPath is the WAL file; walLimit the size past which it is
	// truncated (walLimit by default; tests lower it).
	walPath  string
	walLimit int64
}

// sqliteBusyTimeout is how long a connection waits for a lock another
// connection or process holds before its statement fails with SQLITE_BUSY
// (ErrUnavailable).
const sqliteBusyTimeout = 10 * time.Second

// checkpointEvery is how often the background checkpointer looks at the WAL.
const checkpointEvery = 250 * time.Millisecond

// checkpointAfter is how many write transactions the WAL collects before
// the checkpointer copies it into the database file: at 4 to 6 pages per ask
// or tell, about SQLite's own automatic checkpoint size (1000 pages).
//
// Checkpointing whatever the WAL held every checkpointEvery made most
// commits slow when writes were few (a GP study: a few per second): after a
// complete checkpoint the next commit restarts the WAL, and SQLite syncs the
// WAL header at a restart even with synchronous=NORMAL (an out-of-order
// write after a restart could corrupt the database), so most of those commits
// waited for an fsync. Counting writes makes that sync come once per
// checkpointAfter writes (measured in docs/api.md, "Pending trials and the
// SQLite checkpoint").
const checkpointAfter = 200

// checkpointer copies the WAL into the database file from a reader
// connection, off the commit path (the writer does not checkpoint), and
// keeps the WAL file's size bounded (maintainWAL).
func (b *sqliteBackend) checkpointer() {
	defer close(b.stopped)
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	st := walState{quietSince: time.Now()}
	for {
		ticked := false
		select {
		case <-b.stop:
			return
		case <-tick.C:
			ticked = true
		case <-b.wake:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		// An error (e.g. SQLITE_BUSY while another process checkpoints)
		// leaves the WAL for the next round.
		_, _ = b.maintainWAL(ctx, &st, time.Now(), ticked)
		cancel()
	}
}

// checkpointIfDue runs a PASSIVE checkpoint once checkpointAfter write
// transactions have gone to the WAL since the last complete one. PASSIVE
// never blocks writers or readers; it copies what no reader still needs
// (complete reports whether that was all of the WAL), and the next writer
// restarts the WAL once all of it is copied. Until a checkpoint is complete
// the count is kept, so the next tick tries again.
func (b *sqliteBackend) checkpointIfDue(ctx context.Context) (ran, complete bool, err error) {
	n := b.writes.Load()
	if n < checkpointAfter {
		return false, false, nil
	}
	var busy, frames, copied int
	if err := b.read.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
		return true, false, fmt.Errorf("store: sqlite checkpoint: %w", err)
	}
	if busy != 0 || frames != copied {
		return true, false, nil
	}
	b.writes.Add(-n)
	return true, true, nil
}

// preparedStatements are the statements of the ask and tell paths. They are
// prepared when the store opens: database/sql prepares a statement on a
// free connection, and the single write connection is never free inside a
// transaction. A transaction on another connection prepares it there on
// first use (Tx.StmtContext) and keeps it for that connection.
var preparedStatements = []string{
	qStudyByName, qLockTrial, qTrialVersionSQLite, qTellUpdate, qClaimSelect, qClaimUpdate,
	qReserve, qInsertTrial, qWatch, qPendingExists, qOverdueCount,
}

func prepareAll(ctx context.Context, db *sql.DB) (map[string]*sql.Stmt, error) {
	out := make(map[string]*sql.Stmt, len(preparedStatements))
	for _, q := range preparedStatements {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			for _, st := range out {
				st.Close()
			}
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		out[q] = st
	}
	return out, nil
}

// OpenSQLite opens (creating if needed) a SQLite database file in WAL mode
// and applies migrations.
func OpenSQLite(ctx context.Context, file string) (Store, error) {
	file = strings.TrimPrefix(file, "file:")
	if file == "" || strings.ContainsAny(file, "?#") {
		return nil, fmt.Errorf("store: sqlite: bad file name %q", file)
	}
	base := "file:" + (&url.URL{Path: file}).EscapedPath() +
		fmt.Sprintf("?_pragma=busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()) +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"
	// The writer does not checkpoint the WAL: a checkpoint run by a commit
	// copies up to a thousand pages into the database file and syncs it
	// while every other write waits (it made a tell's p99 about three times
	// its median); checkpointer does it in the background instead.
	// When the writer starts the WAL over after a complete checkpoint, it
	// also cuts the file back to walLimit (journal_size_limit).
	write, err := sql.Open("sqlite", base+fmt.Sprintf("&_txlock=immediate&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(%d)", walLimit))
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: open %s: %w", file, err)
	}
	read, err := sql.Open("sqlite", base)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("store: sqlite: open %s: %w", file, err)
	}
	// One writer connection is enough (SQLite has one write lock) and avoids
	// busy waits between this process's own connections.
	write.SetMaxOpenConns(1)
	read.SetMaxOpenConns(8)
	b := &sqliteBackend{write: write, read: read, wake: make(chan struct{}, 1), walPath: file + "-wal", walLimit: walLimit}
	s := &sqlStore{b: b}
	if err := s.withTx(ctx, idempotentTx, func(q tx) error {
		if err := migrate(ctx, q, migrations, "migrations/sqlite"); err != nil {
			return err
		}
		return upgradeData(ctx, q)
	}); err != nil {
		b.close()
		return nil, fmt.Errorf("store: sqlite %s: %w", file, err)
	}
	// Statements can only be prepared once the schema exists.
	if b.writeStmts, err = prepareAll(ctx, write); err == nil {
		b.readStmts, err = prepareAll(ctx, read)
	}
	if err != nil {
		b.close()
		return nil, fmt.Errorf("store: sqlite %s: %w", file, err)
	}
	b.stop, b.stopped = make(chan struct{}), make(chan struct{})
	go b.checkpointer()
	return s, nil
}

func (b *sqliteBackend) name() string { return "sqlite" }

func (b *sqliteBackend) begin(ctx context.Context, write bool) (tx, error) {
	db, stmts := b.read, b.readStmts
	if write {
		db, stmts = b.write, b.writeStmts
	}
	t, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: !write})
	if err != nil {
		return nil, err
	}
	if write {
		b.writes.Add(1)
		if b.begun.Add(1)%walCheckEvery == 0 {
			b.wakeCheckpointer()
		}
	}
	return sqlTx{t, stmts, map[string]*sql.Stmt{}}, nil
}

func (b *sqliteBackend) lockStudy(context.Context, querier, int64) error { return nil }

// lockForAsk: SQLite's immediate transaction already holds the write lock.
func (b *sqliteBackend) lockForAsk(ctx context.Context, q querier, name string, limit int) (*Study, []int64, error) {
	st, err := getStudy(ctx, q, name)
	if err != nil {
		return nil, nil, err
	}
	ids, err := queuedIDs(ctx, q, st.ID, limit, b.rowLock(true))
	if err != nil {
		return nil, nil, err
	}
	return st, ids, nil
}
func (b *sqliteBackend) rowLock(bool) string { return "" }
func (b *sqliteBackend) optimisticAsk() bool { return true }

// directTell: a SQLite tell stamps the study row, so it needs a transaction.
func (b *sqliteBackend) directTell() (querier, string) { return nil, "" }

// transactionID: an embedded SQLite file loses no commit answers.
func (b *sqliteBackend) transactionID(context.Context, tx) (int64, error) { return 0, nil }

func (b *sqliteBackend) commitOutcome(context.Context, int64) (bool, bool) { return false, false }

// lostConnection: an embedded SQLite file has no connection to lose.
func (b *sqliteBackend) lostConnection(error) bool { return false }

func (b *sqliteBackend) isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

// unavailable: SQLITE_BUSY or SQLITE_LOCKED after the busy timeout: another
// process holds the database's lock (a long write, a backup, a checkpoint).
func (b *sqliteBackend) unavailable(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}

// storageFull: SQLITE_FULL, a full disk or PRAGMA max_page_count reached
// (the primary code is the low byte of an extended code).
func (b *sqliteBackend) storageFull(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
}

func (b *sqliteBackend) close() error {
	b.closeOnce.Do(func() {
		if b.stop != nil {
			close(b.stop)
			<-b.stopped
		}
	})
	var errs []error
	for _, m := range []map[string]*sql.Stmt{b.writeStmts, b.readStmts} {
		for _, st := range m {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(append(errs, b.write.Close(), b.read.Close())...)
}

// sqlTx adapts database/sql to querier; statements found in stmts run
// prepared.
type sqlTx struct {
	t     *sql.Tx
	stmts map[string]*sql.Stmt
	// bound are the transaction's copies of the statements of stmts, made
	// on first use and reused: database/sql keeps every copy it makes
	// until the transaction ends, so a copy per call would hold memory
	// for each statement run, which grows with an import's trials.
	bound map[string]*sql.Stmt
}

// stmt returns the transaction's copy of a prepared statement, nil for a
// statement that is not prepared.
func (t sqlTx) stmt(ctx context.Context, q string) *sql.Stmt {
	if st, ok := t.bound[q]; ok {
		return st
	}
	if st, ok := t.stmts[q]; ok {
		bound := t.t.StmtContext(ctx, st)
		t.bound[q] = bound
		return bound
	}
	return nil
}

func (t sqlTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if st := t.stmt(ctx, q); st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = t.t.ExecContext(ctx, q, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t sqlTx) queryRow(ctx context.Context, q string, args ...any) func(dest ...any) error {
	var row *sql.Row
	if st := t.stmt(ctx, q); st != nil {
		row = st.QueryRowContext(ctx, args...)
	} else {
		row = t.t.QueryRowContext(ctx, q, args...)
	}
	return func(dest ...any) error {
		err := row.Scan(dest...)
		if errors.Is(err, sql.ErrNoRows) {
			return errNoRows
		}
		return err
	}
}

func (t sqlTx) query(ctx context.Context, q string, args ...any) (rows, error) {
	var r *sql.Rows
	var err error
	if st := t.stmt(ctx, q); st != nil {
		r, err = st.QueryContext(ctx, args...)
	} else {
		r, err = t.t.QueryContext(ctx, q, args...)
	}
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

func (t sqlTx) commit(context.Context) error { return t.t.Commit() }
func (t sqlTx) rollback(context.Context)     { _ = t.t.Rollback() }

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

const qTrialVersionSQLite = `UPDATE studies SET version = version + 1 WHERE id = $1 RETURNING version`

func (b *sqliteBackend) nextVersion(ctx context.Context, q querier, studyID int64) (int64, error) {
	var v int64
	err := q.queryRow(ctx, qTrialVersionSQLite, studyID)(&v)
	return v, err
}

func (b *sqliteBackend) orderedVersions() bool { return true }

func (b *sqliteBackend) insertTrials(ctx context.Context, q querier, rows []trialRow) ([]*Trial, error) {
	return insertTrialsEach(ctx, q, rows)
}

// watchQuery passes the listed numbers as one JSON array, so that the
// statement's text does not depend on how many there are.
func (b *sqliteBackend) watchQuery(numbers []int64) (string, any, error) {
	list, err := json.Marshal(numbers)
	if err != nil {
		return "", nil, err
	}
	return qWatch, string(list), nil
}
