package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"

	"xbo/design"
)

func newTestRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// testFunctions returns every function, the any-dimension ones in several
// dimensions.
func testFunctions(t *testing.T) []*Function {
	t.Helper()
	var fs []*Function
	for _, name := range Names() {
		dims := []int{0}
		if registry[name].fixedDim == 0 {
			dims = []int{1, 2, 3, 8}
		}
		for _, d := range dims {
			f, err := Lookup(name, d)
			if err != nil {
				t.Fatalf("Lookup(%q, %d): %v", name, d, err)
			}
			if f.Params != nil {
				continue // a mixed space: TestConditionalFunction
			}
			fs = append(fs, f)
		}
	}
	return fs
}

func uniformPoint(f *Function, rng *rand.Rand, x []float64) {
	for j := range x {
		x[j] = f.Low[j] + (f.High[j]-f.Low[j])*rng.Float64()
	}
}

func TestNamesAndLookup(t *testing.T) {
	want := []string{"ackley", "branin", "camelback", "conditional", "corner", "cosine-mixture", "hartmann3", "hartmann6", "hyper-ellipsoid", "levy", "rosenbrock", "styblinski-tang"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for name, wantDim := range map[string]int{"branin": 2, "camelback": 2, "hartmann3": 3, "hartmann6": 6, "conditional": 4, "corner": 3} {
		for _, d := range []int{0, wantDim} {
			f, err := Lookup(name, d)
			if err != nil {
				t.Fatalf("Lookup(%q, %d): %v", name, d, err)
			}
			if f.Dim != wantDim || f.Name != name {
				t.Errorf("Lookup(%q, %d) = %s of dim %d", name, d, f.Name, f.Dim)
			}
		}
		_, err := Lookup(name, wantDim+1)
		if err == nil || !strings.Contains(err.Error(), "dimensional") {
			t.Errorf("Lookup(%q, %d): error %v, want a dimension error", name, wantDim+1, err)
		}
	}
	for _, name := range []string{"styblinski-tang", "hyper-ellipsoid", "cosine-mixture", "levy", "ackley", "rosenbrock"} {
		for _, d := range []int{1, 5, 40} {
			f, err := Lookup(name, d)
			if err != nil || f.Dim != d || len(f.Low) != d || len(f.High) != d || len(f.Argmin[0]) != d {
				t.Errorf("Lookup(%q, %d) = %+v, %v", name, d, f, err)
			}
		}
		for _, d := range []int{0, -1, maxDim + 1} {
			if _, err := Lookup(name, d); err == nil {
				t.Errorf("Lookup(%q, %d) succeeded", name, d)
			}
		}
	}
	_, err := Lookup("rastrigin", 2)
	if err == nil {
		t.Fatal("Lookup(rastrigin) succeeded")
	}
	for _, n := range want {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("unknown-name error %q does not list %q", err, n)
		}
	}
}

func TestEvalRejectsWrongLength(t *testing.T) {
	for _, f := range testFunctions(t) {
		for _, n := range []int{0, f.Dim - 1, f.Dim + 1} {
			if n < 0 {
				continue
			}
			if v := f.Eval(make([]float64, n)); !math.IsNaN(v) {
				t.Errorf("%s (d=%d): Eval of a %d-vector = %v, want NaN", f.Name, f.Dim, n, v)
			}
		}
	}
}

// relClose reports |got − want| ≤ tol·max(|want|, 1): relative for the
// optima away from zero, absolute for the hyper-ellipsoid's 0.
func relClose(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(math.Abs(want), 1)
}

func TestOptimumAtArgmin(t *testing.T) {
	for _, f := range testFunctions(t) {
		if len(f.Argmin) == 0 {
			t.Fatalf("%s: no argmin", f.Name)
		}
		for _, x := range f.Argmin {
			for j, v := range x {
				if v < f.Low[j] || v > f.High[j] {
					t.Errorf("%s: argmin %v outside the box in coordinate %d", f.Name, x, j)
				}
			}
			if got := f.Eval(x); !relClose(got, f.Optimum, 1e-12) {
				t.Errorf("%s (d=%d): f(%v) = %.16g, optimum %.16g", f.Name, f.Dim, x, got, f.Optimum)
			}
		}
	}
}

// TestPublishedOptima checks the functions against the six-digit values
// published by the SFU library (and Ali et al. 2005 for the cosine mixture),
// with the relative tolerance 1e-4 those digits allow.
func TestPublishedOptima(t *testing.T) {
	cases := []struct {
		name    string
		dim     int
		optimum float64
		argmin  [][]float64
	}{
		{"branin", 2, 0.397887, [][]float64{{-math.Pi, 12.275}, {math.Pi, 2.275}, {9.42478, 2.475}}},
		{"camelback", 2, -1.0316, [][]float64{{0.0898, -0.7126}, {-0.0898, 0.7126}}},
		{"hartmann3", 3, -3.86278, [][]float64{{0.114614, 0.555649, 0.852547}}},
		{"hartmann6", 6, -3.32237, [][]float64{{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}}},
		{"styblinski-tang", 1, -39.16599, [][]float64{{-2.903534}}},
		{"styblinski-tang", 4, 4 * -39.16599, [][]float64{{-2.903534, -2.903534, -2.903534, -2.903534}}},
		{"cosine-mixture", 2, -0.2, [][]float64{{0, 0}}},
		{"cosine-mixture", 4, -0.4, [][]float64{{0, 0, 0, 0}}},
		{"hyper-ellipsoid", 5, 0, [][]float64{{0, 0, 0, 0, 0}}},
	}
	for _, c := range cases {
		f, err := Lookup(c.name, c.dim)
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(f.Optimum, c.optimum, 1e-4) {
			t.Errorf("%s: optimum %v, published %v", c.name, f.Optimum, c.optimum)
		}
		for _, x := range c.argmin {
			if got := f.Eval(x); !relClose(got, c.optimum, 1e-4) {
				t.Errorf("%s: f(published argmin %v) = %v, published optimum %v", c.name, x, got, c.optimum)
			}
		}
	}
}

// TestNoRandomPointBeatsOptimum evaluates 10^5 uniform points (seed 2024) of
// every function and fails if any is below the optimum by more than 1e-12
// relative.
func TestNoRandomPointBeatsOptimum(t *testing.T) {
	for _, f := range testFunctions(t) {
		rng := newTestRNG(2024)
		x := make([]float64, f.Dim)
		best := math.Inf(1)
		for range 100000 {
			uniformPoint(f, rng, x)
			v := f.Eval(x)
			if v < f.Optimum-1e-12*math.Max(math.Abs(f.Optimum), 1) {
				t.Fatalf("%s (d=%d): f(%v) = %v beats the optimum %v", f.Name, f.Dim, x, v, f.Optimum)
			}
			best = min(best, v)
		}
		t.Logf("%s d=%d: best of 1e5 random %.6g, optimum %.6g", f.Name, f.Dim, best, f.Optimum)
	}
}

// TestLocalSearchConfirmsOptimum runs Nelder–Mead from a perturbed argmin:
// it must come back to the optimum (within 1e-7 relative) and not beat it by
// more than 1e-10 relative, which pins the stated optima far below the
// published six digits.
func TestLocalSearchConfirmsOptimum(t *testing.T) {
	rng := newTestRNG(3)
	for _, f := range testFunctions(t) {
		if f.Name == NameCorner {
			continue // its optimum is on the box's boundary, not a stationary point: TestCornerOptimum
		}
		for _, xStar := range f.Argmin {
			x0 := make([]float64, f.Dim)
			for j := range x0 {
				x0[j] = xStar[j] + 1e-3*(f.High[j]-f.Low[j])*(rng.Float64()-0.5)
			}
			res, err := optimize.Minimize(optimize.Problem{Func: f.Eval}, x0,
				&optimize.Settings{Converger: &optimize.FunctionConverge{Absolute: 1e-15, Iterations: 200}},
				&optimize.NelderMead{})
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			if res.F < f.Optimum-1e-10*math.Max(math.Abs(f.Optimum), 1) {
				t.Errorf("%s (d=%d): local search found %.16g below the optimum %.16g at %v", f.Name, f.Dim, res.F, f.Optimum, res.X)
			}
			if !relClose(res.F, f.Optimum, 1e-7) {
				t.Errorf("%s (d=%d): local search from near %v ended at %.16g, optimum %.16g", f.Name, f.Dim, xStar, res.F, f.Optimum)
			}
		}
	}
}

func TestStyblinskiTangMinimizer(t *testing.T) {
	// g'(λ) = 2λ³ − 16λ + 5/2 vanishes at the minimizer.
	l := styblinskiTangMin
	if grad := 2*l*l*l - 16*l + 2.5; math.Abs(grad) > 1e-12 {
		t.Errorf("g'(%v) = %v", l, grad)
	}
	// It is the global minimizer of g on [−5,5]: a fine grid finds nothing lower.
	best := styblinskiTangTerm(l)
	for i := range 1000001 {
		v := -5 + 10*float64(i)/1e6
		if styblinskiTangTerm(v) < best {
			t.Fatalf("g(%v) = %v below g(λ*) = %v", v, styblinskiTangTerm(v), best)
		}
	}
}

// TestPartialDependenceMonteCarlo compares the closed forms with a Monte Carlo
// average of f over the other coordinates (200000 uniform draws, seed 77).
// Tolerance: 5 Monte Carlo standard errors, the standard error estimated from
// the same draws.
func TestPartialDependenceMonteCarlo(t *testing.T) {
	const draws = 200000
	cases := []struct {
		name string
		dim  int
	}{{"styblinski-tang", 1}, {"styblinski-tang", 3}, {"styblinski-tang", 5}, {"hyper-ellipsoid", 4}, {"cosine-mixture", 3}}
	rng := newTestRNG(77)
	for _, c := range cases {
		f, err := Lookup(c.name, c.dim)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, f.Dim)
		for j := range f.Dim {
			for _, frac := range []float64{0, 0.13, 0.5, 0.71, 1} {
				xj := f.Low[j] + frac*(f.High[j]-f.Low[j])
				want, ok := f.PartialDependence(j, xj)
				if !ok {
					t.Fatalf("%s: no closed-form partial dependence", c.name)
				}
				var sum, sumSq float64
				for range draws {
					uniformPoint(f, rng, x)
					x[j] = xj
					v := f.Eval(x)
					sum += v
					sumSq += v * v
				}
				mean := sum / draws
				se := math.Sqrt(math.Max(sumSq/draws-mean*mean, 0) / draws)
				if math.Abs(mean-want) > 5*se+1e-12 {
					t.Errorf("%s d=%d: PD_%d(%v) = %v, Monte Carlo %v ± %v", c.name, f.Dim, j, xj, want, mean, se)
				}
			}
		}
	}
}

// TestPartialDependenceLatinHypercube is a sharper Monte Carlo check: plain
// Monte Carlo above cannot see an error of 0.1 in the additive constant of
// Styblinski–Tang's PD (its standard error is about 0.13), but Latin
// hypercube sampling removes almost all of the variance of an additive
// function. 20 independent Latin hypercubes of 5000 points (seed 78) give 20
// estimates; the tolerance is 5 standard errors of their mean plus 1e-9.
func TestPartialDependenceLatinHypercube(t *testing.T) {
	const reps, points = 20, 5000
	cases := []struct {
		name string
		dim  int
	}{{"styblinski-tang", 2}, {"styblinski-tang", 4}, {"hyper-ellipsoid", 3}, {"cosine-mixture", 3}}
	rng := newTestRNG(78)
	for _, c := range cases {
		f, err := Lookup(c.name, c.dim)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, f.Dim)
		for j := range f.Dim {
			xj := f.Low[j] + 0.3*(f.High[j]-f.Low[j])
			want, _ := f.PartialDependence(j, xj)
			estimates := make([]float64, reps)
			for r := range estimates {
				unit, err := design.LatinHypercube(points, f.Dim, rng)
				if err != nil {
					t.Fatal(err)
				}
				var sum float64
				for _, u := range unit {
					for k := range x {
						x[k] = f.Low[k] + (f.High[k]-f.Low[k])*u[k]
					}
					x[j] = xj
					sum += f.Eval(x)
				}
				estimates[r] = sum / points
			}
			mean, sd := stat.MeanStdDev(estimates, nil)
			tol := 5*sd/math.Sqrt(reps) + 1e-9
			if math.Abs(mean-want) > tol {
				t.Errorf("%s d=%d: PD_%d(%v) = %.9g, Latin hypercube estimate %.9g ± %.2g", c.name, f.Dim, j, xj, want, mean, tol)
			}
		}
	}
}

func TestPartialDependenceAvailability(t *testing.T) {
	for _, f := range testFunctions(t) {
		_, ok := f.PartialDependence(0, 0.1)
		additive := f.Name == "styblinski-tang" || f.Name == "hyper-ellipsoid" || f.Name == "cosine-mixture"
		if ok != additive {
			t.Errorf("%s: closed-form partial dependence available = %v", f.Name, ok)
		}
		for _, j := range []int{-1, f.Dim} {
			if v, ok := f.PartialDependence(j, 0.1); ok || !math.IsNaN(v) {
				t.Errorf("%s: PartialDependence(%d) = %v, %v for an out-of-range coordinate", f.Name, j, v, ok)
			}
		}
	}
	var nilFunc *Function
	if _, ok := nilFunc.PartialDependence(0, 0); ok {
		t.Error("nil function has a partial dependence")
	}
}

func TestSpace(t *testing.T) {
	for _, f := range testFunctions(t) {
		s, err := f.Space()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if s.Dim() != f.Dim {
			t.Fatalf("%s: space of dim %d, want %d", f.Name, s.Dim(), f.Dim)
		}
		for j, p := range s.Params {
			if p.Name != "x"+strconv.Itoa(j+1) || p.Low != f.Low[j] || p.High != f.High[j] {
				t.Errorf("%s: param %d = %+v", f.Name, j, p)
			}
		}
		// The argmin survives a trip through the unit cube.
		u, err := s.Encode(f.Argmin[0])
		if err != nil {
			t.Fatalf("%s: encode argmin: %v", f.Name, err)
		}
		back := s.Decode(u)
		if v := f.Eval(back); !relClose(v, f.Optimum, 1e-9) {
			t.Errorf("%s: f(decode(encode(argmin))) = %v, optimum %v", f.Name, v, f.Optimum)
		}
	}
	bad := &Function{Name: "bad", Dim: 2, Low: []float64{0, 1}, High: []float64{1, 1}}
	if _, err := bad.Space(); err == nil {
		t.Error("space with an empty range succeeded")
	}
	short := &Function{Name: "short", Dim: 2, Low: []float64{0}, High: []float64{1}}
	if _, err := short.Space(); err == nil {
		t.Error("space with short bounds succeeded")
	}
}

func TestWithNoise(t *testing.T) {
	f, err := Lookup("branin", 2)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{1, 2}
	exact := f.Eval(x)
	if got := f.WithNoise(0, nil)(x); got != exact {
		t.Errorf("sd 0: %v, want %v", got, exact)
	}
	const sd, n = 0.5, 100000
	noisy := f.WithNoise(sd, newTestRNG(8))
	var sum, sumSq float64
	for range n {
		e := noisy(x) - exact
		sum += e
		sumSq += e * e
	}
	mean := sum / n
	gotSD := math.Sqrt(sumSq/n - mean*mean)
	// Standard errors: sd/√n for the mean, about sd/√(2n) for the sd.
	if math.Abs(mean) > 5*sd/math.Sqrt(n) {
		t.Errorf("noise mean %v, want 0 ± %v", mean, 5*sd/math.Sqrt(n))
	}
	if math.Abs(gotSD-sd) > 5*sd/math.Sqrt(2*n) {
		t.Errorf("noise sd %v, want %v ± %v", gotSD, sd, 5*sd/math.Sqrt(2*n))
	}
	a, b := f.WithNoise(sd, newTestRNG(9)), f.WithNoise(sd, newTestRNG(9))
	for range 10 {
		if va, vb := a(x), b(x); va != vb {
			t.Fatalf("same seed: %v vs %v", va, vb)
		}
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if v := f.WithNoise(bad, newTestRNG(1))(x); !math.IsNaN(v) {
			t.Errorf("sd %v: got %v, want NaN", bad, v)
		}
	}
	if v := f.WithNoise(1, nil)(x); !math.IsNaN(v) {
		t.Errorf("nil rng: got %v, want NaN", v)
	}
}

func BenchmarkHartmann6(b *testing.B) {
	f, err := Lookup("hartmann6", 6)
	if err != nil {
		b.Fatal(err)
	}
	x := []float64{0.2, 0.15, 0.47, 0.27, 0.31, 0.65}
	for b.Loop() {
		_ = f.Eval(x)
	}
}

// The conditional function: its space is conditional and mixed, its
// optimum is at its argmin and every other level or momentum is worse, and
// an inactive momentum under sgd is refused as NaN.
func TestConditionalFunction(t *testing.T) {
	f, err := Lookup(NameConditional, 0)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := f.Space()
	if err != nil {
		t.Fatal(err)
	}
	if sp.Dim() != 4 || sp.ParentOf(2) != 1 || sp.Levels()[1] != 2 {
		t.Fatalf("space: dim %d, parent of momentum %d, levels %v", sp.Dim(), sp.ParentOf(2), sp.Levels())
	}
	best := f.Argmin[0]
	if v := f.Eval(best); v != f.Optimum {
		t.Fatalf("f(argmin) = %v, want %v", v, f.Optimum)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, u := range sp.Sample(rng, 2000) {
		x := sp.Decode(u)
		if v := f.Eval(x); math.IsNaN(v) || v < f.Optimum {
			t.Fatalf("f(%v) = %v below the optimum or NaN", x, v)
		}
	}
	if v := f.Eval([]float64{0.01, 0, math.NaN(), 3}); !math.IsNaN(v) {
		t.Errorf("sgd without a momentum gave %v", v)
	}
	if v := f.Eval([]float64{math.Pow(10, -2.5), 1, math.NaN(), 3}); math.Abs(v-0.08) > 1e-12 {
		t.Errorf("adam's best %v, want 0.08", v)
	}
}
