package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"xbo/internal/heappeak"
	"xbo/store"
	"xbo/store/storetest"
)

// importRowBytes is the heap per row that docs/api.md states an import of
// a table (xbo import --csv/--json, --into or --out) may add at its peak:
// the rows are streamed, so what grows with them is next to nothing; the
// bound leaves room for the collector's timing.
const importRowBytes = 512

// writeTableRows writes a CSV table of n rows of three parameters, every
// tenth failed, without holding it.
func writeTableRows(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "lr,kind,k,value,state")
	for i := range n {
		if i%10 == 9 {
			fmt.Fprintf(w, "%g,b,%d,,failed\n", 0.001+float64(i%997)/1000, 1+i%5)
			continue
		}
		fmt.Fprintf(w, "%g,b,%d,%d,complete\n", 0.001+float64(i%997)/1000, 1+i%5, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// An import of a table into a store streams its rows (read, checked,
// written a batch at a time in one transaction), and so does one into a
// trials CSV (--out): its peak heap for 4N rows
// exceeds the one for N rows by at most importRowBytes per extra row (far
// below what holding the rows costs), and every row is stored; with
// SQLite, with PostgreSQL (skipped when no server answers) and --out.
func TestImportStreamsRows(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 75,000 rows")
	}
	const n = 5_000
	// A collection whenever the heap grows by a tenth: the peak then
	// follows what is live, not when the collector last ran.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	dir := t.TempDir()
	spaceFile := filepath.Join(dir, "space.json")
	if err := os.WriteFile(spaceFile, []byte(`{"objective": "minimize", "params": [
  {"name": "lr", "type": "float", "low": 0.001, "high": 1, "log": true},
  {"name": "kind", "type": "categorical", "choices": ["a", "b"]},
  {"name": "k", "type": "int", "low": 1, "high": 5}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	csvs := map[int]string{}
	for _, rows := range []int{n, 4 * n} {
		csvs[rows] = filepath.Join(dir, fmt.Sprintf("t%d.csv", rows))
		writeTableRows(t, csvs[rows], rows)
	}
	for _, backend := range []string{"sqlite", "postgres", "out"} {
		t.Run(backend, func(t *testing.T) {
			peak := map[int]uint64{}
			for _, rows := range []int{n, 4 * n} {
				csv := csvs[rows]
				db := filepath.Join(dir, fmt.Sprintf("x%d.db", rows))
				if backend == "postgres" {
					db = storetest.PostgresDSN(t)
				}
				args := []string{"import", "--csv", csv, "--space", spaceFile, "--into", db, "--name", "big"}
				want := fmt.Sprintf("loaded %d trials", rows)
				if backend == "out" {
					args = []string{"import", "--csv", csv, "--space", spaceFile, "--out", db + ".csv"}
					want = fmt.Sprintf("imported %d trials", rows)
				}
				var code int
				var stdout, stderr string
				u, err := heappeak.Measure(func() { code, stdout, stderr = runCLI(t, args...) })
				if err != nil {
					t.Fatal(err)
				}
				if code != 0 || !strings.Contains(stdout, want) {
					t.Fatalf("%d rows: exit %d\n%s\n%s", rows, code, stdout, stderr)
				}
				peak[rows] = u.Grew()
				t.Logf("%d rows: the heap grew by %.1f MiB at its peak", rows, float64(u.Grew())/(1<<20))
				if backend == "out" {
					written, err := os.ReadFile(db + ".csv")
					if lines := strings.Count(string(written), "\n"); err != nil || lines != rows+1 {
						t.Fatalf("%d rows: the trials CSV has %d lines (%v)", rows, lines, err)
					}
					continue
				}
				st, err := store.OpenExisting(context.Background(), db)
				if err != nil {
					t.Fatal(err)
				}
				sums, err := st.Studies(context.Background())
				st.Close()
				if err != nil || len(sums) != 1 || sums[0].Counts[store.Complete] != rows-rows/10 || sums[0].Counts[store.Failed] != rows/10 {
					t.Fatalf("%d rows: stored %+v (%v)", rows, sums, err)
				}
			}
			extra := int64(peak[4*n]) - int64(peak[n])
			t.Logf("3N = %d more rows: %d bytes more heap at the peak, %.1f bytes a row", 3*n, extra, float64(extra)/float64(3*n))
			if extra > int64(3*n*importRowBytes) {
				t.Fatalf("the peak heap grew by %d bytes for %d more rows, above %d bytes a row", extra, 3*n, importRowBytes)
			}
		})
	}
}
