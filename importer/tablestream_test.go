package importer

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xbo/internal/heappeak"
	"xbo/space"
)

// The JSON table reader splits records as it reads: a wrapper whose
// "trials" come after other keys, a single record spread over lines,
// strings holding braces, quotes and escapes, Python's NaN, and JSON lines
// with blank lines; errors name the record's line.
func TestJSONTableStreamShapes(t *testing.T) {
	s, err := space.Parse([]byte(tableSpace))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		text   string
		trials int
		value0 float64
	}{
		"wrapper after other keys": {`{"study": {"name": "s", "trials": 3}, "trials": [{"lr": 0.1, "kind": "a", "value": 2}, {"lr": 0.2, "kind": "b", "k": 1, "value": 3}], "n": 2}`, 2, 2},
		"pretty single record":     {"{\n  \"lr\": 0.5,\n  \"kind\": \"a\",\n  \"note\": \"{[\\\"x\\\"]}\",\n  \"value\": 4\n}\n", 1, 4},
		"strings with brackets":    {`[{"lr": 0.1, "kind": "a", "note": "],}{\\\"", "value": 5}, {"lr": 0.1, "kind": "b", "k": 2, "value": NaN}]`, 2, 5},
		"json lines":               {"{\"lr\": 0.1, \"kind\": \"a\", \"value\": 6}\n\n{\"lr\": 0.2, \"kind\": \"a\", \"value\": Infinity}\n", 2, 6},
	} {
		run, err := ImportTable(writeTestFile(t, "t.json", c.text), s, TableOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(run.Trials) != c.trials || run.Trials[0].Value != c.value0 {
			t.Fatalf("%s: %d trials, the first %+v", name, len(run.Trials), run.Trials[0])
		}
	}
	for name, c := range map[string]struct{ text, want string }{
		"bad line":        {"{\"lr\": 0.1, \"kind\": \"a\", \"value\": 1}\n{\"lr\": 0.2, \"kind\": \"a\", \"value\": 1}\n{\"lr\": oops}\n", "line 3"},
		"truncated list":  {"[{\"lr\": 0.1, \"kind\": \"a\", \"value\": 1},\n {\"lr\": 0.2", "line 2"},
		"not an object":   {`[{"lr": 0.1, "kind": "a", "value": 1}, 7]`, "trial #2: not a JSON object"},
		"missing a comma": {"[{\"lr\": 0.1, \"kind\": \"a\", \"value\": 1}\n {\"lr\": 0.2}]", "line 2: expected ','"},
	} {
		_, err := ImportTable(writeTestFile(t, "t.json", c.text), s, TableOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// heapDuring runs f and returns how far the heap rose above its level
// before f.
func heapDuring(t *testing.T, f func()) uint64 {
	t.Helper()
	u, err := heappeak.Measure(f)
	if err != nil {
		t.Fatal(err)
	}
	return u.Grew()
}

// writeLarge writes a table of n rows (CSV, or JSON lines) to a file in
// dir, without holding it in memory.
func writeLarge(t *testing.T, dir, name string, n int, jsonLines bool) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if !jsonLines {
		fmt.Fprintln(w, "lr,kind,k,value")
	}
	for i := range n {
		lr := 0.001 + float64(i%997)/1000
		if jsonLines {
			fmt.Fprintf(w, "{\"lr\": %g, \"kind\": \"b\", \"k\": %d, \"value\": %d}\n", lr, 1+i%5, i)
		} else {
			fmt.Fprintf(w, "%g,b,%d,%d\n", lr, 1+i%5, i)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// tableRowBytes is the per-row bound docs/api.md states for a table
// import that holds its rows (ImportTable, which xbo import uses for a
// table whose numbers do not ascend): the heap it holds per row, the
// file's size aside.
const tableRowBytes = 3072

// A table import's memory grows with its rows, at most tableRowBytes each,
// never with the file's bytes: a 64 MiB file without a line break is
// refused after its first MiB (CSV and JSON), and rows cost their bound
// however long the file.
func TestTableImportMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads files of tens of MiB")
	}
	s, err := space.Parse([]byte(tableSpace))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// One line of 64 MiB: a CSV header that never ends, and a JSON list
	// whose first record never ends.
	for _, c := range []struct{ name, head string }{{"one.csv", "lr,kind,k,value\n0.1,a,,"}, {"one.json", `[{"lr": 0.1, "kind": "a", "note": "`}} {
		path := filepath.Join(dir, c.name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(c.head)
		f.Write([]byte(strings.Repeat("9", 64<<20)))
		f.Close()
		var importErr error
		grew := heapDuring(t, func() { _, importErr = ImportTable(path, s, TableOptions{}) })
		if importErr == nil || !strings.Contains(importErr.Error(), "longer than") {
			t.Fatalf("%s: %v, want a refusal of the long line", c.name, importErr)
		}
		if grew > 8<<20 {
			t.Fatalf("%s: the heap grew by %d MiB to refuse a 64 MiB line (the file was read whole?)", c.name, grew>>20)
		}
	}
	for _, jsonLines := range []bool{false, true} {
		const rows = 200_000
		path := writeLarge(t, dir, fmt.Sprintf("large-%v", jsonLines), rows, jsonLines)
		info, _ := os.Stat(path)
		var run *Run
		var importErr error
		grew := heapDuring(t, func() { run, importErr = ImportTable(path, s, TableOptions{}) })
		if importErr != nil || len(run.Trials) != rows {
			t.Fatalf("%d rows: %v", rows, importErr)
		}
		t.Logf("JSON lines %v: %d rows, %d MiB file: the heap grew by %d MiB, %d bytes a row", jsonLines, rows, info.Size()>>20, grew>>20, grew/rows)
		if grew > rows*tableRowBytes {
			t.Fatalf("%d rows took %d bytes of heap each, above the %d bytes the docs state", rows, grew/rows, tableRowBytes)
		}
	}
}
