// Package surrogate is the contract between the models that learn the objective
// (package gp, package forest) and everything that consumes them (acq, opt,
// explain/...). It holds interfaces only, so consumers never depend on a
// concrete model and explanations never reach into the optimizer.
//
// All points are rows in the unit-cube encoding of a search space (package
// space): one coordinate per hyperparameter, in [0,1], or space.Inactive for a
// conditional hyperparameter that is switched off. Predictions are in the
// objective's own units; variances are of the latent function f, without the
// observation noise.
package surrogate

import (
	"errors"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// Model is a fitted regression model with a posterior (or bootstrap) spread.
type Model interface {
	// Dim is the number of coordinates a point must have.
	Dim() int
	// Predict writes the posterior mean and variance of f at every row of x
	// into mean and variance, which must have len(x) elements.
	Predict(x [][]float64, mean, variance []float64) error
}

// AverageVariancer is a Model that can give the posterior variance of the
// average (1/n)·Σ f(a_i) over a set of points, i.e. 1ᵀK̂1/n² with K̂ the
// posterior covariance of the points. Partial dependence bands (Moosbauer et al.
// 2021, "Explaining hyperparameter optimization via partial dependence plots",
// eq. 4) need exactly this quantity and models can compute it without forming
// the n×n matrix.
type AverageVariancer interface {
	Model
	AverageVariance(points [][]float64) (float64, error)
}

// PriorSplitter is an AverageVariancer whose kernel is stationary, so that
// AverageVariance splits into a prior part, (1/n²)·Σ_ij k(a_i,a_j), equal for
// point sets that differ only in a coordinate all points of a set share, and
// a data part. A PDP's exact band (eq. 4 of that paper) then computes the prior
// part once per parameter instead of once per grid value.
type PriorSplitter interface {
	AverageVariancer
	PriorAverage(points [][]float64) (float64, error)
	AverageVarianceGivenPrior(points [][]float64, priorAverage float64) (float64, error)
}

// NoiseVariancer is a Model fitted with an observation-noise term: a new
// observation at x has variance variance(x) + NoiseVariance() in the model's
// units. Confidence bounds built on the sd of an observation (mlrMBO's
// convention) need it.
type NoiseVariancer interface {
	Model
	NoiseVariance() float64
}

// NoiseVarianceOf is m's fitted noise variance, or 0 for a model without
// one: what a wrapper around a model (another encoding, the mean's sign)
// passes on.
func NoiseVarianceOf(m Model) float64 {
	if nv, ok := m.(NoiseVariancer); ok {
		return nv.NoiseVariance()
	}
	return 0
}

// Covariancer is a Model with a full posterior covariance between point sets.
type Covariancer interface {
	Model
	// Covariance returns the len(a)×len(b) posterior covariance of f.
	Covariance(a, b [][]float64) (*mat.Dense, error)
}

// ErrDim is wrapped by models when a point has the wrong number of coordinates.
var ErrDim = errors.New("point has the wrong dimension")

// CheckPoints validates a batch of points against a model dimension and the
// sizes of the output slices; models call it at the top of Predict.
func CheckPoints(dim int, x [][]float64, outs ...[]float64) error {
	for _, o := range outs {
		if len(o) != len(x) {
			return errors.New("surrogate: output slice length differs from the number of points")
		}
	}
	for i, row := range x {
		if len(row) != dim {
			return &DimError{Row: i, Got: len(row), Want: dim}
		}
	}
	return nil
}

// DimError reports which point had the wrong dimension.
type DimError struct{ Row, Got, Want int }

func (e *DimError) Error() string {
	return "surrogate: point " + strconv.Itoa(e.Row) + " has " + strconv.Itoa(e.Got) + " coordinates, want " + strconv.Itoa(e.Want)
}

// Unwrap lets errors.Is(err, ErrDim) match.
func (e *DimError) Unwrap() error { return ErrDim }

// Meaner is a model that can predict the posterior mean alone, more cheaply
// than mean and variance together (gp.GP and gp.Subset do: O(n·d) per point
// instead of O(n²)).
type Meaner interface {
	Mean(x [][]float64, mean []float64) error
}

// PredictMean writes m's posterior mean at x: by Mean where m is a Meaner,
// else Predict's mean (its variance discarded).
func PredictMean(m Model, x [][]float64, mean []float64) error {
	if mm, ok := m.(Meaner); ok {
		return mm.Mean(x, mean)
	}
	return m.Predict(x, mean, make([]float64, len(x)))
}

// Gradienter is a Model whose posterior mean and variance at a point are
// differentiable in the point's numeric unit-cube coordinates, so an
// acquisition can be maximized by gradient steps instead of a search.
type Gradienter interface {
	Model
	// PredictGradient returns the posterior mean and variance of f at x and
	// writes their gradients with respect to x into dmean and dvar (Dim
	// elements each). Coordinates the model is not differentiable in
	// (categorical, inactive) get 0.
	PredictGradient(x []float64, dmean, dvar []float64) (mean, variance float64, err error)
}

// VarianceBounder is a Model that gives the exact posterior mean together
// with an upper bound on the posterior variance more cheaply than Predict,
// so a search can discard points whose best possible score is already beaten
// and compute exact variances only for the rest.
type VarianceBounder interface {
	Model
	// PredictBound writes the posterior mean and an upper bound on the
	// posterior variance of f at every row of x; variance[i] ≤ bound[i]
	// holds for the variance Predict returns.
	PredictBound(x [][]float64, mean, bound []float64) error
}

// SharedPredictor is a Model that predicts a grid of points that share all
// coordinates but a few faster than Predict would: the points made by giving
// each base point the coordinates values[k] in the dimensions dims, as a
// partial-dependence grid needs them.
type SharedPredictor interface {
	Model
	// PredictShared writes the posterior mean and, unless variance is nil,
	// the variance of point (k, i), base[i] with values[k] in dims, to entry
	// k·len(base)+i; the results equal Predict's up to rounding.
	PredictShared(base [][]float64, dims []int, values [][]float64, mean, variance []float64) error
}

// Conditioner is a model that updates cheaply on extra observations with
// its hyperparameters kept: the posterior after (x[i], y[i]), e.g. the lies
// or fantasies a parallel optimizer puts at its pending trials.
type Conditioner interface {
	Model
	ConditionOn(x [][]float64, y []float64) (Model, error)
}

// VarianceScaler is a Model that estimates, by cross-validation on its own
// data, the factor its posterior variances should be multiplied by to match
// its errors (1 for a calibrated model). Calibrated partial-dependence bands
// apply it.
type VarianceScaler interface {
	Model
	VarianceScale() (float64, error)
}

// DiscrepancyEstimator is a Model that estimates, from its own data, the
// variance of its systematic error along given dimensions beyond what its
// posterior expects: an additive term for calibrated partial-dependence
// bands, for structure the model explained as noise.
type DiscrepancyEstimator interface {
	Model
	Discrepancy(dims []int) (float64, error)
}

// HyperposteriorSampler is a Model that can draw versions of itself whose
// hyperparameters come from their (approximate) posterior, so that an
// explanation can add the spread the hyperparameters leave, which a model
// fitted at one estimate of them does not show.
type HyperposteriorSampler interface {
	Model
	HyperposteriorModels(n int, seed uint64) ([]Model, error)
}
