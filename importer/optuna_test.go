package importer

import (
	"xbo/history"

	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xbo/importer/optunatest"
	"xbo/space"
	"xbo/trials"
)

// knownObjective is the function testdata/make_optuna.py optimizes.
func knownObjective(lr float64, layers float64, optimizer string, momentum float64) float64 {
	cost := map[string]float64{"sgd": 0.2, "adam": 0, "rmsprop": 0.5}
	v := math.Pow(math.Log10(lr)+2, 2) + 0.1*math.Pow(layers-3, 2) + cost[optimizer]
	if optimizer == "sgd" {
		v += math.Pow(momentum-0.9, 2)
	}
	return v
}

type expectedStudy struct {
	Direction string `json:"direction"`
	Trials    []struct {
		Number int            `json:"number"`
		State  string         `json:"state"`
		Value  *float64       `json:"value"`
		Params map[string]any `json:"params"`
	} `json:"trials"`
}

func loadExpected(t *testing.T, key string) expectedStudy {
	t.Helper()
	return loadExpectedFrom(t, "testdata", key)
}

func loadExpectedFrom(t *testing.T, dir, key string) expectedStudy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "optuna_expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]expectedStudy
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	return all[key]
}

// checkOptunaRun compares an imported run with what Optuna itself reported
// for the same study, and with the known objective.
func checkOptunaRun(t *testing.T, run *Run, want expectedStudy) {
	t.Helper()
	s := run.Space
	if got := s.Names(); strings.Join(got, ",") != "lr,layers,optimizer,momentum" {
		t.Fatalf("parameters %v", got)
	}
	lr, layers, opt, mom := s.Params[0], s.Params[1], s.Params[2], s.Params[3]
	if lr.Type != space.Float || !lr.Log || lr.Low != 1e-4 || lr.High != 3 {
		t.Errorf("lr = %+v, want log float [1e-4, 3] (widened for the enqueued lr=3)", lr)
	}
	if layers.Type != space.Int || layers.Low != 1 || layers.High != 8 {
		t.Errorf("layers = %+v", layers)
	}
	if opt.Type != space.Categorical || strings.Join(opt.Labels(), ",") != "sgd,adam,rmsprop" {
		t.Errorf("optimizer = %+v", opt)
	}
	if mom.Type != space.Float || mom.Low != 0 || mom.High != 0.99 || mom.Condition == nil ||
		mom.Condition.Parent != "optimizer" || len(mom.Condition.Values) != 1 || mom.Condition.Values[0] != "sgd" {
		t.Errorf("momentum = %+v (condition %+v), want active only when optimizer is sgd", mom, mom.Condition)
	}
	if s.Objective != space.Minimize {
		t.Errorf("objective %q", s.Objective)
	}
	if len(run.Trials) != len(want.Trials) {
		t.Fatalf("%d trials, Optuna reports %d", len(run.Trials), len(want.Trials))
	}
	states := map[history.State]int{}
	for i, tr := range run.Trials {
		w := want.Trials[i]
		states[tr.State]++
		if tr.Number != int64(w.Number) {
			t.Fatalf("trial %d has number %d, want %d", i, tr.Number, w.Number)
		}
		if st, _ := optunaStateName(w.State); st != tr.State {
			t.Errorf("trial %d: state %q, Optuna says %q", tr.Number, tr.State, w.State)
		}
		if w.Value == nil {
			if !math.IsNaN(tr.Value) {
				t.Errorf("trial %d: value %v, Optuna has none", tr.Number, tr.Value)
			}
		} else if tr.Value != *w.Value {
			t.Errorf("trial %d: value %v, Optuna says %v", tr.Number, tr.Value, *w.Value)
		}
		for j, p := range s.Params {
			wv, has := w.Params[p.Name]
			got := tr.Params[j]
			if !has {
				if !math.IsNaN(got) {
					t.Errorf("trial %d: %s = %v, but Optuna did not suggest it", tr.Number, p.Name, got)
				}
				continue
			}
			switch x := wv.(type) {
			case string:
				if s.Format(j, got) != x {
					t.Errorf("trial %d: %s = %q, want %q", tr.Number, p.Name, s.Format(j, got), x)
				}
			case float64:
				if got != x {
					t.Errorf("trial %d: %s = %v, want %v", tr.Number, p.Name, got, x)
				}
			}
		}
		if tr.State == history.Complete {
			optName := s.Format(2, tr.Params[2])
			f := knownObjective(tr.Params[0], tr.Params[1], optName, tr.Params[3])
			if math.Abs(f-tr.Value) > 1e-12*math.Max(1, math.Abs(f)) {
				t.Errorf("trial %d: value %v, the known function gives %v", tr.Number, tr.Value, f)
			}
			if err := s.Validate(tr.Params); err != nil {
				t.Errorf("trial %d: %v", tr.Number, err)
			}
		}
	}
	if states[history.Failed] != 1 || states[history.Pruned] != 1 || states[history.Complete] != len(want.Trials)-2 {
		t.Errorf("states %v, want 1 failed, 1 pruned, the rest complete", states)
	}
	if run.Trials[5].State != history.Failed || run.Trials[7].State != history.Pruned {
		t.Errorf("trial 5 is %s and trial 7 is %s, want failed and pruned", run.Trials[5].State, run.Trials[7].State)
	}
	var sawWiden, sawCond bool
	for _, w := range run.Warnings {
		sawWiden = sawWiden || strings.Contains(w, `"lr"`) && strings.Contains(w, "widened")
		sawCond = sawCond || strings.Contains(w, `"momentum"`) && strings.Contains(w, `"optimizer" is "sgd"`)
	}
	if !sawWiden || !sawCond {
		t.Errorf("warnings do not report the widened lr and the inferred condition: %q", run.Warnings)
	}

	// The trials CSV the run writes reads back with the space it produced:
	// every complete trial usable, failed and pruned ones skipped.
	var buf bytes.Buffer
	if err := run.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	tab, err := trials.ReadCSV(bytes.NewReader(buf.Bytes()), s)
	if err != nil {
		t.Fatalf("written CSV does not read back: %v\n%s", err, buf.String())
	}
	if len(tab.Usable()) != states[history.Complete] || len(tab.Trials)-len(tab.Usable()) != 2 {
		t.Errorf("CSV reads back %d usable of %d, want %d and 2 more", len(tab.Usable()), len(tab.Trials), states[history.Complete])
	}
}

func TestImportOptunaRDB(t *testing.T) {
	run, err := ImportOptuna("testdata/optuna_rdb.sqlite3", "tpe-known")
	if err != nil {
		t.Fatal(err)
	}
	if run.Format != "optuna-rdb" || run.Name != "tpe-known" {
		t.Errorf("format %q study %q", run.Format, run.Name)
	}
	checkOptunaRun(t, run, loadExpected(t, "rdb"))
}

func TestImportOptunaJournal(t *testing.T) {
	run, err := ImportOptunaJournal("testdata/optuna_journal.log", "tpe-known")
	if err != nil {
		t.Fatal(err)
	}
	checkOptunaRun(t, run, loadExpected(t, "journal"))
}

// TestImportFreshOptunaStudy creates the study with the real Optuna (Debian
// python3-optuna) in a temporary directory, then imports both storages. The
// committed fixtures pin one Optuna version; this catches a format change in
// the version installed now. CI sets XBO_REQUIRE_OPTUNA=1 so it cannot skip.
func TestImportFreshOptunaStudy(t *testing.T) {
	dir := optunatest.FreshStudy(t)
	if dir == "" {
		t.Skip("the committed fixtures are tested instead")
	}
	rdb, err := ImportOptuna(filepath.Join(dir, "optuna_rdb.sqlite3"), "tpe-known")
	if err != nil {
		t.Fatal(err)
	}
	checkOptunaRun(t, rdb, loadExpectedFrom(t, dir, "rdb"))
	journal, err := ImportOptunaJournal(filepath.Join(dir, "optuna_journal.log"), "tpe-known")
	if err != nil {
		t.Fatal(err)
	}
	checkOptunaRun(t, journal, loadExpectedFrom(t, dir, "journal"))
}

func TestOptunaStudyListingAndChoice(t *testing.T) {
	for _, tc := range []struct {
		name string
		list func(string) ([]StudyInfo, error)
		load func(string, string) (*Run, error)
		path string
	}{
		{"rdb", ListOptunaStudies, ImportOptuna, "testdata/optuna_rdb.sqlite3"},
		{"journal", ListOptunaJournalStudies, ImportOptunaJournal, "testdata/optuna_journal.log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			infos, err := tc.list(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			want := []StudyInfo{{"tpe-known", 1, 40}, {"small-max", 1, 4}, {"two-objectives", 2, 3}}
			if len(infos) != len(want) {
				t.Fatalf("studies %+v", infos)
			}
			for i := range want {
				if infos[i] != want[i] {
					t.Errorf("study %d = %+v, want %+v", i, infos[i], want[i])
				}
			}
			_, err = tc.load(tc.path, "")
			var choice *StudyChoiceError
			if !errors.As(err, &choice) || !strings.Contains(err.Error(), `"small-max" (4 trials)`) {
				t.Errorf("no study named: %v", err)
			}
			// The study returns (y, z): its objective values are its two
			// parameters, in its directions, under xbo's default names.
			multi, err := tc.load(tc.path, "two-objectives")
			if err != nil {
				t.Fatalf("multi-objective study: %v", err)
			}
			if got := multi.Space.Objectives; len(got) != 2 || got[0] != (space.Objective{Name: "objective_0", Direction: space.Minimize}) ||
				got[1] != (space.Objective{Name: "objective_1", Direction: space.Maximize}) || len(multi.Trials) != 3 {
				t.Errorf("two-objectives: objectives %+v, %d trials", got, len(multi.Trials))
			}
			for _, tr := range multi.Trials {
				if len(tr.Values) != 2 || tr.Values[0] != tr.Params[0] || tr.Values[1] != tr.Params[1] || tr.Value != tr.Values[0] {
					t.Errorf("two-objectives trial %d: values %v, value %v for (y, z) = %v", tr.Number, tr.Values, tr.Value, tr.Params)
				}
			}
			_, err = tc.load(tc.path, "nope")
			if err == nil || !strings.Contains(err.Error(), `no study named "nope"`) {
				t.Errorf("unknown study: %v", err)
			}
			run, err := tc.load(tc.path, "small-max")
			if err != nil {
				t.Fatal(err)
			}
			if run.Space.Objective != space.Maximize || len(run.Trials) != 4 {
				t.Errorf("small-max: %s, %d trials", run.Space.Objective, len(run.Trials))
			}
			for _, tr := range run.Trials {
				if x := tr.Params[0]; tr.Value != -x*x {
					t.Errorf("small-max trial %d: value %v for x = %v", tr.Number, tr.Value, x)
				}
			}
		})
	}
}

func TestOptunaBadFiles(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "x.db")
	os.WriteFile(notDB, []byte("hello, this is not sqlite at all"), 0o644)
	if _, err := ImportOptuna(notDB, ""); err == nil || !strings.Contains(err.Error(), "not an SQLite database") {
		t.Errorf("text file: %v", err)
	}
	if _, err := ImportOptuna(filepath.Join(dir, "missing.db"), ""); err == nil {
		t.Error("missing file accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("importing a missing file created it")
	}
	// A journal cut in the middle of its last line imports what is complete;
	// a broken line in the middle is an error that names the line.
	data, err := os.ReadFile("testdata/optuna_journal.log")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.log")
	os.WriteFile(cut, data[:len(data)-40], 0o644)
	if _, err := ImportOptunaJournal(cut, "two-objectives"); err != nil {
		t.Errorf("cut journal, multi-objective study: %v", err)
	}
	run, err := ImportOptunaJournal(cut, "tpe-known")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(run.Warnings, "\n"), "interrupted write") {
		t.Errorf("no warning for the cut line: %q", run.Warnings)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines[10] = []byte("{\"op_code\": 5, \"trial_id\": \n")
	broken := filepath.Join(dir, "broken.log")
	os.WriteFile(broken, bytes.Join(lines, nil), 0o644)
	if _, err := ImportOptunaJournal(broken, "tpe-known"); err == nil || !strings.Contains(err.Error(), "line 11") {
		t.Errorf("broken line 11: %v", err)
	}
}
