package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"xbo/client"
	"xbo/explain"
	"xbo/explain/shapley"
	"xbo/store/storetest"
)

type pathsJSON struct {
	Params    []string `json:"params"`
	Tau       float64  `json:"tau"`
	Method    string   `json:"method"`
	Samples   int      `json:"samples"`
	Proposals int      `json:"proposals"`
	Explained int      `json:"explained"`
	Truncated bool     `json:"truncated"`
	Steps     []struct {
		Trial       int64                `json:"trial"`
		Acquisition string               `json:"acquisition"`
		Observed    int                  `json:"observed"`
		Explanation *shapley.Explanation `json:"explanation"`
	} `json:"steps"`
}

// TestExplainPaths: explain/paths has one step per model-chosen trial (those
// whose proposal metadata records the surrogate's observations), in trial
// order, each at that trial's configuration, and every explanation is
// efficient: Σ_j φ_j = payout for mean, se and cb. The exact estimator meets
// it to rounding (1e-9 relative); the Monte Carlo estimator draws every
// parameter independently, so Σ_j φ̂_j − payout has standard error
// √(Σ_j se_j²) and is accepted within 5 of those (plus 1e-9 for rounding).
func TestExplainPaths(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "s", `{"strategy":"ei","seed":3,"initial_size":8}`)
	if err := e.c.Optimize(ctx, "s", 40, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
		t.Fatal(err)
	}
	trials, err := e.c.Trials(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var chosen []int64
	encoded := map[int64]*client.Trial{}
	for _, tr := range trials {
		var meta struct {
			Observed int `json:"observed"`
		}
		if len(tr.Meta) > 0 {
			if err := json.Unmarshal(tr.Meta, &meta); err != nil {
				t.Fatal(err)
			}
		}
		if meta.Observed > 0 {
			chosen = append(chosen, tr.Number)
			encoded[tr.Number] = &tr
		}
	}
	if len(chosen) < 25 {
		t.Fatalf("only %d model-chosen trials of %d; the test needs a real path", len(chosen), len(trials))
	}
	for _, q := range []string{"", "?method=exact"} {
		start := time.Now()
		code, body := raw(t, e, "GET", "/api/studies/s/explain/paths"+q, "", false)
		took := time.Since(start)
		if code != 200 {
			t.Fatalf("paths%s: %d %.300s", q, code, body)
		}
		t.Logf("paths%s: %d proposals of a %d-trial study in %v", q, len(chosen), len(trials), took)
		var got pathsJSON
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		if got.Proposals != len(chosen) || got.Explained != len(chosen) || got.Truncated || len(got.Steps) != len(chosen) {
			t.Fatalf("paths%s: %d proposals, %d explained, %d steps, truncated %v; want %d", q, got.Proposals, got.Explained, len(got.Steps), got.Truncated, len(chosen))
		}
		exact := q != ""
		if exact != (got.Method == string(shapley.Exact)) || (!exact && got.Samples != explain.DefaultPathSamples) {
			t.Fatalf("paths%s: method %q samples %d", q, got.Method, got.Samples)
		}
		for i, s := range got.Steps {
			if s.Trial != chosen[i] {
				t.Fatalf("step %d is trial %d, want %d", i, s.Trial, chosen[i])
			}
			if s.Observed < 1 || s.Observed > int(s.Trial) {
				t.Errorf("trial %d: proposed from %d observations", s.Trial, s.Observed)
			}
			ex := s.Explanation
			x, _ := encoded[s.Trial].Float("x")
			if want := (x + 5) / 15; math.Abs(ex.Point[0]-want) > 1e-9 {
				t.Errorf("trial %d: explained point %v, want x at %v", s.Trial, ex.Point, want)
			}
			for _, out := range []string{shapley.OutputMean, shapley.OutputSE, shapley.OutputCB} {
				a, ok := ex.Output(out)
				if !ok {
					t.Fatalf("trial %d: no %s output", s.Trial, out)
				}
				sum, se2 := 0.0, 0.0
				for j, phi := range a.Phi {
					sum += phi
					if !exact {
						se2 += a.StdErr[j] * a.StdErr[j]
					}
				}
				tol := 1e-9 * (1 + math.Abs(a.Payout))
				if !exact {
					tol += 5 * math.Sqrt(se2)
				}
				if d := math.Abs(sum - a.Payout); !(d <= tol) {
					t.Errorf("paths%s trial %d %s: Σφ = %v, payout %v (|Δ| %v > %v)", q, s.Trial, out, sum, a.Payout, d, tol)
				}
				if out == shapley.OutputCB {
					m, _ := ex.Output(shapley.OutputMean)
					sd, _ := ex.Output(shapley.OutputSE)
					if d := a.Prediction - (m.Prediction - got.Tau*sd.Prediction); math.Abs(d) > 1e-9*(1+math.Abs(a.Prediction)) {
						t.Errorf("trial %d: cb %v ≠ m − τ·s = %v", s.Trial, a.Prediction, m.Prediction-got.Tau*sd.Prediction)
					}
				}
			}
		}
	}
	for _, q := range []string{"samples=1", "samples=abc", "samples=100000", "tau=-1", "method=baseline", "method=nope"} {
		if code, body := raw(t, e, "GET", "/api/studies/s/explain/paths?"+q, "", false); code != 400 {
			t.Errorf("paths?%s: %d %s, want 400", q, code, body)
		}
	}
}

// BenchmarkExplainPaths times explain/paths of a 40-trial study (about 30
// model-chosen proposals) with the default sample size.
func BenchmarkExplainPaths(b *testing.B) {
	st, _ := storetest.Open(b, "sqlite")
	e := newEnv(b, st, 0)
	ctx := context.Background()
	createStudy(b, e, "s", `{"strategy":"ei","seed":3,"initial_size":8}`)
	if err := e.c.Optimize(ctx, "s", 40, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		resp, err := e.http.Client().Get(e.http.URL + "/api/studies/s/explain/paths")
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(fmt.Sprint("status ", resp.StatusCode))
		}
	}
}

// The paths say their units: the objective's, or the warp the optimizer's
// proposal model was fitted with, whose mean is then on the warped scale
// (standardized: within a few units of 0, where Branin's values reach 300);
// by default the trust-region proposals' models are unwarped and the others'
// warped, and each step says which.
func TestExplainPathsUnits(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	for _, c := range []struct{ name, optimizer, units string }{
		{"plain", `{"seed":3,"initial_size":6,"output_warp":"none"}`, "objective"},
		{"warped", `{"seed":3,"initial_size":6,"output_warp":"yeo-johnson","trust_region":"none"}`, "yeo-johnson"},
		{"default", `{"seed":3,"initial_size":6}`, "mixed"},
	} {
		createStudy(t, e, c.name, c.optimizer)
		if err := e.c.Optimize(ctx, c.name, 12, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
			t.Fatal(err)
		}
		code, body := raw(t, e, "GET", "/api/studies/"+c.name+"/explain/paths?method=exact", "", false)
		var got struct {
			Units string `json:"units"`
			Steps []struct {
				Trial       int                  `json:"trial"`
				Units       string               `json:"units"`
				Explanation *shapley.Explanation `json:"explanation"`
			} `json:"steps"`
		}
		if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || len(got.Steps) == 0 {
			t.Fatalf("%s paths: %d %.300s", c.name, code, body)
		}
		if got.Units != c.units {
			t.Errorf("%s: units %q, want %q", c.name, got.Units, c.units)
		}
		if c.units == "mixed" {
			// Asks 6–9 search the whole space; ask 10, after 6 design
			// points and trustDelay(2) = 4 completions, is confined.
			for _, s := range got.Steps {
				if want := map[bool]string{true: "objective", false: "yeo-johnson"}[s.Trial == 10]; s.Units != want {
					t.Errorf("default: trial %d in %q, want %q", s.Trial, s.Units, want)
				}
			}
			continue
		}
		maxMean := 0.0
		for _, s := range got.Steps {
			if s.Units != c.units {
				t.Errorf("%s: trial %d in %q", c.name, s.Trial, s.Units)
			}
			a, _ := s.Explanation.Output(shapley.OutputMean)
			maxMean = math.Max(maxMean, math.Abs(a.Payout))
		}
		if warped := c.units != "objective"; warped != (maxMean < 5) {
			t.Errorf("%s: largest |mean| of a proposal %.3g; warped %v", c.name, maxMean, warped)
		}
	}
}
