package opt

import (
	"math"
	"testing"

	"xbo/acq"
	"xbo/surrogate"
)

// towardsSmooth is towards with its gradient, so the refinement is the
// gradient climb instead of the pattern search.
type towardsSmooth struct{ towards }

func (towardsSmooth) Differentiable() bool { return true }

func (a towardsSmooth) ScoreGradient(_ surrogate.Gradienter, x, grad []float64) (float64, error) {
	var d2 float64
	for j, v := range x {
		d2 += (v - a.target[j]) * (v - a.target[j])
		grad[j] = -2 * (v - a.target[j])
	}
	return -d2, nil
}

// TestSearchAvoidsCopiesInAFloatSpace: an acquisition whose maximum is an
// evaluated (or pending) configuration of an all-float space, which the
// random stage, the local candidates and the refinement (pattern search or
// gradient climb) all approach, yields its best configuration outside the
// duplicate tolerance of every trial, by the acquisition itself, never a
// random fallback; with the filter off the copy is proposed.
func TestSearchAvoidsCopiesInAFloatSpace(t *testing.T) {
	s := mustSpace(t, square2)
	for _, smooth := range []bool{false, true} {
		for _, pending := range []bool{false, true} {
			target := []float64{0.5, 0.5}
			o, err := New(Config{Space: s, Seed: 5, MinDistance: -1, Acquire: func(it Iteration) (acq.Acquisition, error) {
				if smooth {
					return towardsSmooth{towards{target: target}}, nil
				}
				return towards{target: target}, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			run(t, o, 10, bowl2)
			var held Trial
			if pending {
				// A pending trial is the target: MinDistance is off, so only
				// the duplicate tolerance keeps the search off it.
				if held, err = o.Ask(); err != nil {
					t.Fatal(err)
				}
				target = held.U
			} else {
				target = o.History()[3].U
			}
			for k := range 5 {
				tr, err := o.Ask()
				if err != nil {
					t.Fatal(err)
				}
				if tr.Acquisition != "towards" {
					t.Fatalf("smooth %v, pending %v, ask %d: %q (%s), want the acquisition's own choice", smooth, pending, k, tr.Acquisition, tr.Note)
				}
				for _, h := range o.History() {
					if h.ID == tr.ID {
						continue
					}
					if d := math.Sqrt(squaredDistance(h.U, tr.U)); d <= defaultDuplicateTolerance {
						t.Errorf("smooth %v, pending %v, ask %d: %v is %.3g from trial %d", smooth, pending, k, tr.U, d, h.Number)
					}
				}
				// The best admissible point hugs the wall around the target.
				if d := math.Sqrt(squaredDistance(target, tr.U)); d > 0.05 {
					t.Errorf("smooth %v, pending %v, ask %d: %v is %.3g from the target, want the best point beside it", smooth, pending, k, tr.U, d)
				}
				if err := o.Tell(tr.ID, bowl2(tr.Params)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// cornerSpace has its optimum on a corner: x and y at their lower bound, and
// the log-scaled z at its lower bound too.
const cornerSpace = `{"params":[
	{"name":"x","type":"float","low":0,"high":1},
	{"name":"y","type":"float","low":0,"high":1},
	{"name":"z","type":"float","low":0.001,"high":1,"log":true}]}`

// cornerSum is minimal, 0.001, at the corner (0, 0, 0.001).
func cornerSum(p []float64) float64 { return p[0] + p[1] + p[2] }

// TestCornerOptimumFewFallbacks (issue 49): on an optimum at a corner EI's
// argmax is a copy of the incumbent; the best configuration away from it
// must be proposed instead of a random one, for EI, LCB (τ = 0.1) and a
// BOBAX strategy: at most 5% of the model-based proposals are random
// fallbacks (before: 31–40 of 48), and the best value reaches the corner.
func TestCornerOptimumFewFallbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("three 60-trial runs")
	}
	s := mustSpace(t, cornerSpace)
	const budget, optimum, tolerance = 60, 0.001, 1e-3
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"ei", Config{Strategy: "ei"}},
		{"lcb", Config{Strategy: "lcb", Tau: 0.1}},
		{"bobax", Config{Strategy: "bobax"}},
	} {
		cfg := c.cfg
		cfg.Space, cfg.Seed = s, 7
		o, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		run(t, o, budget, cornerSum)
		modelBased, fallbacks := 0, 0
		best := math.Inf(1)
		for _, h := range o.History() {
			best = min(best, h.Value)
			switch h.Acquisition {
			case AcqInitialDesign:
			case AcqRandomFallback:
				fallbacks++
				modelBased++
			default:
				modelBased++
			}
		}
		t.Logf("%s: %d random fallbacks of %d model-based proposals, best %.6g", c.name, fallbacks, modelBased, best)
		if 20*fallbacks > modelBased {
			t.Errorf("%s: %d random fallbacks of %d model-based proposals, want ≤ 5%%", c.name, fallbacks, modelBased)
		}
		if best > optimum+tolerance {
			t.Errorf("%s: best %.6g, want within %g of the corner's %g", c.name, best, tolerance, optimum)
		}
	}
}
