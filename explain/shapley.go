package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"xbo/acq"
	"xbo/explain/shapley"
	"xbo/history"
	"xbo/opt"
	"xbo/space"
	"xbo/surrogate"
)

// Configurations a request can name instead of writing out a JSON object of
// natural values.
const (
	PointBest    = "best"    // the best usable trial
	PointLast    = "last"    // the last usable trial (by number)
	PointDefault = "default" // the space's defaults
)

// resolvedPoint is a configuration in unit encoding, with the trial it is
// (when it is one).
type resolvedPoint struct {
	unit  []float64
	trial *int64
}

// point resolves a trial number (any state: a running proposal too) or a
// configuration spec: best, last, default or a JSON object of natural values.
func (p *prepared) point(spec string, trial *int64) (*resolvedPoint, error) {
	h := p.h
	if trial != nil {
		i, ok := h.Index(*trial)
		if !ok {
			return nil, invalidf("no trial %d in this study", *trial)
		}
		u, err := h.Space.Encode(h.Trials[i].Params)
		if err != nil {
			return nil, invalidf("trial %d: %v", *trial, err)
		}
		n := *trial
		return &resolvedPoint{unit: u, trial: &n}, nil
	}
	rowTrial := func(row int) *resolvedPoint {
		n := h.Trials[p.data.Index[row]].Number
		return &resolvedPoint{unit: p.data.X[row], trial: &n}
	}
	switch strings.TrimSpace(spec) {
	case "", PointLast:
		return rowTrial(len(p.data.X) - 1), nil
	case PointBest, "incumbent":
		return rowTrial(p.data.Best), nil
	case PointDefault, "defaults":
		vals, ok := h.Space.Defaults()
		if !ok {
			return nil, invalidf("the space does not give a default for every active parameter")
		}
		u, err := h.Space.Encode(vals)
		if err != nil {
			return nil, invalidf("defaults: %v", err)
		}
		return &resolvedPoint{unit: u}, nil
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(spec))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, invalidf(`a configuration must be best, last, default or a JSON object such as {"x1": 0.2}: %v`, err)
	}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			f, err := n.Float64()
			if err != nil {
				return nil, invalidf("configuration: %s: %v", k, err)
			}
			m[k] = f
		}
	}
	vals, err := h.Space.FromMap(m)
	if err != nil {
		return nil, invalidf("configuration: %v", err)
	}
	u, err := h.Space.Encode(vals)
	if err != nil {
		return nil, invalidf("configuration: %v", err)
	}
	return &resolvedPoint{unit: u}, nil
}

// Limits of the Shapley family: background points, Monte Carlo draws, and
// the surrogate evaluations one explanation may cost (exact: 2^p coalitions
// × background; Monte Carlo: K draws × p parameters × 2 points).
const (
	MaxBackground     = 10_000
	MaxShapleySamples = 100_000
	MaxShapleyEvals   = 4_000_000
	DefaultBackground = 200
	// autoExactEvals bounds the exact estimator's cost when the method is
	// left to the engine: beyond it (2^p·background evaluations, i.e. more
	// than 9 parameters at the default background) permutation sampling
	// with DefaultAutoSamples draws is used, which reports its standard
	// errors. Both keep an explanation interactive on big studies.
	autoExactEvals     = 110_000
	DefaultAutoSamples = 500
	DefaultTau         = 1.0
	MaxLPIGrid         = 200
	MaxHPoints         = 400
	DefaultHPoints     = 100
	DefaultShapleyDraw = shapley.DefaultSamples
)

// Shapley targets: the confidence-bound family (mean, se and cb explained
// together from shared samples) or an acquisition's value.
const (
	TargetCB   = "cb"
	TargetEI   = "ei"
	TargetPI   = "pi"
	TargetPVar = "pvar"
)

// ShapleyRequest asks for the Shapley values of one configuration for the
// surrogate's mean, standard error and confidence bound (ShapleyMBO, paper
// 004), or for an acquisition. Zero values mean the defaults.
type ShapleyRequest struct {
	// Trial explains that trial's configuration (any state, e.g. a running
	// proposal); otherwise Point: best, last (default), default, or a JSON
	// object of natural values.
	Trial *int64 `json:"trial,omitempty"`
	Point string `json:"point,omitempty"`
	// Target is cb (default), ei, pi or pvar.
	Target string `json:"target"`
	// Tau is the exploration weight τ of cb (default 1; 0 is allowed).
	Tau *float64 `json:"tau"`
	// SE is what se (and cb's s) is the sd of: SELatent, the function
	// (default), or SEPredictive, a new observation, the surrogate's fitted
	// noise included (mlrMBO's convention; Croppi 2021 used it).
	SE string `json:"se,omitempty"`
	// Method is exact, mc, baseline or "" (exact up to 12 parameters).
	Method string `json:"method"`
	// Samples is K, the Monte Carlo draws per parameter (default 1000);
	// MaxSamples > Samples doubles K until the sample-size check passes.
	Samples    int `json:"samples"`
	MaxSamples int `json:"max_samples"`
	// Background is the number of uniform background points (default
	// 1000); Local > 0 draws them in a box of that half-width around the
	// point instead.
	Background int     `json:"background"`
	Local      float64 `json:"local"`
	// Baseline is the configuration of baseline Shapley (default "default").
	Baseline  string    `json:"baseline,omitempty"`
	Level     float64   `json:"level"`
	Surrogate Surrogate `json:"surrogate"`
	// Budget explains the values at that budget instead of the final ones
	// (see BudgetInfo; nil: the final values).
	Budget *int64 `json:"budget,omitempty"`
}

// ShapleyResult is the explanation of one configuration.
type ShapleyResult struct {
	About
	// Trial is the explained trial's number when the point is a trial.
	Trial *int64 `json:"trial,omitempty"`
	// Point is the configuration in natural values.
	Point       map[string]any       `json:"point"`
	Explanation *shapley.Explanation `json:"explanation"`
}

func normalizeTau(tau **float64) error {
	if *tau == nil {
		v := DefaultTau
		*tau = &v
	}
	if t := **tau; !(t >= 0) || t > 1e6 {
		return invalidf("tau %v must lie in [0, 1e6]", t)
	}
	return nil
}

// normalizeSE fills the default of a request's SE and checks it.
func normalizeSE(se *string) error {
	switch *se {
	case "":
		*se = opt.SELatent
	case opt.SELatent, opt.SEPredictive:
	default:
		return invalidf("se %q: want %s or %s", *se, opt.SELatent, opt.SEPredictive)
	}
	return nil
}

// confidenceBound is the ShapleyMBO function of a surrogate, with s the sd
// of the function (se latent) or of an observation (se predictive: the
// model's fitted noise added to its variance).
func confidenceBound(model surrogate.Model, tau float64, se string, maximize bool) (*shapley.LCBFunc, error) {
	f, err := shapley.ConfidenceBound(model, tau, maximize)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	if se == opt.SEPredictive {
		nv, ok := model.(surrogate.NoiseVariancer)
		if !ok {
			return nil, invalidf("se %s needs a surrogate with a fitted noise (the gp); this one has none", se)
		}
		f.NoiseVariance = nv.NoiseVariance()
	}
	return f, nil
}

func (r *ShapleyRequest) normalize(sp *space.Space) error {
	if r.Trial == nil && r.Point == "" {
		r.Point = PointLast
	}
	if r.Trial != nil && r.Point != "" {
		return invalidf("give a trial or a point, not both")
	}
	if r.Target == "" || r.Target == "lcb" || r.Target == "mean" || r.Target == "se" {
		r.Target = TargetCB
	}
	switch r.Target {
	case TargetCB, TargetEI, TargetPI, TargetPVar:
	default:
		return invalidf("target %q: want cb (mean, se and cb together), ei, pi or pvar", r.Target)
	}
	if err := normalizeTau(&r.Tau); err != nil {
		return err
	}
	if err := normalizeSE(&r.SE); err != nil {
		return err
	}
	if r.SE == opt.SEPredictive && r.Target != TargetCB {
		return invalidf("se %s applies to target cb only", r.SE)
	}
	m, err := shapley.ParseMethod(r.Method)
	if err != nil {
		return invalidf("%v", err)
	}
	if r.Background == 0 {
		r.Background = DefaultBackground
	}
	if m == "" {
		m = shapley.Exact
		if math.Ldexp(float64(r.Background), min(sp.Dim(), 62)) > autoExactEvals {
			m = shapley.MonteCarlo
			if r.Samples == 0 {
				r.Samples = DefaultAutoSamples
			}
		}
	}
	r.Method = string(m)
	if r.Samples == 0 {
		r.Samples = DefaultShapleyDraw
	}
	if r.Level == 0 {
		r.Level = shapley.DefaultLevel
	}
	if m == shapley.Baseline && r.Baseline == "" {
		r.Baseline = PointDefault
	}
	if m != shapley.Baseline && r.Baseline != "" {
		return invalidf("a baseline applies to method baseline only")
	}
	p := sp.Dim()
	switch {
	case r.Samples < 2 || r.Samples > MaxShapleySamples:
		return invalidf("samples %d must lie in 2..%d", r.Samples, MaxShapleySamples)
	case r.MaxSamples != 0 && (r.MaxSamples < r.Samples || r.MaxSamples > MaxShapleySamples):
		return invalidf("max_samples %d must lie in samples..%d", r.MaxSamples, MaxShapleySamples)
	case r.Background < 1 || r.Background > MaxBackground:
		return invalidf("background %d must lie in 1..%d", r.Background, MaxBackground)
	case math.IsNaN(r.Local) || r.Local < 0 || r.Local > 1:
		return invalidf("local %v must be a radius in [0, 1]", r.Local)
	case !(r.Level > 0 && r.Level < 1):
		return invalidf("level %v must lie in (0, 1)", r.Level)
	}
	if err := shapleyCost(m, p, r.Samples, r.MaxSamples, r.Background); err != nil {
		return err
	}
	return r.Surrogate.normalize()
}

// shapleyCost refuses explanations beyond MaxShapleyEvals evaluations.
func shapleyCost(m shapley.Method, p, samples, maxSamples, background int) error {
	exact := m == shapley.Exact || (m == "" && p <= shapley.DefaultMaxExactDim)
	var evals float64
	switch {
	case m == shapley.Baseline:
		evals = math.Ldexp(1, min(p, 62))
	case exact:
		evals = math.Ldexp(float64(background), min(p, 62))
	default:
		evals = 2 * float64(max(samples, maxSamples)) * float64(p)
	}
	if evals > MaxShapleyEvals {
		return invalidf("this explanation would evaluate the surrogate %.3g times (limit %d): use method mc, or fewer samples or background points",
			evals, MaxShapleyEvals)
	}
	return nil
}

// shapleyFunction is the explained function in the objective's own units:
// the confidence bound in the study's direction, or an acquisition (scored
// on the minimization form of the surrogate, as the optimizer does).
func shapleyFunction(p *prepared, model surrogate.Model, target string, tau float64, se string) (shapley.Function, error) {
	maximize := p.h.Direction() == space.Maximize
	if target == TargetCB {
		return confidenceBound(model, tau, se, maximize)
	}
	best := p.data.Y[p.data.Best]
	m := model
	if maximize {
		m, best = negated{model}, -best
	}
	a, err := acq.New(target, acq.Params{Best: best, Tau: &tau})
	if err != nil {
		return nil, invalidf("%v", err)
	}
	return shapley.Acquisition(m, a)
}

// negated is a maximization surrogate in minimization form: the mean
// changes sign, the variance does not.
type negated struct{ surrogate.Model }

func (n negated) Predict(x [][]float64, mean, variance []float64) error {
	if err := n.Model.Predict(x, mean, variance); err != nil {
		return err
	}
	for i := range mean {
		mean[i] = -mean[i]
	}
	return nil
}

func (r ShapleyRequest) options(p *prepared) (shapley.Options, error) {
	o := shapley.Options{Method: shapley.Method(r.Method), Samples: r.Samples, MaxSamples: r.MaxSamples,
		BackgroundSize: r.Background, LocalRadius: r.Local, Space: p.h.Space, Level: r.Level, Seed: mcSeed}
	if o.Method == shapley.Baseline {
		b, err := p.point(r.Baseline, nil)
		if err != nil {
			return o, fmt.Errorf("baseline: %w", err)
		}
		o.Baseline = b.unit
	}
	return o, nil
}

// Shapley explains one configuration.
func (e *Engine) Shapley(ctx context.Context, h *history.History, req ShapleyRequest) (*ShapleyResult, error) {
	var pt *resolvedPoint
	var opts shapley.Options
	return explainAs(ctx, e, h, "shapley", req.Budget, func(p *prepared) (any, error) {
		if err := req.normalize(h.Space); err != nil {
			return nil, err
		}
		var err error
		if pt, err = p.point(req.Point, req.Trial); err != nil {
			return nil, err
		}
		opts, err = req.options(p)
		// The key holds the resolved point: "last" moves with the data
		// anyway, and a trial's configuration is what is explained.
		return struct {
			ShapleyRequest
			Unit []float64 `json:"unit"`
		}{req, pt.unit}, err
	}, func(t *task, p *prepared) (*ShapleyResult, error) {
		m, err := t.model(p, req.Surrogate)
		if err != nil {
			return nil, err
		}
		fn, err := shapleyFunction(p, m.model, req.Target, *req.Tau, req.SE)
		if err != nil {
			return nil, err
		}
		t.progress("Shapley values", 0, 1)
		opts.Workers = t.workers
		ex, err := shapley.Explain(t.ctx, fn, pt.unit, opts)
		if err != nil {
			return nil, err
		}
		out := &ShapleyResult{About: p.about("shapley"), Trial: pt.trial, Point: h.Space.ToMap(h.Space.Decode(pt.unit)), Explanation: ex}
		out.describe(m)
		return out, nil
	})
}

// pointUnit is a resolved point's encoding (nil for none), for cache keys.
func pointUnit(pt *resolvedPoint) []float64 {
	if pt == nil {
		return nil
	}
	return pt.unit
}

// AblationRequest asks for the greedy ablation path on the surrogate from a
// source to a target configuration (Fawcett and Hoos 2016).
type AblationRequest struct {
	// Source (default "default") and Target (default "best"): best, last,
	// default or a JSON object of natural values.
	Source string `json:"source"`
	Target string `json:"target"`
	// Output is mean (default), se or cb.
	Output    string    `json:"output"`
	Tau       *float64  `json:"tau"`
	Surrogate Surrogate `json:"surrogate"`
	// Budget explains the values at that budget instead of the final ones
	// (see BudgetInfo; nil: the final values).
	Budget *int64 `json:"budget,omitempty"`
}

// AblationResult is the ablation path.
type AblationResult struct {
	About
	SourcePoint map[string]any `json:"source_point"`
	TargetPoint map[string]any `json:"target_point"`
	*shapley.Ablation
}

func (r *AblationRequest) normalize() error {
	if r.Source == "" {
		r.Source = PointDefault
	}
	if r.Target == "" {
		r.Target = PointBest
	}
	if r.Output == "" {
		r.Output = shapley.OutputMean
	}
	switch r.Output {
	case shapley.OutputMean, shapley.OutputSE, shapley.OutputCB:
	default:
		return invalidf("output %q: want mean, se or cb", r.Output)
	}
	if err := normalizeTau(&r.Tau); err != nil {
		return err
	}
	return r.Surrogate.normalize()
}

// Ablation computes the ablation path.
func (e *Engine) Ablation(ctx context.Context, h *history.History, req AblationRequest) (*AblationResult, error) {
	var src, tgt *resolvedPoint
	return explainAs(ctx, e, h, "ablation", req.Budget, func(p *prepared) (any, error) {
		if err := req.normalize(); err != nil {
			return nil, err
		}
		var err error
		if src, err = p.point(req.Source, nil); err != nil {
			return nil, fmt.Errorf("source: %w", err)
		}
		if tgt, err = p.point(req.Target, nil); err != nil {
			return nil, fmt.Errorf("target: %w", err)
		}
		return struct {
			AblationRequest
			Src, Tgt []float64
		}{req, src.unit, tgt.unit}, nil
	}, func(t *task, p *prepared) (*AblationResult, error) {
		m, err := t.model(p, req.Surrogate)
		if err != nil {
			return nil, err
		}
		maximize := p.h.Direction() == space.Maximize
		fn, err := shapley.ConfidenceBound(m.model, *req.Tau, maximize)
		if err != nil {
			return nil, invalidf("%v", err)
		}
		// A high se is what exploration wants; the mean and the bound are
		// better in the study's direction.
		better := maximize || req.Output == shapley.OutputSE
		a, err := shapley.Ablate(fn, src.unit, tgt.unit, shapley.AblationOptions{Output: req.Output, Maximize: better, Space: h.Space})
		if err != nil {
			return nil, err
		}
		out := &AblationResult{About: p.about("ablation"), Ablation: a,
			SourcePoint: h.Space.ToMap(h.Space.Decode(src.unit)), TargetPoint: h.Space.ToMap(h.Space.Decode(tgt.unit))}
		out.describe(m)
		return out, nil
	})
}

// LPIRequest asks for local parameter importance at a configuration
// (Biedenkapp et al. 2018), and optionally Friedman's H-statistic of the
// surrogate mean for every pair.
type LPIRequest struct {
	Point     string    `json:"point"` // default best
	Grid      int       `json:"grid"`  // values per float parameter (default 20)
	Tau       *float64  `json:"tau"`
	HStat     bool      `json:"hstat"`
	HPoints   int       `json:"hpoints"` // H-statistic sample (default 100)
	Surrogate Surrogate `json:"surrogate"`
	// Budget explains the values at that budget instead of the final ones
	// (see BudgetInfo; nil: the final values).
	Budget *int64 `json:"budget,omitempty"`
}

// LPIResult is local importance at a point, with the H-statistic when asked.
type LPIResult struct {
	About
	Point map[string]any `json:"point"`
	*shapley.LocalImportance
	Interaction *shapley.Interaction `json:"interaction,omitempty"`
}

func (r *LPIRequest) normalize(sp *space.Space) error {
	if r.Point == "" {
		r.Point = PointBest
	}
	if r.Grid == 0 {
		r.Grid = shapley.DefaultGrid
	}
	if r.HPoints == 0 {
		r.HPoints = DefaultHPoints
	}
	switch {
	case r.Grid < 2 || r.Grid > MaxLPIGrid:
		return invalidf("grid %d must lie in 2..%d", r.Grid, MaxLPIGrid)
	case r.HPoints < 2 || r.HPoints > MaxHPoints:
		return invalidf("hpoints %d must lie in 2..%d", r.HPoints, MaxHPoints)
	}
	if err := normalizeTau(&r.Tau); err != nil {
		return err
	}
	return r.Surrogate.normalize()
}

// LPI computes local parameter importance.
func (e *Engine) LPI(ctx context.Context, h *history.History, req LPIRequest) (*LPIResult, error) {
	var pt *resolvedPoint
	return explainAs(ctx, e, h, "lpi", req.Budget, func(p *prepared) (any, error) {
		if err := req.normalize(h.Space); err != nil {
			return nil, err
		}
		var err error
		pt, err = p.point(req.Point, nil)
		return struct {
			LPIRequest
			Unit []float64
		}{req, pointUnit(pt)}, err
	}, func(t *task, p *prepared) (*LPIResult, error) {
		m, err := t.model(p, req.Surrogate)
		if err != nil {
			return nil, err
		}
		fn, err := shapley.ConfidenceBound(m.model, *req.Tau, p.h.Direction() == space.Maximize)
		if err != nil {
			return nil, invalidf("%v", err)
		}
		lpi, err := shapley.LPI(fn, pt.unit, shapley.LPIOptions{Grid: req.Grid, Space: h.Space})
		if err != nil {
			return nil, err
		}
		out := &LPIResult{About: p.about("lpi"), Point: h.Space.ToMap(h.Space.Decode(pt.unit)), LocalImportance: lpi}
		out.describe(m)
		if req.HStat {
			t.progress("H-statistic", 0, 1)
			if out.Interaction, err = shapley.HStatistic(t.ctx, fn, shapley.HOptions{Output: shapley.OutputMean,
				Points: req.HPoints, Space: h.Space, Seed: mcSeed, Workers: t.workers}); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}
