package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xbo/store"
)

const reportSpace = `{"objective": "maximize", "params": [
  {"name": "a", "type": "float", "low": 0, "high": 1},
  {"name": "b", "type": "categorical", "choices": ["x", "y"]},
  {"name": "noise", "type": "float", "low": 0, "high": 1}]}`

// reportValue is maximized at a = 0.7, b = y; noise does not matter.
func reportValue(a float64, b string) float64 {
	v := -4 * (a - 0.7) * (a - 0.7)
	if b == "y" {
		v += 0.5
	}
	return v
}

func TestExplainReportCSVAndStore(t *testing.T) {
	dir := t.TempDir()
	spacePath := filepath.Join(dir, "space.json")
	os.WriteFile(spacePath, []byte(reportSpace), 0o644)
	rng := rand.New(rand.NewPCG(7, 7^0x9e3779b97f4a7c15))
	var csv strings.Builder
	csv.WriteString("a,b,noise,value\n")
	type row struct {
		a, n float64
		b    string
	}
	var rows []row
	for i := range 30 {
		r := row{rng.Float64(), rng.Float64(), []string{"x", "y"}[rng.IntN(2)]}
		rows = append(rows, r)
		if i == 4 {
			fmt.Fprintf(&csv, "%g,%s,%g,\n", r.a, r.b, r.n) // a failed trial
			continue
		}
		fmt.Fprintf(&csv, "%g,%s,%g,%g\n", r.a, r.b, r.n, reportValue(r.a, r.b))
	}
	dataPath := filepath.Join(dir, "trials.csv")
	os.WriteFile(dataPath, []byte(csv.String()), 0o644)

	out, jsonOut := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.json")
	code, stdout, stderr := runCLI(t, "explain", "report", "--data", dataPath, "--space", spacePath, "--out", out, "--json", jsonOut, "--mc", "200", "--background", "200")
	if code != 0 || !strings.Contains(stdout, "wrote "+out) || !strings.Contains(stderr, "1 trial(s) without a usable value") {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	var rep struct {
		Summary struct {
			Usable  int `json:"usable_trials"`
			Skipped int `json:"skipped_trials"`
		} `json:"summary"`
		Importance struct {
			Ranking []struct{ Param string } `json:"ranking"`
		} `json:"importance"`
	}
	data, _ := os.ReadFile(jsonOut)
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Importance.Ranking
	if rep.Summary.Usable != 29 || rep.Summary.Skipped != 1 || len(r) != 3 || r[len(r)-1].Param != "noise" {
		t.Fatalf("json summary %+v ranking %+v", rep.Summary, r)
	}
	page, _ := os.ReadFile(out)
	if !strings.Contains(string(page), `id="shapley"`) {
		t.Fatal("html lacks the Shapley section")
	}

	// The same run in the service's store.
	ctx := context.Background()
	db := filepath.Join(dir, "xbo.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStudy(ctx, store.NewStudy{Name: "s", Direction: "maximize", Space: json.RawMessage(reportSpace),
		Optimizer: json.RawMessage(`{}`), Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		nt := store.NewTrial{Params: map[string]any{"a": r.a, "b": r.b, "noise": r.n}, Now: time.Now()}
		if i != 4 {
			v := reportValue(r.a, r.b)
			nt.Value = &v
		}
		if _, err := st.AddTrial(ctx, "s", nt); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out2 := filepath.Join(dir, "s.html")
	code, stdout, stderr = runCLI(t, "explain", "report", "--study", "s", "--db", db, "--out", out2, "--mc", "200", "--background", "200")
	if code != 0 || !strings.Contains(stdout, "(29 trials, 3 parameters") {
		t.Fatalf("store: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	if page, _ := os.ReadFile(out2); !strings.Contains(string(page), "<th>pending</th>") {
		t.Error("store report does not count the pending trial")
	}

	// On a terminal a progress bar is drawn on stderr, never on stdout.
	var so, se bytes.Buffer
	env := &cliEnv{stdout: &so, stderr: &se, stdin: strings.NewReader(""), isTerminal: true}
	if code := run(ctx, []string{"explain", "report", "--data", dataPath, "--space", spacePath, "--out", out, "--mc", "50", "--background", "50"}, env); code != 0 ||
		!strings.Contains(se.String(), "report: Shapley") || strings.Contains(so.String(), "%") {
		t.Fatalf("terminal run: exit %d stdout %q stderr %q", code, so.String(), se.String())
	}

	// Usage and input errors.
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--data", dataPath, "--space", spacePath}, 2, "--out is required"},
		{[]string{"--out", out}, 2, "give --data and --space, or --study"},
		{[]string{"--study", "s", "--data", dataPath, "--out", out}, 2, "drop --data"},
		{[]string{"--data", dataPath, "--space", spacePath, "--out", out, "--grid", "1"}, 2, "grid 1"},
		{[]string{"--study", "nope", "--db", db, "--out", filepath.Join(dir, "n.html")}, 1, `study "nope"`},
		{[]string{"--data", filepath.Join(dir, "missing.csv"), "--space", spacePath, "--out", filepath.Join(dir, "n.html")}, 1, "missing.csv"},
	} {
		code, _, stderr := runCLI(t, append([]string{"explain", "report"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d stderr %q, want %d and %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "n.html")); !os.IsNotExist(err) {
		t.Error("a failed command left a report")
	}
}
