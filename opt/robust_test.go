package opt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// An ask never fails because of numerics: over random histories on mixed
// and conditional spaces, with values that are constant, nearly constant,
// huge, tiny, heavy-tailed or noisy, with pending trials and failures,
// every strategy and surrogate answers every ask. (Values near 1e300 and
// noisy Hartmann6-like cases, which once made asks fail, are in the list.)
func TestEveryAskSucceeds(t *testing.T) {
	spaces := []string{square2, `{"params":[
		{"name":"lr","type":"float","low":1e-5,"high":1,"log":true},
		{"name":"layers","type":"int","low":1,"high":4},
		{"name":"opt","type":"categorical","choices":["sgd","adam"]},
		{"name":"mom","type":"float","low":0,"high":0.99,"condition":{"parent":"opt","values":["sgd"]}}]}`,
		`{"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1},
		{"name":"c","type":"float","low":0,"high":1},{"name":"d","type":"float","low":0,"high":1},
		{"name":"e","type":"float","low":0,"high":1},{"name":"f","type":"float","low":0,"high":1}]}`}
	values := map[string]func(rng *rand.Rand, i int, p []float64) float64{
		"constant":      func(*rand.Rand, int, []float64) float64 { return 3 },
		"near-constant": func(_ *rand.Rand, i int, _ []float64) float64 { return 1 + 1e-15*float64(i%3) },
		"huge":          func(rng *rand.Rand, _ int, p []float64) float64 { return 1e300 * (1 + rng.Float64()) },
		"huge-signed":   func(rng *rand.Rand, _ int, p []float64) float64 { return 1e300 * (rng.Float64() - 0.5) },
		"tiny":          func(rng *rand.Rand, _ int, p []float64) float64 { return 1e-300 * rng.Float64() },
		"heavy-tailed":  func(rng *rand.Rand, _ int, p []float64) float64 { return math.Exp(20 * rng.NormFloat64()) },
		"noisy": func(rng *rand.Rand, _ int, p []float64) float64 {
			s := 0.0
			for _, v := range p {
				if !math.IsNaN(v) {
					s += math.Sin(3 * v)
				}
			}
			return s + 0.1*rng.NormFloat64()
		},
		"two-values": func(_ *rand.Rand, i int, _ []float64) float64 { return float64(i % 2) },
	}
	configs := []Config{{Strategy: "ei"}, {Strategy: "lcb", Tau: 0.1}, {Strategy: "pi"}, {Strategy: "ei", Surrogate: "forest"},
		{Strategy: "ei", AcqOptimizer: "focus"}}
	cases := 0
	fallbacks := map[string]int{}
	for si, js := range spaces {
		s := mustSpace(t, js)
		for name, f := range values {
			for ci, base := range configs {
				for seed := uint64(1); seed <= 2; seed++ {
					cfg := base
					cfg.Space, cfg.Seed, cfg.InitialSize = s, seed, 5
					label := fmt.Sprintf("space %d, %s values, config %d (%s/%s/%s), seed %d", si, name, ci, base.Strategy, base.Surrogate, base.AcqOptimizer, seed)
					o, err := New(cfg)
					if err != nil {
						t.Fatalf("%s: %v", label, err)
					}
					rng := rand.New(rand.NewPCG(seed, 99))
					var pending []Trial
					for i := range 14 {
						tr, err := o.Ask()
						if err != nil {
							t.Fatalf("%s: ask %d failed: %v", label, i+1, err)
						}
						cases++
						if tr.Acquisition == AcqRandomFallback {
							fallbacks[name]++
						}
						switch {
						case i%5 == 3:
							pending = append(pending, tr) // stays running
						case i%7 == 6:
							if err := o.TellFailed(tr.ID); err != nil {
								t.Fatalf("%s: %v", label, err)
							}
						default:
							if err := o.Tell(tr.ID, f(rng, i, tr.Params)); err != nil {
								t.Fatalf("%s: tell %d: %v", label, i+1, err)
							}
						}
					}
					_ = pending
				}
			}
		}
	}
	t.Logf("%d asks answered; random fallbacks by values: %v", cases, fallbacks)
}

// Settings that would make an ask unbounded are refused, naming the limit
// (an unbounded ask would hold the server's memory and time).
func TestConfigLimits(t *testing.T) {
	s := mustSpace(t, square2)
	for _, cfg := range []Config{{InitialSize: MaxInitialSize + 1}, {Candidates: MaxCandidates + 1}, {Candidates: -1}} {
		cfg.Space = s
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "limit") && !strings.Contains(err.Error(), "must lie in") {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	if _, err := New(Config{Space: s, InitialSize: MaxInitialSize, Candidates: MaxCandidates}); err != nil {
		t.Errorf("the limits themselves are refused: %v", err)
	}
}

// On a small grid the optimizer proposes the best configuration not yet
// evaluated, not a random one: 20 asks on a 5 × 5 integer
// grid give 20 distinct configurations without a random fallback.
func TestGridProposalsAreNotDuplicates(t *testing.T) {
	s := mustSpace(t, `{"params":[{"name":"a","type":"int","low":1,"high":5},{"name":"b","type":"int","low":1,"high":5}]}`)
	for seed := uint64(1); seed <= 3; seed++ {
		o, err := New(Config{Space: s, Seed: seed, InitialSize: 5})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[[2]float64]bool{}
		for i := range 20 {
			tr, err := o.Ask()
			if err != nil {
				t.Fatal(err)
			}
			k := [2]float64{tr.Params[0], tr.Params[1]}
			if seen[k] || tr.Acquisition == AcqRandomFallback {
				t.Fatalf("seed %d ask %d: %v (%s, %q) repeats or falls back", seed, i+1, k, tr.Acquisition, tr.Note)
			}
			seen[k] = true
			a, b := tr.Params[0], tr.Params[1]
			if err := o.Tell(tr.ID, (a-4)*(a-4)+0.5*(b-2)*(b-2)); err != nil {
				t.Fatal(err)
			}
		}
	}
}
