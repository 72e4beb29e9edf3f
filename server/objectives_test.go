package server_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"xbo/client"
	"xbo/store/storetest"
)

const spaceMO = `{"objectives":[{"name":"error","direction":"minimize"},{"name":"speed","direction":"maximize"}],
	"constraints":["min_x"],
	"params":[{"name":"x","type":"float","low":0,"high":1},{"name":"y","type":"float","low":0,"high":1}]}`

// zdtLike is a two-objective problem with a known front (y = 0): error =
// x, speed = √x − y (maximized), feasible when x ≥ 0.2.
func zdtLike(t *client.Trial) (client.Outcome, error) {
	x, err := t.Float("x")
	if err != nil {
		return client.Outcome{}, err
	}
	y, err := t.Float("y")
	if err != nil {
		return client.Outcome{}, err
	}
	return client.Outcome{Values: []float64{x, math.Sqrt(x) - y}, Constraints: []float64{0.2 - x}}, nil
}

// A study with two objectives and a constraint, served to two workers on
// both backends: every trial keeps its values and constraint values, the
// model-based proposals are EHVI's (with its notes), best_trials is exactly the Pareto
// front of the feasible trials, a server started afresh carries on, and
// outcomes of the wrong shape are refused.
func TestMultiObjectiveStudy(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, 0)
		ctx := context.Background()
		if _, err := e.c.CreateStudy(ctx, client.StudySpec{Name: "mo", Space: json.RawMessage(spaceMO),
			Optimizer: map[string]any{"seed": 3, "initial_size": 6, "candidates": 200}}); err != nil {
			t.Fatal(err)
		}
		work := func(c *client.Client, n int) error {
			for range n {
				tr, err := c.Ask(ctx, "mo")
				if err != nil {
					return err
				}
				o, err := zdtLike(tr)
				if err != nil {
					return err
				}
				if err := c.TellOutcome(ctx, "mo", tr.Number, o); err != nil {
					return err
				}
			}
			return nil
		}
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for range 2 {
			wg.Add(1)
			go func() { defer wg.Done(); errs <- work(e.c, 7) }()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		// A new server on the same store rebuilds the optimizer from it.
		e2 := newEnv(t, st, 0)
		if err := work(e2.c, 4); err != nil {
			t.Fatal(err)
		}
		all, err := e.c.Trials(ctx, "mo")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 18 {
			t.Fatalf("%d trials, want 18", len(all))
		}
		ehvi := 0
		for _, tr := range all {
			want, _ := zdtLike(&tr)
			if tr.State != "complete" || !slices.Equal(tr.Values, want.Values) || !slices.Equal(tr.Constraints, want.Constraints) || *tr.Value != want.Values[0] {
				t.Fatalf("trial %d: %s, values %v, constraints %v; want %v, %v", tr.Number, tr.State, tr.Values, tr.Constraints, want.Values, want.Constraints)
			}
			if tr.Acquisition == "ehvi" && strings.Contains(string(tr.Meta), "EHVI") {
				ehvi++
			}
		}
		if ehvi < 10 {
			t.Errorf("%d of 12 proposals after the design are EHVI's", ehvi)
		}
		// The front by brute force: feasible, and no other feasible trial
		// is at least as good in both objectives and better in one.
		var want []int64
		for _, a := range all {
			if a.Constraints[0] > 0 {
				continue
			}
			dominated := false
			for _, b := range all {
				if b.Constraints[0] <= 0 && b.Values[0] <= a.Values[0] && b.Values[1] >= a.Values[1] &&
					(b.Values[0] < a.Values[0] || b.Values[1] > a.Values[1]) {
					dominated = true
				}
			}
			if !dominated {
				want = append(want, a.Number)
			}
		}
		front, err := e.c.BestTrials(ctx, "mo")
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, tr := range front {
			got = append(got, tr.Number)
		}
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("best_trials %v, want the feasible front %v", got, want)
		}
		best, err := e.c.Best(ctx, "mo")
		if err != nil {
			t.Fatal(err)
		}
		if best.Constraints[0] > 0 || !slices.Contains(want, best.Number) {
			t.Errorf("best trial %d (constraints %v) is not a feasible Pareto-optimal one", best.Number, best.Constraints)
		}

		// Each objective is explained on its own; tradeoff covers them all.
		var imp struct {
			Objective string `json:"objective"`
			Direction string `json:"direction"`
		}
		if err := e.c.Explain(ctx, "mo", "importance", url.Values{"objective": {"speed"}}, &imp); err != nil || imp.Objective != "speed" || imp.Direction != "maximize" {
			t.Errorf("importance of speed: %+v, %v", imp, err)
		}
		if err := e.c.Explain(ctx, "mo", "pdp", url.Values{"objective": {"2"}, "params": {"x"}}, &imp); !client.IsStatus(err, http.StatusBadRequest) {
			t.Errorf("objective 2 of 2: %v, want 400", err)
		}
		var trade struct {
			Objectives []struct{ Name string } `json:"objectives"`
			Params     []struct{ Param, Verdict string }
			Front      []int64 `json:"front"`
		}
		if err := e.c.Explain(ctx, "mo", "tradeoff", url.Values{"samples": {"200"}}, &trade); err != nil || len(trade.Params) != 2 || len(trade.Objectives) != 2 || len(trade.Front) != len(want) {
			t.Errorf("tradeoff: %+v, %v", trade, err)
		}
		if err := e.c.Explain(ctx, "mo", "tradeoff", url.Values{"objective": {"speed"}}, &trade); !client.IsStatus(err, http.StatusBadRequest) {
			t.Errorf("tradeoff of one objective: %v, want 400", err)
		}

		// Outcomes of the wrong shape are refused, and leave the trial running.
		tr, err := e.c.Ask(ctx, "mo")
		if err != nil {
			t.Fatal(err)
		}
		path := "/api/studies/mo/trials/" + jsonNumber(tr.Number) + "/tell"
		for _, body := range []string{
			`{"value": 0.5}`,
			`{"values": [0.5, 0.1]}`,
			`{"values": [0.5, 0.1, 2], "constraints": [0]}`,
			`{"values": [0.5, 0.1], "constraints": [0, 1]}`,
			`{"values": [0.5, "x"], "constraints": [0]}`,
			`{"value": 0.5, "values": [0.5, 0.1], "constraints": [0]}`,
			`{"state": "failed", "values": [0.5, 0.1]}`,
		} {
			if code, text := raw(t, e, http.MethodPost, path, body, true); code != http.StatusBadRequest {
				t.Errorf("tell %s: %d %s, want 400", body, code, text)
			}
		}
		if code, text := raw(t, e, http.MethodPost, path, `{"value": [0.5, 0.1], "constraints": [-1]}`, true); code != http.StatusOK {
			t.Errorf("tell with a list as value: %d %s", code, text)
		}
		// A pruner has no single curve to compare in a study with two
		// objectives.
		if code, text := raw(t, e, http.MethodPost, "/api/studies", `{"name": "p", "space": `+spaceMO+`, "pruner": {"type": "median"}}`, true); code != http.StatusBadRequest {
			t.Errorf("a multi-objective study with a pruner: %d %s, want 400", code, text)
		}
	})
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
