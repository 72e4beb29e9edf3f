package importer

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xbo/history"
	"xbo/importer/optunatest"
)

// prunedExpected reads optuna_pruned_expected.json (written by Python's json,
// so +inf is a bare Infinity) as trial number → what Optuna reports.
type prunedTrial struct {
	state        history.State
	value        float64
	x            float64
	intermediate []history.Intermediate
}

func loadPrunedExpected(t *testing.T, dir, key string) []prunedTrial {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "optuna_pruned_expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := decodeJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	study := doc.(map[string]any)[key].(map[string]any)
	var out []prunedTrial
	for i, raw := range study["trials"].([]any) {
		tr := raw.(map[string]any)
		if n, _ := intOf(tr["number"]); n != i {
			t.Fatalf("expected trials out of order at %d", i)
		}
		st, ok := optunaStateName(tr["state"].(string))
		if !ok {
			t.Fatalf("state %v", tr["state"])
		}
		p := prunedTrial{state: st, value: math.NaN()}
		if v, ok := numberOf(tr["value"]); ok {
			p.value = v
		}
		p.x, _ = numberOf(tr["params"].(map[string]any)["x"])
		for _, pair := range tr["intermediate"].([]any) {
			sv := pair.([]any)
			step, _ := intOf(sv[0])
			v, _ := numberOf(sv[1])
			p.intermediate = append(p.intermediate, history.Intermediate{Step: int64(step), Value: v})
		}
		out = append(out, p)
	}
	return out
}

// checkPrunedRun compares an imported study with pruned trials with what
// Optuna reports: pruned trials stay pruned (not failed) with their value
// (Optuna's last intermediate value), and every trial keeps its finite
// intermediate values; the +inf one is left out with a warning.
func checkPrunedRun(t *testing.T, run *Run, want []prunedTrial) {
	t.Helper()
	if len(run.Trials) != len(want) {
		t.Fatalf("%d trials, Optuna has %d", len(run.Trials), len(want))
	}
	c := run.Counts()
	if c[history.Pruned] == 0 || c[history.Failed] != 0 || c[history.Pruned]+c[history.Complete] != len(want) {
		t.Fatalf("states %v", c)
	}
	dropped := 0
	for i, tr := range run.Trials {
		w := want[i]
		if tr.State != w.state || tr.Params[0] != w.x {
			t.Errorf("trial %d: %s x=%v, Optuna: %s x=%v", tr.Number, tr.State, tr.Params[0], w.state, w.x)
		}
		if tr.Value != w.value && !(math.IsNaN(w.value) && math.IsNaN(tr.Value)) {
			t.Errorf("trial %d: value %v, Optuna %v", tr.Number, tr.Value, w.value)
		}
		var finite []history.Intermediate
		for _, iv := range w.intermediate {
			if math.IsInf(iv.Value, 0) {
				dropped++
				continue
			}
			finite = append(finite, iv)
		}
		if len(tr.Intermediate) != len(finite) {
			t.Errorf("trial %d: %d intermediate values, Optuna has %d finite ones", tr.Number, len(tr.Intermediate), len(finite))
			continue
		}
		for k, iv := range finite {
			if tr.Intermediate[k] != iv {
				t.Errorf("trial %d: intermediate %d is %+v, Optuna %+v", tr.Number, k, tr.Intermediate[k], iv)
			}
		}
		if tr.State == history.Pruned && tr.Value != tr.Intermediate[len(tr.Intermediate)-1].Value {
			t.Errorf("pruned trial %d: value %v is not its last intermediate value", tr.Number, tr.Value)
		}
	}
	if dropped != 1 || !strings.Contains(strings.Join(run.Warnings, "\n"), "1 intermediate values are left out") {
		t.Errorf("%d infinite values in Optuna's study; warnings %q", dropped, run.Warnings)
	}
}

func TestImportOptunaPrunedStudy(t *testing.T) {
	dirs := []string{optunatest.Fixtures()}
	if fresh := optunatest.FreshStudyFrom(t, "make_optuna_pruned.py"); fresh != "" {
		dirs = append(dirs, fresh) // the installed Optuna's own files too
	}
	for _, dir := range dirs {
		rdb, err := ImportOptuna(filepath.Join(dir, "optuna_pruned_rdb.sqlite3"), "")
		if err != nil {
			t.Fatal(err)
		}
		checkPrunedRun(t, rdb, loadPrunedExpected(t, dir, "rdb"))
		journal, err := ImportOptunaJournal(filepath.Join(dir, "optuna_pruned_journal.log"), "median-curves")
		if err != nil {
			t.Fatal(err)
		}
		checkPrunedRun(t, journal, loadPrunedExpected(t, dir, "journal"))
	}
}
