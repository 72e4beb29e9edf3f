package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"xbo/space"
	"xbo/store"
	"xbo/trials"
)

// TestImportExportObjectives goes round with a study of two objectives and
// two constraints: Optuna's storage into a store (the trial complete
// without constraint values recorded as failed, with the reason), study
// list showing the Pareto-optimal trials (Optuna's front over its feasible
// trials: 5, 15, 17, 18), the CSV and JSON exports with a column per
// objective and constraint, and each export imported again into another
// store with the same front.
func TestImportExportObjectives(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	code, stdout, stderr := runCLI(t, "import", "--optuna", importTestdata+"optuna_multi_rdb.sqlite3", "--study", "error-size", "--into", db)
	if code != 0 || !strings.Contains(stdout, "error minimize, size maximize; constraints constraint_0, constraint_1") ||
		!strings.Contains(stdout, "1 of the failed ones are complete in the source without constraint values") {
		t.Fatalf("import: exit %d %q %q", code, stdout, stderr)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	added, err := st.Trial(ctx, "error-size", 24)
	st.Close()
	if err != nil || added.State != store.Failed || !strings.Contains(added.FailReason, "complete without constraint values (error, size [0 0.9])") {
		t.Fatalf("trial 24: %+v %v", added, err)
	}
	wantFront := []int64{5, 15, 17, 18}
	// checkList checks study list's text and JSON and returns the front's
	// objective values (an import of an export numbers the trials anew).
	checkList := func(db, name string, numbers []int64) [][]float64 {
		t.Helper()
		code, stdout, stderr := runCLI(t, "study", "list", "--db", db)
		if code != 0 || !strings.Contains(stdout, "2 objectives") || !strings.Contains(stdout, "4 Pareto-optimal (below)") ||
			!strings.Contains(stdout, name+": error minimize, size maximize; constraints constraint_0, constraint_1") {
			t.Fatalf("list: exit %d %q %q", code, stdout, stderr)
		}
		for _, n := range numbers {
			if !strings.Contains(stdout, "  trial "+strconv.FormatInt(n, 10)+": error=") {
				t.Errorf("list lacks Pareto-optimal trial %d:\n%s", n, stdout)
			}
		}
		if numbers != nil && strings.Contains(stdout, "trial 24:") {
			t.Errorf("trial 24 (no constraint values) is shown as best:\n%s", stdout)
		}
		code, stdout, _ = runCLI(t, "study", "list", "--db", db, "--json")
		var rows []struct {
			Name       string   `json:"name"`
			Best       *float64 `json:"best"`
			BestTrials []struct {
				Number int64     `json:"number"`
				Values []float64 `json:"values"`
			} `json:"best_trials"`
		}
		if err := json.Unmarshal([]byte(stdout), &rows); code != 0 || err != nil || len(rows) != 1 {
			t.Fatalf("list --json: %v %q", err, stdout)
		}
		var got []int64
		var values [][]float64
		for _, b := range rows[0].BestTrials {
			got = append(got, b.Number)
			values = append(values, b.Values)
		}
		if (numbers != nil && !slices.Equal(got, numbers)) || rows[0].Best != nil {
			t.Errorf("list --json: best trials %v, best %v", got, rows[0].Best)
		}
		return values
	}
	frontValues := checkList(db, "error-size", wantFront)

	csvPath, spacePath, jsonPath := filepath.Join(dir, "e.csv"), filepath.Join(dir, "e.json"), filepath.Join(dir, "all.json")
	if code, _, stderr := runCLI(t, "study", "export", "error-size", "--db", db, "-o", csvPath, "--space-out", spacePath); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	text, _ := os.ReadFile(csvPath)
	if header := strings.SplitN(string(text), "\n", 2)[0]; header != "number,x,y,kind,error,size,constraint_0,constraint_1,acquisition,state" {
		t.Errorf("export header %q", header)
	}
	sp, err := space.Load(spacePath)
	if err != nil {
		t.Fatal(err)
	}
	h, err := trials.ReadFile(csvPath, sp)
	if err != nil {
		t.Fatal(err)
	}
	front, _ := h.ParetoFront()
	var got []int64
	for _, i := range front {
		got = append(got, h.Trials[i].Number)
	}
	if !slices.Equal(got, wantFront) {
		t.Errorf("the exported CSV's front %v, want %v", got, wantFront)
	}
	if code, _, stderr := runCLI(t, "study", "export", "error-size", "--db", db, "--json", "-o", jsonPath); code != 0 {
		t.Fatalf("export --json: %s", stderr)
	}
	for _, src := range []string{"--csv", "--json"} {
		file := csvPath
		if src == "--json" {
			file = jsonPath
		}
		db2 := filepath.Join(t.TempDir(), "back.db")
		code, stdout, stderr := runCLI(t, "import", src, file, "--space", spacePath, "--into", db2, "--name", "back")
		if code != 0 {
			t.Fatalf("import %s of the export: exit %d %q %q", src, code, stdout, stderr)
		}
		if back := checkList(db2, "back", nil); !slices.EqualFunc(back, frontValues, slices.Equal) {
			t.Errorf("import %s of the export: front %v, the study's %v", src, back, frontValues)
		}
	}
}
