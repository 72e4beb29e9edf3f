// Package sobol computes variance-based (Sobol) importance of a surrogate's
// posterior mean over a search space, with intervals from posterior sample
// functions.
//
// Reference measure. Indices are those of g(u) = f(Repair(u)) for u uniform
// on the unit cube [0,1]^d (package space): floats uniform on their own
// scale (log-uniform for log parameters), ints and categoricals uniform over
// their levels, exactly how space.Space.Sample draws configurations. A
// conditional parameter that its parent switches off is space.Inactive and
// has no effect, so a child's index is its effect averaged over the whole
// space, counting the configurations where it is off as contributing
// nothing: if p is the probability that it is on, its total effect is
// p·E[Var(f | the rest) | on]/Var and its main effect is
// p²·Var(E[f | child, on])/Var. Read a child's fraction together with its
// parent's.
//
// Indices (Sobol 1993/2001). With V = Var g, V_j = Var E[g | u_j] (main
// effect S_j = V_j/V), T_j = E Var(g | u_{−j})/V (total effect, everything
// u_j takes part in), V^c_jk = Var E[g | u_j, u_k] (closed pair index
// S^c_jk = V^c_jk/V) and the pure interaction S_jk = S^c_jk − S_j − S_k,
// which is what explain/fanova reports for pairs.
//
// Estimators. Pick-freeze designs of two N×d point sets A and B (the two
// halves of a 2d-dimensional randomized Halton sequence, Owen 2017, from
// gonum's stat/samplemv) with A_B^j = A with column j from B, and B_A^j the
// other way round:
//
//   - main effect: V_j = (1/N) Σ g(B)(g(A_B^j) − g(A)), Saltelli et al.
//     (2010), "Variance based sensitivity analysis of model output. Design
//     and estimator for the total sensitivity index", Comput. Phys. Commun.
//     181, Table 2 (b); averaged with its mirror (1/N) Σ g(A)(g(B_A^j) − g(B))
//     when B_A^j is computed;
//   - total effect: V·T_j = (1/2N) Σ (g(A) − g(A_B^j))², Jansen (1999),
//     Saltelli et al. (2010) Table 2 (f), likewise averaged with its mirror;
//   - closed pair: A_B^j and B_A^k share exactly u_j and u_k, and A_B^j and
//     B_A^j share nothing, so V^c_jk = (1/N) Σ g(A_B^j)(g(B_A^k) − g(B_A^j)),
//     Saltelli (2002), "Making best use of model evaluations to compute
//     sensitivity indices", Comput. Phys. Commun. 145, averaged with its
//     mirror. Pairs cost N·d more evaluations (N(2d+2) instead of N(d+2)).
//
// All values are centred by their overall mean first (it does not change the
// expectations and lowers the variance), V is the sample variance of g(A)
// and g(B) pooled. The design is made of 8 independently scrambled blocks
// (randomized QMC replicates), and the design error is the standard
// deviation of the blocks' estimates over √8 (a bootstrap over rows for
// designs too small to split).
//
// Intervals from posterior samples (the Bayesian approach of Oakley and
// O'Hagan 2004, "Probabilistic sensitivity analysis of complex models: a
// Bayesian approach", JRSS B 66, and Le Gratiet, Cannamela and Iooss 2014,
// "A Bayesian approach for global sensitivity analysis of (multifidelity)
// computer codes", SIAM/ASA J. UQ 2). The true objective is uncertain given
// the data; its indices are a random variable under the GP posterior. Joint
// posterior samples f_k are drawn on a smaller pick-freeze design
// (Options.PosteriorPoints) from the model's posterior covariance
// (surrogate.Covariancer; a Cholesky factor with complete pivoting, LAPACK
// dpstrf, because that covariance is numerically singular) and, in equal
// numbers, from each of Options.Alternatives (e.g. the GP at other plausible
// hyperparameters), and the index of each is computed there. The interval
// is the point estimate of the posterior mean (large design) plus the 2.5%
// and 97.5% quantiles of Ŝ(f_k) − Ŝ(m) on the small design: the difference
// cancels most of the small design's own error (a control variate), and what
// it leaves only widens the interval. The design error of the point
// estimate, times Student's t quantile for 8 blocks, is added in quadrature
// on each side. The index of the posterior mean is not the posterior mean of
// the index (the mean is smoother than the sample functions), so an interval
// need not be centred on the estimate.
package sobol

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/gonum/stat/samplemv"

	"xbo/space"
	"xbo/surrogate"
)

// Limits and defaults.
const (
	DefaultSamples          = 2048 // base points N of the mean's design
	MinSamples              = 16
	MaxSamples              = 1 << 16
	DefaultPosterior        = 300  // posterior sample functions
	MaxPosterior            = 5000 // posterior sample functions
	DefaultPosteriorPoints  = 512  // points of the posterior samples' design
	MaxPosteriorPoints      = 4096 // its cost is cubic in this
	minPosteriorBase        = 8    // base points of the posterior design
	designBlocks            = 8    // independent scrambles of a design
	minBlockRows            = 16   // fewer rows per block make one block
	bootstrapReplicates     = 200
	Level                   = 0.95 // of the intervals
	maxParams               = 500  // the Halton generator's 1000 dimensions / 2
	evaluationChunk         = 2048
	posteriorDesignSeedSalt = 0x5bd1e995
	pivotTolerance          = 1e-10 // relative remaining variance a pivoted Cholesky ignores
	negligibleIndex         = 1e-6  // an interval's lower end below it is 0
)

// Options configure an analysis. The zero value means the defaults.
type Options struct {
	// Samples is the number N of base points of the posterior mean's design
	// (DefaultSamples); it costs N(d+2) evaluations, N(2d+2) with Pairs.
	Samples int
	// Pairs computes pairwise indices.
	Pairs bool
	// Posterior is the number of posterior sample functions for the
	// intervals (DefaultPosterior); negative means no intervals.
	Posterior int
	// PosteriorPoints bounds the points of the design the posterior samples
	// are drawn on (DefaultPosteriorPoints); sampling costs its cube.
	PosteriorPoints int
	// Alternatives are further posteriors of the same data, e.g. the GP
	// under other plausible hyperparameters; the posterior samples are
	// drawn from the model and every alternative in equal numbers, so the
	// intervals also carry the uncertainty the alternatives span.
	Alternatives []surrogate.Covariancer
	// CovarianceScale multiplies every posterior covariance the samples
	// are drawn from (0 means 1; at least 1 otherwise): the factor a check
	// of the model on its own data found its predictive variances need.
	CovarianceScale float64
	// Seed of the designs and the samples (0 means 1).
	Seed uint64
	// Workers bounds the goroutines that evaluate the mean (0 means 2).
	Workers int
}

// Func evaluates a function at every row of x (unit-cube encoding) into out.
type Func func(x [][]float64, out []float64) error

// Index is one sensitivity index: the estimate on the posterior mean and,
// when posterior intervals were computed, the 95% interval and a standard
// deviation (posterior and design error together); otherwise Std is the
// design error alone and [Lower, Upper] its 95% interval.
type Index struct {
	Estimate float64 `json:"estimate"`
	Lower    float64 `json:"lower"`
	Upper    float64 `json:"upper"`
	Std      float64 `json:"std"`
}

// Pair holds the indices of parameters I < J.
type Pair struct {
	I, J int
	// Closed is S^c_IJ, everything I and J explain together.
	Closed Index
	// Interaction is S_IJ = S^c_IJ − S_I − S_J.
	Interaction Index
}

// Result is the analysis of one function.
type Result struct {
	// Mean and Variance of the function over the space.
	Mean, Variance float64
	Main, Total    []Index
	Pairs          []Pair
	// Intervals says whether the intervals come from posterior samples.
	Intervals bool
	// Samples is N; Evaluations the points of the mean's design.
	Samples, Evaluations int
	// PosteriorSamples functions drawn on PosteriorPoints points
	// (PosteriorBase base points); zero without intervals.
	PosteriorSamples, PosteriorPoints, PosteriorBase int

	est, std []float64 // unclipped estimates and design errors
	// errorQuantile turns a design error into the half-width of its 95%
	// interval: Student's t with blocks − 1 degrees of freedom for the
	// block estimate, the normal quantile for the bootstrap.
	errorQuantile float64
}

func (o *Options) normalize(d int) error {
	if o.Samples == 0 {
		o.Samples = DefaultSamples
	}
	if o.Posterior == 0 {
		o.Posterior = DefaultPosterior
	}
	if o.PosteriorPoints == 0 {
		o.PosteriorPoints = DefaultPosteriorPoints
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.CovarianceScale == 0 {
		o.CovarianceScale = 1
	}
	switch {
	case math.IsNaN(o.CovarianceScale) || math.IsInf(o.CovarianceScale, 0) || o.CovarianceScale < 1:
		return fmt.Errorf("sobol: covariance scale %v must be finite and at least 1", o.CovarianceScale)
	case d < 1:
		return errors.New("sobol: the space has no parameters")
	case d > maxParams:
		return fmt.Errorf("sobol: %d parameters: the limit is %d", d, maxParams)
	case o.Samples < MinSamples || o.Samples > MaxSamples:
		return fmt.Errorf("sobol: samples %d must lie in %d..%d", o.Samples, MinSamples, MaxSamples)
	case o.Posterior > MaxPosterior:
		return fmt.Errorf("sobol: posterior samples %d exceed %d", o.Posterior, MaxPosterior)
	case slices.Contains(o.Alternatives, nil):
		return errors.New("sobol: a nil alternative model")
	case o.Posterior > 0 && (o.PosteriorPoints < minPosteriorBase*columns(d, o.Pairs) || o.PosteriorPoints > MaxPosteriorPoints):
		return fmt.Errorf("sobol: posterior points %d must lie in %d..%d for %d parameters",
			o.PosteriorPoints, minPosteriorBase*columns(d, o.Pairs), MaxPosteriorPoints, d)
	}
	return nil
}

// columns is the number of point sets of a design: A, B, every A_B^j and,
// for pairs, every B_A^j.
func columns(d int, pairs bool) int {
	if pairs {
		return 2*d + 2
	}
	return d + 2
}

// Estimate computes the indices of f with a pick-freeze design; Std is the
// bootstrap design error and there are no posterior intervals.
func Estimate(ctx context.Context, f Func, sp *space.Space, opt Options) (*Result, error) {
	if f == nil {
		return nil, errors.New("sobol: nil function")
	}
	if sp == nil {
		return nil, errors.New("sobol: nil space")
	}
	if err := opt.normalize(sp.Dim()); err != nil {
		return nil, err
	}
	des, err := newDesign(sp, opt.Samples, opt.Pairs, opt.Seed)
	if err != nil {
		return nil, err
	}
	y, err := evaluate(ctx, f, des.points, opt.Workers)
	if err != nil {
		return nil, err
	}
	return des.result(y, opt.Seed)
}

// Analyze computes the indices of the model's posterior mean and, when the
// model has a posterior covariance (surrogate.Covariancer: gp.GP, gp.Subset)
// and opt.Posterior > 0, their 95% intervals from posterior sample functions.
func Analyze(ctx context.Context, m surrogate.Model, sp *space.Space, opt Options) (*Result, error) {
	if m == nil {
		return nil, errors.New("sobol: nil model")
	}
	if sp == nil {
		return nil, errors.New("sobol: nil space")
	}
	if m.Dim() != sp.Dim() {
		return nil, fmt.Errorf("sobol: the model has %d dimensions, the space %d parameters", m.Dim(), sp.Dim())
	}
	mean := MeanFunc(m)
	res, err := Estimate(ctx, mean, sp, opt)
	if err != nil {
		return nil, err
	}
	_ = opt.normalize(sp.Dim()) // already validated by Estimate; fills the defaults here
	s, ok := m.(surrogate.Covariancer)
	if !ok || opt.Posterior < 0 {
		return res, nil
	}
	if err := addIntervals(ctx, res, s, mean, sp, opt); err != nil {
		return nil, err
	}
	return res, nil
}

// MeanFunc is the posterior mean of m as a Func.
func MeanFunc(m surrogate.Model) Func {
	return func(x [][]float64, out []float64) error {
		return surrogate.PredictMean(m, x, out)
	}
}

// design is a pick-freeze design: points holds A, B, A_B^1..A_B^d and, with
// pairs, B_A^1..B_A^d, N rows each, every point repaired onto the space.
type design struct {
	n, d   int
	pairs  bool
	points [][]float64
	blocks [][2]int // row ranges of the independently scrambled blocks
}

func newDesign(sp *space.Space, n int, pairs bool, seed uint64) (*design, error) {
	d := sp.Dim()
	// R independently scrambled blocks of n/R rows (the last takes the
	// rest), so the design error can be estimated from their spread.
	blocks := designBlocks
	if n < designBlocks*minBlockRows {
		blocks = 1
	}
	raw := mat.NewDense(n, 2*d, nil)
	des := &design{n: n, d: d, pairs: pairs}
	for r := 0; r < blocks; r++ {
		lo, hi := r*(n/blocks), (r+1)*(n/blocks)
		if r == blocks-1 {
			hi = n
		}
		s := uint64(r)*0x9e3779b97f4a7c15 + seed
		src := rand.NewPCG(s, s^0xda942042e4dd58b5)
		part := raw.Slice(lo, hi, 0, 2*d).(*mat.Dense)
		samplemv.Halton{Kind: samplemv.Owen, Q: distmv.NewUnitUniform(2*d, src), Src: src}.Sample(part)
		des.blocks = append(des.blocks, [2]int{lo, hi})
	}
	cols := columns(d, pairs)
	des.points = make([][]float64, 0, n*cols)
	flat := make([]float64, n*cols*d)
	// cur is the design row being copied; rowA and rowB read its halves.
	var cur []float64
	rowA := func(k int) float64 { return cur[k] }
	rowB := func(k int) float64 { return cur[d+k] }
	addSet := func(pick func(k int) float64) {
		for i := 0; i < n; i++ {
			cur = raw.RawRowView(i)
			u := flat[:d:d]
			flat = flat[d:]
			for k := range u {
				u[k] = pick(k)
			}
			sp.Repair(u)
			des.points = append(des.points, u)
		}
	}
	addSet(rowA)
	addSet(rowB)
	for j := 0; j < d; j++ {
		addSet(func(k int) float64 {
			if k == j {
				return rowB(k)
			}
			return rowA(k)
		})
	}
	if pairs {
		for j := 0; j < d; j++ {
			addSet(func(k int) float64 {
				if k == j {
					return rowA(k)
				}
				return rowB(k)
			})
		}
	}
	for _, u := range des.points {
		for _, v := range u {
			if math.IsNaN(v) {
				return nil, errors.New("sobol: the design has a NaN coordinate")
			}
		}
	}
	return des, nil
}

// evaluate computes f on the points in chunks, on up to workers goroutines,
// stopping when ctx is cancelled.
func evaluate(ctx context.Context, f Func, points [][]float64, workers int) ([]float64, error) {
	y := make([]float64, len(points))
	chunks := (len(points) + evaluationChunk - 1) / evaluationChunk
	next := make(chan int, chunks)
	for c := 0; c < chunks; c++ {
		next <- c
	}
	close(next)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for w := 0; w < min(workers, chunks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				if err := ctx.Err(); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
					return
				}
				lo, hi := c*evaluationChunk, min(len(points), (c+1)*evaluationChunk)
				if err := f(points[lo:hi], y[lo:hi]); err != nil {
					mu.Lock()
					first = cmpErr(first, fmt.Errorf("sobol: evaluating the function: %w", err))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("sobol: the function is not finite (%v) at point %d", v, i)
		}
	}
	return y, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// raw holds the unnormalized variance components of one function on one
// design (a set of rows).
type raw struct {
	mean, v      float64
	main, total  []float64
	closed       [][]float64 // closed[j][k], j < k
	pairs, valid bool
}

// components computes the estimators of the package doc on the rows idx of
// the design (all rows when idx is nil), for values y.
func (des *design) components(y []float64, idx []int) raw {
	n, d := des.n, des.d
	rows := n
	if idx != nil {
		rows = len(idx)
	}
	row := func(i int) int {
		if idx != nil {
			return idx[i]
		}
		return i
	}
	set := func(s, i int) float64 { return y[s*n+row(i)] }
	const (
		setA = 0
		setB = 1
	)
	ab := func(j int) int { return 2 + j }
	ba := func(j int) int { return 2 + d + j }
	// Centre on the mean of A and B.
	c := 0.0
	for i := 0; i < rows; i++ {
		c += set(setA, i) + set(setB, i)
	}
	c /= float64(2 * rows)
	v := 0.0
	for i := 0; i < rows; i++ {
		a, b := set(setA, i)-c, set(setB, i)-c
		v += a*a + b*b
	}
	v /= float64(2*rows - 1)
	out := raw{mean: c, v: v, main: make([]float64, d), total: make([]float64, d), pairs: des.pairs, valid: v > 0}
	for j := 0; j < d; j++ {
		var vm, vt, vm2, vt2 float64
		for i := 0; i < rows; i++ {
			a, b, abj := set(setA, i)-c, set(setB, i)-c, set(ab(j), i)-c
			vm += b * (abj - a)
			vt += (a - abj) * (a - abj)
			if des.pairs {
				baj := set(ba(j), i) - c
				vm2 += a * (baj - b)
				vt2 += (b - baj) * (b - baj)
			}
		}
		vm /= float64(rows)
		vt /= float64(2 * rows)
		if des.pairs {
			vm = (vm + vm2/float64(rows)) / 2
			vt = (vt + vt2/float64(2*rows)) / 2
		}
		out.main[j], out.total[j] = vm, vt
	}
	if des.pairs {
		out.closed = make([][]float64, d)
		for j := 0; j < d; j++ {
			out.closed[j] = make([]float64, d)
			for k := j + 1; k < d; k++ {
				s := 0.0
				for i := 0; i < rows; i++ {
					abj, bak, baj := set(ab(j), i)-c, set(ba(k), i)-c, set(ba(j), i)-c
					bja, abk := baj, set(ab(k), i)-c
					s += abj*(bak-baj) + bja*(abk-abj)
				}
				out.closed[j][k] = s / float64(2*rows)
			}
		}
	}
	return out
}

// fractions turns components into the index vector of the package doc:
// main (d), total (d), then per pair j < k the closed index and the
// interaction; all 0 when the variance is 0.
func (r raw) fractions() []float64 {
	d := len(r.main)
	out := make([]float64, 0, 2*d+d*(d-1))
	div := r.v
	if !r.valid {
		div = math.Inf(1)
	}
	for _, v := range r.main {
		out = append(out, v/div)
	}
	for _, v := range r.total {
		out = append(out, v/div)
	}
	if r.pairs {
		for j := 0; j < d; j++ {
			for k := j + 1; k < d; k++ {
				closed := r.closed[j][k] / div
				out = append(out, closed, closed-(r.main[j]+r.main[k])/div)
			}
		}
	}
	return out
}

// result computes the point estimates and their design error: the standard
// deviation of the blocks' estimates over √blocks, the standard error of
// randomized quasi-Monte Carlo (Owen 2013, "Monte Carlo theory, methods and
// examples", ch. 17); with a single block, a bootstrap over rows.
func (des *design) result(y []float64, seed uint64) (*Result, error) {
	all := des.components(y, nil)
	est := all.fractions()
	var reps [][]float64
	if len(des.blocks) > 1 {
		for _, b := range des.blocks {
			idx := make([]int, 0, b[1]-b[0])
			for i := b[0]; i < b[1]; i++ {
				idx = append(idx, i)
			}
			reps = append(reps, des.components(y, idx).fractions())
		}
	} else {
		rng := rand.New(rand.NewPCG(seed^0xb5297a4d, seed+1))
		for b := 0; b < bootstrapReplicates; b++ {
			idx := make([]int, des.n)
			for i := range idx {
				idx[i] = rng.IntN(des.n)
			}
			reps = append(reps, des.components(y, idx).fractions())
		}
	}
	std := make([]float64, len(est))
	col := make([]float64, len(reps))
	for k := range std {
		for r, f := range reps {
			col[r] = f[k]
		}
		std[k] = stat.StdDev(col, nil)
		if len(des.blocks) > 1 {
			std[k] /= math.Sqrt(float64(len(des.blocks)))
		}
	}
	quantile := 1.959963984540054 // the normal 97.5% quantile
	if len(des.blocks) > 1 {
		quantile = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(des.blocks) - 1)}.Quantile(0.975)
	}
	res := &Result{errorQuantile: quantile, Mean: all.mean, Variance: all.v, Samples: des.n, Evaluations: len(des.points), est: est, std: std}
	res.fill(des.d, est, std, nil, nil)
	return res, nil
}

// fill sets the indices from the estimates est, their design error std and,
// when given, the posterior interval offsets lo ≤ 0 ≤ hi and posterior
// standard deviations post. Main, total and closed indices are clipped to
// [0, 1], interactions too: S_jk = S^c_jk − S_j − S_k ≤ S^c_jk ≤ 1 (the
// true indices lie there).
func (r *Result) fill(d int, est, std []float64, offsets [][2]float64, post []float64) {
	mk := func(k int, hiClip float64) Index {
		e := clip(est[k], 0, hiClip)
		q := r.errorQuantile * std[k]
		ix := Index{Estimate: e, Lower: clip(est[k]-q, 0, hiClip), Upper: clip(est[k]+q, 0, hiClip), Std: std[k]}
		if offsets != nil {
			ix.Lower = clip(est[k]-math.Hypot(-offsets[k][0], q), 0, hiClip)
			ix.Upper = clip(est[k]+math.Hypot(offsets[k][1], q), 0, hiClip)
			ix.Std = math.Hypot(std[k], post[k])
		}
		if ix.Lower < negligibleIndex {
			// A millionth of the variance is the design's rounding, not
			// evidence of an effect: the total index of a parameter the
			// function ignores comes out at 1e-9, never at 0.
			ix.Lower = 0
		}
		return ix
	}
	r.Main, r.Total, r.Pairs = make([]Index, d), make([]Index, d), nil
	for j := 0; j < d; j++ {
		r.Main[j] = mk(j, 1)
		r.Total[j] = mk(d+j, 1)
	}
	k := 2 * d
	for j := 0; j < d && k < len(est); j++ {
		for l := j + 1; l < d; l++ {
			r.Pairs = append(r.Pairs, Pair{I: j, J: l, Closed: mk(k, 1), Interaction: mk(k+1, 1)})
			k += 2
		}
	}
}

func clip(v, lo, hi float64) float64 { return math.Min(hi, math.Max(lo, v)) }

// addIntervals draws posterior samples on a small design and sets the
// intervals of res (see the package doc).
func addIntervals(ctx context.Context, res *Result, s surrogate.Covariancer, mean Func, sp *space.Space, opt Options) error {
	d := sp.Dim()
	base := opt.PosteriorPoints / columns(d, opt.Pairs)
	des, err := newDesign(sp, base, opt.Pairs, opt.Seed^posteriorDesignSeedSalt)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ym, err := evaluate(ctx, mean, des.points, opt.Workers)
	if err != nil {
		return err
	}
	models := append([]surrogate.Covariancer{s}, opt.Alternatives...)
	samples := mat.NewDense(opt.Posterior, len(des.points), nil)
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x2545f4914f6cdd1d))
	for k, m := range models {
		// Samples lo..hi come from model k.
		lo, hi := k*opt.Posterior/len(models), (k+1)*opt.Posterior/len(models)
		if hi == lo {
			continue
		}
		if m.Dim() != d {
			return fmt.Errorf("sobol: alternative model %d has %d dimensions, the space %d parameters", k, m.Dim(), d)
		}
		mk := ym
		if k > 0 {
			if mk, err = evaluate(ctx, MeanFunc(m), des.points, opt.Workers); err != nil {
				return err
			}
		}
		cov, err := m.Covariance(des.points, des.points)
		if err != nil {
			return fmt.Errorf("sobol: posterior covariance: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if opt.CovarianceScale != 1 {
			cov.Scale(opt.CovarianceScale, cov)
		}
		dev, err := deviations(cov, hi-lo, rng)
		if err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			row := samples.RawRowView(i)
			copy(row, dev.RawRowView(i-lo))
			floats.Add(row, mk)
		}
	}
	ref := des.components(ym, nil).fractions()
	deltas := make([][]float64, len(ref))
	for i := 0; i < opt.Posterior; i++ {
		f := des.components(samples.RawRowView(i), nil).fractions()
		for k, v := range f {
			deltas[k] = append(deltas[k], v-ref[k])
		}
	}
	offsets := make([][2]float64, len(ref))
	post := make([]float64, len(ref))
	for k, ds := range deltas {
		sort.Float64s(ds)
		offsets[k] = [2]float64{math.Min(0, stat.Quantile((1-Level)/2, stat.LinInterp, ds, nil)), math.Max(0, stat.Quantile((1+Level)/2, stat.LinInterp, ds, nil))}
		post[k] = stat.StdDev(ds, nil)
	}
	res.fill(d, res.est, res.std, offsets, post)
	res.Intervals = true
	res.PosteriorSamples, res.PosteriorPoints, res.PosteriorBase = opt.Posterior, len(des.points), base
	return nil
}

// deviations draws n samples from N(0, cov), the rows of an n×m matrix, by a
// Cholesky factorization with complete pivoting (LAPACK dpstrf) that stops
// where the remaining variance is below pivotTolerance of the largest: a
// posterior covariance on many points is numerically singular, often
// slightly indefinite, and the pivoted factor of its numerical rank r costs
// O(m²r) where an eigendecomposition would cost far more.
func deviations(cov *mat.Dense, n int, rng *rand.Rand) (*mat.Dense, error) {
	m, c := cov.Dims()
	if m != c {
		return nil, fmt.Errorf("sobol: posterior covariance is %d×%d", m, c)
	}
	a := mat.DenseCopyOf(cov).RawMatrix()
	maxDiag := 0.0
	for i := 0; i < m; i++ {
		v := a.Data[i*a.Stride+i]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("sobol: posterior covariance is not finite")
		}
		maxDiag = math.Max(maxDiag, v)
	}
	out := mat.NewDense(n, m, nil)
	if maxDiag <= 0 {
		return out, nil // the posterior is certain on these points
	}
	piv := make([]int, m)
	u, rank, _ := lapack64.Pstrf(blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: a.Stride, Data: a.Data},
		piv, pivotTolerance*maxDiag, make([]float64, 2*m))
	// Keep the first rank rows of the upper factor; the rest of the storage
	// holds the original lower triangle and the unfinished Schur complement.
	ur := mat.NewDense(max(rank, 1), m, nil)
	for l := 0; l < rank; l++ {
		copy(ur.RawRowView(l)[l:], u.Data[l*u.Stride+l:l*u.Stride+m])
	}
	z := mat.NewDense(n, max(rank, 1), nil)
	if rank > 0 {
		zr := z.RawMatrix().Data
		for i := range zr {
			zr[i] = rng.NormFloat64()
		}
	}
	var perm mat.Dense
	perm.Mul(z, ur) // column k belongs to point piv[k]
	for i := 0; i < n; i++ {
		row, dst := perm.RawRowView(i), out.RawRowView(i)
		for k, p := range piv {
			dst[p] = row[k]
		}
	}
	return out, nil
}
