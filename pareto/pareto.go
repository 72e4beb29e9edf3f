// Package pareto is dominance, non-dominated sorting, constraint handling
// and hypervolume for studies with several objectives: the one place that
// says which trials are Pareto-optimal and how much of the objective space
// they cover.
//
// Objective vectors keep their own units and directions; every function
// takes the directions (space.Minimize or space.Maximize per objective) and
// converts internally to minimization by negating the maximized ones.
//
// Dominance: a dominates b when a is no worse in every objective and
// strictly better in one. With constraints (Deb 2000, "An efficient
// constraint handling method for genetic algorithms"; Optuna's convention,
// a constraint value ≤ 0 is satisfied): a feasible vector dominates every
// infeasible one, and of two infeasible ones the smaller total violation
// Σ max(0, c_k) dominates.
//
// Sorting: fronts by the fast non-dominated sort of Deb et al. 2002
// (NSGA-II), O(m·n²) time and up to O(n²) memory for n vectors of m
// objectives; the first front alone of two objectives by one sweep,
// O(n log n).
//
// Hypervolume: the Lebesgue measure of the region dominated by the vectors
// and bounded by a reference point r (Zitzler and Thiele 1998). For one
// objective it is r − min; for two, one sweep along the first objective
// after sorting, O(n log n); for more, slicing along the last objective
// (HSO, While et al. 2006, "A faster algorithm for calculating hypervolume"):
// between consecutive values of it, the slice's volume is its depth times
// the (m−1)-dimensional hypervolume of the vectors already swept, which are
// filtered to their non-dominated set at each level. Its cost grows as
// n^(m−1) in the worst case, so Hypervolume refuses more than MaxObjectives
// objectives. Vectors not strictly better than r in every objective add
// nothing and are ignored. A point's exclusive contribution is the
// hypervolume lost without it (Contributions).
//
// Contributions recomputes the hypervolume without each vector in turn (n
// hypervolumes): exact and simple, at n times a hypervolume's cost.
//
// Written here rather than taken from a library: no maintained Go package
// computes hypervolume or constrained non-dominated sorts. The tests check
// every result against brute force (fronts peeled by the definition,
// hypervolume by inclusion–exclusion over all subsets).
package pareto

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"xbo/space"
)

// MaxObjectives bounds the objectives Hypervolume and Contributions
// accept: slicing costs up to n^(m−1).
const MaxObjectives = 4

// Dominates reports whether a dominates b under dirs: no worse in every
// objective, strictly better in at least one. The vectors must have one
// finite value per direction.
func Dominates(a, b []float64, dirs []space.Direction) (bool, error) {
	if err := checkVector(a, dirs); err != nil {
		return false, fmt.Errorf("pareto: dominates: a: %w", err)
	}
	if err := checkVector(b, dirs); err != nil {
		return false, fmt.Errorf("pareto: dominates: b: %w", err)
	}
	return dominates(a, b, signs(dirs)), nil
}

// Violation is a constraint vector's total violation Σ max(0, c_k): 0 when
// every constraint holds (c_k ≤ 0). NaN counts as violated by +Inf, so a
// constraint that could not be computed is never taken as satisfied.
func Violation(c []float64) float64 {
	v := 0.0
	for _, x := range c {
		switch {
		case math.IsNaN(x):
			return math.Inf(1)
		case x > 0:
			v += x
		}
	}
	return v
}

// Sort returns the fronts of the vectors under dirs, best first, each a
// list of indices in increasing order: front 0 holds the vectors no other
// dominates (the Pareto set), front k those dominated only by vectors of
// earlier fronts. Identical vectors share a front.
func Sort(values [][]float64, dirs []space.Direction) ([][]int, error) {
	return ConstrainedSort(values, nil, dirs)
}

// ConstrainedSort is Sort under constrained dominance: violations[i] is
// the total violation of vector i (Violation of its constraints; nil means
// every vector is feasible). Feasible vectors fill the first fronts by
// Pareto dominance; the infeasible follow, one front per distinct
// violation, smallest first, whatever their objectives.
func ConstrainedSort(values [][]float64, violations []float64, dirs []space.Direction) ([][]int, error) {
	if err := checkSet(values, dirs); err != nil {
		return nil, fmt.Errorf("pareto: sort: %w", err)
	}
	if violations != nil && len(violations) != len(values) {
		return nil, fmt.Errorf("pareto: sort: %d violations for %d vectors", len(violations), len(values))
	}
	var feasible, infeasible []int
	for i := range values {
		if violations != nil {
			v := violations[i]
			if math.IsNaN(v) || v < 0 {
				return nil, fmt.Errorf("pareto: sort: violation %d is %v, want ≥ 0", i, v)
			}
			if v > 0 {
				infeasible = append(infeasible, i)
				continue
			}
		}
		feasible = append(feasible, i)
	}
	fronts := nonDominatedSort(values, feasible, signs(dirs))
	slices.SortStableFunc(infeasible, func(a, b int) int {
		switch {
		case violations[a] < violations[b]:
			return -1
		case violations[a] > violations[b]:
			return 1
		}
		return 0
	})
	for k := 0; k < len(infeasible); {
		e := k + 1
		for e < len(infeasible) && violations[infeasible[e]] == violations[infeasible[k]] {
			e++
		}
		front := slices.Clone(infeasible[k:e])
		slices.Sort(front)
		fronts = append(fronts, front)
		k = e
	}
	return fronts, nil
}

// Front returns the indices of the Pareto-optimal vectors (the first front
// of Sort), in increasing order; nil for no vectors.
func Front(values [][]float64, dirs []space.Direction) ([]int, error) {
	if len(dirs) == 2 {
		if err := checkSet(values, dirs); err != nil {
			return nil, fmt.Errorf("pareto: front: %w", err)
		}
		return front2(values, signs(dirs)), nil
	}
	if err := checkSet(values, dirs); err != nil {
		return nil, fmt.Errorf("pareto: front: %w", err)
	}
	return frontN(values, signs(dirs)), nil
}

// frontN is the first front of any number of objectives without the full
// sort's O(n²) domination lists: in lexicographic order of the
// (sign-aligned) objectives a vector can only be dominated by one before
// it, and never dominates one before it, so each vector is checked against
// the front found so far and kept when none of it dominates. Time
// O(n log n + n·|front|·m), memory O(n): a study's front is computed on
// every request for it.
func frontN(values [][]float64, sign []float64) []int {
	m := len(sign)
	key := func(i, k int) float64 { return sign[k] * values[i][k] }
	order := lexicographicOrder(values, sign)
	var out []int
	for _, i := range order {
		dominated := false
		for _, j := range out {
			better, worse := false, false
			for k := range m {
				switch {
				case key(j, k) < key(i, k):
					better = true
				case key(j, k) > key(i, k):
					worse = true
				}
				if worse {
					break
				}
			}
			if better && !worse {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// lexicographicOrder is the indices of values sorted by their
// sign-aligned objectives, the first deciding, ties kept in index order.
func lexicographicOrder(values [][]float64, sign []float64) []int {
	order := make([]int, len(values))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		for k, sg := range sign {
			switch va, vb := sg*values[a][k], sg*values[b][k]; {
			case va < vb:
				return -1
			case va > vb:
				return 1
			}
		}
		return 0
	})
	return order
}

// front2 is the first front of two objectives in O(n log n): sorted by the
// first objective (then the second), a vector is non-dominated when its
// second objective is below every earlier one's, or when it repeats the
// last non-dominated vector exactly.
func front2(values [][]float64, sign []float64) []int {
	key := func(i, k int) float64 { return sign[k] * values[i][k] }
	order := lexicographicOrder(values, sign)
	var out []int
	best, last := math.Inf(1), -1
	for _, i := range order {
		switch {
		case key(i, 1) < best:
			best, last = key(i, 1), i
			out = append(out, i)
		case last >= 0 && key(i, 0) == key(last, 0) && key(i, 1) == key(last, 1):
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// nonDominatedSort is Deb et al.'s fast non-dominated sort of the vectors
// idx, with objectives multiplied by sign (so all are minimized).
func nonDominatedSort(values [][]float64, idx []int, sign []float64) [][]int {
	n := len(idx)
	if n == 0 {
		return nil
	}
	count := make([]int, n)   // how many vectors dominate idx[p]
	beats := make([][]int, n) // positions idx[p] dominates
	for p := range n {
		for q := p + 1; q < n; q++ {
			a, b := values[idx[p]], values[idx[q]]
			switch {
			case dominates(a, b, sign):
				beats[p] = append(beats[p], q)
				count[q]++
			case dominates(b, a, sign):
				beats[q] = append(beats[q], p)
				count[p]++
			}
		}
	}
	var fronts [][]int
	var current []int
	for p := range n {
		if count[p] == 0 {
			current = append(current, p)
		}
	}
	for len(current) > 0 {
		front := make([]int, len(current))
		var next []int
		for k, p := range current {
			front[k] = idx[p]
			for _, q := range beats[p] {
				if count[q]--; count[q] == 0 {
					next = append(next, q)
				}
			}
		}
		slices.Sort(front)
		fronts = append(fronts, front)
		current = next
	}
	return fronts
}

// dominates is Dominates without checks, for sign-adjusted objectives.
func dominates(a, b []float64, sign []float64) bool {
	strictly := false
	for k, s := range sign {
		x, y := s*a[k], s*b[k]
		if x > y {
			return false
		}
		if x < y {
			strictly = true
		}
	}
	return strictly
}

// signs maps directions to the factor that makes each objective minimized.
func signs(dirs []space.Direction) []float64 {
	s := make([]float64, len(dirs))
	for k, d := range dirs {
		s[k] = 1
		if d == space.Maximize {
			s[k] = -1
		}
	}
	return s
}

func checkDirs(dirs []space.Direction) error {
	if len(dirs) == 0 {
		return errors.New("no objectives")
	}
	for k, d := range dirs {
		if d != space.Minimize && d != space.Maximize {
			return fmt.Errorf("objective %d: direction %q, want %q or %q", k, d, space.Minimize, space.Maximize)
		}
	}
	return nil
}

func checkVector(v []float64, dirs []space.Direction) error {
	if err := checkDirs(dirs); err != nil {
		return err
	}
	if len(v) != len(dirs) {
		return fmt.Errorf("%d values for %d objectives", len(v), len(dirs))
	}
	for k, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("objective %d is %v", k, x)
		}
	}
	return nil
}

func checkSet(values [][]float64, dirs []space.Direction) error {
	if err := checkDirs(dirs); err != nil {
		return err
	}
	for i, v := range values {
		if err := checkVector(v, dirs); err != nil {
			return fmt.Errorf("vector %d: %w", i, err)
		}
	}
	return nil
}
