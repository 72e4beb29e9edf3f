package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/history"
	"xbo/metrics"
	"xbo/space"
)

// Limits of the PDP family. A PDP evaluates the surrogate at every grid
// point crossed with every Monte Carlo point, so its cost is bounded by the
// product (a two-parameter grid counts as grid², not grid).
const (
	MaxGrid      = 200     // grid points per parameter
	MaxGrid2D    = 50      // grid points per parameter of a two-parameter PDP
	MaxSamples   = 20000   // Monte Carlo points
	MaxPDPPoints = 400_000 // grid points × Monte Carlo points
	MaxICEValues = 200_000 // ICE values returned (curves × grid points)
	MaxSplits    = 20      // regional PDP splits
	MaxDepth     = 10      // regional PDP depth
	// A two-parameter PDP evaluates the surrogate grid² × samples times, so
	// its defaults (15² × 150 = 33,750) cost about what a one-parameter PDP
	// with its defaults (20 × 1,000) costs, twice.
	DefaultGrid2D    = 15
	DefaultSamples2D = 150
	DefaultSplits    = regional.DefaultMaxSplits
)

// Band estimators of a PDP request.
const (
	BandApprox = string(pdp.BandApprox) // Moosbauer et al. 2021, eq. 5: the mean of the pointwise variances
	BandExact  = string(pdp.BandExact)  // Moosbauer et al. 2021, eq. 4: the variance of the Monte Carlo average
	// BandCalibrated (the default) is eq. 4 × the surrogate's
	// cross-validated variance factor + the Monte Carlo variance of the
	// average (package explain/pdp).
	BandCalibrated = string(pdp.BandCalibrated)
)

// PDPRequest asks for the partial dependence of one or two parameters
// (Moosbauer et al. 2021, eq. 2–5). Zero values mean the defaults.
type PDPRequest struct {
	Params []string `json:"params"`
	// Grid is the number of grid points per parameter (default 20; every
	// level for a categorical); Samples the Monte Carlo sample (default 1000).
	Grid    int `json:"grid"`
	Samples int `json:"samples"`
	// Alpha sets the band's level 1−α (default 0.05).
	Alpha float64 `json:"alpha"`
	// Band is "approx" (default) or "exact".
	Band string `json:"band"`
	// ICE includes the individual conditional expectation curves.
	ICE       bool      `json:"ice"`
	Surrogate Surrogate `json:"surrogate"`
	// Budget explains the values at that budget instead of the final ones
	// (see BudgetInfo; nil: the final values).
	Budget *int64 `json:"budget,omitempty"`
}

// PDPResult is a PDP with its band.
type PDPResult struct {
	About
	*pdp.Result
	// Extrapolation says where the curve rests on the model's prior more
	// than with uniformly random trials (GP surrogates; extrapolation.go).
	Extrapolation *Extrapolation `json:"extrapolation,omitempty"`
	// Forest is the random forest's curve and band, which a calibrated
	// band of a GP also covers (forestband.go).
	Forest *ForestCurve `json:"forest,omitempty"`
	// Plateaus are the grid points whose calibrated band was widened to
	// hold the one value all their nearest trials share (holdPlateaus).
	Plateaus []int `json:"plateaus,omitempty"`
	// Note says over which configurations a conditional parameter's PDP
	// averages, and anything else a reader must know.
	Note string `json:"note,omitempty"`
}

func (r *PDPRequest) normalize(sp *space.Space) error {
	if len(r.Params) < 1 || len(r.Params) > 2 {
		return invalidf("give one or two parameters (parameters: %s)", strings.Join(sp.Names(), ", "))
	}
	if err := checkParams(sp, r.Params); err != nil {
		return err
	}
	return normalizePDPSettings(sp, len(r.Params), &r.Grid, &r.Samples, &r.Alpha, &r.Band, r.ICE, &r.Surrogate)
}

func checkParams(sp *space.Space, names []string) error {
	for k, n := range names {
		if _, ok := sp.Index(n); !ok {
			return invalidf("unknown parameter %q (parameters: %s)", n, strings.Join(sp.Names(), ", "))
		}
		if slices.Contains(names[:k], n) {
			return invalidf("parameter %q given twice", n)
		}
	}
	return nil
}

// normalizePDPSettings fills the defaults of the PDP family and enforces the
// limits, so a request is refused before any work.
func normalizePDPSettings(sp *space.Space, nParams int, grid, samples *int, alpha *float64, band *string, ice bool, s *Surrogate) error {
	if *grid == 0 {
		*grid = pdp.DefaultGridSize
		if nParams == 2 {
			*grid = DefaultGrid2D
		}
	}
	if *samples == 0 {
		*samples = pdp.DefaultSamples
		if nParams == 2 {
			*samples = DefaultSamples2D
		}
	}
	if *alpha == 0 {
		*alpha = pdp.DefaultAlpha
	}
	if *band == "" {
		*band = BandCalibrated
	}
	maxGrid := MaxGrid
	if nParams == 2 {
		maxGrid = MaxGrid2D
	}
	switch {
	case *grid < 2 || *grid > maxGrid:
		return invalidf("grid %d must lie in 2..%d for %d parameter(s)", *grid, maxGrid, nParams)
	case *samples < 10 || *samples > MaxSamples:
		return invalidf("samples %d must lie in 10..%d", *samples, MaxSamples)
	case !(*alpha > 0 && *alpha < 1):
		return invalidf("alpha %v must lie in (0, 1)", *alpha)
	case *band != BandApprox && *band != BandExact && *band != BandCalibrated:
		return invalidf("band %q: want %s, %s or %s", *band, BandCalibrated, BandApprox, BandExact)
	}
	points := *samples
	for range nParams {
		points *= *grid
	}
	if points > MaxPDPPoints {
		return invalidf("grid %d^%d × samples %d = %d surrogate evaluations exceeds the limit of %d; lower grid or samples",
			*grid, nParams, *samples, points, MaxPDPPoints)
	}
	if ice && points > MaxICEValues {
		return invalidf("ICE curves of %d values exceed the limit of %d; lower grid or samples", points, MaxICEValues)
	}
	return s.normalize()
}

func (r PDPRequest) options(seed uint64, workers int) pdp.Options {
	return pdp.Options{GridSize: r.Grid, Samples: r.Samples, Alpha: r.Alpha, Band: pdp.Band(r.Band),
		KeepICE: r.ICE, Seed: seed, Workers: workers}
}

// mcSeed seeds the Monte Carlo sample of every PDP, so equal requests give
// equal numbers on every surface.
const mcSeed = 1

// requestKey is the cache key of a request of some kind on prepared data.
func requestKey(p *prepared, kind string, req any) (string, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("explain: %s request: %w", kind, err)
	}
	return p.fingerprint + "\x00" + kind + "\x00" + string(b), nil
}

// PDP computes a partial dependence plot.
func (e *Engine) PDP(ctx context.Context, h *history.History, req PDPRequest) (*PDPResult, error) {
	return explainAs(ctx, e, h, "pdp", req.Budget, func(*prepared) (any, error) {
		err := req.normalize(h.Space)
		return req, err
	}, func(t *task, p *prepared) (*PDPResult, error) {
		m, err := t.model(p, req.Surrogate)
		if err != nil {
			return nil, err
		}
		t.progress(fmt.Sprintf("PDP of %s", strings.Join(req.Params, " × ")), 0, 1)
		opts := req.options(mcSeed, t.workers)
		if err := m.bandOptions(&opts, h.Space, req.Params); err != nil {
			return nil, err
		}
		idx := make([]int, len(req.Params))
		for k, name := range req.Params {
			idx[k], _ = h.Space.Index(name)
		}
		ice, err := pdp.NewICE(t.ctx, m.model, h.Space, idx, opts)
		if err != nil {
			return nil, err
		}
		res, err := ice.PDP(t.ctx, nil)
		if err != nil {
			return nil, err
		}
		var curve *ForestCurve
		if f, err := t.forestFor(p, req.Surrogate, req.Band); err != nil {
			return nil, err
		} else if f != nil {
			if res, curve, err = hullPDP(t, h.Space, ice, res, f, opts); err != nil {
				return nil, err
			}
		}
		out := &PDPResult{About: p.about("pdp"), Result: res, Forest: curve, Note: conditionNote(h.Space, req.Params)}
		out.Plateaus = holdPlateaus(res, ice, m.data)
		out.describe(m)
		if len(idx) == 1 {
			if out.Extrapolation, err = curveExtrapolation(t.ctx, m, h.Space, ice, extrapolationPoints); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}

// conditionNote says when conditional parameters of interest are active.
func conditionNote(sp *space.Space, names []string) string {
	var parts []string
	for _, n := range names {
		i, _ := sp.Index(n)
		if c := sp.Params[i].Condition; c != nil {
			vals := make([]string, len(c.Values))
			for k, v := range c.Values {
				vals[k] = fmt.Sprint(v)
			}
			parts = append(parts, fmt.Sprintf("%s is active only when %s ∈ {%s}; its curve averages over those configurations only",
				n, c.Parent, strings.Join(vals, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

// compute runs a computation for a request through the engine's cache,
// sharing and limits, and stamps its About with the bias measure and time.
func (e *Engine) compute(ctx context.Context, p *prepared, kind string, req any, f func(t *task) (any, error)) (any, error) {
	key, err := requestKey(p, kind, req)
	if err != nil {
		return nil, err
	}
	c, err := e.run(ctx, key, kind, p.h.Name, func(t *task) (any, error) {
		start := time.Now()
		v, err := f(t)
		if err != nil {
			return nil, err
		}
		if a := aboutOf(v); a != nil {
			if a.Bias, err = t.bias(p); err != nil {
				return nil, err
			}
			a.Seconds = time.Since(start).Seconds()
		}
		return v, nil
	})
	if err != nil {
		return nil, err
	}
	return c.value, nil
}

// Header returns the About every result embeds.
func (a *About) Header() *About { return a }

func aboutOf(v any) *About {
	if x, ok := v.(interface{ Header() *About }); ok {
		return x.Header()
	}
	return nil
}

// SliceRequest asks for the slice of the surrogate through one
// configuration along one parameter (not a PDP: the others stay fixed).
type SliceRequest struct {
	Param string `json:"param"`
	// Point is the configuration sliced through (see Point; default best).
	Point     string    `json:"point"`
	Grid      int       `json:"grid"`
	Alpha     float64   `json:"alpha"`
	Surrogate Surrogate `json:"surrogate"`
	// Budget explains the values at that budget instead of the final ones
	// (see BudgetInfo; nil: the final values).
	Budget *int64 `json:"budget,omitempty"`
}

// SliceResult is a slice with the engine's header.
type SliceResult struct {
	About
	*pdp.Slice
	// Kind is "slice"; declared here because About and pdp.Slice both have
	// one, and encoding/json drops a name two embedded structs share.
	Kind string `json:"kind"`
}

func (r *SliceRequest) normalize(sp *space.Space) error {
	if err := checkParams(sp, []string{r.Param}); err != nil {
		return err
	}
	if r.Point == "" {
		r.Point = PointBest
	}
	samples, band := pdp.DefaultSamples, BandCalibrated
	return normalizePDPSettings(sp, 1, &r.Grid, &samples, &r.Alpha, &band, false, &r.Surrogate)
}

// Slice computes the slice through a configuration.
func (e *Engine) Slice(ctx context.Context, h *history.History, req SliceRequest) (*SliceResult, error) {
	var point *resolvedPoint
	return explainAs(ctx, e, h, "slice", req.Budget, func(p *prepared) (any, error) {
		if err := req.normalize(h.Space); err != nil {
			return nil, err
		}
		var err error
		point, err = p.point(req.Point, nil)
		return struct {
			SliceRequest
			Unit []float64
		}{req, pointUnit(point)}, err
	}, func(t *task, p *prepared) (*SliceResult, error) {
		m, err := t.model(p, req.Surrogate)
		if err != nil {
			return nil, err
		}
		s, err := pdp.SliceThrough(m.model, h.Space, req.Param, h.Space.Decode(point.unit), req.Grid, req.Alpha)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		out := &SliceResult{About: p.about("slice"), Slice: s, Kind: pdp.SliceKind}
		out.describe(m)
		return out, nil
	})
}

// RegionalRequest asks for the confidence-splitting tree of one parameter and a
// PDP per leaf (Moosbauer et al. 2021, Algorithm 1). Zero values mean the
// defaults.
type RegionalRequest struct {
	Param   string  `json:"param"`
	Grid    int     `json:"grid"`
	Samples int     `json:"samples"`
	Alpha   float64 `json:"alpha"`
	Band    string  `json:"band"`
	// MaxSplits bounds the splits (default 3); MaxDepth the depth (0: none);
	// MinSize the ICE curves per leaf (0: max(5, 1% of Samples));
	// MinImprovement the relative impurity reduction of a split.
	MaxSplits      int     `json:"max_splits"`
	MaxDepth       int     `json:"max_depth"`
	MinSize        int     `json:"min_size"`
	MinImprovement float64 `json:"min_improvement"`
	// Criterion is the impurity a split minimizes: l2 (Moosbauer et al.
	// 2021, eq. 6; the default), l1, area or point, the alternatives of the
	// paper's appendix (regional.Criterion).
	Criterion string    `json:"criterion,omitempty"`
	Surrogate Surrogate `json:"surrogate"`
	// MinDelta is the relative improvement δ of the best leaf's band over the
	// global one from which the regional PDP is worth showing (default 0.05).
	MinDelta float64 `json:"min_delta"`
	// Budget explains the values at that budget instead of the final ones
	// (see BudgetInfo; nil: the final values).
	Budget *int64 `json:"budget,omitempty"`
}

// RegionalResult is the tree, the global PDP and a PDP per leaf, with the
// confidence metrics of Moosbauer et al. 2021 (MC: mean band standard deviation;
// δ: the relative improvement of the best configuration's leaf).
type RegionalResult struct {
	About
	*regional.Result
	MCGlobal     float64 `json:"mc_global"`
	MCRegion     float64 `json:"mc_region"`
	Delta        float64 `json:"delta"`
	MinDelta     float64 `json:"min_delta"`
	ShowRegional bool    `json:"show_regional"`
	// Range is max − min of the global PDP and HalfWidth its mean band
	// half-width: an effect is resolved when Range clearly exceeds it.
	Range     float64 `json:"range"`
	HalfWidth float64 `json:"half_width"`
	// Extrapolation is the global curve's (see PDPResult.Extrapolation).
	Extrapolation *Extrapolation `json:"extrapolation,omitempty"`
	// Forest is the forest's global curve and band, which the global and
	// regional bands also cover (see PDPResult.Forest); the tree is grown on
	// the GP's curves.
	Forest *ForestCurve `json:"forest,omitempty"`
	// Plateaus are the global curve's (see PDPResult.Plateaus).
	Plateaus []int  `json:"plateaus,omitempty"`
	Note     string `json:"note,omitempty"`
}

func (r *RegionalRequest) normalize(sp *space.Space) error {
	if err := checkParams(sp, []string{r.Param}); err != nil {
		return err
	}
	if r.MaxSplits == 0 && r.MaxDepth == 0 {
		r.MaxSplits = DefaultSplits
	}
	if r.MinDelta == 0 {
		r.MinDelta = 0.05
	}
	c, err := regional.ParseCriterion(r.Criterion)
	if err != nil {
		return invalidf("%v", err)
	}
	r.Criterion = string(c)
	switch {
	case r.MaxSplits < 0 || r.MaxSplits > MaxSplits:
		return invalidf("max_splits %d must lie in 0..%d", r.MaxSplits, MaxSplits)
	case r.MaxDepth < 0 || r.MaxDepth > MaxDepth:
		return invalidf("max_depth %d must lie in 0..%d", r.MaxDepth, MaxDepth)
	case r.MinSize < 0:
		return invalidf("min_size %d must not be negative", r.MinSize)
	case math.IsNaN(r.MinImprovement) || r.MinImprovement < 0 || r.MinImprovement >= 1:
		return invalidf("min_improvement %v must lie in [0, 1)", r.MinImprovement)
	case !(r.MinDelta > 0 && r.MinDelta < 1):
		return invalidf("min_delta %v must lie in (0, 1)", r.MinDelta)
	}
	return normalizePDPSettings(sp, 1, &r.Grid, &r.Samples, &r.Alpha, &r.Band, false, &r.Surrogate)
}

// Regional computes a regional PDP.
func (e *Engine) Regional(ctx context.Context, h *history.History, req RegionalRequest) (*RegionalResult, error) {
	return explainAs(ctx, e, h, "regional", req.Budget, func(*prepared) (any, error) {
		err := req.normalize(h.Space)
		return req, err
	}, func(t *task, p *prepared) (*RegionalResult, error) {
		m, err := t.model(p, req.Surrogate)
		if err != nil {
			return nil, err
		}
		t.progress("regional PDP of "+req.Param, 0, 1)
		return regionalOf(t, p, m, req)
	})
}

func regionalOf(t *task, p *prepared, m *fitted, req RegionalRequest) (*RegionalResult, error) {
	ctx, workers := t.ctx, t.workers
	sp := p.h.Space
	j, _ := sp.Index(req.Param)
	opts := pdp.Options{GridSize: req.Grid, Samples: req.Samples, Alpha: req.Alpha, Band: pdp.Band(req.Band),
		KeepVariance: true, Seed: mcSeed, Workers: workers}
	if err := m.bandOptions(&opts, sp, []string{req.Param}); err != nil {
		return nil, err
	}
	ice, err := pdp.NewICE(ctx, m.model, sp, []int{j}, opts)
	if err != nil {
		return nil, err
	}
	// The best configuration locates the region a user cares about; when the
	// parameter of interest is off there, no leaf can hold it.
	res, err := regional.Explain(ctx, ice, p.data.X[p.data.Best], regional.Options{MaxSplits: req.MaxSplits,
		MaxDepth: req.MaxDepth, MinNodeSize: req.MinSize, MinImprovement: req.MinImprovement, Criterion: regional.Criterion(req.Criterion)})
	if err != nil {
		return nil, err
	}
	forest, err := t.forestFor(p, req.Surrogate, req.Band)
	if err != nil {
		return nil, err
	}
	var curve *ForestCurve
	if forest != nil {
		if curve, err = hullRegional(t, sp, ice, res, forest, opts); err != nil {
			return nil, err
		}
	}
	out := &RegionalResult{About: p.about("regional"), Result: res, Forest: curve, MinDelta: req.MinDelta, Note: conditionNote(sp, []string{req.Param})}
	out.Plateaus = holdPlateaus(res.Global, ice, m.data)
	out.describe(m)
	g := res.Global
	if out.MCGlobal, err = metrics.MC(g.SD); err != nil {
		return nil, err
	}
	out.MCRegion = out.MCGlobal
	if leaf := res.Best(); leaf != nil && res.Splits > 0 {
		if out.MCRegion, err = metrics.MC(leaf.PDP.SD); err != nil {
			return nil, err
		}
		if out.MCGlobal > 0 {
			if out.Delta, err = metrics.RelativeImprovement(out.MCGlobal, out.MCRegion); err != nil {
				return nil, err
			}
		}
		out.ShowRegional = out.Delta >= req.MinDelta
	}
	lo, hi, hw := math.Inf(1), math.Inf(-1), 0.0
	for i := range g.Mean {
		lo, hi = math.Min(lo, g.Mean[i]), math.Max(hi, g.Mean[i])
		hw += (g.Upper[i] - g.Lower[i]) / 2
	}
	out.Range, out.HalfWidth = hi-lo, hw/float64(len(g.Mean))
	if out.Extrapolation, err = curveExtrapolation(ctx, m, sp, ice, extrapolationPoints); err != nil {
		return nil, err
	}
	return out, nil
}
