// Package warp transforms a surrogate's training outputs so that a Gaussian
// process fits them better: the optimizer's proposal model is fitted to
// warped values, never the explanations, which stay in objective units.
//
// The transform is Yeo-Johnson's power family (Yeo & Johnson 2000, "A new
// family of power transformations to improve normality or symmetry",
// Biometrika 87(4), 954–959) applied to the standardized values z:
//
//	ψ_λ(z) = ((z+1)^λ − 1)/λ              z ≥ 0, λ ≠ 0   (log(1+z) at λ = 0)
//	ψ_λ(z) = −((1−z)^(2−λ) − 1)/(2−λ)     z < 0, λ ≠ 2   (−log(1−z) at λ = 2)
//
// with λ maximizing the Gaussian profile log-likelihood of the transformed
// values, −n/2·log σ̂²(λ) + (λ−1)·Σ sign(z_i)·log(1+|z_i|) (their eq. 3.1
// with the Jacobian of the map). HEBO (Cowen-Rivers et al. 2022, "HEBO:
// Pushing the limits of sample-efficient hyperparameter optimisation", JAIR
// 74) found output power transforms among the largest single gains of a GP
// optimizer on real tuning tasks, where a few very bad configurations (a
// diverging learning rate, an error rate of 50%) dominate a plain
// standardization and flatten the region that matters.
//
// λ is restricted to [MinLambda, 1]: the values are minimized, and λ < 1 is
// concave, compressing the bad (large) end and stretching the good (small)
// one, while λ > 1 would compress the good end, where the optimizer needs
// its resolution. On data without a heavy upper tail the likelihood peaks at
// λ ≥ 1 and the transform is the identity on z. The maximization is a grid
// over λ followed by a golden-section refinement (a one-dimensional,
// bounded, smooth problem that needs nothing from an optimization library).
//
// The transform is monotone increasing, so the order of the values, the
// incumbent and the duplicates are those of the objective.
package warp

import (
	"errors"
	"fmt"
	"math"
)

// MinLambda is the smallest exponent considered.
const MinLambda = -2.0

// YeoJohnson is the Yeo-Johnson transform of z with exponent lambda.
func YeoJohnson(z, lambda float64) float64 {
	return fromLog(z < 0, math.Log1p(math.Abs(z)), lambda)
}

// fromLog is YeoJohnson of z given whether z is negative and log(1+|z|):
// the likelihood is evaluated at some 180 exponents, and the logarithm,
// which does not depend on the exponent, is taken once per value.
func fromLog(negative bool, logAbs, lambda float64) float64 {
	if !negative {
		if math.Abs(lambda) < 1e-12 {
			return logAbs
		}
		return math.Expm1(lambda*logAbs) / lambda
	}
	if math.Abs(lambda-2) < 1e-12 {
		return -logAbs
	}
	return -math.Expm1((2-lambda)*logAbs) / (2 - lambda)
}

// Transform is a fitted output warp: standardization by Mean and SD, then
// YeoJohnson with Lambda.
type Transform struct {
	Mean, SD, Lambda float64
}

// Apply returns the warped values of y.
func (t Transform) Apply(y []float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = YeoJohnson((v-t.Mean)/t.SD, t.Lambda)
	}
	return out
}

// Fit standardizes y and chooses λ in [MinLambda, 1] by maximum likelihood.
// Fewer than three values, or values that are all equal, give the identity
// exponent 1 (with SD 1 for constant values).
func Fit(y []float64) (Transform, error) {
	if len(y) == 0 {
		return Transform{}, errors.New("warp: no values")
	}
	n := float64(len(y))
	mean := 0.0
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Transform{}, fmt.Errorf("warp: value %d is %v", i, v)
		}
		mean += v / n // divided first: sums of values near ±1e308 overflow
	}
	ss := 0.0
	for _, v := range y {
		d := (v - mean)
		ss += d / n * d
	}
	sd := math.Sqrt(ss)
	if !(sd > 0) || math.IsInf(sd, 0) {
		return Transform{Mean: mean, SD: 1, Lambda: 1}, nil
	}
	t := Transform{Mean: mean, SD: sd, Lambda: 1}
	if len(y) < 3 {
		return t, nil
	}
	lk := make([]logAbs, len(y))
	jacobian := 0.0
	for i, v := range y {
		z := (v - mean) / sd
		lk[i] = logAbs{negative: z < 0, log: math.Log1p(math.Abs(z))}
		jacobian += math.Copysign(lk[i].log, z)
	}
	psi := make([]float64, len(y))
	ll := func(lambda float64) float64 { return logLikelihood(lk, psi, lambda, jacobian) }
	best, bestLL := 1.0, ll(1)
	const steps = 150 // grid spacing 0.02 on [−2, 1]
	h := (1 - MinLambda) / steps
	for k := range steps {
		l := MinLambda + float64(k)*h
		if v := ll(l); v > bestLL {
			best, bestLL = l, v
		}
	}
	// Golden-section search on the grid cell either side of the best.
	a, b := math.Max(MinLambda, best-h), math.Min(1, best+h)
	const invPhi = 0.6180339887498949
	c, d := b-invPhi*(b-a), a+invPhi*(b-a)
	fc, fd := ll(c), ll(d)
	for b-a > 1e-6 {
		if fc > fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = ll(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = ll(d)
		}
	}
	if m := (a + b) / 2; ll(m) > bestLL {
		best = m
	}
	t.Lambda = best
	return t, nil
}

// logAbs is a standardized value z as fromLog takes it.
type logAbs struct {
	negative bool
	log      float64 // log(1+|z|)
}

// logLikelihood is the Gaussian profile log-likelihood of the standardized
// values under exponent lambda; jacobian is Σ sign(z_i)·log(1+|z_i|), psi
// scratch space for the transformed values.
func logLikelihood(z []logAbs, psi []float64, lambda, jacobian float64) float64 {
	n := float64(len(z))
	m := 0.0
	for i, v := range z {
		psi[i] = fromLog(v.negative, v.log, lambda)
		m += psi[i]
	}
	m /= n
	s := 0.0
	for _, p := range psi {
		d := p - m
		s += d * d
	}
	s /= n
	if !(s > 0) {
		return math.Inf(-1)
	}
	return -n/2*math.Log(s) + (lambda-1)*jacobian
}
