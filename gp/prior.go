package gp

import (
	"fmt"
	"math"
	"strings"
)

// LengthscalePrior is a prior on a numeric dimension's lengthscale ℓ in
// the unit cube, which turns the fit into a maximum a posteriori one.
// Maximum likelihood alone lets a dimension whose effect a few points in
// many dimensions cannot resolve take a lengthscale at the upper bound: the
// model then ignores it, and a search guided by the model leaves it
// wherever the initial design put it. Each prior below keeps the
// lengthscales of such dimensions finite, in a different way.
//
// With either, the signal variance σ_f² (in standardized units, where 1
// is typical) has the prior Gamma(2, 1), log density log σ_f² − σ_f², as
// in Optuna's GPSampler: a lengthscale prior alone makes the flat fit, all
// of the variance called noise and σ_f² at its lower bound, the likeliest
// explanation of a few scattered values, and a warm-started fit then stays
// on it; the Gamma prior's density vanishes as σ_f² → 0.
type LengthscalePrior int

const (
	// NoPrior is maximum likelihood.
	NoPrior LengthscalePrior = iota
	// InverseSquaredPrior has log density −0.1(ℓ² + ℓ⁻²) up to a
	// constant, a Gamma-type prior on the inverse squared lengthscale
	// (the form of Optuna's GPSampler): the penalty grows as ℓ² past 1,
	// so no dimension is switched off, and as ℓ⁻² below it.
	InverseSquaredPrior
	// DimensionScaledPrior is log ℓ ~ N(√2 + ½ log d, 3), whose median
	// grows with √d as distances in the unit cube do (Hvarfner, Hellsten
	// and Nardi 2024, "Vanilla Bayesian optimization performs great in
	// high dimensions").
	DimensionScaledPrior
)

func (p LengthscalePrior) valid() bool { return p >= NoPrior && p <= DimensionScaledPrior }

// negLog returns the prior's negative log density at θ = log ℓ (up to a
// constant) and its derivative in θ, for d dimensions.
func (p LengthscalePrior) negLog(theta float64, d int) (float64, float64) {
	switch p {
	case InverseSquaredPrior:
		a, b := math.Exp(2*theta), math.Exp(-2*theta)
		return 0.1 * (a + b), 0.2 * (a - b)
	case DimensionScaledPrior:
		mu := math.Sqrt2 + 0.5*math.Log(float64(d))
		return (theta - mu) * (theta - mu) / 6, (theta - mu) / 3
	}
	return 0, 0
}

// signalNegLog returns the negative log density of the signal variance's
// Gamma(2, 1) prior at θ = log σ_f² (up to a constant) and its derivative
// in θ: −θ + e^θ, minimal at σ_f² = 1.
func signalNegLog(theta float64) (float64, float64) {
	e := math.Exp(theta)
	return e - theta, e - 1
}

// ParsePrior returns the LengthscalePrior named s: "none", "inverse-squared"
// or "dimension-scaled".
func ParsePrior(s string) (LengthscalePrior, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none":
		return NoPrior, nil
	case "inverse-squared":
		return InverseSquaredPrior, nil
	case "dimension-scaled":
		return DimensionScaledPrior, nil
	}
	return 0, fmt.Errorf("gp: unknown lengthscale prior %q (want none, inverse-squared or dimension-scaled)", s)
}

// String returns the name ParsePrior accepts.
func (p LengthscalePrior) String() string {
	switch p {
	case NoPrior:
		return "none"
	case InverseSquaredPrior:
		return "inverse-squared"
	case DimensionScaledPrior:
		return "dimension-scaled"
	}
	return fmt.Sprintf("LengthscalePrior(%d)", int(p))
}
