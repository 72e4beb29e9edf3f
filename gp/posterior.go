package gp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"xbo/internal/parallel"
	"xbo/surrogate"
)

// predictChunk rows are predicted together: big enough for the triangular
// solve to run at level-3 speed, small enough that the chunk×n buffer stays
// in cache-friendly sizes and memory is bounded for any number of points.
const predictChunk = 128

// encodeAll validates points and encodes them (see encodePoint) into one m×d slice.
func (g *GP) encodeAll(x [][]float64) ([]float64, error) {
	d := g.dim
	enc := make([]float64, len(x)*d)
	for i, row := range x {
		if len(row) != d {
			return nil, &surrogate.DimError{Row: i, Got: len(row), Want: d}
		}
		if err := encodePoint(enc[i*d:(i+1)*d], row, g.levels); err != nil {
			return nil, fmt.Errorf("point %d: %w", i, err)
		}
	}
	return enc, nil
}

// whiten overwrites the m×n matrix ks with ks·U⁻¹, so that row i becomes
// (U⁻ᵀk_i)ᵀ and k_iᵀ(K+σ_n²I)⁻¹k_j is the dot product of rows i and j.
func (g *GP) whiten(ks []float64, m int) {
	solveRightUpper(g.u, g.n, ks, m)
}

// minChunk is the smallest row range handed to a second worker: below it the
// goroutine hand-off costs more than the rows.
const minChunk = 16

// bufferPool recycles large float64 buffers of one use. Unlike a
// sync.Pool, which the garbage collector empties, it keeps its buffers
// across collections (a proposal triggers about one, which would empty a
// sync.Pool between proposals), up to maxPooled buffers and maxPooledFloats
// floats in all, so an occasional huge GP does not pin its memory. Each use
// has its own pool, so a pool's buffers have few distinct sizes.
type bufferPool struct {
	mu     sync.Mutex
	free   []*[]float64
	floats int
}

const (
	maxPooled       = 8
	maxPooledFloats = 8 << 20 // 64 MB
)

// get returns a buffer of size floats, the smallest pooled one that is
// large enough; their values are arbitrary unless zeroed is set.
func (bp *bufferPool) get(size int, zeroed bool) *[]float64 {
	bp.mu.Lock()
	best := -1
	for i, p := range bp.free {
		if cap(*p) >= size && (best < 0 || cap(*p) < cap(*bp.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		p := bp.free[best]
		bp.free = slices.Delete(bp.free, best, best+1)
		bp.floats -= cap(*p)
		bp.mu.Unlock()
		*p = (*p)[:size]
		if zeroed {
			clear(*p)
		}
		return p
	}
	bp.mu.Unlock()
	// A study's GP grows by a point per trial, and with it every n×n
	// buffer: a spare quarter keeps the next few dozen fits at T = 200 on
	// this buffer rather than each on a new one (unless it is too large to
	// be pooled anyway).
	spare := size / 4
	if size+spare > maxPooledFloats {
		spare = 0
	}
	s := make([]float64, size, size+spare)
	return &s
}

// put hands b back. A full pool keeps its largest buffers, so that buffers
// from a study's early, smaller fits give way as it grows.
func (bp *bufferPool) put(b *[]float64) {
	if cap(*b) > maxPooledFloats {
		return
	}
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if len(bp.free) == maxPooled {
		smallest := 0
		for j, p := range bp.free {
			if cap(*p) < cap(*bp.free[smallest]) {
				smallest = j
			}
		}
		if cap(*bp.free[smallest]) >= cap(*b) {
			return
		}
		bp.floats -= cap(*bp.free[smallest])
		bp.free = slices.Delete(bp.free, smallest, smallest+1)
	}
	if bp.floats+cap(*b) <= maxPooledFloats {
		bp.free = append(bp.free, b)
		bp.floats += cap(*b)
	}
}

// scratchPool recycles the chunk×n cross-kernel buffers: an Ask's pattern
// search predicts dozens of small batches, and a fresh 200 kB buffer per call
// mostly feeds the garbage collector.
var scratchPool bufferPool

// gradientPool recycles PredictGradient's buffers.
var gradientPool bufferPool

// forChunks runs work on [lo, hi) row ranges of m rows in parallel, giving
// each worker its own scratch slice of size·scratchPerRow floats. Batches
// smaller than two full chunks are split evenly over the workers, so the
// small batches of a pattern search also use both cores. Every row is
// computed independently of its chunk, so results do not depend on the split.
func forChunks(m, size, scratchPerRow, limit int, work func(lo, hi int, scratch []float64)) {
	if m == 0 {
		return
	}
	if limit <= 0 {
		limit = parallel.DefaultWorkers
	}
	if m < limit*size {
		size = max(minChunk, (m+limit-1)/limit)
	}
	size = min(size, m)
	chunks := (m + size - 1) / size
	workers := parallel.Workers(chunks, limit)
	run := func(next func() (int, bool)) {
		sp := scratchPool.get(size*scratchPerRow, false)
		for lo, ok := next(); ok; lo, ok = next() {
			work(lo, min(lo+size, m), *sp)
		}
		scratchPool.put(sp)
	}
	if workers == 1 {
		lo := -size
		run(func() (int, bool) { lo += size; return lo, lo < m })
		return
	}
	var counter atomic.Int64
	next := func() (int, bool) {
		lo := int(counter.Add(1)-1) * size
		return lo, lo < m
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(next)
		}()
	}
	run(next)
	wg.Wait()
}

// Predict implements surrogate.Model: posterior mean and variance of f (no
// noise) in objective units (R&W Algorithm 2.1). Variances are clamped at 0.
func (g *GP) Predict(x [][]float64, mean, variance []float64) error {
	if err := surrogate.CheckPoints(g.dim, x, mean, variance); err != nil {
		return fmt.Errorf("gp: predict: %w", err)
	}
	if err := g.predict(x, mean, variance); err != nil {
		return fmt.Errorf("gp: predict: %w", err)
	}
	return nil
}

// Mean writes the posterior mean only, which costs O(n·d) per point instead
// of O(n²) (ICE curves need many means and few variances).
func (g *GP) Mean(x [][]float64, mean []float64) error {
	if err := surrogate.CheckPoints(g.dim, x, mean); err != nil {
		return fmt.Errorf("gp: mean: %w", err)
	}
	if err := g.predict(x, mean, nil); err != nil {
		return fmt.Errorf("gp: mean: %w", err)
	}
	return nil
}

func (g *GP) predict(x [][]float64, mean, variance []float64) error {
	pe, err := g.encodeAll(x)
	if err != nil {
		return err
	}
	d := g.dim
	g.posterior(len(x), func(ks []float64, lo, hi int) {
		g.sqDistances(ks, pe[lo*d:hi*d], hi-lo)
	}, mean, variance)
	return nil
}

// posterior writes the posterior mean (and variance, unless nil) of m
// points whose squared distances to the training inputs sqDist writes for
// the rows [lo, hi) into ks ((hi−lo)×n).
func (g *GP) posterior(m int, sqDist func(ks []float64, lo, hi int), mean, variance []float64) {
	n := g.n
	s2 := g.hyper.SignalVariance
	scale := g.out.Std
	forChunks(m, predictChunk, n, g.workers, func(lo, hi int, ks []float64) {
		m := hi - lo
		ks = ks[:m*n]
		sqDist(ks, lo, hi)
		g.applyKernel(ks)
		for i := 0; i < m; i++ {
			mean[lo+i] = g.out.Mean + scale*blas64.Dot(
				blas64.Vector{N: n, Inc: 1, Data: ks[i*n : (i+1)*n]},
				blas64.Vector{N: n, Inc: 1, Data: g.alpha})
		}
		if variance == nil {
			return
		}
		g.whiten(ks, m)
		for i := 0; i < m; i++ {
			row := ks[i*n : (i+1)*n]
			q := 0.0
			for _, v := range row {
				q += v * v
			}
			variance[lo+i] = scale * scale * (math.Max(0, s2-q) + g.level.variance(row, 1))
		}
	})
}

// sharedBlock bounds the floats of the base points' partial distances
// PredictShared holds at once (16 MB); a variable so tests can force blocks.
var sharedBlock = 1 << 21

// PredictShared writes the posterior mean and, unless variance is nil, the
// variance of f at the len(values)×len(base) points made by giving every
// base point the coordinates values[k] in the dimensions dims: point (k, i)
// goes to entry k·len(base)+i. A partial-dependence grid has this shape.
// The result equals Predict's on those points up to rounding (the distance
// is summed in another order), for less work: the distance over the other
// dimensions is computed once per base point instead of once per point.
func (g *GP) PredictShared(base [][]float64, dims []int, values [][]float64, mean, variance []float64) error {
	if err := g.predictShared(base, dims, values, mean, variance); err != nil {
		return fmt.Errorf("gp: predict shared: %w", err)
	}
	return nil
}

func (g *GP) predictShared(base [][]float64, dims []int, values [][]float64, mean, variance []float64) error {
	nb, nv, d, n := len(base), len(values), g.dim, g.n
	if len(mean) != nb*nv || (variance != nil && len(variance) != nb*nv) {
		return fmt.Errorf("outputs of %d and %d values for %d×%d points", len(mean), len(variance), nv, nb)
	}
	if len(dims) == 0 {
		return errors.New("no shared dimensions")
	}
	for k, j := range dims {
		if j < 0 || j >= d || slices.Contains(dims[:k], j) {
			return fmt.Errorf("dimension %d: out of range or repeated", j)
		}
	}
	pe, err := g.encodeAll(base)
	if err != nil {
		return err
	}
	// The values encoded like points: put them into a copy of a base point.
	ve := make([]float64, nv*len(dims))
	probe := make([]float64, d)
	enc := make([]float64, d)
	for k, v := range values {
		if len(v) != len(dims) {
			return fmt.Errorf("values[%d] has %d coordinates for %d dimensions", k, len(v), len(dims))
		}
		for s, j := range dims {
			probe[j] = v[s]
		}
		if err := encodePoint(enc, probe, g.levels); err != nil {
			return fmt.Errorf("values[%d]: %w", k, err)
		}
		for s, j := range dims {
			ve[k*len(dims)+s] = enc[j]
		}
	}
	valuePart := make([]float64, nv*n)
	g.partialSqDistances(valuePart, ve, nv, dims, false)
	block := max(1, min(nb, sharedBlock/max(n, 1)))
	basePart := make([]float64, block*n)
	for b0 := 0; b0 < nb; b0 += block {
		b1 := min(nb, b0+block)
		bl := b1 - b0
		g.partialSqDistances(basePart, pe[b0*d:b1*d], bl, dims, true)
		// Rows r = k·bl + i of this block, written in place by posterior
		// and then moved to k·nb + b0 + i.
		bm := make([]float64, nv*bl)
		var bv []float64
		if variance != nil {
			bv = make([]float64, nv*bl)
		}
		g.posterior(nv*bl, func(ks []float64, lo, hi int) {
			for r := lo; r < hi; r++ {
				k, i := r/bl, r%bl
				row, bp, vp := ks[(r-lo)*n:(r-lo+1)*n], basePart[i*n:(i+1)*n], valuePart[k*n:(k+1)*n]
				for t := range row {
					row[t] = bp[t] + vp[t]
				}
			}
		}, bm, bv)
		for k := range nv {
			copy(mean[k*nb+b0:k*nb+b1], bm[k*bl:(k+1)*bl])
			if variance != nil {
				copy(variance[k*nb+b0:k*nb+b1], bv[k*bl:(k+1)*bl])
			}
		}
	}
	return nil
}

// Covariance implements surrogate.Covariancer: the len(a)×len(b) posterior
// covariance of f in objective units,
// k(a,b) − k(a,X)(K+σ_n²I)⁻¹k(X,b) computed as k(a,b) − (k(a,X)U⁻¹)(k(b,X)U⁻¹)ᵀ.
func (g *GP) Covariance(a, b [][]float64) (*mat.Dense, error) {
	c, err := g.covariance(a, b)
	if err != nil {
		return nil, fmt.Errorf("gp: covariance: %w", err)
	}
	return c, nil
}

func (g *GP) covariance(a, b [][]float64) (*mat.Dense, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, errors.New("empty point set")
	}
	same := len(a) == len(b) && &a[0] == &b[0]
	ea, err := g.encodeAll(a)
	if err != nil {
		return nil, fmt.Errorf("a: %w", err)
	}
	eb := ea
	if !same {
		if eb, err = g.encodeAll(b); err != nil {
			return nil, fmt.Errorf("b: %w", err)
		}
	}
	n, d := g.n, g.dim
	na, nb := len(a), len(b)
	wa := make([]float64, na*n)
	g.crossKernel(wa, ea, na)
	g.whiten(wa, na)
	wb := wa
	if !same {
		wb = make([]float64, nb*n)
		g.crossKernel(wb, eb, nb)
		g.whiten(wb, nb)
	}
	s2 := g.hyper.SignalVariance
	c := make([]float64, na*nb)
	for i := 0; i < na; i++ {
		ai := ea[i*d : (i+1)*d]
		for j := 0; j < nb; j++ {
			c[i*nb+j] = s2 * g.kernel.corrValue(g.met.r2(ai, eb[j*d:(j+1)*d]))
		}
	}
	blas64.Gemm(blas.NoTrans, blas.Trans, -1,
		blas64.General{Rows: na, Cols: n, Stride: n, Data: wa},
		blas64.General{Rows: nb, Cols: n, Stride: n, Data: wb},
		1, blas64.General{Rows: na, Cols: nb, Stride: nb, Data: c})
	g.level.addCovariance(c, wa, wb, na, nb)
	v := g.out.Std * g.out.Std
	for i := range c {
		c[i] *= v
	}
	if same {
		for i := 0; i < na; i++ {
			c[i*na+i] = math.Max(0, c[i*na+i])
			for j := i + 1; j < na; j++ {
				s := 0.5 * (c[i*na+j] + c[j*na+i])
				c[i*na+j], c[j*na+i] = s, s
			}
		}
	}
	return mat.NewDense(na, nb, c), nil
}

// AverageVariance implements surrogate.AverageVariancer: the posterior variance
// of (1/n)Σ_i f(a_i), i.e. 1ᵀK̂1/n² (Moosbauer et al. 2021, eq. 4), in objective
// units, computed without the n×n matrix K̂ as
//
//	(Σ_ij k(a_i,a_j) − vᵀ(K+σ_n²I)⁻¹v)/n²,  v = Σ_i k(X, a_i).
//
// The double sum costs O(n²·d) time but O(1) memory per worker; it is split
// over at most two goroutines. Memory is O(n·d + T) for T observations.
// The difference is clamped at 0 against rounding.
func (g *GP) AverageVariance(points [][]float64) (float64, error) {
	prior, q, m, err := g.averageParts(points, true)
	if err != nil {
		return 0, fmt.Errorf("gp: average variance: %w", err)
	}
	mm := float64(m)
	return g.out.Std * g.out.Std * math.Max(0, prior-q) / (mm * mm), nil
}

// PriorAverage is the prior part of AverageVariance, (1/n²)·Σ_ij k(a_i,a_j)
// in objective units. The kernel is stationary, so point sets that differ
// only in a coordinate every point of the set shares (the grid value of a
// partial dependence) have the same prior part: a PDP computes it once per
// parameter instead of once per grid value.
func (g *GP) PriorAverage(points [][]float64) (float64, error) {
	prior, _, m, err := g.averageParts(points, true)
	if err != nil {
		return 0, fmt.Errorf("gp: prior average: %w", err)
	}
	mm := float64(m)
	return g.out.Std * g.out.Std * prior / (mm * mm), nil
}

// AverageVarianceGivenPrior is AverageVariance with its prior part given
// (from PriorAverage of a set with the same prior part).
func (g *GP) AverageVarianceGivenPrior(points [][]float64, priorAverage float64) (float64, error) {
	if math.IsNaN(priorAverage) || math.IsInf(priorAverage, 0) || priorAverage < 0 {
		return 0, fmt.Errorf("gp: average variance: prior average %v must be finite and ≥ 0", priorAverage)
	}
	_, q, m, err := g.averageParts(points, false)
	if err != nil {
		return 0, fmt.Errorf("gp: average variance: %w", err)
	}
	mm := float64(m)
	return math.Max(0, priorAverage-g.out.Std*g.out.Std*q/(mm*mm)), nil
}

// averageParts returns, in standardized units, the prior double sum
// Σ_ij k(a_i,a_j) (only when withPrior; it costs O(m²·d)) and the data part
// vᵀ(K+σ²I)⁻¹v with v = Σ_i k(X,a_i), which costs O(m·n·d + n²).
func (g *GP) averageParts(points [][]float64, withPrior bool) (prior, q float64, m int, err error) {
	if len(points) == 0 {
		return 0, 0, 0, errors.New("no points")
	}
	pe, err := g.encodeAll(points)
	if err != nil {
		return 0, 0, 0, err
	}
	m, n, d := len(points), g.n, g.dim
	s2 := g.hyper.SignalVariance
	workers := parallel.Workers(m/64, g.workers)
	sums := make([]float64, workers)
	vs := make([][]float64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := make([]float64, n)
			s := 0.0
			// Interleaved rows balance the triangular double sum.
			for i := w; i < m; i += workers {
				ai := pe[i*d : (i+1)*d]
				if withPrior {
					row := 0.0
					for j := i + 1; j < m; j++ {
						row += g.kernel.corrValue(g.met.r2(ai, pe[j*d:(j+1)*d]))
					}
					s += row
				}
			}
			// The cross-kernel rows of this worker's points, summed, in
			// blocks through the fast path (σ_f² included).
			const block = 32
			buf := make([]float64, block*n)
			rows := make([]float64, 0, block*d)
			flush := func() {
				k := len(rows) / d
				if k == 0 {
					return
				}
				g.crossKernel(buf[:k*n], rows, k)
				for r := range k {
					for t, x := range buf[r*n : (r+1)*n] {
						v[t] += x
					}
				}
				rows = rows[:0]
			}
			for i := w; i < m; i += workers {
				rows = append(rows, pe[i*d:(i+1)*d]...)
				if len(rows) == block*d {
					flush()
				}
			}
			flush()
			sums[w], vs[w] = s, v
		}()
	}
	wg.Wait()
	total := 0.0
	v := vs[0]
	for w := range workers {
		total += sums[w]
		if w > 0 {
			for t := range v {
				v[t] += vs[w][t]
			}
		}
	}
	if withPrior {
		prior = s2 * (float64(m) + 2*total)
	} else {
		prior = math.NaN()
	}
	blas64.Trsv(blas.Trans, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: g.u},
		blas64.Vector{N: n, Inc: 1, Data: v})
	for _, z := range v {
		q += z * z
	}
	// The level's variance adds to the average's: it is subtracted from
	// the data part, which the callers subtract.
	q -= g.level.variance(v, float64(m))
	return prior, q, m, nil
}

// Sample draws n joint posterior samples of f at the rows of x, returned as
// the rows of an n×len(x) matrix in objective units: mean + Bᵀz with
// BᵀB the posterior covariance (Cholesky with escalating jitter, or a
// clamped eigendecomposition when the covariance is numerically singular).
func (g *GP) Sample(x [][]float64, n int, rng *rand.Rand) (*mat.Dense, error) {
	s, err := g.sample(x, n, rng)
	if err != nil {
		return nil, fmt.Errorf("gp: sample: %w", err)
	}
	return s, nil
}

func (g *GP) sample(x [][]float64, n int, rng *rand.Rand) (*mat.Dense, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%d samples requested, want > 0", n)
	}
	if rng == nil {
		return nil, errors.New("nil random source")
	}
	cov, err := g.covariance(x, x)
	if err != nil {
		return nil, err
	}
	m := len(x)
	mean := make([]float64, m)
	if err := g.predict(x, mean, nil); err != nil {
		return nil, err
	}
	z := make([]float64, n*m)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	zm := blas64.General{Rows: n, Cols: m, Stride: m, Data: z}
	raw := cov.RawMatrix()
	meanDiag := 0.0
	for i := 0; i < m; i++ {
		meanDiag += raw.Data[i*raw.Stride+i]
	}
	meanDiag /= float64(m)
	out := make([]float64, n*m)
	switch {
	case meanDiag == 0:
		// Degenerate posterior (e.g. a zero-noise model at its data): f is known.
	default:
		u := make([]float64, m*m)
		if factorCovariance(u, raw.Data, m, meanDiag) {
			blas64.Trmm(blas.Right, blas.NoTrans, 1,
				blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: m, Stride: m, Data: u}, zm)
			copy(out, z)
		} else {
			var eig mat.EigenSym
			if !eig.Factorize(mat.NewSymDense(m, slices.Clone(raw.Data)), true) {
				return nil, errors.New("posterior covariance: eigendecomposition failed")
			}
			vals := eig.Values(nil)
			var q mat.Dense
			eig.VectorsTo(&q)
			for i := 0; i < n; i++ {
				for k := 0; k < m; k++ {
					z[i*m+k] *= math.Sqrt(math.Max(0, vals[k]))
				}
			}
			qr := q.RawMatrix()
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, zm, qr, 0, blas64.General{Rows: n, Cols: m, Stride: m, Data: out})
		}
	}
	for i := 0; i < n; i++ {
		row := out[i*m : (i+1)*m]
		for k := range row {
			row[k] += mean[k]
		}
	}
	return mat.NewDense(n, m, out), nil
}

// factorCovariance factors the symmetric m×m matrix c (row-major) into u with
// jitter escalating from 0 to 1e-4·meanDiag; the diagonal of c is kept.
func factorCovariance(u, c []float64, m int, meanDiag float64) bool {
	for _, rel := range jitterLevels {
		jit := rel * meanDiag
		for i := 0; i < m; i++ {
			copy(u[i*m+i:(i+1)*m], c[i*m+i:(i+1)*m])
			u[i*m+i] += jit
		}
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: u}); ok {
			return true
		}
	}
	return false
}

// Condition returns the posterior after one more observation (x, y) with the
// same hyperparameters and the same output scale (so the prior in objective
// units is unchanged), e.g. for constant-liar pending trials. It is
// ConditionAll with one point.
func (g *GP) Condition(x []float64, y float64) (*GP, error) {
	c, err := g.conditionAll([][]float64{x}, []float64{y})
	if err != nil {
		return nil, fmt.Errorf("gp: condition: %w", err)
	}
	return c, nil
}

// ConditionAll returns the posterior after the observations (xs[i], ys[i])
// with the same hyperparameters and output scale, e.g. for the pending
// trials of a constant-liar batch. The result equals
// Fit(X∪xs, y∪ys, Options{Fixed: &h, Output: &s}) with h, s of the receiver,
// and conditioning on the points one at a time. The Cholesky factor is
// extended by a block in O(n²k) (block Cholesky, Golub & Van Loan, Matrix
// Computations, 4th ed., §4.2.9):
//
//	K = [U₁₁ᵀU₁₁, K₁₂; K₂₁, K₂₂]  ⇒  U₁₂ = U₁₁⁻ᵀK₁₂,  U₂₂ᵀU₂₂ = K₂₂ − U₁₂ᵀU₁₂,
//
// with one allocation of the extended factor instead of one per point. If
// the Schur complement K₂₂ − U₁₂ᵀU₁₂ is numerically singular (a point
// duplicates another and the noise is tiny), the whole matrix is refactored
// with a larger jitter. With no points it returns the receiver.
func (g *GP) ConditionAll(xs [][]float64, ys []float64) (*GP, error) {
	c, err := g.conditionAll(xs, ys)
	if err != nil {
		return nil, fmt.Errorf("gp: condition on %d points: %w", len(xs), err)
	}
	return c, nil
}

// ConditionOn implements surrogate.Conditioner with ConditionAll.
func (g *GP) ConditionOn(xs [][]float64, ys []float64) (surrogate.Model, error) {
	return g.ConditionAll(xs, ys)
}

func (g *GP) conditionAll(xs [][]float64, ys []float64) (*GP, error) {
	if len(xs) != len(ys) {
		return nil, fmt.Errorf("%d points but %d values", len(xs), len(ys))
	}
	k := len(xs)
	if k == 0 {
		return g, nil
	}
	d := g.dim
	pe := make([]float64, k*d)
	for i, x := range xs {
		if len(x) != d {
			return nil, &surrogate.DimError{Row: i, Got: len(x), Want: d}
		}
		if math.IsNaN(ys[i]) || math.IsInf(ys[i], 0) {
			return nil, fmt.Errorf("value %d is %v", i, ys[i])
		}
		if err := encodePoint(pe[i*d:(i+1)*d], x, g.levels); err != nil {
			return nil, fmt.Errorf("point %d: %w", i, err)
		}
	}
	return g.grow(pe, append(slices.Clone(g.y), ys...), g.out)
}

// grow returns the GP with g's hyperparameters conditioned on g's points
// and the k encoded points pe (k×dim, row-major) after them, with the n+k
// observations y standardized by out: g's Cholesky factor extended by a
// block as ConditionAll describes. The factor of K+σ_n²I depends on neither
// y nor out, so new values for g's own points (a refitted output warp, a
// new standardization) leave it valid.
func (g *GP) grow(pe []float64, y []float64, out OutputScale) (*GP, error) {
	n, d := g.n, g.dim
	k := len(pe) / d
	m := n + k
	if len(y) != m {
		return nil, fmt.Errorf("%d values for %d points", len(y), m)
	}
	c := &GP{
		kernel: g.kernel, dim: d, levels: g.levels, cat: g.cat, n: m,
		x: append(slices.Clone(g.x), pe...), y: y,
		out: out, hyper: g.hyper.Clone(), jitter: g.jitter, workers: g.workers, calib: new(calibration),
		minNoise: g.minNoise, prior: g.prior, levelOn: g.levelOn,
	}
	c.met = newMetric(c.hyper.Lengthscales, c.cat)
	ystd := make([]float64, m)
	for i, v := range c.y {
		ystd[i] = (v - c.out.Mean) / c.out.Std
	}
	if k == 0 {
		// The same points: the factor is shared (a GP is immutable).
		c.u = g.u
		c.alpha = slices.Clone(ystd)
		solveUpper(c.u, m, c.alpha)
		c.lml = logLik(c.u, m, ystd, c.alpha)
		c.estimateLevel(ystd)
		return c, nil
	}
	s2 := g.hyper.SignalVariance
	diag := s2 + g.hyper.NoiseVariance + g.jitter
	// Row i of b is k(X, p_i)ᵀU₁₁⁻¹, i.e. column i of U₁₂.
	b := make([]float64, k*n)
	g.crossKernel(b, pe, k)
	g.whiten(b, k)
	// schur = K₂₂ − U₁₂ᵀU₁₂, upper triangle, row-major k×k.
	schur := make([]float64, k*k)
	for i := 0; i < k; i++ {
		pi, bi := pe[i*d:(i+1)*d], b[i*n:(i+1)*n]
		schur[i*k+i] = diag - floats.Dot(bi, bi)
		for j := i + 1; j < k; j++ {
			schur[i*k+j] = s2*g.kernel.corrValue(g.met.r2(pi, pe[j*d:(j+1)*d])) - floats.Dot(bi, b[j*n:(j+1)*n])
		}
	}
	if extendable(schur, k, diag) {
		u := make([]float64, m*m)
		for i := 0; i < n; i++ {
			row := u[i*m : (i+1)*m]
			copy(row[i:n], g.u[i*n+i:(i+1)*n])
			for j := 0; j < k; j++ {
				row[n+j] = b[j*n+i]
			}
		}
		for i := 0; i < k; i++ {
			copy(u[(n+i)*m+n+i:(n+i+1)*m], schur[i*k+i:(i+1)*k])
		}
		c.u = u
		c.alpha = slices.Clone(ystd)
		solveUpper(c.u, m, c.alpha)
		c.lml = logLik(c.u, m, ystd, c.alpha)
		c.estimateLevel(ystd)
		return c, nil
	}
	if err := c.factorize(ystd, math.Max(g.jitter, 1e-10*diag)); err != nil {
		return nil, err
	}
	return c, nil
}

// extendable factors the k×k Schur complement in place (upper Cholesky) and
// reports whether every pivot is safely positive: the square of pivot i is
// the variance left at point i given the data and the points before it, and
// below 1e-12 of the prior's it is rounding error, not information.
func extendable(schur []float64, k int, diag float64) bool {
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: k, Stride: k, Data: schur}); !ok {
		return false
	}
	for i := 0; i < k; i++ {
		if p := schur[i*k+i]; !(p*p > 1e-12*diag) {
			return false
		}
	}
	return true
}
