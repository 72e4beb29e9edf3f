// Package pdp computes partial dependence plots (PDPs) and individual
// conditional expectation (ICE) curves of a probabilistic surrogate, with
// confidence bands for the PD estimate, following Moosbauer et al. 2021,
// "Explaining Hyperparameter Optimization via Partial Dependence Plots":
//
//   - ICE curve i at grid point g is the posterior mean m̂(λ_S^g, λ_C^i), and the
//     PDP is their average over the Monte Carlo sample (eq. 2 and 3);
//   - the variance of the PD estimate is ŝ_S² = 1ᵀK̂1/n² with K̂ the posterior
//     covariance of the n points at one grid point (eq. 4, "exact"), or the
//     mean of their n posterior variances (eq. 5, the paper's default);
//   - bands are φ ± q_{1−α/2}·ŝ_S.
//
// The reference distribution of λ_C is uniform over the space in its
// unit-cube encoding (package space): log parameters log-uniform, every integer
// and level equally likely, and conditional parameters switched on or off by
// their parents as the sampled parents dictate. When S holds a conditional
// parameter, the sample is restricted to configurations where it is active,
// because its effect is only defined there (the paper's appendix B).
//
// Explainers take a fitted surrogate and a space only; they never look into
// the optimizer that produced the data.
package pdp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"

	"xbo/space"
	"xbo/surrogate"
)

// Defaults of the paper's experiments (section 6).
const (
	DefaultGridSize = 20
	DefaultSamples  = 1000
	DefaultAlpha    = 0.05
)

// Band names the estimator of the PD variance.
type Band string

// Band estimators.
const (
	// BandApprox is eq. 5: the mean of the pointwise posterior variances. It
	// ignores the covariances and so never understates the uncertainty.
	BandApprox Band = "approx"
	// BandExact is eq. 4: the posterior variance of the Monte Carlo average.
	BandExact Band = "exact"
	// BandCalibrated estimates the error against the true PD, not only
	// against the surrogate's own average over the same n points:
	// c·(eq. 4 + the variance of the PD across hyperposterior models) + δ²
	// + the Monte Carlo variance of the n-point average, with c ≥ 1 the
	// model's cross-validated variance factor for averages and δ² its
	// systematic error along the PDP's parameters beyond its posterior
	// (surrogate.VarianceScaler, surrogate.HyperposteriorSampler,
	// surrogate.DiscrepancyEstimator; models without them contribute
	// c = 1 and no hyperparameter or discrepancy term).
	BandCalibrated Band = "calibrated"
)

// needsAverage says whether the band needs eq. 4.
func (b Band) needsAverage() bool { return b == BandExact || b == BandCalibrated }

// Options configure a PDP. The zero value gives the paper's defaults:
// G = 20 grid points, n = 1000 Monte Carlo points, 95% bands from eq. 5.
type Options struct {
	GridSize int     // G per parameter (every level for categoricals, every integer when fewer)
	Samples  int     // n, the Monte Carlo sample of the other parameters
	Alpha    float64 // bands at level 1−α
	// Band is the band's estimator (default BandApprox, the paper's eq. 5);
	// BandExact and BandCalibrated need a surrogate.AverageVariancer.
	Band    Band
	KeepICE bool   // return the ICE curves of the mean in the result
	Seed    uint64 // seeds the Monte Carlo sample
	// Background, when set, is used as the Monte Carlo sample instead of a
	// fresh draw: rows in unit-cube encoding with one entry per parameter
	// (the S coordinates are overwritten). Benchmarks pass one sample to
	// several PDPs so that they are comparable.
	Background [][]float64
	// KeepVariance computes the ICE curves of the posterior variance even
	// with exact bands. They cost an O(T²) solve per point for a GP, and only
	// the approximate band and confidence splitting (explain/regional) need
	// them; with Exact and a model that offers a mean-only prediction they
	// are skipped unless this is set.
	KeepVariance bool
	// Workers bounds the goroutines that evaluate grid points in parallel
	// (default GOMAXPROCS). The model's Predict and AverageVariance must be
	// safe for concurrent use, as read-only methods of fitted models are.
	Workers int
	// MinVarianceScale is a lower bound on a calibrated band's variance
	// factor: the factor a check of the model on its own data found its
	// predictive intervals need (0 or 1: none).
	MinVarianceScale float64
	// Alternatives are models the data support about as well as the
	// model, at the edge of its hyperparameters' confidence region (e.g.
	// the GP with a parameter's lengthscale at its 95% profile-likelihood
	// limit). A calibrated band reaches each alternative's PD at every
	// grid point: its half-width is at least the distance between the two.
	Alternatives []surrogate.Model
}

func (o Options) withDefaults() (Options, error) {
	if o.GridSize == 0 {
		o.GridSize = DefaultGridSize
	}
	if o.Samples == 0 {
		o.Samples = DefaultSamples
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Band == "" {
		o.Band = BandApprox
	}
	switch {
	case o.Band != BandApprox && !o.Band.needsAverage():
		return o, fmt.Errorf("band %q: want %s, %s or %s", o.Band, BandApprox, BandExact, BandCalibrated)
	case o.GridSize < 2:
		return o, fmt.Errorf("grid size %d must be at least 2", o.GridSize)
	case o.Samples < 1 && o.Background == nil:
		return o, fmt.Errorf("Monte Carlo sample size %d must be positive", o.Samples)
	case math.IsNaN(o.MinVarianceScale) || math.IsInf(o.MinVarianceScale, 0) || o.MinVarianceScale < 0:
		return o, fmt.Errorf("minimum variance scale %v must be finite and ≥ 0", o.MinVarianceScale)
	case !(o.Alpha > 0 && o.Alpha < 1):
		return o, fmt.Errorf("alpha %v must lie in (0, 1)", o.Alpha)
	}
	return o, nil
}

// Quantile returns q_{1−α/2} of the standard normal, the half-width factor of
// a 1−α band.
func Quantile(alpha float64) float64 {
	return distuv.UnitNormal.Quantile(1 - alpha/2)
}

// Meaner is a model that can predict the posterior mean alone, more cheaply
// than mean and variance together. PDPs with exact bands use it.
type Meaner = surrogate.Meaner

// Result is a PDP with its band, ready to marshal for the CLI, the service,
// the dashboard and the report. For a pair of parameters the grid is the
// product Grid × Grid2 and Mean, SD, Lower, Upper and every ICE row are in
// row-major order: entry a·len(Grid2)+b belongs to (Grid[a], Grid2[b]).
type Result struct {
	Param  string    `json:"param"`
	Param2 string    `json:"param2,omitempty"`
	Grid   []float64 `json:"grid"` // natural values; level indices for categoricals
	Grid2  []float64 `json:"grid2,omitempty"`
	// Labels and Labels2 are the choices at the grid values of categorical
	// parameters, with their JSON types (strings, numbers, booleans).
	Labels  []any       `json:"labels,omitempty"`
	Labels2 []any       `json:"labels2,omitempty"`
	Mean    []float64   `json:"mean"`
	SD      []float64   `json:"sd"`
	Lower   []float64   `json:"lower"`
	Upper   []float64   `json:"upper"`
	ICE     [][]float64 `json:"ice,omitempty"`
	Band    Band        `json:"band"`
	Level   float64     `json:"level"` // 1−α
	Samples int         `json:"samples"`
	// VarianceScale and MonteCarloSD are the two terms a calibrated band adds
	// to eq. 4: the factor eq. 4 was multiplied by and, per grid point, the
	// standard error of the n-point average of the ICE curves.
	VarianceScale float64   `json:"variance_scale,omitempty"`
	MonteCarloSD  []float64 `json:"mc_sd,omitempty"`
	// HyperSD is, per grid point, the sd of the PD estimate across models
	// with hyperparameters drawn from their posterior, the third term of a
	// calibrated band (absent for a model that cannot draw them).
	HyperSD []float64 `json:"hyper_sd,omitempty"`
	// DiscrepancySD is the sd of the model's systematic error along the
	// PDP's parameters beyond its posterior (surrogate.DiscrepancyEstimator),
	// the fourth term of a calibrated band, the same at every grid point.
	DiscrepancySD float64 `json:"discrepancy_sd,omitempty"`
	// DoubtSD is, per grid point, the largest distance between the PD and
	// an alternative model's (Options.Alternatives) divided by the band's
	// quantile: the fifth term of a calibrated band, which makes the band
	// reach every alternative's curve.
	DoubtSD []float64 `json:"doubt_sd,omitempty"`
}

// ICE holds the ICE curves of the posterior mean and variance of a model for
// the parameters S: everything a PDP, a regional PDP (package
// explain/regional) or a metric needs, computed once.
type ICE struct {
	Space  *space.Space
	Params []int       // S, one or two parameter indices
	Grid   [][]float64 // natural values, one slice per parameter in S
	// GridU lists the evaluated grid points in unit encoding, G rows of
	// len(Params) coordinates, in row-major order for pairs.
	GridU [][]float64
	// Background is the Monte Carlo sample as drawn, n rows of uniform
	// coordinates that PointsAt repairs per grid point (so a child of S that a
	// grid value switches on gets a uniform value rather than a default).
	Background [][]float64
	// Sample is Background repaired with S at its drawn value: the λ_C^(i)
	// of the paper in unit encoding. Regional splits read these coordinates.
	Sample [][]float64
	Mean   [][]float64 // n × G: m̂(λ_S^g, λ_C^i)
	Var    [][]float64 // n × G: ŝ²(λ_S^g, λ_C^i); nil when skipped (see Options.KeepVariance)

	model surrogate.Model
	opts  Options
	// hyperMean[s][i][g] is the mean of hyperposterior model s at curve i
	// (the first hyperCurves curves) for calibrated bands; nil otherwise.
	// altMean is the same for the alternative models.
	hyperMean, altMean [][][]float64
}

// Calibrated bands average the PD over HyperSamples hyperposterior models
// on the first hyperCurves Monte Carlo points: the spread of the PD across
// models is driven by the models, not by the sample, which they share.
const (
	HyperSamples = 8
	hyperCurves  = 50
	hyperSeed    = 7
)

// Compute returns the PDP of model for the parameters named in params (one or
// two) over the space.
func Compute(ctx context.Context, model surrogate.Model, sp *space.Space, params []string, opts Options) (*Result, error) {
	idx, err := indices(sp, params)
	if err != nil {
		return nil, fmt.Errorf("pdp: %w", err)
	}
	ice, err := NewICE(ctx, model, sp, idx, opts)
	if err != nil {
		return nil, err
	}
	return ice.PDP(ctx, nil)
}

func indices(sp *space.Space, params []string) ([]int, error) {
	if sp == nil {
		return nil, errors.New("no space given")
	}
	if len(params) < 1 || len(params) > 2 {
		return nil, fmt.Errorf("want one or two parameters, got %d", len(params))
	}
	out := make([]int, len(params))
	for k, name := range params {
		i, ok := sp.Index(name)
		if !ok {
			return nil, fmt.Errorf("unknown parameter %q (known: %v)", name, sp.Names())
		}
		out[k] = i
	}
	if len(out) == 2 && out[0] == out[1] {
		return nil, fmt.Errorf("parameter %q given twice", params[0])
	}
	return out, nil
}

// NewICE evaluates the model on the grid of the parameters S (indices into
// sp.Params) crossed with the Monte Carlo sample. It stops with ctx's error
// when ctx is cancelled.
func NewICE(ctx context.Context, model surrogate.Model, sp *space.Space, params []int, opts Options) (*ICE, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("pdp: %w", err)
	}
	if model == nil || sp == nil {
		return nil, errors.New("pdp: model and space are required")
	}
	if model.Dim() != sp.Dim() {
		return nil, fmt.Errorf("pdp: model has %d dimensions, space has %d parameters", model.Dim(), sp.Dim())
	}
	if len(params) < 1 || len(params) > 2 {
		return nil, fmt.Errorf("pdp: want one or two parameters, got %d", len(params))
	}
	for _, p := range params {
		if p < 0 || p >= sp.Dim() {
			return nil, fmt.Errorf("pdp: no parameter #%d", p)
		}
	}
	if len(params) == 2 && params[0] == params[1] {
		return nil, errors.New("pdp: the two parameters must differ")
	}
	if opts.Band.needsAverage() {
		if _, ok := model.(surrogate.AverageVariancer); !ok {
			return nil, fmt.Errorf("pdp: %s bands (eq. 4) need a model that implements surrogate.AverageVariancer", opts.Band)
		}
	}
	ice := &ICE{Space: sp, Params: slices.Clone(params), model: model, opts: opts}
	for _, p := range params {
		g, err := sp.Grid(p, opts.GridSize)
		if err != nil {
			return nil, fmt.Errorf("pdp: %w", err)
		}
		ice.Grid = append(ice.Grid, g)
	}
	ice.GridU = productGrid(sp, params, ice.Grid)
	if opts.Background != nil {
		if err := checkBackground(sp, params, opts.Background); err != nil {
			return nil, fmt.Errorf("pdp: background: %w", err)
		}
		ice.Background = opts.Background
	} else {
		bg, err := drawBackground(sp, params, opts.Samples, opts.Seed)
		if err != nil {
			return nil, fmt.Errorf("pdp: %w", err)
		}
		ice.Background = bg
	}
	ice.Sample = make([][]float64, len(ice.Background))
	for i, row := range ice.Background {
		ice.Sample[i] = slices.Clone(row)
		sp.Repair(ice.Sample[i])
	}
	n, G := len(ice.Background), len(ice.GridU)
	meaner, meanOnly := model.(Meaner)
	meanOnly = meanOnly && opts.Band.needsAverage() && !opts.KeepVariance
	ice.Mean = make([][]float64, n)
	if !meanOnly {
		ice.Var = make([][]float64, n)
	}
	for i := range n {
		ice.Mean[i] = make([]float64, G)
		if !meanOnly {
			ice.Var[i] = make([]float64, G)
		}
	}
	if opts.Band == BandCalibrated {
		if err := ice.hyperposterior(ctx); err != nil {
			return nil, fmt.Errorf("pdp: calibrated band: %w", err)
		}
	}
	if shared, ok := model.(surrogate.SharedPredictor); ok && ice.gridOnlyMovesParams() {
		if err := ice.predictShared(ctx, shared, !meanOnly); err != nil {
			return nil, fmt.Errorf("pdp: predict: %w", err)
		}
		return ice, nil
	}
	err = parallel(ctx, G, opts.Workers, func(g int) error {
		pts := ice.PointsAt(g, nil)
		mean := make([]float64, n)
		if meanOnly {
			if err := meaner.Mean(pts, mean); err != nil {
				return err
			}
			for i := range n {
				if math.IsNaN(mean[i]) {
					return fmt.Errorf("model predicted NaN at grid point %d", g)
				}
				ice.Mean[i][g] = mean[i]
			}
			return nil
		}
		variance := make([]float64, n)
		if err := model.Predict(pts, mean, variance); err != nil {
			return err
		}
		for i := range n {
			if math.IsNaN(mean[i]) || math.IsNaN(variance[i]) {
				return fmt.Errorf("model predicted NaN at grid point %d", g)
			}
			ice.Mean[i][g] = mean[i]
			ice.Var[i][g] = math.Max(variance[i], 0)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pdp: predict: %w", err)
	}
	return ice, nil
}

// repairedGrid lists each grid point's coordinates of the parameters of
// interest as PointsAt sets them (repaired onto the space).
func (c *ICE) repairedGrid() [][]float64 {
	values := make([][]float64, len(c.GridU))
	for g := range values {
		p := c.PointsAt(g, []int{0})[0]
		for _, j := range c.Params {
			values[g] = append(values[g], p[j])
		}
	}
	return values
}

// sharedGridChunk is the number of grid values predicted between two
// looks at the context.
const sharedGridChunk = 8

// predictShared fills the curves through the model's shared-coordinate
// prediction, which computes each background point's distance over the
// other parameters once for the whole grid. It is used only when the grid
// values move nothing but the parameters of interest, so every point of
// grid value g is the repaired background point with g's (repaired)
// coordinates, as PointsAt builds it.
func (c *ICE) predictShared(ctx context.Context, model surrogate.SharedPredictor, withVariance bool) error {
	n, G := len(c.Sample), len(c.GridU)
	values := c.repairedGrid()
	for g0 := 0; g0 < G; g0 += sharedGridChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		g1 := min(G, g0+sharedGridChunk)
		mean := make([]float64, (g1-g0)*n)
		var variance []float64
		if withVariance {
			variance = make([]float64, len(mean))
		}
		if err := model.PredictShared(c.Sample, c.Params, values[g0:g1], mean, variance); err != nil {
			return err
		}
		for g := g0; g < g1; g++ {
			for i := range n {
				k := (g-g0)*n + i
				if math.IsNaN(mean[k]) || (withVariance && math.IsNaN(variance[k])) {
					return fmt.Errorf("model predicted NaN at grid point %d", g)
				}
				c.Mean[i][g] = mean[k]
				if withVariance {
					c.Var[i][g] = math.Max(variance[k], 0)
				}
			}
		}
	}
	return nil
}

// productGrid lists the grid points in unit encoding, row-major for pairs.
func productGrid(sp *space.Space, params []int, grid [][]float64) [][]float64 {
	enc := func(p int, v float64) float64 { return sp.Params[p].ToUnit(v) }
	var out [][]float64
	if len(params) == 1 {
		for _, v := range grid[0] {
			out = append(out, []float64{enc(params[0], v)})
		}
		return out
	}
	for _, a := range grid[0] {
		for _, b := range grid[1] {
			out = append(out, []float64{enc(params[0], a), enc(params[1], b)})
		}
	}
	return out
}

// maxRejections bounds the draws spent on finding configurations in which a
// conditional S is active.
const maxRejections = 1000

// drawBackground draws n uniform configurations, each with every parameter of
// S active. Coordinates are raw uniforms until repaired per grid point, so a
// child of S that a grid value switches on gets a uniform value, not a default.
func drawBackground(sp *space.Space, params []int, n int, seed uint64) ([][]float64, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([][]float64, 0, n)
	for tries := 0; len(out) < n; tries++ {
		if tries > maxRejections*n {
			return nil, fmt.Errorf("could not draw configurations in which %s is active (fewer than 1 in %d are)", sp.Params[params[0]].Name, maxRejections)
		}
		u := make([]float64, sp.Dim())
		for j := range u {
			u[j] = rng.Float64()
		}
		repaired := slices.Clone(u)
		sp.Repair(repaired)
		active := true
		for _, p := range params {
			active = active && repaired[p] != space.Inactive
		}
		if active {
			out = append(out, u)
		}
	}
	return out, nil
}

func checkBackground(sp *space.Space, params []int, bg [][]float64) error {
	if len(bg) == 0 {
		return errors.New("empty")
	}
	for i, row := range bg {
		if len(row) != sp.Dim() {
			return fmt.Errorf("row %d has %d coordinates, want %d", i, len(row), sp.Dim())
		}
		for j, v := range row {
			if math.IsNaN(v) || ((v < 0 || v > 1) && v != space.Inactive) {
				return fmt.Errorf("row %d, parameter %q: %v is not a unit-cube coordinate", i, sp.Params[j].Name, v)
			}
		}
	}
	return nil
}

// gridOnlyMovesParams reports whether the point sets of different grid values
// differ only in the coordinates of the parameters of interest, each shared
// by all points of a set. That holds unless a parameter of interest is
// conditional (its coordinate is then Inactive for some points) or is the
// parent of a conditional one (the grid value then switches others on or off).
func (c *ICE) gridOnlyMovesParams() bool {
	for _, j := range c.Params {
		if c.Space.ParentOf(j) >= 0 {
			return false
		}
		for k := range c.Space.Params {
			if c.Space.ParentOf(k) == j {
				return false
			}
		}
	}
	return true
}

// PointsAt returns the n configurations (λ_S^g, λ_C^i) of grid point g in unit
// encoding, for the members given (all when nil). Children of S are switched
// on or off as the grid value dictates.
func (c *ICE) PointsAt(g int, members []int) [][]float64 {
	rows := members
	if rows == nil {
		rows = make([]int, len(c.Background))
		for i := range rows {
			rows[i] = i
		}
	}
	pts := make([][]float64, len(rows))
	for k, i := range rows {
		u := slices.Clone(c.Background[i])
		for s, p := range c.Params {
			u[p] = c.GridU[g][s]
		}
		c.Space.Repair(u)
		pts[k] = u
	}
	return pts
}

// Model returns the surrogate the curves were computed from.
func (c *ICE) Model() surrogate.Model { return c.model }

// Len is the number of ICE curves (the Monte Carlo sample size n).
func (c *ICE) Len() int { return len(c.Background) }

// GridLen is the number of grid points (G, or G₁·G₂ for pairs).
func (c *ICE) GridLen() int { return len(c.GridU) }

// PDP aggregates the ICE curves of the members given (all when nil) into a PDP
// with its band: the global PDP, or the regional PDP of a sub-region (Moosbauer
// et al. 2021, section 5). The band uses eq. 4 or eq. 5 as the ICE's options
// said. It stops with ctx's error when ctx is cancelled.
func (c *ICE) PDP(ctx context.Context, members []int) (*Result, error) {
	rows := members
	if rows == nil {
		rows = make([]int, c.Len())
		for i := range rows {
			rows[i] = i
		}
	}
	if len(rows) == 0 {
		return nil, errors.New("pdp: no ICE curves to aggregate")
	}
	for _, i := range rows {
		if i < 0 || i >= c.Len() {
			return nil, fmt.Errorf("pdp: ICE curve %d does not exist (have %d)", i, c.Len())
		}
	}
	G := c.GridLen()
	mean := make([]float64, G)
	variance := make([]float64, G)
	for _, i := range rows {
		for g := range G {
			mean[g] += c.Mean[i][g]
			if c.Var != nil {
				variance[g] += c.Var[i][g]
			}
		}
	}
	inv := 1 / float64(len(rows))
	for g := range G {
		mean[g] *= inv
		variance[g] *= inv
	}
	band := c.opts.Band
	if band.needsAverage() {
		av := c.model.(surrogate.AverageVariancer)
		averageVariance := av.AverageVariance
		if ps, ok := c.model.(surrogate.PriorSplitter); ok && c.gridOnlyMovesParams() {
			prior, err := ps.PriorAverage(c.PointsAt(0, members))
			if err != nil {
				return nil, fmt.Errorf("pdp: exact band: %w", err)
			}
			averageVariance = func(points [][]float64) (float64, error) {
				return ps.AverageVarianceGivenPrior(points, prior)
			}
		}
		err := parallel(ctx, G, c.opts.Workers, func(g int) error {
			v, err := averageVariance(c.PointsAt(g, members))
			if err != nil {
				return err
			}
			variance[g] = math.Max(v, 0)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("pdp: exact band: %w", err)
		}
	}
	var scale, discrepancy float64
	var mcSD, hyperSD, doubtSD []float64
	if band == BandCalibrated {
		var err error
		if scale, err = c.varianceScale(); err != nil {
			return nil, fmt.Errorf("pdp: calibrated band: %w", err)
		}
		scale = math.Max(scale, c.opts.MinVarianceScale)
		if discrepancy, err = c.discrepancy(); err != nil {
			return nil, fmt.Errorf("pdp: calibrated band: %w", err)
		}
		mcSD = make([]float64, G)
		if c.hyperMean != nil {
			hyperSD = make([]float64, G)
		}
		if c.altMean != nil {
			doubtSD = make([]float64, G)
		}
		q := Quantile(c.opts.Alpha)
		for g := range G {
			mc := monteCarloVariance(c.Mean, rows, g, mean[g])
			mcSD[g] = math.Sqrt(mc)
			hv := 0.0
			if hyperSD != nil {
				hv = c.hyperVariance(rows, g)
				hyperSD[g] = math.Sqrt(hv)
			}
			dv := 0.0
			if doubtSD != nil {
				dv = c.doubt(rows, g) / (q * q)
				doubtSD[g] = math.Sqrt(dv)
			}
			variance[g] = scale*(variance[g]+hv) + discrepancy + mc + dv
		}
	}
	r := &Result{
		Param:   c.Space.Params[c.Params[0]].Name,
		Grid:    slices.Clone(c.Grid[0]),
		Labels:  labels(c.Space, c.Params[0]),
		Mean:    mean,
		SD:      make([]float64, G),
		Lower:   make([]float64, G),
		Upper:   make([]float64, G),
		Band:    band,
		Level:   1 - c.opts.Alpha,
		Samples: len(rows),

		VarianceScale: scale,
		MonteCarloSD:  mcSD,
		HyperSD:       hyperSD,
		DiscrepancySD: math.Sqrt(discrepancy),
		DoubtSD:       doubtSD,
	}
	if len(c.Params) == 2 {
		r.Param2 = c.Space.Params[c.Params[1]].Name
		r.Grid2 = slices.Clone(c.Grid[1])
		r.Labels2 = labels(c.Space, c.Params[1])
	}
	q := Quantile(c.opts.Alpha)
	for g := range G {
		r.SD[g] = math.Sqrt(variance[g])
		r.Lower[g] = mean[g] - q*r.SD[g]
		r.Upper[g] = mean[g] + q*r.SD[g]
	}
	if c.opts.KeepICE {
		r.ICE = make([][]float64, len(rows))
		for k, i := range rows {
			r.ICE[k] = slices.Clone(c.Mean[i])
		}
	}
	return r, nil
}

func labels(sp *space.Space, p int) []any {
	if sp.Params[p].Type != space.Categorical {
		return nil
	}
	return slices.Clone(sp.Params[p].Choices)
}

// LabelTexts gives categorical grid labels (Result.Labels) their text
// forms, for tables and plots.
func LabelTexts(labels []any) []string {
	if labels == nil {
		return nil
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = space.ChoiceLabel(l)
	}
	return out
}

// NearestGrid returns the index of the grid point (of a one-parameter ICE)
// closest to the natural value v on the parameter's own (encoded) scale; the
// optimum-confidence metric OC reads the band there.
func (c *ICE) NearestGrid(v float64) (int, error) {
	if len(c.Params) != 1 {
		return 0, errors.New("pdp: nearest grid point is defined for one parameter")
	}
	p := &c.Space.Params[c.Params[0]]
	if err := p.CheckValue(v); err != nil {
		return 0, fmt.Errorf("pdp: %w", err)
	}
	u := p.ToUnit(v)
	best, bestDist := 0, math.Inf(1)
	for g, gu := range c.GridU {
		if d := math.Abs(gu[0] - u); d < bestDist {
			best, bestDist = g, d
		}
	}
	return best, nil
}

// parallel runs f(0..count-1) on up to workers goroutines and returns the
// first error; it starts no further call once ctx is cancelled and then
// returns ctx's error.
func parallel(ctx context.Context, count, workers int, f func(int) error) error {
	if workers > count {
		workers = count
	}
	if workers <= 1 {
		for k := range count {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := f(k); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     int
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if firstErr == nil {
					firstErr = ctx.Err()
				}
				if firstErr != nil || next >= count {
					mu.Unlock()
					return
				}
				k := next
				next++
				mu.Unlock()
				if err := f(k); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}
