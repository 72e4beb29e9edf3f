package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xbo/space"
	"xbo/store"
	"xbo/trials"
)

const importTestdata = "../../importer/testdata/"

func TestImportOptunaCommand(t *testing.T) {
	dir := t.TempDir()
	out, spaceOut := filepath.Join(dir, "t.csv"), filepath.Join(dir, "s.json")
	code, stdout, stderr := runCLI(t, "import", "--optuna", importTestdata+"optuna_rdb.sqlite3", "--out", out, "--space-out", spaceOut)
	if code != 2 || !strings.Contains(stdout, "two-objectives") || !strings.Contains(stderr, "choose one with --study") {
		t.Fatalf("several studies, no --study: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a file was written although the study was not chosen")
	}
	code, stdout, stderr = runCLI(t, "import", "--optuna", importTestdata+"optuna_rdb.sqlite3", "--study", "tpe-known", "--out", out, "--space-out", spaceOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "imported 40 trials (38 complete, 1 failed, 1 pruned)") ||
		!strings.Contains(stderr, `warning: parameter "momentum"`) {
		t.Errorf("stdout %q\nstderr %q", stdout, stderr)
	}
	s, err := space.Load(spaceOut)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := trials.ReadFile(out, s)
	if err != nil || len(tab.Usable()) != 38 {
		t.Fatalf("written files: %v", err)
	}
	code, stdout, stderr = runCLI(t, "import", "--optuna", importTestdata+"optuna_rdb.sqlite3", "--study", "two-objectives", "--out", out)
	if code != 0 || !strings.Contains(stdout, "objective_0 minimize, objective_1 maximize") {
		t.Errorf("multi-objective: exit %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "import", "--optuna-journal", importTestdata+"optuna_journal.log", "--list")
	if code != 0 || !strings.Contains(stdout, "small-max") {
		t.Errorf("--list: exit %d %q", code, stdout)
	}
}

func TestImportUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"import"},
		{"import", "--smac", "x", "--optuna", "y", "--out", "z"},
		{"import", "--smac", importTestdata + "smac_v1"},
		{"import", "--csv", "t.csv", "--out", "z"},
		{"import", "--smac", importTestdata + "smac_v1", "--study", "a", "--out", "z"},
		{"import", "--smac", importTestdata + "smac_v1", "--constraint-column", "mem", "--out", "z"},
	} {
		if code, _, stderr := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

func TestImportIntoStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "xbo.db")
	code, stdout, stderr := runCLI(t, "import", "--smac", importTestdata+"smac_v1", "--into", db, "--name", "mlp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `loaded 6 trials into study "mlp"`) {
		t.Errorf("stdout %q", stdout)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	study, err := st.Study(ctx, "mlp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := space.Parse(study.Space); err != nil {
		t.Errorf("the stored space does not parse: %v", err)
	}
	list, total, err := st.Trials(ctx, "mlp", store.TrialQuery{})
	if err != nil || total != 6 {
		t.Fatalf("trials in the store: %d, %v", total, err)
	}
	complete, failed := 0, 0
	for _, tr := range list {
		switch tr.State {
		case store.Complete:
			complete++
		case store.Failed:
			failed++
			if !strings.Contains(tr.FailReason, "imported from smac3-v1") {
				t.Errorf("fail reason %q", tr.FailReason)
			}
		default:
			t.Errorf("trial %d is %s: imported trials must never be handed to workers", tr.Number, tr.State)
		}
	}
	if complete != 4 || failed != 2 {
		t.Errorf("%d complete, %d failed; want 4 and 2", complete, failed)
	}
	best, err := st.Best(ctx, "mlp")
	if err != nil || best.Value == nil || *best.Value != 0.12 || best.Params["solver"] != "adam" {
		t.Errorf("best %+v %v", best, err)
	}
	// The same name again is refused and leaves the first import intact.
	if code, _, stderr := runCLI(t, "import", "--smac", importTestdata+"smac_v1", "--into", db, "--name", "mlp"); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Errorf("second import: exit %d %q", code, stderr)
	}
	if _, total, _ := st.Trials(ctx, "mlp", store.TrialQuery{}); total != 6 {
		t.Errorf("the first import changed: %d trials", total)
	}
}

// An Optuna study with pruned trials keeps them pruned in the store, with
// their values and intermediate values (they were once recorded as failed
// and their curves dropped).
func TestImportPrunedOptunaIntoStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "xbo.db")
	code, stdout, stderr := runCLI(t, "import", "--optuna", importTestdata+"optuna_pruned_rdb.sqlite3", "--into", db)
	if code != 0 || !strings.Contains(stdout, `loaded 16 trials into study "median-curves"`) || !strings.Contains(stdout, "(11 pruned; 0 recorded as failed") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "imported 16 trials (5 complete, 11 pruned)") || !strings.Contains(stderr, "1 intermediate values are left out") {
		t.Errorf("summary %q, warnings %q", stdout, stderr)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, _, err := st.Trials(ctx, "median-curves", store.TrialQuery{})
	if err != nil {
		t.Fatal(err)
	}
	pruned := 0
	for _, tr := range list {
		if len(tr.Intermediate) == 0 {
			t.Errorf("trial %d lost its intermediate values", tr.Number)
			continue
		}
		last := tr.Intermediate[len(tr.Intermediate)-1].Value
		switch tr.State {
		case store.Pruned:
			pruned++
			if tr.Value == nil || *tr.Value != last || tr.FailReason != "" {
				t.Errorf("pruned trial %d: value %v, last intermediate %v, reason %q", tr.Number, tr.Value, last, tr.FailReason)
			}
		case store.Complete:
		default:
			t.Errorf("trial %d is %s", tr.Number, tr.State)
		}
	}
	if pruned != 11 {
		t.Errorf("%d pruned trials in the store, want 11", pruned)
	}
	// The imported curves are what a pruner of the study would read.
	if vals, complete, err := st.CompleteAtStep(ctx, "median-curves", 5); err != nil || complete != 5 || len(vals) != 5 {
		t.Errorf("complete trials' values at step 5: %v (%d complete) %v", vals, complete, err)
	}
	code, stdout, _ = runCLI(t, "study", "list", "--db", db)
	if code != 0 || strings.Join(strings.Fields(strings.Split(stdout, "\n")[1])[:4], " ") != "median-curves minimize 5 11" {
		t.Errorf("study list: %q", stdout)
	}
}
