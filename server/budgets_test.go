package server_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"xbo/explain"
	"xbo/history"
	"xbo/space"
	"xbo/store/storetest"
)

// curveAt is a learning curve on the 2-D space: early steps rank by y,
// the last by x.
func curveAt(x, y float64, step int64) float64 {
	w := float64(step-1) / 7
	return (1-w)*y + w*x + 0.1*float64(step)
}

// TestExplainAtBudgetEndpoints runs a study whose workers report at steps
// 1, 2, 4, 8 (every third trial pruned after step 2), then asks the API for
// explanations at a budget and for the correlation between budgets, and
// checks them against the engine's explanation of the hand-made study of
// step values and against a brute-force rank correlation.
func TestExplainAtBudgetEndpoints(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "mf", `{"strategy":"random","seed":3}`)
	sp, err := space.Parse([]byte(space2D))
	if err != nil {
		t.Fatal(err)
	}
	atTwo := &history.History{Name: "mf", Space: sp} // the study of the values at step 2, by hand
	var atTwoV, finalV []float64                     // complete trials: value at step 2, final value
	for i := range 24 {
		tr, err := e.c.Ask(ctx, "mf")
		if err != nil {
			t.Fatal(err)
		}
		x, _ := tr.Float("x")
		y, _ := tr.Float("y")
		steps := []int64{1, 2, 4, 8}
		if i%3 == 2 {
			steps = steps[:2]
		}
		for _, s := range steps {
			if _, err := e.c.Report(ctx, "mf", tr.Number, s, curveAt(x, y, s)); err != nil {
				t.Fatal(err)
			}
		}
		atTwo.Trials = append(atTwo.Trials, history.Trial{Number: tr.Number, State: history.Complete, Params: []float64{x, y},
			Value: curveAt(x, y, 2), Completion: i})
		if i%3 == 2 {
			if err := e.c.Prune(ctx, "mf", tr.Number); err != nil {
				t.Fatal(err)
			}
			continue
		}
		final := curveAt(x, y, 8) + 0.01*y
		if err := e.c.Tell(ctx, "mf", tr.Number, final); err != nil {
			t.Fatal(err)
		}
		atTwoV, finalV = append(atTwoV, curveAt(x, y, 2)), append(finalV, final)
	}

	// Importance at budget 2 is the importance of the step-2 study.
	const q = "samples=256&posterior=40&refits=-1"
	code, body := raw(t, e, "GET", "/api/studies/mf/explain/importance?budget=2&"+q, "", false)
	if code != 200 {
		t.Fatalf("importance at budget 2: %d %s", code, body)
	}
	engine, err := explain.New(explain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := engine.Importance(ctx, atTwo, explain.ImportanceRequest{Samples: 256, Posterior: 40, Refits: -1})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	budget, _ := json.Marshal(got["budget"])
	if string(budget) != `{"left_out":0,"pruned":8,"rule":"`+explain.BudgetRule+`","step":2,"trials":24}` {
		t.Errorf("budget header %s", budget)
	}
	delete(got, "budget")
	wantJSON, _ := json.Marshal(want)
	var wantMap map[string]any
	_ = json.Unmarshal(wantJSON, &wantMap)
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(wantMap)
	if string(g) != string(w) {
		t.Errorf("importance at budget 2 differs from the step-2 study's:\n%s\n%s", g, w)
	}
	// Budget 4 leaves the pruned trials out: 16 trials.
	code, body = raw(t, e, "GET", "/api/studies/mf/explain/pdp?param=x&samples=100&budget=4", "", false)
	if code != 200 || !strings.Contains(body, `"budget":{"step":4,"trials":16,"pruned":0,"left_out":8`) {
		t.Errorf("PDP at budget 4: %d %.400s", code, body)
	}
	// A budget no trial reached, and a malformed one, are 400s.
	for path, msg := range map[string]string{
		"/api/studies/mf/explain/pdp?param=x&budget=9":    "no complete or pruned trial has a value at budget 9",
		"/api/studies/mf/explain/importance?budget=-1":    "budget=-1 must be a step",
		"/api/studies/mf/explain/importance?budget=x":     "not an integer",
		"/api/studies/mf/explain/budgets?budget=0":        "no complete or pruned trial has a value at budget 0",
		"/api/studies/mf/explain/paths?budget=2":          "unknown query parameter",
		"/api/studies/mf/explain/budgets?budget=1,2,4,99": "value at budget 99",
	} {
		if code, body := raw(t, e, "GET", path, "", false); code != 400 || !strings.Contains(body, msg) {
			t.Errorf("%s: %d %s, want 400 with %q", path, code, body, msg)
		}
	}

	// The correlation between budgets, against a brute-force Spearman.
	code, body = raw(t, e, "GET", "/api/studies/mf/explain/budgets", "", false)
	var res explain.BudgetsResult
	if err := json.Unmarshal([]byte(body), &res); code != 200 || err != nil {
		t.Fatalf("budgets: %d %s", code, body)
	}
	if len(res.Budgets) != 5 || res.Curves != 24 || res.Final != 16 || res.Budgets[1].Trials != 24 || res.Budgets[1].Pruned != 8 {
		t.Fatalf("budgets: %+v", res.Budgets)
	}
	var pair *explain.BudgetPair
	for i := range res.Pairs {
		if res.Pairs[i].Label == "2 → final" {
			pair = &res.Pairs[i]
		}
	}
	if pair == nil || pair.Trials != 16 || pair.Spearman == nil {
		t.Fatalf("pair 2 → final: %+v", pair)
	}
	if want := spearmanByFormula(atTwoV, finalV); math.Abs(pair.Spearman.Value-want) > 1e-12 {
		t.Errorf("Spearman 2 → final %v, brute force %v", pair.Spearman.Value, want)
	}
}

// spearmanByFormula is 1 − 6Σd²/(n(n²−1)) (no ties).
func spearmanByFormula(x, y []float64) float64 {
	rank := func(v []float64, i int) float64 {
		r := 0.0
		for _, u := range v {
			if u < v[i] {
				r++
			}
		}
		return r
	}
	d2 := 0.0
	for i := range x {
		d := rank(x, i) - rank(y, i)
		d2 += d * d
	}
	n := float64(len(x))
	return 1 - 6*d2/(n*(n*n-1))
}
