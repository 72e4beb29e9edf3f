package metrics

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Rank correlations with confidence intervals, for asking whether one
// ranking predicts another (the values of trials at a low budget and at the
// full one).
//
// Kendall's τ_b (Kendall 1945, "The treatment of ties in ranking problems",
// Biometrika 33(3)) is computed in O(n log n) by Knight's algorithm (Knight
// 1966, "A computer method for calculating Kendall's tau with ungrouped
// data", JASA 61(314)): sort by (x, y), then count the exchanges a merge
// sort by y makes, each one a discordant pair.
//
// The intervals are Fisher-z intervals tanh(atanh(r) ± z_{1−α/2}·se) with
// the standard errors Bonett & Wright recommend (Bonett & Wright 2000,
// "Sample size requirements for estimating Pearson, Kendall and Spearman
// correlations", Psychometrika 65(1), eq. 3 and the Kendall variance of
// Fieller, Hartley & Pearson 1957): se² = (1 + r_s²/2)/(n − 3) for
// Spearman's r_s and se² = 0.437/(n − 4) for Kendall's τ_b. They assume
// independent pairs from a continuous distribution; ties make them
// approximate.

// MinRankIntervalPairs is the fewest pairs an interval is computed from
// (Kendall's standard error needs n > 4).
const MinRankIntervalPairs = 5

// Kendall is Kendall's τ_b of x and y (ties in either handled as τ_b does).
// Constant inputs are an error (τ_b is undefined).
func Kendall(x, y []float64) (float64, error) {
	if err := checkPairs(x, y); err != nil {
		return 0, fmt.Errorf("metrics: Kendall: %w", err)
	}
	n := len(x)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(x[a], x[b]); c != 0 {
			return c
		}
		return cmp.Compare(y[a], y[b])
	})
	pairs := int64(n) * int64(n-1) / 2
	tiesX, tiesXY := tiedPairs(order, func(a, b int) bool { return x[a] == x[b] }),
		tiedPairs(order, func(a, b int) bool { return x[a] == x[b] && y[a] == y[b] })
	ys := make([]float64, n)
	for k, i := range order {
		ys[k] = y[i]
	}
	swaps := countSwaps(ys, make([]float64, n))
	// ys is now sorted, so ties in y are runs.
	tiesY := int64(0)
	for start := 0; start < n; {
		end := start + 1
		for end < n && ys[end] == ys[start] {
			end++
		}
		run := int64(end - start)
		tiesY += run * (run - 1) / 2
		start = end
	}
	if tiesX == pairs || tiesY == pairs {
		return 0, errors.New("metrics: Kendall: an input is constant")
	}
	num := float64(pairs - tiesX - tiesY + tiesXY - 2*swaps)
	return num / math.Sqrt(float64(pairs-tiesX)*float64(pairs-tiesY)), nil
}

// tiedPairs counts the pairs within runs of equal elements of a sorted
// order.
func tiedPairs(order []int, equal func(a, b int) bool) int64 {
	total := int64(0)
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && equal(order[start], order[end]) {
			end++
		}
		run := int64(end - start)
		total += run * (run - 1) / 2
		start = end
	}
	return total
}

// countSwaps sorts v by a stable merge sort and returns the number of
// exchanges an insertion sort would make: the pairs i < j with v[i] > v[j].
func countSwaps(v, buf []float64) int64 {
	n := len(v)
	if n < 2 {
		return 0
	}
	mid := n / 2
	swaps := countSwaps(v[:mid], buf[:mid]) + countSwaps(v[mid:], buf[mid:])
	i, j, k := 0, mid, 0
	for i < mid && j < n {
		if v[j] < v[i] {
			buf[k] = v[j]
			swaps += int64(mid - i)
			j++
		} else {
			buf[k] = v[i]
			i++
		}
		k++
	}
	k += copy(buf[k:], v[i:mid])
	copy(buf[k:], v[j:n])
	copy(v, buf[:n])
	return swaps
}

// Rank correlation methods.
const (
	RankSpearman = "spearman"
	RankKendall  = "kendall"
)

// RankInterval is the level-confidence interval of a rank correlation r of
// the given method (RankSpearman or RankKendall) from n pairs (see the
// section above for the formula). It needs n ≥ MinRankIntervalPairs, r in
// [−1, 1] and level in (0, 1). An |r| of 1 gives the point interval [r, r].
func RankInterval(method string, r float64, n int, level float64) (lo, hi float64, err error) {
	switch {
	case math.IsNaN(r) || r < -1 || r > 1:
		return 0, 0, fmt.Errorf("metrics: rank interval: correlation %v outside [−1, 1]", r)
	case n < MinRankIntervalPairs:
		return 0, 0, fmt.Errorf("metrics: rank interval: %d pairs; need at least %d", n, MinRankIntervalPairs)
	case !(level > 0 && level < 1):
		return 0, 0, fmt.Errorf("metrics: rank interval: level %v outside (0, 1)", level)
	}
	var se float64
	switch method {
	case RankSpearman:
		se = math.Sqrt((1 + r*r/2) / float64(n-3))
	case RankKendall:
		se = math.Sqrt(0.437 / float64(n-4))
	default:
		return 0, 0, fmt.Errorf("metrics: rank interval: unknown method %q (want %s or %s)", method, RankSpearman, RankKendall)
	}
	if math.Abs(r) == 1 {
		return r, r, nil
	}
	z := math.Atanh(r)
	q := distuv.UnitNormal.Quantile(0.5 + level/2)
	return math.Tanh(z - q*se), math.Tanh(z + q*se), nil
}
