package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xbo/client"
)

// TestExplainAtBudgetSurfaces runs a multi-fidelity study through the
// service (reports at steps 1, 3, 9; every third trial pruned after step 3)
// and checks that the CLI, the API and the report give the same documents
// for explanations at a budget and for the comparison between budgets, that
// the text outputs name the budget and the trials, and that a budget no
// trial reached is a usage error.
func TestExplainAtBudgetSurfaces(t *testing.T) {
	if testing.Short() {
		t.Skip("computes importances on every surface")
	}
	ctx := context.Background()
	dir, db, c, apiOf := serveStore(t)
	api := apiOf("mf")
	if _, err := c.CreateStudy(ctx, client.StudySpec{Name: "mf", Space: json.RawMessage(`{"objective":"maximize","params":[
		{"name":"lr","type":"float","low":0.001,"high":1,"log":true},{"name":"width","type":"int","low":8,"high":256}]}`),
		Optimizer: json.RawMessage(`{"strategy":"random","seed":4}`)}); err != nil {
		t.Fatal(err)
	}
	for i := range 21 {
		tr, err := c.Ask(ctx, "mf")
		if err != nil {
			t.Fatal(err)
		}
		lr, _ := tr.Float("lr")
		width, _ := tr.Float("width")
		// Early accuracy follows the learning rate, late accuracy the width.
		at := func(step float64) float64 { return (1-step/9)*lr + step/9*width/256 }
		steps := []float64{1, 3, 9}
		if i%3 == 2 {
			steps = steps[:2]
		}
		for _, s := range steps {
			if _, err := c.Report(ctx, "mf", tr.Number, int64(s), at(s)); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 == 2 {
			err = c.Prune(ctx, "mf", tr.Number)
		} else {
			err = c.Tell(ctx, "mf", tr.Number, at(9))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	cli := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append(args, "--study", "mf", "--db", db)...)
		if code != 0 {
			t.Fatalf("CLI %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	for _, c := range []struct {
		kind, query string
		args        []string
	}{
		{"importance", "budget=3", []string{"explain", "importance", "--budget", "3"}},
		{"pdp", "param=lr&budget=1", []string{"explain", "pdp", "--param", "lr", "--budget", "1"}},
		{"regional", "param=width&budget=3", []string{"explain", "regional", "--param", "width", "--budget", "3"}},
		{"slice", "param=lr&budget=3", []string{"explain", "pdp", "--param", "lr", "--slice", "--budget", "3"}},
		{"shapley", "point=best&background=100&budget=3", []string{"explain", "shapley", "--point", "best", "--background", "100", "--budget", "3"}},
		{"lpi", "budget=1", []string{"explain", "lpi", "--budget", "1"}},
		{"ablation", "source=last&budget=9", []string{"explain", "ablation", "--source", "last", "--budget", "9"}},
		{"budgets", "", []string{"explain", "budgets"}},
		{"budgets", "budget=1,9&level=0.9", []string{"explain", "budgets", "--budgets", "9,1", "--level", "0.9"}},
	} {
		fromAPI := api(c.kind, c.query)
		if fromCLI := normalizeJSON(t, "CLI", []byte(cli(append(c.args, "--json")...))); fromCLI != fromAPI {
			t.Errorf("%s?%s: the API and the CLI differ:\nAPI %.400s\nCLI %.400s", c.kind, c.query, fromAPI, fromCLI)
		}
	}
	// At budget 3 all 21 trials count (7 pruned); at 9 the 14 complete ones.
	if !strings.Contains(api("importance", "budget=3"), `"budget":{"left_out":0,"pruned":7,"rule":`) {
		t.Errorf("importance at budget 3: %.300s", api("importance", "budget=3"))
	}
	text := cli("explain", "importance", "--budget", "9")
	if !strings.Contains(text, "values at budget 9: 14 trials (0 of them pruned; 7 finished trials left out)") {
		t.Errorf("importance text at budget 9 does not name the budget:\n%s", text)
	}
	// explain budgets reads the pruned trials' curves: no note says they
	// are left out (the explanations of final values do say it).
	code, text, errOut := runCLI(t, "explain", "budgets", "--study", "mf", "--db", db)
	if code != 0 || strings.Contains(errOut, "not modelled") {
		t.Errorf("explain budgets: exit %d, stderr %q", code, errOut)
	}
	if _, _, errOut := runCLI(t, "explain", "importance", "--study", "mf", "--db", db); !strings.Contains(errOut, "7 trial(s) without a usable value") {
		t.Errorf("explain importance: stderr %q lacks the note on the 7 pruned trials", errOut)
	}
	t.Logf("xbo explain budgets:\n%s", text)
	for _, want := range []string{"21 finished trials with intermediate values, 14 complete", "1 → final", "3 → 9", "Spearman", "better half: trials"} {
		if !strings.Contains(text, want) {
			t.Errorf("budgets text lacks %q:\n%s", want, text)
		}
	}
	if code, _, errOut := runCLI(t, "explain", "pdp", "--param", "lr", "--budget", "10", "--study", "mf", "--db", db); code != 2 ||
		!strings.Contains(errOut, "no complete or pruned trial has a value at budget 10") {
		t.Errorf("budget 10: exit %d, %s", code, errOut)
	}

	// The report's section on budgets holds the API's documents.
	out, jsonOut := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.json")
	if code, _, errOut := runCLI(t, "explain", "report", "--study", "mf", "--db", db, "--out", out, "--json", jsonOut); code != 0 {
		t.Fatalf("report: %s", errOut)
	}
	raw, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Budgets struct {
			Correlation json.RawMessage   `json:"correlation"`
			Importance  []json.RawMessage `json:"importance"`
		} `json:"budgets"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if got := normalizeJSON(t, "report budgets", rep.Budgets.Correlation); got != api("budgets", "") {
		t.Errorf("report's budgets differ from the API's:\n%.400s\n%.400s", got, api("budgets", ""))
	}
	if len(rep.Budgets.Importance) != 3 {
		t.Fatalf("report has %d importances at budgets, want 3 (budgets 1, 3, 9)", len(rep.Budgets.Importance))
	}
	for i, b := range []string{"1", "3", "9"} {
		if got := normalizeJSON(t, "report importance", rep.Budgets.Importance[i]); got != api("importance", "budget="+b) {
			t.Errorf("report's importance at budget %s differs from the API's", b)
		}
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<h2 id="budgets">`, "budget 3 (21 trials, 7 pruned)", "1 → final"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}
