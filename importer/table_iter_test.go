package importer

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"xbo/history"
	"xbo/space"
)

// streamed reads a table through OpenTable and Trials.
func streamed(t *testing.T, path string, s *space.Space) (*TableTrials, []history.Trial) {
	t.Helper()
	tt, err := OpenTable(path, s, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []history.Trial
	for tr, err := range tt.Trials() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tr)
	}
	return tt, got
}

// sameTrials reports how two lists of trials differ (NaN equal to NaN),
// or "".
func sameTrials(a, b []history.Trial) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d trials against %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		same := x.Number == y.Number && x.State == y.State && x.Completion == y.Completion &&
			(x.Value == y.Value || math.IsNaN(x.Value) && math.IsNaN(y.Value)) &&
			reflect.DeepEqual(x.UserAttrs, y.UserAttrs) && len(x.Params) == len(y.Params)
		for k := range x.Params {
			same = same && (x.Params[k] == y.Params[k] || math.IsNaN(x.Params[k]) && math.IsNaN(y.Params[k]))
		}
		if !same {
			return fmt.Sprintf("trial %d: %+v against %+v", i, x, y)
		}
	}
	return ""
}

// A table read as a stream gives the space, the trials (numbers, states,
// values, parameters, attributes, completion order) and the warnings that
// ImportTable gives: for CSV and JSON, with values that widen the space,
// unknown columns, missing values and more broken trials than are named
// one by one; the trials CSV written from the stream is the same. Trials
// read twice warns once; a table whose numbers do not
// ascend is held and sorted, as ImportTable sorts it.
func TestOpenTableAsImportTable(t *testing.T) {
	s, err := space.Parse([]byte(tableSpace))
	if err != nil {
		t.Fatal(err)
	}
	var csv, jsonl, shuffled strings.Builder
	csv.WriteString("number,lr,kind,k,value,state,seed\n")
	shuffled.WriteString("number,lr,kind,k,value,state\n")
	for i := range 60 {
		lr, kind, value, state := 0.001+float64(i)/100, []string{"a", "b", "z"}[i%3], fmt.Sprint(i), "complete"
		switch {
		case i%4 == 1:
			value = "nan" // failed in CSV; infinite in JSON, more than maxTrialWarnings of them
		case i%7 == 2:
			value, state = "", "failed"
		}
		k := ""
		if kind == "b" {
			k = fmt.Sprint(i % 9) // 0 and 6..8 lie outside [1, 5]
		}
		fmt.Fprintf(&csv, "%d,%g,%s,%s,%s,%s,%d\n", 3*i, lr, kind, k, value, state, i%2)
		fmt.Fprintf(&shuffled, "%d,%g,%s,%s,%s,%s\n", (i*37)%60, lr, kind, k, value, state)
		jv := value
		switch jv {
		case "":
			jv = "NaN"
		case "nan":
			jv = "Infinity"
		}
		kj := ""
		if k != "" {
			kj = `, "k": ` + k
		}
		fmt.Fprintf(&jsonl, "{\"number\": %d, \"lr\": %g, \"kind\": %q%s, \"value\": %s, \"state\": %q, \"note\": \"n%d\"}\n", 2*i, lr, kind, kj, jv, state, i)
	}
	for _, c := range []struct {
		name, text string
		held       bool
	}{{"t.csv", csv.String(), false}, {"t.jsonl", jsonl.String(), false}, {"shuffled.csv", shuffled.String(), true}} {
		path := writeTestFile(t, c.name, c.text)
		want, err := ImportTable(path, s, TableOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tt, got := streamed(t, path, s)
		if tt.InMemory() != c.held {
			t.Fatalf("%s: held %v, want %v", c.name, tt.InMemory(), c.held)
		}
		if diff := sameTrials(want.Trials, got); diff != "" {
			t.Fatalf("%s: %s", c.name, diff)
		}
		if !reflect.DeepEqual(want.Space, tt.Space) || tt.Format != want.Format || tt.Source != want.Source {
			t.Fatalf("%s: space %+v, want %+v", c.name, tt.Space, want.Space)
		}
		if !reflect.DeepEqual(tt.Warnings, want.Warnings) {
			t.Fatalf("%s: warnings\n%q\nwant\n%q", c.name, tt.Warnings, want.Warnings)
		}
		// The trials CSV written from the stream is the one written from
		// the held trials.
		dir := t.TempDir()
		if err := WriteFiles(want, filepath.Join(dir, "held.csv"), ""); err != nil {
			t.Fatal(err)
		}
		if err := WriteFilesFrom(tt.Run, tt.Trials(), filepath.Join(dir, "streamed.csv"), ""); err != nil {
			t.Fatal(err)
		}
		held, _ := os.ReadFile(filepath.Join(dir, "held.csv"))
		streamedCSV, _ := os.ReadFile(filepath.Join(dir, "streamed.csv"))
		if len(held) == 0 || !bytes.Equal(held, streamedCSV) {
			t.Fatalf("%s: the streamed trials CSV differs:\n%s\nheld:\n%s", c.name, streamedCSV, held)
		}
		// Read again, and stopped early: the warnings stay as they are.
		for range tt.Trials() {
			break
		}
		if _, again := streamed(t, path, s); len(again) != len(got) {
			t.Fatalf("%s: read again: %d trials", c.name, len(again))
		}
		for range tt.Trials() {
		}
		if !reflect.DeepEqual(tt.Warnings, want.Warnings) {
			t.Fatalf("%s: read twice, warnings\n%q", c.name, tt.Warnings)
		}
	}
	// A broken table is refused with ImportTable's error, before any row
	// is handed on: a cell or a record that does not read, a missing
	// column, a value that cannot widen the space, a number twice.
	for _, c := range []struct{ name, text string }{
		{"bad.csv", "lr,kind,k,value\nx,a,,1\n"},
		{"bad.csv", "lr,kind,value\n0.1,a,1\n"},
		{"bad.csv", "lr,kind,k,value,state\n0.1,a,,1,weird\n"},
		{"bad.csv", "number,lr,kind,k,value\n0,0.1,a,,1\n1,0.2,b,2,1\n1,0.3,b,3,2\n"},
		{"bad.jsonl", "{\"lr\": 0.1, \"kind\": \"a\", \"value\": 1}\n{\"lr\": NaN, \"kind\": \"a\", \"value\": 2}\n"},
		{"bad.jsonl", "{\"lr\": 0.1, \"kind\": \"a\", \"value\": 1}\n{\"lr\": 0.1, \"kind\": 7, \"value\": [1]}\n"},
	} {
		path := writeTestFile(t, c.name, c.text)
		_, want := ImportTable(path, s, TableOptions{})
		_, err := OpenTable(path, s, TableOptions{})
		if want == nil || err == nil || err.Error() != want.Error() {
			t.Fatalf("%q: OpenTable: %v, ImportTable: %v", c.text, err, want)
		}
	}

	// The named trials and the count of the rest.
	run, _ := ImportTable(writeTestFile(t, "t.jsonl", jsonl.String()), s, TableOptions{})
	named, more := 0, ""
	for _, w := range run.Warnings {
		if strings.Contains(w, "has the value +Inf") {
			named++
		}
		if strings.Contains(w, "more complete trials have an infinite value") {
			more = w
		}
	}
	if named != maxTrialWarnings || !strings.HasPrefix(more, "5 more") {
		t.Fatalf("%d trials named, then %q; warnings %q", named, more, run.Warnings)
	}
}
