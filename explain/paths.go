package explain

import (
	"context"
	"fmt"

	"xbo/explain/shapley"
	"xbo/history"
	"xbo/opt"
	"xbo/space"
	"xbo/surrogate"
)

// Limits of desirability paths: each proposal is explained with the
// surrogate that proposed it, rebuilt from the history, so a path costs one
// surrogate conditioning and one Monte Carlo Shapley explanation per
// proposal.
const (
	DefaultPathSamples   = 200
	DefaultPathProposals = 50
	MaxPathProposals     = 500
	MaxPathSamples       = 5000
)

// PathsRequest asks for desirability paths (Croppi 2021, section 7):
// the Shapley values of the mean, the standard error and the confidence
// bound of every model-chosen proposal, each with the surrogate of its own
// iteration. Zero values mean the defaults.
type PathsRequest struct {
	// Tau and SE are those of the confidence bound explained (see
	// ShapleyRequest); by default the study's own when its strategy is lcb
	// (τ = 1 and the latent sd otherwise), so that an LCB proposal is
	// explained by the bound that chose it.
	Tau *float64 `json:"tau"`
	SE  string   `json:"se,omitempty"`
	// Samples is K per parameter and proposal (default 200); Method is mc
	// (default) or exact.
	Samples int    `json:"samples"`
	Method  string `json:"method"`
	// Proposals is how many of the latest proposals are explained
	// (default 50).
	Proposals int `json:"proposals"`
	// Background points of the shared uniform background (default
	// min(250·p, 2000)).
	Background int     `json:"background"`
	Level      float64 `json:"level"`
}

// PathStep is one proposal and its Shapley values.
type PathStep struct {
	Trial       int64    `json:"trial"`
	Acquisition string   `json:"acquisition"`
	State       string   `json:"state"`
	Value       *float64 `json:"value,omitempty"`
	// Observed is the number of complete trials the proposing surrogate was
	// fitted on.
	Observed int `json:"observed"`
	// Units of this step's mean, standard error and confidence bound: those
	// of the model that proposed it (see PathsResult.Units).
	Units       string               `json:"units"`
	Point       map[string]any       `json:"point"`
	Explanation *shapley.Explanation `json:"explanation"`
}

// PathsResult holds the paths.
type PathsResult struct {
	About
	Params  []string `json:"params"`
	Tau     float64  `json:"tau"`
	SE      string   `json:"se"`
	Method  string   `json:"method"`
	Samples int      `json:"samples,omitempty"`
	// Proposals counts the model-chosen proposals; Explained those in Steps
	// (the latest); Truncated says older ones were left out.
	Proposals int    `json:"proposals"`
	Explained int    `json:"explained"`
	Truncated bool   `json:"truncated"`
	Note      string `json:"note,omitempty"`
	// Units of the mean, standard error and confidence bound explained:
	// "objective", or the warp the optimizer's proposal model was fitted
	// with ("yeo-johnson": the values standardized and power-transformed,
	// opt.Config.OutputWarp), whose order is the objective's; "mixed" when
	// the steps differ (a trust-region proposal's model is never warped),
	// each step's Units then says which.
	Units string     `json:"units"`
	Steps []PathStep `json:"steps"`
}

func (r *PathsRequest) normalize(sp *space.Space, settings opt.Settings) error {
	if r.Tau == nil && settings.Strategy == "lcb" && settings.Tau != 0 {
		tau := settings.Tau
		r.Tau = &tau
	}
	if err := normalizeTau(&r.Tau); err != nil {
		return err
	}
	if r.SE == "" && settings.Strategy == "lcb" {
		r.SE = settings.SE
	}
	if err := normalizeSE(&r.SE); err != nil {
		return err
	}
	if r.Samples == 0 {
		r.Samples = DefaultPathSamples
	}
	if r.Method == "" || r.Method == "auto" {
		r.Method = string(shapley.MonteCarlo)
	}
	m, err := shapley.ParseMethod(r.Method)
	if err != nil || (m != shapley.MonteCarlo && m != shapley.Exact) {
		return invalidf("method %q: want mc or exact", r.Method)
	}
	r.Method = string(m)
	if r.Proposals == 0 {
		r.Proposals = DefaultPathProposals
	}
	if r.Background == 0 {
		r.Background = min(250*sp.Dim(), 2000)
	}
	if r.Level == 0 {
		r.Level = shapley.DefaultLevel
	}
	switch {
	case r.Samples < 2 || r.Samples > MaxPathSamples:
		return invalidf("samples %d must lie in 2..%d", r.Samples, MaxPathSamples)
	case r.Proposals < 1 || r.Proposals > MaxPathProposals:
		return invalidf("proposals %d must lie in 1..%d", r.Proposals, MaxPathProposals)
	case r.Background < 1 || r.Background > MaxBackground:
		return invalidf("background %d must lie in 1..%d", r.Background, MaxBackground)
	case !(r.Level > 0 && r.Level < 1):
		return invalidf("level %v must lie in (0, 1)", r.Level)
	}
	return shapleyCost(m, sp.Dim(), r.Samples, 0, r.Background)
}

// objectiveUnits turns the optimizer's minimization-units surrogate back
// into the objective's own units.
type objectiveUnits struct {
	surrogate.Model
	maximize bool
}

// NoiseVariance passes the model's fitted noise on (0 for a model without
// one), which the sign of the mean does not change.
func (m objectiveUnits) NoiseVariance() float64 { return surrogate.NoiseVarianceOf(m.Model) }

func (m objectiveUnits) Predict(x [][]float64, mean, variance []float64) error {
	if err := m.Model.Predict(x, mean, variance); err != nil {
		return err
	}
	if m.maximize {
		for i := range mean {
			mean[i] = -mean[i]
		}
	}
	return nil
}

// Paths computes desirability paths. The proposals' surrogates are rebuilt
// from the history with the study's optimizer settings (history.Optimizer;
// the defaults for a file), as an ask does.
func (e *Engine) Paths(ctx context.Context, h *history.History, req PathsRequest) (*PathsResult, error) {
	var settings opt.Settings
	return explainAs(ctx, e, h, "paths", nil, func(p *prepared) (any, error) {
		if p.h.Objective != "" || len(h.Space.Constraints) > 0 {
			return nil, invalidf("paths replays a single-objective optimizer's proposals; a study with several objectives or constraints is optimized for all of them at once " +
				"(expected hypervolume improvement, or ParEGO's random scalarizations), so no one surrogate made its proposals (explain a proposal for each objective with shapley instead)")
		}
		var err error
		if settings, err = opt.ParseSettings(h.Optimizer); err != nil {
			return nil, invalidf("%v", err)
		}
		if err := req.normalize(h.Space, settings); err != nil {
			return nil, err
		}
		// Paths depend on every trial (proposals in flight too), not only
		// on the usable ones.
		full, err := h.Fingerprint(true)
		return struct {
			PathsRequest
			All string
		}{req, full}, err
	}, func(t *task, p *prepared) (*PathsResult, error) { return paths(t, p, settings, req) })
}

func paths(t *task, p *prepared, settings opt.Settings, req PathsRequest) (*PathsResult, error) {
	h := p.h
	hist, ids, err := opt.FromHistory(h)
	if err != nil {
		return nil, err
	}
	o, err := settings.New(h.Space, hist, t.workers)
	if err != nil {
		return nil, invalidf("rebuild the study's optimizer: %v", err)
	}
	type proposal struct {
		t  *history.Trial
		id int64
		ot opt.Trial
	}
	var props []proposal
	fidelity := 0 // proposals of the configuration × budget model, which cannot be rebuilt
	for i := range h.Trials {
		tr := &h.Trials[i]
		id, ok := ids[tr.Number]
		if !ok {
			continue
		}
		ot, err := o.Trial(id)
		if err != nil {
			return nil, fmt.Errorf("explain: paths: trial %d: %w", tr.Number, err)
		}
		switch {
		case ot.Fidelity:
			fidelity++
		case ot.Observed > 0:
			props = append(props, proposal{t: tr, id: id, ot: ot})
		}
	}
	res := &PathsResult{About: p.about("paths"), Params: h.Space.Names(), Tau: *req.Tau, SE: req.SE, Method: req.Method,
		Proposals: len(props), Units: "objective", Steps: []PathStep{}}
	if len(props) > req.Proposals {
		props = props[len(props)-req.Proposals:]
		res.Truncated = true
		res.Note = fmt.Sprintf("explained the last %d of %d model-chosen proposals", req.Proposals, res.Proposals)
	}
	if fidelity > 0 {
		skipped := fmt.Sprintf("%d proposals of the multi-fidelity (configuration × budget) model left out: the intermediate values they were fitted on are not kept as of their proposal", fidelity)
		if res.Note != "" {
			skipped = res.Note + "; " + skipped
		}
		res.Note = skipped
	}
	res.Explained = len(props)
	if len(props) == 0 {
		if fidelity == 0 {
			res.Note = "no model-chosen proposals yet (only design, random or enqueued trials)"
		}
		return res, nil
	}
	iterations := make([]int, len(props))
	for i := range props {
		iterations[i] = i
	}
	maximize := h.Direction() == space.Maximize
	step := func(_ context.Context, it int) (shapley.Function, []float64, error) {
		pr := props[it]
		model, err := o.SurrogateOf(pr.id)
		if err != nil {
			return nil, nil, err
		}
		f, err := confidenceBound(objectiveUnits{Model: model, maximize: maximize}, *req.Tau, req.SE, maximize)
		if err != nil {
			return nil, nil, err
		}
		return f, pr.ot.U, nil
	}
	total := len(props)
	opts := shapley.Options{Method: shapley.Method(req.Method), Samples: req.Samples, Space: h.Space, Seed: mcSeed,
		BackgroundSize: req.Background, Level: req.Level, Workers: t.workers,
		Progress: func(done, _ int) { t.progress("explaining proposals", done, total) }}
	path, err := shapley.ExplainPath(t.ctx, iterations, step, opts)
	if err != nil {
		return nil, err
	}
	warp := o.Config().OutputWarp
	for _, st := range path.Steps {
		pr := props[st.Iteration]
		ps := PathStep{Trial: pr.t.Number, Acquisition: pr.t.Acquisition, State: string(pr.t.State),
			Observed: pr.ot.Observed, Units: "objective", Point: h.Space.ToMap(pr.t.Params), Explanation: st.Explanation}
		if pr.ot.Warped {
			ps.Units = warp
		}
		switch {
		case len(res.Steps) == 0:
			res.Units = ps.Units
		case res.Units != ps.Units:
			res.Units = "mixed"
		}
		if pr.t.Usable() {
			v := pr.t.Value
			ps.Value = &v
		}
		res.Steps = append(res.Steps, ps)
	}
	if req.Method == string(shapley.MonteCarlo) {
		res.Samples = req.Samples
	}
	if e := res.Steps[0].Explanation; e != nil {
		res.Method = string(e.Method)
	}
	return res, nil
}
