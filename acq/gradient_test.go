package acq

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"xbo/gp"
	"xbo/space"
	"xbo/surrogate"
)

// differentiableAnalytic adds gradients to an analytic model by central
// differences of its closed forms, so the climb can be tested on targets
// whose optimum is known exactly.
type differentiableAnalytic struct{ analytic }

func (a differentiableAnalytic) PredictGradient(x, dmean, dvar []float64) (float64, float64, error) {
	const h = 1e-7
	p := slices.Clone(x)
	for j := range x {
		if x[j] == space.Inactive {
			dmean[j], dvar[j] = 0, 0
			continue
		}
		p[j] = x[j] + h
		mh, vh := a.mean(p), a.variance(p)
		p[j] = x[j] - h
		ml, vl := a.mean(p), a.variance(p)
		p[j] = x[j]
		dmean[j], dvar[j] = (mh-ml)/(2*h), (vh-vl)/(2*h)
	}
	return a.mean(x), a.variance(x), nil
}

// fittedGP is a Matérn 5/2 GP on n noisy samples of a Branin-like surface
// over [0,1]^2, or over [0,1]^2 × 3 levels with levels > 0.
func fittedGP(t *testing.T, seed uint64, n int, levels []int) (*gp.GP, float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = []float64{rng.Float64(), rng.Float64()}
		if levels != nil {
			x[i] = append(x[i], (float64(rng.IntN(3))+0.5)/3)
		}
		a, b := 15*x[i][0]-5, 15*x[i][1]
		y[i] = math.Pow(b-5.1/(4*math.Pi*math.Pi)*a*a+5/math.Pi*a-6, 2) + 10*(1-1/(8*math.Pi))*math.Cos(a) + 10 + 0.1*rng.NormFloat64()
		if levels != nil {
			y[i] += 20 * math.Floor(x[i][2]*3)
		}
	}
	g, err := gp.Fit(x, y, gp.Options{Kernel: gp.Matern52, Levels: levels, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return g, slices.Min(y)
}

// TestScoreGradientFiniteDifferences checks every closed-form acquisition's
// ScoreGradient against Score and against central differences of Score on
// a fitted GP with a categorical dimension.
func TestScoreGradientFiniteDifferences(t *testing.T) {
	g, best := fittedGP(t, 1, 25, []int{0, 0, 3})
	acqs := []Differentiable{EI{Best: best}, EI{Best: best + 20, Xi: 1}, PI{Best: best}, LCB{Tau: 2}, LCB{Tau: 2, NoiseVariance: 0.3}, PVAR{}}
	rng := rand.New(rand.NewPCG(2, 3))
	for _, a := range acqs {
		for range 25 {
			x := []float64{rng.Float64(), rng.Float64(), (float64(rng.IntN(3)) + 0.5) / 3}
			grad := make([]float64, 3)
			v, err := a.ScoreGradient(g, x, grad)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]float64, 3)
			if err := a.Score(g, [][]float64{x}, out[:1]); err != nil {
				t.Fatal(err)
			}
			// The two paths sum k_*ᵀ(K+σ_n²I)⁻¹k_* in different orders, and
			// σ_f² − that sum cancels where the posterior is far below
			// the prior: agreement to 1e-8 is what the rounding allows.
			if math.Abs(v-out[0]) > 1e-8*(1+math.Abs(out[0])) {
				t.Fatalf("%T: ScoreGradient value %v, Score %v", a, v, out[0])
			}
			if grad[2] != 0 {
				t.Errorf("%T: categorical derivative %v, want 0", a, grad[2])
			}
			// The fitted signal variance is large against the posterior
			// variances here, so s² − q loses digits to cancellation: a step
			// of 1e-5 keeps the differences' rounding error below 1e-6.
			const h = 1e-5
			for j := range 2 {
				lo, hi := slices.Clone(x), slices.Clone(x)
				lo[j] -= h
				hi[j] += h
				if err := a.Score(g, [][]float64{lo, hi}, out[:2]); err != nil {
					t.Fatal(err)
				}
				fd := (out[1] - out[0]) / (2 * h)
				if math.Abs(grad[j]-fd) > 1e-4*(math.Abs(fd)+1e-6*(1+math.Abs(v))) {
					t.Errorf("%T at %v: ∂/∂x%d = %v, finite difference %v", a, x, j, grad[j], fd)
				}
			}
		}
	}
}

// TestClimbBeatsDenseGrid: the maximum EI found by random candidates plus
// the gradient climb is at least the maximum over a 401×401 grid (a lower
// bound on the true maximum), and at least what the pattern search finds.
func TestClimbBeatsDenseGrid(t *testing.T) {
	s := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1}]}`)
	for seed := uint64(1); seed <= 3; seed++ {
		g, best := fittedGP(t, seed, 12, nil)
		a := EI{Best: best}
		const k = 401
		grid := make([][]float64, 0, k*k)
		for i := range k {
			for j := range k {
				grid = append(grid, []float64{float64(i) / (k - 1), float64(j) / (k - 1)})
			}
		}
		scores := make([]float64, len(grid))
		if err := a.Score(g, grid, scores); err != nil {
			t.Fatal(err)
		}
		gridMax := slices.Max(scores)
		climbed, err := RandomSearch{}.Maximize(a, g, s, rand.New(rand.NewPCG(seed, 9)))
		if err != nil {
			t.Fatal(err)
		}
		pattern, err := RandomSearch{Pattern: true}.Maximize(a, g, s, rand.New(rand.NewPCG(seed, 9)))
		if err != nil {
			t.Fatal(err)
		}
		if climbed.Score < gridMax*(1-1e-9) {
			t.Errorf("seed %d: climbed EI %v below the grid maximum %v", seed, climbed.Score, gridMax)
		}
		if climbed.Score < pattern.Score*(1-1e-9) {
			t.Errorf("seed %d: climbed EI %v below the pattern search's %v", seed, climbed.Score, pattern.Score)
		}
		if climbed.Evaluations >= pattern.Evaluations {
			t.Errorf("seed %d: the climb scored %d points, the pattern search %d", seed, climbed.Evaluations, pattern.Evaluations)
		}
		t.Logf("seed %d: grid max %.8g, climbed %.8g (%d points), pattern %.8g (%d points)", seed, gridMax, climbed.Score, climbed.Evaluations, pattern.Score, pattern.Evaluations)
	}
}

// TestClimbOnMixedConditionalSpace: the climb alternates with int and
// categorical moves and reaches the known optimum of a conditional space.
func TestClimbOnMixedConditionalSpace(t *testing.T) {
	s, target := mixedConditional(t)
	m := differentiableAnalytic{analytic{dim: 4, mean: target, variance: func([]float64) float64 { return 0 }}}
	var _ surrogate.Gradienter = m
	res, err := RandomSearch{}.Maximize(LCB{}, m, s, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	vals := s.Decode(res.U)
	if err := s.Validate(vals); err != nil {
		t.Fatalf("invalid configuration: %v", err)
	}
	if vals[0] != 0 || vals[1] != 7 || math.Abs(math.Log10(vals[2])+2) > 1e-4 || math.Abs(vals[3]-0.8) > 1e-4 {
		t.Errorf("got %v, want [0 7 0.01 0.8]", vals)
	}
}

// TestPrunedSearchEqualsExhaustive: scoring exactly only the candidates
// whose bound can reach the best gives the very same proposal as scoring
// all of them, for every bounded acquisition, with and without refinement,
// in random search and in focus search.
func TestPrunedSearchEqualsExhaustive(t *testing.T) {
	s2 := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1}]}`)
	s3 := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1},{"name":"c","type":"categorical","choices":["x","y","z"]}]}`)
	for seed := uint64(1); seed <= 6; seed++ {
		for _, cat := range []bool{false, true} {
			s, levels := s2, []int(nil)
			if cat {
				s, levels = s3, []int{0, 0, 3}
			}
			g, best := fittedGP(t, seed, 30, levels)
			for _, a := range []Acquisition{EI{Best: best}, PI{Best: best}, PI{Best: best - 50}, LCB{Tau: 1}, LCB{Tau: 1, NoiseVariance: 0.5}, PVAR{}} {
				for _, refine := range []int{-1, 3} {
					got, err := RandomSearch{Refine: refine}.Maximize(a, g, s, rand.New(rand.NewPCG(seed, 5)))
					if err != nil {
						t.Fatal(err)
					}
					want, err := RandomSearch{Refine: refine, Exhaustive: true}.Maximize(a, g, s, rand.New(rand.NewPCG(seed, 5)))
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got.U, want.U) || got.Score != want.Score {
						t.Errorf("seed %d, %T, refine %d: pruned %v (%v), exhaustive %v (%v)", seed, a, refine, got.U, got.Score, want.U, want.Score)
					}
				}
				// Focus search keeps only each iteration's best point, so
				// pruning must leave its whole path unchanged.
				got, err := FocusSearch{Points: 300}.Maximize(a, g, s, rand.New(rand.NewPCG(seed, 6)))
				if err != nil {
					t.Fatal(err)
				}
				want, err := FocusSearch{Points: 300, Exhaustive: true}.Maximize(a, g, s, rand.New(rand.NewPCG(seed, 6)))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.U, want.U) || got.Score != want.Score {
					t.Errorf("seed %d, %T, focus: pruned %v (%v), exhaustive %v (%v)", seed, a, got.U, got.Score, want.U, want.Score)
				}
			}
		}
	}
}

// TestPruningPrunes: on a fitted GP most random candidates are never scored
// exactly, and the kept ones include the exhaustive search's best three.
// This GP is very smooth (lengthscales above the range), where a bound from
// a few observations is loose; it still rules out over 80% (on the T = 200,
// d = 6 benchmark data, 1468 of 1500).
func TestPruningPrunes(t *testing.T) {
	s := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1}]}`)
	g, best := fittedGP(t, 4, 40, nil)
	a := EI{Best: best}
	cands := s.Sample(rand.New(rand.NewPCG(7, 7)), 1500)
	pts, scores, err := topExact(a, g, cands, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) > len(cands)/5 {
		t.Errorf("%d of %d candidates scored exactly, want at most a fifth", len(pts), len(cands))
	}
	all := make([]float64, len(cands))
	if err := a.Score(g, cands, all); err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	for _, want := range sorted[len(sorted)-3:] {
		if !slices.Contains(scores, want) {
			t.Errorf("exact score %v of a top-3 candidate is missing from the kept ones", want)
		}
	}
	t.Logf("%d of %d candidates scored exactly", len(pts), len(cands))
}
