package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"xbo/explain/sobol"
	"xbo/space"
)

// sharedData is the shared tables' directory seen from this package.
const sharedData = "../../shared/data"

func catalogue(t *testing.T) []*TruthProblem {
	t.Helper()
	all, _, err := LoadTruthCatalogue(CatalogueOptions{DataDir: sharedData})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// Every problem is well formed: finite clean and observed values at random
// configurations, NaN for a configuration of the wrong dimension, the
// direction its tags say, truths of the right length, exact indices that
// are fractions with S_j ≤ T_j and Σ S_j ≤ 1 ≤ Σ T_j.
func TestTruthCatalogueSane(t *testing.T) {
	all := catalogue(t)
	synthetic := 0
	for _, p := range all {
		if !p.HasTag(TagTable) {
			synthetic++
		}
		d := p.Space.Dim()
		if (p.Space.Objective == space.Maximize) != p.HasTag(TagMaximize) {
			t.Errorf("%s: direction %s with tags %v", p.Name, p.Space.Objective, p.Tags)
		}
		if v := p.Eval(make([]float64, d+1)); !math.IsNaN(v) {
			t.Errorf("%s: a configuration of dimension %d gave %v", p.Name, d+1, v)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for _, u := range p.Space.Sample(rng, 200) {
			x := p.Space.Decode(u)
			if v, o := p.Eval(x), p.observe(x, rng); math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(o) || math.IsInf(o, 0) {
				t.Fatalf("%s: f(%v) = %v, observed %v", p.Name, x, v, o)
			}
		}
		if p.Main == nil {
			continue
		}
		sumS, sumT := 0.0, 0.0
		for j := range p.Main {
			if p.Main[j] < 0 || p.Main[j] > p.Total[j]+1e-12 || p.Total[j] > 1+1e-12 {
				t.Errorf("%s: S_%d = %v, T_%d = %v", p.Name, j, p.Main[j], j, p.Total[j])
			}
			sumS += p.Main[j]
			sumT += p.Total[j]
		}
		if sumS > 1+1e-9 || sumT < 1-1e-9 {
			t.Errorf("%s: Σ S = %v, Σ T = %v", p.Name, sumS, sumT)
		}
	}
	if synthetic < 12 {
		t.Errorf("%d synthetic problems, want at least 12", synthetic)
	}
}

// The closed-form PDs agree with a brute-force Monte Carlo average of Eval
// under explain/pdp's reference measure (15,000 points, tolerance 4.5
// standard errors), and the closed-form indices with a quasi-Monte Carlo
// pick-freeze estimate on Eval (2^13 base points, tolerance 0.01 + 4 design
// errors). Tables are checked against enumeration in truthtables_test.go.
func TestTruthClosedFormsMatchBruteForce(t *testing.T) {
	for _, p := range catalogue(t) {
		if p.PD == nil || p.HasTag(TagTable) {
			continue
		}
		mc := newTruePD(p.Eval, nil, p.Space, 15000, 3)
		for j, param := range p.Space.Params {
			for _, q := range []float64{0.07, 0.5, 0.93} {
				v := param.FromUnit(q)
				exact, _ := p.PD(j, v)
				got, se := mc.withError(j, v)
				if math.Abs(exact-got) > 4.5*se+1e-9 {
					t.Errorf("%s: PD of %s at %v: closed form %v, Monte Carlo %v ± %v", p.Name, param.Name, v, exact, got, se)
				}
			}
		}
		eval := func(x [][]float64, out []float64) error {
			for i, u := range x {
				out[i] = p.Eval(p.Space.Decode(u))
			}
			return nil
		}
		res, err := sobol.Estimate(context.Background(), eval, p.Space, sobol.Options{Samples: 1 << 13, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		for j := range p.Main {
			if d := math.Abs(res.Main[j].Estimate - p.Main[j]); d > 0.01+4*res.Main[j].Std {
				t.Errorf("%s: S_%d closed form %.4f, QMC %.4f ± %.4f", p.Name, j+1, p.Main[j], res.Main[j].Estimate, res.Main[j].Std)
			}
			if d := math.Abs(res.Total[j].Estimate - p.Total[j]); d > 0.01+4*res.Total[j].Std {
				t.Errorf("%s: T_%d closed form %.4f, QMC %.4f ± %.4f", p.Name, j+1, p.Total[j], res.Total[j].Estimate, res.Total[j].Std)
			}
		}
	}
}

// The separable forms are the functions they cite: Hartmann 3-d's bumps
// give bench's Hartmann3 on the first coordinates (whatever the inert
// ones), Levy and Michalewicz match their library formulas written out,
// Genz's peak is 1 at u, and the training response sits on its plateaus.
func TestTruthFunctionsAreTheCitedOnes(t *testing.T) {
	byName := map[string]*TruthProblem{}
	for _, p := range catalogue(t) {
		byName[p.Name] = p
	}
	h3 := hartmann3()
	rng := rand.New(rand.NewPCG(7, 7))
	levy := func(x []float64) float64 {
		w := make([]float64, len(x))
		for i, v := range x {
			w[i] = 1 + (v-1)/4
		}
		d := len(x) - 1
		s := math.Pow(math.Sin(math.Pi*w[0]), 2)
		for i := 0; i < d; i++ {
			s += (w[i] - 1) * (w[i] - 1) * (1 + 10*math.Pow(math.Sin(math.Pi*w[i]+1), 2))
		}
		return s + (w[d]-1)*(w[d]-1)*(1+math.Pow(math.Sin(2*math.Pi*w[d]), 2))
	}
	michalewicz := func(x []float64) float64 {
		s := 0.0
		for i, v := range x {
			s -= math.Sin(v) * math.Pow(math.Sin(float64(i+1)*v*v/math.Pi), 20)
		}
		return s
	}
	for range 50 {
		x := []float64{rng.Float64(), rng.Float64(), rng.Float64(), rng.Float64(), rng.Float64()}
		if a, b := byName["hartmann3-inert"].Eval(x), h3.Eval(x[:3]); math.Abs(a-b) > 1e-12 {
			t.Fatalf("hartmann3-inert(%v) = %v, Hartmann3 %v", x, a, b)
		}
		l := []float64{20*x[0] - 10, 20*x[1] - 10, 20*x[2] - 10, 20*x[3] - 10}
		if a, b := byName["levy-4"].Eval(l), levy(l); math.Abs(a-b) > 1e-9*math.Max(1, b) {
			t.Fatalf("levy-4(%v) = %v, formula %v", l, a, b)
		}
		m := []float64{math.Pi * x[0], math.Pi * x[1], math.Pi * x[2]}
		if a, b := byName["michalewicz-3"].Eval(m), michalewicz(m); math.Abs(a-b) > 1e-12 {
			t.Fatalf("michalewicz-3(%v) = %v, formula %v", m, a, b)
		}
	}
	// Levy's minimum is 0 at x = 1.
	if v := byName["levy-4"].Eval([]float64{1, 1, 1, 1}); math.Abs(v) > 1e-12 {
		t.Errorf("levy-4 at 1: %v", v)
	}
	if v := byName["genz-peak-4"].Eval([]float64{0.3, 0.55, 0.7, 0.2}); math.Abs(v-1) > 1e-12 {
		t.Errorf("genz-peak-4 at u: %v", v)
	}
	tr := byName["training-4"]
	small, diverged := tr.Eval([]float64{1e-5, 0.9, 0.2, 1e-6}), tr.Eval([]float64{0.5, 0.9, 0.2, 1e-6})
	if math.Abs(small-tr.Eval([]float64{5e-5, 0.9, 0.2, 1e-6})) > 1e-15 || math.Abs(diverged-0.1) > 1e-15 || !(small > 0.4) {
		t.Errorf("training-4: plateau %v, diverged %v", small, diverged)
	}
}

// The held-out part is disjoint from the tune part and covers rough, steps
// and switched-off problems and a table; a suite only selects its own part,
// refuses a name of the other part, and plans its part's seeds only.
func TestTruthSuiteSplit(t *testing.T) {
	all := catalogue(t)
	tune, err := SelectTruthProblems(all, SuiteTune, nil)
	if err != nil {
		t.Fatal(err)
	}
	held, err := SelectTruthProblems(all, SuiteHeldOut, nil)
	if err != nil {
		t.Fatal(err)
	}
	both, err := SelectTruthProblems(all, SuiteAll, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tune)+len(held) != len(all) || len(both) != len(all) {
		t.Fatalf("tune %d + held-out %d of %d (all: %d)", len(tune), len(held), len(all), len(both))
	}
	heldSynthetic := 0
	for _, p := range held {
		if !p.HeldOut || slices.Contains(tune, p) {
			t.Errorf("%s in both parts", p.Name)
		}
		if !p.HasTag(TagTable) {
			heldSynthetic++
		}
	}
	if heldSynthetic < 4 {
		t.Errorf("%d held-out synthetic problems, want at least 4", heldSynthetic)
	}
	for _, tag := range []string{TagRough, TagSteps, TagSwitchedOff, TagTable} {
		if tag == TagTable && !hasSharedData() {
			continue
		}
		if !slices.ContainsFunc(held, func(p *TruthProblem) bool { return p.HasTag(tag) }) {
			t.Errorf("no held-out problem tagged %s", tag)
		}
	}
	for _, p := range tune {
		if p.HeldOut {
			t.Errorf("tune suite selected held-out %s", p.Name)
		}
	}
	for _, j := range planTruthJobs(tune, []string{DataUniform}, 5) {
		if j.seed < 1 || j.seed > 5 {
			t.Errorf("tune job with seed %d", j.seed)
		}
	}
	for _, j := range planTruthJobs(held, []string{DataUniform}, 5) {
		if j.seed <= HeldOutSeedOffset || j.seed > HeldOutSeedOffset+5 {
			t.Errorf("held-out job with seed %d", j.seed)
		}
	}
	if _, err := SelectTruthProblems(all, SuiteTune, []string{held[0].Name}); err == nil || !strings.Contains(err.Error(), "held-out part") {
		t.Errorf("tune suite accepted held-out %s: %v", held[0].Name, err)
	}
	if _, err := SelectTruthProblems(all, "bogus", nil); err == nil {
		t.Error("unknown suite accepted")
	}
	if _, err := SelectTruthProblems(all, SuiteAll, []string{"no-such"}); err == nil {
		t.Error("unknown problem accepted")
	}
}
