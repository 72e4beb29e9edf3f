package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestConfidenceMetrics(t *testing.T) {
	sd := []float64{1, 2, 3, 6}
	if mc, err := MC(sd); err != nil || mc != 3 {
		t.Errorf("MC = %v, %v", mc, err)
	}
	grid := []float64{0, 0.25, 0.5, 1}
	if oc, err := OC(grid, sd, 0.4); err != nil || oc != 3 {
		t.Errorf("OC = %v, %v; want the sd at 0.5", oc, err)
	}
	if _, err := MC(nil); err == nil {
		t.Error("MC of nothing accepted")
	}
	if _, err := OC(grid, sd[:2], 0); err == nil {
		t.Error("OC with mismatched lengths accepted")
	}
}

func TestNLLClosedForm(t *testing.T) {
	// −log N(1; 0, 2²) = ½log 2π + log 2 + 1/8; −log N(0; 0, 1) = ½log 2π.
	got, err := NLL([]float64{1, 0}, []float64{0, 0}, []float64{2, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := (0.5*math.Log(2*math.Pi) + math.Log(2) + 0.125 + 0.5*math.Log(2*math.Pi)) / 2
	if math.Abs(got-want) > 1e-14 {
		t.Errorf("NLL %v, want %v", got, want)
	}
	if v, _ := NLL([]float64{1}, []float64{0}, []float64{0}); !math.IsInf(v, 1) {
		t.Errorf("zero sd and a miss gives %v, want +Inf", v)
	}
	if _, err := NLL([]float64{1}, []float64{0}, []float64{-1}); err == nil {
		t.Error("negative sd accepted")
	}
}

func TestL1AndRelativeImprovement(t *testing.T) {
	if v, err := L1([]float64{1, 2, 3}, []float64{1, 0, 4}); err != nil || v != 1 {
		t.Errorf("L1 = %v, %v", v, err)
	}
	if v, err := RelativeImprovement(4, 3); err != nil || v != 0.25 {
		t.Errorf("δ = %v, %v", v, err)
	}
	// A negative global NLL that gets more negative is an improvement.
	if v, _ := RelativeImprovement(-2, -3); v != 0.5 {
		t.Errorf("δ(−2 → −3) = %v, want 0.5", v)
	}
	if _, err := RelativeImprovement(0, 1); err == nil {
		t.Error("δ with zero global accepted")
	}
}

func TestSpearman(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	if r, _ := Spearman(x, []float64{1, 4, 9, 16, 25}); math.Abs(r-1) > 1e-15 {
		t.Errorf("monotone: %v", r)
	}
	if r, _ := Spearman(x, []float64{5, 4, 3, 2, 1}); math.Abs(r+1) > 1e-15 {
		t.Errorf("reversed: %v", r)
	}
	// Ranks of y = (1, 2.5, 2.5, 4, 5) against 1..5: Pearson of the ranks,
	// Σdx·dy = 9.5, Σdx² = 10, Σdy² = 9.5 → 9.5/√95.
	r, err := Spearman(x, []float64{1, 2, 2, 3, 7})
	if err != nil || math.Abs(r-9.5/math.Sqrt(95)) > 1e-14 {
		t.Errorf("ties: %v, %v; want %v", r, err, 9.5/math.Sqrt(95))
	}
	if _, err := Spearman(x, []float64{1, 1, 1, 1, 1}); err == nil {
		t.Error("constant input accepted")
	}
}

func TestMMD(t *testing.T) {
	a := [][]float64{{0, 0}}
	b := [][]float64{{1, 1}}
	// MMD² = k(a,a) + k(b,b) − 2k(a,b) = 2 − 2·exp(−2/(2σ²)).
	got, err := MMD(a, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Sqrt(2 - 2*math.Exp(-1)); math.Abs(got-want) > 1e-14 {
		t.Errorf("MMD %v, want %v", got, want)
	}
	if v, _ := MMD(a, a, 0.3); v != 0 {
		t.Errorf("MMD of a sample with itself %v", v)
	}
	// Two uniform samples are closer to each other than a uniform and a
	// concentrated one; this is how the benchmark ranks sampling bias.
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, scale float64) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = []float64{scale * rng.Float64(), scale * rng.Float64(), scale * rng.Float64()}
		}
		return out
	}
	u1, u2, biased := draw(200, 1), draw(200, 1), draw(200, 0.3)
	bw := UniformBandwidth(3)
	same, _ := MMD(u1, u2, bw)
	diff, _ := MMD(u1, biased, bw)
	if !(same < 0.1 && diff > 3*same) {
		t.Errorf("MMD uniform/uniform %v, uniform/biased %v", same, diff)
	}
	if m, err := MedianBandwidth(a, b); err != nil || math.Abs(m-math.Sqrt2) > 1e-15 {
		t.Errorf("median bandwidth %v, %v", m, err)
	}
	if _, err := MMD(a, b, 0); err == nil {
		t.Error("zero bandwidth accepted")
	}
	if _, err := MMD(a, [][]float64{{1}}, 1); err == nil {
		t.Error("dimension mismatch accepted")
	}
}

func TestSimpleRegret(t *testing.T) {
	if r, err := SimpleRegret([]float64{3, 1, 2}, 0.5); err != nil || r != 0.5 {
		t.Errorf("regret %v, %v", r, err)
	}
}

// The authors' estimator on cases small enough to compute by hand: the
// median of the pooled sample's pairwise distances sets σ, and every kernel
// mean includes the diagonal.
func TestMMD2Median(t *testing.T) {
	// x = {0}, y = {1}: one distance, σ = 1; MMD² = 1 + 1 − 2·exp(−1/2).
	got, err := MMD2Median([][]float64{{0}}, [][]float64{{1}})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 - 2*math.Exp(-0.5); math.Abs(got-want) > 1e-15 {
		t.Errorf("one point each: MMD² %v, want %v", got, want)
	}
	// x = {0, 1}, y = {3}: distances 1, 3, 2, σ = 2, γ = 1/8;
	// mean k(x, x) = (2 + 2·exp(−1/8))/4, k(y, y) = 1,
	// mean k(x, y) = (exp(−9/8) + exp(−4/8))/2.
	x, y := [][]float64{{0}, {1}}, [][]float64{{3}}
	want := (2+2*math.Exp(-0.125))/4 + 1 - (math.Exp(-1.125) + math.Exp(-0.5))
	if got, err = MMD2Median(x, y); err != nil || math.Abs(got-want) > 1e-15 {
		t.Errorf("two against one: MMD² %v (%v), want %v", got, err, want)
	}
	// The median bandwidth makes it invariant to rescaling every coordinate.
	if got, err = MMD2Median([][]float64{{0}, {10}}, [][]float64{{30}}); err != nil || math.Abs(got-want) > 1e-15 {
		t.Errorf("rescaled by 10: MMD² %v (%v), want %v", got, err, want)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	u := make([][]float64, 30)
	for i := range u {
		u[i] = []float64{rng.Float64(), rng.Float64()}
	}
	if got, err = MMD2Median(u, u); err != nil || got > 1e-15 {
		t.Errorf("identical samples: MMD² %v (%v), want 0", got, err)
	}
	if _, err = MMD2Median(nil, u); err == nil {
		t.Error("empty sample accepted")
	}
	if _, err = MMD2Median([][]float64{{1, 1}}, [][]float64{{1, 1}}); err == nil {
		t.Error("coinciding points accepted (no bandwidth)")
	}
}
