package gp

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// LeaveOneOut returns, for every observation i, the mean and variance in
// objective units of its predictive distribution given all the other
// observations at the same hyperparameters (R&W eq. 5.12; Dubrule 1983,
// "Cross validation of kriging in a unique neighbourhood", Math. Geol. 15):
//
//	μ₋ᵢ = yᵢ − [K⁻¹y]ᵢ/[K⁻¹]ᵢᵢ,  σ²₋ᵢ = 1/[K⁻¹]ᵢᵢ,  K = K_f + σ_n²I,
//
// so σ²₋ᵢ includes the observation noise: it is the distribution of a new
// observation at xᵢ, the one a predictive check compares yᵢ with. It costs
// one O(n³) inverse, shared with Discrepancy.
func (g *GP) LeaveOneOut() (mean, variance []float64, err error) {
	if g.calib == nil {
		return nil, nil, errors.New("gp: leave-one-out: model was not fitted")
	}
	g.calib.mu.Lock()
	defer g.calib.mu.Unlock()
	if err := g.cacheLOO(); err != nil {
		return nil, nil, fmt.Errorf("gp: leave-one-out: %w", err)
	}
	n := g.n
	mean, variance = make([]float64, n), make([]float64, n)
	s := g.out.Std
	for i := range n {
		mean[i] = g.y[i] - s*g.calib.looResidual[i]
		variance[i] = s * s * g.calib.looCov[i*n+i]
	}
	return mean, variance, nil
}

// cacheLOO computes the leave-one-out residuals and their covariance once;
// the caller holds g.calib.mu.
func (g *GP) cacheLOO() error {
	if g.calib.looResidual != nil {
		return nil
	}
	residual, cov, err := g.looResiduals()
	if err != nil {
		return err
	}
	g.calib.looResidual, g.calib.looCov = residual, cov
	g.calib.excess = map[int]float64{}
	return nil
}

// LeaveOneOut returns, for each of the n observations x, y the Subset was
// fitted to (in the same order), the mean and variance in objective units
// of a prediction that did not see it: the mean part's leave-one-out
// prediction (GP.LeaveOneOut) for the observations it is conditioned on,
// and the Subset's own prediction plus the noise variance for the others,
// which it never saw.
func (s *Subset) LeaveOneOut(x [][]float64, y []float64) (mean, variance []float64, err error) {
	rows := make([]int, s.n)
	for i := range rows {
		rows[i] = i
	}
	return s.LeaveOneOutRows(x, y, rows)
}

// LeaveOneOutRows is LeaveOneOut for the observations rows only (indices
// into x and y), in their order: a check of a large study predicts a
// sample of them.
func (s *Subset) LeaveOneOutRows(x [][]float64, y []float64, rows []int) (mean, variance []float64, err error) {
	if len(x) != s.n || len(y) != s.n {
		return nil, nil, fmt.Errorf("gp: leave-one-out: %d points and %d values, the subset was fitted to %d", len(x), len(y), s.n)
	}
	for _, i := range rows {
		if i < 0 || i >= s.n {
			return nil, nil, fmt.Errorf("gp: leave-one-out: row %d out of 0..%d", i, s.n-1)
		}
	}
	lm, lv, err := s.mean.LeaveOneOut()
	if err != nil {
		return nil, nil, err
	}
	inMean := make(map[int]int, len(lm))
	for k := range lm {
		if s.meanIdx == nil {
			inMean[k] = k
		} else {
			inMean[s.meanIdx[k]] = k
		}
	}
	mean, variance = make([]float64, len(rows)), make([]float64, len(rows))
	var rest [][]float64
	var at []int
	for r, i := range rows {
		if k, ok := inMean[i]; ok {
			mean[r], variance[r] = lm[k], lv[k]
			continue
		}
		rest, at = append(rest, x[i]), append(at, r)
	}
	if len(rest) == 0 {
		return mean, variance, nil
	}
	pm, pv := make([]float64, len(rest)), make([]float64, len(rest))
	if err := s.Predict(rest, pm, pv); err != nil {
		return nil, nil, fmt.Errorf("gp: leave-one-out: %w", err)
	}
	noise := s.variance.NoiseVariance()
	for q, r := range at {
		mean[r], variance[r] = pm[q], pv[q]+noise
	}
	return mean, variance, nil
}

// LogLikelihoodAt is the log marginal likelihood of the GP's standardized
// observations under other hyperparameters (the output scale kept), the
// quantity the fit maximizes; with the fitted ones it is
// LogMarginalLikelihood.
func (g *GP) LogLikelihoodAt(h Hyper) (float64, error) {
	if err := h.validate(g.dim); err != nil {
		return 0, fmt.Errorf("gp: log likelihood: %w", err)
	}
	s, err := g.withHyper(h, g.standardized())
	if err != nil {
		return 0, fmt.Errorf("gp: log likelihood: %w", err)
	}
	return s.lml, nil
}

// standardized returns the observations in the GP's standardized units.
func (g *GP) standardized() []float64 {
	ystd := make([]float64, g.n)
	for i, v := range g.y {
		ystd[i] = (v - g.out.Mean) / g.out.Std
	}
	return ystd
}

// LengthscaleLimit is the shortest lengthscale of dimension j, the other
// hyperparameters kept, at which the log marginal likelihood is at most
// drop below the fit's: the lower end of a profile-likelihood interval for
// ℓ_j (with drop = 1.92, χ²₁'s 95% quantile halved, a 95% interval by the
// likelihood-ratio test). Keeping the other hyperparameters instead of
// refitting them lowers the likelihood of every alternative, so the limit is
// never shorter than the true profile's. A fitted lengthscale at the upper
// bound says that the dimension has no effect; a limit far below it says
// that the data do not rule an effect out. The search is a bisection on
// log ℓ_j between minLengthscale and the fitted value; it returns the fitted
// value when shortening it at all costs more than drop.
func (g *GP) LengthscaleLimit(j int, drop float64) (float64, error) {
	if j < 0 || j >= g.dim {
		return 0, fmt.Errorf("gp: lengthscale limit: dimension %d out of 0..%d", j, g.dim-1)
	}
	if !(drop > 0) || math.IsInf(drop, 0) {
		return 0, fmt.Errorf("gp: lengthscale limit: drop %v must be positive and finite", drop)
	}
	h := g.hyper.Clone()
	fitted := h.Lengthscales[j]
	at := func(l float64) (float64, error) {
		h.Lengthscales[j] = l
		return g.LogLikelihoodAt(h)
	}
	target := g.lml - drop
	lo, hi := math.Log(minLengthscale), math.Log(fitted)
	if v, err := at(minLengthscale); err == nil && v >= target {
		return minLengthscale, nil
	}
	// Invariant: the likelihood at exp(hi) is above target (hi starts at
	// the fit), at exp(lo) below it or not computable.
	for range lengthscaleLimitSteps {
		mid := 0.5 * (lo + hi)
		v, err := at(math.Exp(mid))
		if err == nil && v >= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Exp(hi), nil
}

// lengthscaleLimitSteps halves the log interval (at most 13.8 wide) to
// within 0.11, a factor of 1.11 in the lengthscale.
const lengthscaleLimitSteps = 7

// WithLengthscales returns the GP on the same observations with the
// lengthscales of the given dimensions replaced (the other hyperparameters
// and the output scale kept): a model at another point of the
// hyperparameters' confidence region.
func (g *GP) WithLengthscales(dims []int, values []float64) (*GP, error) {
	if len(dims) != len(values) {
		return nil, fmt.Errorf("gp: with lengthscales: %d dimensions and %d values", len(dims), len(values))
	}
	h := g.hyper.Clone()
	for k, j := range dims {
		if j < 0 || j >= g.dim || slices.Contains(dims[:k], j) {
			return nil, fmt.Errorf("gp: with lengthscales: dimension %d out of range or repeated", j)
		}
		h.Lengthscales[j] = values[k]
	}
	if err := h.validate(g.dim); err != nil {
		return nil, fmt.Errorf("gp: with lengthscales: %w", err)
	}
	s, err := g.withHyper(h, g.standardized())
	if err != nil {
		return nil, fmt.Errorf("gp: with lengthscales: %w", err)
	}
	return s, nil
}
