// Package fanova computes functional ANOVA importances of hyperparameters on
// a random forest with exact marginals, after Hutter, Hoos and Leyton-Brown
// (2014), "An Efficient Approach for Assessing Hyperparameter Importance".
//
// Marginals (eq. 1 and Theorem 6). Each tree partitions the space
// into leaf boxes with constant values c_i. The marginal prediction of a
// partial instantiation λ_U, averaged uniformly over the other dimensions T,
// is â_U(λ_U) = Σ_i c_i·1[λ_U ∈ box_i,U]·μ_T(box_i,T), where μ_T is the
// volume fraction of the box in T. It is exact and linear in the number of
// leaves. "Uniform" is uniform in the unit-cube encoding of package space,
// which is uniform on each hyperparameter's own scale (log-uniform for log
// parameters) and uniform over the levels of a categorical.
//
// Variance decomposition (section 3.1–3.2, eq. 6). Per tree:
// f_∅ = mean, f_j = â_j − f_∅, f_jk = â_jk − f_j − f_k − f_∅,
// V_U = Var(f_U) under the uniform measure, V = Var(tree), fraction V_U/V.
// â_j and â_jk are piecewise constant on the cells cut out by the tree's own
// thresholds on j and k, so every V_U here is computed exactly on those cells
// (difference arrays over leaf boxes), never on a sampled grid. Fractions are
// averaged over trees and reported with their population standard deviation
// across trees (trees with zero variance are skipped, as in fANOVA).
//
// Conditional hyperparameters. The paper integrates over a product space and
// the reference fanova implementation does not model conditions. Here each
// dimension carries a product measure: mass w_j on the Inactive code (−1) and
// 1−w_j spread uniformly over the active values. Options.InactiveMass gives
// w_j; InactiveMass(space) computes the exact probability that the parameter
// is off under uniform sampling of the space, so "off" counts as much as it
// does in the space (the CLI uses it); 0, the default, integrates over the
// active range only. The product measure keeps marginals exact and linear-time
// but ignores that a child is off exactly when its parent says so: the split
// between parent and child importance is then a property of which of the two
// equivalent splits the trees chose, and shows up as their interaction. Read
// conditional parameters' fractions together with their parent's.
//
// Good regions (section 3.3): fit the forest on targets capped at
// y_max (CapQuantile, Cap) so that only variation among configurations better
// than y_max remains.
package fanova

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"xbo/forest"
)

// Options configure an Explainer.
type Options struct {
	// InactiveMass is, per dimension, the probability mass of the Inactive
	// value, in [0,1]; nil means 0 everywhere.
	InactiveMass []float64
	// Workers bounds goroutines (0 means GOMAXPROCS); results never depend on it.
	Workers int
}

// Explainer holds a forest prepared for exact marginals. It is safe for
// concurrent use.
type Explainer struct {
	f       *forest.Forest
	ms      []measure
	trees   []*prepared
	workers int
}

// New prepares every tree of f (linear in its leaves).
func New(f *forest.Forest, opts Options) (*Explainer, error) {
	if f == nil || f.NumTrees() == 0 {
		return nil, errors.New("fanova: new: empty forest")
	}
	d := f.Dim()
	levels := f.Levels()
	if opts.InactiveMass != nil && len(opts.InactiveMass) != d {
		return nil, fmt.Errorf("fanova: new: %d inactive masses for %d dimensions", len(opts.InactiveMass), d)
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("fanova: new: Workers %d < 0", opts.Workers)
	}
	ms := make([]measure, d)
	for j := range ms {
		ms[j].levels = levels[j]
		if opts.InactiveMass != nil {
			w := opts.InactiveMass[j]
			if !(w >= 0 && w <= 1) {
				return nil, fmt.Errorf("fanova: new: inactive mass %v of dimension %d is not in [0,1]", w, j)
			}
			ms[j].inactive = w
		}
	}
	e := &Explainer{f: f, ms: ms, trees: make([]*prepared, f.NumTrees()), workers: opts.Workers}
	if e.workers == 0 {
		e.workers = runtime.GOMAXPROCS(0)
	}
	err := e.parallel(len(e.trees), func(t int, _ *scratch) error {
		p, err := prepare(f.Tree(t), ms)
		if err != nil {
			return fmt.Errorf("tree %d: %w", t, err)
		}
		e.trees[t] = p
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fanova: new: %w", err)
	}
	return e, nil
}

// Dim is the number of hyperparameters.
func (e *Explainer) Dim() int { return len(e.ms) }

// NumTrees is the number of trees.
func (e *Explainer) NumTrees() int { return len(e.trees) }

type scratch struct {
	a    []float64
	pair pairScratch
}

// parallel runs fn(i) for i < n on e.workers goroutines, each result written
// by index by fn itself, and returns the error of the lowest failing i.
func (e *Explainer) parallel(n int, fn func(i int, s *scratch) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(e.workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &scratch{}
			for i := range next {
				errs[i] = fn(i, s)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr(errs)
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func (e *Explainer) checkPoint(dims []int, x []float64) error {
	if len(dims) != len(x) {
		return fmt.Errorf("%d dimensions but %d values", len(dims), len(x))
	}
	seen := make(map[int]bool, len(dims))
	for i, j := range dims {
		if j < 0 || j >= len(e.ms) {
			return fmt.Errorf("dimension %d out of range [0,%d)", j, len(e.ms))
		}
		if seen[j] {
			return fmt.Errorf("dimension %d given twice", j)
		}
		seen[j] = true
		if !(x[i] >= 0 && x[i] <= 1) && x[i] != forest.Inactive {
			return fmt.Errorf("dimension %d: value %v is neither in [0,1] nor Inactive (−1)", j, x[i])
		}
	}
	return nil
}

// TreeMarginal is tree t's exact marginal prediction â_U(x_U) for the
// dimensions dims set to the unit-cube values x, averaged over the others.
func (e *Explainer) TreeMarginal(t int, dims []int, x []float64) (float64, error) {
	if t < 0 || t >= len(e.trees) {
		return 0, fmt.Errorf("fanova: tree marginal: tree %d out of range [0,%d)", t, len(e.trees))
	}
	if err := e.checkPoint(dims, x); err != nil {
		return 0, fmt.Errorf("fanova: tree marginal: %w", err)
	}
	return e.trees[t].marginal(e.ms, dims, x), nil
}

// Marginal is the forest's marginal prediction at x_U: the mean over trees of
// their exact marginals and the population standard deviation across trees.
func (e *Explainer) Marginal(dims []int, x []float64) (mean, std float64, err error) {
	if err := e.checkPoint(dims, x); err != nil {
		return 0, 0, fmt.Errorf("fanova: marginal: %w", err)
	}
	vals := make([]float64, len(e.trees))
	for t, p := range e.trees {
		vals[t] = p.marginal(e.ms, dims, x)
	}
	mean, std = meanStd(vals)
	return mean, std, nil
}

func meanStd(v []float64) (float64, float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(v)))
}

// Decomposition holds the per-tree variance components.
type Decomposition struct {
	Dim int
	// Mean[t] is f_∅ and Total[t] the variance V of tree t.
	Mean, Total []float64
	// Main[t][j] is V_j of tree t.
	Main [][]float64
	// Pairs[t][PairIndex(Dim, j, k)] is V_jk of tree t; nil when not computed.
	Pairs [][]float64
}

// PairIndex numbers the pairs j<k of d dimensions 0..d(d−1)/2−1 in the
// order (0,1), (0,2), …, (0,d−1), (1,2), …
func PairIndex(d, j, k int) int {
	if j > k {
		j, k = k, j
	}
	return j*(2*d-j-1)/2 + (k - j - 1)
}

// Decompose computes, for every tree, the total variance, the main-effect
// variance of every dimension and, with pairs, of every pairwise
// interaction.
func (e *Explainer) Decompose(pairs bool) (*Decomposition, error) {
	d := len(e.ms)
	nt := len(e.trees)
	dec := &Decomposition{Dim: d, Mean: make([]float64, nt), Total: make([]float64, nt), Main: make([][]float64, nt)}
	if pairs {
		dec.Pairs = make([][]float64, nt)
	}
	err := e.parallel(nt, func(t int, s *scratch) error {
		p := e.trees[t]
		dec.Mean[t], dec.Total[t] = p.mean, p.total
		main := make([]float64, d)
		for j := range d {
			if len(p.byDim[j]) == 0 {
				continue
			}
			s.a = grow(s.a, len(p.dims[j].mass))
			p.mainTable(j, s.a, false)
			main[j] = variance1(s.a, p.dims[j].mass)
		}
		dec.Main[t] = main
		if !pairs {
			return nil
		}
		pv := make([]float64, d*(d-1)/2)
		for j := range d {
			for k := j + 1; k < d; k++ {
				pv[PairIndex(d, j, k)] = p.pairVariance(j, k, &s.pair)
			}
		}
		dec.Pairs[t] = pv
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fanova: decompose: %w", err)
	}
	return dec, nil
}

// Effect is an importance: the mean fraction of variance over trees and its
// standard deviation across trees (explain's gp-sobol fills it with a Sobol
// index, its standard deviation and interval).
type Effect struct {
	Fraction float64 `json:"fraction"`
	Std      float64 `json:"std"`
	// CI95 is a 95% interval [lower, upper] when the method gives one
	// (explain's gp-sobol; fANOVA has none).
	CI95 []float64 `json:"ci95,omitempty"`
}

// Importance is the JSON shared by the CLI, the service and the report:
// {"main": {"<param>": {...}}, "pairs": {"<a>,<b>": {...}}, "total_variance": v}.
type Importance struct {
	Main  map[string]Effect `json:"main"`
	Pairs map[string]Effect `json:"pairs,omitempty"`
	// TotalVariance is the mean over trees of each tree's variance over the space.
	TotalVariance float64 `json:"total_variance"`
	// TreesUsed counts the trees with non-zero variance that the fractions
	// average over.
	TreesUsed int `json:"-"`
	names     []string
}

// PairKey is the key of a pair in Importance.Pairs.
func PairKey(a, b string) string { return a + "," + b }

// Importance turns per-tree variances into fractions named by names (one per
// dimension).
func (dec *Decomposition) Importance(names []string) (*Importance, error) {
	if len(names) != dec.Dim {
		return nil, fmt.Errorf("fanova: importance: %d names for %d dimensions", len(names), dec.Dim)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("fanova: importance: name %q appears twice", n)
		}
		seen[n] = true
	}
	var used []int
	tv := 0.0
	for t, v := range dec.Total {
		tv += v
		if v > 0 {
			used = append(used, t)
		}
	}
	im := &Importance{Main: make(map[string]Effect, dec.Dim), TotalVariance: tv / float64(len(dec.Total)),
		TreesUsed: len(used), names: append([]string(nil), names...)}
	frac := func(get func(t int) float64) Effect {
		if len(used) == 0 {
			return Effect{}
		}
		v := make([]float64, len(used))
		for i, t := range used {
			v[i] = get(t) / dec.Total[t]
		}
		m, s := meanStd(v)
		return Effect{Fraction: m, Std: s}
	}
	for j, n := range names {
		im.Main[n] = frac(func(t int) float64 { return dec.Main[t][j] })
	}
	if dec.Pairs != nil {
		im.Pairs = make(map[string]Effect, dec.Dim*(dec.Dim-1)/2)
		for j := range dec.Dim {
			for k := j + 1; k < dec.Dim; k++ {
				q := PairIndex(dec.Dim, j, k)
				im.Pairs[PairKey(names[j], names[k])] = frac(func(t int) float64 { return dec.Pairs[t][q] })
			}
		}
	}
	return im, nil
}

// Ranked is one row of a ranking.
type Ranked struct {
	Name string
	Effect
}

// RankedMain lists the main effects by decreasing fraction (names break ties).
func (im *Importance) RankedMain() []Ranked { return rank(im.Main) }

// RankedPairs lists the pairwise interactions by decreasing fraction.
func (im *Importance) RankedPairs() []Ranked { return rank(im.Pairs) }

func rank(m map[string]Effect) []Ranked {
	out := make([]Ranked, 0, len(m))
	for n, e := range m {
		out = append(out, Ranked{n, e})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Fraction != out[b].Fraction {
			return out[a].Fraction > out[b].Fraction
		}
		return out[a].Name < out[b].Name
	})
	return out
}
