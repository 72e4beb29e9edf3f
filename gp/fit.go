package gp

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/optimize"

	"xbo/internal/parallel"
)

// problem is the data of one fit in the form the likelihood needs.
type problem struct {
	kernel   Kernel
	n, d     int
	x        []float64 // encoded inputs, n×d
	y        []float64 // standardized outputs
	cat      []bool
	minNoise float64
	prior    LengthscalePrior
	workers  int // goroutines a fit may use (Options.Workers)
	// ctx stops the likelihood optimization between evaluations (FitContext).
	ctx context.Context
}

// cancelled is the error of the fit's context, nil without one.
func (p *problem) cancelled() error {
	if p.ctx == nil {
		return nil
	}
	return p.ctx.Err()
}

// The optimizer works on θ = (log ℓ_1..log ℓ_d, log σ_f², log σ_n²).
func (p *problem) toTheta(h Hyper) []float64 {
	th := make([]float64, p.d+2)
	for j, l := range h.Lengthscales {
		th[j] = math.Log(l)
	}
	th[p.d] = math.Log(h.SignalVariance)
	th[p.d+1] = math.Log(math.Max(h.NoiseVariance, p.minNoise))
	return th
}

func (p *problem) fromTheta(th []float64) Hyper {
	h := Hyper{Lengthscales: make([]float64, p.d)}
	for j := range h.Lengthscales {
		h.Lengthscales[j] = math.Exp(th[j])
	}
	h.SignalVariance = math.Exp(th[p.d])
	h.NoiseVariance = math.Exp(th[p.d+1])
	return h
}

func (p *problem) bounds() (lo, hi []float64) {
	lo = make([]float64, p.d+2)
	hi = make([]float64, p.d+2)
	for j := 0; j < p.d; j++ {
		lo[j], hi[j] = math.Log(minLengthscale), math.Log(maxLengthscale)
	}
	lo[p.d], hi[p.d] = math.Log(minSignal), math.Log(maxSignal)
	lo[p.d+1], hi[p.d+1] = math.Log(p.minNoise), math.Log(maxNoise)
	return lo, hi
}

// defaultHyper is the first start without a warm start. Lengthscales grow
// with √d because typical distances between points of the unit cube do, so
// the prior correlation between random points does not vanish in high d.
func (p *problem) defaultHyper() Hyper {
	h := Hyper{Lengthscales: make([]float64, p.d), SignalVariance: 1, NoiseVariance: math.Max(1e-3, p.minNoise)}
	for j := range h.Lengthscales {
		h.Lengthscales[j] = 0.3 * math.Sqrt(float64(p.d))
	}
	return h
}

// workspace holds the n×n buffers of one likelihood evaluation, so that
// restarts running in parallel do not share memory.
type workspace struct {
	p      *problem
	buf    *[]float64 // the pooled memory behind the slices below
	kf     []float64  // upper triangle: σ_f²·g(r_ik)
	hb     []float64  // upper triangle: h(r_ik) = −2 dg/dr²
	fac    []float64  // Cholesky factor, then the inverse (upper triangles)
	inv    []float64  // scratch for the inverse of the Cholesky factor
	alpha  []float64
	invL2  []float64
	gl     []float64 // per-partition gradient sums, lmlParts×(d+2)
	jitter float64
	// parallel lets lml run its partitions on separate goroutines; it is
	// off when restarts already occupy the cores.
	parallel bool
}

// workspacePool and kernelPool recycle the buffers of workspaces and of
// factorize's kernel matrix: a fit at n = 200 needs four 320 kB matrices
// per start goroutine, and allocating them for every Ask made the garbage
// collector run about twice per proposal, each time pausing the service's
// handlers too.
var workspacePool, kernelPool bufferPool

// newWorkspace returns a zeroed workspace; release hands its memory back.
func (p *problem) newWorkspace() *workspace {
	n, d := p.n, p.d
	buf := workspacePool.get(4*n*n+n+d+lmlParts*(d+2), true)
	b := *buf
	carve := func(size int) []float64 {
		s := b[:size:size]
		b = b[size:]
		return s
	}
	return &workspace{
		p:     p,
		buf:   buf,
		kf:    carve(n * n),
		hb:    carve(n * n),
		fac:   carve(n * n),
		inv:   carve(n * n),
		alpha: carve(n),
		invL2: carve(d),
		gl:    carve(lmlParts * (d + 2)),
	}
}

// release returns w's memory to the pool; w must not be used afterwards.
func (w *workspace) release() {
	if w.buf != nil {
		workspacePool.put(w.buf)
		*w = workspace{}
	}
}

// jitterLevels are tried in turn, relative to the mean diagonal of K+σ_n²I,
// when a Cholesky factorization fails (near-duplicate points, tiny noise).
var jitterLevels = []float64{0, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4}

var errNotPD = errors.New("covariance matrix is not positive definite even with jitter 1e-4 of its diagonal")

// factorUpper copies the upper triangle of k (n×n, diagonal ignored) into
// fac, sets the diagonal to diag plus a jitter and factors it in place. On
// failure the jitter escalates (from minJitter) through jitterLevels. It
// returns the absolute jitter used; k is left untouched.
func factorUpper(fac, k []float64, n int, diag, minJitter float64) (float64, error) {
	tries := make([]float64, 0, len(jitterLevels)+1)
	if minJitter > 0 {
		tries = append(tries, minJitter)
	}
	for _, rel := range jitterLevels {
		if rel*diag > minJitter || (minJitter == 0 && rel == 0) {
			tries = append(tries, rel*diag)
		}
	}
	for _, jit := range tries {
		for i := 0; i < n; i++ {
			copy(fac[i*n+i+1:(i+1)*n], k[i*n+i+1:(i+1)*n])
			fac[i*n+i] = diag + jit
		}
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: fac}); ok {
			return jit, nil
		}
	}
	return 0, errNotPD
}

// solveUpper overwrites b with (UᵀU)⁻¹b for the upper factor U in u.
func solveUpper(u []float64, n int, b []float64) {
	t := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: u}
	v := blas64.Vector{N: n, Inc: 1, Data: b}
	blas64.Trsv(blas.Trans, t, v)
	blas64.Trsv(blas.NoTrans, t, v)
}

// logLik returns log N(y | 0, UᵀU) given α = (UᵀU)⁻¹y.
func logLik(u []float64, n int, y, alpha []float64) float64 {
	l := -0.5 * float64(n) * math.Log(2*math.Pi)
	for i := 0; i < n; i++ {
		l -= 0.5*y[i]*alpha[i] + math.Log(u[i*n+i])
	}
	return l
}

// lmlParts is the fixed number of interleaved row partitions of the O(n²·d)
// loops of lml. Partial sums are combined in partition order, so results are
// bitwise identical whether the partitions run on one goroutine or several.
const lmlParts = 2

// partition runs f(part) for every partition, concurrently when the
// workspace may use more than one core.
func (w *workspace) partition(f func(part int)) {
	if !w.parallel {
		for part := range lmlParts {
			f(part)
		}
		return
	}
	var wg sync.WaitGroup
	for part := 1; part < lmlParts; part++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(part)
		}()
	}
	f(0)
	wg.Wait()
}

// lml evaluates the log marginal likelihood at θ and, if grad is non-nil,
// its gradient with respect to θ (R&W eq. 5.9):
//
//	∂/∂θ = ½ Σ_ik W_ik ∂K_ik/∂θ,  W = ααᵀ − (K+σ_n²I)⁻¹,
//	∂K_ik/∂log ℓ_j = σ_f² h(r_ik) r_ik,j²,  ∂K_ik/∂log σ_f² = K_ik,  ∂K_ii/∂log σ_n² = σ_n².
func (w *workspace) lml(theta, grad []float64) (float64, error) {
	p := w.p
	n, d := p.n, p.d
	for j := 0; j < d; j++ {
		w.invL2[j] = math.Exp(-2 * theta[j])
	}
	s2 := math.Exp(theta[d])
	noise := math.Exp(theta[d+1])
	met := metric{invL2: w.invL2, cat: p.cat, anyCat: slices.Contains(p.cat, true)}
	x := p.x
	w.partition(func(part int) {
		for i := part; i < n; i += lmlParts {
			xi := x[i*d : (i+1)*d]
			w.kf[i*n+i] = s2
			w.hb[i*n+i] = 0
			for k := i + 1; k < n; k++ {
				g, h := p.kernel.corr(met.r2(xi, x[k*d:(k+1)*d]))
				w.kf[i*n+k] = s2 * g
				w.hb[i*n+k] = h
			}
		}
	})
	jit, err := factorUpper(w.fac, w.kf, n, s2+noise, 0)
	if err != nil {
		return math.Inf(-1), err
	}
	w.jitter = jit
	copy(w.alpha, p.y)
	solveUpper(w.fac, n, w.alpha)
	l := logLik(w.fac, n, p.y, w.alpha)
	if grad == nil {
		return l, nil
	}
	// The factor is no longer needed: its buffer takes (K+σ_n²I)⁻¹.
	inverseFromFactor(w.fac, w.inv, w.fac, n, func(f func(part, parts int)) {
		w.partition(func(part int) { f(part, lmlParts) })
	})
	inv := w.fac
	w.partition(func(part int) {
		gl := w.gl[part*(d+2) : (part+1)*(d+2)]
		clear(gl)
		var gs2, gnoise float64
		for i := part; i < n; i += lmlParts {
			ai := w.alpha[i]
			wii := ai*ai - inv[i*n+i]
			gs2 += 0.5 * wii * s2
			gnoise += 0.5 * wii * noise
			xi := x[i*d : (i+1)*d]
			krow := w.kf[i*n : (i+1)*n]
			hrow := w.hb[i*n : (i+1)*n]
			irow := inv[i*n : (i+1)*n]
			for k := i + 1; k < n; k++ {
				wik := ai*w.alpha[k] - irow[k]
				gs2 += wik * krow[k]
				t := wik * s2 * hrow[k]
				xk := x[k*d : (k+1)*d]
				if met.anyCat {
					for j, a := range xi {
						dl := a - xk[j]
						if p.cat[j] {
							if dl != 0 {
								gl[j] += t
							}
						} else {
							gl[j] += t * dl * dl
						}
					}
				} else {
					for j, a := range xi {
						dl := a - xk[j]
						gl[j] += t * dl * dl
					}
				}
			}
		}
		gl[d], gl[d+1] = gs2, gnoise
	})
	clear(grad)
	for part := range lmlParts {
		for j, v := range w.gl[part*(d+2) : (part+1)*(d+2)] {
			grad[j] += v
		}
	}
	for j := 0; j < d; j++ {
		grad[j] *= w.invL2[j]
	}
	return l, nil
}

// objective is what L-BFGS minimizes: −LML/n plus a quadratic penalty on the
// distance of θ to the box of bounds. The penalty keeps the objective C¹ (a
// clamp would put a kink at the bound where L-BFGS zig-zags when an optimum
// lies on it, typically the noise floor); the optimum overshoots the bound by
// O(|∂LML/∂θ|/(n·penalty)) and is clamped afterwards. θ is additionally
// clamped to a box boundSlack wider, so a wild line-search step never
// evaluates the likelihood at meaningless values. The gradient computed with
// each value is cached, because gonum asks for both at the same point.
type objective struct {
	w       *workspace
	lo, hi  []float64
	clamped []float64
	rawGrad []float64
	lastX   []float64
	lastF   float64
	lastG   []float64
	bestX   []float64
	bestF   float64
	evals   int
}

const (
	boundPenalty = 10.0
	boundSlack   = 3.0
)

func newObjective(w *workspace, lo, hi []float64) *objective {
	m := len(lo)
	return &objective{
		w: w, lo: lo, hi: hi,
		clamped: make([]float64, m), rawGrad: make([]float64, m),
		lastG: make([]float64, m), bestX: make([]float64, m), bestF: math.Inf(1),
	}
}

func (o *objective) eval(x []float64) {
	if o.lastX != nil && slices.Equal(o.lastX, x) {
		return
	}
	o.evals++
	o.lastX = append(o.lastX[:0], x...)
	pen := 0.0
	for j, v := range x {
		o.clamped[j] = math.Min(math.Max(v, o.lo[j]-boundSlack), o.hi[j]+boundSlack)
		if e := excess(v, o.lo[j], o.hi[j]); e != 0 {
			pen += boundPenalty * e * e
		}
	}
	n := float64(o.w.p.n)
	l, err := o.w.lml(o.clamped, o.rawGrad)
	if err != nil || math.IsNaN(l) {
		o.lastF = math.Inf(1)
		clear(o.lastG)
		return
	}
	o.lastF = -l/n + pen
	for j, v := range x {
		o.lastG[j] = 2 * boundPenalty * excess(v, o.lo[j], o.hi[j])
		if v == o.clamped[j] {
			o.lastG[j] -= o.rawGrad[j] / n
		}
	}
	if p := o.w.p; p.prior != NoPrior {
		for j := 0; j < p.d; j++ {
			if !p.cat[j] {
				f, g := p.prior.negLog(o.clamped[j], p.d)
				o.lastF += f / n
				if x[j] == o.clamped[j] {
					o.lastG[j] += g / n
				}
			}
		}
		f, g := signalNegLog(o.clamped[p.d])
		o.lastF += f / n
		if x[p.d] == o.clamped[p.d] {
			o.lastG[p.d] += g / n
		}
	}
	if o.lastF < o.bestF {
		o.bestF = o.lastF
		copy(o.bestX, o.clamped)
	}
}

// excess is the signed distance of v outside [lo, hi] (0 inside).
func excess(v, lo, hi float64) float64 {
	switch {
	case v < lo:
		return v - lo
	case v > hi:
		return v - hi
	}
	return 0
}

func (o *objective) problem() optimize.Problem {
	return optimize.Problem{
		Func: func(x []float64) float64 {
			o.eval(x)
			return o.lastF
		},
		Grad: func(g, x []float64) {
			o.eval(x)
			copy(g, o.lastG)
		},
	}
}

// optimizerSettings stop when −LML/n improves by less than 1e-6 for two
// iterations (1e-6·n in log likelihood: far below anything that changes a
// prediction) or its gradient is below 1e-4 per point. Tighter tolerances
// triple the evaluations for gains in the fifth digit of the likelihood.
//
// A warm start (the previous fit's optimum, with one observation more) begins
// next to the new optimum, so one iteration gaining less than 1e-6·n nats
// already means convergence: on the T = 200, d = 6 benchmark data this stops
// after 4 evaluations instead of 7, 2e-4 nats short of the longer run. A
// random start may cross a plateau where one small gain does not mean
// convergence, so it needs two.
func optimizerSettings(warm bool) *optimize.Settings {
	iterations := 2
	if warm {
		iterations = 1
	}
	return &optimize.Settings{
		GradientThreshold: 1e-4,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-6, Iterations: iterations},
		MajorIterations:   200,
		FuncEvaluations:   300,
	}
}

// contextRecorder stops an L-BFGS run once its context is done: gonum's
// optimizer calls Record after every operation and stops on an error.
type contextRecorder struct{ ctx context.Context }

func (contextRecorder) Init() error { return nil }

func (r contextRecorder) Record(*optimize.Location, optimize.Operation, *optimize.Stats) error {
	return r.ctx.Err()
}

type startResult struct {
	theta []float64
	f     float64
}

// screenSize is the number of observations above which random starts are
// screened on a random subset before one is refined on all the data.
const screenSize = 256

// fitHyper maximizes the marginal likelihood from opt.Restarts starts: the
// first at Init (or defaultHyper), the others drawn at random with opt.Seed.
// Runs go in parallel on up to two goroutines, each with its own n×n
// buffers, and the result does not depend on the scheduling.
//
// With more than screenSize observations a run costs O(n³) per evaluation,
// so the random starts are first optimized on a random subset of screenSize
// observations (about (n/256)³ times cheaper); the best of them is then
// refined on all the data, alongside the warm start Init if there is one
// (which is never screened), and the better full-data optimum wins.
func (p *problem) fitHyper(opt Options) (Hyper, error) {
	lo, hi := p.bounds()
	clampTheta := func(th []float64) []float64 {
		for j := range th {
			th[j] = math.Min(math.Max(th[j], lo[j]), hi[j])
		}
		return th
	}
	first := p.defaultHyper()
	if opt.Init != nil {
		first = *opt.Init
	}
	starts := make([][]float64, opt.Restarts)
	starts[0] = clampTheta(p.toTheta(first))
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))
	uniform := func(a, b float64) float64 { return a + (b-a)*rng.Float64() }
	for s := 1; s < len(starts); s++ {
		th := make([]float64, p.d+2)
		for j := 0; j < p.d; j++ {
			th[j] = uniform(math.Log(0.05), math.Log(5))
		}
		th[p.d] = uniform(math.Log(0.3), math.Log(3))
		th[p.d+1] = uniform(math.Log(1e-5), math.Log(1e-1))
		starts[s] = clampTheta(th)
	}

	if p.n > screenSize && len(starts) > 1 {
		// A warm start is kept for the full data as given; a default start
		// is screened like the random ones.
		keep, screen := starts[:1], starts[1:]
		if opt.Init == nil {
			keep, screen = nil, starts
		}
		sub := p.subset(rng.Perm(p.n)[:screenSize])
		screened := sub.runStarts(screen, lo, hi, false)
		if b := bestResult(screened); b >= 0 {
			keep = append(keep, clampTheta(screened[b].theta))
		}
		if len(keep) == 0 {
			keep = starts[:1]
		}
		starts = keep
	}
	results := p.runStarts(starts, lo, hi, opt.Init != nil)
	if err := p.cancelled(); err != nil {
		return Hyper{}, err
	}
	best := bestResult(results)
	if best < 0 {
		return Hyper{}, errors.New("marginal likelihood could not be evaluated at any start: " + errNotPD.Error())
	}
	return p.fromTheta(clampTheta(results[best].theta)), nil
}

// bestResult is the index of the lowest finite objective, or −1.
func bestResult(results []startResult) int {
	best := -1
	for s, r := range results {
		if r.f < math.Inf(1) && (best < 0 || r.f < results[best].f) {
			best = s
		}
	}
	return best
}

// subset is the problem restricted to the observations idx (sorted so the
// result does not depend on the permutation's order).
func (p *problem) subset(idx []int) *problem {
	idx = slices.Clone(idx)
	slices.Sort(idx)
	q := *p
	q.n = len(idx)
	q.x = make([]float64, 0, q.n*p.d)
	q.y = make([]float64, 0, q.n)
	for _, i := range idx {
		q.x = append(q.x, p.x[i*p.d:(i+1)*p.d]...)
		q.y = append(q.y, p.y[i])
	}
	return &q
}

// runStarts runs L-BFGS from every start on up to two goroutines; with
// warmFirst, starts[0] is a warm start (see optimizerSettings).
func (p *problem) runStarts(starts [][]float64, lo, hi []float64, warmFirst bool) []startResult {
	results := make([]startResult, len(starts))
	// One start at a time splits each likelihood evaluation instead.
	split := parallel.Workers(len(starts), p.workers) == 1 && parallel.Workers(lmlParts, p.workers) > 1
	var mu sync.Mutex
	var used []*workspace
	parallel.Run(len(starts), p.workers, func() func(int) {
		w := p.newWorkspace()
		w.parallel = split
		mu.Lock()
		used = append(used, w)
		mu.Unlock()
		return func(s int) { results[s] = runStart(w, lo, hi, starts[s], warmFirst && s == 0) }
	})
	for _, w := range used {
		w.release()
	}
	return results
}

func runStart(w *workspace, lo, hi, theta0 []float64, warm bool) startResult {
	if w.p.cancelled() != nil {
		return startResult{f: math.Inf(1)}
	}
	o := newObjective(w, lo, hi)
	o.eval(theta0)
	if math.IsInf(o.lastF, 1) {
		return startResult{f: math.Inf(1)}
	}
	settings := optimizerSettings(warm)
	if w.p.ctx != nil {
		settings.Recorder = contextRecorder{w.p.ctx}
	}
	// Errors (line-search failures near a flat optimum, evaluation limits,
	// cancellation) are not fatal here: the best point evaluated is kept,
	// and fitHyper reports a cancelled context itself.
	_, _ = optimize.Minimize(o.problem(), slices.Clone(theta0), settings,
		&optimize.LBFGS{Linesearcher: &optimize.MoreThuente{}})
	return startResult{theta: slices.Clone(o.bestX), f: o.bestF}
}

// factorize builds K+σ_n²I at the GP's hyperparameters, factors it (jitter at
// least minJitter) and computes α and the log marginal likelihood.
func (g *GP) factorize(ystd []float64, minJitter float64) error {
	n, d := g.n, g.dim
	s2 := g.hyper.SignalVariance
	kbuf := kernelPool.get(n*n, false)
	defer kernelPool.put(kbuf)
	k := *kbuf
	for i := 0; i < n; i++ {
		xi := g.x[i*d : (i+1)*d]
		k[i*n+i] = s2
		for j := i + 1; j < n; j++ {
			k[i*n+j] = s2 * g.kernel.corrValue(g.met.r2(xi, g.x[j*d:(j+1)*d]))
		}
	}
	u := make([]float64, n*n)
	jit, err := factorUpper(u, k, n, s2+g.hyper.NoiseVariance, minJitter)
	if err != nil {
		return err
	}
	g.jitter = jit
	g.u = u
	g.alpha = slices.Clone(ystd)
	solveUpper(g.u, n, g.alpha)
	g.lml = logLik(g.u, n, ystd, g.alpha)
	g.estimateLevel(ystd)
	return nil
}
