package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xbo/explain"
	"xbo/store"
)

// A study with two objectives (error = x + 2(a − 0.3)², minimized; speed =
// x − 2(b − 0.7)², maximized) kept in a store: explain tradeoff names x as
// the parameter that moves along the front, and --objective explains one
// objective with its own surrogate (b matters to speed, not to error).
func TestExplainTradeoffAndObjective(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "mo.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	spaceDoc := `{"objectives":[{"name":"error","direction":"minimize"},{"name":"speed","direction":"maximize"}],"params":[
		{"name":"x","type":"float","low":0,"high":1},{"name":"a","type":"float","low":0,"high":1},
		{"name":"b","type":"float","low":0,"high":1},{"name":"z","type":"float","low":0,"high":1}]}`
	rng := rand.New(rand.NewPCG(4, 5))
	var trials []store.ImportedTrial
	for range 60 {
		x, a, b, z := rng.Float64(), rng.Float64(), rng.Float64(), rng.Float64()
		e, s := x+2*(a-0.3)*(a-0.3), x-2*(b-0.7)*(b-0.7)
		trials = append(trials, store.ImportedTrial{Params: map[string]any{"x": x, "a": a, "b": b, "z": z}, Value: &e, Values: []float64{e, s}})
	}
	if _, err := st.ImportStudy(ctx, store.NewStudy{Name: "mo", Direction: "minimize", Space: []byte(spaceDoc),
		Optimizer: []byte(`{}`), Now: time.Now()}, trials); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, errOut := runCLI(t, "explain", "tradeoff", "--study", "mo", "--db", db, "--mc", "300", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res explain.TradeoffResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, p := range res.Params {
		verdicts[p.Param] = p.Verdict
	}
	if verdicts["x"] != explain.AlongFront || verdicts["a"] != explain.OneObjective || verdicts["b"] != explain.OneObjective {
		t.Errorf("verdicts %v", verdicts)
	}
	code, out, errOut = runCLI(t, "explain", "tradeoff", "--study", "mo", "--db", db, "--mc", "300", "--trial", fmt.Sprint(res.Front[0]))
	if code != 0 || !strings.Contains(out, "moves along the front: x") || !strings.Contains(out, fmt.Sprintf("Shapley values of trial %d", res.Front[0])) {
		t.Errorf("text output (exit %d, %s):\n%s", code, errOut, out)
	}

	imp := func(objective string) map[string]float64 {
		t.Helper()
		code, out, errOut := runCLI(t, "explain", "importance", "--study", "mo", "--db", db, "--objective", objective, "--json", "--seed", "1")
		if code != 0 {
			t.Fatalf("--objective %s: exit %d: %s", objective, code, errOut)
		}
		var r explain.ImportanceResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if r.Objective == "" {
			t.Errorf("--objective %s: the result does not name its objective", objective)
		}
		f := map[string]float64{}
		for k, v := range r.Main {
			f[k] = v.Fraction
		}
		return f
	}
	speed, errImp := imp("speed"), imp("0")
	if speed["b"] < 0.3 || errImp["b"] > 0.05 || errImp["a"] < 0.3 || speed["a"] > 0.05 {
		t.Errorf("importance of a, b: error %.3f, %.3f; speed %.3f, %.3f", errImp["a"], errImp["b"], speed["a"], speed["b"])
	}
	if code, _, errOut := runCLI(t, "explain", "importance", "--study", "mo", "--db", db, "--objective", "latency"); code != 2 || !strings.Contains(errOut, "error, speed") {
		t.Errorf("unknown objective: exit %d, %s", code, errOut)
	}
}
