package design

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// LatinHypercube returns n points in [0,1)^d such that, in every dimension,
// each stratum [s/n, (s+1)/n), s = 0..n−1, holds exactly one point. Each
// dimension gets its own random permutation of the strata, and each point is
// placed uniformly inside its stratum.
func LatinHypercube(n, d int, rng *rand.Rand) ([][]float64, error) {
	if err := checkSize(n, d); err != nil {
		return nil, fmt.Errorf("design: lhs: %w", err)
	}
	if rng == nil {
		return nil, errors.New("design: lhs: nil rng")
	}
	pts := newPoints(n, d)
	fillLatinHypercube(pts, rng, make([]int, n))
	return pts, nil
}

// fillLatinHypercube overwrites pts with a fresh Latin hypercube; perm is
// scratch space of length len(pts).
func fillLatinHypercube(pts [][]float64, rng *rand.Rand, perm []int) {
	n := len(pts)
	scale := float64(n)
	for k := range pts[0] {
		for i := range perm {
			perm[i] = i
		}
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		for i, p := range pts {
			p[k] = jitterInStratum(perm[i], rng.Float64(), scale)
		}
	}
}

// jitterInStratum returns (stratum+u)/n, kept strictly below the stratum's
// upper edge: for u within an ulp of 1 the sum stratum+u rounds up to
// stratum+1 and would land the point in the next stratum.
func jitterInStratum(stratum int, u, n float64) float64 {
	upper := float64(stratum+1) / n
	v := (float64(stratum) + u) / n
	if v >= upper {
		v = math.Nextafter(upper, 0)
	}
	return v
}

// Defaults of MaximinOptions.
const (
	DefaultMaximinCandidates = 100
	DefaultMaximinSwapRounds = 50
)

// MaximinOptions tunes MaximinLatinHypercube. The zero value gives the
// defaults.
type MaximinOptions struct {
	// Candidates is the number of random Latin hypercubes drawn; the one with
	// the largest smallest pairwise distance is kept. 0 means
	// DefaultMaximinCandidates, fewer for a large design (maximinEffort).
	Candidates int
	// SwapRounds bounds the improving coordinate swaps applied afterwards.
	// 0 means DefaultMaximinSwapRounds, fewer for a large design
	// (maximinEffort); a negative value disables swaps.
	SwapRounds int
}

// maximinWork bounds the work of one default maximin design, in terms of
// squared distances' coordinates (n²·d per candidate scored or swap
// round): about a tenth of a second. The defaults cost 150·n²·d, which is
// nothing for the designs of a few dozen points the optimizer uses and
// minutes for its largest (2,000 points of 500 parameters), which a study
// would pay at its creation and at every rebuild of its optimizer. The
// maximin criterion's gains shrink as n grows (any Latin hypercube of many
// points is already spread), so a large design keeps what the budget buys.
const maximinWork = 5e7

// maximinEffort is the default number of candidates and swap rounds for n
// points in d dimensions: the defaults while 150·n²·d fits in maximinWork,
// else as many as fit, and for a design whose one candidate would not fit
// (0, 0): a plain Latin hypercube, whose distances are never computed.
func maximinEffort(n, d int) (candidates, rounds int) {
	per := float64(n) * float64(n) * float64(d)
	fit := maximinWork / per
	if fit < 1 {
		return 0, 0
	}
	total := float64(DefaultMaximinCandidates + DefaultMaximinSwapRounds)
	share := min(1, fit/total)
	return max(1, int(share*DefaultMaximinCandidates)), int(share * DefaultMaximinSwapRounds)
}

// MaximinLatinHypercube returns a Latin hypercube of n points in [0,1)^d
// chosen to make the smallest Euclidean distance between two points large
// (the maximin criterion of Morris and Mitchell, 1995). The procedure:
//
//  1. Draw opts.Candidates independent Latin hypercubes (LatinHypercube) and
//     keep the one whose closest pair is farthest apart.
//  2. Repeat up to opts.SwapRounds times: let (i, j) be the closest pair.
//     Only a move of i or j can separate them, so try every swap of the k-th
//     coordinate between a ∈ {i, j} and any other point l, for every
//     dimension k. Such a swap exchanges the two points' strata in dimension
//     k, so the design stays a Latin hypercube. Apply the swap that gives the
//     largest new smallest distance, if it is strictly larger than the current
//     one; otherwise stop.
//
// Step 1 costs O(Candidates·n²·d) and each round of step 2 O(d·n²) in typical
// cases; the defaults are bounded for large designs (maximinEffort). The
// result depends only on the state of rng.
func MaximinLatinHypercube(n, d int, rng *rand.Rand, opts MaximinOptions) ([][]float64, error) {
	if err := checkSize(n, d); err != nil {
		return nil, fmt.Errorf("design: maximin lhs: %w", err)
	}
	if rng == nil {
		return nil, errors.New("design: maximin lhs: nil rng")
	}
	if opts.Candidates < 0 {
		return nil, fmt.Errorf("design: maximin lhs: candidates %d < 0", opts.Candidates)
	}
	defaultCandidates, defaultRounds := maximinEffort(n, d)
	candidates := opts.Candidates
	if candidates == 0 {
		if defaultCandidates == 0 {
			return LatinHypercube(n, d, rng)
		}
		candidates = defaultCandidates
	}
	rounds := opts.SwapRounds
	if rounds == 0 {
		rounds = defaultRounds
	}

	best := newPoints(n, d)
	trial := newPoints(n, d)
	perm := make([]int, n)
	bestMin := math.Inf(-1)
	for range candidates {
		fillLatinHypercube(trial, rng, perm)
		if m := minSquaredDistance(trial); m > bestMin {
			bestMin = m
			best, trial = trial, best
		}
	}
	if n > 2 && rounds > 0 {
		newSwapper(best).improve(rounds)
	}
	return best, nil
}

// MinDistance returns the smallest Euclidean distance between two of the
// points, +Inf for fewer than two points.
func MinDistance(pts [][]float64) float64 {
	return math.Sqrt(minSquaredDistance(pts))
}

func minSquaredDistance(pts [][]float64) float64 {
	best := math.Inf(1)
	for i := range pts {
		for j := i + 1; j < len(pts); j++ {
			if s := squaredDistance(pts[i], pts[j]); s < best {
				best = s
			}
		}
	}
	return best
}

func squaredDistance(a, b []float64) float64 {
	var s float64
	for k := range a {
		t := a[k] - b[k]
		s += t * t
	}
	return s
}

// swapper keeps the squared distance matrix of a design and, for every point,
// its nearest neighbour, so that the smallest distance after a candidate swap
// is found in O(n) instead of O(n²).
type swapper struct {
	pts     [][]float64
	dist    [][]float64 // squared distances; dist[i][i] = +Inf
	nearest []int       // nearest[i] = argmin_j dist[i][j]
}

func newSwapper(pts [][]float64) *swapper {
	n := len(pts)
	s := &swapper{pts: pts, dist: newPoints(n, n), nearest: make([]int, n)}
	for i := range pts {
		s.dist[i][i] = math.Inf(1)
		for j := i + 1; j < n; j++ {
			v := squaredDistance(pts[i], pts[j])
			s.dist[i][j], s.dist[j][i] = v, v
		}
	}
	for i := range pts {
		s.updateNearest(i)
	}
	return s
}

func (s *swapper) updateNearest(i int) {
	best := 0
	for j, v := range s.dist[i] {
		if v < s.dist[i][best] {
			best = j
		}
	}
	s.nearest[i] = best
}

// closestPair returns the pair attaining the smallest distance.
func (s *swapper) closestPair() (int, int, float64) {
	bi := 0
	for i := range s.pts {
		if s.dist[i][s.nearest[i]] < s.dist[bi][s.nearest[bi]] {
			bi = i
		}
	}
	bj := s.nearest[bi]
	return bi, bj, s.dist[bi][bj]
}

// minAfterSwap returns the smallest squared distance of the design if
// coordinate k of points a and l were exchanged.
func (s *swapper) minAfterSwap(a, l, k int) float64 {
	xa, xl := s.pts[a][k], s.pts[l][k]
	// The a–l distance is unchanged: their k-th difference only flips sign.
	best := s.dist[a][l]
	for m, p := range s.pts {
		if m == a || m == l {
			continue
		}
		xm := p[k]
		da, dl := xa-xm, xl-xm
		// After the swap a has l's k-th coordinate and l has a's.
		if v := s.dist[a][m] - da*da + dl*dl; v < best {
			best = v
		}
		if v := s.dist[l][m] - dl*dl + da*da; v < best {
			best = v
		}
		// Pairs of m with points other than a and l keep their distance.
		if nm := s.nearest[m]; nm != a && nm != l {
			if v := s.dist[m][nm]; v < best {
				best = v
			}
		} else {
			for q, v := range s.dist[m] {
				if q != a && q != l && v < best {
					best = v
				}
			}
		}
	}
	return best
}

func (s *swapper) applySwap(a, l, k int) {
	s.pts[a][k], s.pts[l][k] = s.pts[l][k], s.pts[a][k]
	for _, i := range [2]int{a, l} {
		for m := range s.pts {
			if m != i {
				v := squaredDistance(s.pts[i], s.pts[m])
				s.dist[i][m], s.dist[m][i] = v, v
			}
		}
	}
	for i := range s.pts {
		s.updateNearest(i)
	}
}

func (s *swapper) improve(rounds int) {
	d := len(s.pts[0])
	for range rounds {
		i, j, current := s.closestPair()
		bestValue, bestA, bestL, bestK := current, -1, -1, -1
		for _, a := range [2]int{i, j} {
			for l := range s.pts {
				if l == i || l == j {
					continue
				}
				for k := range d {
					if v := s.minAfterSwap(a, l, k); v > bestValue {
						bestValue, bestA, bestL, bestK = v, a, l, k
					}
				}
			}
		}
		if bestA < 0 {
			return
		}
		s.applySwap(bestA, bestL, bestK)
	}
}
