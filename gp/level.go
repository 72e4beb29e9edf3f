package gp

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// An uncertain mean level (Options.UncertainLevel).
//
// The prior's mean is a constant β that the data estimate, with a vague
// prior (R&W §2.7, eq. 2.42, with B⁻¹ → 0; kriging with an unknown constant
// mean, Matheron's "ordinary kriging"). In standardized units, with
// K = K_f + σ_n²I,
//
//	β̂ = 1ᵀK⁻¹y / 1ᵀK⁻¹1,
//	m(x) = β̂ + k(x)ᵀK⁻¹(y − β̂1),
//	cov(x, x') = k(x, x') − k(x)ᵀK⁻¹k(x') + r(x)·r(x') / 1ᵀK⁻¹1,
//	r(x) = 1 − k(x)ᵀK⁻¹1.
//
// β̂ is the generalized-least-squares mean: trials the kernel says are
// alike share their weight, so a cluster of an optimizer's trials near its
// optimum counts as about one observation of the level, not as many. A GP
// with the plain average as its mean reverts to that average far from the
// data, which on an optimizer's trials is the level near the optimum (an
// offset of a whole partial-dependence curve; docs/research/calibration.md), and
// treats it as exact. r(x) is 0 at the data and 1 far from
// them, so the level's uncertainty enters exactly where the prediction
// rests on it. For an average over points a_i, r is 1 − k̄ᵀK⁻¹1 with k̄ the
// average of the k(a_i).
//
// The level is estimated once the hyperparameters are fitted (as DiceKriging
// does for a constant trend, which mlrMBO and Moosbauer et al. 2021 use): the mean the
// GP adds back to its standardized predictions becomes β̂, so every
// prediction is the ordinary-kriging mean, and the log marginal likelihood
// is that of the data centred at β̂ (the likelihood profiled over β).
type levelTerm struct {
	w1        []float64 // U⁻ᵀ1, with K = UᵀU
	ones      []float64 // K⁻¹1
	precision float64   // 1ᵀK⁻¹1 = w1ᵀw1
}

// estimateLevel re-centres a factorized GP at the generalized-least-squares
// level, when it estimates one: the output mean moves by β̂ (objective
// units), α becomes K⁻¹(y − β̂1) and the likelihood that of the re-centred
// data. ystd are the standardized observations the factor was made for.
func (g *GP) estimateLevel(ystd []float64) {
	if !g.levelOn {
		g.level = nil
		return
	}
	n := g.n
	t := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: g.u}
	w1 := make([]float64, n)
	for i := range w1 {
		w1[i] = 1
	}
	blas64.Trsv(blas.Trans, t, blas64.Vector{N: n, Inc: 1, Data: w1})
	ones := append([]float64(nil), w1...)
	blas64.Trsv(blas.NoTrans, t, blas64.Vector{N: n, Inc: 1, Data: ones})
	p := floats.Dot(w1, w1)
	if !(p > 0) {
		g.level = nil
		return
	}
	beta := floats.Sum(g.alpha) / p
	centred := make([]float64, n)
	for i := range centred {
		centred[i] = ystd[i] - beta
		g.alpha[i] -= beta * ones[i]
	}
	g.out.Mean += beta * g.out.Std
	g.lml = logLik(g.u, n, centred, g.alpha)
	g.level = &levelTerm{w1: w1, ones: ones, precision: p}
}

// residual is r = count − zᵀw1 for z = U⁻ᵀΣk (a whitened cross-kernel row
// summed over count points): count times the r of their average.
func (l *levelTerm) residual(z []float64, count float64) float64 {
	if l == nil {
		return 0
	}
	return count - floats.Dot(z, l.w1)
}

// variance is the level's share of the (standardized) variance of the sum
// of count points whose summed whitened cross-kernel row is z: r²/1ᵀK⁻¹1.
// It is 0 without a level.
func (l *levelTerm) variance(z []float64, count float64) float64 {
	if l == nil {
		return 0
	}
	r := l.residual(z, count)
	return r * r / l.precision
}

// addCovariance adds r(a_i)·r(b_j)/1ᵀK⁻¹1 to the na×nb covariance c
// (standardized), from the whitened cross-kernel rows wa and wb.
func (l *levelTerm) addCovariance(c, wa, wb []float64, na, nb int) {
	if l == nil {
		return
	}
	n := len(l.w1)
	rb := make([]float64, nb)
	for j := range nb {
		rb[j] = l.residual(wb[j*n:(j+1)*n], 1)
	}
	for i := range na {
		ra := l.residual(wa[i*n:(i+1)*n], 1) / l.precision
		for j := range nb {
			c[i*nb+j] += ra * rb[j]
		}
	}
}

// MeanLevel returns the estimated constant mean level β̂ in objective units
// and its standard deviation (1ᵀK⁻¹1)^(−½), with ok false for a GP that does
// not estimate one (Options.UncertainLevel).
func (g *GP) MeanLevel() (level, sd float64, ok bool) {
	if g.level == nil {
		return 0, 0, false
	}
	return g.out.Mean, g.out.Std / math.Sqrt(g.level.precision), true
}
