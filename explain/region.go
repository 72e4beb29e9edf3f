package explain

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"xbo/space"
)

// Region tests: whether the candidate outliers share a region of the space
// (see "Outliers" in robust.go).

// region says what sets the candidates for failure apart: a parameter, a
// box of two parameters' ranges, or their being each other's nearest
// neighbours.
type region struct {
	Param  string // empty for the box and the neighbour tests
	Box    bool
	PValue float64
}

// boxSeparation is how well a box of at most two conditions on the
// parameters (a classification tree of depth 2, grown greedily on the
// unit-cube coordinates, a categorical's by level index) separates the
// marked trials from the others: the Gini impurity it removes,
// Σ 2p(m−p)/m over the root minus over the leaves, for p marked among m.
// A learning rate above one value and a batch size below another is such a
// box.
func boxSeparation(x [][]float64, orders [][]int, lab []bool) float64 {
	n := len(x)
	gini := func(p, m int) float64 {
		if m == 0 {
			return 0
		}
		return 2 * float64(p) * float64(m-p) / float64(m)
	}
	// best finds the split of the trials in (nil: all) removing the most
	// impurity, and returns the gain and the side of every trial.
	in := make([]bool, n)
	filtered := make([]int, 0, n)
	best := func(member []bool) (float64, []bool) {
		p, m := 0, 0
		for i := range n {
			if member == nil || member[i] {
				m++
				if lab[i] {
					p++
				}
			}
		}
		if m < 2 {
			return 0, nil
		}
		parent := gini(p, m)
		gain, bj, bcut := 0.0, -1, 0.0
		for j, order := range orders {
			sub := order
			if member != nil {
				sub = filtered[:0]
				for _, i := range order {
					if member[i] {
						sub = append(sub, i)
					}
				}
			}
			lp := 0
			for r, i := range sub[:len(sub)-1] {
				if lab[i] {
					lp++
				}
				// A cut between distinct values only.
				if x[sub[r+1]][j] == x[i][j] {
					continue
				}
				if g := parent - gini(lp, r+1) - gini(p-lp, m-r-1); g > gain {
					gain, bj, bcut = g, j, x[i][j]
				}
			}
		}
		if bj < 0 {
			return 0, nil
		}
		side := make([]bool, n)
		for i := range n {
			side[i] = x[i][bj] <= bcut
		}
		return gain, side
	}
	g0, side := best(nil)
	if side == nil {
		return 0
	}
	total := g0
	for _, left := range []bool{true, false} {
		for i := range n {
			in[i] = side[i] == left
		}
		g, _ := best(in)
		total += g
	}
	return total
}

// Permutations of the region tests, and the most trials the neighbour
// graph is built on (the candidates and a fixed-seed sample of the rest).
const (
	regionPermutations    = 2000
	minRegionPermutations = 500
	regionWork            = 30_000_000 // coordinate visits the box test may spend on relabellings
	regionSeed            = 17
	maxRegionTrials       = 2000 // other trials the tests see on a large study
)

// regionTest asks whether the candidates (marked) are a random subset of
// the trials, as failures unrelated to the configuration are, with d + 2
// permutation tests (regionPermutations random relabellings with the same
// number of candidates, fixed seed, so ties, levels and few candidates need
// no approximation), Bonferroni over them at 0.05:
//
//   - for every parameter, the Kolmogorov–Smirnov distance between the
//     candidates' and the others' values of its unit-cube coordinate (an
//     inactive conditional parameter counts as a value below all others, a
//     categorical by its level index);
//   - how much impurity a box of at most two parameters' ranges removes in
//     telling the candidates from the others (boxSeparation): a region
//     shaped by two parameters, where an optimizer's trials crowd on either
//     side of it (a learning rate that diverges only with small batches);
//   - how many candidates have another candidate as their nearest trial, in
//     the GP's own metric (its lengthscales): a region shaped by several
//     parameters, or next to the optimum where an optimizer's trials crowd
//     (a learning rate just past the best one diverges), shows there.
//
// Without lengthscales it runs the d + 1 tests on the coordinates, with
// them the neighbour test alone, each at the level of all d + 2. It returns
// what set them apart, or nil.
func regionTest(sp *space.Space, x [][]float64, marked []bool, lengthscales []float64) *region {
	rng := rand.New(rand.NewPCG(regionSeed, regionSeed^0x2b992ddfa23249d6))
	// On a large study the tests see the candidates and a fixed-seed
	// random sample of the other trials: under the null the candidates are
	// a random subset of all trials, so they are of the sample too.
	if len(x) > maxRegionTrials {
		var sx [][]float64
		var sm []bool
		rest := 0
		for _, i := range rng.Perm(len(x)) {
			if marked[i] || rest < maxRegionTrials {
				sx, sm = append(sx, x[i]), append(sm, marked[i])
				if !marked[i] {
					rest++
				}
			}
		}
		x, marked = sx, sm
	}
	n := len(x)
	k := 0
	for _, m := range marked {
		if m {
			k++
		}
	}
	if k == 0 || k == n {
		return nil
	}
	d := len(sp.Params)
	level := 0.05 / float64(d+2)
	var best *region
	consider := func(r *region) {
		if best == nil || r.PValue < best.PValue {
			best = r
		}
	}
	// A relabelling is a partial Fisher–Yates shuffle: O(k), no allocation.
	perm := make([]bool, n)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	relabel := func() []bool {
		clear(perm)
		for a := range k {
			b := a + rng.IntN(n-a)
			idx[a], idx[b] = idx[b], idx[a]
			perm[idx[a]] = true
		}
		return perm
	}
	// The box test costs O(d·n) per relabelling: on large studies fewer
	// of them, never so few that the Bonferroni level is out of reach.
	perms := min(regionPermutations, max(minRegionPermutations, regionWork/(3*d*n)))
	pvalue := func(stat func(lab []bool) float64) float64 {
		observed := stat(marked)
		exceed := 0
		for range perms {
			if stat(relabel()) >= observed-1e-12 {
				exceed++
			}
		}
		return float64(exceed+1) / float64(perms+1)
	}
	orders := make([][]int, d)
	// With lengthscales given, the coordinate tests have run already (see
	// clean): only the neighbour test is left, at the same level.
	coordinates := lengthscales == nil
	for j := range d {
		if !coordinates {
			break
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(x[a][j], x[b][j]) })
		orders[j] = order
		ks := func(lab []bool) float64 {
			worst, ca, cb := 0.0, 0, 0
			for r := 0; r < n; {
				e := r
				for e < n && x[order[e]][j] == x[order[r]][j] {
					if lab[order[e]] {
						ca++
					} else {
						cb++
					}
					e++
				}
				worst = math.Max(worst, math.Abs(float64(ca)/float64(k)-float64(cb)/float64(n-k)))
				r = e
			}
			return worst
		}
		if ks(marked) > 0 {
			consider(&region{Param: sp.Params[j].Name, PValue: pvalue(ks)})
		}
	}
	if coordinates && k >= 2 {
		box := func(lab []bool) float64 { return boxSeparation(x, orders, lab) }
		if box(marked) > 0 {
			consider(&region{Box: true, PValue: pvalue(box)})
		}
	}
	if len(lengthscales) == d && k >= 2 {
		nn := nearestNeighbours(sp, x, lengthscales)
		joins := func(lab []bool) float64 {
			c := 0
			for i, j := range nn {
				if j >= 0 && lab[i] && lab[j] {
					c++
				}
			}
			return float64(c)
		}
		if joins(marked) > 0 {
			consider(&region{PValue: pvalue(joins)})
		}
	}
	if best != nil && best.PValue < level {
		return best
	}
	return nil
}

// nearestNeighbours returns, for every trial, its nearest other trial in
// the GP's metric (Σ_j (Δ_j/ℓ_j)², a categorical or an inactive coordinate
// differing by 1).
func nearestNeighbours(sp *space.Space, x [][]float64, lengthscales []float64) []int {
	n := len(x)
	levels := sp.Levels()
	dist := func(a, b []float64) float64 {
		s := 0.0
		for j, l := range lengthscales {
			u, v := a[j], b[j]
			switch {
			case u == v:
			case levels[j] > 0 || u < 0 || v < 0:
				s += 1 / (l * l)
			default:
				s += (u - v) * (u - v) / (l * l)
			}
		}
		return s
	}
	nn := make([]int, n)
	for i := range nn {
		nn[i] = -1
	}
	for i := range n {
		bestD := math.Inf(1)
		for j := range n {
			if j == i {
				continue
			}
			if dd := dist(x[i], x[j]); dd < bestD {
				bestD, nn[i] = dd, j
			}
		}
	}
	return nn
}
