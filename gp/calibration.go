package gp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"xbo/surrogate"
)

// calibration caches a GP's cross-validated variance scales and its
// hyperposterior samples, each computed on first use.
type calibration struct {
	mu     sync.Mutex
	scale  float64 // VarianceScale, once scaled is set
	scaled bool
	// Leave-one-out residuals, their covariance and each dimension's
	// binned excess (Discrepancy), computed on first use.
	looResidual, looCov []float64
	excess              map[int]float64
	hyper               map[[2]uint64][]*GP // HyperposteriorSamples by (n, seed)
}

var (
	_ surrogate.VarianceScaler        = (*GP)(nil)
	_ surrogate.VarianceScaler        = (*Subset)(nil)
	_ surrogate.HyperposteriorSampler = (*GP)(nil)
	_ surrogate.HyperposteriorSampler = (*Subset)(nil)
	_ surrogate.DiscrepancyEstimator  = (*GP)(nil)
	_ surrogate.DiscrepancyEstimator  = (*Subset)(nil)
	_ surrogate.Conditioner           = (*GP)(nil)
	_ surrogate.Conditioner           = (*Subset)(nil)
)

// VarianceScale implements surrogate.VarianceScaler: a cross-validated
// estimate of the factor the posterior covariance of averages should be
// multiplied by. The data are split heldOutSplits times at random into two
// halves; the GP with the same hyperparameters, conditioned on one half,
// predicts the mean of the other half's observations, and
//
//	c = mean over splits of (ȳ_H − μ̄_H)² / (1ᵀK̂_H1/|H|² + σ_n²/|H|),
//
// the squared error of the held-out average standardized by its predicted
// variance (eq. 4 of Moosbauer et al. 2021 for the held-out points, plus their
// noise). It is Bachoc's cross-validation variance estimator (Bachoc 2013,
// "Cross validation and maximum likelihood estimations of hyper-parameters of
// Gaussian processes with model misspecification", Comput. Stat. Data Anal. 66,
// section 2.3) applied to block averages instead of single points: a partial
// dependence is an average, and errors that are correlated over the space
// inflate an average's error beyond what a pointwise check (leave-one-out) sees.
// c ≈ 1 for a well-specified model; c > 1 when the fit is overconfident about
// averages. Fewer than 2·minHeldOut observations give 1.
func (g *GP) VarianceScale() (float64, error) {
	if g.calib == nil {
		return 0, errors.New("gp: variance scale: model was not fitted")
	}
	g.calib.mu.Lock()
	defer g.calib.mu.Unlock()
	if g.calib.scaled {
		return g.calib.scale, nil
	}
	v, err := g.heldOutScale()
	if err != nil {
		return 0, err
	}
	g.calib.scale, g.calib.scaled = v, true
	return v, nil
}

// Held-out average calibration.
const (
	heldOutSplits = 32
	minHeldOut    = 3
	heldOutSeed   = 11
)

// heldOutScale is the mean standardized squared error of the held-out
// half's average over random half splits.
func (g *GP) heldOutScale() (float64, error) {
	n := g.n
	if n < 2*minHeldOut {
		return 1, nil
	}
	rows := g.unitRows()
	opts := g.Options()
	opts.Workers = 1
	rng := rand.New(rand.NewPCG(heldOutSeed, heldOutSeed^0x9e3779b97f4a7c15))
	noise := g.NoiseVariance()
	sum := 0.0
	for range heldOutSplits {
		perm := rng.Perm(n)
		h := n / 2
		held, kept := perm[:h], perm[h:]
		kx, ky := make([][]float64, len(kept)), make([]float64, len(kept))
		for k, i := range kept {
			kx[k], ky[k] = rows[i], g.y[i]
		}
		m, err := fit(context.Background(), kx, ky, opts)
		if err != nil {
			return 0, fmt.Errorf("gp: variance scale: %w", err)
		}
		hx := make([][]float64, len(held))
		for k, i := range held {
			hx[k] = rows[i]
		}
		mu := make([]float64, len(hx))
		if err := m.Mean(hx, mu); err != nil {
			return 0, fmt.Errorf("gp: variance scale: %w", err)
		}
		e := 0.0
		for k, i := range held {
			e += g.y[i] - mu[k]
		}
		e /= float64(len(held))
		av, err := m.AverageVariance(hx)
		if err != nil {
			return 0, fmt.Errorf("gp: variance scale: %w", err)
		}
		v := av + noise/float64(len(held))
		if !(v > 0) {
			return 0, errors.New("gp: variance scale: held-out average has no variance")
		}
		sum += e * e / v
	}
	return sum / heldOutSplits, nil
}

// Discrepancy implements surrogate.DiscrepancyEstimator: the variance of the
// model's systematic error along each of dims that its own posterior does
// not account for, summed over dims, in squared objective units.
//
// For one numeric dimension the data are cut into equal-width bins of about
// five observations (between 2 and discrepancyBins), a categorical one into
// its levels; configurations where the dimension is inactive are left out,
// as a partial dependence on it is taken where it is active. In bin b the
// leave-one-out residuals r_i = [K⁻¹y]_i / [K⁻¹]_ii (Dubrule 1983,
// "Cross validation of kriging in a unique neighbourhood", Math. Geol. 15)
// are averaged to ē_b. Under the model r = D⁻¹K⁻¹y with D = diag(K⁻¹) has
// covariance D⁻¹K⁻¹D⁻¹, so E[ē_b²] = 1ᵀ[D⁻¹K⁻¹D⁻¹]_bb 1 / n_b² exactly,
// noise and posterior uncertainty included; the discrepancy is
//
//	δ² = max(0, Σ_b n_b (ē_b² − E[ē_b²]) / Σ_b n_b),
//
// the mean squared error along the dimension beyond what the model expects:
// a structure shorter than the lengthscales that the fit explained as noise
// (a ripple), or a signal variance the fit underestimated. It is added to a
// calibrated band's variance; a multiplicative factor (VarianceScale) cannot
// widen a posterior that is tight about the wrong smooth function enough.
// The estimate uses the full data the model was fitted to, binned the way a
// partial dependence's grid cuts the dimension; pooled over bins it is an
// average over the dimension, applied at every grid point. Bins weigh by
// their observations: on an optimizer's data a lone exploratory point's
// leave-one-out residual is an extrapolation, far larger than the full
// model's error near it, and equal bin weights let a few such points
// dominate (on Styblinski-Tang d = 3 with 75 BO-EI evaluations the band
// then covered every grid point at 5 times the mean error).
func (g *GP) Discrepancy(dims []int) (float64, error) {
	for k, j := range dims {
		if j < 0 || j >= g.dim || slices.Contains(dims[:k], j) {
			return 0, fmt.Errorf("gp: discrepancy: dimension %d out of range or repeated", j)
		}
	}
	if g.calib == nil {
		return 0, errors.New("gp: discrepancy: model was not fitted")
	}
	g.calib.mu.Lock()
	defer g.calib.mu.Unlock()
	// The residuals and their covariance (an O(n³) inverse) serve every
	// dimension; each dimension's excess is kept for the next PDP.
	if err := g.cacheLOO(); err != nil {
		return 0, fmt.Errorf("gp: discrepancy: %w", err)
	}
	total := 0.0
	for _, j := range dims {
		e, ok := g.calib.excess[j]
		if !ok {
			e = g.binnedExcess(j, g.calib.looResidual, g.calib.looCov)
			g.calib.excess[j] = e
		}
		total += e
	}
	total *= g.out.Std * g.out.Std
	if math.IsNaN(total) || math.IsInf(total, 0) {
		return 0, fmt.Errorf("gp: discrepancy is %v", total)
	}
	return total, nil
}

// discrepancyBins bounds the bins per numeric dimension (the default PDP
// grid has 20 points); discrepancyPerBin is the observations aimed at per
// bin.
const (
	discrepancyBins   = 20
	discrepancyPerBin = 5
)

// looResiduals returns the leave-one-out residuals in standardized units and
// their covariance under the model, D⁻¹K⁻¹D⁻¹ (n×n row-major).
func (g *GP) looResiduals() ([]float64, []float64, error) {
	n := g.n
	if n == 0 {
		return nil, nil, errors.New("no observations")
	}
	// K⁻¹ from the Cholesky factor, upper triangle (the likelihood's
	// gradient computes it the same way), on up to the GP's workers.
	scratch, kinv := make([]float64, n*n), make([]float64, n*n)
	workers := max(1, min(g.workers, 4))
	inverseFromFactor(g.u, scratch, kinv, n, func(f func(part, parts int)) {
		var wg sync.WaitGroup
		for part := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(part, workers)
			}()
		}
		wg.Wait()
	})
	at := func(i, j int) float64 {
		if i > j {
			i, j = j, i
		}
		return kinv[i*n+j]
	}
	residual := make([]float64, n)
	for i := range n {
		d := at(i, i)
		if !(d > 0) {
			return nil, nil, fmt.Errorf("precision %v at observation %d", d, i)
		}
		residual[i] = g.alpha[i] / d
	}
	cov := make([]float64, n*n)
	for i := range n {
		for j := range n {
			cov[i*n+j] = at(i, j) / (at(i, i) * at(j, j))
		}
	}
	return residual, cov, nil
}

// binnedExcess is the mean over the bins of dimension j, weighted by their
// observations, of the squared mean residual beyond its expectation under
// the model, at least 0.
func (g *GP) binnedExcess(j int, residual, cov []float64) float64 {
	n := g.n
	bins := min(discrepancyBins, max(2, n/discrepancyPerBin))
	groups := map[int][]int{}
	for i := range n {
		v := g.x[i*g.dim+j] // encoded: level index, −1 inactive, or the unit value
		switch {
		case v < 0:
			continue
		case g.levels[j] > 0:
			groups[int(v)] = append(groups[int(v)], i)
		default:
			b := min(int(v*float64(bins)), bins-1)
			groups[b] = append(groups[b], i)
		}
	}
	if len(groups) == 0 {
		return 0
	}
	// The bins are summed in a fixed order (a map's is random), so that the
	// same data give the same bits on every surface.
	sum, count := 0.0, 0.0
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		members := groups[key]
		m := float64(len(members))
		e, expect := 0.0, 0.0
		for _, a := range members {
			e += residual[a]
			for _, b := range members {
				expect += cov[a*n+b]
			}
		}
		e /= m
		sum += m * (e*e - expect/(m*m))
		count += m
	}
	return max(0, sum/count)
}

// unitRows decodes the stored inputs back to unit-cube rows that Fit and
// Predict accept: a categorical level k of K at (k+½)/K, inactive as −1.
func (g *GP) unitRows() [][]float64 {
	rows := make([][]float64, g.n)
	for i := range rows {
		r := slices.Clone(g.x[i*g.dim : (i+1)*g.dim])
		for j, k := range g.levels {
			if k > 0 && r[j] >= 0 {
				r[j] = (r[j] + 0.5) / float64(k)
			}
		}
		rows[i] = r
	}
	return rows
}

// Discrepancy is the variance part's (see GP.Discrepancy).
func (s *Subset) Discrepancy(dims []int) (float64, error) { return s.variance.Discrepancy(dims) }

// VarianceScale is the variance part's leave-one-out scale (see
// GP.VarianceScale): the part every variance of a Subset comes from.
func (s *Subset) VarianceScale() (float64, error) { return s.variance.VarianceScale() }

// Laplace approximation of the hyperparameter posterior.
const (
	// hessianStep is the central-difference step in log units.
	hessianStep = 1e-4
	// maxLogSD bounds the posterior sd of any log hyperparameter direction
	// (a factor e² ≈ 7.4): a flat likelihood direction would otherwise get
	// an unbounded spread; samples are also clamped to the fit's bounds.
	maxLogSD = 2.0
)

// HyperposteriorSamples returns n GPs on the same observations whose
// hyperparameters are drawn from the Laplace approximation of their
// posterior under a flat prior on the log hyperparameters (MacKay 1992,
// "A practical Bayesian framework for backpropagation networks", Neural
// Comput. 4(3); R&W §5.2): θ ~ N(θ̂, H⁻¹) with θ̂ the fitted log
// hyperparameters and H the Hessian of the negative log marginal likelihood
// there, by central differences of its analytic gradient (R&W eq. 5.9).
// Eigenvalues of H are floored at 1/maxLogSD², and samples are clamped to
// the fit's bounds. A prediction averaged over the samples carries the
// hyperparameters' uncertainty that the maximum-likelihood model leaves out
// (Moosbauer et al. 2021, appendix A.2). A GP of constant data, fitted without
// hyperparameters, gives n copies of itself.
func (g *GP) HyperposteriorSamples(n int, seed uint64) ([]*GP, error) {
	if n < 1 || n > 1000 {
		return nil, fmt.Errorf("gp: hyperposterior samples: %d, want 1..1000", n)
	}
	if g.calib == nil {
		return nil, errors.New("gp: hyperposterior samples: model was not fitted")
	}
	// Cached: every PDP of a model asks for the same samples.
	key := [2]uint64{uint64(n), seed}
	g.calib.mu.Lock()
	defer g.calib.mu.Unlock()
	if s, ok := g.calib.hyper[key]; ok {
		return slices.Clone(s), nil
	}
	s, err := g.hyperposteriorSamples(n, seed)
	if err != nil {
		return nil, err
	}
	if g.calib.hyper == nil {
		g.calib.hyper = map[[2]uint64][]*GP{}
	}
	g.calib.hyper[key] = s
	return slices.Clone(s), nil
}

func (g *GP) hyperposteriorSamples(n int, seed uint64) ([]*GP, error) {
	ystd := g.standardized()
	minNoise := g.minNoise
	if minNoise == 0 {
		minNoise = DefaultMinNoise
	}
	p := &problem{kernel: g.kernel, n: g.n, d: g.dim, x: g.x, y: ystd, cat: g.cat, minNoise: minNoise, prior: g.prior, workers: 1}
	k := g.dim + 2
	theta := p.toTheta(g.hyper)
	lo, hi := p.bounds()
	hess, err := p.negLMLHessian(theta)
	if err != nil {
		return nil, fmt.Errorf("gp: hyperposterior samples: %w", err)
	}
	var eig mat.EigenSym
	if !eig.Factorize(hess, true) {
		return nil, errors.New("gp: hyperposterior samples: eigen decomposition of the Hessian failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	// sd along eigenvector e is 1/√λ, at most maxLogSD.
	sd := make([]float64, k)
	for e, l := range vals {
		sd[e] = maxLogSD
		if l > 1/(maxLogSD*maxLogSD) && !math.IsInf(l, 0) && !math.IsNaN(l) {
			sd[e] = 1 / math.Sqrt(l)
		}
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))
	out := make([]*GP, 0, n)
	z := make([]float64, k)
	for range n {
		for e := range z {
			z[e] = rng.NormFloat64() * sd[e]
		}
		th := slices.Clone(theta)
		for j := range k {
			for e := range k {
				th[j] += vecs.At(j, e) * z[e]
			}
			th[j] = math.Min(math.Max(th[j], lo[j]), hi[j])
		}
		s, err := g.withHyper(p.fromTheta(th), ystd)
		if err != nil {
			return nil, fmt.Errorf("gp: hyperposterior samples: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// negLMLHessian is the Hessian of the negative log marginal likelihood at
// theta, by central differences of its analytic gradient, symmetrized.
func (p *problem) negLMLHessian(theta []float64) (*mat.SymDense, error) {
	k := len(theta)
	w := p.newWorkspace()
	defer w.release()
	cols := make([][]float64, k)
	gp, gm := make([]float64, k), make([]float64, k)
	step := slices.Clone(theta)
	for j := range k {
		step[j] = theta[j] + hessianStep
		if _, err := w.lml(step, gp); err != nil {
			return nil, err
		}
		step[j] = theta[j] - hessianStep
		if _, err := w.lml(step, gm); err != nil {
			return nil, err
		}
		step[j] = theta[j]
		cols[j] = make([]float64, k)
		for i := range k {
			cols[j][i] = -(gp[i] - gm[i]) / (2 * hessianStep)
		}
	}
	hess := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			hess.SetSym(i, j, 0.5*(cols[j][i]+cols[i][j]))
		}
	}
	return hess, nil
}

// withHyper is g's data conditioned under other hyperparameters.
func (g *GP) withHyper(h Hyper, ystd []float64) (*GP, error) {
	s := &GP{
		kernel: g.kernel, dim: g.dim, levels: g.levels, cat: g.cat, n: g.n,
		x: g.x, y: g.y, out: g.out, hyper: h, met: newMetric(h.Lengthscales, g.cat),
		workers: g.workers, calib: new(calibration), minNoise: g.minNoise, prior: g.prior, levelOn: g.levelOn,
	}
	if err := s.factorize(ystd, 0); err != nil {
		return nil, err
	}
	return s, nil
}

// HyperposteriorModels implements surrogate.HyperposteriorSampler.
func (g *GP) HyperposteriorModels(n int, seed uint64) ([]surrogate.Model, error) {
	gs, err := g.HyperposteriorSamples(n, seed)
	if err != nil {
		return nil, err
	}
	ms := make([]surrogate.Model, len(gs))
	for i, s := range gs {
		ms[i] = s
	}
	return ms, nil
}

// HyperposteriorModels draws the variance part's hyperposterior samples:
// the part whose data the hyperparameters were fitted on.
func (s *Subset) HyperposteriorModels(n int, seed uint64) ([]surrogate.Model, error) {
	return s.variance.HyperposteriorModels(n, seed)
}
