package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// errNoRows is what both drivers' "no rows" errors are translated to.
var errNoRows = errors.New("no rows")

// querier is the part of a transaction the shared SQL code needs. Both
// backends write placeholders as $1, $2, ... (SQLite binds $NNN by position).
type querier interface {
	exec(ctx context.Context, sql string, args ...any) (int64, error)
	queryRow(ctx context.Context, sql string, args ...any) func(dest ...any) error
	query(ctx context.Context, sql string, args ...any) (rows, error)
}

type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type tx interface {
	querier
	commit(ctx context.Context) error
	rollback(ctx context.Context)
}

// backend holds what differs between SQLite and PostgreSQL.
type backend interface {
	name() string
	begin(ctx context.Context, write bool) (tx, error)
	// lockStudy serializes trial creation for one study until the
	// transaction ends (an advisory lock in PostgreSQL; SQLite's immediate
	// transactions already hold the database's write lock).
	lockStudy(ctx context.Context, q querier, studyID int64) error
	// lockForAsk takes the ask lock of the study of that name (as
	// lockStudy), then reads the study and the ids of up to limit queued
	// trials, row-locked for claiming: on PostgreSQL the three statements
	// go in one round trip, and each still runs after the one before, so
	// the study read sees every trial created before the lock was granted.
	lockForAsk(ctx context.Context, q querier, name string, limit int) (*Study, []int64, error)
	// rowLock is appended to SELECTs of trial rows that will be updated.
	rowLock(skipLocked bool) string
	// nextVersion stamps one change of a study's trials. SQLite counts on
	// the study row (writers are serialized anyway, so versions follow
	// commit order); PostgreSQL draws from a sequence, so that concurrent
	// tells never queue on one row while each commits.
	nextVersion(ctx context.Context, q querier, studyID int64) (int64, error)
	// orderedVersions reports whether versions become visible in order.
	orderedVersions() bool
	// optimisticAsk: propose outside the write transaction and check for
	// concurrent trial creation afterwards (SQLite, where holding the write
	// lock through a proposal would stall every tell).
	optimisticAsk() bool
	isUniqueViolation(err error) bool
	// storageFull reports whether err means the disk or the database's size
	// limit is full.
	storageFull(err error) bool
	// unavailable reports whether err means the database cannot be
	// reached or stays locked: an outage, which ends by itself.
	unavailable(err error) bool
	// lostConnection reports whether err means the connection died before
	// the transaction committed (the server rolled it back), so the whole
	// transaction can run again on a fresh connection.
	lostConnection(err error) bool
	// transactionID returns an id by which commitOutcome can later tell
	// whether the write transaction t committed; 0 when the backend has
	// no use for one (an embedded SQLite file loses no commit answers).
	transactionID(ctx context.Context, t tx) (int64, error)
	// commitOutcome asks, on a fresh connection, whether the transaction
	// xid committed; known is false when that cannot be told (soon enough).
	commitOutcome(ctx context.Context, xid int64) (committed, known bool)
	// directTell, when q is not nil, runs a tell of a trial that is not
	// finished yet as the single statement sql (see qTellDirect).
	directTell() (q querier, sql string)
	// insertTrials inserts rows and returns them in the order given.
	insertTrials(ctx context.Context, q querier, rows []trialRow) ([]*Trial, error)
	// watchQuery is the statement of AskView.Watch and its argument $3
	// standing for the listed trial numbers.
	watchQuery(numbers []int64) (sql string, list any, err error)
	close() error
}

// sqlStore implements Store on top of a backend.
type sqlStore struct {
	b backend
}

func (s *sqlStore) Close() error { return s.b.close() }

// txMode says what a transaction does and how withTx may run it again.
type txMode int

const (
	// readTx only reads.
	readTx txMode = iota
	// writeTx writes something that must not happen twice (a new study, a
	// trial handed out). When the answer to its commit is lost with the
	// connection, the database is asked whether it committed (see
	// backend.commitOutcome); it runs again only if it did not.
	writeTx
	// idempotentTx writes what it finds not yet written (a tell, an
	// intermediate value, an expiry): when the answer to its commit is
	// lost, running it again is safe, since the second run sees what the
	// first one committed.
	idempotentTx
)

// withTx runs fn in a transaction and commits it when fn succeeds.
func (s *sqlStore) withTx(ctx context.Context, mode txMode, fn func(q tx) error) error {
	for attempt := 0; ; attempt++ {
		err := s.tryTx(ctx, mode, fn)
		var ce commitError
		if errors.As(err, &ce) {
			err = ce.err
		}
		if err == nil || ctx.Err() != nil || !s.b.lostConnection(err) {
			return s.classify(err)
		}
		// The connection died. Before the commit, the server rolled the
		// transaction back: it can run again, on a fresh connection. At the
		// commit its outcome is unknown: a writeTx asks what became of it
		// (the others can simply run again).
		if ce.err != nil && mode == writeTx {
			committed, known := false, false
			if ce.xid != 0 {
				committed, known = s.b.commitOutcome(ctx, ce.xid)
			}
			if committed {
				return nil
			}
			if !known {
				return s.classify(err)
			}
		}
		if attempt >= txRetries {
			return s.classify(err)
		}
		// Connections are usually lost together (a restarted or
		// overloaded server, an administrator): the next attempt waits a
		// little, doubling, so that it does not meet the same outage.
		select {
		case <-ctx.Done():
			return s.classify(err)
		case <-time.After(txRetryWait << attempt):
		}
	}
}

// classify marks a backend error that callers act on by its kind: a full
// disk becomes ErrStorageFull (the server answers 507), an unreachable or
// locked database ErrUnavailable (503, retry later). Every transaction
// returns its error through it.
func (s *sqlStore) classify(err error) error {
	switch {
	case err == nil:
		return nil
	case s.b.storageFull(err):
		return fmt.Errorf("%w (%w)", ErrStorageFull, err)
	case s.b.unavailable(err):
		return fmt.Errorf("%w (%w)", ErrUnavailable, err)
	}
	return err
}

// txRetries bounds how often withTx runs a transaction again after a lost
// connection, and txRetryWait is its first wait before doing so: at most
// 10+20+40+80 ms in all.
const (
	txRetries   = 4
	txRetryWait = 10 * time.Millisecond
)

// commitError marks a failed commit, with the transaction's id when the
// backend gave one (backend.transactionID).
type commitError struct {
	err error
	xid int64
}

func (e commitError) Error() string { return e.err.Error() }
func (e commitError) Unwrap() error { return e.err }

func (s *sqlStore) tryTx(ctx context.Context, mode txMode, fn func(q tx) error) error {
	t, err := s.b.begin(ctx, mode != readTx)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(t); err != nil {
		t.rollback(ctx)
		return err
	}
	var xid int64
	if mode == writeTx {
		if xid, err = s.b.transactionID(ctx, t); err != nil {
			t.rollback(ctx)
			return fmt.Errorf("store: transaction id: %w", err)
		}
	}
	if err := t.commit(ctx); err != nil {
		return commitError{fmt.Errorf("store: commit: %w", err), xid}
	}
	return nil
}

// importedState checks an imported trial's state and intermediate values
// and returns its state and its intermediate values as stored.
func importedState(t ImportedTrial) (State, string, error) {
	state := t.State
	switch {
	case state == "" && t.Value != nil:
		state = Complete
	case state == "":
		state = Failed
	case state == Complete && t.Value == nil:
		return "", "", fmt.Errorf("%w: a complete trial needs a value", ErrInvalid)
	case state == Failed && t.Value != nil:
		return "", "", fmt.Errorf("%w: a failed trial has no value", ErrInvalid)
	case state != Complete && state != Failed && state != Pruned:
		return "", "", fmt.Errorf("%w: an imported trial is complete, failed or pruned, not %q", ErrInvalid, state)
	}
	sorted := make([]Intermediate, 0, len(t.Intermediate))
	for _, iv := range t.Intermediate {
		if err := checkFinite("intermediate value", iv.Value); err != nil {
			return "", "", fmt.Errorf("step %d: %w", iv.Step, err)
		}
		if iv.Step < 0 {
			return "", "", fmt.Errorf("%w: step %d is negative", ErrInvalid, iv.Step)
		}
		sorted = withIntermediate(sorted, iv.Step, iv.Value)
	}
	if len(sorted) != len(t.Intermediate) {
		return "", "", fmt.Errorf("%w: a step appears twice among the intermediate values", ErrInvalid)
	}
	inter, err := marshalJSON(sorted, "[]")
	if err != nil {
		return "", "", fmt.Errorf("%w: intermediate values: %v", ErrInvalid, err)
	}
	return state, inter, nil
}

// migrate applies the numbered .sql files of dir that the schema_version
// table does not list yet, all in the caller's transaction (which holds a
// lock so that concurrent servers do not migrate twice).
func migrate(ctx context.Context, q querier, files fs.FS, dir string) error {
	if _, err := q.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version BIGINT PRIMARY KEY, applied_us BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	var current int64
	if err := q.queryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`)(&current); err != nil {
		return fmt.Errorf("store: migrate: read schema version: %w", err)
	}
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	type step struct {
		version int64
		name    string
	}
	var steps []step
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		prefix, _, _ := strings.Cut(name, "_")
		v, err := strconv.ParseInt(prefix, 10, 64)
		if err != nil {
			return fmt.Errorf("store: migrate: file %s does not start with a version number", name)
		}
		steps = append(steps, step{v, name})
	}
	slices.SortFunc(steps, func(a, b step) int { return int(a.version - b.version) })
	for _, st := range steps {
		if st.version <= current {
			continue
		}
		body, err := fs.ReadFile(files, path.Join(dir, st.name))
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		if _, err := q.exec(ctx, string(body)); err != nil {
			return fmt.Errorf("store: migrate: %s: %w", st.name, err)
		}
		if _, err := q.exec(ctx, `INSERT INTO schema_version (version, applied_us) VALUES ($1, $2)`, st.version, micros(time.Now())); err != nil {
			return fmt.Errorf("store: migrate: record %s: %w", st.name, err)
		}
	}
	return nil
}
