package main

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xbo/space"
	"xbo/store"
	"xbo/trials"
)

// TestStudyCommands creates a study with the CLI, records trials in its
// database, and checks list and export (read back with trials.ReadCSV).
func TestStudyCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := filepath.Join(dir, "space.yaml")
	os.WriteFile(spacePath, []byte(`objective: maximize
params:
  - {name: lr, type: float, low: 0.0001, high: 1, log: true}
  - {name: depth, type: int, low: 0, high: 8}
  - {name: opt, type: categorical, choices: [sgd, adam]}
  - {name: beta, type: float, low: 0, high: 1, condition: {parent: opt, values: [adam]}}
`), 0o644)
	code, out, errOut := runCLI(t, "study", "create", "--db", db, "--name", "cnn", "--space", spacePath, "--strategy", "lcb", "--tau", "2", "--seed", "4")
	if code != 0 || !strings.Contains(out, `created study "cnn" (maximize, 4 parameters`) {
		t.Fatalf("create: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "study", "create", "--db", db, "--name", "cnn", "--space", spacePath); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("duplicate: exit %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "study", "create", "--db", db, "--name", "x", "--space", spacePath, "--strategy", "magic"); code != 2 || !strings.Contains(errOut, "unknown strategy") {
		t.Fatalf("bad strategy: exit %d %q", code, errOut)
	}
	if code, _, _ := runCLI(t, "study", "create", "--db", db, "--space", spacePath); code != 2 {
		t.Fatalf("missing name: exit %d", code)
	}
	code, out, errOut = runCLI(t, "study", "create", "--db", db, "--name", "hb", "--space", spacePath, "--pruner", `{"type":"hyperband","max_resource":27}`)
	if code != 0 || !strings.Contains(out, `pruner {"type":"hyperband","min_resource":1,"max_resource":27,"reduction_factor":3,"bootstrap_count":0}`) {
		t.Fatalf("create with a pruner: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "study", "create", "--db", db, "--name", "y", "--space", spacePath, "--pruner", `{"type":"median","interval_steps":0}`); code != 2 || !strings.Contains(errOut, "interval_steps 0") {
		t.Fatalf("bad pruner: exit %d %q", code, errOut)
	}
	code, out, errOut = runCLI(t, "study", "create", "--db", db, "--name", "mf", "--space", spacePath, "--resource", `{"name":"epochs","min":1,"max":27}`, "--pruner", `{"type":"asha"}`)
	if code != 0 || !strings.Contains(out, `"resource":{"name":"epochs","min":1,"max":27}`) {
		t.Fatalf("create with a resource: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "study", "create", "--db", db, "--name", "tr", "--space", spacePath, "--trust-region", "always")
	if code != 0 || !strings.Contains(out, `"trust_region":"always"`) {
		t.Fatalf("create with a trust region: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "study", "create", "--db", db, "--name", "tr2", "--space", spacePath, "--trust-region", "always", "--surrogate", "forest"); code != 2 || !strings.Contains(errOut, "needs a plain acquisition") {
		t.Fatalf("trust region on the forest: exit %d %q", code, errOut)
	}
	for _, bad := range []string{`{"name":"epochs","min":3,"max":2}`, `{"name":"epochs","low":1}`} {
		if code, _, errOut := runCLI(t, "study", "create", "--db", db, "--name", "z", "--space", spacePath, "--resource", bad); code != 2 || !strings.Contains(errOut, "resource") {
			t.Fatalf("bad resource %s: exit %d %q", bad, code, errOut)
		}
	}

	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	study, err := st.Study(ctx, "cnn")
	if err != nil {
		t.Fatal(err)
	}
	var optCfg map[string]any
	json.Unmarshal(study.Optimizer, &optCfg)
	if optCfg["strategy"] != "lcb" || optCfg["tau"] != 2.0 || optCfg["seed"] != 4.0 {
		t.Fatalf("stored optimizer %s", study.Optimizer)
	}
	rows := []map[string]any{
		{"lr": 0.01, "depth": 3, "opt": "sgd"},
		{"lr": 0.1, "depth": 5, "opt": "adam", "beta": 0.9},
	}
	for i, p := range rows {
		v := float64(i) + 0.5
		if _, err := st.AddTrial(ctx, "cnn", store.NewTrial{Params: p, Value: &v, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	queued, _ := st.AddTrial(ctx, "cnn", store.NewTrial{Params: rows[0], Now: time.Now()})
	st.Tell(ctx, "cnn", queued.Number, store.Result{State: store.Failed, Now: time.Now()})
	// A pruned trial: handed out, reported at step 3, told pruned.
	queued, _ = st.AddTrial(ctx, "cnn", store.NewTrial{Params: rows[1], Now: time.Now()})
	if _, err := st.Ask(ctx, "cnn", store.AskRequest{Worker: "w", Now: time.Now()}, nil); err == nil {
		t.Fatal("an ask without a proposer was accepted")
	}
	if _, err := st.Ask(ctx, "cnn", store.AskRequest{Worker: "w", Now: time.Now()}, func(context.Context, store.AskView) (store.Proposal, error) {
		return store.Proposal{}, errors.New("the queued trial should have been handed out")
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReportIntermediate(ctx, "cnn", queued.Number, store.Report{Step: 3, Value: 0.7, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Tell(ctx, "cnn", queued.Number, store.Result{State: store.Pruned, Value: math.NaN(), Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, _ = runCLI(t, "study", "list", "--db", db)
	if code != 0 || !strings.Contains(out, "cnn") || !strings.Contains(out, "1.5") {
		t.Fatalf("list: %d %q", code, out)
	}
	// NAME DIRECTION COMPLETE PRUNED RUNNING PENDING FAILED EXPIRED BEST
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "PRUNED") || strings.Join(strings.Fields(lines[1]), " ") != "cnn maximize 2 1 0 0 1 0 1.5" {
		t.Fatalf("list: %q", out)
	}
	code, out, _ = runCLI(t, "study", "list", "--db", db, "--json")
	var list []store.StudySummary
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 4 || list[0].Counts[store.Complete] != 2 || list[0].Counts[store.Pruned] != 1 {
		t.Fatalf("list --json: %d %q", code, out)
	}
	code, out, errOut = runCLI(t, "study", "export", "cnn", "--csv", "--db", db)
	if code != 0 {
		t.Fatalf("export: %d %q", code, errOut)
	}
	if !strings.HasPrefix(out, "number,lr,depth,opt,beta,value,acquisition,state\n") || strings.Contains(out, "failed") ||
		!strings.Contains(out, ",0.7,enqueued,pruned\n") {
		t.Fatalf("export (complete and pruned trials, not failed ones): %q", out)
	}
	sp, err := space.Load(spacePath)
	if err != nil {
		t.Fatal(err)
	}
	table, err := trials.ReadCSV(strings.NewReader(out), sp)
	if err != nil {
		t.Fatal(err)
	}
	if u := table.Usable(); len(u) != 2 || table.Trials[u[1]].Value != 1.5 || !math.IsNaN(table.Trials[u[0]].Params[3]) ||
		table.Trials[u[1]].Params[3] != 0.9 || table.Trials[u[1]].Params[2] != 1 {
		t.Fatalf("exported table: %+v", table.Trials)
	}
	code, out, _ = runCLI(t, "study", "export", "cnn", "--json", "--db", db)
	if code != 0 || !strings.Contains(out, `"state": "failed"`) {
		t.Fatalf("export --json: %d %.200q", code, out)
	}
	if code, _, errOut := runCLI(t, "study", "export", "--db", db); code != 2 || !strings.Contains(errOut, "which study") {
		t.Fatalf("export without name: %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "study", "export", "nope", "--db", db); code != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("export unknown: %d %q", code, errOut)
	}
	// --failed keeps the failed trial; -o writes the file whole.
	outFile := filepath.Join(filepath.Dir(db), "cnn.csv")
	if code, _, errOut := runCLI(t, "study", "export", "cnn", "--failed", "-o", outFile, "--db", db); code != 0 {
		t.Fatalf("export -o: %d %q", code, errOut)
	}
	if b, err := os.ReadFile(outFile); err != nil || strings.Count(string(b), "\n") != 5 || !strings.Contains(string(b), ",failed\n") {
		t.Fatalf("exported file %q %v", b, err)
	}
	// Read-only commands never create a database (a typo in --db).
	typo := filepath.Join(filepath.Dir(db), "typo.db")
	for _, args := range [][]string{{"study", "list", "--db", typo}, {"study", "export", "cnn", "--db", typo},
		{"explain", "importance", "--study", "cnn", "--db", typo}} {
		if code, _, errOut := runCLI(t, args...); code != 1 || !strings.Contains(errOut, "no database there") {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
		if _, err := os.Stat(typo); !os.IsNotExist(err) {
			t.Fatalf("%v created %s", args, typo)
		}
	}
}

func TestServeFlags(t *testing.T) {
	if code, _, errOut := runCLI(t, "serve", "--trial-timeout", "-1s"); code != 2 || !strings.Contains(errOut, "negative") {
		t.Fatalf("negative timeout: %d %q", code, errOut)
	}
	if code, _, _ := runCLI(t, "serve", "--log-level", "loud"); code != 2 {
		t.Fatalf("bad log level: %d", code)
	}
	if code, _, errOut := runCLI(t, "serve", "--db", filepath.Join(t.TempDir(), "a.db"), "--addr", "256.0.0.1:1"); code != 1 || !strings.Contains(errOut, "listen") {
		t.Fatalf("bad address: %d %q", code, errOut)
	}
}

func TestServeReservesProcessors(t *testing.T) {
	for _, c := range []struct {
		current, workers int
		env              string
		want             int
	}{
		{2, 2, "", 3}, // the measured case: 2 cores, the default 2 workers
		{2, 1, "", 2},
		{8, 2, "", 8},
		{1, 2, "", 3},
		{2, 2, "2", 2}, // the user's GOMAXPROCS wins
	} {
		if got := processors(c.current, c.workers, c.env); got != c.want {
			t.Errorf("processors(%d, %d, %q) = %d, want %d", c.current, c.workers, c.env, got, c.want)
		}
	}
}
