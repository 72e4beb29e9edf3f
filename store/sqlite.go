package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations
var migrations embed.FS

// sqliteBackend keeps one pool for writes, whose transactions begin
// IMMEDIATE (they take the write lock at BEGIN, so two writers never deadlock
// upgrading read locks), and one for reads, which see a WAL snapshot.
type sqliteBackend struct {
	write, read *sql.DB
}

// OpenSQLite opens (creating if needed) a SQLite database file in WAL mode
// and applies migrations.
func OpenSQLite(ctx context.Context, file string) (Store, error) {
	file = strings.TrimPrefix(file, "file:")
	if file == "" || strings.ContainsAny(file, "?#") {
		return nil, fmt.Errorf("store: sqlite: bad file name %q", file)
	}
	base := "file:" + (&url.URL{Path: file}).EscapedPath() +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"
	write, err := sql.Open("sqlite", base+"&_txlock=immediate")
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
	b := &sqliteBackend{write: write, read: read}
	s := &sqlStore{b: b}
	if err := s.withTx(ctx, true, func(q tx) error { return migrate(ctx, q, migrations, "migrations/sqlite") }); err != nil {
		b.close()
		return nil, fmt.Errorf("store: sqlite %s: %w", file, err)
	}
	return s, nil
}

func (b *sqliteBackend) name() string { return "sqlite" }

func (b *sqliteBackend) begin(ctx context.Context, write bool) (tx, error) {
	db := b.read
	if write {
		db = b.write
	}
	t, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: !write})
	if err != nil {
		return nil, err
	}
	return sqlTx{t}, nil
}

func (b *sqliteBackend) lockStudy(context.Context, querier, int64) error { return nil }
func (b *sqliteBackend) rowLock(bool) string                             { return "" }
func (b *sqliteBackend) optimisticAsk() bool                             { return true }

func (b *sqliteBackend) isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

func (b *sqliteBackend) close() error {
	return errors.Join(b.write.Close(), b.read.Close())
}

// sqlTx adapts database/sql to querier.
type sqlTx struct{ t *sql.Tx }

func (t sqlTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.t.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t sqlTx) queryRow(ctx context.Context, q string, args ...any) func(dest ...any) error {
	row := t.t.QueryRowContext(ctx, q, args...)
	return func(dest ...any) error {
		err := row.Scan(dest...)
		if errors.Is(err, sql.ErrNoRows) {
			return errNoRows
		}
		return err
	}
}

func (t sqlTx) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := t.t.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

func (t sqlTx) commit(context.Context) error { return t.t.Commit() }
func (t sqlTx) rollback(context.Context)     { _ = t.t.Rollback() }

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

func (b *sqliteBackend) nextVersion(ctx context.Context, q querier, studyID int64) (int64, error) {
	var v int64
	err := q.queryRow(ctx, `UPDATE studies SET version = version + 1 WHERE id = $1 RETURNING version`, studyID)(&v)
	return v, err
}

func (b *sqliteBackend) orderedVersions() bool { return true }
