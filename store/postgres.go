package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// postgresBackend uses a pgx pool. Trial creation in a study is serialized by
// a transaction-scoped advisory lock keyed by the schema and the study id, so
// several servers sharing the database propose one at a time per study while
// tells (which only lock their trial row and, briefly, the study row) go on.
type postgresBackend struct {
	pool *pgxpool.Pool
}

// OpenPostgres connects to PostgreSQL and applies migrations. Any
// connection-string parameter pgx does not know (for example search_path)
// is sent to the server as a run-time parameter.
func OpenPostgres(ctx context.Context, dsn string) (Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	if cfg.MaxConns < 16 {
		cfg.MaxConns = 16
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	b := &postgresBackend{pool: pool}
	s := &sqlStore{b: b}
	err = s.withTx(ctx, idempotentTx, func(q tx) error {
		// Servers starting together must not run the migrations twice.
		if _, err := q.exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':xbo-migrate'))`); err != nil {
			return err
		}
		if err := migrate(ctx, q, migrations, "migrations/postgres"); err != nil {
			return err
		}
		return upgradeData(ctx, q)
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	return s, nil
}

func (b *postgresBackend) name() string { return "postgres" }

func (b *postgresBackend) begin(ctx context.Context, write bool) (tx, error) {
	mode := pgx.ReadWrite
	if !write {
		mode = pgx.ReadOnly
	}
	t, err := b.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: mode})
	if err != nil {
		if b.lostConnection(err) {
			// The pool handed out a connection that had died: when the
			// server terminated one backend it usually terminated all of
			// them (a restart, an administrator), and withTx's retries would
			// each draw another dead idle connection. Close them all; those
			// in use are closed when released.
			b.pool.Reset()
		}
		return nil, err
	}
	return pgTx{t: t, xid: new(int64)}, nil
}

func (b *postgresBackend) lockStudy(ctx context.Context, q querier, studyID int64) error {
	if _, err := q.exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':xbo-study'), ($1::bigint % 2147483647)::int)`, studyID); err != nil {
		return fmt.Errorf("store: lock study %d: %w", studyID, err)
	}
	return nil
}

// lockForAsk sends the lock, the study read and the selection of queued
// trials as one batch: PostgreSQL runs a batch's statements one after the
// other, each with a snapshot taken when it starts, so the reads see every
// commit made before the lock was granted, as they would in separate round
// trips. The batch also reads the transaction's id (transactionID), which
// then costs no round trip of its own.
func (b *postgresBackend) lockForAsk(ctx context.Context, q querier, name string, limit int) (*Study, []int64, error) {
	t, ok := q.(pgTx)
	if !ok {
		return nil, nil, fmt.Errorf("store: lock study %q: not in a PostgreSQL transaction", name)
	}
	sender, ok := t.t.(interface {
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	})
	if !ok {
		return nil, nil, fmt.Errorf("store: lock study %q: not in a PostgreSQL transaction", name)
	}
	batch := &pgx.Batch{}
	batch.Queue(qTransactionID)
	batch.Queue(`SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':xbo-study'), (id % 2147483647)::int)
		FROM studies WHERE name = $1`, name)
	batch.Queue(qStudyByName, name)
	batch.Queue(`SELECT t.id FROM trials t WHERE t.study_id = (SELECT id FROM studies WHERE name = $1)
		AND t.state = 'pending' ORDER BY t.number LIMIT $2 FOR UPDATE OF t SKIP LOCKED`, name, limit)
	res := sender.SendBatch(ctx, batch)
	defer res.Close()
	if err := res.QueryRow().Scan(t.xid); err != nil {
		return nil, nil, fmt.Errorf("store: lock study %q: transaction id: %w", name, err)
	}
	if _, err := res.Exec(); err != nil {
		return nil, nil, fmt.Errorf("store: lock study %q: %w", name, err)
	}
	st, err := scanStudy(res.QueryRow().Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, fmt.Errorf("study %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store: study %q: %w", name, err)
	}
	r, err := res.Query()
	if err != nil {
		return nil, nil, fmt.Errorf("store: claim pending trials: %w", err)
	}
	ids, err := scanIDs(pgRows{r})
	if err != nil {
		return nil, nil, fmt.Errorf("store: claim pending trials: %w", err)
	}
	if err := res.Close(); err != nil {
		return nil, nil, fmt.Errorf("store: lock study %q: %w", name, err)
	}
	return st, ids, nil
}

func (b *postgresBackend) rowLock(skipLocked bool) string {
	if skipLocked {
		return " FOR UPDATE SKIP LOCKED"
	}
	return " FOR UPDATE"
}

func (b *postgresBackend) optimisticAsk() bool { return false }

// lostConnection: the pool handed out a connection that had died, the
// server terminated the backend (SQLSTATE 57P01, 57P02, 57P03: admin or
// crash shutdown, cannot connect now), or the network failed.
func (b *postgresBackend) lostConnection(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne net.Error
	return pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &ne) || strings.Contains(err.Error(), "conn closed")
}

// qTransactionID gives the transaction an id (it has one once it writes)
// and returns it, with its epoch, as txid_status takes it.
const qTransactionID = `SELECT txid_current()`

func (b *postgresBackend) transactionID(ctx context.Context, t tx) (int64, error) {
	pt, ok := t.(pgTx)
	if !ok || pt.xid == nil {
		return 0, fmt.Errorf("not a PostgreSQL transaction")
	}
	if *pt.xid == 0 {
		if err := pt.queryRow(ctx, qTransactionID)(pt.xid); err != nil {
			return 0, err
		}
	}
	return *pt.xid, nil
}

// outcomeWait bounds how long commitOutcome waits for a transaction that is
// still in progress: a terminated backend rolls its transaction back within
// milliseconds, but one whose client vanished lives until the server notices
// the closed socket.
const outcomeWait = 5 * time.Second

// commitOutcome asks txid_status, on a fresh connection, whether the
// transaction xid committed (PostgreSQL keeps the answer for recent
// transactions: NULL means too old to tell).
func (b *postgresBackend) commitOutcome(ctx context.Context, xid int64) (committed, known bool) {
	deadline := time.Now().Add(outcomeWait)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var status *string
		err := b.pool.QueryRow(ctx, `SELECT txid_status($1)`, xid).Scan(&status)
		switch {
		case err == nil && status == nil:
			return false, false
		case err == nil && *status == "committed":
			return true, true
		case err == nil && *status == "aborted":
			return false, true
		case err != nil && !b.lostConnection(err):
			return false, false
		case err != nil:
			b.pool.Reset() // dead idle connections, as in begin
		}
		// "in progress", or no connection yet: ask again shortly.
		if time.Now().Add(wait).After(deadline) {
			return false, false
		}
		select {
		case <-ctx.Done():
			return false, false
		case <-time.After(wait):
		}
	}
}

func (b *postgresBackend) isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// unavailable: the server cannot be reached (a refused or failed
// connection, a connection lost), or refuses work for now: SQLSTATE class
// 08 (connection exception), 57P01–57P03 (shut down by an administrator,
// crash recovery, starting up), 53300 (too many connections).
func (b *postgresBackend) unavailable(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300"
	}
	return b.lostConnection(err)
}

// storageFull: SQLSTATE 53100 disk_full.
func (b *postgresBackend) storageFull(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "53100"
}

func (b *postgresBackend) close() error {
	b.pool.Close()
	return nil
}

// qTellDirect completes or fails an unfinished trial in one statement, with
// its own version, user attributes unchanged. It returns no row when the
// study or trial does not exist, the trial is finished already, or a
// completion needs objective or constraint values the plain tell lacks
// (the transaction then says which).
var qTellDirect = `UPDATE trials t SET state = $3, value = $4, fail_reason = $5, finished_us = $6, updated_us = $6,
	version = nextval('trial_version')
	FROM studies s WHERE s.name = $1 AND t.study_id = s.id AND t.number = $2 AND t.state NOT IN ('complete', 'failed', 'pruned', 'expired')
	AND (s.n_objectives = 1 AND s.n_constraints = 0 OR $3 <> 'complete')
	RETURNING ` + trialColumnsT

// directTell runs on the pool, outside an explicit transaction (not for an
// expired trial: its late tell also retires its waiting copy, in Tell's
// transaction): a tell is
// then one round trip instead of five (BEGIN, row lock, version, update,
// COMMIT), and still atomic, being one statement.
func (b *postgresBackend) directTell() (querier, string) { return pgTx{t: b.pool}, qTellDirect }

// pgQuerier is what pgx transactions and pools have in common.
type pgQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// pgTx adapts a pgx transaction (or, for single statements, the pool) to
// querier. xid holds a transaction's id once read (transactionID).
type pgTx struct {
	t   pgQuerier
	xid *int64
}

func (t pgTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := t.t.Exec(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (t pgTx) queryRow(ctx context.Context, q string, args ...any) func(dest ...any) error {
	row := t.t.QueryRow(ctx, q, args...)
	return func(dest ...any) error {
		err := row.Scan(dest...)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoRows
		}
		return err
	}
}

func (t pgTx) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := t.t.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgRows{r}, nil
}

func (t pgTx) commit(ctx context.Context) error { return t.t.(pgx.Tx).Commit(ctx) }
func (t pgTx) rollback(ctx context.Context)     { _ = t.t.(pgx.Tx).Rollback(context.WithoutCancel(ctx)) }

type pgRows struct{ pgx.Rows }

func (r pgRows) Close() { r.Rows.Close() }

func (b *postgresBackend) nextVersion(ctx context.Context, q querier, _ int64) (int64, error) {
	var v int64
	err := q.queryRow(ctx, `SELECT nextval('trial_version')`)(&v)
	return v, err
}

func (b *postgresBackend) orderedVersions() bool { return false }

// insertTrials inserts every row in one statement: one round trip for a
// batch of asks instead of one per trial, while the study's ask lock is
// held. (pgx prepares and caches the statement for each batch size.)
func (b *postgresBackend) insertTrials(ctx context.Context, q querier, rows []trialRow) ([]*Trial, error) {
	if len(rows) == 1 {
		return insertTrialsEach(ctx, q, rows)
	}
	var sb strings.Builder
	sb.WriteString(insertColumns)
	args := make([]any, 0, 17*len(rows))
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		ra := r.args()
		sb.WriteByte('(')
		for j := range ra {
			if j > 0 {
				sb.WriteString(", ")
			}
			sb.WriteByte('$')
			sb.WriteString(strconv.Itoa(len(args) + j + 1))
		}
		sb.WriteByte(')')
		args = append(args, ra...)
	}
	sb.WriteString(` RETURNING ` + trialColumns)
	rs, err := q.query(ctx, sb.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("store: insert %d trials: %w", len(rows), err)
	}
	defer rs.Close()
	byNumber := make(map[int64]*Trial, len(rows))
	for rs.Next() {
		t, err := scanTrial(rs.Scan)
		if err != nil {
			return nil, fmt.Errorf("store: insert %d trials: %w", len(rows), err)
		}
		byNumber[t.Number] = &t
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: insert %d trials: %w", len(rows), err)
	}
	// RETURNING promises no order.
	out := make([]*Trial, len(rows))
	for i, r := range rows {
		if out[i] = byNumber[r.number]; out[i] == nil {
			return nil, fmt.Errorf("store: insert %d trials: trial %d was not returned", len(rows), r.number)
		}
	}
	return out, nil
}

// reserveVersioned takes n trial numbers and a version in one round trip.
func (b *postgresBackend) reserveVersioned(ctx context.Context, q querier, studyID int64, n int64) (version, firstNumber int64, err error) {
	err = q.queryRow(ctx, `WITH r AS (UPDATE studies SET next_number = next_number + $2 WHERE id = $1 RETURNING next_number - $2 AS first)
		SELECT first, nextval('trial_version') FROM r`, studyID, n)(&firstNumber, &version)
	if err != nil {
		return 0, 0, fmt.Errorf("store: reserve trial numbers: %w", err)
	}
	return version, firstNumber, nil
}

const qWatchPG = `SELECT ` + trialColumns + ` FROM trials WHERE study_id = $1 AND (number >= $2 OR number = ANY($3::bigint[])) ORDER BY number`

func (b *postgresBackend) watchQuery(numbers []int64) (string, any, error) {
	if numbers == nil {
		numbers = []int64{}
	}
	return qWatchPG, numbers, nil
}
