package sobol

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"xbo/gp"
	"xbo/space"
	"xbo/surrogate"
)

func floatSpace(d int, low, high float64) *space.Space {
	ps := make([]space.Param, d)
	for j := range ps {
		ps[j] = space.Param{Name: string(rune('a' + j)), Type: space.Float, Low: low, High: high}
	}
	sp, err := space.New(space.Minimize, ps)
	if err != nil {
		panic(err)
	}
	return sp
}

// natural wraps a function of natural values into a Func. It refuses points
// a model would never see: every point must already be on the space
// (inactive parameters Inactive, levels at their bin centres), as models get
// them.
func natural(sp *space.Space, f func(x []float64) float64) Func {
	return func(x [][]float64, out []float64) error {
		for i, u := range x {
			r := slices.Clone(u)
			sp.Repair(r)
			if !slices.Equal(r, u) {
				return fmt.Errorf("point %v is not on the space (%v)", u, r)
			}
			out[i] = f(sp.Decode(u))
		}
		return nil
	}
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.4f, want %.4f ± %.3f", what, got, want, tol)
	}
}

// TestIshigami checks every index against the closed form of the Ishigami
// function (Ishigami and Homma 1990; e.g. Saltelli et al. 2010, section 4).
func TestIshigami(t *testing.T) {
	const a, b = 7, 0.1
	sp := floatSpace(3, -math.Pi, math.Pi)
	f := natural(sp, func(x []float64) float64 {
		return math.Sin(x[0]) + a*math.Pow(math.Sin(x[1]), 2) + b*math.Pow(x[2], 4)*math.Sin(x[0])
	})
	pi4, pi8 := math.Pow(math.Pi, 4), math.Pow(math.Pi, 8)
	v1 := 0.5 * math.Pow(1+b*pi4/5, 2)
	v2 := a * a / 8.0
	v13 := 8 * b * b * pi8 / 225
	v := v1 + v2 + v13
	// The closed pairs' estimator is the noisiest (design error ≈ 0.013 at
	// N = 4,096 here, 0.003 at 16,384).
	res, err := Estimate(context.Background(), f, sp, Options{Samples: 16384, Pairs: true})
	if err != nil {
		t.Fatal(err)
	}
	const tol = 0.015
	near(t, "variance/V", res.Variance/v, 1, 0.03)
	for j, want := range []float64{v1 / v, v2 / v, 0} {
		near(t, "S"+string(rune('1'+j)), res.Main[j].Estimate, want, tol)
	}
	for j, want := range []float64{(v1 + v13) / v, v2 / v, v13 / v} {
		near(t, "T"+string(rune('1'+j)), res.Total[j].Estimate, want, tol)
	}
	for _, p := range res.Pairs {
		wantClosed, wantInter := 0.0, 0.0
		switch {
		case p.I == 0 && p.J == 1:
			wantClosed = (v1 + v2) / v
		case p.I == 0 && p.J == 2:
			wantClosed, wantInter = (v1+v13)/v, v13/v
		case p.I == 1 && p.J == 2:
			wantClosed = v2 / v
		}
		near(t, "closed pair", p.Closed.Estimate, wantClosed, tol)
		near(t, "interaction", p.Interaction.Estimate, wantInter, tol)
	}
	// The design error is a standard error, not zero and not huge.
	if s := res.Main[0].Std; !(s > 1e-4 && s < 0.01) {
		t.Errorf("design error of S1 %g", s)
	}
}

// TestLinearMixedTypes: f = Σ a_j x_j has S_j = T_j = a_j² Var(x_j)/V and no
// interactions; with a log float, an int and a categorical it also checks
// the reference measure (log-uniform, uniform over integers and levels).
func TestLinearMixedTypes(t *testing.T) {
	sp, err := space.New(space.Minimize, []space.Param{
		{Name: "lin", Type: space.Float, Low: 0, High: 1},
		{Name: "log", Type: space.Float, Low: 1, High: math.Exp(2), Log: true},
		{Name: "int", Type: space.Int, Low: 1, High: 5},
		{Name: "cat", Type: space.Categorical, Choices: []any{"x", "y", "z"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	levels := []float64{0, 3, 1}
	weights := []float64{4, 0.5, 1, 1}
	f := natural(sp, func(x []float64) float64 {
		return weights[0]*x[0] + weights[1]*x[1] + weights[2]*x[2] + weights[3]*levels[int(x[3])]
	})
	e2, e4 := math.Exp(2), math.Exp(4)
	logMean := (e2 - 1) / 2
	varX := []float64{1.0 / 12, (e4-1)/4 - logMean*logMean, (25.0 - 1) / 12, 0}
	lm := (levels[0] + levels[1] + levels[2]) / 3
	for _, l := range levels {
		varX[3] += (l - lm) * (l - lm) / 3
	}
	v := 0.0
	for j := range varX {
		v += weights[j] * weights[j] * varX[j]
	}
	res, err := Estimate(context.Background(), f, sp, Options{Samples: 4096, Pairs: true})
	if err != nil {
		t.Fatal(err)
	}
	for j := range varX {
		want := weights[j] * weights[j] * varX[j] / v
		near(t, sp.Params[j].Name+" main", res.Main[j].Estimate, want, 0.01)
		near(t, sp.Params[j].Name+" total", res.Total[j].Estimate, want, 0.01)
	}
	for _, p := range res.Pairs {
		near(t, "interaction", p.Interaction.Estimate, 0, 0.01)
	}
}

// TestConditional: a child on only when its categorical parent is "on";
// g = 1[on]·(1 + 2c). With P(on) = ½: V = 7/6, V_parent = 1, V_child = 1/12
// = (½)²·Var(1+2c), their interaction 1/12, so S_child = 1/14 and T_child =
// ½·Var(1+2c)/V = 1/7 (the package doc's definition).
func TestConditional(t *testing.T) {
	sp, err := space.New(space.Minimize, []space.Param{
		{Name: "switch", Type: space.Categorical, Choices: []any{"off", "on"}},
		{Name: "child", Type: space.Float, Low: 0, High: 1, Condition: &space.Condition{Parent: "switch", Values: []any{"on"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := natural(sp, func(x []float64) float64 {
		if x[0] == 0 {
			if !math.IsNaN(x[1]) {
				panic("child active while switched off")
			}
			return 0
		}
		return 1 + 2*x[1]
	})
	res, err := Estimate(context.Background(), f, sp, Options{Samples: 4096, Pairs: true})
	if err != nil {
		t.Fatal(err)
	}
	v := 7.0 / 6
	near(t, "S_switch", res.Main[0].Estimate, 1/v, 0.01)
	near(t, "S_child", res.Main[1].Estimate, 1.0/14, 0.01)
	near(t, "T_child", res.Total[1].Estimate, 1.0/7, 0.01)
	near(t, "T_switch", res.Total[0].Estimate, (1+1.0/12)/v, 0.01)
	near(t, "interaction", res.Pairs[0].Interaction.Estimate, 1.0/12/v, 0.01)
}

// fitGP fits a Matérn 5/2 GP to n uniform points of f on [0,1]^d.
func fitGP(t *testing.T, seed uint64, n, d int, f func(x []float64) float64, noise float64) *gp.GP {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e37))
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = rng.Float64()
		}
		y[i] = f(x[i]) + noise*rng.NormFloat64()
	}
	g, err := gp.Fit(x, y, gp.Options{Kernel: gp.Matern52, Seed: seed, Restarts: 2})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGPMeanAgainstBruteForce compares the QMC indices of a fitted GP's
// mean with plain Monte Carlo of the definitions: V_j = Var_{x_j} E[m | x_j]
// on a 64-point midpoint grid in x_j times 2,000 uniform points for the
// rest, and T_j·V = E Var(m | x_{−j}) on 1,500 points times the grid.
// Monte Carlo error of both is below 0.01 here; the tolerance is 0.02.
func TestGPMeanAgainstBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force")
	}
	const d = 3
	g := fitGP(t, 3, 120, d, func(x []float64) float64 {
		return math.Sin(2*math.Pi*x[0]) + 2*x[1]*x[2] + 0.3*x[2]
	}, 0.01)
	sp := floatSpace(d, 0, 1)
	res, err := Analyze(context.Background(), g, sp, Options{Samples: 4096, Posterior: -1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const grid, outer = 64, 2000
	pts := make([][]float64, 0, grid*outer)
	for i := 0; i < outer; i++ {
		base := []float64{rng.Float64(), rng.Float64(), rng.Float64()}
		for k := 0; k < grid; k++ {
			pts = append(pts, append([]float64(nil), base...))
		}
	}
	m := make([]float64, len(pts))
	for j := 0; j < d; j++ {
		for i := range pts {
			pts[i][j] = (float64(i%grid) + 0.5) / grid
		}
		if err := g.Mean(pts, m); err != nil {
			t.Fatal(err)
		}
		// Overall mean and variance, the conditional means per grid value
		// and the conditional variances per outer point.
		mu, v := 0.0, 0.0
		for _, y := range m {
			mu += y
		}
		mu /= float64(len(m))
		for _, y := range m {
			v += (y - mu) * (y - mu)
		}
		v /= float64(len(m) - 1)
		cond := make([]float64, grid)
		inner := 0.0
		for i := 0; i < outer; i++ {
			row := m[i*grid : (i+1)*grid]
			rm := 0.0
			for k, y := range row {
				cond[k] += y / outer
				rm += y / grid
			}
			for _, y := range row {
				inner += (y - rm) * (y - rm) / grid / outer
			}
		}
		vj := 0.0
		for _, c := range cond {
			vj += (c - mu) * (c - mu) / grid
		}
		near(t, "S"+string(rune('1'+j)), res.Main[j].Estimate, vj/v, 0.02)
		near(t, "T"+string(rune('1'+j)), res.Total[j].Estimate, inner/v, 0.02)
		for i := 0; i < outer; i++ {
			v := rng.Float64()
			for k := 0; k < grid; k++ {
				pts[i*grid+k][j] = v
			}
		}
	}
}

// truthLinear3 is f = 3x₁ + 1.5x₂ + sin(2πx₃)/2 on [0,1]³: additive, so
// S_j = T_j = Var(f_j)/V with Var(ax) = a²/12 and Var(sin(2πx)/2) = 1/8.
func truthLinear3() (func(x []float64) float64, []float64) {
	parts := []float64{9.0 / 12, 2.25 / 12, 1.0 / 8}
	v := parts[0] + parts[1] + parts[2]
	return func(x []float64) float64 {
		return 3*x[0] + 1.5*x[1] + 0.5*math.Sin(2*math.Pi*x[2])
	}, []float64{parts[0] / v, parts[1] / v, parts[2] / v}
}

// TestIntervalsShrinkWithData: the posterior interval of every main effect
// is narrower after 400 observations than after 25.
func TestIntervalsShrinkWithData(t *testing.T) {
	if testing.Short() {
		t.Skip("fits two GPs and samples them")
	}
	f, _ := truthLinear3()
	sp := floatSpace(3, 0, 1)
	width := func(n int) []float64 {
		g := fitGP(t, 5, n, 3, f, 0.05)
		res, err := Analyze(context.Background(), g, sp, Options{Samples: 1024, Posterior: 200, PosteriorPoints: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Intervals {
			t.Fatal("no intervals from a GP")
		}
		w := make([]float64, 3)
		for j, ix := range res.Main {
			w[j] = ix.Upper - ix.Lower
		}
		return w
	}
	small, large := width(25), width(400)
	for j := range small {
		if !(large[j] < small[j]) {
			t.Errorf("main effect %d: interval width %.4f at 400 points, %.4f at 25", j, large[j], small[j])
		}
	}
	t.Logf("widths at 25: %.3f, at 400: %.3f", small, large)
}

// TestIntervalsCoverTruth: on a simple additive function with few noisy
// observations, the 95% intervals of the main and total effects contain the
// true indices for at least 80% of (dataset, index) pairs over 5 datasets.
func TestIntervalsCoverTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("fits five GPs and samples them")
	}
	f, truth := truthLinear3()
	sp := floatSpace(3, 0, 1)
	covered, total := 0, 0
	for seed := uint64(1); seed <= 5; seed++ {
		g := fitGP(t, 100+seed, 30, 3, f, 0.1)
		res, err := Analyze(context.Background(), g, sp, Options{Samples: 1024, Posterior: 200, PosteriorPoints: 1000, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for j, want := range truth {
			for _, ix := range []Index{res.Main[j], res.Total[j]} {
				total++
				if ix.Lower <= want && want <= ix.Upper {
					covered++
				} else {
					t.Logf("seed %d index %d: %.3f not in [%.3f, %.3f]", seed, j, want, ix.Lower, ix.Upper)
				}
			}
		}
	}
	if float64(covered) < 0.8*float64(total) {
		t.Errorf("intervals cover the truth %d of %d times", covered, total)
	}
}

func TestInputs(t *testing.T) {
	sp := floatSpace(2, 0, 1)
	f := natural(sp, func(x []float64) float64 { return x[0] })
	ctx := context.Background()
	for _, o := range []Options{{Samples: 3}, {Samples: MaxSamples + 1}, {Posterior: MaxPosterior + 1}, {PosteriorPoints: 5}} {
		if _, err := Estimate(ctx, f, sp, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := Estimate(ctx, nil, sp, Options{}); err == nil {
		t.Error("nil function accepted")
	}
	if _, err := Estimate(ctx, f, nil, Options{}); err == nil {
		t.Error("nil space accepted")
	}
	g := fitGP(t, 1, 10, 3, func(x []float64) float64 { return x[0] }, 0)
	if _, err := Analyze(ctx, g, sp, Options{}); err == nil {
		t.Error("a 3-d model on a 2-d space accepted")
	}
	if _, err := Analyze(ctx, nil, sp, Options{}); err == nil {
		t.Error("nil model accepted")
	}
	nan := func(x [][]float64, out []float64) error {
		for i := range out {
			out[i] = math.NaN()
		}
		return nil
	}
	if _, err := Estimate(ctx, nan, sp, Options{}); err == nil {
		t.Error("NaN values accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Estimate(cancelled, f, sp, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	// A constant has no variance: every index is 0, not NaN.
	res, err := Estimate(ctx, func(x [][]float64, out []float64) error { return nil }, sp, Options{Pairs: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Main[0].Estimate != 0 || res.Total[1].Estimate != 0 || res.Pairs[0].Interaction.Estimate != 0 {
		t.Errorf("constant function: %+v", res)
	}
}

// TestDeviations: the samples' empirical covariance matches a singular,
// slightly indefinite covariance (duplicate points and round-off, as a
// posterior on a pick-freeze design has them) within Monte Carlo error.
func TestDeviations(t *testing.T) {
	const m = 6
	x := []float64{0, 0.1, 0.1, 0.5, 0.9, 0.9} // points 1–2 and 4–5 coincide
	c := mat.NewDense(m, m, nil)
	for i := range x {
		for j := range x {
			c.Set(i, j, math.Exp(-(x[i]-x[j])*(x[i]-x[j])/0.08))
		}
	}
	c.Set(1, 2, c.At(1, 2)*(1+1e-13)) // round-off: indefinite at the 1e-13 level
	c.Set(2, 1, c.At(1, 2))
	const n = 40000
	s, err := deviations(c, n, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			e := 0.0
			for k := 0; k < n; k++ {
				e += s.At(k, i) * s.At(k, j) / n
			}
			// Monte Carlo std of a product moment is ≤ √2/√n ≈ 0.007.
			if math.Abs(e-c.At(i, j)) > 0.03 {
				t.Errorf("cov(%d,%d) = %.4f, want %.4f", i, j, e, c.At(i, j))
			}
		}
	}
	if s.At(0, 1) != s.At(0, 2) && math.Abs(s.At(0, 1)-s.At(0, 2)) > 1e-5 {
		t.Errorf("coinciding points differ: %v %v", s.At(0, 1), s.At(0, 2))
	}
	if _, err := deviations(mat.NewDense(2, 3, nil), 1, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("a 2×3 covariance accepted")
	}
}

// TestAlternativesWidenIntervals: with a second posterior that explains the
// data differently among the alternatives, half the samples come from it, so
// the intervals span both models' indices; without it they do not.
func TestAlternativesWidenIntervals(t *testing.T) {
	if testing.Short() {
		t.Skip("fits two GPs and samples them")
	}
	sp := floatSpace(2, 0, 1)
	ga := fitGP(t, 7, 60, 2, func(x []float64) float64 { return 3*x[0] + x[1] }, 0.01)
	gb := fitGP(t, 8, 60, 2, func(x []float64) float64 { return x[0] + 3*x[1] }, 0.01)
	opt := Options{Samples: 512, Posterior: 200, PosteriorPoints: 800}
	alone, err := Analyze(context.Background(), ga, sp, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Alternatives = []surrogate.Covariancer{gb}
	mixed, err := Analyze(context.Background(), ga, sp, opt)
	if err != nil {
		t.Fatal(err)
	}
	// S₁ is 0.9 under ga and 0.1 under gb.
	if a := alone.Main[0]; a.Lower < 0.8 {
		t.Errorf("alone: S1 %+v should exclude gb's 0.1", a)
	}
	if m := mixed.Main[0]; m.Estimate != alone.Main[0].Estimate || m.Lower > 0.15 || m.Upper < 0.85 {
		t.Errorf("mixed: S1 %+v should keep ga's estimate %.3f and span 0.1..0.9", m, alone.Main[0].Estimate)
	}
	opt.Alternatives = []surrogate.Covariancer{nil}
	if _, err := Analyze(context.Background(), ga, sp, opt); err == nil {
		t.Error("a nil alternative accepted")
	}
}

// A covariance scale widens the intervals around the same estimates, and a
// scale below 1 is refused.
func TestCovarianceScaleWidensIntervals(t *testing.T) {
	sp := floatSpace(2, 0, 1)
	g := fitGP(t, 9, 25, 2, func(x []float64) float64 { return math.Sin(3*x[0]) + x[1] }, 0.05)
	opt := Options{Samples: 256, Posterior: 200, PosteriorPoints: 400}
	base, err := Analyze(context.Background(), g, sp, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.CovarianceScale = 4
	wide, err := Analyze(context.Background(), g, sp, opt)
	if err != nil {
		t.Fatal(err)
	}
	for j := range base.Main {
		b, w := base.Main[j], wide.Main[j]
		if w.Estimate != b.Estimate || !(w.Upper-w.Lower > b.Upper-b.Lower) {
			t.Errorf("S%d: scaled %+v, unscaled %+v", j+1, w, b)
		}
	}
	opt.CovarianceScale = 0.5
	if _, err := Analyze(context.Background(), g, sp, opt); err == nil {
		t.Error("a scale below 1 accepted")
	}
}

// TestIgnoredParameterReachesZero: the true indices of a parameter the
// function ignores are exactly 0, and over several data sets the intervals
// of a GP fitted to noise-free data must contain that 0, not stop at the
// design's rounding just above it.
func TestIgnoredParameterReachesZero(t *testing.T) {
	if testing.Short() {
		t.Skip("fits three GPs and samples them")
	}
	f := func(x []float64) float64 { return 3*x[0] + math.Sin(3*x[1]) }
	sp := floatSpace(3, 0, 1)
	for seed := uint64(1); seed <= 3; seed++ {
		g := fitGP(t, 200+seed, 40, 3, f, 0)
		res, err := Analyze(context.Background(), g, sp, Options{Samples: 1024, Posterior: 100, PosteriorPoints: 500, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, ix := range []Index{res.Main[2], res.Total[2]} {
			if ix.Lower != 0 {
				t.Errorf("seed %d: interval of the ignored parameter [%.3g, %.3g] leaves out 0", seed, ix.Lower, ix.Upper)
			}
		}
	}
}
