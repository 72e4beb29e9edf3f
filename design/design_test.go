package design

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func TestParseKind(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Kind
	}{{"random", Random}, {"lhs", LHS}, {"maximin", MaximinLHS}, {"sobol", Sobol}, {" Sobol ", Sobol}, {"LHS", LHS}} {
		got, err := ParseKind(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, k := range []Kind{Random, LHS, MaximinLHS, Sobol} {
		if got, err := ParseKind(k.String()); err != nil || got != k {
			t.Errorf("ParseKind(%v.String()) = %v, %v", k, got, err)
		}
	}
	if _, err := ParseKind("halton"); err == nil {
		t.Error("ParseKind(halton) succeeded")
	}
}

func TestGenerateRejectsBadSizes(t *testing.T) {
	rng := newRNG(1)
	for _, k := range []Kind{Random, LHS, MaximinLHS, Sobol} {
		for _, size := range [][2]int{{0, 2}, {-1, 2}, {3, 0}, {3, -4}, {1 << 20, 1 << 20}} {
			if _, err := Generate(k, size[0], size[1], rng); err == nil {
				t.Errorf("Generate(%v, n=%d, d=%d) succeeded", k, size[0], size[1])
			}
		}
	}
	if _, err := Generate(Sobol, 4, MaxSobolDim+1, nil); err == nil {
		t.Errorf("Sobol with d=%d beyond the table succeeded", MaxSobolDim+1)
	}
	if _, err := Generate(Sobol, 4, MaxSobolDim, nil); err != nil {
		t.Errorf("Sobol with d=MaxSobolDim: %v", err)
	}
	for _, k := range []Kind{Random, LHS, MaximinLHS} {
		if _, err := Generate(k, 4, 2, nil); err == nil {
			t.Errorf("Generate(%v) with nil rng succeeded", k)
		}
	}
	if _, err := Generate(Kind(17), 4, 2, rng); err == nil {
		t.Error("Generate with unknown kind succeeded")
	}
	if _, err := SobolDesign(4, 2, -1); err == nil {
		t.Error("SobolDesign with negative skip succeeded")
	}
	if _, err := MaximinLatinHypercube(4, 2, rng, MaximinOptions{Candidates: -1}); err == nil {
		t.Error("maximin with negative candidates succeeded")
	}
}

func TestGenerateShapeAndRange(t *testing.T) {
	for _, k := range []Kind{Random, LHS, MaximinLHS, Sobol} {
		for _, size := range [][2]int{{1, 1}, {1, 5}, {2, 3}, {17, 4}, {64, 9}} {
			pts, err := Generate(k, size[0], size[1], newRNG(3))
			if err != nil {
				t.Fatalf("Generate(%v, %d, %d): %v", k, size[0], size[1], err)
			}
			if len(pts) != size[0] {
				t.Fatalf("%v: %d points, want %d", k, len(pts), size[0])
			}
			for _, p := range pts {
				if len(p) != size[1] {
					t.Fatalf("%v: point of dim %d, want %d", k, len(p), size[1])
				}
				for _, v := range p {
					if !(v >= 0 && v < 1) {
						t.Fatalf("%v: coordinate %v outside [0,1)", k, v)
					}
				}
			}
		}
	}
}

// checkLatin fails unless every stratum [s/n, (s+1)/n) of every dimension
// holds exactly one point.
func checkLatin(t *testing.T, name string, pts [][]float64) {
	t.Helper()
	n := len(pts)
	for k := range pts[0] {
		hits := make([]int, n)
		for _, p := range pts {
			s := int(math.Floor(p[k] * float64(n)))
			if s < 0 || s >= n {
				t.Fatalf("%s: dim %d coordinate %v outside [0,1)", name, k, p[k])
			}
			hits[s]++
		}
		for s, h := range hits {
			if h != 1 {
				t.Fatalf("%s: dim %d stratum %d holds %d points", name, k, s, h)
			}
		}
	}
}

func TestLatinHypercubeStratification(t *testing.T) {
	rng := newRNG(7)
	for _, size := range [][2]int{{1, 3}, {2, 2}, {10, 5}, {97, 7}, {500, 3}} {
		pts, err := LatinHypercube(size[0], size[1], rng)
		if err != nil {
			t.Fatal(err)
		}
		checkLatin(t, "lhs", pts)
		mm, err := MaximinLatinHypercube(size[0], size[1], rng, MaximinOptions{Candidates: 5})
		if err != nil {
			t.Fatal(err)
		}
		checkLatin(t, "maximin", mm)
	}
}

func TestJitterStaysInStratum(t *testing.T) {
	// The largest value rand.Float64 can return rounds stratum+u up to the
	// next integer without the guard.
	largest := math.Nextafter(1, 0)
	for _, n := range []int{3, 10, 1000} {
		for _, s := range []int{0, 1, n / 2, n - 1} {
			v := jitterInStratum(s, largest, float64(n))
			if got := int(math.Floor(v * float64(n))); got != s || v >= 1 {
				t.Errorf("n=%d stratum %d: value %v lands in stratum %d", n, s, v, got)
			}
		}
	}
}

// TestLatinHypercubeMarginalUniform checks that the jitter is uniform inside
// each stratum: over many designs the within-stratum offsets n·x − ⌊n·x⌋ have
// mean 1/2 and variance 1/12 (tolerance 5 standard errors).
func TestLatinHypercubeMarginalUniform(t *testing.T) {
	rng := newRNG(11)
	const n, d, reps = 8, 3, 4000
	var sum, sumSq float64
	count := 0
	for range reps {
		pts, err := LatinHypercube(n, d, rng)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			for _, v := range p {
				o := v*n - math.Floor(v*n)
				sum += o
				sumSq += o * o
				count++
			}
		}
	}
	mean := sum / float64(count)
	variance := sumSq/float64(count) - mean*mean
	se := math.Sqrt(1.0 / 12 / float64(count))
	if math.Abs(mean-0.5) > 5*se {
		t.Errorf("offset mean %v, want 0.5 ± %v", mean, 5*se)
	}
	if math.Abs(variance-1.0/12) > 0.005 {
		t.Errorf("offset variance %v, want 1/12 ± 0.005", variance)
	}
}

func TestMaximinBeatsMedianLHS(t *testing.T) {
	for _, size := range [][2]int{{10, 2}, {20, 5}, {50, 8}} {
		n, d := size[0], size[1]
		rng := newRNG(uint64(100 + n))
		plain := make([]float64, 201)
		for i := range plain {
			pts, err := LatinHypercube(n, d, rng)
			if err != nil {
				t.Fatal(err)
			}
			plain[i] = MinDistance(pts)
		}
		sort.Float64s(plain)
		median := plain[len(plain)/2]
		best := plain[len(plain)-1]

		mm, err := MaximinLatinHypercube(n, d, rng, MaximinOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := MinDistance(mm)
		if got <= median {
			t.Errorf("n=%d d=%d: maximin min distance %.4f not above the median plain LHS %.4f", n, d, got, median)
		}
		// 100 candidates plus swaps should also rival the best of 201 plain draws.
		if got < 0.95*best {
			t.Errorf("n=%d d=%d: maximin min distance %.4f far below the best of 201 plain LHS %.4f", n, d, got, best)
		}
		t.Logf("n=%d d=%d: min distance maximin %.4f, plain LHS median %.4f, best of 201 %.4f", n, d, got, median, best)
	}
}

// TestMaximinSwapsImprove checks step 2 on its own: from the same candidate
// the swaps never lower the smallest distance, and on small designs they
// raise it.
func TestMaximinSwapsImprove(t *testing.T) {
	improved := 0
	for seed := range uint64(20) {
		without, err := MaximinLatinHypercube(12, 3, newRNG(seed), MaximinOptions{Candidates: 1, SwapRounds: -1})
		if err != nil {
			t.Fatal(err)
		}
		with, err := MaximinLatinHypercube(12, 3, newRNG(seed), MaximinOptions{Candidates: 1})
		if err != nil {
			t.Fatal(err)
		}
		checkLatin(t, "swapped", with)
		a, b := MinDistance(without), MinDistance(with)
		if b < a-1e-12 {
			t.Fatalf("seed %d: swaps lowered the min distance from %v to %v", seed, a, b)
		}
		if b > a+1e-12 {
			improved++
		}
	}
	if improved < 15 {
		t.Errorf("swaps improved only %d of 20 single-candidate designs", improved)
	}
}

func TestSwapperIncrementalMatchesRecompute(t *testing.T) {
	rng := newRNG(5)
	pts, err := LatinHypercube(15, 4, rng)
	if err != nil {
		t.Fatal(err)
	}
	s := newSwapper(pts)
	for a := range pts {
		for l := range pts {
			if a == l {
				continue
			}
			for k := range 4 {
				got := s.minAfterSwap(a, l, k)
				copyPts := make([][]float64, len(pts))
				for i := range pts {
					copyPts[i] = slices.Clone(pts[i])
				}
				copyPts[a][k], copyPts[l][k] = copyPts[l][k], copyPts[a][k]
				want := minSquaredDistance(copyPts)
				if math.Abs(got-want) > 1e-12 {
					t.Fatalf("swap (%d,%d,%d): incremental %v, recomputed %v", a, l, k, got, want)
				}
			}
		}
	}
}

func TestReproducible(t *testing.T) {
	for _, k := range []Kind{Random, LHS, MaximinLHS, Sobol} {
		a, err := Generate(k, 30, 4, newRNG(42))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Generate(k, 30, 4, newRNG(42))
		if err != nil {
			t.Fatal(err)
		}
		c, err := Generate(k, 30, 4, newRNG(43))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(a, b, slices.Equal) {
			t.Errorf("%v: same seed gave different designs", k)
		}
		sameAsOtherSeed := slices.EqualFunc(a, c, slices.Equal)
		if k == Sobol && !sameAsOtherSeed {
			t.Errorf("sobol depends on the rng")
		}
		if k != Sobol && sameAsOtherSeed {
			t.Errorf("%v: different seeds gave the same design", k)
		}
	}
}

func TestUniformRandomMoments(t *testing.T) {
	pts, err := UniformRandom(20000, 3, newRNG(9))
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		var sum float64
		for _, p := range pts {
			sum += p[k]
		}
		mean := sum / float64(len(pts))
		if se := math.Sqrt(1.0 / 12 / float64(len(pts))); math.Abs(mean-0.5) > 5*se {
			t.Errorf("dim %d mean %v, want 0.5 ± %v", k, mean, 5*se)
		}
	}
}

func BenchmarkMaximinLHS(b *testing.B) {
	rng := newRNG(1)
	for b.Loop() {
		if _, err := MaximinLatinHypercube(50, 10, rng, MaximinOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The default maximin effort is the full 100 candidates and 50 swap rounds
// for the optimizer's usual designs, a share of them when n²·d grows, and
// none for a design whose one candidate would cost more than the bound: that
// design is the plain Latin hypercube of the same random stream.
func TestMaximinEffortBounded(t *testing.T) {
	for _, c := range []struct{ n, d, candidates, rounds int }{
		{24, 6, 100, 50},
		{80, 20, 100, 50},
		{200, 50, 16, 8},
		{2000, 500, 0, 0},
	} {
		if got, rounds := maximinEffort(c.n, c.d); got != c.candidates || rounds != c.rounds {
			t.Errorf("n %d, d %d: %d candidates, %d rounds; want %d, %d", c.n, c.d, got, rounds, c.candidates, c.rounds)
		}
	}
	big, err := Generate(MaximinLHS, 2000, 500, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := LatinHypercube(2000, 500, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range big {
		if !slices.Equal(big[i], plain[i]) {
			t.Fatalf("point %d of the 2,000 × 500 maximin design differs from the plain Latin hypercube", i)
		}
	}
}
