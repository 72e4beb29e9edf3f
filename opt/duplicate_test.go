package opt

import (
	"math"
	"testing"

	"xbo/acq"
	"xbo/history"
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

// TestCornerOptimumFewFallbacks: on an optimum at a corner EI's
// argmax is a copy of the incumbent; the best configuration away from it
// must be proposed instead of a random one, for EI, LCB (τ = 0.1), PI and a
// BOBAX strategy: at most 5% of the model-based proposals are random
// fallbacks (before: 28, 40, 21 and 19 of 48), and the best value reaches
// the corner.
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
		{"pi", Config{Strategy: "pi"}},
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

// TestCornerOptimumMultiFidelity: the configuration × budget model's
// proposals (a study with a resource whose trials are pruned every other
// time) avoid copies the same way: at most 5% random fallbacks, with the
// corner reached (before: 14 of 48).
func TestCornerOptimumMultiFidelity(t *testing.T) {
	if testing.Short() {
		t.Skip("a 60-trial run")
	}
	s := mustSpace(t, cornerSpace)
	o, err := New(Config{Space: s, Seed: 7, Resource: &Resource{Name: "epochs", Min: 1, Max: 9}})
	if err != nil {
		t.Fatal(err)
	}
	curve := func(p []float64, last int64) []history.Intermediate {
		var c []history.Intermediate
		for _, step := range []int64{1, 3, 9} {
			if step <= last {
				c = append(c, history.Intermediate{Step: step, Value: cornerSum(p) + 0.5/float64(1+step)})
			}
		}
		return c
	}
	modelBased, fallbacks, fidelity := 0, 0, 0
	best := math.Inf(1)
	for k := range 60 {
		tr, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		switch tr.Acquisition {
		case AcqInitialDesign:
		case AcqRandomFallback:
			fallbacks++
			modelBased++
		default:
			modelBased++
		}
		if tr.Fidelity {
			fidelity++
		}
		if k%2 == 1 {
			if err := o.TellPruned(tr.ID, curve(tr.Params, 1)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := o.Report(tr.ID, curve(tr.Params, 9)); err != nil {
			t.Fatal(err)
		}
		v := cornerSum(tr.Params) + 0.05
		best = min(best, v)
		if err := o.Tell(tr.ID, v); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d random fallbacks of %d model-based proposals (%d from the configuration × epochs model), best %.6g", fallbacks, modelBased, fidelity, best)
	if fidelity == 0 {
		t.Fatal("no proposal came from the configuration × epochs model: the test would not cover it")
	}
	if 20*fallbacks > modelBased {
		t.Errorf("%d random fallbacks of %d model-based proposals, want ≤ 5%%", fallbacks, modelBased)
	}
	if best > 0.001+0.05+1e-3 {
		t.Errorf("best %.6g, want within 1e-3 of the corner's %g", best, 0.001+0.05)
	}
}
