package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
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

const studyColumns = `id, name, direction, space, optimizer, pruner, created_us, version, next_number, n_objectives, n_constraints`

// scanStudy reads a study row. Its Version is the row's counter, which only
// SQLite maintains; the public methods replace it by the highest trial
// version.
func scanStudy(scan func(dest ...any) error) (*Study, error) {
	var (
		st                   Study
		space, optim, pruner string
		created              int64
	)
	if err := scan(&st.ID, &st.Name, &st.Direction, &space, &optim, &pruner, &created, &st.Version, &st.NextNumber,
		&st.NumObjectives, &st.NumConstraints); err != nil {
		return nil, err
	}
	st.Space = []byte(space)
	st.Optimizer = []byte(optim)
	st.Pruner = []byte(pruner)
	st.CreatedAt = fromMicros(created)
	return &st, nil
}

const qStudyByName = `SELECT ` + studyColumns + ` FROM studies WHERE name = $1`

func getStudy(ctx context.Context, q querier, name string) (*Study, error) {
	st, err := scanStudy(q.queryRow(ctx, qStudyByName, name))
	if errors.Is(err, errNoRows) {
		return nil, fmt.Errorf("study %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: study %q: %w", name, err)
	}
	return st, nil
}

// trialColumnsOf is trialColumns qualified by a table alias.
func trialColumnsOf(alias string) string {
	cols := strings.Split(trialColumns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

var trialColumnsT = trialColumnsOf("t")

var qLockTrial = `SELECT s.id, ` + trialColumnsT + ` FROM studies s JOIN trials t ON t.study_id = s.id
		WHERE s.name = $1 AND t.number = $2`

// lockTrial reads (and in PostgreSQL row-locks) a trial by study name and
// number in one round trip.
func (s *sqlStore) lockTrial(ctx context.Context, q querier, study string, number int64) (int64, *Trial, error) {
	var studyID int64
	lock := ""
	if l := s.b.rowLock(false); l != "" {
		lock = l + " OF t"
	}
	row := q.queryRow(ctx, qLockTrial+lock, study, number)
	t, err := scanTrial(func(dest ...any) error { return row(append([]any{&studyID}, dest...)...) })
	if errors.Is(err, errNoRows) {
		if _, err := getStudy(ctx, q, study); err != nil {
			return 0, nil, err
		}
		return 0, nil, fmt.Errorf("trial %d: %w", number, ErrNotFound)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("store: trial %d: %w", number, err)
	}
	return studyID, &t, nil
}

func getTrial(ctx context.Context, q querier, studyID, number int64, lock string) (*Trial, error) {
	t, err := scanTrial(q.queryRow(ctx, `SELECT `+trialColumns+` FROM trials WHERE study_id = $1 AND number = $2`+lock, studyID, number))
	if errors.Is(err, errNoRows) {
		return nil, fmt.Errorf("trial %d: %w", number, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: trial %d: %w", number, err)
	}
	return &t, nil
}

const qReserve = `UPDATE studies SET next_number = next_number + $2
		WHERE id = $1 RETURNING next_number - $2`

// reserve takes n trial numbers; callers hold the study's ask lock.
func reserve(ctx context.Context, q querier, studyID int64, n int64) (firstNumber int64, err error) {
	err = q.queryRow(ctx, qReserve, studyID, n)(&firstNumber)
	if err != nil {
		return 0, fmt.Errorf("store: reserve trial numbers: %w", err)
	}
	return firstNumber, nil
}

// reserveVersioned reserves n numbers and stamps the change.
func (s *sqlStore) reserveVersioned(ctx context.Context, q querier, studyID int64, n int64) (version, firstNumber int64, err error) {
	if r, ok := s.b.(interface {
		reserveVersioned(ctx context.Context, q querier, studyID int64, n int64) (int64, int64, error)
	}); ok {
		return r.reserveVersioned(ctx, q, studyID, n)
	}
	if firstNumber, err = reserve(ctx, q, studyID, n); err != nil {
		return 0, 0, err
	}
	if version, err = s.b.nextVersion(ctx, q, studyID); err != nil {
		return 0, 0, fmt.Errorf("store: next version: %w", err)
	}
	return version, firstNumber, nil
}

func (s *sqlStore) stamp(ctx context.Context, q querier, studyID int64) (int64, error) {
	v, err := s.b.nextVersion(ctx, q, studyID)
	if err != nil {
		return 0, fmt.Errorf("store: next version: %w", err)
	}
	return v, nil
}

type trialRow struct {
	studyID      int64
	number       int64
	state        State
	params       string
	value        *float64
	userAttrs    string
	worker       string
	acquisition  string
	requeuedFrom *int64
	meta         string
	created      int64
	started      *int64
	deadline     *int64
	finished     *int64
	version      int64
	askKey       *string // the idempotency key of the ask that handed it out
	values       *string // objective values (JSON), nil for one objective
	constraints  *string // constraint values (JSON), nil when none
	infeasible   int     // 1 when a constraint value is above 0
}

func (r trialRow) updated() int64 { return r.created }

// insertColumns are the columns of a new trial, in trialRow.args order.
const insertColumns = `INSERT INTO trials
		(study_id, number, state, params, value, user_attrs, worker, acquisition, requeued_from, meta,
		 created_us, started_us, deadline_us, finished_us, version, updated_us, ask_key,
		 objective_values, constraint_values, infeasible) VALUES `

const qInsertTrial = insertColumns + `($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
		RETURNING ` + trialColumns

// args are the values of one row in qInsertTrial's order.
func (r trialRow) args() []any {
	if r.userAttrs == "" {
		r.userAttrs = "{}"
	}
	if r.meta == "" {
		r.meta = "{}"
	}
	return []any{r.studyID, r.number, string(r.state), r.params, r.value, r.userAttrs, r.worker, r.acquisition, r.requeuedFrom, r.meta,
		r.created, r.started, r.deadline, r.finished, r.version, r.updated(), r.askKey,
		r.values, r.constraints, r.infeasible}
}

func insertTrial(ctx context.Context, q querier, r trialRow) (*Trial, error) {
	t, err := scanTrial(q.queryRow(ctx, qInsertTrial, r.args()...))
	if err != nil {
		return nil, fmt.Errorf("store: insert trial %d: %w", r.number, err)
	}
	return &t, nil
}

func (s *sqlStore) CreateStudy(ctx context.Context, ns NewStudy) (*Study, error) {
	if err := checkNewStudy(ns); err != nil {
		return nil, fmt.Errorf("store: create study: %w", err)
	}
	var st *Study
	err := s.withTx(ctx, writeTx, func(q tx) error {
		var err error
		st, err = s.insertStudy(ctx, q, ns)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: create study: %w", err)
	}
	return st, nil
}

// insertStudy inserts a checked new study; a taken name is ErrExists.
func (s *sqlStore) insertStudy(ctx context.Context, q querier, ns NewStudy) (*Study, error) {
	optim, pruner := string(ns.Optimizer), string(ns.Pruner)
	if optim == "" {
		optim = "{}"
	}
	if pruner == "" {
		pruner = "{}"
	}
	objectives, constraints := outcomeShape(ns.Space)
	st, err := scanStudy(q.queryRow(ctx, `INSERT INTO studies (name, direction, space, optimizer, pruner, created_us, n_objectives, n_constraints)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+studyColumns,
		ns.Name, ns.Direction, string(ns.Space), optim, pruner, micros(ns.Now), objectives, constraints))
	if err != nil && s.b.isUniqueViolation(err) {
		return nil, fmt.Errorf("study %q: %w", ns.Name, ErrExists)
	}
	return st, err
}

func (s *sqlStore) Study(ctx context.Context, name string) (*Study, error) {
	var st *Study
	err := s.withTx(ctx, readTx, func(q tx) error {
		var err error
		if st, err = getStudy(ctx, q, name); err != nil {
			return err
		}
		var n, sum int64
		if err := q.queryRow(ctx, `SELECT coalesce(max(version), 0), count(*), CAST(coalesce(sum(version), 0) AS BIGINT)
			FROM trials WHERE study_id = $1`, st.ID)(&st.Version, &n, &sum); err != nil {
			return fmt.Errorf("store: study %q: %w", name, err)
		}
		st.Fingerprint = fmt.Sprintf("%d:%d:%d", st.ID, n, sum)
		return nil
	})
	return st, err
}

func (s *sqlStore) Studies(ctx context.Context) ([]StudySummary, error) {
	var out []StudySummary
	err := s.withTx(ctx, readTx, func(q tx) error {
		r, err := q.query(ctx, `SELECT `+studyColumns+` FROM studies ORDER BY name`)
		if err != nil {
			return err
		}
		index := map[int64]int{}
		for r.Next() {
			st, err := scanStudy(r.Scan)
			if err != nil {
				r.Close()
				return err
			}
			index[st.ID] = len(out)
			out = append(out, StudySummary{Study: *st, Counts: map[State]int{}})
		}
		r.Close()
		if err := r.Err(); err != nil {
			return err
		}
		r, err = q.query(ctx, `SELECT study_id, state, count(*), max(version) FROM trials GROUP BY study_id, state`)
		if err != nil {
			return err
		}
		for r.Next() {
			var id, n, v int64
			var state string
			if err := r.Scan(&id, &state, &n, &v); err != nil {
				r.Close()
				return err
			}
			if i, ok := index[id]; ok {
				out[i].Counts[State(state)] = int(n)
				out[i].Version = max(out[i].Version, v)
			}
		}
		r.Close()
		if err := r.Err(); err != nil {
			return err
		}
		r, err = q.query(ctx, `SELECT study_id, min(value), max(value) FROM trials WHERE state = 'complete' AND infeasible = 0 GROUP BY study_id`)
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var id int64
			var lo, hi float64
			if err := r.Scan(&id, &lo, &hi); err != nil {
				return err
			}
			if i, ok := index[id]; ok {
				best := lo
				if out[i].Direction == "maximize" {
					best = hi
				}
				out[i].Best = &best
			}
		}
		return r.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: list studies: %w", err)
	}
	return out, nil
}

func (s *sqlStore) DeleteStudy(ctx context.Context, name string) error {
	return s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, name)
		if err != nil {
			return err
		}
		if err := s.b.lockStudy(ctx, q, st.ID); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `DELETE FROM intermediate_values WHERE study_id = $1`, st.ID); err != nil {
			return fmt.Errorf("store: delete intermediate values of %q: %w", name, err)
		}
		if _, err := q.exec(ctx, `DELETE FROM trials WHERE study_id = $1`, st.ID); err != nil {
			return fmt.Errorf("store: delete trials of %q: %w", name, err)
		}
		if _, err := q.exec(ctx, `DELETE FROM studies WHERE id = $1`, st.ID); err != nil {
			return fmt.Errorf("store: delete study %q: %w", name, err)
		}
		return nil
	})
}

// encodeTrial checks a trial given from outside and encodes its parameters
// and user attributes for storage.
func encodeTrial(params map[string]any, value *float64, userAttrs map[string]any) (p, attrs string, err error) {
	if params == nil {
		return "", "", fmt.Errorf("%w: no params", ErrInvalid)
	}
	if value != nil {
		if err := checkFinite("value", *value); err != nil {
			return "", "", err
		}
	}
	if p, err = marshalJSON(params, "{}"); err != nil {
		return "", "", fmt.Errorf("%w: params: %v", ErrInvalid, err)
	}
	if err := checkAttrs(userAttrs); err != nil {
		return "", "", err
	}
	if attrs, err = marshalJSON(userAttrs, "{}"); err != nil {
		return "", "", fmt.Errorf("%w: user attributes: %v", ErrInvalid, err)
	}
	return p, attrs, nil
}

func (s *sqlStore) AddTrial(ctx context.Context, study string, nt NewTrial) (*Trial, error) {
	params, attrs, err := encodeTrial(nt.Params, nt.Value, nt.UserAttrs)
	if err != nil {
		return nil, fmt.Errorf("store: add trial: %w", err)
	}
	vals, cons, infeasible, err := encodeOutcome(nt.Value, nt.Values, nt.Constraints)
	if err != nil {
		return nil, fmt.Errorf("store: add trial: %w", err)
	}
	var out *Trial
	err = s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		if err := s.b.lockStudy(ctx, q, st.ID); err != nil {
			return err
		}
		if nt.Value != nil {
			if err := st.checkShape(nt.Values, nt.Constraints); err != nil {
				return err
			}
		}
		v, num, err := s.reserveVersioned(ctx, q, st.ID, 1)
		if err != nil {
			return err
		}
		row := trialRow{studyID: st.ID, number: num, state: Pending, params: params, userAttrs: attrs,
			acquisition: "enqueued", created: micros(nt.Now), version: v}
		if nt.Value != nil {
			now := micros(nt.Now)
			row.state, row.value, row.acquisition, row.finished = Complete, nt.Value, "imported", &now
			row.values, row.constraints, row.infeasible = vals, cons, infeasible
		}
		out, err = insertTrial(ctx, q, row)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: add trial to %q: %w", study, err)
	}
	return out, nil
}

func (s *sqlStore) ImportStudy(ctx context.Context, ns NewStudy, trials []ImportedTrial) (*Study, error) {
	if err := checkNewStudy(ns); err != nil {
		return nil, fmt.Errorf("store: import study: %w", err)
	}
	type prepared struct {
		state                       State
		params, attrs, intermediate string
		values, constraints         *string
		infeasible                  int
	}
	rows := make([]prepared, len(trials))
	for i, t := range trials {
		var err error
		if rows[i].state, rows[i].intermediate, err = importedState(t); err != nil {
			return nil, fmt.Errorf("store: import study: trial %d: %w", i, err)
		}
		if rows[i].params, rows[i].attrs, err = encodeTrial(t.Params, t.Value, t.UserAttrs); err != nil {
			return nil, fmt.Errorf("store: import study: trial %d: %w", i, err)
		}
		if (len(t.Values) > 0 || len(t.Constraints) > 0) && rows[i].state != Complete {
			return nil, fmt.Errorf("store: import study: trial %d: %w: objective and constraint values go with a complete trial only", i, ErrInvalid)
		}
		if rows[i].values, rows[i].constraints, rows[i].infeasible, err = encodeOutcome(t.Value, t.Values, t.Constraints); err != nil {
			return nil, fmt.Errorf("store: import study: trial %d: %w", i, err)
		}
	}
	var st *Study
	err := s.withTx(ctx, writeTx, func(q tx) error {
		var err error
		st, err = s.insertStudy(ctx, q, ns)
		if err != nil || len(trials) == 0 {
			return err
		}
		for i, t := range trials {
			if rows[i].state == Complete {
				if err := st.checkShape(t.Values, t.Constraints); err != nil {
					return fmt.Errorf("trial %d: %w", i, err)
				}
			}
		}
		if err := s.b.lockStudy(ctx, q, st.ID); err != nil {
			return err
		}
		v, first, err := s.reserveVersioned(ctx, q, st.ID, int64(len(trials)))
		if err != nil {
			return err
		}
		for i, t := range trials {
			created, started, finished := importedTimes(t, ns.Now)
			row := trialRow{studyID: st.ID, number: first + int64(i), state: rows[i].state, params: rows[i].params,
				userAttrs: rows[i].attrs, value: t.Value, acquisition: "imported", created: created, started: started, finished: &finished, version: v,
				values: rows[i].values, constraints: rows[i].constraints, infeasible: rows[i].infeasible}
			tr, err := insertTrial(ctx, q, row)
			if err != nil {
				return err
			}
			reason := ""
			if row.state == Failed {
				reason = t.Reason
			}
			if reason != "" || len(t.Intermediate) > 0 {
				if _, err := q.exec(ctx, `UPDATE trials SET fail_reason = $2, intermediate = $3 WHERE id = $1`, tr.ID, reason, rows[i].intermediate); err != nil {
					return err
				}
			}
			if err := insertSteps(ctx, q, st.ID, row.number, t.Intermediate); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: import study: %w", err)
	}
	return st, nil
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

// stepsPerInsert bounds the rows of one insert of intermediate values (4
// parameters each, far below both databases' limits).
const stepsPerInsert = 500

// insertSteps adds a trial's intermediate values to the per-step table the
// pruners read (intermediate_values, which mirrors the trials' intermediate
// column).
func insertSteps(ctx context.Context, q querier, studyID, number int64, steps []Intermediate) error {
	for start := 0; start < len(steps); start += stepsPerInsert {
		chunk := steps[start:min(len(steps), start+stepsPerInsert)]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO intermediate_values (study_id, number, step, value) VALUES `)
		args := make([]any, 0, 4*len(chunk))
		for i, iv := range chunk {
			if i > 0 {
				sb.WriteString(", ")
			}
			n := len(args)
			fmt.Fprintf(&sb, "($%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4)
			args = append(args, studyID, number, iv.Step, iv.Value)
		}
		if _, err := q.exec(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("store: intermediate values of trial %d: %w", number, err)
		}
	}
	return nil
}

// askView reads trials for a proposer inside an ask.
type askView struct {
	b     backend
	q     querier
	study *Study
}

const qWatch = `SELECT ` + trialColumns + ` FROM trials WHERE study_id = $1
	AND (number >= $2 OR number IN (SELECT value FROM json_each($3))) ORDER BY number`

func (v *askView) Study() *Study { return v.study }

func (v *askView) Ordered() bool { return v.b.orderedVersions() }

func (v *askView) Watch(ctx context.Context, numbers []int64, from int64) ([]Trial, error) {
	q, list, err := v.b.watchQuery(numbers)
	if err != nil {
		return nil, fmt.Errorf("store: watched trials: %w", err)
	}
	r, err := v.q.query(ctx, q, v.study.ID, from, list)
	if err != nil {
		return nil, fmt.Errorf("store: watched trials: %w", err)
	}
	defer r.Close()
	var out []Trial
	for r.Next() {
		t, err := scanTrial(r.Scan)
		if err != nil {
			return nil, fmt.Errorf("store: watched trials: %w", err)
		}
		out = append(out, t)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("store: watched trials: %w", err)
	}
	return out, nil
}

func (v *askView) Changed(ctx context.Context, since int64) ([]Trial, int64, error) {
	r, err := v.q.query(ctx, `SELECT `+trialColumns+` FROM trials WHERE study_id = $1 AND version > $2 ORDER BY number`, v.study.ID, since)
	if err != nil {
		return nil, since, fmt.Errorf("store: changed trials: %w", err)
	}
	defer r.Close()
	var out []Trial
	maxV := since
	for r.Next() {
		t, err := scanTrial(r.Scan)
		if err != nil {
			return nil, since, fmt.Errorf("store: changed trials: %w", err)
		}
		maxV = max(maxV, t.Version)
		out = append(out, t)
	}
	if err := r.Err(); err != nil {
		return nil, since, fmt.Errorf("store: changed trials: %w", err)
	}
	return out, maxV, nil
}

const (
	qClaimSelect = `SELECT id FROM trials WHERE study_id = $1 AND state = 'pending' ORDER BY number LIMIT $2`
	qClaimUpdate = `UPDATE trials SET state = 'running', worker = $2, started_us = $3, deadline_us = $4, version = $5, updated_us = $3,
		ask_key = $6 WHERE id = $1 RETURNING ` + trialColumns
	qPendingExists = `SELECT EXISTS (SELECT 1 FROM trials WHERE study_id = $1 AND state = 'pending')`
	qOverdueCount  = `SELECT count(*) FROM trials WHERE study_id = $1 AND state = 'running'
			AND deadline_us IS NOT NULL AND deadline_us < $2`
	qTellUpdate = `UPDATE trials SET state = $2, value = $3, fail_reason = $4, user_attrs = $5,
			finished_us = $6, version = $7, updated_us = $6, objective_values = $8, constraint_values = $9, infeasible = $10
			WHERE id = $1 RETURNING ` + trialColumns
)

// claim hands the oldest pending trials to the first workers of reqs (as
// many as are queued) and returns them.
func (s *sqlStore) claim(ctx context.Context, q querier, st *Study, reqs []AskRequest) ([]*Trial, error) {
	ids, err := queuedIDs(ctx, q, st.ID, len(reqs), s.b.rowLock(true))
	if err != nil {
		return nil, err
	}
	return s.claimIDs(ctx, q, st, reqs, ids)
}

// queuedIDs selects the ids of up to limit queued trials of a study, oldest
// first, with rowLock appended to the selection.
func queuedIDs(ctx context.Context, q querier, studyID int64, limit int, rowLock string) ([]int64, error) {
	r, err := q.query(ctx, qClaimSelect+rowLock, studyID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: claim pending trials: %w", err)
	}
	ids, err := scanIDs(r)
	if err != nil {
		return nil, fmt.Errorf("store: claim pending trials: %w", err)
	}
	return ids, nil
}

// scanIDs reads and closes a result of one integer column.
func scanIDs(r rows) ([]int64, error) {
	defer r.Close()
	var ids []int64
	for r.Next() {
		var id int64
		if err := r.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, r.Err()
}

// claimIDs hands the queued trials ids (selected and row-locked by the
// caller, at most one per request) to the first requests.
func (s *sqlStore) claimIDs(ctx context.Context, q querier, st *Study, reqs []AskRequest, ids []int64) ([]*Trial, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > len(reqs) {
		return nil, fmt.Errorf("store: claim: %d queued trials for %d asks", len(ids), len(reqs))
	}
	v, err := s.stamp(ctx, q, st.ID)
	if err != nil {
		return nil, err
	}
	out := make([]*Trial, len(ids))
	for i, id := range ids {
		req := reqs[i]
		now := micros(req.Now)
		t, err := scanTrial(q.queryRow(ctx, qClaimUpdate, id, req.Worker, now, deadlineMicros(req.Now, req.Timeout), v, askKey(req)))
		if err != nil {
			return nil, fmt.Errorf("store: claim pending trial: %w", err)
		}
		out[i] = &t
	}
	return out, nil
}

func (s *sqlStore) Ask(ctx context.Context, study string, req AskRequest, propose ProposeFunc) (*Trial, error) {
	if propose == nil {
		return nil, fmt.Errorf("store: ask: %w: no proposer", ErrInvalid)
	}
	out, err := s.AskBatch(ctx, study, []AskRequest{req}, func(ctx context.Context, view AskView, n int) ([]Proposal, error) {
		p, err := propose(ctx, view)
		return []Proposal{p}, err
	})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// askKey is the value stored as a trial's ask_key for req: NULL without a key.
func askKey(req AskRequest) *string {
	if req.Key == "" {
		return nil
	}
	return &req.Key
}

func (s *sqlStore) AskBatch(ctx context.Context, study string, reqs []AskRequest, propose BatchProposeFunc) ([]*Trial, error) {
	if propose == nil {
		return nil, fmt.Errorf("store: ask: %w: no proposer", ErrInvalid)
	}
	keys := map[string]bool{}
	for _, r := range reqs {
		if r.Key == "" {
			continue
		}
		if err := CheckAskKey(r.Key); err != nil {
			return nil, fmt.Errorf("store: ask %q: %w", study, err)
		}
		if keys[r.Key] {
			return nil, fmt.Errorf("store: ask %q: %w: idempotency key %q is given twice in one batch", study, ErrInvalid, r.Key)
		}
		keys[r.Key] = true
	}
	out, err := s.askBatch(ctx, study, reqs, propose)
	if err != nil && len(keys) > 0 && s.b.isUniqueViolation(err) {
		// Only ask_key can collide: trial numbers are reserved under the
		// study's ask lock. Another ask stored one of the keys meanwhile;
		// the caller looks the keys up again (AskedWith).
		err = fmt.Errorf("store: ask %q: %w: an idempotency key of this ask was stored by another ask meanwhile (%w)", study, ErrConflict, err)
	}
	return out, err
}

func (s *sqlStore) askBatch(ctx context.Context, study string, reqs []AskRequest, propose BatchProposeFunc) ([]*Trial, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	pessimistic := !s.b.optimisticAsk()
	if !pessimistic {
		out, done, err := s.askFromSnapshot(ctx, study, reqs, propose)
		if done || err != nil {
			return out, err
		}
	}
	var out []*Trial
	err := s.withTx(ctx, writeTx, func(q tx) error {
		// With the ask lock taken first, the study read next has the
		// number the proposals will get.
		st, ids, err := s.b.lockForAsk(ctx, q, study, len(reqs))
		if err != nil {
			return err
		}
		if out, err = s.claimIDs(ctx, q, st, reqs, ids); err != nil || len(out) == len(reqs) || !pessimistic {
			return err
		}
		rest := reqs[len(out):]
		props, err := callPropose(ctx, propose, &askView{b: s.b, q: q, study: st}, len(rest))
		if err != nil {
			return err
		}
		made, err := s.insertProposals(ctx, q, st, rest, props)
		if err != nil {
			return err
		}
		if err := s.restartClaims(ctx, q, out, reqs, made[0].Version); err != nil {
			return err
		}
		out = append(out, made...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: ask %q: %w", study, err)
	}
	if len(out) == len(reqs) {
		return out, nil
	}
	// Optimistic path (SQLite): the claims above are committed; propose
	// from a read snapshot, then insert only if no trial was created
	// meanwhile, so the proposals saw every pending trial.
	rest := reqs[len(out):]
	var snapshot *Study
	var props []Proposal
	err = s.withTx(ctx, readTx, func(q tx) error {
		var err error
		if snapshot, err = getStudy(ctx, q, study); err != nil {
			return err
		}
		props, err = callPropose(ctx, propose, &askView{b: s.b, q: q, study: snapshot}, len(rest))
		return err
	})
	if err != nil {
		return out, fmt.Errorf("store: ask %q: %w", study, err)
	}
	conflict := false
	err = s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		if st.ID != snapshot.ID || st.NextNumber != snapshot.NextNumber {
			conflict = true
			return fmt.Errorf("%w: trials were created while proposing", ErrConflict)
		}
		made, err := s.insertProposals(ctx, q, st, rest, props)
		if err != nil {
			return err
		}
		if err := s.restartClaims(ctx, q, out, reqs, made[0].Version); err != nil {
			return err
		}
		out = append(out, made...)
		return nil
	})
	if !conflict {
		if err != nil {
			return out, fmt.Errorf("store: ask %q: %w", study, err)
		}
		return out, nil
	}
	// Another process created trials meanwhile. Propose again inside the
	// write transaction, which holds SQLite's write lock, so this attempt
	// cannot be overtaken: a busy pair of processes always makes progress.
	err = s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		claimed, err := s.claim(ctx, q, st, rest)
		if err != nil {
			return err
		}
		rest2 := rest[len(claimed):]
		var made []*Trial
		if len(rest2) > 0 {
			if st, err = getStudy(ctx, q, study); err != nil {
				return err
			}
			props, err := callPropose(ctx, propose, &askView{b: s.b, q: q, study: st}, len(rest2))
			if err != nil {
				return err
			}
			if made, err = s.insertProposals(ctx, q, st, rest2, props); err != nil {
				return err
			}
			// Every claim of the batch, this transaction's and the
			// first one's, is handed out now.
			claimed = append(out, claimed...)
			if err := s.restartClaims(ctx, q, claimed, reqs, made[0].Version); err != nil {
				return err
			}
			out = append(claimed, made...)
			return nil
		}
		out = append(append(out, claimed...), made...)
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("store: ask %q: %w", study, err)
	}
	return out, nil
}

// qAskedWith reads the trials that asks with idempotency keys handed out
// ($1: the keys as a JSON array).
var qAskedWith = `SELECT s.name, t.ask_key, ` + trialColumnsT + ` FROM trials t JOIN studies s ON s.id = t.study_id
	WHERE t.ask_key IN (SELECT value FROM json_each($1))`

// qAskedWithPG is qAskedWith for PostgreSQL, which has no json_each of text.
var qAskedWithPG = `SELECT s.name, t.ask_key, ` + trialColumnsT + ` FROM trials t JOIN studies s ON s.id = t.study_id
	WHERE t.ask_key = ANY($1::text[])`

func (s *sqlStore) AskedWith(ctx context.Context, keys []string) (map[string]KeyedAsk, error) {
	out := map[string]KeyedAsk{}
	if len(keys) == 0 {
		return out, nil
	}
	for _, k := range keys {
		if err := CheckAskKey(k); err != nil {
			return nil, fmt.Errorf("store: asks by key: %w", err)
		}
	}
	q, list := qAskedWith, any(nil)
	if s.b.name() == "postgres" {
		q, list = qAskedWithPG, keys
	} else {
		b, err := json.Marshal(keys)
		if err != nil {
			return nil, fmt.Errorf("store: asks by key: %w", err)
		}
		list = string(b)
	}
	err := s.withTx(ctx, readTx, func(tq tx) error {
		r, err := tq.query(ctx, q, list)
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var name, key string
			t, err := scanTrial(func(dest ...any) error { return r.Scan(append([]any{&name, &key}, dest...)...) })
			if err != nil {
				return err
			}
			out[key] = KeyedAsk{Study: name, Trial: t}
		}
		return r.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: asks by key: %w", err)
	}
	return out, nil
}

// askFromSnapshot is the common case of an optimistic ask: nothing is
// queued, so the whole batch is proposed from a read snapshot and inserted
// in one short write transaction, provided that the study's next trial
// number has not moved and the queue is still empty (a released trial
// rejoins the queue without a new number). done is false when the caller
// must take the general path: the queue was not empty, or trials were
// created or released meanwhile.
func (s *sqlStore) askFromSnapshot(ctx context.Context, study string, reqs []AskRequest, propose BatchProposeFunc) (out []*Trial, done bool, err error) {
	var snapshot *Study
	var props []Proposal
	queued := false
	err = s.withTx(ctx, readTx, func(q tx) error {
		var err error
		if snapshot, err = getStudy(ctx, q, study); err != nil {
			return err
		}
		if err := q.queryRow(ctx, qPendingExists, snapshot.ID)(&queued); err != nil {
			return fmt.Errorf("store: queued trials: %w", err)
		}
		if queued {
			return nil
		}
		props, err = callPropose(ctx, propose, &askView{b: s.b, q: q, study: snapshot}, len(reqs))
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: ask %q: %w", study, err)
	}
	if queued {
		return nil, false, nil
	}
	moved := false
	err = s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		if st.ID != snapshot.ID || st.NextNumber != snapshot.NextNumber {
			moved = true
			return nil
		}
		if err := q.queryRow(ctx, qPendingExists, st.ID)(&moved); err != nil {
			return fmt.Errorf("store: queued trials: %w", err)
		}
		if moved {
			return nil
		}
		out, err = s.insertProposals(ctx, q, st, reqs, props)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: ask %q: %w", study, err)
	}
	return out, !moved, nil
}

func callPropose(ctx context.Context, propose BatchProposeFunc, view AskView, n int) ([]Proposal, error) {
	props, err := propose(ctx, view, n)
	if err != nil {
		return nil, err
	}
	if len(props) != n {
		return nil, fmt.Errorf("%w: proposer returned %d proposals for %d asks", ErrInvalid, len(props), n)
	}
	return props, nil
}

// insertProposals stores proposals as running trials numbered from
// st.NextNumber, one per request.
func (s *sqlStore) insertProposals(ctx context.Context, q querier, st *Study, reqs []AskRequest, props []Proposal) ([]*Trial, error) {
	rows := make([]trialRow, len(props))
	for i, prop := range props {
		if prop.Params == nil {
			return nil, fmt.Errorf("%w: proposer returned no params", ErrInvalid)
		}
		params, err := marshalJSON(prop.Params, "{}")
		if err != nil {
			return nil, fmt.Errorf("%w: proposed params: %v", ErrInvalid, err)
		}
		meta := "{}"
		if len(prop.Meta) > 0 {
			var obj map[string]any
			if err := json.Unmarshal(prop.Meta, &obj); err != nil {
				return nil, fmt.Errorf("%w: proposal meta must be a JSON object: %v", ErrInvalid, err)
			}
			meta = string(prop.Meta)
		}
		handOut := reqs[i].Now
		if reqs[i].HandOut != nil {
			handOut = reqs[i].HandOut()
		}
		now := micros(handOut)
		rows[i] = trialRow{studyID: st.ID, state: Running, params: params, meta: meta,
			worker: reqs[i].Worker, acquisition: prop.Acquisition, created: now, started: &now,
			deadline: deadlineMicros(handOut, reqs[i].Timeout), askKey: askKey(reqs[i])}
	}
	v, first, err := s.reserveVersioned(ctx, q, st.ID, int64(len(rows)))
	if err != nil {
		return nil, err
	}
	if first != st.NextNumber {
		return nil, fmt.Errorf("%w: trial number %d was taken while proposing", ErrConflict, st.NextNumber)
	}
	for i := range rows {
		rows[i].number, rows[i].version = first+int64(i), v
	}
	return s.b.insertTrials(ctx, q, rows)
}

// insertTrialsEach inserts rows one statement each: the way for SQLite,
// where a statement is a function call and this one is prepared.
func insertTrialsEach(ctx context.Context, q querier, rows []trialRow) ([]*Trial, error) {
	out := make([]*Trial, len(rows))
	for i, r := range rows {
		var err error
		if out[i], err = insertTrial(ctx, q, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *sqlStore) Expire(ctx context.Context, study string, now time.Time) ([]Trial, error) {
	var out []Trial
	// A cheap read first: the common case has nothing overdue and then needs
	// neither the write lock nor the study's ask lock.
	var overdueCount int64
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		return q.queryRow(ctx, qOverdueCount, st.ID, micros(now))(&overdueCount)
	})
	if err != nil || overdueCount == 0 {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("store: %w", err) // the study: say so, not what was being done
		}
		if err != nil {
			return nil, fmt.Errorf("store: expire trials of %q: %w", study, err)
		}
		return nil, nil
	}
	err = s.withTx(ctx, idempotentTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		if err := s.b.lockStudy(ctx, q, st.ID); err != nil {
			return err
		}
		r, err := q.query(ctx, `SELECT `+trialColumns+` FROM trials WHERE study_id = $1 AND state = 'running'
			AND deadline_us IS NOT NULL AND deadline_us < $2 ORDER BY number`+s.b.rowLock(true), st.ID, micros(now))
		if err != nil {
			return err
		}
		var overdue []Trial
		for r.Next() {
			t, err := scanTrial(r.Scan)
			if err != nil {
				r.Close()
				return err
			}
			overdue = append(overdue, t)
		}
		r.Close()
		if err := r.Err(); err != nil {
			return err
		}
		if len(overdue) == 0 {
			return nil
		}
		v, first, err := s.reserveVersioned(ctx, q, st.ID, int64(len(overdue)))
		if err != nil {
			return err
		}
		nowUS := micros(now)
		for i, t := range overdue {
			if _, err := q.exec(ctx, `UPDATE trials SET state = 'expired', finished_us = $2, version = $3, updated_us = $2, ask_key = NULL WHERE id = $1`, t.ID, nowUS, v); err != nil {
				return err
			}
			params, err := marshalJSON(t.Params, "{}")
			if err != nil {
				return err
			}
			from := t.Number
			if _, err := insertTrial(ctx, q, trialRow{studyID: st.ID, number: first + int64(i), state: Pending, params: params,
				acquisition: "requeue", requeuedFrom: &from, meta: string(t.Meta), created: nowUS, version: v}); err != nil {
				return err
			}
			t.State, t.FinishedAt, t.Version = Expired, optMicros(&nowUS), v
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: expire trials of %q: %w", study, err)
	}
	return out, nil
}

func (s *sqlStore) Tell(ctx context.Context, study string, number int64, r Result) (*Trial, bool, error) {
	if err := checkResult(r); err != nil {
		return nil, false, fmt.Errorf("store: tell trial %d: %w", number, err)
	}
	// A pruned trial's value may be its last intermediate value, which
	// the transaction below reads.
	vals, cons, infeasible, err := encodeOutcome(&r.Value, r.Values, r.Constraints)
	if err != nil {
		return nil, false, fmt.Errorf("store: tell trial %d: %w", number, err)
	}
	if q, sql := s.b.directTell(); q != nil && len(r.UserAttrs) == 0 && r.State != Pruned && vals == nil && cons == nil {
		var value *float64
		if r.State == Complete {
			value = &r.Value
		}
		t, err := scanTrial(q.queryRow(ctx, sql, study, number, string(r.State), value, r.Reason, micros(r.Now)))
		if err == nil {
			return &t, true, nil
		}
		if !errors.Is(err, errNoRows) && !s.b.lostConnection(err) {
			return nil, false, fmt.Errorf("store: tell %q trial %d: %w", study, number, s.classify(err))
		}
		// Unknown or finished, or the connection died: the transaction
		// below (retried on a fresh connection) tells which, and whether
		// a repeated tell is the same.
	}
	attrs := ""
	var out *Trial
	changed := false
	err = s.withTx(ctx, idempotentTx, func(q tx) error {
		studyID, t, err := s.lockTrial(ctx, q, study, number)
		if err != nil {
			return err
		}
		if t.State.Finished() {
			if sameOutcome(t, r) {
				// A finished trial never changes: a repeat (a retry) is
				// the same only with the attributes it was told with, or
				// some or none of them; new or other ones would be dropped
				// silently with a 200, so they are a conflict.
				merged := mergeAttrs(t.UserAttrs, r.UserAttrs)
				if reflect.DeepEqual(normalizeAttrs(merged), normalizeAttrs(t.UserAttrs)) {
					out = t
					return nil
				}
				return fmt.Errorf("%w: trial %d is already %s with other user attributes (%s); a finished trial never changes",
					ErrConflict, number, t.State, strings.Join(changedAttrs(t.UserAttrs, r.UserAttrs), ", "))
			}
			was := string(t.State)
			if t.Value != nil {
				was += " with value " + strconv.FormatFloat(*t.Value, 'g', -1, 64)
			}
			return fmt.Errorf("%w: trial %d is already %s", ErrConflict, number, was)
		}
		if attrs, err = marshalJSON(mergeAttrs(t.UserAttrs, r.UserAttrs), "{}"); err != nil {
			return fmt.Errorf("%w: user attributes: %v", ErrInvalid, err)
		}
		if r.State == Complete {
			var shape Study
			if err := q.queryRow(ctx, `SELECT n_objectives, n_constraints FROM studies WHERE id = $1`, studyID)(&shape.NumObjectives, &shape.NumConstraints); err != nil {
				return err
			}
			if err := shape.checkShape(r.Values, r.Constraints); err != nil {
				return err
			}
		}
		v, err := s.stamp(ctx, q, studyID)
		if err != nil {
			return err
		}
		tt, err := scanTrial(q.queryRow(ctx, qTellUpdate,
			t.ID, string(r.State), outcomeValue(t, r), r.Reason, attrs, micros(r.Now), v, vals, cons, infeasible))
		if err != nil {
			return err
		}
		if t.State == Expired {
			// A late tell settles the configuration: its requeued copy,
			// if still waiting, must not be run again.
			if _, err := q.exec(ctx, qRetireCopies, studyID, t.Number, micros(r.Now), v); err != nil {
				return err
			}
		}
		out, changed = &tt, true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: tell %q trial %d: %w", study, number, err)
	}
	return out, changed, nil
}

// changedAttrs names the attributes of add that old lacks or holds with
// another value, in order.
func changedAttrs(old, add map[string]any) []string {
	was, now := normalizeAttrs(old), normalizeAttrs(add)
	var keys []string
	for k, v := range now {
		if prev, ok := was[k]; !ok || !reflect.DeepEqual(prev, v) {
			keys = append(keys, strconv.Quote(k))
		}
	}
	slices.Sort(keys)
	return keys
}

// normalizeAttrs gives attributes read back from JSON and attributes as a
// client sent them one form (numbers as float64), so they compare equal.
func normalizeAttrs(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}

// qRetireCopies expires the pending requeued copies of a trial (requeued_from
// holds the trial's number).
const qRetireCopies = `UPDATE trials SET state = 'expired', finished_us = $3, version = $4, updated_us = $3
	WHERE study_id = $1 AND requeued_from = $2 AND state = 'pending'`

const qRelease = `UPDATE trials SET state = 'pending', worker = '', started_us = NULL, deadline_us = NULL,
	version = $2, updated_us = $3, ask_key = NULL WHERE id = $1 RETURNING ` + trialColumns

func (s *sqlStore) Release(ctx context.Context, study string, number int64, now time.Time) (*Trial, bool, error) {
	var out *Trial
	released := false
	err := s.withTx(ctx, idempotentTx, func(q tx) error {
		studyID, t, err := s.lockTrial(ctx, q, study, number)
		if err != nil {
			return err
		}
		if t.State != Running {
			out = t
			return nil
		}
		v, err := s.stamp(ctx, q, studyID)
		if err != nil {
			return err
		}
		tt, err := scanTrial(q.queryRow(ctx, qRelease, t.ID, v, micros(now)))
		if err != nil {
			return err
		}
		out, released = &tt, true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: release %q trial %d: %w", study, number, err)
	}
	return out, released, nil
}

func (s *sqlStore) ReportIntermediate(ctx context.Context, study string, number int64, rep Report) (*Trial, error) {
	if err := checkFinite("intermediate value", rep.Value); err != nil {
		return nil, fmt.Errorf("store: report: %w", err)
	}
	if rep.Step < 0 {
		return nil, fmt.Errorf("store: report: %w: step %d is negative", ErrInvalid, rep.Step)
	}
	var out *Trial
	err := s.withTx(ctx, idempotentTx, func(q tx) error {
		studyID, t, err := s.lockTrial(ctx, q, study, number)
		if err != nil {
			return err
		}
		if t.State.Finished() {
			return fmt.Errorf("%w: trial %d is already %s", ErrConflict, number, t.State)
		}
		inter, err := marshalJSON(withIntermediate(t.Intermediate, rep.Step, rep.Value), "[]")
		if err != nil {
			return err
		}
		deadline := t.Deadline
		var dl *int64
		if deadline != nil {
			d := micros(*deadline)
			if t.State == Running && rep.Extend > 0 {
				d = max(d, micros(rep.Now.Add(rep.Extend)))
			}
			dl = &d
		}
		v, err := s.stamp(ctx, q, studyID)
		if err != nil {
			return err
		}
		tt, err := scanTrial(q.queryRow(ctx, `UPDATE trials SET intermediate = $2, deadline_us = $3, version = $4, updated_us = $5
			WHERE id = $1 RETURNING `+trialColumns, t.ID, inter, dl, v, micros(rep.Now)))
		if err != nil {
			return err
		}
		if _, err := q.exec(ctx, qUpsertStep, studyID, t.Number, rep.Step, rep.Value); err != nil {
			return fmt.Errorf("store: intermediate value of trial %d: %w", t.Number, err)
		}
		out = &tt
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: report %q trial %d: %w", study, number, err)
	}
	return out, nil
}

// qUpsertStep records (or replaces) one intermediate value in the per-step
// table.
const qUpsertStep = `INSERT INTO intermediate_values (study_id, number, step, value) VALUES ($1, $2, $3, $4)
	ON CONFLICT (study_id, number, step) DO UPDATE SET value = excluded.value`

// qCompleteAtStep lists the study's complete trials, each with its value at
// step $2 (NULL when it has none there): the rows count the complete
// trials, and each value is one primary-key lookup, so the cost grows with
// the number of complete trials and no planner (with or without table
// statistics) reads the values of other steps.
const qCompleteAtStep = `SELECT (SELECT i.value FROM intermediate_values i
		WHERE i.study_id = t.study_id AND i.number = t.number AND i.step = $2)
	FROM trials t WHERE t.study_id = $1 AND t.state = 'complete'`

func (s *sqlStore) CompleteAtStep(ctx context.Context, study string, step int64) ([]float64, int, error) {
	var values []float64
	complete := 0
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		r, err := q.query(ctx, qCompleteAtStep, st.ID, step)
		if err != nil {
			return err
		}
		at, err := collect(r, func(v **float64) []any { return []any{v} })
		complete = len(at)
		for _, v := range at {
			if v != nil {
				values = append(values, *v)
			}
		}
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: values of %q at step %d: %w", study, step, err)
	}
	return values, complete, nil
}

// collect reads and closes a result: one value per row, scanned into the
// fields that fields names.
func collect[T any](r rows, fields func(*T) []any) ([]T, error) {
	defer r.Close()
	var out []T
	for r.Next() {
		var v T
		if err := r.Scan(fields(&v)...); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, r.Err()
}

// qFirstFromStep lists the study's trials, each with its first reported
// step at or above $2 and that step's value (NULL when it has none there),
// each found by a seek in the primary key (study_id, number, step): the
// cost grows with the number of trials, not with the number of values they
// reported.
const qFirstFromStep = `SELECT t.number,
	(SELECT j.step FROM intermediate_values j
		WHERE j.study_id = t.study_id AND j.number = t.number AND j.step >= $2 ORDER BY j.step LIMIT 1),
	(SELECT j.value FROM intermediate_values j
		WHERE j.study_id = t.study_id AND j.number = t.number AND j.step >= $2 ORDER BY j.step LIMIT 1)
	FROM trials t WHERE t.study_id = $1 ORDER BY t.number`

func (s *sqlStore) FirstFromStep(ctx context.Context, study string, step int64) ([]StepValue, error) {
	var out []StepValue
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		r, err := q.query(ctx, qFirstFromStep, st.ID, step)
		if err != nil {
			return err
		}
		type row struct {
			number int64
			step   *int64
			value  *float64
		}
		all, err := collect(r, func(v *row) []any { return []any{&v.number, &v.step, &v.value} })
		for _, a := range all {
			if a.step != nil && a.value != nil {
				out = append(out, StepValue{Number: a.number, Step: *a.step, Value: *a.value})
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: first values of %q from step %d: %w", study, step, err)
	}
	return out, nil
}

func (s *sqlStore) Trial(ctx context.Context, study string, number int64) (*Trial, error) {
	var out *Trial
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		out, err = getTrial(ctx, q, st.ID, number, "")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: %q: %w", study, err)
	}
	return out, nil
}

func (s *sqlStore) Trials(ctx context.Context, study string, tq TrialQuery) ([]Trial, int, error) {
	if err := checkQuery(tq); err != nil {
		return nil, 0, fmt.Errorf("store: list trials: %w", err)
	}
	var out []Trial
	total := 0
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		where := ` FROM trials WHERE study_id = $1 AND version > $2`
		args := []any{st.ID, tq.SinceVersion}
		if len(tq.States) > 0 {
			marks := make([]string, len(tq.States))
			for i, state := range tq.States {
				args = append(args, string(state))
				marks[i] = "$" + strconv.Itoa(len(args))
			}
			where += ` AND state IN (` + strings.Join(marks, ", ") + `)`
		}
		var n int64
		if err := q.queryRow(ctx, `SELECT count(*)`+where, args...)(&n); err != nil {
			return err
		}
		total = int(n)
		page := where + ` ORDER BY number`
		if tq.Limit > 0 {
			page += ` LIMIT ` + strconv.Itoa(tq.Limit)
		} else if tq.Offset > 0 {
			page += ` LIMIT -1`
			if s.b.name() == "postgres" {
				page = where + ` ORDER BY number LIMIT ALL`
			}
		}
		if tq.Offset > 0 {
			page += ` OFFSET ` + strconv.Itoa(tq.Offset)
		}
		r, err := q.query(ctx, `SELECT `+trialColumns+page, args...)
		if err != nil {
			return err
		}
		defer r.Close()
		out = []Trial{}
		for r.Next() {
			t, err := scanTrial(r.Scan)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return r.Err()
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: list trials of %q: %w", study, err)
	}
	return out, total, nil
}

// eventWindow is how long a PostgreSQL change may take from drawing its
// version to committing; events re-send changes this recent, so that a
// transaction that commits after a later-numbered one is never skipped.
const eventWindow = 5 * time.Second

func (s *sqlStore) Events(ctx context.Context, study string, since int64, now time.Time) ([]Trial, int64, error) {
	trials, _, err := s.Trials(ctx, study, TrialQuery{SinceVersion: since})
	if err != nil {
		return nil, since, err
	}
	next := since
	if s.b.orderedVersions() {
		for _, t := range trials {
			next = max(next, t.Version)
		}
		return trials, next, nil
	}
	// Advance over the prefix (in version order) of changes old enough to
	// be settled: a younger change may still have a smaller-numbered
	// transaction in flight behind it.
	horizon := micros(now.Add(-eventWindow))
	byVersion := slices.Clone(trials)
	slices.SortFunc(byVersion, func(a, b Trial) int { return cmp.Compare(a.Version, b.Version) })
	for _, t := range byVersion {
		if t.updatedUS > horizon {
			break
		}
		next = t.Version
	}
	return trials, next, nil
}

func (s *sqlStore) Read(ctx context.Context, study string, read func(ctx context.Context, view AskView) error) error {
	if read == nil {
		return fmt.Errorf("store: read %q: %w: no reader", study, ErrInvalid)
	}
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		return read(ctx, &askView{b: s.b, q: q, study: st})
	})
	if err != nil {
		return fmt.Errorf("store: read %q: %w", study, err)
	}
	return nil
}

func (s *sqlStore) Best(ctx context.Context, study string) (*Trial, error) {
	var out *Trial
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		order := "ASC"
		if st.Direction == "maximize" {
			order = "DESC"
		}
		t, err := scanTrial(q.queryRow(ctx, `SELECT `+trialColumns+` FROM trials WHERE study_id = $1 AND state = 'complete' AND infeasible = 0
			ORDER BY value `+order+`, number ASC LIMIT 1`, st.ID))
		if errors.Is(err, errNoRows) {
			return fmt.Errorf("no complete feasible trial yet: %w", ErrNotFound)
		}
		if err != nil {
			return err
		}
		out = &t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: best trial of %q: %w", study, err)
	}
	return out, nil
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
