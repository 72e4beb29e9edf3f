package gp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"xbo/internal/parallel"
	"xbo/surrogate"
)

// Hyper holds the kernel hyperparameters in standardized-output units: the
// model is fitted to (y − mean)/std (see OutputScale), so SignalVariance σ_f²
// and NoiseVariance σ_n² are fractions of the variance of the observed y
// (σ_f² ≈ 1 is typical). Lengthscales has one entry per dimension, in
// unit-cube units for numeric dimensions; for a categorical dimension two
// different levels are at scaled distance 1/ℓ_j.
type Hyper struct {
	Lengthscales   []float64
	SignalVariance float64
	NoiseVariance  float64
}

// Clone returns a deep copy.
func (h Hyper) Clone() Hyper {
	h.Lengthscales = slices.Clone(h.Lengthscales)
	return h
}

// equal says whether h and o are the same hyperparameters, bit for bit.
func (h Hyper) equal(o Hyper) bool {
	return h.SignalVariance == o.SignalVariance && h.NoiseVariance == o.NoiseVariance &&
		slices.Equal(h.Lengthscales, o.Lengthscales)
}

func (h *Hyper) validate(dim int) error {
	if len(h.Lengthscales) != dim {
		return fmt.Errorf("%d lengthscales for %d dimensions", len(h.Lengthscales), dim)
	}
	for j, l := range h.Lengthscales {
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("lengthscale %d is %v, want positive and finite", j, l)
		}
	}
	if !(h.SignalVariance > 0) || math.IsInf(h.SignalVariance, 0) {
		return fmt.Errorf("signal variance %v, want positive and finite", h.SignalVariance)
	}
	if !(h.NoiseVariance >= 0) || math.IsInf(h.NoiseVariance, 0) {
		return fmt.Errorf("noise variance %v, want non-negative and finite", h.NoiseVariance)
	}
	return nil
}

// OutputScale is the affine map between objective units and the standardized
// units the GP works in: y_std = (y − Mean)/Std.
type OutputScale struct {
	Mean, Std float64
}

// Options configures Fit. The zero value fits a squared-exponential GP on
// numeric dimensions with 3 restarts; most callers want Kernel: Matern52.
type Options struct {
	Kernel Kernel
	// Levels has one entry per dimension: 0 for numeric, K > 0 for a
	// categorical dimension with K levels (space.Space.Levels). Nil means all
	// numeric.
	Levels []int
	// Fixed, if non-nil, is used as is and no hyperparameters are fitted.
	Fixed *Hyper
	// Restarts is the number of L-BFGS runs (default 3): the first starts at
	// Init (or a default), the others at random points drawn with Seed.
	Restarts int
	Seed     uint64
	// Workers bounds the goroutines of the fit and of every later call on
	// the fitted GP [2, and never more than GOMAXPROCS]; 1 keeps each call
	// on its caller's goroutine, e.g. to leave a core to a server's
	// handlers. Results do not depend on it.
	Workers int
	// Init is a warm start (e.g. the previous fit's Hyper), tried first.
	Init *Hyper
	// MinNoise is the lower bound of the fitted NoiseVariance in standardized
	// units (default 1e-6). It keeps K+σ_n²I well conditioned.
	MinNoise float64
	// Output, if non-nil, fixes the standardization instead of taking the
	// mean and standard deviation of y. Condition keeps its parent's scale,
	// so Fit with Fixed: &h, Output: &s reproduces a conditioned model.
	Output *OutputScale
	// Prior is a prior on the numeric dimensions' lengthscales, and with
	// one a Gamma(2, 1) prior on the signal variance (LengthscalePrior):
	// the hyperparameters then maximize the marginal likelihood times the
	// prior (MAP) instead of the likelihood alone. Zero is none.
	Prior LengthscalePrior
	// UncertainLevel estimates the prior's constant mean level from the
	// data and includes its uncertainty in every variance and covariance
	// (level.go): far from the observations the posterior reverts to the
	// generalized-least-squares mean of the data, not to their plain
	// average, with the uncertainty of that mean. Explanations use it; an
	// optimizer need not.
	UncertainLevel bool
}

// DefaultMinNoise is Options.MinNoise's default.
const DefaultMinNoise = 1e-6

// Bounds of the fitted hyperparameters (the fit works on their logarithms).
const (
	minLengthscale = 1e-3
	maxLengthscale = 1e3
	minSignal      = 1e-3
	maxSignal      = 1e3
	maxNoise       = 10
	defaultStarts  = 3
)

// GP is a fitted Gaussian-process posterior. It is immutable after Fit, so
// its methods are safe for concurrent use.
type GP struct {
	kernel Kernel
	dim    int
	levels []int
	cat    []bool
	n      int
	x      []float64 // encoded inputs, n×dim row-major
	y      []float64 // observations in objective units
	out    OutputScale
	hyper  Hyper
	met    metric
	jitter float64   // added to the diagonal on top of σ_n² to make K factorizable
	u      []float64 // upper Cholesky factor of K+(σ_n²+jitter)I, n×n row-major
	alpha  []float64 // (K+(σ_n²+jitter)I)⁻¹ y_std
	lml    float64
	// workers bounds the goroutines of one call (Options.Workers).
	workers int
	calib   *calibration
	// minNoise is the fit's lower bound on NoiseVariance (Options.MinNoise).
	minNoise float64
	// prior is the fit's lengthscale prior (Options.Prior).
	prior LengthscalePrior
	// levelOn is Options.UncertainLevel; level its terms once factorized.
	levelOn bool
	level   *levelTerm
}

var (
	_ surrogate.Model            = (*GP)(nil)
	_ surrogate.AverageVariancer = (*GP)(nil)
	_ surrogate.Covariancer      = (*GP)(nil)
	_ surrogate.SharedPredictor  = (*GP)(nil)
)

// Fit conditions a GP on observations y at unit-cube points x (rows), fitting
// the kernel hyperparameters by maximum marginal likelihood unless
// opt.Fixed is set. Constant y (including a single observation) skip the fit:
// the model predicts the constant, with the variance of the prior given by
// Fixed, Init or default hyperparameters (σ_f² = 1 with std 1).
func Fit(x [][]float64, y []float64, opt Options) (*GP, error) {
	return FitContext(context.Background(), x, y, opt)
}

// FitContext is Fit that stops fitting the hyperparameters, between two
// likelihood evaluations, once ctx is done, and then returns ctx's error.
func FitContext(ctx context.Context, x [][]float64, y []float64, opt Options) (*GP, error) {
	if ctx == nil {
		return nil, errors.New("gp: fit: nil context")
	}
	g, err := fit(ctx, x, y, opt)
	if err != nil {
		return nil, fmt.Errorf("gp: fit: %w", err)
	}
	return g, nil
}

func fit(ctx context.Context, x [][]float64, y []float64, opt Options) (*GP, error) {
	if !opt.Kernel.valid() {
		return nil, fmt.Errorf("invalid kernel %d", int(opt.Kernel))
	}
	if opt.Restarts < 0 {
		return nil, fmt.Errorf("restarts %d, want >= 0", opt.Restarts)
	}
	if opt.Restarts == 0 {
		opt.Restarts = defaultStarts
	}
	if opt.Workers < 0 {
		return nil, fmt.Errorf("workers %d, want >= 0", opt.Workers)
	}
	if opt.Workers == 0 {
		opt.Workers = parallel.DefaultWorkers
	}
	if opt.MinNoise < 0 || math.IsNaN(opt.MinNoise) || opt.MinNoise >= maxNoise {
		return nil, fmt.Errorf("min noise %v, want in [0, %v)", opt.MinNoise, float64(maxNoise))
	}
	if opt.MinNoise == 0 {
		opt.MinNoise = DefaultMinNoise
	}
	n := len(x)
	if n == 0 {
		return nil, errors.New("no observations")
	}
	if len(y) != n {
		return nil, fmt.Errorf("%d points but %d values", n, len(y))
	}
	dim := len(x[0])
	if dim == 0 {
		return nil, errors.New("points have no coordinates")
	}
	cat, err := categorical(opt.Levels, dim)
	if err != nil {
		return nil, err
	}
	levels := slices.Clone(opt.Levels)
	if levels == nil {
		levels = make([]int, dim)
	}
	enc := make([]float64, n*dim)
	for i, row := range x {
		if len(row) != dim {
			return nil, fmt.Errorf("x[%d] has %d coordinates, want %d", i, len(row), dim)
		}
		if err := encodePoint(enc[i*dim:(i+1)*dim], row, levels); err != nil {
			return nil, fmt.Errorf("x[%d]: %w", i, err)
		}
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("y[%d] is %v", i, v)
		}
	}

	out, constant := outputScale(y)
	if opt.Output != nil {
		if !(opt.Output.Std > 0) || math.IsInf(opt.Output.Std, 0) || math.IsNaN(opt.Output.Mean) || math.IsInf(opt.Output.Mean, 0) {
			return nil, fmt.Errorf("output scale %+v, want finite mean and positive std", *opt.Output)
		}
		out = *opt.Output
	}
	ystd := make([]float64, n)
	for i, v := range y {
		ystd[i] = (v - out.Mean) / out.Std
	}

	if !opt.Prior.valid() {
		return nil, fmt.Errorf("invalid lengthscale prior %d", int(opt.Prior))
	}
	p := &problem{kernel: opt.Kernel, n: n, d: dim, x: enc, y: ystd, cat: cat, minNoise: opt.MinNoise, prior: opt.Prior, workers: opt.Workers, ctx: ctx}
	var hyper Hyper
	switch {
	case opt.Fixed != nil:
		if err := opt.Fixed.validate(dim); err != nil {
			return nil, fmt.Errorf("fixed hyperparameters: %w", err)
		}
		hyper = opt.Fixed.Clone()
	default:
		if opt.Init != nil {
			if err := opt.Init.validate(dim); err != nil {
				return nil, fmt.Errorf("initial hyperparameters: %w", err)
			}
		}
		if constant && opt.Output == nil {
			// No variation: the likelihood only pushes σ_f² to its bound, so
			// the prior is kept as the starting point and not fitted.
			if opt.Init != nil {
				hyper = opt.Init.Clone()
			} else {
				hyper = p.defaultHyper()
			}
			break
		}
		hyper, err = p.fitHyper(opt)
		if err != nil {
			return nil, err
		}
	}

	g := &GP{
		kernel:  opt.Kernel,
		dim:     dim,
		levels:  levels,
		cat:     cat,
		n:       n,
		x:       enc,
		y:       slices.Clone(y),
		out:     out,
		hyper:   hyper,
		met:     newMetric(hyper.Lengthscales, cat),
		workers: opt.Workers,
		calib:   new(calibration),

		minNoise: opt.MinNoise,
		prior:    opt.Prior,
		levelOn:  opt.UncertainLevel,
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := g.factorize(ystd, 0); err != nil {
		return nil, err
	}
	return g, nil
}

// categorical validates Levels and returns the categorical mask.
func categorical(levels []int, dim int) ([]bool, error) {
	cat := make([]bool, dim)
	if levels == nil {
		return cat, nil
	}
	if len(levels) != dim {
		return nil, fmt.Errorf("%d levels for %d dimensions", len(levels), dim)
	}
	for j, k := range levels {
		if k < 0 {
			return nil, fmt.Errorf("levels[%d] = %d, want >= 0", j, k)
		}
		cat[j] = k > 0
	}
	return cat, nil
}

// encodePoint copies a unit-cube point, replacing categorical coordinates by
// their level index floor(u·K) (or −1 when the coordinate is negative, i.e.
// space.Inactive), so that the metric compares levels with a single !=.
func encodePoint(dst, src []float64, levels []int) error {
	for j, v := range src {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("coordinate %d is %v", j, v)
		}
		k := levels[j]
		if k == 0 {
			dst[j] = v
			continue
		}
		if v < 0 {
			dst[j] = -1
			continue
		}
		dst[j] = math.Min(math.Floor(v*float64(k)), float64(k-1))
	}
	return nil
}

// outputScale returns the mean and population standard deviation of y, with
// std 1 when y is constant (to within rounding).
func outputScale(y []float64) (OutputScale, bool) {
	// Sums of values near ±1e308 overflow; they are taken on y/max|y|
	// and scaled back (exact for the usual magnitudes, where the factor is
	// a power of two).
	scale := 0.0
	for _, v := range y {
		scale = math.Max(scale, math.Abs(v))
	}
	if scale == 0 || math.IsInf(scale, 0) || math.IsNaN(scale) {
		scale = 1
	}
	_, e := math.Frexp(scale)
	scale = math.Ldexp(1, e)
	mean := 0.0
	for _, v := range y {
		mean += v / scale
	}
	mean /= float64(len(y))
	ss := 0.0
	for _, v := range y {
		d := v/scale - mean
		ss += d * d
	}
	mean *= scale
	std := math.Sqrt(ss/float64(len(y))) * scale
	if std == 0 || std <= 1e-12*math.Abs(mean) {
		return OutputScale{Mean: mean, Std: 1}, true
	}
	return OutputScale{Mean: mean, Std: std}, false
}

// Dim implements surrogate.Model.
func (g *GP) Dim() int { return g.dim }

// Len is the number of observations the GP is conditioned on.
func (g *GP) Len() int { return g.n }

// Kernel is the correlation function of the prior.
func (g *GP) Kernel() Kernel { return g.kernel }

// Hyper returns a copy of the hyperparameters (standardized units).
func (g *GP) Hyper() Hyper { return g.hyper.Clone() }

// OutputScale returns the standardization of the outputs.
func (g *GP) OutputScale() OutputScale { return g.out }

// LogMarginalLikelihood is log p(y_std | X, Hyper) of the standardized
// outputs, the quantity the fit maximizes (R&W eq. 5.8). The log likelihood of
// the raw y is this minus n·log(Std).
func (g *GP) LogMarginalLikelihood() float64 { return g.lml }

// NoiseVariance is the observation-noise variance σ_n² in objective units.
func (g *GP) NoiseVariance() float64 { return g.hyper.NoiseVariance * g.out.Std * g.out.Std }

// KernelValue is the prior covariance of f at two unit-cube points, in
// objective units. It returns NaN if a point has the wrong dimension or a
// non-finite coordinate.
func (g *GP) KernelValue(a, b []float64) float64 {
	if len(a) != g.dim || len(b) != g.dim {
		return math.NaN()
	}
	ea := make([]float64, 2*g.dim)
	if encodePoint(ea[:g.dim], a, g.levels) != nil || encodePoint(ea[g.dim:], b, g.levels) != nil {
		return math.NaN()
	}
	return g.out.Std * g.out.Std * g.hyper.SignalVariance * g.kernel.corrValue(g.met.r2(ea[:g.dim], ea[g.dim:]))
}
