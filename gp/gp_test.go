package gp

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"xbo/surrogate"
)

func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func uniformPoints(rng *rand.Rand, n, d int) [][]float64 {
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = rng.Float64()
		}
	}
	return x
}

func relClose(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestParseKernel(t *testing.T) {
	for s, want := range map[string]Kernel{"se": SquaredExponential, "RBF": SquaredExponential, "matern32": Matern32, " Matern52 ": Matern52} {
		got, err := ParseKernel(s)
		if err != nil || got != want {
			t.Errorf("ParseKernel(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := ParseKernel("linear"); err == nil {
		t.Error("ParseKernel(linear) accepted")
	}
	for _, k := range []Kernel{SquaredExponential, Matern32, Matern52} {
		back, err := ParseKernel(k.String())
		if err != nil || back != k {
			t.Errorf("round trip of %v gave %v, %v", k, back, err)
		}
		var u Kernel
		b, _ := k.MarshalText()
		if err := u.UnmarshalText(b); err != nil || u != k {
			t.Errorf("text round trip of %v gave %v, %v", k, u, err)
		}
	}
	if _, err := Kernel(7).MarshalText(); err == nil {
		t.Error("invalid kernel marshalled")
	}
}

// TestKernelValuesByHand checks k(a,b) = std²·σ_f²·g(r) at hand-computed
// distances, numeric and categorical.
func TestKernelValuesByHand(t *testing.T) {
	// Dimensions: numeric ℓ=0.5, categorical (3 levels) ℓ=2, numeric ℓ=1.
	h := Hyper{Lengthscales: []float64{0.5, 2, 1}, SignalVariance: 1.5, NoiseVariance: 0.01}
	x := [][]float64{{0, 0.1, 0}, {1, 0.9, 1}}
	std := 2.0
	a := []float64{0.2, 0.1, 0.3} // level floor(0.1·3) = 0
	b := []float64{0.5, 0.5, 0.7} // level 1: differs
	c := []float64{0.5, 0.3, 0.7} // level 0: same as a
	off := []float64{0.5, -1, 0.7}
	// r²(a,b) = (0.3/0.5)² + 1/2² + (0.4/1)² = 0.36 + 0.25 + 0.16 = 0.77
	// r²(a,c) = 0.36 + 0 + 0.16 = 0.52; r²(c,off) = 0.25 (inactive is its own level).
	cases := []struct {
		p, q []float64
		r2   float64
	}{{a, b, 0.77}, {a, c, 0.52}, {c, off, 0.25}, {off, off, 0}, {a, a, 0}}
	corr := map[Kernel]func(r float64) float64{
		SquaredExponential: func(r float64) float64 { return math.Exp(-r * r / 2) },
		Matern32:           func(r float64) float64 { return (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r) },
		Matern52: func(r float64) float64 {
			return (1 + math.Sqrt(5)*r + 5*r*r/3) * math.Exp(-math.Sqrt(5)*r)
		},
	}
	for k, g := range corr {
		m, err := Fit(x, []float64{1, 2}, Options{Kernel: k, Levels: []int{0, 3, 0}, Fixed: &h, Output: &OutputScale{Mean: 3, Std: std}})
		if err != nil {
			t.Fatal(err)
		}
		for _, cs := range cases {
			want := std * std * 1.5 * g(math.Sqrt(cs.r2))
			if got := m.KernelValue(cs.p, cs.q); !relClose(got, want, 1e-14) {
				t.Errorf("%v: k(%v,%v) = %v, want %v", k, cs.p, cs.q, got, want)
			}
		}
		if got := m.KernelValue([]float64{1}, a); !math.IsNaN(got) {
			t.Errorf("wrong dimension gave %v, want NaN", got)
		}
		if got := m.NoiseVariance(); !relClose(got, 0.04, 1e-15) {
			t.Errorf("noise variance %v, want 0.04", got)
		}
	}
}

// TestLMLGradient compares the analytic gradient of the log marginal
// likelihood with central finite differences for every kernel, with and
// without categorical dimensions and inactive values.
func TestLMLGradient(t *testing.T) {
	rng := newRNG(11)
	for _, k := range []Kernel{SquaredExponential, Matern32, Matern52} {
		for _, levels := range [][]int{nil, {0, 4, 0, 2}} {
			n, d := 25, 4
			x := uniformPoints(rng, n, d)
			x[3][1], x[7][3], x[8][0] = -1, -1, -1 // inactive values
			x[9] = append([]float64{}, x[10]...)   // a duplicate
			y := make([]float64, n)
			for i := range y {
				y[i] = rng.NormFloat64()
			}
			lv := levels
			if lv == nil {
				lv = make([]int, d)
			}
			cat, _ := categorical(levels, d)
			enc := make([]float64, n*d)
			for i := range x {
				if err := encodePoint(enc[i*d:(i+1)*d], x[i], lv); err != nil {
					t.Fatal(err)
				}
			}
			p := &problem{kernel: k, n: n, d: d, x: enc, y: y, cat: cat, minNoise: 1e-6}
			w := p.newWorkspace()
			theta := []float64{math.Log(0.3), math.Log(0.8), math.Log(1.7), math.Log(0.5), math.Log(1.3), math.Log(0.05)}
			grad := make([]float64, d+2)
			if _, err := w.lml(theta, grad); err != nil {
				t.Fatal(err)
			}
			for j := range theta {
				const eps = 1e-5
				tp := append([]float64{}, theta...)
				tm := append([]float64{}, theta...)
				tp[j] += eps
				tm[j] -= eps
				lp, err1 := w.lml(tp, nil)
				lm, err2 := w.lml(tm, nil)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				fd := (lp - lm) / (2 * eps)
				if math.Abs(fd-grad[j]) > 1e-6*math.Max(1, math.Abs(fd)) {
					t.Errorf("%v levels %v: ∂LML/∂θ%d = %v, finite difference %v", k, levels, j, grad[j], fd)
				}
			}
		}
	}
}

// TestPosteriorByHand checks the posterior on two observations against the
// closed form written out by hand.
func TestPosteriorByHand(t *testing.T) {
	// 1-D SE kernel, ℓ = 1, σ_f² = 1, σ_n² = 0.01, output scale mean 2, std 3.
	// Inputs 0 and 1, objective values 5 and 2 → standardized y = (1, 0).
	// K + σ_n²I = [[1.01, c], [c, 1.01]] with c = e^{-1/2}; det = 1.01² − c².
	// α = (K+σ_n²I)⁻¹ y = (1.01, −c)/det.
	// At x* = 0.25: k* = (e^{-1/32}, e^{-9/32}).
	//   mean_std = k*·α = (1.01·e^{-1/32} − c·e^{-9/32})/det
	//   var_std  = 1 − k*ᵀ(K+σ_n²I)⁻¹k* = 1 − (1.01(k1² + k2²) − 2c·k1·k2)/det
	// Objective units: mean = 2 + 3·mean_std, var = 9·var_std.
	// Covariance between 0.25 and 0.75 (k' = (e^{-9/32}, e^{-1/32})):
	//   cov_std = e^{-1/8} − (1.01(k1k1' + k2k2') − c(k1k2' + k2k1'))/det.
	h := Hyper{Lengthscales: []float64{1}, SignalVariance: 1, NoiseVariance: 0.01}
	g, err := Fit([][]float64{{0}, {1}}, []float64{5, 2}, Options{Fixed: &h, Output: &OutputScale{Mean: 2, Std: 3}})
	if err != nil {
		t.Fatal(err)
	}
	c := math.Exp(-0.5)
	det := 1.01*1.01 - c*c
	k1, k2 := math.Exp(-1.0/32), math.Exp(-9.0/32)
	wantMean := 2 + 3*(1.01*k1-c*k2)/det
	wantVar := 9 * (1 - (1.01*(k1*k1+k2*k2)-2*c*k1*k2)/det)
	wantCov := 9 * (math.Exp(-1.0/8) - (1.01*(k1*k2+k2*k1)-c*(k1*k1+k2*k2))/det)
	mean, vr := make([]float64, 2), make([]float64, 2)
	if err := g.Predict([][]float64{{0.25}, {0.75}}, mean, vr); err != nil {
		t.Fatal(err)
	}
	if !relClose(mean[0], wantMean, 1e-13) || !relClose(vr[0], wantVar, 1e-12) {
		t.Errorf("posterior at 0.25: %v, %v; want %v, %v", mean[0], vr[0], wantMean, wantVar)
	}
	cov, err := g.Covariance([][]float64{{0.25}}, [][]float64{{0.75}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cov.At(0, 0); !relClose(got, wantCov, 1e-12) {
		t.Errorf("cov(0.25, 0.75) = %v, want %v", got, wantCov)
	}
	// log N(y | 0, K+σ_n²I) = −½ yᵀα − ½ log det − log 2π with y = (1, 0).
	wantLML := -0.5*1.01/det - 0.5*math.Log(det) - math.Log(2*math.Pi)
	if got := g.LogMarginalLikelihood(); !relClose(got, wantLML, 1e-13) {
		t.Errorf("LML = %v, want %v", got, wantLML)
	}
	if got := g.Mean([][]float64{{0.25}}, mean[:1]); got != nil || !relClose(mean[0], wantMean, 1e-13) {
		t.Errorf("Mean = %v (%v), want %v", mean[0], got, wantMean)
	}
}

// TestPosteriorThreePointsMatern checks Predict and Covariance against a
// dense textbook computation (explicit inverse) on three 2-D points with a
// categorical dimension.
func TestPosteriorThreePointsMatern(t *testing.T) {
	h := Hyper{Lengthscales: []float64{0.7, 1.5}, SignalVariance: 0.8, NoiseVariance: 0.05}
	x := [][]float64{{0.1, 0.2}, {0.5, 0.9}, {0.8, 0.4}}
	y := []float64{1, -1, 0.5}
	g, err := Fit(x, y, Options{Kernel: Matern52, Levels: []int{0, 2}, Fixed: &h})
	if err != nil {
		t.Fatal(err)
	}
	std := g.OutputScale().Std
	mu := g.OutputScale().Mean
	kern := func(a, b []float64) float64 { return g.KernelValue(a, b) / (std * std) }
	K := mat.NewSymDense(3, nil)
	for i := range 3 {
		for j := range 3 {
			v := kern(x[i], x[j])
			if i == j {
				v += 0.05
			}
			K.SetSym(i, j, v)
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(K); err != nil {
		t.Fatal(err)
	}
	ys := mat.NewVecDense(3, nil)
	for i := range y {
		ys.SetVec(i, (y[i]-mu)/std)
	}
	star := [][]float64{{0.3, 0.7}, {0.9, 0.1}}
	mean, vr := make([]float64, 2), make([]float64, 2)
	if err := g.Predict(star, mean, vr); err != nil {
		t.Fatal(err)
	}
	cov, err := g.Covariance(star, star)
	if err != nil {
		t.Fatal(err)
	}
	ks := make([]*mat.VecDense, 2)
	for s := range star {
		ks[s] = mat.NewVecDense(3, []float64{kern(star[s], x[0]), kern(star[s], x[1]), kern(star[s], x[2])})
	}
	for s := range star {
		var tmp mat.VecDense
		tmp.MulVec(&inv, ys)
		wantMean := mu + std*mat.Dot(ks[s], &tmp)
		for r := range star {
			tmp.MulVec(&inv, ks[r])
			wantCov := std * std * (kern(star[s], star[r]) - mat.Dot(ks[s], &tmp))
			if !relClose(cov.At(s, r), wantCov, 1e-12) {
				t.Errorf("cov[%d][%d] = %v, want %v", s, r, cov.At(s, r), wantCov)
			}
			if s == r && !relClose(vr[s], wantCov, 1e-12) {
				t.Errorf("var[%d] = %v, want %v", s, vr[s], wantCov)
			}
		}
		if !relClose(mean[s], wantMean, 1e-12) {
			t.Errorf("mean[%d] = %v, want %v", s, mean[s], wantMean)
		}
	}
}

func fittedModel(t *testing.T, seed uint64, n, d int, k Kernel, levels []int) (*GP, [][]float64, []float64) {
	t.Helper()
	rng := newRNG(seed)
	x := uniformPoints(rng, n, d)
	y := make([]float64, n)
	for i, p := range x {
		y[i] = math.Sin(5*p[0]) + p[1]*p[1] + 0.05*rng.NormFloat64()
	}
	g, err := Fit(x, y, Options{Kernel: k, Levels: levels, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return g, x, y
}

// TestAverageVarianceBruteForce compares the streamed form with 1ᵀK̂1/n²
// summed from the full posterior covariance.
func TestAverageVarianceBruteForce(t *testing.T) {
	for _, k := range []Kernel{SquaredExponential, Matern32, Matern52} {
		g, _, _ := fittedModel(t, 5, 40, 3, k, []int{0, 0, 3})
		rng := newRNG(6)
		for _, m := range []int{1, 7, 300} {
			pts := uniformPoints(rng, m, 3)
			pts[0][2] = -1
			cov, err := g.Covariance(pts, pts)
			if err != nil {
				t.Fatal(err)
			}
			want := 0.0
			for i := range m {
				for j := range m {
					want += cov.At(i, j)
				}
			}
			want /= float64(m * m)
			got, err := g.AverageVariance(pts)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > 1e-9*math.Max(want, 1e-6) {
				t.Errorf("%v m=%d: AverageVariance = %v, brute force %v", k, m, got, want)
			}
		}
	}
}

// TestPriorSplit: PriorAverage + AverageVarianceGivenPrior reproduce
// AverageVariance, and the prior part does not move when a coordinate that all
// points share (numeric, or a categorical level) takes another value — the
// property partial dependence bands rely on to compute it once.
func TestPriorSplit(t *testing.T) {
	for _, k := range []Kernel{SquaredExponential, Matern32, Matern52} {
		g, _, _ := fittedModel(t, 7, 40, 3, k, []int{0, 0, 3})
		rng := newRNG(8)
		pts := uniformPoints(rng, 200, 3)
		moved := make([][]float64, len(pts))
		for i, p := range pts {
			p[0], p[2] = 0.2, 0.5                // shared: numeric 0.2, categorical level 1
			moved[i] = []float64{0.9, p[1], 0.1} // shared: numeric 0.9, level 0
		}
		whole, err := g.AverageVariance(pts)
		if err != nil {
			t.Fatal(err)
		}
		prior, err := g.PriorAverage(pts)
		if err != nil {
			t.Fatal(err)
		}
		split, err := g.AverageVarianceGivenPrior(pts, prior)
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(split, whole, 1e-10) {
			t.Errorf("%v: split %v, whole %v", k, split, whole)
		}
		priorMoved, err := g.PriorAverage(moved)
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(priorMoved, prior, 1e-12) {
			t.Errorf("%v: prior part moved with a shared coordinate: %v vs %v", k, priorMoved, prior)
		}
		wholeMoved, _ := g.AverageVariance(moved)
		splitMoved, err := g.AverageVarianceGivenPrior(moved, prior)
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(splitMoved, wholeMoved, 1e-10) {
			t.Errorf("%v: reusing the prior part: %v, direct %v", k, splitMoved, wholeMoved)
		}
		if _, err := g.AverageVarianceGivenPrior(pts, math.NaN()); err == nil {
			t.Errorf("%v: NaN prior accepted", k)
		}
	}
}

// TestSampleMonteCarlo checks the sample mean and covariance of 20000 joint
// draws against the posterior. With N draws the standard error of a mean is
// σ/√N and of a covariance about √((σ_i²σ_j² + c_ij²)/N); we allow 5 of them.
func TestSampleMonteCarlo(t *testing.T) {
	g, _, _ := fittedModel(t, 9, 15, 2, Matern52, nil)
	pts := [][]float64{{0.1, 0.1}, {0.12, 0.1}, {0.5, 0.9}, {1.5, -0.2}}
	const N = 20000
	s, err := g.Sample(pts, N, newRNG(3))
	if err != nil {
		t.Fatal(err)
	}
	if r, c := s.Dims(); r != N || c != len(pts) {
		t.Fatalf("sample dims %d×%d", r, c)
	}
	mean, vr := make([]float64, len(pts)), make([]float64, len(pts))
	if err := g.Predict(pts, mean, vr); err != nil {
		t.Fatal(err)
	}
	cov, _ := g.Covariance(pts, pts)
	m := len(pts)
	emp := make([]float64, m)
	for i := range N {
		for j := range m {
			emp[j] += s.At(i, j) / N
		}
	}
	for j := range m {
		if se := math.Sqrt(vr[j] / N); math.Abs(emp[j]-mean[j]) > 5*se {
			t.Errorf("sample mean %d = %v, posterior %v (se %v)", j, emp[j], mean[j], se)
		}
	}
	for a := range m {
		for b := range m {
			c := 0.0
			for i := range N {
				c += (s.At(i, a) - mean[a]) * (s.At(i, b) - mean[b])
			}
			c /= N
			se := math.Sqrt((vr[a]*vr[b] + cov.At(a, b)*cov.At(a, b)) / N)
			if math.Abs(c-cov.At(a, b)) > 5*se+1e-12 {
				t.Errorf("sample cov[%d][%d] = %v, posterior %v (se %v)", a, b, c, cov.At(a, b), se)
			}
		}
	}
	if _, err := g.Sample(pts, 0, newRNG(1)); err == nil {
		t.Error("0 samples accepted")
	}
	if _, err := g.Sample(pts, 3, nil); err == nil {
		t.Error("nil rng accepted")
	}
}

// TestSampleSingular draws at duplicated points and at a noise-free training
// point, where the posterior covariance is singular.
func TestSampleSingular(t *testing.T) {
	h := Hyper{Lengthscales: []float64{0.3}, SignalVariance: 1, NoiseVariance: 0}
	g, err := Fit([][]float64{{0.5}, {0.2}}, []float64{1, 3}, Options{Fixed: &h})
	if err != nil {
		t.Fatal(err)
	}
	pts := [][]float64{{0.5}, {0.7}, {0.7}, {0.7000001}}
	s, err := g.Sample(pts, 2000, newRNG(4))
	if err != nil {
		t.Fatal(err)
	}
	mean, vr := make([]float64, 4), make([]float64, 4)
	if err := g.Predict(pts, mean, vr); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if d := math.Abs(s.At(i, 1) - s.At(i, 2)); d > 1e-3*math.Sqrt(vr[1]) {
			t.Fatalf("draw %d differs at duplicated points by %v", i, d)
		}
		if d := math.Abs(s.At(i, 0) - mean[0]); d > 1e-2*math.Sqrt(vr[1]) {
			t.Fatalf("draw %d at a noise-free observation is off by %v", i, d)
		}
	}
}

// TestConditionEqualsRefit checks the rank-one extension against a fit with
// the same hyperparameters and output scale on the augmented data.
func TestConditionEqualsRefit(t *testing.T) {
	for _, k := range []Kernel{SquaredExponential, Matern52} {
		g, x, y := fittedModel(t, 21, 30, 3, k, []int{0, 0, 2})
		h, out := g.Hyper(), g.OutputScale()
		newX := []float64{0.3, 0.6, 0.9}
		c, err := g.Condition(newX, 0.7)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := Fit(append(append([][]float64{}, x...), newX), append(append([]float64{}, y...), 0.7),
			Options{Kernel: k, Levels: []int{0, 0, 2}, Fixed: &h, Output: &out})
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() != 31 || g.Len() != 30 {
			t.Fatalf("lengths %d, %d", c.Len(), g.Len())
		}
		pts := uniformPoints(newRNG(2), 50, 3)
		m1, v1, m2, v2 := make([]float64, 50), make([]float64, 50), make([]float64, 50), make([]float64, 50)
		if err := c.Predict(pts, m1, v1); err != nil {
			t.Fatal(err)
		}
		if err := ref.Predict(pts, m2, v2); err != nil {
			t.Fatal(err)
		}
		for i := range pts {
			if !relClose(m1[i], m2[i], 1e-9) || !relClose(v1[i], v2[i], 1e-9) {
				t.Errorf("%v point %d: conditioned %v, %v; refit %v, %v", k, i, m1[i], v1[i], m2[i], v2[i])
			}
		}
		if !relClose(c.LogMarginalLikelihood(), ref.LogMarginalLikelihood(), 1e-9) {
			t.Errorf("LML conditioned %v, refit %v", c.LogMarginalLikelihood(), ref.LogMarginalLikelihood())
		}
		// The parent is unchanged.
		m3, v3 := make([]float64, 50), make([]float64, 50)
		g2, _ := Fit(x, y, Options{Kernel: k, Levels: []int{0, 0, 2}, Fixed: &h, Output: &out})
		_ = g.Predict(pts, m3, v3)
		_ = g2.Predict(pts, m1, v1)
		for i := range pts {
			if !relClose(m1[i], m3[i], 1e-12) || !relClose(v1[i], v3[i], 1e-12) {
				t.Fatalf("parent changed by Condition at point %d", i)
			}
		}
	}
}

// TestConditionAllEqualsRefitAndSequential checks the block extension by
// eight points at once against a fit with the same hyperparameters and
// output scale on the augmented data, and against conditioning on the
// points one at a time.
func TestConditionAllEqualsRefitAndSequential(t *testing.T) {
	levels := []int{0, 0, 2}
	for _, k := range []Kernel{SquaredExponential, Matern52} {
		g, x, y := fittedModel(t, 23, 30, 3, k, levels)
		h, out := g.Hyper(), g.OutputScale()
		rng := newRNG(4)
		px := uniformPoints(rng, 8, 3)
		py := make([]float64, len(px))
		for i := range py {
			py[i] = rng.NormFloat64()
		}
		c, err := g.ConditionAll(px, py)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := Fit(append(slices.Clone(x), px...), append(slices.Clone(y), py...),
			Options{Kernel: k, Levels: levels, Fixed: &h, Output: &out})
		if err != nil {
			t.Fatal(err)
		}
		seq := g
		for i := range px {
			if seq, err = seq.Condition(px[i], py[i]); err != nil {
				t.Fatal(err)
			}
		}
		if c.Len() != 38 || g.Len() != 30 {
			t.Fatalf("lengths %d, %d", c.Len(), g.Len())
		}
		pts := append(uniformPoints(newRNG(5), 50, 3), px...)
		mc, vc := make([]float64, len(pts)), make([]float64, len(pts))
		mr, vr := make([]float64, len(pts)), make([]float64, len(pts))
		ms, vs := make([]float64, len(pts)), make([]float64, len(pts))
		for _, p := range []struct {
			m    *GP
			mean []float64
			vr   []float64
		}{{c, mc, vc}, {ref, mr, vr}, {seq, ms, vs}} {
			if err := p.m.Predict(pts, p.mean, p.vr); err != nil {
				t.Fatal(err)
			}
		}
		for i := range pts {
			if !relClose(mc[i], mr[i], 1e-9) || !relClose(vc[i], vr[i], 1e-9) {
				t.Errorf("%v point %d: conditioned %v, %v; refit %v, %v", k, i, mc[i], vc[i], mr[i], vr[i])
			}
			if !relClose(mc[i], ms[i], 1e-9) || !relClose(vc[i], vs[i], 1e-9) {
				t.Errorf("%v point %d: conditioned %v, %v; one at a time %v, %v", k, i, mc[i], vc[i], ms[i], vs[i])
			}
		}
		if !relClose(c.LogMarginalLikelihood(), ref.LogMarginalLikelihood(), 1e-9) {
			t.Errorf("LML conditioned %v, refit %v", c.LogMarginalLikelihood(), ref.LogMarginalLikelihood())
		}
	}
}

// noiselessThreePoints is a GP with fixed hyperparameters and zero noise
// on three points of the unit square (values 1, 2, 3), on which repeating an
// input makes the covariance matrix singular.
func noiselessThreePoints(t *testing.T) *GP {
	t.Helper()
	h := Hyper{Lengthscales: []float64{0.4, 0.4}, SignalVariance: 1, NoiseVariance: 0}
	g, err := Fit([][]float64{{0.1, 0.2}, {0.8, 0.3}, {0.4, 0.9}}, []float64{1, 2, 3}, Options{Fixed: &h})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestConditionAllDuplicates forces the fallback refactorization of a block:
// under zero noise one new point repeats an observed input and two repeat
// each other, so the Schur complement is singular.
func TestConditionAllDuplicates(t *testing.T) {
	g := noiselessThreePoints(t)
	px := [][]float64{{0.6, 0.6}, {0.8, 0.3}, {0.6, 0.6}}
	c, err := g.ConditionAll(px, []float64{5, 2, 5})
	if err != nil {
		t.Fatal(err)
	}
	if c.jitter <= g.jitter {
		t.Errorf("jitter %v after conditioning, %v before: the block was not refactored", c.jitter, g.jitter)
	}
	mean, vr := make([]float64, 2), make([]float64, 2)
	if err := c.Predict([][]float64{{0.8, 0.3}, {0.6, 0.6}}, mean, vr); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{2, 5} {
		if math.Abs(mean[i]-want) > 1e-3 || vr[i] > 1e-3 {
			t.Errorf("at duplicated point %d: mean %v var %v, want ≈%v, ≈0", i, mean[i], vr[i], want)
		}
	}
}

// TestConditionAllInput checks the bad inputs and the empty block.
func TestConditionAllInput(t *testing.T) {
	g, _, _ := fittedModel(t, 3, 10, 2, Matern52, nil)
	if c, err := g.ConditionAll(nil, nil); err != nil || c != g {
		t.Errorf("empty block: %p, %v; want the receiver", c, err)
	}
	if _, err := g.ConditionAll([][]float64{{0.1, 0.2}}, []float64{1, 2}); err == nil {
		t.Error("2 values for 1 point accepted")
	}
	if _, err := g.ConditionAll([][]float64{{0.1, 0.2}, {0.1}}, []float64{1, 2}); !errors.Is(err, surrogate.ErrDim) {
		t.Errorf("wrong dimension: %v", err)
	}
	if _, err := g.ConditionAll([][]float64{{0.1, 0.2}, {0.3, 0.4}}, []float64{1, math.Inf(1)}); err == nil {
		t.Error("infinite value accepted")
	}
	if _, err := g.ConditionAll([][]float64{{0.1, math.NaN()}}, []float64{1}); err == nil {
		t.Error("NaN coordinate accepted")
	}
}

// TestConditionDuplicateNoiseless forces the fallback refactorization: a
// repeated input under zero noise makes the extended matrix singular.
func TestConditionDuplicateNoiseless(t *testing.T) {
	g := noiselessThreePoints(t)
	c, err := g.Condition([]float64{0.8, 0.3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	mean, vr := make([]float64, 1), make([]float64, 1)
	if err := c.Predict([][]float64{{0.8, 0.3}}, mean, vr); err != nil {
		t.Fatal(err)
	}
	if math.Abs(mean[0]-2) > 1e-3 || vr[0] > 1e-3 {
		t.Errorf("at the duplicated point: mean %v var %v, want ≈2, ≈0", mean[0], vr[0])
	}
	if _, err := g.Condition([]float64{0.1}, 1); !errors.Is(err, surrogate.ErrDim) {
		t.Errorf("wrong dimension: %v", err)
	}
	if _, err := g.Condition([]float64{0.1, 0.1}, math.NaN()); err == nil {
		t.Error("NaN y accepted")
	}
}

// TestAnisotropy: y depends on x0 only, so the fitted lengthscale of x1 must
// be far longer than that of x0.
func TestAnisotropy(t *testing.T) {
	rng := newRNG(17)
	x := uniformPoints(rng, 40, 2)
	y := make([]float64, len(x))
	for i, p := range x {
		y[i] = math.Sin(6 * p[0])
	}
	for _, k := range []Kernel{SquaredExponential, Matern32, Matern52} {
		g, err := Fit(x, y, Options{Kernel: k, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		l := g.Hyper().Lengthscales
		if l[1] < 20*l[0] {
			t.Errorf("%v: lengthscales %v, want ℓ1 ≫ ℓ0", k, l)
		}
	}
}

// TestFitFindsOptimum: the fitted hyperparameters beat random ones and have
// a near-zero likelihood gradient in every coordinate not at a bound.
func TestFitFindsOptimum(t *testing.T) {
	g, x, y := fittedModel(t, 31, 50, 3, Matern52, nil)
	best := g.LogMarginalLikelihood()
	rng := newRNG(32)
	for range 50 {
		h := Hyper{Lengthscales: []float64{math.Exp(rng.Float64()*6 - 4), math.Exp(rng.Float64()*6 - 4), math.Exp(rng.Float64()*6 - 4)},
			SignalVariance: math.Exp(rng.Float64()*4 - 2), NoiseVariance: math.Exp(rng.Float64()*8 - 10)}
		r, err := Fit(x, y, Options{Kernel: Matern52, Fixed: &h})
		if err != nil {
			t.Fatal(err)
		}
		if r.LogMarginalLikelihood() > best+1e-6 {
			t.Errorf("random hyper %+v has LML %v > fitted %v", h, r.LogMarginalLikelihood(), best)
		}
	}
	out := g.OutputScale()
	ystd := make([]float64, len(y))
	for i := range y {
		ystd[i] = (y[i] - out.Mean) / out.Std
	}
	p := &problem{kernel: Matern52, n: g.n, d: g.dim, x: g.x, y: ystd, cat: g.cat, minNoise: 1e-6}
	th := p.toTheta(g.Hyper())
	grad := make([]float64, len(th))
	if _, err := p.newWorkspace().lml(th, grad); err != nil {
		t.Fatal(err)
	}
	lo, hi := p.bounds()
	for j, gj := range grad {
		if th[j]-lo[j] > 1e-3 && hi[j]-th[j] > 1e-3 && math.Abs(gj) > 0.05 {
			t.Errorf("∂LML/∂θ%d = %v at the fitted optimum %v", j, gj, g.Hyper())
		}
	}
}

// TestFitWarmStart: a warm start at the optimum of the same data stays there.
func TestFitWarmStart(t *testing.T) {
	g, x, y := fittedModel(t, 41, 40, 2, Matern52, nil)
	h := g.Hyper()
	w, err := Fit(x, y, Options{Kernel: Matern52, Init: &h, Restarts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if w.LogMarginalLikelihood() < g.LogMarginalLikelihood()-1e-4 {
		t.Errorf("warm-started LML %v < %v", w.LogMarginalLikelihood(), g.LogMarginalLikelihood())
	}
}

func TestFitDeterministic(t *testing.T) {
	g1, x, y := fittedModel(t, 51, 30, 3, Matern32, nil)
	g2, err := Fit(x, y, Options{Kernel: Matern32, Seed: 51})
	if err != nil {
		t.Fatal(err)
	}
	if g1.LogMarginalLikelihood() != g2.LogMarginalLikelihood() {
		t.Errorf("same seed, different fits: %v vs %v", g1.LogMarginalLikelihood(), g2.LogMarginalLikelihood())
	}
}

func TestRobustness(t *testing.T) {
	t.Run("duplicates", func(t *testing.T) {
		x := [][]float64{{0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}, {0.1, 0.9}, {0.1, 0.9}}
		y := []float64{1, 1.1, 0.9, 3, 3}
		for _, k := range []Kernel{SquaredExponential, Matern32, Matern52} {
			g, err := Fit(x, y, Options{Kernel: k})
			if err != nil {
				t.Fatal(err)
			}
			mean, vr := make([]float64, 1), make([]float64, 1)
			if err := g.Predict([][]float64{{0.5, 0.5}}, mean, vr); err != nil {
				t.Fatal(err)
			}
			if math.Abs(mean[0]-1) > 0.2 || vr[0] < 0 {
				t.Errorf("%v: mean %v var %v at the repeated point, want ≈1", k, mean[0], vr[0])
			}
		}
		// Exact duplicates with zero noise need the jitter.
		h := Hyper{Lengthscales: []float64{0.3, 0.3}, SignalVariance: 1, NoiseVariance: 0}
		if _, err := Fit(x, y, Options{Kernel: SquaredExponential, Fixed: &h}); err != nil {
			t.Errorf("noise-free duplicates: %v", err)
		}
	})
	t.Run("one point", func(t *testing.T) {
		g, err := Fit([][]float64{{0.2, 0.4}}, []float64{7}, Options{Kernel: Matern52})
		if err != nil {
			t.Fatal(err)
		}
		mean, vr := make([]float64, 2), make([]float64, 2)
		if err := g.Predict([][]float64{{0.2, 0.4}, {0.9, 0.9}}, mean, vr); err != nil {
			t.Fatal(err)
		}
		if mean[0] != 7 || mean[1] != 7 || !(vr[0] < vr[1]) || vr[1] > 1 {
			t.Errorf("one point: mean %v var %v", mean, vr)
		}
	})
	t.Run("constant y", func(t *testing.T) {
		x := uniformPoints(newRNG(1), 6, 2)
		g, err := Fit(x, []float64{4, 4, 4, 4, 4, 4}, Options{Kernel: Matern52})
		if err != nil {
			t.Fatal(err)
		}
		mean, vr := make([]float64, 1), make([]float64, 1)
		if err := g.Predict([][]float64{{50, 50}}, mean, vr); err != nil {
			t.Fatal(err)
		}
		if mean[0] != 4 || !relClose(vr[0], 1, 1e-9) {
			t.Errorf("constant y: far prediction %v ± %v, want 4 with prior variance 1", mean[0], vr[0])
		}
	})
	t.Run("fewer points than dims", func(t *testing.T) {
		rng := newRNG(2)
		x := uniformPoints(rng, 4, 12)
		g, err := Fit(x, []float64{1, 2, 0, 5}, Options{Kernel: Matern52})
		if err != nil {
			t.Fatal(err)
		}
		mean, vr := make([]float64, 4), make([]float64, 4)
		if err := g.Predict(x, mean, vr); err != nil {
			t.Fatal(err)
		}
		for i, v := range vr {
			if math.IsNaN(mean[i]) || v < 0 || math.IsNaN(v) {
				t.Errorf("prediction %d: %v ± %v", i, mean[i], v)
			}
		}
	})
	t.Run("bad input", func(t *testing.T) {
		x := [][]float64{{0.1}, {0.2}, {0.3}, {0.4}}
		y := []float64{1, 2, 3, 4}
		bad := func(name string, x [][]float64, y []float64, opt Options, want string) {
			t.Helper()
			_, err := Fit(x, y, opt)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "gp: fit: ") {
				t.Errorf("%s: error %v, want one containing %q", name, err, want)
			}
		}
		bad("NaN x", [][]float64{{0.1}, {0.2}, {math.NaN()}, {0.4}}, y, Options{}, "x[2]")
		bad("Inf x", [][]float64{{0.1}, {math.Inf(1)}, {0.3}, {0.4}}, y, Options{}, "x[1]")
		bad("NaN y", x, []float64{1, 2, 3, math.NaN()}, Options{}, "y[3]")
		bad("Inf y", x, []float64{math.Inf(-1), 2, 3, 4}, Options{}, "y[0]")
		bad("no points", nil, nil, Options{}, "no observations")
		bad("length mismatch", x, y[:3], Options{}, "3 values")
		bad("ragged", [][]float64{{0.1}, {0.2, 0.3}, {0.3}, {0.4}}, y, Options{}, "x[1]")
		bad("levels", x, y, Options{Levels: []int{2, 3}}, "levels")
		bad("negative level", x, y, Options{Levels: []int{-2}}, "levels[0]")
		bad("kernel", x, y, Options{Kernel: 9}, "kernel")
		bad("restarts", x, y, Options{Restarts: -1}, "restarts")
		bad("min noise", x, y, Options{MinNoise: -1}, "min noise")
		bad("fixed", x, y, Options{Fixed: &Hyper{Lengthscales: []float64{0}, SignalVariance: 1}}, "lengthscale 0")
		bad("init", x, y, Options{Init: &Hyper{Lengthscales: []float64{1, 1}, SignalVariance: 1}}, "2 lengthscales")
		bad("output", x, y, Options{Output: &OutputScale{Std: 0}}, "output scale")
		g, err := Fit(x, y, Options{})
		if err != nil {
			t.Fatal(err)
		}
		mean, vr := make([]float64, 2), make([]float64, 2)
		if err := g.Predict([][]float64{{0.1}, {math.NaN()}}, mean, vr); err == nil || !strings.Contains(err.Error(), "point 1") {
			t.Errorf("NaN prediction point: %v", err)
		}
		if err := g.Predict([][]float64{{0.1}, {0.1, 0.2}}, mean, vr); !errors.Is(err, surrogate.ErrDim) {
			t.Errorf("wrong dimension: %v", err)
		}
		if err := g.Predict([][]float64{{0.1}}, mean, vr); err == nil {
			t.Error("output length mismatch accepted")
		}
		if _, err := g.AverageVariance(nil); err == nil {
			t.Error("empty AverageVariance accepted")
		}
		if _, err := g.Covariance(nil, [][]float64{{1}}); err == nil {
			t.Error("empty Covariance accepted")
		}
	})
}

// TestInactiveIsOwnValue: observations with a switched-off parameter inform
// predictions at the switched-off value, not at the numeric ones.
func TestInactiveIsOwnValue(t *testing.T) {
	h := Hyper{Lengthscales: []float64{0.2, 0.2}, SignalVariance: 1, NoiseVariance: 1e-4}
	x := [][]float64{{0.5, -1}, {0.5, 0.5}}
	g, err := Fit(x, []float64{10, 0}, Options{Fixed: &h, Output: &OutputScale{Mean: 0, Std: 1}})
	if err != nil {
		t.Fatal(err)
	}
	mean, vr := make([]float64, 2), make([]float64, 2)
	if err := g.Predict([][]float64{{0.5, -1}, {0.5, 0.9}}, mean, vr); err != nil {
		t.Fatal(err)
	}
	if math.Abs(mean[0]-10) > 0.01 || math.Abs(mean[1]) > 0.5 {
		t.Errorf("means %v, want ≈10 at inactive and ≈0 nearby the active point", mean)
	}
}

// TestScreenedRestarts covers the subset screening used above screenSize
// observations: the full-data run from the warm start is still made, so more
// restarts can only raise the likelihood, and the fit is deterministic.
func TestScreenedRestarts(t *testing.T) {
	rng := newRNG(61)
	n := screenSize + 44
	x := uniformPoints(rng, n, 2)
	y := make([]float64, n)
	for i, p := range x {
		y[i] = math.Sin(7*p[0]) + 0.3*p[1] + 0.05*rng.NormFloat64()
	}
	h := Hyper{Lengthscales: []float64{2, 2}, SignalVariance: 1, NoiseVariance: 0.1}
	one, err := Fit(x, y, Options{Kernel: Matern52, Init: &h, Restarts: 1})
	if err != nil {
		t.Fatal(err)
	}
	three, err := Fit(x, y, Options{Kernel: Matern52, Init: &h, Restarts: 3, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if three.LogMarginalLikelihood() < one.LogMarginalLikelihood() {
		t.Errorf("3 restarts LML %v < 1 restart %v", three.LogMarginalLikelihood(), one.LogMarginalLikelihood())
	}
	cold, err := Fit(x, y, Options{Kernel: Matern52, Restarts: 3, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Fit(x, y, Options{Kernel: Matern52, Restarts: 3, Seed: 4})
	if cold.LogMarginalLikelihood() != again.LogMarginalLikelihood() {
		t.Errorf("not deterministic: %v vs %v", cold.LogMarginalLikelihood(), again.LogMarginalLikelihood())
	}
	if l := cold.Hyper().Lengthscales; !(l[1] > 3*l[0]) || math.Abs(cold.LogMarginalLikelihood()-three.LogMarginalLikelihood()) > 1 {
		t.Errorf("screened cold fit: lengthscales %v, LML %v vs warm %v", l, cold.LogMarginalLikelihood(), three.LogMarginalLikelihood())
	}
}
