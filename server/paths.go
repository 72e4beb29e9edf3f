package server

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"xbo/explain/shapley"
	"xbo/opt"
	"xbo/space"
	"xbo/store"
	"xbo/surrogate"
)

// Bounds of the paths explainer: it explains many proposals per request, so
// its defaults are smaller than those of a single Shapley explanation.
const (
	// DefaultPathSamples is the Monte Carlo draws per parameter and
	// proposal (paper 004, Algorithm 2) when ?samples is not given.
	DefaultPathSamples = 200
	// MaxPathProposals is the most proposals one request explains; older
	// ones are left out (and the answer says so).
	MaxPathProposals = 200
	// maxPathSamples keeps ?samples bounded.
	maxPathSamples = 5000
)

// PathStep is one model-chosen proposal of a study and its Shapley values.
type PathStep struct {
	Trial       int64    `json:"trial"`
	Acquisition string   `json:"acquisition"`
	State       string   `json:"state"`
	Value       *float64 `json:"value,omitempty"`
	// Observed is the number of complete trials the proposing surrogate was
	// fitted on.
	Observed    int                  `json:"observed"`
	Explanation *shapley.Explanation `json:"explanation"`
}

// PathsResult is the JSON of explain/paths.
type PathsResult struct {
	Params []string `json:"params"`
	Tau    float64  `json:"tau"`
	Method string   `json:"method"`
	// Samples is K of the Monte Carlo estimator (0 for exact).
	Samples int `json:"samples,omitempty"`
	// Proposals counts the model-chosen proposals of the study; Explained
	// those in Steps (the last MaxPathProposals), Truncated tells that
	// older ones were left out and Note says so in words.
	Proposals int        `json:"proposals"`
	Explained int        `json:"explained"`
	Truncated bool       `json:"truncated"`
	Note      string     `json:"note,omitempty"`
	Steps     []PathStep `json:"steps"`
}

// objectiveUnits turns the optimizer's minimization-units surrogate back into
// the objective's own units, so path contributions to the mean compare with
// the shapley explainer's (which fits the study's values as they are).
type objectiveUnits struct {
	surrogate.Model
	sign float64
}

func (m objectiveUnits) Predict(x [][]float64, mean, variance []float64) error {
	if err := m.Model.Predict(x, mean, variance); err != nil {
		return err
	}
	if m.sign < 0 {
		for i := range mean {
			mean[i] = -mean[i]
		}
	}
	return nil
}

// explainPaths serves the desirability paths (paper 004; thesis section 7):
// the Shapley values for the mean, the standard error and cb = m − τ·s of
// every model-chosen proposal, each explained with the surrogate that
// proposed it (opt.SurrogateOf on the optimizer rebuilt from the study's
// history), in parallel.
func explainPaths(ctx context.Context, in *ExplainInput) (any, error) {
	tau, err := queryFloat(in, "tau", 1)
	if err != nil {
		return nil, err
	}
	samples, err := queryInt(in, "samples", DefaultPathSamples, 2)
	if err != nil {
		return nil, err
	}
	if samples > maxPathSamples {
		return nil, fmt.Errorf("%w: samples ≤ %d keeps a request bounded", ErrBadExplainRequest, maxPathSamples)
	}
	method := shapley.MonteCarlo
	if text := in.Query.Get("method"); text != "" {
		if method, err = shapley.ParseMethod(text); err != nil || method == shapley.Baseline {
			return nil, fmt.Errorf("%w: method=%q (want mc, exact or auto)", ErrBadExplainRequest, text)
		}
	}
	if in.All == nil {
		return nil, fmt.Errorf("paths: the study's trials are not available")
	}
	all, err := in.All()
	if err != nil {
		return nil, err
	}
	o, byNumber, err := rebuildOptimizer(in.Study, in.Space, all)
	if err != nil {
		return nil, err
	}
	type proposal struct {
		t  store.Trial
		id int64
		ot opt.Trial
	}
	var props []proposal
	for _, t := range all {
		id, ok := byNumber[t.Number]
		if !ok {
			continue
		}
		ot, err := o.Trial(id)
		if err != nil {
			return nil, fmt.Errorf("paths: trial %d: %w", t.Number, err)
		}
		if ot.Observed > 0 {
			props = append(props, proposal{t: t, id: id, ot: ot})
		}
	}
	res := &PathsResult{Params: in.Space.Names(), Tau: tau, Method: string(method), Proposals: len(props), Steps: []PathStep{}}
	if len(props) > MaxPathProposals {
		props = props[len(props)-MaxPathProposals:]
		res.Truncated = true
		res.Note = fmt.Sprintf("explained the last %d of %d model-chosen proposals", MaxPathProposals, res.Proposals)
	}
	res.Explained = len(props)
	if len(props) == 0 {
		res.Note = "no model-chosen proposals yet (only design, random or enqueued trials)"
		return res, nil
	}
	iterations := make([]int, len(props))
	for i := range props {
		iterations[i] = i
	}
	sign := in.Space.Sign()
	step := func(_ context.Context, it int) (shapley.Function, []float64, error) {
		p := props[it]
		model, err := o.SurrogateOf(p.id)
		if err != nil {
			return nil, nil, err
		}
		f, err := shapley.LCB(objectiveUnits{Model: model, sign: sign}, tau)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrBadExplainRequest, err)
		}
		return f, p.ot.U, nil
	}
	opts := shapley.Options{Method: method, Samples: samples, Space: in.Space, Seed: 1,
		BackgroundSize: min(250*in.Space.Dim(), 2000)}
	path, err := shapley.ExplainPath(ctx, iterations, step, opts)
	if err != nil {
		return nil, err
	}
	for _, st := range path.Steps {
		p := props[st.Iteration]
		ps := PathStep{Trial: p.t.Number, Acquisition: p.t.Acquisition, State: string(p.t.State),
			Observed: p.ot.Observed, Explanation: st.Explanation}
		if p.t.State == store.Complete {
			ps.Value = p.t.Value
		}
		res.Steps = append(res.Steps, ps)
	}
	if method == shapley.MonteCarlo {
		res.Samples = samples
	}
	if res.Steps[0].Explanation != nil {
		res.Method = string(res.Steps[0].Explanation.Method)
	}
	return res, nil
}

// rebuildOptimizer builds the study's optimizer from its stored trials, as
// an ask does after a change it cannot apply in place, and maps trial
// numbers to optimizer ids.
func rebuildOptimizer(st *store.Study, sp *space.Space, all []store.Trial) (*opt.Optimizer, map[int64]int64, error) {
	cfg, err := parseOptimizerConfig(st.Optimizer)
	if err != nil {
		return nil, nil, fmt.Errorf("stored optimizer of %q: %w", st.Name, err)
	}
	all = slices.Clone(all)
	slices.SortFunc(all, func(a, b store.Trial) int { return cmp.Compare(a.Number, b.Number) })
	vals := make(map[int64][]float64, len(all))
	for _, t := range all {
		v, err := sp.FromMap(t.Params)
		if err != nil {
			return nil, nil, fmt.Errorf("trial %d: %w", t.Number, err)
		}
		vals[t.Number] = v
	}
	hist, optID, _, err := history(all, vals)
	if err != nil {
		return nil, nil, fmt.Errorf("study %q: %w", st.Name, err)
	}
	o, err := cfg.build(sp, hist, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("study %q: rebuild optimizer: %w", st.Name, err)
	}
	return o, optID, nil
}
