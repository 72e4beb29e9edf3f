package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// kendallBrute is τ_b from its definition: every pair counted once.
func kendallBrute(x, y []float64) float64 {
	var conc, disc, tx, ty float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case dx*dy > 0:
				conc++
			default:
				disc++
			}
		}
	}
	return (conc - disc) / math.Sqrt((conc+disc+tx)*(conc+disc+ty))
}

func TestKendallMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		n := 2 + rng.IntN(60)
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			// Few levels on some trials so that ties, and joint ties, occur.
			levels := 1000
			if trial%2 == 0 {
				levels = 4
			}
			x[i] = float64(rng.IntN(levels))
			y[i] = float64(rng.IntN(levels)) + 0.5*x[i]
		}
		want := kendallBrute(x, y)
		got, err := Kendall(x, y)
		if math.IsNaN(want) {
			if err == nil {
				t.Fatalf("trial %d: constant input gave %v, want an error", trial, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d (n=%d): Kendall %v, brute force %v", trial, n, got, want)
		}
	}
}

func TestKendallExactSmall(t *testing.T) {
	// x = 1..4, y = 1,3,2,4: one discordant pair of six, τ = (5−1)/6.
	got, err := Kendall([]float64{1, 2, 3, 4}, []float64{1, 3, 2, 4})
	if err != nil || math.Abs(got-4.0/6) > 1e-15 {
		t.Fatalf("Kendall = %v, %v; want 2/3", got, err)
	}
	if _, err := Kendall([]float64{1, 1, 1}, []float64{1, 2, 3}); err == nil {
		t.Fatal("constant x: want an error")
	}
	if _, err := Kendall([]float64{1, math.NaN()}, []float64{1, 2}); err == nil {
		t.Fatal("NaN: want an error")
	}
}

func TestRankIntervalValidates(t *testing.T) {
	for _, c := range []struct {
		method string
		r      float64
		n      int
		level  float64
	}{{RankSpearman, 0.5, 4, 0.95}, {RankKendall, 1.5, 10, 0.95}, {RankKendall, 0.5, 10, 1}, {"pearson", 0.5, 10, 0.95}, {RankSpearman, math.NaN(), 10, 0.95}} {
		if _, _, err := RankInterval(c.method, c.r, c.n, c.level); err == nil {
			t.Errorf("%+v: want an error", c)
		}
	}
	lo, hi, err := RankInterval(RankSpearman, 1, 10, 0.95)
	if err != nil || lo != 1 || hi != 1 {
		t.Errorf("r = 1: [%v, %v], %v; want [1, 1]", lo, hi, err)
	}
	// By hand: z = atanh(0.5) = 0.549306, se = sqrt(1.125/27) = 0.204124,
	// 1.959964·se = 0.400076, tanh(0.149230) = 0.148133, tanh(0.949382) = 0.739503.
	lo, hi, err = RankInterval(RankSpearman, 0.5, 30, 0.95)
	if err != nil || math.Abs(lo-0.148133) > 2e-6 || math.Abs(hi-0.739503) > 2e-6 {
		t.Errorf("Spearman 0.5, n 30: [%v, %v], %v; want [0.148133, 0.739503]", lo, hi, err)
	}
}

// TestRankIntervalCoverage draws bivariate normal samples with correlation
// ρ, whose population rank correlations are known in closed form (Kendall
// τ = (2/π)·asin ρ, Spearman ρ_s = (6/π)·asin(ρ/2); Kruskal 1958), and
// checks that the 95% intervals cover them in 95% ± 2.5 points of 2000
// replicates (the Monte Carlo standard error is 0.5 points).
func TestRankIntervalCoverage(t *testing.T) {
	const reps, level, tol = 2000, 0.95, 0.025
	for _, c := range []struct {
		rho float64
		n   int
	}{{0.3, 20}, {0.7, 30}, {0.9, 50}} {
		rng := rand.New(rand.NewPCG(11, uint64(c.n)))
		truth := map[string]float64{RankSpearman: 6 / math.Pi * math.Asin(c.rho/2), RankKendall: 2 / math.Pi * math.Asin(c.rho)}
		covered := map[string]int{}
		x, y := make([]float64, c.n), make([]float64, c.n)
		for range reps {
			for i := range x {
				a, b := rng.NormFloat64(), rng.NormFloat64()
				x[i], y[i] = a, c.rho*a+math.Sqrt(1-c.rho*c.rho)*b
			}
			rs, err := Spearman(x, y)
			if err != nil {
				t.Fatal(err)
			}
			tau, err := Kendall(x, y)
			if err != nil {
				t.Fatal(err)
			}
			for method, r := range map[string]float64{RankSpearman: rs, RankKendall: tau} {
				lo, hi, err := RankInterval(method, r, c.n, level)
				if err != nil {
					t.Fatal(err)
				}
				if lo <= truth[method] && truth[method] <= hi {
					covered[method]++
				}
			}
		}
		for method, k := range covered {
			cov := float64(k) / reps
			t.Logf("ρ=%.1f n=%d %s: coverage %.3f", c.rho, c.n, method, cov)
			if math.Abs(cov-level) > tol {
				t.Errorf("ρ=%.1f n=%d %s: coverage %.3f, want %.2f ± %.3f", c.rho, c.n, method, cov, level, tol)
			}
		}
	}
}
