package pareto

import (
	"fmt"
	"math"
	"slices"

	"xbo/space"
)

// Hypervolume is the volume of the objective space the vectors dominate
// up to the reference point ref (one finite value per objective, in the
// objectives' own units: for a minimized objective the worst value that
// still counts, for a maximized one the lowest). Vectors not strictly
// better than ref in every objective add nothing. At most MaxObjectives
// objectives.
func Hypervolume(values [][]float64, ref []float64, dirs []space.Direction) (float64, error) {
	pts, _, err := prepare(values, ref, dirs)
	if err != nil {
		return 0, fmt.Errorf("pareto: hypervolume: %w", err)
	}
	return volume(pts, len(dirs)), nil
}

// Contributions returns each vector's exclusive hypervolume: the volume
// lost when it alone is removed (0 for a dominated vector, for one not
// better than ref, and for each of several identical vectors).
func Contributions(values [][]float64, ref []float64, dirs []space.Direction) ([]float64, error) {
	pts, at, err := prepare(values, ref, dirs)
	if err != nil {
		return nil, fmt.Errorf("pareto: contributions: %w", err)
	}
	m := len(dirs)
	all := volume(pts, m)
	out := make([]float64, len(values))
	rest := make([][]float64, 0, len(pts))
	for i, k := range at {
		if k < 0 {
			continue // beyond the reference point: adds nothing
		}
		rest = append(rest[:0], pts[:k]...)
		rest = append(rest, pts[k+1:]...)
		out[i] = math.Max(0, all-volume(rest, m))
	}
	return out, nil
}

// prepare checks the input and returns the vectors that count, moved so
// that the reference point is the origin and larger is better: coordinate
// k is ref_k − value_k for a minimized objective and value_k − ref_k for a
// maximized one. A vector counts when every coordinate is positive; it then
// dominates the box [0, p]. at[i] is where vector i went in pts, −1 when it
// does not count.
func prepare(values [][]float64, ref []float64, dirs []space.Direction) (pts [][]float64, at []int, err error) {
	if err := checkSet(values, dirs); err != nil {
		return nil, nil, err
	}
	if err := checkVector(ref, dirs); err != nil {
		return nil, nil, fmt.Errorf("reference point: %w", err)
	}
	if len(dirs) > MaxObjectives {
		return nil, nil, fmt.Errorf("%d objectives: at most %d (exact hypervolume costs up to n^(m−1))", len(dirs), MaxObjectives)
	}
	sign := signs(dirs)
	at = make([]int, len(values))
	for i, v := range values {
		p := make([]float64, len(v))
		ok := true
		for k, x := range v {
			p[k] = sign[k] * (ref[k] - x)
			ok = ok && p[k] > 0
		}
		at[i] = -1
		if ok {
			at[i] = len(pts)
			pts = append(pts, p)
		}
	}
	return pts, at, nil
}

// volume is the measure of the union of the boxes [0, p] (p > 0 in every
// one of the m coordinates).
func volume(pts [][]float64, m int) float64 {
	switch {
	case len(pts) == 0:
		return 0
	case m == 1:
		best := 0.0
		for _, p := range pts {
			best = math.Max(best, p[0])
		}
		return best
	case m == 2:
		return sweep2(pts)
	}
	// Slice along the last coordinate, from the largest down: the slice
	// between consecutive values t_k > t_{k+1} is covered, in the other
	// m−1 coordinates, by the boxes of every vector whose last coordinate
	// is at least t_k.
	order := slices.Clone(pts)
	slices.SortFunc(order, func(a, b []float64) int {
		switch {
		case a[m-1] > b[m-1]:
			return -1
		case a[m-1] < b[m-1]:
			return 1
		}
		return 0
	})
	total := 0.0
	var active [][]float64
	for k, p := range order {
		active = addNonDominated(active, p[:m-1])
		next := 0.0
		if k+1 < len(order) {
			next = order[k+1][m-1]
		}
		if depth := p[m-1] - next; depth > 0 {
			total += depth * volume(active, m-1)
		}
	}
	return total
}

// sweep2 is the area of the union of rectangles [0, p0]×[0, p1]: sorted by
// p0 from the largest, each rectangle adds its width beyond the next one's
// times the tallest p1 seen so far.
func sweep2(pts [][]float64) float64 {
	order := slices.Clone(pts)
	slices.SortFunc(order, func(a, b []float64) int {
		switch {
		case a[0] > b[0]:
			return -1
		case a[0] < b[0]:
			return 1
		}
		return 0
	})
	area, tallest := 0.0, 0.0
	for k, p := range order {
		tallest = math.Max(tallest, p[1])
		next := 0.0
		if k+1 < len(order) {
			next = order[k+1][0]
		}
		area += (p[0] - next) * tallest
	}
	return area
}

// addNonDominated adds box corner p to set, keeping only corners no other
// contains (larger is better in these coordinates).
func addNonDominated(set [][]float64, p []float64) [][]float64 {
	for _, q := range set {
		if covers(q, p) {
			return set
		}
	}
	out := set[:0]
	for _, q := range set {
		if !covers(p, q) {
			out = append(out, q)
		}
	}
	return append(out, p)
}

// covers reports whether box [0, a] contains box [0, b].
func covers(a, b []float64) bool {
	for k := range b {
		if a[k] < b[k] {
			return false
		}
	}
	return true
}

// ReferenceRule says in words how ReferencePoint places a reference point
// for a study's hypervolume when none is given.
const ReferenceRule = "each objective's worst value among the feasible usable trials, moved 10% of their range further in the worse " +
	"direction (10% of the worst value's magnitude, or 1, when they all share one value), so that every feasible trial adds to the volume"

// ReferencePoint places the reference point of ReferenceRule for the
// (feasible) vectors values in the directions dirs; nil for no vectors.
// The report and the dashboard measure a study's hypervolume against it.
func ReferencePoint(values [][]float64, dirs []space.Direction) []float64 {
	if len(values) == 0 {
		return nil
	}
	ref := make([]float64, len(dirs))
	for k, d := range dirs {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range values {
			lo, hi = math.Min(lo, v[k]), math.Max(hi, v[k])
		}
		worst := hi
		if d == space.Maximize {
			worst = lo
		}
		pad := 0.1 * (hi - lo)
		if hi == lo {
			pad = 1
			if worst != 0 {
				pad = 0.1 * math.Abs(worst)
			}
		}
		if d == space.Maximize {
			ref[k] = worst - pad
		} else {
			ref[k] = worst + pad
		}
	}
	return ref
}
