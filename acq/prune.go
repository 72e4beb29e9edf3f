package acq

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"xbo/surrogate"
)

// Bounded is implemented by pointwise acquisitions that can bound their
// utility from above with the exact posterior mean and an upper bound on the
// posterior variance (surrogate.VarianceBounder). RandomSearch then computes
// exact scores only for the candidates whose bound could still reach the
// best ones (branch and bound): the same top candidates, hence the same
// proposal, at a fraction of the O(n²) variance solves.
type Bounded interface {
	Acquisition
	// Bounded reports whether ScoreBound may be used; a wrapper is bounded
	// only when what it wraps is.
	Bounded() bool
	// ScoreBound writes into out an upper bound on Score at every row of x.
	ScoreBound(m surrogate.VarianceBounder, x [][]float64, out []float64) error
}

func bounded(a Acquisition) (Bounded, bool) {
	b, ok := a.(Bounded)
	return b, ok && b.Bounded() && isPointwise(a)
}

// Bounded implements Bounded.
func (EI) Bounded() bool { return true }

// Bounded implements Bounded.
func (PI) Bounded() bool { return true }

// Bounded implements Bounded.
func (LCB) Bounded() bool { return true }

// Bounded implements Bounded.
func (PVAR) Bounded() bool { return true }

// predictBound is predict with a variance bound in place of the variance
// (clamped at 0 like the variance, so a bound never falls below the score).
func predictBound(m surrogate.VarianceBounder, x [][]float64, out []float64) (mean, bound []float64, err error) {
	if m == nil {
		return nil, nil, errors.New("nil surrogate")
	}
	return predictWith(m.PredictBound, x, out)
}

// ScoreBound implements Bounded: EI grows with s (∂EI/∂s = φ(z) > 0).
func (a EI) ScoreBound(m surrogate.VarianceBounder, x [][]float64, out []float64) error {
	mean, bound, err := predictBound(m, x, out)
	if err != nil {
		return fmt.Errorf("acq: ei bound: %w", err)
	}
	a.fromMoments(mean, bound, out)
	return nil
}

// ScoreBound implements Bounded: Φ((y* − ξ − m)/s) falls with s where the
// mean already improves (its supremum over s ≥ 0 is then 1) and grows with
// s elsewhere.
func (a PI) ScoreBound(m surrogate.VarianceBounder, x [][]float64, out []float64) error {
	mean, bound, err := predictBound(m, x, out)
	if err != nil {
		return fmt.Errorf("acq: pi bound: %w", err)
	}
	for i := range out {
		if a.Best-a.Xi-mean[i] > 0 {
			out[i] = 1
			continue
		}
		out[i] = ProbabilityOfImprovement(mean[i], math.Sqrt(bound[i]), a.Best, a.Xi)
	}
	return nil
}

// ScoreBound implements Bounded: τ·s − m grows with s.
func (a LCB) ScoreBound(m surrogate.VarianceBounder, x [][]float64, out []float64) error {
	if err := a.validate(); err != nil {
		return err
	}
	mean, bound, err := predictBound(m, x, out)
	if err != nil {
		return fmt.Errorf("acq: lcb bound: %w", err)
	}
	a.fromMoments(mean, bound, out)
	return nil
}

// ScoreBound implements Bounded.
func (PVAR) ScoreBound(m surrogate.VarianceBounder, x [][]float64, out []float64) error {
	_, bound, err := predictBound(m, x, out)
	if err != nil {
		return fmt.Errorf("acq: pvar bound: %w", err)
	}
	copy(out, bound)
	return nil
}

// pruneBatch candidates are scored exactly at a time, in decreasing order of
// their bounds: enough for the level-3 solve to pay off, few enough that
// little is computed past the point where the bounds fall below the best.
const pruneBatch = 32

// topExact returns the subset of cands that the refinement can start from
// with their exact scores: every candidate that could be among the `keep`
// best distinct ones. Candidates are scored exactly in decreasing order of
// their bounds until the next bound is below the keep-th best distinct exact
// score, so every candidate left out scores strictly below all of those
// kept. The best `keep` distinct candidates, and so the proposal, are the
// ones an exhaustive search finds; only when the keep-th best score is not
// positive (a flat acquisition, where ties are likely) is everything scored.
func topExact(b Bounded, m surrogate.VarianceBounder, cands [][]float64, keep int) ([][]float64, []float64, error) {
	bounds := make([]float64, len(cands))
	if err := b.ScoreBound(m, cands, bounds); err != nil {
		return nil, nil, err
	}
	order := make([]int, 0, len(cands))
	for i, v := range bounds {
		if !math.IsNaN(v) {
			order = append(order, i)
		}
	}
	sortDescending(order, bounds)
	var pts [][]float64
	var scores []float64
	var picked []int
	for start := 0; start < len(order); start += pruneBatch {
		if start > 0 {
			kth, ok := kthDistinct(pts, scores, keep)
			if ok && kth > 0 && bounds[order[start]] < kth*(1-1e-12) {
				break
			}
		}
		idx := order[start:min(start+pruneBatch, len(order))]
		batch := make([][]float64, len(idx))
		for k, i := range idx {
			batch[k] = cands[i]
		}
		out := make([]float64, len(batch))
		if err := b.Score(m, batch, out); err != nil {
			return nil, nil, err
		}
		pts = append(pts, batch...)
		scores = append(scores, out...)
		picked = append(picked, idx...)
	}
	// Back in the candidates' own order, so ties among the kept are broken
	// as an exhaustive search breaks them.
	perm := make([]int, len(picked))
	for k := range perm {
		perm[k] = k
	}
	slices.SortFunc(perm, func(a, b int) int { return picked[a] - picked[b] })
	outPts, outScores := make([][]float64, len(perm)), make([]float64, len(perm))
	for k, p := range perm {
		outPts[k], outScores[k] = pts[p], scores[p]
	}
	return outPts, outScores, nil
}

// kthDistinct is the keep-th highest score among distinct points (NaN
// skipped), and false when there are fewer than keep of them.
func kthDistinct(pts [][]float64, scores []float64, keep int) (float64, bool) {
	top := topDistinct(pts, scores, keep)
	if len(top) < keep {
		return 0, false
	}
	return scores[top[keep-1]], true
}

// topDistinct returns the indices of the (up to) keep best-scoring distinct
// points, best first, NaN scores skipped; of equal points the first in
// order of decreasing score (then of index) stands for all.
func topDistinct(pts [][]float64, scores []float64, keep int) []int {
	order := make([]int, 0, len(pts))
	for i, v := range scores {
		if !math.IsNaN(v) {
			order = append(order, i)
		}
	}
	sortDescending(order, scores)
	var top []int
	for _, i := range order {
		if len(top) == keep {
			break
		}
		if !slices.ContainsFunc(top, func(k int) bool { return slices.Equal(pts[k], pts[i]) }) {
			top = append(top, i)
		}
	}
	return top
}

// sortDescending sorts indices by decreasing value, stable on ties so that
// everything downstream is reproducible.
func sortDescending(order []int, value []float64) {
	slices.SortStableFunc(order, func(i, j int) int {
		switch {
		case value[i] > value[j]:
			return -1
		case value[i] < value[j]:
			return 1
		}
		return 0
	})
}
