package acq

// EIG_PDP: the expected information gain of an evaluation about partial
// dependence (Moosbauer, Casalicchio, Lindauer & Bischl, "Improving accuracy
// of interpretability measures in hyperparameter optimization via Bayesian
// algorithm execution", 2022, section 4.1, eq. 2–4).
//
// The PD algorithm (Algorithm 1 of that paper) evaluates the surrogate on its
// execution path, the n·G points (λ_S^g, λ_R^i), and outputs the G averages
// φ_g = (1/n) Σ_i c(λ_S^g, λ_R^i). Several hyperparameters of interest use
// the union of their execution paths (its section 4.3), so the output
// is the concatenation φ of all their PD vectors (P = Σ_s G_s values).
//
// Two estimators are offered.
//
// ClosedForm (the default). For a GP with fixed kernel hyperparameters φ is a
// linear functional of f, so (φ, y_x) is jointly Gaussian given the data and
//
//	I(φ; y_x) = −½ log(1 − cᵀ(Σ_φ+ρI)⁻¹c / (ŝ²(x)+σ²)),
//
// with c = Cov(φ, f(x)) = mean_i k̂((g, λ_R^i), x) and Σ_φ = Cov(φ) from the
// posterior covariance k̂. The ridge ρ (Ridge × σ_f², default 1e-6) reads as
// "φ is wanted to a precision of √ρ": it is the information about φ + ε,
// ε ~ N(0, ρI). Without it the joint criterion would chase directions of φ
// that are already known to round-off (for example the grid averages of
// different hyperparameters' PDs, which all estimate the global mean).
// Joint (default) uses the whole φ, the principled reading of "the union of
// execution paths"; Summed adds the per-hyperparameter gains, which counts
// information shared by several PDs more than once.
//
// With the squared-exponential kernel the n-point averages factor over
// coordinates, k(a, x) = σ_f² Π_j e_j(a_j, x_j), and the path shares one
// Monte Carlo sample λ^i across hyperparameters, so
//
//	mean_i k((g, λ_{−s}^i), x) = σ_f² e_s(g, x_s) · mean_i exp(−Σ_{j≠s} q_j(λ^i_j, x_j))
//
// costs n·d operations per candidate for all G grid values at once, and the
// prior Cov(φ) needs one pass over the n² sample pairs per pair of
// hyperparameters. The posterior part uses k̂(a, x) = k(a, x) − k(a, X)K⁻¹k(X, x)
// averaged over i: (mean_i k(a_i, X)) is computed once per training point and
// reused across candidates and iterations.
//
// BAX: the paper's estimator (eq. 3, after Neiswanger, Wang & Ermon 2021):
// H[y_x | D] − mean over n_path sampled execution paths e of H[y_x | D ∪ e],
// the path observed with the model's noise σ² as in BAX's implementation. For
// a Gaussian process with fixed hyperparameters the entropy of y_x given
// D ∪ e depends on the LOCATIONS of e only, and the PD algorithm's locations
// do not depend on f; so all n_path terms are equal and the estimator is
//
//	½ log((ŝ²(x)+σ²) / (ŝ²(x | D ∪ path)+σ²)),
//
// which we compute once (TestBAXSamplesShareEntropy checks the equality on
// conditioned GPs). This is information about every value on the path, not
// about the averages φ, and it needs the (N+T)-point posterior: with
// n = 1000, G = 20 and six hyperparameters the path has 120 000 points, far
// beyond a dense factorization, so the BAX estimator uses the first
// ⌊MaxBAXPath/P⌋ points of the Monte Carlo sample (N ≤ MaxBAXPath, default
// 2000). The closed form has no such limit.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/stat/distuv"

	"xbo/gp"
	"xbo/internal/parallel"
	"xbo/space"
	"xbo/surrogate"
)

// Estimator selects how EIG_PDP is computed.
type Estimator string

// Estimators of EIG_PDP.
const (
	ClosedForm Estimator = "closed-form"
	BAX        Estimator = "bax"
)

// Combination selects how several hyperparameters' PDs enter EIG_PDP.
type Combination string

// Combinations of several PDs.
const (
	Joint  Combination = "joint"
	Summed Combination = "summed"
)

// Defaults of EIG_PDP.
const (
	DefaultPathGrid    = 20   // G
	DefaultPathSamples = 1000 // n
	DefaultRidge       = 1e-6 // ρ relative to σ_f²
	DefaultMaxBAXPath  = 2000 // largest execution path the BAX estimator factorizes
)

// PDPath is the execution path of the PD algorithm for the hyperparameters
// Params: their grids crossed with one Monte Carlo sample of whole
// configurations (the coordinate of the hyperparameter of interest is
// replaced by each grid value). It caches what does not change between
// iterations while the kernel hyperparameters stay the same. Safe for
// concurrent use.
type PDPath struct {
	// Params are the indices of the hyperparameters of interest.
	Params []int
	// Grid holds, per entry of Params, its grid in unit-cube encoding.
	Grid [][]float64
	// Sample is the Monte Carlo sample λ^(i), unit-cube rows.
	Sample [][]float64

	dim    int
	levels []int
	offset []int // offset[k] = first output of Params[k]; offset[len] = P

	mu    sync.Mutex
	cache *pathCache
}

// NewPDPath builds the path on sp for the hyperparameters params (nil: all),
// gridSize grid values each (space.Grid: every level of a categorical) and a
// uniform Monte Carlo sample of n configurations drawn with rng.
// Conditional spaces are not supported: a repaired path point would change
// more than the coordinate of interest, which the factorized averages assume.
func NewPDPath(sp *space.Space, params []int, gridSize, n int, rng *rand.Rand) (*PDPath, error) {
	switch {
	case sp == nil:
		return nil, errors.New("acq: pd path: nil space")
	case rng == nil:
		return nil, errors.New("acq: pd path: nil random generator")
	case sp.Conditional():
		return nil, errors.New("acq: pd path: conditional search spaces are not supported by EIG_PDP")
	case gridSize < 2:
		return nil, fmt.Errorf("acq: pd path: grid size %d, want at least 2", gridSize)
	case n < 1:
		return nil, fmt.Errorf("acq: pd path: Monte Carlo sample size %d, want at least 1", n)
	}
	if params == nil {
		for j := range sp.Dim() {
			params = append(params, j)
		}
	}
	if len(params) == 0 {
		return nil, errors.New("acq: pd path: no hyperparameter of interest")
	}
	p := &PDPath{Params: slices.Clone(params), dim: sp.Dim(), levels: sp.Levels()}
	seen := map[int]bool{}
	for _, j := range params {
		if j < 0 || j >= sp.Dim() {
			return nil, fmt.Errorf("acq: pd path: no parameter #%d", j)
		}
		if seen[j] {
			return nil, fmt.Errorf("acq: pd path: parameter #%d listed twice", j)
		}
		seen[j] = true
		vals, err := sp.Grid(j, gridSize)
		if err != nil {
			return nil, fmt.Errorf("acq: pd path: %w", err)
		}
		g := make([]float64, len(vals))
		for k, v := range vals {
			g[k] = sp.Params[j].ToUnit(v)
		}
		p.Grid = append(p.Grid, g)
	}
	p.Sample = sp.Sample(rng, n)
	p.offset = make([]int, len(params)+1)
	for k := range params {
		p.offset[k+1] = p.offset[k] + len(p.Grid[k])
	}
	return p, nil
}

// Outputs is P, the length of the PD vector φ (all grids concatenated).
func (p *PDPath) Outputs() int { return p.offset[len(p.Params)] }

// Points lists the n path points of output k (grid value g of Params[s],
// k = offset(s) + g): the Monte Carlo sample with that coordinate replaced.
func (p *PDPath) Points(k int) ([][]float64, error) {
	if k < 0 || k >= p.Outputs() {
		return nil, fmt.Errorf("acq: pd path: no output %d of %d", k, p.Outputs())
	}
	s := 0
	for k >= p.offset[s+1] {
		s++
	}
	v := p.Grid[s][k-p.offset[s]]
	out := make([][]float64, len(p.Sample))
	for i, row := range p.Sample {
		r := slices.Clone(row)
		r[p.Params[s]] = v
		out[i] = r
	}
	return out, nil
}

// pathCache holds the prior quantities of one kernel: Cov_prior(φ) and
// mean_i k(path_p, x) of training points seen before.
type pathCache struct {
	halfInv []float64 // 1/(2ℓ_j²)
	signal  float64   // σ_f² (standardized units)
	prior   []float64 // P×P prior covariance of φ, standardized
	rows    map[string][]float64
}

func pointKey(x []float64) string {
	b := make([]byte, 8*len(x))
	for j, v := range x {
		u := math.Float64bits(v)
		for k := range 8 {
			b[8*j+k] = byte(u >> (8 * k))
		}
	}
	return string(b)
}

// metricCoords maps a unit-cube point to the coordinates the GP's metric
// compares (package gp, encodePoint): numeric as is, categorical as the level
// index floor(u·K), −1 when inactive.
func (p *PDPath) metricCoords(dst, u []float64) error {
	if len(u) != p.dim {
		return &surrogate.DimError{Got: len(u), Want: p.dim}
	}
	for j, v := range u {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("coordinate %d is %v", j, v)
		}
		k := p.levels[j]
		switch {
		case k == 0:
			dst[j] = v
		case v < 0:
			dst[j] = -1
		default:
			dst[j] = math.Min(math.Floor(v*float64(k)), float64(k-1))
		}
	}
	return nil
}

// kernelState is the SE kernel of one GP in the PD path's coordinates.
type kernelState struct {
	path    *PDPath
	halfInv []float64
	cat     []bool
	signal  float64
	lam     []float64 // n×d metric coordinates of the sample
	grid    [][]float64
}

func (p *PDPath) newKernelState(h gp.Hyper) (*kernelState, error) {
	if len(h.Lengthscales) != p.dim {
		return nil, fmt.Errorf("model has %d lengthscales, the path %d dimensions", len(h.Lengthscales), p.dim)
	}
	ks := &kernelState{path: p, halfInv: make([]float64, p.dim), cat: make([]bool, p.dim), signal: h.SignalVariance}
	for j, l := range h.Lengthscales {
		ks.halfInv[j] = 1 / (2 * l * l)
		ks.cat[j] = p.levels[j] > 0
	}
	n := len(p.Sample)
	ks.lam = make([]float64, n*p.dim)
	for i, row := range p.Sample {
		if err := p.metricCoords(ks.lam[i*p.dim:(i+1)*p.dim], row); err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
	}
	ks.grid = make([][]float64, len(p.Params))
	tmp := make([]float64, p.dim)
	for s, j := range p.Params {
		ks.grid[s] = make([]float64, len(p.Grid[s]))
		for g, v := range p.Grid[s] {
			u := slices.Clone(p.Sample[0])
			u[j] = v
			if err := p.metricCoords(tmp, u); err != nil {
				return nil, err
			}
			ks.grid[s][g] = tmp[j]
		}
	}
	return ks, nil
}

// q is the exponent contribution of coordinate j: k = σ_f² exp(−Σ_j q_j).
func (ks *kernelState) q(j int, a, b float64) float64 {
	if ks.cat[j] {
		if a != b {
			return ks.halfInv[j]
		}
		return 0
	}
	d := a - b
	return d * d * ks.halfInv[j]
}

// kernel is the prior covariance of two metric-coordinate points.
func (ks *kernelState) kernel(a, b []float64) float64 {
	s := 0.0
	for j := range a {
		s += ks.q(j, a[j], b[j])
	}
	return ks.signal * math.Exp(-s)
}

// kbar writes mean_i k(path_p^i, z) for every output p into out (length P).
// acc must have len(Params) slots.
func (ks *kernelState) kbar(z, out, acc []float64) {
	p := ks.path
	d := p.dim
	n := len(p.Sample)
	for s := range acc {
		acc[s] = 0
	}
	params := p.Params
	var stack [16]float64 // no allocation for the usual small d
	var qv []float64
	if d > len(stack) {
		qv = make([]float64, d)
	} else {
		qv = stack[:d]
	}
	for i := 0; i < n; i++ {
		li := ks.lam[i*d : (i+1)*d]
		total := 0.0
		for j := 0; j < d; j++ {
			qv[j] = ks.q(j, li[j], z[j])
			total += qv[j]
		}
		for s, j := range params {
			acc[s] += math.Exp(-(total - qv[j]))
		}
	}
	inv := ks.signal / float64(n)
	for s, j := range params {
		m := acc[s] * inv
		for g, v := range ks.grid[s] {
			out[p.offset[s]+g] = m * math.Exp(-ks.q(j, v, z[j]))
		}
	}
}

// priorCov computes the P×P prior covariance of φ (standardized units).
func (ks *kernelState) priorCov() []float64 {
	p := ks.path
	d, n, S, P := p.dim, len(p.Sample), len(p.Params), p.Outputs()
	out := make([]float64, P*P)
	type pair struct{ a, b int }
	var pairs []pair
	for a := 0; a < S; a++ {
		for b := a; b < S; b++ {
			pairs = append(pairs, pair{a, b})
		}
	}
	nn := float64(n) * float64(n)
	work := func(pr pair, r []float64) {
		sa, sb := p.Params[pr.a], p.Params[pr.b]
		// r[i*n+i'] = exp(−Σ_{j∉{sa,sb}} q_j(λ^i_j, λ^i'_j)), symmetric.
		for i := 0; i < n; i++ {
			li := ks.lam[i*d : (i+1)*d]
			r[i*n+i] = 1
			for k := i + 1; k < n; k++ {
				lk := ks.lam[k*d : (k+1)*d]
				t := 0.0
				for j := 0; j < d; j++ {
					if j != sa && j != sb {
						t += ks.q(j, li[j], lk[j])
					}
				}
				e := math.Exp(-t)
				r[i*n+k], r[k*n+i] = e, e
			}
		}
		ga, gb := ks.grid[pr.a], ks.grid[pr.b]
		oa, ob := p.offset[pr.a], p.offset[pr.b]
		if pr.a == pr.b {
			sum := 0.0
			for _, v := range r[:n*n] {
				sum += v
			}
			mean := ks.signal * sum / nn
			for g, vg := range ga {
				for h, vh := range ga {
					out[(oa+g)*P+oa+h] = mean * math.Exp(-ks.q(sa, vg, vh))
				}
			}
			return
		}
		// Σ_{i,i'} e_sa(g, λ^i'_sa) · r[i,i'] · e_sb(λ^i_sb, h) as (B ᵀ(R Aᵀ)).
		Ga, Gb := len(ga), len(gb)
		at := make([]float64, n*Ga) // Aᵀ: n×Ga
		bm := make([]float64, n*Gb) // B: n×Gb
		for i := 0; i < n; i++ {
			li := ks.lam[i*d : (i+1)*d]
			for g, v := range ga {
				at[i*Ga+g] = math.Exp(-ks.q(sa, v, li[sa]))
			}
			for h, v := range gb {
				bm[i*Gb+h] = math.Exp(-ks.q(sb, li[sb], v))
			}
		}
		ra := make([]float64, n*Ga)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: n, Cols: n, Stride: n, Data: r},
			blas64.General{Rows: n, Cols: Ga, Stride: Ga, Data: at},
			0, blas64.General{Rows: n, Cols: Ga, Stride: Ga, Data: ra})
		block := make([]float64, Ga*Gb)
		blas64.Gemm(blas.Trans, blas.NoTrans, ks.signal/nn,
			blas64.General{Rows: n, Cols: Ga, Stride: Ga, Data: ra},
			blas64.General{Rows: n, Cols: Gb, Stride: Gb, Data: bm},
			0, blas64.General{Rows: Ga, Cols: Gb, Stride: Gb, Data: block})
		for g := range Ga {
			for h := range Gb {
				out[(oa+g)*P+ob+h] = block[g*Gb+h]
				out[(ob+h)*P+oa+g] = block[g*Gb+h]
			}
		}
	}
	parallel.Run(len(pairs), 0, func() func(int) {
		r := make([]float64, n*n)
		return func(i int) { work(pairs[i], r) }
	})
	return out
}

// state returns the kernel state and the cache for hyperparameters h,
// rebuilding the cache when they changed.
func (p *PDPath) state(h gp.Hyper) (*kernelState, *pathCache, error) {
	ks, err := p.newKernelState(h)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.cache
	if c == nil || c.signal != h.SignalVariance || !slices.Equal(c.halfInv, ks.halfInv) {
		c = &pathCache{halfInv: ks.halfInv, signal: h.SignalVariance, prior: ks.priorCov(), rows: map[string][]float64{}}
		p.cache = c
	}
	return ks, c, nil
}

// kbarRows returns mean_i k(path, x) rows for training inputs (metric
// coordinates), cached by point.
func (p *PDPath) kbarRows(ks *kernelState, c *pathCache, xs [][]float64) [][]float64 {
	P := p.Outputs()
	rows := make([][]float64, len(xs))
	acc := make([]float64, len(p.Params))
	p.mu.Lock()
	defer p.mu.Unlock()
	for t, x := range xs {
		key := pointKey(x)
		if r, ok := c.rows[key]; ok {
			rows[t] = r
			continue
		}
		r := make([]float64, P)
		ks.kbar(x, r, acc)
		c.rows[key] = r
		rows[t] = r
	}
	return rows
}

// EIGPDP is the acquisition EIG_PDP (see the top of this file). Build one per
// model (per iteration); it prepares the posterior quantities on the first
// Score and reuses them for later batches on the same model.
type EIGPDP struct {
	Path *PDPath
	// Inputs are the unit-cube points the model was conditioned on, in any
	// order; needed by the closed form unless the model has an
	// Inputs() [][]float64 method. They are checked against the model's
	// predictive variances.
	Inputs    [][]float64
	Estimator Estimator   // ClosedForm [default] or BAX
	Combine   Combination // Joint [default] or Summed
	// Ridge is ρ/σ_f² for the closed form [DefaultRidge].
	Ridge float64
	// MaxBAXPath bounds the BAX estimator's path length [DefaultMaxBAXPath].
	MaxBAXPath int

	mu       sync.Mutex
	prepared *eigState
}

// Name implements Acquisition.
func (e *EIGPDP) Name() string { return "eig-pdp" }

type inputser interface{ Inputs() [][]float64 }

// eigState is the closed-form posterior state of one model.
type eigState struct {
	model surrogate.Model
	ks    *kernelState
	x     []float64 // T×d metric coordinates of the training inputs
	t     int
	u     []float64 // upper Cholesky factor of K+σ²I (T×T)
	w     []float64 // P×T: mean_i k(path_p, X) U⁻¹
	noise float64   // σ² standardized
	post  []float64 // P×P posterior covariance of φ (standardized)
	// factors[b] is the upper Cholesky factor of the diagonal block
	// [blockStart[b], blockStart[b+1]) of post+ρI: one block per
	// hyperparameter (Summed) or the whole matrix (Joint).
	factors    [][]float64
	blockStart []int
	scale      float64 // output std
}

func (e *EIGPDP) checkPath() error {
	if e.Path == nil {
		return errors.New("no PD path")
	}
	return nil
}

// Score implements Acquisition: EIG_PDP in nats, ≥ 0.
func (e *EIGPDP) Score(m surrogate.Model, x [][]float64, out []float64) error {
	if err := e.score(m, x, out); err != nil {
		return fmt.Errorf("acq: eig-pdp: %w", err)
	}
	return nil
}

func (e *EIGPDP) score(m surrogate.Model, x [][]float64, out []float64) error {
	if err := e.checkPath(); err != nil {
		return err
	}
	if m == nil {
		return errors.New("nil surrogate")
	}
	if len(out) != len(x) {
		return fmt.Errorf("output has %d slots for %d points", len(out), len(x))
	}
	if m.Dim() != e.Path.dim {
		return fmt.Errorf("model has %d dimensions, the path %d", m.Dim(), e.Path.dim)
	}
	if len(x) == 0 {
		return nil
	}
	g, ok := m.(*gp.GP)
	if !ok {
		return fmt.Errorf("EIG_PDP needs a Gaussian-process surrogate, got %T", m)
	}
	switch e.Estimator {
	case "", ClosedForm:
		if g.Kernel() != gp.SquaredExponential {
			return fmt.Errorf("the closed form needs the squared-exponential kernel, the model uses %s (use the BAX estimator)", g.Kernel())
		}
		st, err := e.prepare(g)
		if err != nil {
			return err
		}
		return st.score(x, out)
	case BAX:
		return e.scoreBAX(g, x, out)
	}
	return fmt.Errorf("unknown estimator %q (want %s or %s)", e.Estimator, ClosedForm, BAX)
}

func (e *EIGPDP) prepare(g *gp.GP) (*eigState, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.prepared != nil && e.prepared.model == surrogate.Model(g) {
		return e.prepared, nil
	}
	inputs := e.Inputs
	if in, ok := surrogate.Model(g).(inputser); ok {
		inputs = in.Inputs()
	}
	if len(inputs) != g.Len() {
		return nil, fmt.Errorf("the model is conditioned on %d points but %d inputs were given (pending trials must be included)", g.Len(), len(inputs))
	}
	ridge := e.Ridge
	if ridge == 0 {
		ridge = DefaultRidge
	}
	if ridge < 0 || math.IsNaN(ridge) || math.IsInf(ridge, 0) {
		return nil, fmt.Errorf("ridge %v, want ≥ 0 and finite", ridge)
	}
	combine := e.Combine
	if combine == "" {
		combine = Joint
	}
	if combine != Joint && combine != Summed {
		return nil, fmt.Errorf("unknown combination %q (want %s or %s)", combine, Joint, Summed)
	}
	st, err := newEIGState(e.Path, g, inputs, ridge, combine)
	if err != nil {
		return nil, err
	}
	e.prepared = st
	return st, nil
}

func newEIGState(p *PDPath, g *gp.GP, inputs [][]float64, ridge float64, combine Combination) (*eigState, error) {
	h := g.Hyper()
	ks, cache, err := p.state(h)
	if err != nil {
		return nil, err
	}
	d, T, P := p.dim, len(inputs), p.Outputs()
	st := &eigState{model: g, ks: ks, t: T, noise: h.NoiseVariance, scale: g.OutputScale().Std}
	st.x = make([]float64, T*d)
	xs := make([][]float64, T)
	for t, row := range inputs {
		xs[t] = st.x[t*d : (t+1)*d]
		if err := p.metricCoords(xs[t], row); err != nil {
			return nil, fmt.Errorf("input %d: %w", t, err)
		}
	}
	// K + σ²I with escalating jitter, as package gp does.
	k := make([]float64, T*T)
	for i := 0; i < T; i++ {
		for j := i + 1; j < T; j++ {
			k[i*T+j] = ks.kernel(xs[i], xs[j])
		}
	}
	st.u = make([]float64, T*T)
	diag := h.SignalVariance + h.NoiseVariance
	factored := false
	for _, rel := range []float64{0, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4} {
		for i := 0; i < T; i++ {
			copy(st.u[i*T+i+1:(i+1)*T], k[i*T+i+1:(i+1)*T])
			st.u[i*T+i] = diag * (1 + rel)
		}
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: T, Stride: T, Data: st.u}); ok {
			st.noise = h.NoiseVariance + rel*diag
			factored = true
			break
		}
	}
	if !factored {
		return nil, errors.New("kernel matrix of the inputs is not positive definite")
	}
	rows := p.kbarRows(ks, cache, xs)
	// W = Kbar(P, X) U⁻¹, stored P×T.
	st.w = make([]float64, P*T)
	for t, r := range rows {
		for q := 0; q < P; q++ {
			st.w[q*T+t] = r[q]
		}
	}
	if T > 0 {
		blas64.Trsm(blas.Right, blas.NoTrans, 1,
			blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: T, Stride: T, Data: st.u},
			blas64.General{Rows: P, Cols: T, Stride: T, Data: st.w})
	}
	st.post = slices.Clone(cache.prior)
	if T > 0 {
		blas64.Gemm(blas.NoTrans, blas.Trans, -1,
			blas64.General{Rows: P, Cols: T, Stride: T, Data: st.w},
			blas64.General{Rows: P, Cols: T, Stride: T, Data: st.w},
			1, blas64.General{Rows: P, Cols: P, Stride: P, Data: st.post})
	}
	rho := ridge * h.SignalVariance
	if combine == Joint {
		st.blockStart = []int{0, P}
	} else {
		st.blockStart = slices.Clone(p.offset)
	}
	for b := 0; b+1 < len(st.blockStart); b++ {
		lo, hi := st.blockStart[b], st.blockStart[b+1]
		n := hi - lo
		f := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				f[i*n+j] = st.post[(lo+i)*P+lo+j]
			}
			f[i*n+i] += rho
		}
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: f}); !ok {
			return nil, errors.New("posterior covariance of the PD is not positive definite; increase the ridge")
		}
		st.factors = append(st.factors, f)
	}
	if err := st.checkAgainstModel(g, inputs); err != nil {
		return nil, err
	}
	return st, nil
}

// checkAgainstModel compares the variance our factorization implies with the
// model's own at a few points, so that inputs that do not match the model
// (e.g. pending trials left out) fail loudly instead of scoring garbage.
func (st *eigState) checkAgainstModel(g *gp.GP, inputs [][]float64) error {
	probe := make([][]float64, 0, 4)
	probe = append(probe, st.ks.path.Sample[:min(3, len(st.ks.path.Sample))]...)
	if len(inputs) > 0 {
		probe = append(probe, inputs[len(inputs)-1])
	}
	mean, variance := make([]float64, len(probe)), make([]float64, len(probe))
	if err := g.Predict(probe, mean, variance); err != nil {
		return err
	}
	mine := make([]float64, len(probe))
	if err := st.latentVariance(probe, mine); err != nil {
		return err
	}
	s2 := st.ks.signal * st.scale * st.scale
	for i := range probe {
		if math.Abs(mine[i]*st.scale*st.scale-variance[i]) > 1e-5*s2 {
			return fmt.Errorf("the given inputs do not reproduce the model's posterior (variance %g vs %g): pass every point the model is conditioned on", mine[i]*st.scale*st.scale, variance[i])
		}
	}
	return nil
}

// latentVariance writes ŝ²(x) in standardized units.
func (st *eigState) latentVariance(x [][]float64, out []float64) error {
	d, T := st.ks.path.dim, st.t
	z := make([]float64, d)
	kx := make([]float64, T)
	for i, row := range x {
		if err := st.ks.path.metricCoords(z, row); err != nil {
			return err
		}
		for t := 0; t < T; t++ {
			kx[t] = st.ks.kernel(st.x[t*d:(t+1)*d], z)
		}
		v := st.ks.signal
		if T > 0 {
			blas64.Trsv(blas.Trans, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: T, Stride: T, Data: st.u},
				blas64.Vector{N: T, Inc: 1, Data: kx})
			v -= blas64.Dot(blas64.Vector{N: T, Inc: 1, Data: kx}, blas64.Vector{N: T, Inc: 1, Data: kx})
		}
		out[i] = math.Max(v, 0)
	}
	return nil
}

// eigChunk candidates are processed together so the triangular solves run as
// matrix operations.
const eigChunk = 64

func (st *eigState) score(x [][]float64, out []float64) error {
	p := st.ks.path
	d, T, P := p.dim, st.t, p.Outputs()
	m := len(x)
	z := make([]float64, m*d)
	for i, row := range x {
		if err := p.metricCoords(z[i*d:(i+1)*d], row); err != nil {
			return fmt.Errorf("point %d: %w", i, err)
		}
	}
	chunks := (m + eigChunk - 1) / eigChunk
	parallel.Run(chunks, 0, func() func(int) {
		kc := make([]float64, eigChunk*max(T, 1))
		cv := make([]float64, eigChunk*P)
		acc := make([]float64, len(p.Params))
		return func(c int) {
			lo := c * eigChunk
			hi := min(lo+eigChunk, m)
			st.scoreChunk(z[lo*d:hi*d], hi-lo, kc, cv, acc, out[lo:hi])
		}
	})
	return nil
}

func (st *eigState) scoreChunk(z []float64, m int, kc, cv, acc, out []float64) {
	ks := st.ks
	p := ks.path
	d, T, P := p.dim, st.t, p.Outputs()
	kc = kc[:m*max(T, 1)]
	cv = cv[:m*P]
	for i := 0; i < m; i++ {
		zi := z[i*d : (i+1)*d]
		ks.kbar(zi, cv[i*P:(i+1)*P], acc)
		for t := 0; t < T; t++ {
			kc[i*T+t] = ks.kernel(st.x[t*d:(t+1)*d], zi)
		}
	}
	variance := make([]float64, m)
	for i := range variance {
		variance[i] = ks.signal
	}
	if T > 0 {
		u := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: T, Stride: T, Data: st.u}
		kcm := blas64.General{Rows: m, Cols: T, Stride: T, Data: kc}
		blas64.Trsm(blas.Right, blas.NoTrans, 1, u, kcm)
		for i := 0; i < m; i++ {
			r := kc[i*T : (i+1)*T]
			variance[i] -= blas64.Dot(blas64.Vector{N: T, Inc: 1, Data: r}, blas64.Vector{N: T, Inc: 1, Data: r})
		}
		// c = Kbar(x, P) − (k(x,X)U⁻¹)(Kbar(P,X)U⁻¹)ᵀ
		blas64.Gemm(blas.NoTrans, blas.Trans, -1, kcm,
			blas64.General{Rows: P, Cols: T, Stride: T, Data: st.w},
			1, blas64.General{Rows: m, Cols: P, Stride: P, Data: cv})
	}
	for i := range out {
		out[i] = 0
	}
	for b, f := range st.factors {
		lo, hi := st.blockStart[b], st.blockStart[b+1]
		n := hi - lo
		block := make([]float64, m*n)
		for i := 0; i < m; i++ {
			copy(block[i*n:(i+1)*n], cv[i*P+lo:i*P+hi])
		}
		blas64.Trsm(blas.Right, blas.NoTrans, 1,
			blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: f},
			blas64.General{Rows: m, Cols: n, Stride: n, Data: block})
		for i := 0; i < m; i++ {
			r := block[i*n : (i+1)*n]
			q := blas64.Dot(blas64.Vector{N: n, Inc: 1, Data: r}, blas64.Vector{N: n, Inc: 1, Data: r})
			out[i] += gaussianGain(q, variance[i], st.noise)
		}
	}
}

// gaussianGain is −½ log(1 − q/(v+σ²)): the mutual information between a
// Gaussian vector and a scalar observation with variance v+σ² whose
// explained part is q. By Cauchy–Schwarz q ≤ v; round-off is clamped.
func gaussianGain(q, v, noise float64) float64 {
	tot := math.Max(v, 0) + noise
	if !(tot > 0) || !(q > 0) {
		return 0
	}
	r := q / tot
	if r >= 1 {
		r = 1 - 1e-15
	}
	return -0.5 * math.Log1p(-r)
}

// scoreBAX is the paper's estimator (see the top of the file).
func (e *EIGPDP) scoreBAX(g *gp.GP, x [][]float64, out []float64) error {
	p := e.Path
	maxPath := e.MaxBAXPath
	if maxPath == 0 {
		maxPath = DefaultMaxBAXPath
	}
	if maxPath < 0 {
		return fmt.Errorf("max BAX path %d, want > 0", maxPath)
	}
	P := p.Outputs()
	nb := max(1, min(len(p.Sample), maxPath/P))
	path := make([][]float64, 0, nb*P)
	for s, j := range p.Params {
		for _, v := range p.Grid[s] {
			for i := 0; i < nb; i++ {
				r := slices.Clone(p.Sample[i])
				r[j] = v
				path = append(path, r)
			}
		}
	}
	N := len(path)
	noise := g.NoiseVariance()
	scale := g.OutputScale().Std
	floor := 1e-10 * g.Hyper().SignalVariance * scale * scale
	noise = math.Max(noise, floor)
	cov, err := g.Covariance(path, path)
	if err != nil {
		return err
	}
	raw := cov.RawMatrix()
	u := make([]float64, N*N)
	for i := 0; i < N; i++ {
		copy(u[i*N+i:(i+1)*N], raw.Data[i*raw.Stride+i:i*raw.Stride+N])
		u[i*N+i] += noise
	}
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: N, Stride: N, Data: u}); !ok {
		return errors.New("posterior covariance of the execution path is not positive definite")
	}
	mean, variance := make([]float64, len(x)), make([]float64, len(x))
	if err := g.Predict(x, mean, variance); err != nil {
		return err
	}
	const chunk = 128
	for lo := 0; lo < len(x); lo += chunk {
		hi := min(lo+chunk, len(x))
		c, err := g.Covariance(x[lo:hi], path)
		if err != nil {
			return err
		}
		cr := c.RawMatrix()
		blas64.Trsm(blas.Right, blas.NoTrans, 1,
			blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: N, Stride: N, Data: u}, cr)
		for i := lo; i < hi; i++ {
			r := cr.Data[(i-lo)*cr.Stride : (i-lo)*cr.Stride+N]
			q := blas64.Dot(blas64.Vector{N: N, Inc: 1, Data: r}, blas64.Vector{N: N, Inc: 1, Data: r})
			out[i] = gaussianGain(q, variance[i], noise)
		}
	}
	return nil
}

// PDBands is the posterior of the PD vector φ under a GP: the mean of the
// surrogate's PD on the path and the exact (eq. 4 of Moosbauer et al. 2021,
// "Explaining hyperparameter optimization via partial dependence plots")
// standard deviations, in objective units, one entry per output.
type PDBands struct {
	Mean []float64
	SD   []float64
}

// Bands returns the exact posterior mean and standard deviation of φ for a
// squared-exponential GP conditioned on inputs with values y (the
// observations the model was fitted on, in the same order). With y nil only
// the standard deviations are computed (they do not depend on y).
func (p *PDPath) Bands(g *gp.GP, inputs [][]float64, y []float64) (*PDBands, error) {
	if g == nil {
		return nil, errors.New("acq: pd bands: nil model")
	}
	if y != nil && len(y) != len(inputs) {
		return nil, fmt.Errorf("acq: pd bands: %d inputs and %d values", len(inputs), len(y))
	}
	if g.Kernel() != gp.SquaredExponential {
		return nil, fmt.Errorf("acq: pd bands: need the squared-exponential kernel, got %s", g.Kernel())
	}
	st, err := newEIGState(p, g, inputs, DefaultRidge, Joint)
	if err != nil {
		return nil, fmt.Errorf("acq: pd bands: %w", err)
	}
	P, T := p.Outputs(), st.t
	out := g.OutputScale()
	// mean φ = μ + Std · Kbar(P,X) (K+σ²I)⁻¹ y_std = μ + Std · W · (U⁻ᵀ y_std).
	alpha := make([]float64, T)
	for t, v := range y {
		alpha[t] = (v - out.Mean) / out.Std
	}
	if T > 0 && y != nil {
		blas64.Trsv(blas.Trans, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: T, Stride: T, Data: st.u},
			blas64.Vector{N: T, Inc: 1, Data: alpha})
	}
	b := &PDBands{SD: make([]float64, P)}
	if y != nil {
		b.Mean = make([]float64, P)
	}
	for q := 0; q < P; q++ {
		if y != nil {
			s := 0.0
			for t := 0; t < T; t++ {
				s += st.w[q*T+t] * alpha[t]
			}
			b.Mean[q] = out.Mean + out.Std*s
		}
		b.SD[q] = out.Std * math.Sqrt(math.Max(st.post[q*P+q], 0))
	}
	return b, nil
}

// MeanHalfWidth is the half-width q_{1−α/2}·ŝ of the PD bands averaged over
// every grid point of every hyperparameter of interest (a-BOBAX's criterion,
// Moosbauer et al. 2022, section 4.2 and footnote 4), in objective units.
func (b *PDBands) MeanHalfWidth(alpha float64) (float64, error) {
	if !(alpha > 0 && alpha < 1) {
		return 0, fmt.Errorf("acq: band half-width: alpha %v outside (0, 1)", alpha)
	}
	if len(b.SD) == 0 {
		return 0, errors.New("acq: band half-width: no grid points")
	}
	q := distuv.UnitNormal.Quantile(1 - alpha/2)
	s := 0.0
	for _, v := range b.SD {
		s += v
	}
	return q * s / float64(len(b.SD)), nil
}
