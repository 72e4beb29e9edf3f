package importer

import (
	"xbo/history"

	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xbo/space"
)

const tableSpace = `{"objective": "maximize", "params": [
  {"name": "lr", "type": "float", "low": 0.001, "high": 1, "log": true},
  {"name": "kind", "type": "categorical", "choices": ["a", "b"]},
  {"name": "k", "type": "int", "low": 1, "high": 5, "condition": {"parent": "kind", "values": ["b"]}}
]}`

func writeTestFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportCSVTable(t *testing.T) {
	s, err := space.Parse([]byte(tableSpace))
	if err != nil {
		t.Fatal(err)
	}
	csv := "number,lr,kind,k,value,state,seed\n" +
		"0,0.01,a,,0.5,complete,1\n" +
		"1,0.1,b,3,0.7,,2\n" +
		"2,0.2,b,4,,failed,3\n" +
		"3,2.5,b,7,0.9,,4\n" + // outside the space: widened, reported
		"4,0.3,a,2,0.4,,5\n" + // k given while inactive: left out, reported
		"5,0.05,b,,0.1,pruned,6\n" +
		"6,0.4,c,,0.3,,7\n" // a new level: added, reported
	run, err := ImportTable(writeTestFile(t, "t.csv", csv), s, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Space.Objective != space.Maximize {
		t.Errorf("objective %q", run.Space.Objective)
	}
	if len(run.Trials) != 6 {
		t.Fatalf("%d trials, want 6 (one left out)", len(run.Trials))
	}
	lr, kind, k := run.Space.Params[0], run.Space.Params[1], run.Space.Params[2]
	if lr.High != 2.5 || strings.Join(kind.Labels(), ",") != "a,b,c" || k.High != 7 {
		t.Errorf("widened space: lr %v, kind %v, k %v", lr.High, kind.Choices, k.High)
	}
	want := []history.State{history.Complete, history.Complete, history.Failed, history.Complete, history.Pruned, history.Complete}
	for i, tr := range run.Trials {
		if tr.State != want[i] {
			t.Errorf("trial %d: %s, want %s", tr.Number, tr.State, want[i])
		}
	}
	if !math.IsNaN(run.Trials[0].Params[2]) || run.Trials[1].Params[2] != 3 {
		t.Errorf("k: %v %v", run.Trials[0].Params[2], run.Trials[1].Params[2])
	}
	all := strings.Join(run.Warnings, "\n")
	for _, w := range []string{`columns "seed" are not parameters`, `parameter "lr"`, `"c"`, `trial 4 (parameter "k" is inactive`} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	for name, text := range map[string]string{
		"line 2, column \"lr\"":   "lr,kind,k,value\nx,a,,1\n",
		"no column for parameter": "lr,kind,value\n0.1,a,1\n",
		`no "value" column`:       "lr,kind,k\n0.1,a,\n",
		`unknown state "weird"`:   "lr,kind,k,value,state\n0.1,a,,1,weird\n",
	} {
		if _, err := ImportTable(writeTestFile(t, "bad.csv", text), s, TableOptions{}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v, want %q", err, name)
		}
	}
}

func TestImportJSONTable(t *testing.T) {
	s, err := space.Parse([]byte(tableSpace))
	if err != nil {
		t.Fatal(err)
	}
	list := `[{"params": {"lr": 0.01, "kind": "a"}, "value": 0.5},
	 {"lr": 0.1, "kind": "b", "k": 2, "value": 0.7, "note": "x"},
	 {"params": {"lr": 0.2, "kind": "b", "k": 3}, "value": NaN, "state": "complete"},
	 {"params": {"lr": 0.3, "kind": "a"}, "value": Infinity}]`
	run, err := ImportTable(writeTestFile(t, "t.json", list), s, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Trials) != 4 || run.Trials[1].Value != 0.7 || run.Trials[2].State != history.Failed {
		t.Fatalf("trials %+v", run.Trials)
	}
	if run.Trials[3].Usable() || !math.IsInf(run.Trials[3].Value, 1) {
		t.Errorf("an infinite value must be kept but not usable: %+v", run.Trials[3])
	}
	if !strings.Contains(strings.Join(run.Warnings, "\n"), `keys "note"`) {
		t.Errorf("warnings %q", run.Warnings)
	}
	lines := "{\"lr\": 0.01, \"kind\": \"a\", \"value\": 1}\n\n{\"lr\": 0.02, \"kind\": \"b\", \"k\": 1, \"value\": 2}\n"
	run, err = ImportTable(writeTestFile(t, "t.jsonl", lines), s, TableOptions{})
	if err != nil || len(run.Trials) != 2 {
		t.Fatalf("JSON lines: %v %v", run, err)
	}
	if _, err := ImportTable(writeTestFile(t, "b.jsonl", "{\"lr\": 0.01, \"kind\": \"a\", \"value\": 1}\n{\"lr\": oops}\n"), s, TableOptions{}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad JSON line: %v", err)
	}
}
