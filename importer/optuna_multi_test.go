package importer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"xbo/history"
	"xbo/importer/optunatest"
	"xbo/space"
	"xbo/trials"
)

// multiExpected is what testdata/make_optuna_multi.py records of a study:
// Optuna's own view of its trials and of its Pareto-optimal trials.
type multiExpected struct {
	Directions  []string `json:"directions"`
	MetricNames []string `json:"metric_names"`
	Trials      []struct {
		Number      int            `json:"number"`
		State       string         `json:"state"`
		Values      []float64      `json:"values"`
		Params      map[string]any `json:"params"`
		Constraints []float64      `json:"constraints"`
	} `json:"trials"`
	BestTrials   []int64 `json:"best_trials"`
	FeasibleBest []int64 `json:"feasible_best"`
}

func loadMultiExpected(t *testing.T, dir, storage string) map[string]multiExpected {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "optuna_multi_expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string]multiExpected
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	return all[storage]
}

// checkMultiRun compares an imported study with what Optuna reports: the
// objectives (directions, Optuna's metric names or xbo's default ones),
// every trial's state, parameters, objective values and constraint values,
// and the Pareto front: history's (feasible trials only) must be the one
// Optuna computes over the feasible trials.
func checkMultiRun(t *testing.T, name string, run *Run, want multiExpected) {
	t.Helper()
	s := run.Space
	m := len(want.Directions)
	if s.NumObjectives() != m {
		t.Fatalf("%s: %d objectives, Optuna has %d", name, s.NumObjectives(), m)
	}
	for k, d := range want.Directions {
		if got := s.Directions()[k]; !strings.EqualFold(string(got), d) {
			t.Errorf("%s: objective %d direction %q, Optuna %q", name, k, got, d)
		}
		wantName := fmt.Sprintf("objective_%d", k)
		if want.MetricNames != nil {
			wantName = want.MetricNames[k]
		}
		if got := s.ObjectiveNames()[k]; got != wantName {
			t.Errorf("%s: objective %d named %q, want %q", name, k, got, wantName)
		}
	}
	nCons := 0
	for _, w := range want.Trials {
		nCons = max(nCons, len(w.Constraints))
	}
	if len(s.Constraints) != nCons {
		t.Errorf("%s: constraints %v, Optuna's trials have %d values", name, s.Constraints, nCons)
	}
	for j, c := range s.Constraints {
		if c != fmt.Sprintf("constraint_%d", j) {
			t.Errorf("%s: constraint %d named %q", name, j, c)
		}
	}
	if len(run.Trials) != len(want.Trials) {
		t.Fatalf("%s: %d trials, Optuna reports %d", name, len(run.Trials), len(want.Trials))
	}
	for i, tr := range run.Trials {
		w := want.Trials[i]
		st, _ := optunaStateName(w.State)
		if tr.Number != int64(w.Number) || tr.State != st {
			t.Errorf("%s: trial %d %s, Optuna: trial %d %s", name, tr.Number, tr.State, w.Number, w.State)
			continue
		}
		for pname, pv := range w.Params {
			k, _ := s.Index(pname)
			p := s.Params[k]
			got := any(tr.Params[k])
			if p.Type == space.Categorical {
				got = p.Labels()[int(tr.Params[k])]
			}
			if got != pv {
				t.Errorf("%s: trial %d: %s = %v, Optuna %v", name, tr.Number, pname, got, pv)
			}
		}
		switch {
		case tr.State != history.Complete:
			if tr.Values != nil || tr.Constraints != nil {
				t.Errorf("%s: %s trial %d keeps values %v, constraints %v", name, tr.State, tr.Number, tr.Values, tr.Constraints)
			}
			continue
		case m > 1 && !slices.Equal(tr.Values, w.Values):
			t.Errorf("%s: trial %d: values %v, Optuna %v", name, tr.Number, tr.Values, w.Values)
		case m == 1 && (tr.Values != nil || tr.Value != w.Values[0]):
			t.Errorf("%s: trial %d: value %v (values %v), Optuna %v", name, tr.Number, tr.Value, tr.Values, w.Values)
		}
		if !slices.Equal(tr.Constraints, w.Constraints) {
			t.Errorf("%s: trial %d: constraint values %v, Optuna's sampler stored %v", name, tr.Number, tr.Constraints, w.Constraints)
		}
	}
	if err := run.Validate(); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	var best []int64
	if m > 1 {
		front, err := run.ParetoFront()
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range front {
			best = append(best, run.Trials[i].Number)
		}
	} else if i, ok := run.Best(); ok {
		best = []int64{run.Trials[i].Number}
	}
	if !slices.Equal(best, want.FeasibleBest) {
		t.Errorf("%s: best trials %v, Optuna's over the feasible trials %v (over all: %v)", name, best, want.FeasibleBest, want.BestTrials)
	}
}

func TestImportOptunaMultiObjective(t *testing.T) {
	dirs := []string{optunatest.Fixtures()}
	if fresh := optunatest.FreshStudyFrom(t, "make_optuna_multi.py"); fresh != "" {
		dirs = append(dirs, fresh) // the installed Optuna's own files too
	}
	for _, dir := range dirs {
		for _, storage := range []string{"rdb", "journal"} {
			want := loadMultiExpected(t, dir, storage)
			if len(want) != 3 {
				t.Fatalf("%s: expected studies %v", storage, want)
			}
			for name, w := range want {
				var run *Run
				var err error
				if storage == "rdb" {
					run, err = ImportOptuna(filepath.Join(dir, "optuna_multi_rdb.sqlite3"), name)
				} else {
					run, err = ImportOptunaJournal(filepath.Join(dir, "optuna_multi_journal.log"), name)
				}
				if err != nil {
					t.Fatalf("%s %s: %v", storage, name, err)
				}
				checkMultiRun(t, storage+" "+name, run, w)
				if name != "error-size" {
					continue
				}
				// The trial added by hand reported no constraint values: it
				// is on Optuna 3.1's front of all trials but never best here.
				if !slices.Contains(w.BestTrials, 24) || slices.Contains(w.FeasibleBest, 24) {
					t.Fatalf("fixture: trial 24 should be on the front of all trials only (%v, %v)", w.BestTrials, w.FeasibleBest)
				}
				warnings := strings.Join(run.Warnings, "\n")
				for _, text := range []string{"1 complete trials report no constraint values (e.g. trial 24)", "1 trials that are not complete (pruned ones) reported constraint values"} {
					if !strings.Contains(warnings, text) {
						t.Errorf("%s: no warning %q in %q", storage, text, warnings)
					}
				}
			}
		}
	}
}

// TestOptunaMultiObjectiveRoundTrip writes an imported study with several
// objectives and constraints as the trials CSV and its space, and reads it
// back both ways (the strict reader and xbo import --csv): the same
// objective and constraint values, states and front.
func TestOptunaMultiObjectiveRoundTrip(t *testing.T) {
	for _, name := range []string{"error-size", "constrained-loss"} {
		run, err := ImportOptuna(filepath.Join(optunatest.Fixtures(), "optuna_multi_rdb.sqlite3"), name)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		csvPath, spacePath := filepath.Join(dir, "trials.csv"), filepath.Join(dir, "space.json")
		if err := WriteFiles(run, csvPath, spacePath); err != nil {
			t.Fatal(err)
		}
		text, _ := os.ReadFile(csvPath)
		header := strings.SplitN(string(text), "\n", 2)[0]
		wantHeader := map[string]string{
			"error-size":       "number,x,y,kind,error,size,constraint_0,constraint_1,acquisition,state",
			"constrained-loss": "number,x,loss,constraint_0,acquisition,state",
		}[name]
		if header != wantHeader {
			t.Errorf("%s: header %q, want %q", name, header, wantHeader)
		}
		sp, err := space.Load(spacePath)
		if err != nil {
			t.Fatal(err)
		}
		strict, err := trials.ReadFile(csvPath, sp)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ImportTable(csvPath, sp, TableOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, back := range []*history.History{strict, again.History} {
			if len(back.Trials) != len(run.Trials) {
				t.Fatalf("%s: %d trials back, %d written", name, len(back.Trials), len(run.Trials))
			}
			for i, tr := range back.Trials {
				w := run.Trials[i]
				if tr.Number != w.Number || tr.State != w.State || !slices.Equal(tr.Values, w.Values) || !slices.Equal(tr.Constraints, w.Constraints) ||
					(w.Usable() && tr.Value != w.Value) || !slices.Equal(tr.Params, w.Params) {
					t.Errorf("%s: trial %d read back as %s %v %v %v, written %s %v %v %v", name, w.Number,
						tr.State, tr.Value, tr.Values, tr.Constraints, w.State, w.Value, w.Values, w.Constraints)
				}
			}
			f1, _ := run.Fingerprint(false)
			f2, _ := back.Fingerprint(false)
			if f1 != f2 {
				t.Errorf("%s: the usable trials read back differ from those written", name)
			}
		}
	}
}
