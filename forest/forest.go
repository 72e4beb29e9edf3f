// Package forest is a random-forest regression surrogate (Breiman 2001) built
// from CART trees stored in flat arrays.
//
// Why our own forest: the Go random-forest libraries we could find are
// classification-only or unmaintained, and functional ANOVA with exact
// marginals (Hutter et al. 2014, section 2.2, Theorem 6) needs
// every leaf's box in the input space, which no library exposes. Trees here
// keep their structure read-only (Tree.Node) and give each leaf's box in the
// unit cube (Tree.Leaves), so package explain/fanova can integrate them
// exactly.
//
// Inputs are unit-cube encodings from package space: every coordinate is in
// [0,1], or −1 (space.Inactive) for a conditional hyperparameter that is off.
// Options.Levels gives, per dimension, 0 for a numeric dimension or the
// number of levels K of a categorical one (level = floor(u·K)).
//
//   - Numeric splits send x ≤ threshold left, with the threshold at the
//     midpoint between two consecutive distinct values. Inactive (−1) sorts
//     below every active value, so "off" versus "on" is an ordinary split.
//   - Categorical splits send a subset of levels left. Inactive is a level of
//     its own. With few levels present every subset is tried; beyond that the
//     levels are ordered by their mean response and only the cuts of that
//     order are tried, which Breiman et al. (1984, CART, Theorem 4.5) proved
//     finds the same optimum for squared error.
//   - Trees are grown on bootstrap samples (counted with multiplicity) with
//     MTry candidate dimensions per node and squared-error impurity.
//
// Predictions follow SMAC (Hutter et al. 2011): the mean across trees and the
// variance across trees (population variance, divisor B) as the spread of f.
// A forest is deterministic for a seed: each tree draws from its own stream
// derived from (Seed, tree index) and is written to its own slot, so the
// number of goroutines never changes a digit.
package forest

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"xbo/surrogate"
)

// Inactive is the unit-cube code of a switched-off conditional parameter; it
// equals space.Inactive (kept here so the forest does not import space).
const Inactive = -1.0

// DefaultTrees is the number of trees when Options.Trees is zero.
const DefaultTrees = 30

// exhaustiveLimit is the largest number of levels present at a node for
// which every subset split is enumerated (2^(m−1)−1 candidates); beyond it
// the ordered-by-mean scan is used. A variable so tests can compare both.
var exhaustiveLimit = 8

// Options configure the forest. The zero value is a valid configuration.
type Options struct {
	// Trees is the number of trees (0 means DefaultTrees).
	Trees int
	// MinSamplesLeaf is the least number of (bootstrap) samples in a leaf
	// (0 means 1, as in scikit-learn; SMAC uses 3).
	MinSamplesLeaf int
	// MinSamplesSplit is the least number of samples a node needs to be split
	// (0 means 2; raised to 2·MinSamplesLeaf, below which no split is legal).
	MinSamplesSplit int
	// MaxDepth limits the depth of a tree; 0 means unlimited.
	MaxDepth int
	// MTry is the number of dimensions tried at each node: 0 means all of
	// them (scikit-learn's and Optuna's choice for regression, and the one
	// that keeps fANOVA importances from being spread onto weak dimensions);
	// a value in (0,1] is a fraction of the dimensions (rounded up, at least
	// one; SMAC uses 5/6); an integer value > 1 is a count (capped at the
	// dimension). If none of the drawn dimensions can split a node, the
	// remaining ones are tried, as scikit-learn does.
	MTry float64
	// NoBootstrap grows every tree on the full data instead of a bootstrap
	// sample (then trees differ only through MTry).
	NoBootstrap bool
	// Seed makes the forest reproducible to the last digit.
	Seed uint64
	// Levels holds, per dimension, 0 for numeric or the number of levels of a
	// categorical dimension. nil means every dimension is numeric.
	Levels []int
	// Workers bounds the goroutines building trees (0 means GOMAXPROCS). It
	// never changes the result.
	Workers int
}

// Forest is a fitted regression forest. It is safe for concurrent reads.
type Forest struct {
	dim    int
	levels []int
	trees  []*Tree
	opts   Options
}

var (
	_ surrogate.Model            = (*Forest)(nil)
	_ surrogate.AverageVariancer = (*Forest)(nil)
)

// resolved holds validated options with defaults applied.
type resolved struct {
	trees, minLeaf, minSplit, maxDepth, mtry, workers int
}

func resolve(o Options, dim int) (resolved, error) {
	var r resolved
	if o.Trees < 0 || o.MinSamplesLeaf < 0 || o.MinSamplesSplit < 0 || o.MaxDepth < 0 || o.Workers < 0 {
		return r, errors.New("negative option (Trees, MinSamplesLeaf, MinSamplesSplit, MaxDepth and Workers must be ≥ 0)")
	}
	r.trees = o.Trees
	if r.trees == 0 {
		r.trees = DefaultTrees
	}
	r.minLeaf = max(o.MinSamplesLeaf, 1)
	r.minSplit = o.MinSamplesSplit
	if r.minSplit == 0 {
		r.minSplit = 2
	}
	r.minSplit = max(r.minSplit, 2*r.minLeaf)
	r.maxDepth = o.MaxDepth
	if r.maxDepth == 0 {
		r.maxDepth = math.MaxInt32
	}
	switch m := o.MTry; {
	case math.IsNaN(m) || m < 0:
		return r, fmt.Errorf("MTry %v must be ≥ 0", m)
	case m == 0:
		r.mtry = dim
	case m <= 1:
		r.mtry = max(1, int(math.Ceil(m*float64(dim)-1e-9)))
	default:
		if m != math.Trunc(m) {
			return r, fmt.Errorf("MTry %v above 1 must be a whole count of dimensions", m)
		}
		r.mtry = min(int(m), dim)
	}
	r.workers = o.Workers
	if r.workers == 0 {
		r.workers = runtime.GOMAXPROCS(0)
	}
	r.workers = min(r.workers, r.trees)
	return r, nil
}

// Fit grows a forest on rows x (unit-cube encodings) and targets y.
func Fit(x [][]float64, y []float64, opts Options) (*Forest, error) {
	if len(x) == 0 {
		return nil, errors.New("forest: fit: no training rows")
	}
	if len(x) != len(y) {
		return nil, fmt.Errorf("forest: fit: %d rows but %d targets", len(x), len(y))
	}
	dim := len(x[0])
	if dim == 0 {
		return nil, errors.New("forest: fit: rows have no coordinates")
	}
	levels := make([]int, dim)
	if opts.Levels != nil {
		if len(opts.Levels) != dim {
			return nil, fmt.Errorf("forest: fit: %d levels given for %d dimensions", len(opts.Levels), dim)
		}
		for j, k := range opts.Levels {
			if k < 0 || k == 1 || k > 1<<14 {
				return nil, fmt.Errorf("forest: fit: dimension %d has %d levels (want 0 for numeric or 2..16384)", j, k)
			}
		}
		copy(levels, opts.Levels)
	}
	for i, row := range x {
		if len(row) != dim {
			return nil, fmt.Errorf("forest: fit: row %d has %d coordinates, want %d", i, len(row), dim)
		}
		for j, u := range row {
			if !(u >= 0 && u <= 1) && u != Inactive {
				return nil, fmt.Errorf("forest: fit: row %d, dimension %d: value %v is neither in [0,1] nor Inactive (−1)", i, j, u)
			}
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return nil, fmt.Errorf("forest: fit: row %d: target %v is not finite", i, y[i])
		}
	}
	r, err := resolve(opts, dim)
	if err != nil {
		return nil, fmt.Errorf("forest: fit: %w", err)
	}
	data := newDataset(x, y, levels)
	f := &Forest{dim: dim, levels: levels, trees: make([]*Tree, r.trees), opts: opts}
	f.opts.Levels = levels

	var wg sync.WaitGroup
	next := make(chan int)
	for range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newBuilder(data, r, !opts.NoBootstrap)
			for t := range next {
				f.trees[t] = b.grow(treeSeed(opts.Seed, t))
			}
		}()
	}
	for t := range r.trees {
		next <- t
	}
	close(next)
	wg.Wait()
	return f, nil
}

// treeSeed derives an independent stream per tree (splitmix64 finalizer) so
// trees do not depend on scheduling.
func treeSeed(seed uint64, t int) uint64 {
	z := seed + uint64(t+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Dim implements surrogate.Model.
func (f *Forest) Dim() int { return f.dim }

// Levels returns a copy of the per-dimension level counts (0 = numeric).
func (f *Forest) Levels() []int { return append([]int(nil), f.levels...) }

// NumTrees is the number of trees.
func (f *Forest) NumTrees() int { return len(f.trees) }

// Tree returns tree t (read-only).
func (f *Forest) Tree(t int) *Tree { return f.trees[t] }

// Options returns the options the forest was fitted with (Levels filled in).
func (f *Forest) Options() Options {
	o := f.opts
	o.Levels = append([]int(nil), f.levels...)
	return o
}

func (f *Forest) checkFinite(x [][]float64) error {
	for i, row := range x {
		for j, u := range row {
			if math.IsNaN(u) {
				return fmt.Errorf("point %d, dimension %d is NaN", i, j)
			}
		}
	}
	return nil
}

// Predict implements surrogate.Model: mean across trees and the population
// variance across trees at every row of x.
func (f *Forest) Predict(x [][]float64, mean, variance []float64) error {
	if err := surrogate.CheckPoints(f.dim, x, mean, variance); err != nil {
		return fmt.Errorf("forest: predict: %w", err)
	}
	if err := f.checkFinite(x); err != nil {
		return fmt.Errorf("forest: predict: %w", err)
	}
	b := float64(len(f.trees))
	for i, row := range x {
		// Two passes keep the variance accurate when predictions are large
		// compared with their spread.
		s := 0.0
		for _, t := range f.trees {
			s += t.Predict(row)
		}
		m := s / b
		ss := 0.0
		for _, t := range f.trees {
			d := t.Predict(row) - m
			ss += d * d
		}
		mean[i] = m
		variance[i] = ss / b
	}
	return nil
}

// TreePredictions writes every tree's prediction at each row: out[i][t].
func (f *Forest) TreePredictions(x [][]float64) ([][]float64, error) {
	if err := surrogate.CheckPoints(f.dim, x); err != nil {
		return nil, fmt.Errorf("forest: tree predictions: %w", err)
	}
	if err := f.checkFinite(x); err != nil {
		return nil, fmt.Errorf("forest: tree predictions: %w", err)
	}
	out := make([][]float64, len(x))
	for i, row := range x {
		out[i] = make([]float64, len(f.trees))
		for t, tr := range f.trees {
			out[i][t] = tr.Predict(row)
		}
	}
	return out, nil
}

// AverageVariance implements surrogate.AverageVariancer: the variance across
// trees of each tree's average over the points, the forest analogue of 1ᵀK̂1/n²
// used for partial-dependence bands (Moosbauer et al. 2021, section 4).
func (f *Forest) AverageVariance(points [][]float64) (float64, error) {
	if len(points) == 0 {
		return 0, errors.New("forest: average variance: no points")
	}
	if err := surrogate.CheckPoints(f.dim, points); err != nil {
		return 0, fmt.Errorf("forest: average variance: %w", err)
	}
	if err := f.checkFinite(points); err != nil {
		return 0, fmt.Errorf("forest: average variance: %w", err)
	}
	avg := make([]float64, len(f.trees))
	m := 0.0
	for t, tr := range f.trees {
		s := 0.0
		for _, p := range points {
			s += tr.Predict(p)
		}
		avg[t] = s / float64(len(points))
		m += avg[t]
	}
	m /= float64(len(f.trees))
	ss := 0.0
	for _, a := range avg {
		ss += (a - m) * (a - m)
	}
	return ss / float64(len(f.trees)), nil
}

// dataset is the training data column-major with one presorted order per
// dimension, shared read-only by all tree builders.
type dataset struct {
	n, dim int
	cols   [][]float64 // cols[j][i]
	codes  [][]int16   // categorical codes+1 (0 = inactive); nil for numeric
	y      []float64
	levels []int
	order  [][]int32 // order[j] sorts rows by cols[j] (stable)
}

func newDataset(x [][]float64, y []float64, levels []int) *dataset {
	n, dim := len(x), len(x[0])
	d := &dataset{n: n, dim: dim, y: y, levels: levels,
		cols: make([][]float64, dim), codes: make([][]int16, dim), order: make([][]int32, dim)}
	for j := range dim {
		col := make([]float64, n)
		for i := range n {
			col[i] = x[i][j]
		}
		d.cols[j] = col
		if levels[j] > 0 {
			c := make([]int16, n)
			for i := range n {
				c[i] = int16(levelCode(col[i], levels[j]) + 1)
			}
			d.codes[j] = c
		}
		ord := make([]int32, n)
		for i := range ord {
			ord[i] = int32(i)
		}
		sort.SliceStable(ord, func(a, b int) bool { return col[ord[a]] < col[ord[b]] })
		d.order[j] = ord
	}
	return d
}

// levelCode maps a unit-cube coordinate of a categorical dimension with k
// levels to its level, −1 for inactive (any negative value).
func levelCode(u float64, k int) int {
	if u < 0 {
		return -1
	}
	c := int(u * float64(k))
	if c >= k {
		c = k - 1
	}
	return c
}
