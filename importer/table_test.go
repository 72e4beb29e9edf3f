package importer

import (
	"xbo/history"

	"math"
	"os"
	"path/filepath"
	"slices"
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

const multiTableSpace = `{"objectives": [{"name": "error", "direction": "minimize"}, {"name": "size", "direction": "maximize"}],
  "constraints": ["memory"],
  "params": [{"name": "lr", "type": "float", "low": 0.001, "high": 1, "log": true}]}`

// TestImportCSVTableObjectives reads the objective and constraint columns
// of a study with several objectives: named after the space by default, or
// given as flags (in the space's order); a complete row missing an
// objective is failed, a row with some constraint values but not all is an
// error, and the counts must match the space.
func TestImportCSVTableObjectives(t *testing.T) {
	s, err := space.Parse([]byte(multiTableSpace))
	if err != nil {
		t.Fatal(err)
	}
	csv := "lr,error,size,memory,state\n" +
		"0.01,0.5,3,-1,\n" +
		"0.1,0.4,2,0.5,\n" + // infeasible: kept, never best
		"0.2,0.3,,-1,\n" + // an objective missing: failed
		"0.3,0.6,1,,\n" // no constraint values: infeasible
	run, err := ImportTable(writeTestFile(t, "t.csv", csv), s, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := run.Trials
	if len(tr) != 4 || !slices.Equal(tr[0].Values, []float64{0.5, 3}) || !slices.Equal(tr[0].Constraints, []float64{-1}) ||
		!slices.Equal(tr[1].Constraints, []float64{0.5}) || tr[2].State != history.Failed || tr[2].Values != nil ||
		tr[3].State != history.Complete || tr[3].Constraints != nil {
		t.Fatalf("trials %+v", tr)
	}
	if front, _ := run.ParetoFront(); !slices.Equal(front, []int{0}) {
		t.Errorf("front %v: only trial 0 is feasible", front)
	}
	// Other column names, in the space's order.
	renamed := "lr,err,sz,mem\n0.01,0.5,3,-1\n"
	run, err = ImportTable(writeTestFile(t, "r.csv", renamed), s, TableOptions{ValueColumns: []string{"err", "sz"}, ConstraintColumns: []string{"mem"}})
	if err != nil || !slices.Equal(run.Trials[0].Values, []float64{0.5, 3}) || !slices.Equal(run.Trials[0].Constraints, []float64{-1}) {
		t.Fatalf("renamed columns: %v %+v", err, run)
	}
	for want, tc := range map[string]struct {
		text string
		opts TableOptions
	}{
		`no column for objective "size"`:          {"lr,error,memory\n0.1,1,0\n", TableOptions{}},
		`no column for constraint "memory"`:       {"lr,error,size\n0.1,1,2\n", TableOptions{}},
		`1 value columns (err) for the space's 2`: {renamed, TableOptions{ValueColumns: []string{"err"}}},
		`column "memory" is empty while other`:    {"lr,error,size,memory,mem2\n0.1,1,2,,1\n", TableOptions{}},
		`objective column "lr" is also the name`:  {renamed, TableOptions{ValueColumns: []string{"lr", "sz"}}},
	} {
		opts := tc.opts
		sp := s
		if strings.Contains(tc.text, "mem2") {
			sp, _ = space.Parse([]byte(strings.Replace(multiTableSpace, `["memory"]`, `["memory", "mem2"]`, 1)))
		}
		if _, err := ImportTable(writeTestFile(t, "bad.csv", tc.text), sp, opts); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	// Constraint columns declare the constraints of a space without any.
	plain, err := space.Parse([]byte(tableSpace))
	if err != nil {
		t.Fatal(err)
	}
	run, err = ImportTable(writeTestFile(t, "c.csv", "lr,kind,k,value,mem\n0.01,a,,0.5,0.25\n"), plain, TableOptions{ConstraintColumns: []string{"mem"}})
	if err != nil || !slices.Equal(run.Space.Constraints, []string{"mem"}) || !slices.Equal(run.Trials[0].Constraints, []float64{0.25}) {
		t.Fatalf("declared constraint: %v %+v", err, run)
	}
	if _, ok := run.Best(); ok {
		t.Error("the only trial is infeasible (0.25 > 0) but is best")
	}
}

// TestImportJSONTableObjectives reads the outcome of JSON records: the
// lists "values" and "constraints" (what xbo study export --json writes),
// or a key per objective and constraint.
func TestImportJSONTableObjectives(t *testing.T) {
	s, err := space.Parse([]byte(multiTableSpace))
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"study": {"name": "x"}, "trials": [
	  {"number": 4, "state": "complete", "params": {"lr": 0.01}, "value": 0.5, "values": [0.5, 3], "constraints": [-1]},
	  {"number": 5, "state": "failed", "params": {"lr": 0.02}},
	  {"number": 6, "params": {"lr": 0.03}, "error": 0.2, "size": 1, "memory": -2}]}`
	run, err := ImportTable(writeTestFile(t, "t.json", doc), s, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := run.Trials
	if len(tr) != 3 || tr[0].Number != 4 || !slices.Equal(tr[0].Values, []float64{0.5, 3}) || !slices.Equal(tr[0].Constraints, []float64{-1}) ||
		tr[1].State != history.Failed || !slices.Equal(tr[2].Values, []float64{0.2, 1}) || !slices.Equal(tr[2].Constraints, []float64{-2}) {
		t.Fatalf("trials %+v", tr)
	}
	for want, text := range map[string]string{
		"values has 1 entries for 2 objective(s)": `[{"lr": 0.1, "values": [1]}]`,
		"constraints[0] = +Inf is not finite":     `[{"lr": 0.1, "values": [1, 2], "constraints": [Infinity]}]`,
	} {
		if _, err := ImportTable(writeTestFile(t, "bad.json", text), s, TableOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}
