package gp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"xbo/surrogate"
)

// SubsetOptions configures FitSubset.
type SubsetOptions struct {
	Options
	// MeanPoints: up to this many observations the posterior mean is
	// conditioned on all of them; beyond, on this many representative ones
	// plus the newest since those were chosen, at most a tenth of
	// MeanPoints more (see meanSubset) [DefaultMeanPoints].
	MeanPoints int
	// VariancePoints bounds the observations the hyperparameters are fitted
	// on and the posterior variance is conditioned on (default
	// DefaultVariancePoints); at most MeanPoints.
	VariancePoints int
	// Maximize says that high observations are good, so the subsets keep
	// the highest quarter instead of the lowest.
	Maximize bool
	// Previous, if non-nil, is an earlier fit whose mean part may be
	// extended instead of refactored: when the mean part's hyperparameters
	// are those of this fit (Fixed, or the fit ended on them) and its
	// observations are the first of this fit's mean subset, at the same
	// coordinates, its Cholesky factor is extended by the new observations
	// in O(n²k) rather than recomputed in O(n³) (see ConditionAll). Its
	// values may differ from this fit's: the factor does not depend on
	// them. The result equals the fit without Previous up to rounding.
	Previous *Subset
}

// Defaults and limits of SubsetOptions. With the defaults a fit costs one
// hyperparameter search on 256 points and one Cholesky factor of at most
// 1,100 points (or its extension by the newest points, see Previous), a
// prediction O(1100·d) for the mean and O(256²) for the variance, however
// many observations there are.
const (
	DefaultMeanPoints     = 1000
	DefaultVariancePoints = 256
	MaxSubsetPoints       = 5000
)

// Subset is a subset-of-data approximation of the GP posterior for more
// observations than an exact fit can afford (R&W §8.3.1). Two exact GPs with
// the same hyperparameters and output scale make it up: the mean is the
// posterior mean given about MeanPoints observations, the variance and every
// covariance the posterior given up to VariancePoints observations, on which
// the hyperparameters are also fitted. Each subset is the best quarter of
// the observations plus a space-filling rest (farthest-point order), so the
// mean is accurate where the optimizer searched and nowhere left without
// data.
//
// The approximation never understates uncertainty at its hyperparameters:
// conditioning a GP on fewer observations subtracts a smaller positive
// semi-definite term from the prior covariance (R&W eq. 2.24), so the
// variance and the covariance matrix of any point set are at least those of
// the exact GP given all observations. With at most VariancePoints
// observations both parts are the same exact GP.
//
// A Subset is immutable, so its methods are safe for concurrent use.
type Subset struct {
	mean, variance *GP
	n              int
	// meanIdx lists the observations the mean part is conditioned on, in
	// its order; nil when it holds all of them in theirs.
	meanIdx []int
}

var (
	_ surrogate.PriorSplitter   = (*Subset)(nil)
	_ surrogate.Covariancer     = (*Subset)(nil)
	_ surrogate.Gradienter      = (*Subset)(nil)
	_ surrogate.VarianceBounder = (*Subset)(nil)
	_ surrogate.SharedPredictor = (*Subset)(nil)
)

// FitSubset fits a Subset to observations y at unit-cube points x (see
// Fit), stopping between likelihood evaluations once ctx is done.
func FitSubset(ctx context.Context, x [][]float64, y []float64, opt SubsetOptions) (*Subset, error) {
	s, err := fitSubset(ctx, x, y, opt)
	if err != nil {
		return nil, fmt.Errorf("gp: fit subset: %w", err)
	}
	return s, nil
}

func fitSubset(ctx context.Context, x [][]float64, y []float64, opt SubsetOptions) (*Subset, error) {
	if ctx == nil {
		return nil, errors.New("nil context")
	}
	if opt.MeanPoints == 0 {
		opt.MeanPoints = DefaultMeanPoints
	}
	if opt.VariancePoints == 0 {
		opt.VariancePoints = min(DefaultVariancePoints, opt.MeanPoints)
	}
	switch {
	case opt.MeanPoints < 1 || opt.MeanPoints > MaxSubsetPoints:
		return nil, fmt.Errorf("mean points %d, want 1..%d", opt.MeanPoints, MaxSubsetPoints)
	case opt.VariancePoints < 1 || opt.VariancePoints > opt.MeanPoints:
		return nil, fmt.Errorf("variance points %d, want 1..%d (the mean points)", opt.VariancePoints, opt.MeanPoints)
	}
	n := len(x)
	if n == 0 {
		return nil, errors.New("no observations")
	}
	if len(y) != n {
		return nil, fmt.Errorf("%d points but %d values", n, len(y))
	}
	dim := len(x[0])
	for i, row := range x {
		if len(row) != dim {
			return nil, fmt.Errorf("x[%d] has %d coordinates, want %d", i, len(row), dim)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("x[%d][%d] is %v", i, j, v)
			}
		}
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("y[%d] is %v", i, v)
		}
	}
	if opt.Output == nil {
		// Both parts standardize with the scale of all observations, so
		// the hyperparameters fitted on one subset mean the same in the
		// other. Constant y keep each part's own (identical) scale.
		if out, constant := outputScale(y); !constant {
			opt.Output = &out
		}
	}

	varIdx := representative(x, y, opt.VariancePoints, opt.Maximize)
	vx, vy := pick(x, y, varIdx)
	variance, err := fit(ctx, vx, vy, opt.Options)
	if err != nil {
		return nil, fmt.Errorf("variance part on %d observations: %w", len(vy), err)
	}
	if len(varIdx) == n || opt.MeanPoints == opt.VariancePoints {
		// The mean part would be the same GP on the same points.
		s := &Subset{mean: variance, variance: variance, n: n}
		if len(varIdx) < n {
			s.meanIdx = varIdx
		}
		return s, nil
	}
	meanIdx := meanSubset(x, y, opt.MeanPoints, opt.Maximize)
	mx, my := pick(x, y, meanIdx)
	fixed := variance.Options()
	var mean *GP
	if prev := opt.Previous.extendableTo(mx, variance); prev != nil {
		mean, err = prev.grow(encodeRows(mx[prev.n:], prev.levels), my, *fixed.Output)
	} else {
		mean, err = fit(ctx, mx, my, fixed)
	}
	if err != nil {
		return nil, fmt.Errorf("mean part on %d observations: %w", len(my), err)
	}
	s := &Subset{mean: mean, variance: variance, n: n}
	if len(meanIdx) < n {
		s.meanIdx = meanIdx
	}
	return s, nil
}

// extendableTo returns the mean part of s when a fit of a mean part on the
// points x with the hyperparameters and settings of like can extend it (see
// SubsetOptions.Previous), nil otherwise or for a nil s.
func (s *Subset) extendableTo(x [][]float64, like *GP) *GP {
	if s == nil {
		return nil
	}
	p := s.mean
	if p.n > len(x) || p.kernel != like.kernel || p.levelOn != like.levelOn || p.minNoise != like.minNoise ||
		!slices.Equal(p.levels, like.levels) || !p.hyper.equal(like.hyper) {
		return nil
	}
	enc := make([]float64, p.dim)
	for i := range p.n {
		if len(x[i]) != p.dim || encodePoint(enc, x[i], p.levels) != nil || !slices.Equal(enc, p.x[i*p.dim:(i+1)*p.dim]) {
			return nil
		}
	}
	return p
}

// encodeRows encodes points row by row (see encodePoint) into one row-major
// array; the rows were validated by the fit that reads them.
func encodeRows(x [][]float64, levels []int) []float64 {
	d := len(levels)
	enc := make([]float64, len(x)*d)
	for i, row := range x {
		_ = encodePoint(enc[i*d:(i+1)*d], row, levels)
	}
	return enc
}

// Options returns options with which Fit reproduces g on its observations:
// its kernel, levels, workers, hyperparameters and output scale, fixed.
func (g *GP) Options() Options {
	h, out := g.hyper.Clone(), g.out
	return Options{Kernel: g.kernel, Levels: slices.Clone(g.levels), Workers: g.workers, Fixed: &h, Output: &out, Prior: g.prior, UncertainLevel: g.levelOn}
}

// Representative returns the sorted indices of the at most k observations
// a Subset conditions on: the best quarter by y (the highest with maximize)
// and a farthest-point rest. Callers that fit several models to the same
// subset select it once.
func Representative(x [][]float64, y []float64, k int, maximize bool) ([]int, error) {
	if len(x) != len(y) || k < 1 {
		return nil, fmt.Errorf("gp: representative: %d points, %d values, k = %d", len(x), len(y), k)
	}
	for i, row := range x {
		if len(row) != len(x[0]) {
			return nil, fmt.Errorf("gp: representative: x[%d] has %d coordinates, want %d", i, len(row), len(x[0]))
		}
	}
	return representative(x, y, k, maximize), nil
}

// meanSubset returns the sorted indices of the observations a Subset's mean
// part is conditioned on: all of them up to k; beyond, the representative k
// of the first m and every one after the m-th, where m steps from k by a
// tenth of k. Observations arrive in order in a running study, so fits
// between two steps of m condition on the same first points plus the newest
// and each can extend the previous one's Cholesky factor (Previous) instead
// of refactoring; the representative subset is chosen afresh once per
// step. The mean part holds fewer than 1.1·k observations.
func meanSubset(x [][]float64, y []float64, k int, maximize bool) []int {
	n := len(x)
	if n <= k {
		return representative(x, y, k, maximize)
	}
	step := max(1, k/10)
	m := k + (n-k)/step*step
	idx := representative(x[:m], y[:m], k, maximize)
	for i := m; i < n; i++ {
		idx = append(idx, i)
	}
	return idx
}

// pick returns the rows and values at idx.
func pick(x [][]float64, y []float64, idx []int) ([][]float64, []float64) {
	px, py := make([][]float64, len(idx)), make([]float64, len(idx))
	for k, i := range idx {
		px[k], py[k] = x[i], y[i]
	}
	return px, py
}

// representative returns the sorted indices of at most k observations: the
// best quarter by y (lowest, or highest with maximize; ties by index) and
// then, greedily, the observation farthest (Euclidean, unit cube) from all
// chosen so far (Gonzalez 1985, "Clustering to minimize the maximum
// intercluster distance"), which covers the space the data span. It costs
// O(n·k·d) and depends on nothing random.
func representative(x [][]float64, y []float64, k int, maximize bool) []int {
	n := len(x)
	if k >= n {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if maximize {
			return cmp.Compare(y[b], y[a])
		}
		return cmp.Compare(y[a], y[b])
	})
	best := max(1, k/4)
	// The candidates' coordinates are copied into one contiguous array and
	// the candidates chosen are swapped out of it, and squared distances
	// (which order the points as distances do) are summed plainly: this
	// loop is the O(n·k·d) of the selection, on studies of 10,000 trials
	// most of a fit's time.
	d := len(x[0])
	chosen := make([]bool, n)
	for _, c := range order[:best] {
		chosen[c] = true
	}
	index := make([]int, 0, n-best)
	coords := make([]float64, 0, (n-best)*d)
	for i, row := range x {
		if !chosen[i] {
			index = append(index, i)
			coords = append(coords, row...)
		}
	}
	minDist := make([]float64, len(index))
	for i := range minDist {
		minDist[i] = math.Inf(1)
	}
	// add lowers every candidate's distance to the chosen points by its
	// distance to x[c] and returns the position of the farthest candidate
	// (the lowest index among equals).
	add := func(c int) int {
		xc := x[c]
		far := -1
		for p := range index {
			row := coords[p*d : p*d+d]
			d2 := 0.0
			for j, v := range row {
				diff := v - xc[j]
				d2 += diff * diff
			}
			m := min(minDist[p], d2)
			minDist[p] = m
			if far < 0 || m > minDist[far] || m == minDist[far] && index[p] < index[far] {
				far = p
			}
		}
		return far
	}
	far := -1
	for _, c := range order[:best] {
		far = add(c)
	}
	for range k - best {
		c := index[far]
		chosen[c] = true
		// Swap the chosen candidate out with the last one.
		last := len(index) - 1
		index[far], minDist[far] = index[last], minDist[last]
		copy(coords[far*d:far*d+d], coords[last*d:last*d+d])
		index, minDist, coords = index[:last], minDist[:last], coords[:last*d]
		far = add(c)
	}
	idx := make([]int, 0, k)
	for i, c := range chosen {
		if c {
			idx = append(idx, i)
		}
	}
	return idx
}

// ConditionOn implements surrogate.Conditioner with ConditionAll.
func (s *Subset) ConditionOn(xs [][]float64, ys []float64) (surrogate.Model, error) {
	return s.ConditionAll(xs, ys)
}

// ConditionAll returns the approximation after the observations (xs[i],
// ys[i]) as well, both parts conditioned on them with the same
// hyperparameters and output scale (see GP.ConditionAll), e.g. for the
// pending trials of a parallel optimizer. The result still never understates
// the exact posterior's variance: both parts condition on a subset of the
// same observations.
func (s *Subset) ConditionAll(xs [][]float64, ys []float64) (*Subset, error) {
	if len(xs) == 0 && len(ys) == 0 {
		return s, nil
	}
	variance, err := s.variance.ConditionAll(xs, ys)
	if err != nil {
		return nil, err
	}
	mean := variance
	if s.mean != s.variance {
		if mean, err = s.mean.ConditionAll(xs, ys); err != nil {
			return nil, err
		}
	}
	c := &Subset{mean: mean, variance: variance, n: s.n + len(xs)}
	if s.meanIdx != nil {
		c.meanIdx = slices.Clone(s.meanIdx)
		for k := range xs {
			c.meanIdx = append(c.meanIdx, s.n+k)
		}
	}
	return c, nil
}

// Dim is the number of coordinates of a point.
func (s *Subset) Dim() int { return s.mean.dim }

// Len is the number of observations the approximation was fitted to.
func (s *Subset) Len() int { return s.n }

// Conditioned returns how many observations the mean and the variance are
// conditioned on.
func (s *Subset) Conditioned() (mean, variance int) { return s.mean.n, s.variance.n }

// Exact says whether both parts are the exact GP given all observations.
func (s *Subset) Exact() bool { return s.mean.n == s.n && s.variance.n == s.n }

// Kernel is the covariance function.
func (s *Subset) Kernel() Kernel { return s.mean.kernel }

// Hyper returns the hyperparameters, fitted on the variance part's
// observations.
func (s *Subset) Hyper() Hyper { return s.variance.Hyper() }

// NoiseVariance is the observation-noise variance σ_n² in objective units,
// of the hyperparameters both parts share.
func (s *Subset) NoiseVariance() float64 { return s.variance.NoiseVariance() }

// OutputScale returns the standardization both parts share.
func (s *Subset) OutputScale() OutputScale { return s.mean.out }

// Mean writes the posterior mean at every row of x into mean.
func (s *Subset) Mean(x [][]float64, mean []float64) error { return s.mean.Mean(x, mean) }

// Predict writes the posterior mean and the (conservative) posterior
// variance of f at every row of x.
func (s *Subset) Predict(x [][]float64, mean, variance []float64) error {
	if s.mean == s.variance {
		return s.mean.Predict(x, mean, variance)
	}
	if err := s.mean.Mean(x, mean); err != nil {
		return err
	}
	scratch := make([]float64, len(x))
	return s.variance.Predict(x, scratch, variance)
}

// AverageVariance is the variance part's posterior variance of the average
// of f over points (see GP.AverageVariance).
func (s *Subset) AverageVariance(points [][]float64) (float64, error) {
	return s.variance.AverageVariance(points)
}

// PriorAverage implements surrogate.PriorSplitter.
func (s *Subset) PriorAverage(points [][]float64) (float64, error) {
	return s.variance.PriorAverage(points)
}

// AverageVarianceGivenPrior implements surrogate.PriorSplitter.
func (s *Subset) AverageVarianceGivenPrior(points [][]float64, priorAverage float64) (float64, error) {
	return s.variance.AverageVarianceGivenPrior(points, priorAverage)
}

// Covariance is the variance part's posterior covariance between a and b.
func (s *Subset) Covariance(a, b [][]float64) (*mat.Dense, error) {
	return s.variance.Covariance(a, b)
}

// PredictGradient implements surrogate.Gradienter: the mean and its
// gradient from the mean part, the variance and its gradient from the
// variance part.
func (s *Subset) PredictGradient(x []float64, dmean, dvar []float64) (mean, variance float64, err error) {
	if s.mean == s.variance {
		return s.mean.PredictGradient(x, dmean, dvar)
	}
	scratch := make([]float64, len(dvar))
	if mean, _, err = s.mean.PredictGradient(x, dmean, scratch); err != nil {
		return 0, 0, err
	}
	if _, variance, err = s.variance.PredictGradient(x, scratch, dvar); err != nil {
		return 0, 0, err
	}
	return mean, variance, nil
}

// PredictBound implements surrogate.VarianceBounder.
func (s *Subset) PredictBound(x [][]float64, mean, bound []float64) error {
	if s.mean == s.variance {
		return s.mean.PredictBound(x, mean, bound)
	}
	if err := s.mean.Mean(x, mean); err != nil {
		return err
	}
	scratch := make([]float64, len(x))
	return s.variance.PredictBound(x, scratch, bound)
}

// PredictShared implements surrogate.SharedPredictor (see GP.PredictShared).
func (s *Subset) PredictShared(base [][]float64, dims []int, values [][]float64, mean, variance []float64) error {
	if s.mean == s.variance || variance == nil {
		return s.mean.PredictShared(base, dims, values, mean, variance)
	}
	if err := s.mean.PredictShared(base, dims, values, mean, nil); err != nil {
		return err
	}
	return s.variance.PredictShared(base, dims, values, make([]float64, len(mean)), variance)
}

// Parts returns the exact GPs the approximation is made of: the one its
// mean comes from and the one its hyperparameters were fitted on and its
// variances come from (the same GP when both hold the same observations).
func (s *Subset) Parts() (mean, variance *GP) { return s.mean, s.variance }
