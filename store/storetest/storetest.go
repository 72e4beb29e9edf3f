// Package storetest gives tests fresh stores (Open) and a private PostgreSQL
// schema: it connects to XBO_TEST_POSTGRES (default
// postgres://postgres@127.0.0.1:5432/test), creates a schema with a random
// name, returns a data source that selects it, and drops the schema when the
// test ends. When the server cannot be reached the test is skipped with a
// message, unless XBO_REQUIRE_POSTGRES=1 (then it fails), so CI, which has
// the server, cannot silently skip.
package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"xbo/store"
)

// DefaultDSN is used when XBO_TEST_POSTGRES is unset.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// PostgresDSN returns a data source for a fresh schema, dropped at cleanup.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := baseDSN()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		if os.Getenv("XBO_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PostgreSQL at %s is unreachable and XBO_REQUIRE_POSTGRES=1: %v", base, err)
		}
		t.Skipf("skipping: PostgreSQL at %s is unreachable (%v); set XBO_TEST_POSTGRES to a reachable server", base, err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("xbo_test_%d_%08x", time.Now().Unix(), rand.Uint32())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("XBO_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func baseDSN() string {
	if base := os.Getenv("XBO_TEST_POSTGRES"); base != "" {
		return base
	}
	return DefaultDSN
}

// Backends is the data source of a private schema (PostgresDSN) whose
// connections carry an application name of their own, with an
// administrator's connection that counts or terminates exactly those
// backends: connection faults for one store or server, leaving every other
// client of the database alone.
type Backends struct {
	DSN   string
	app   string
	admin *pgx.Conn
}

// NamedPostgres returns fresh Backends; the schema is dropped and the
// administrator's connection closed at cleanup.
func NamedPostgres(t testing.TB) *Backends {
	t.Helper()
	u, err := url.Parse(PostgresDSN(t))
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	app := fmt.Sprintf("xbo_test_app_%d_%08x", time.Now().Unix(), rand.Uint32())
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, baseDSN())
	if err != nil {
		t.Fatalf("storetest: administrator connection: %v", err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	return &Backends{DSN: u.String(), app: app, admin: admin}
}

// Count is the number of open connections with the DSN's application name.
func (b *Backends) Count(t testing.TB) int {
	t.Helper()
	return b.query(t, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`)
}

// Terminate ends every backend of a connection with the DSN's application
// name (pg_terminate_backend) and returns how many there were.
func (b *Backends) Terminate(t testing.TB) int {
	t.Helper()
	return b.query(t, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`)
}

func (b *Backends) query(t testing.TB, sql string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := b.admin.QueryRow(ctx, sql, b.app).Scan(&n); err != nil {
		t.Fatalf("storetest: %v", err)
	}
	return n
}

// Quantile is the q-quantile of d in milliseconds (the sample at rank
// q·(n−1), rounded down), for benchmarks' latency figures; 0 when d is
// empty.
func Quantile(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1000
}

// Open opens a fresh store of the backend ("sqlite": a file in a temporary
// directory; "postgres": a private schema, see PostgresDSN), closed at
// cleanup, and returns it with its data source.
func Open(tb testing.TB, backend string) (store.Store, string) {
	tb.Helper()
	dsn := filepath.Join(tb.TempDir(), "xbo.db")
	if backend == "postgres" {
		dsn = PostgresDSN(tb)
	}
	s, err := store.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s, dsn
}
