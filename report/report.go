// Package report assembles every explanation xbo has of one tuning run into a
// single self-contained HTML file (inline SVG and CSS, readable without
// scripts) and a JSON document with all of its numbers: the run summary, the
// optimization trace, hyperparameter importance (Sobol indices of the GP
// with posterior intervals, package explain/sobol, or on request fANOVA,
// Hutter, Hoos and Leyton-Brown 2014, eq. 6), a PDP with confidence band
// for every hyperparameter (Moosbauer et al. 2021, eq. 2–5) together with
// the regional PDP of the confidence-splitting tree (the same paper,
// Algorithm 1, eq. 6) and its relative improvement δ = (MC_global − MC_region)/MC_global,
// the sampling bias as the maximum mean discrepancy between the evaluated
// configurations and a uniform sample (Gretton et al. 2012, eq. 5), and the
// ShapleyMBO decomposition of the best configuration (Croppi 2021,
// eq. 8). Its HTML ends with the trials themselves: parallel coordinates
// of the usable ones (the best drawn last and darkest) and a table of
// every trial (trials.go).
//
// A study with several objectives has no single best value: its report
// leads with the Pareto front (the feasible trials no other dominates, the
// hypervolume after each trial against a stated reference point) instead
// of a best-so-far trace, says which hyperparameters trade the objectives
// against each other (the engine's kind tradeoff, with the Shapley values
// of one Pareto-optimal trial for every objective), and explains every
// objective in turn, each with a surrogate of its own values
// (history.History.ForObjective, the API's objective=). A constrained
// study's best values are its feasible trials'.
//
// The package computes nothing itself: every number comes from the
// explanation engine (package explain), so the report's JSON holds exactly
// the results the API and the CLI give for the same requests. It only adds
// the reading aids a report needs (captions that quote band widths and
// sample sizes).
package report

import (
	"context"
	"errors"
	"fmt"
	"time"

	"xbo/explain"
	"xbo/history"
	"xbo/space"
)

// Options tune the computation: the engine's requests for the PDPs (the
// regional request of every parameter: grid, samples, band, splits), the
// importance and the Shapley decomposition of the best configuration. The
// trade-offs of a study with several objectives take the PDPs' grid,
// samples and level and the importance's method, so that they rest on the
// same curves and fractions as the sections of each objective. Zero
// values are the engine's defaults.
type Options struct {
	PDP        explain.RegionalRequest
	Importance explain.ImportanceRequest
	Shapley    explain.ShapleyRequest
	// Budgets is the comparison between budgets of a study with
	// intermediate values (its importance at budgets uses Importance).
	Budgets explain.BudgetsRequest
	// Progress, if set, is called after each step with the steps done and the
	// total; the CLI draws a progress bar from it.
	Progress func(done, total int, step string) `json:"-"`
}

// Report holds every number of the report; it is what --json writes. Its
// parts are the engine's results as the API serves them.
type Report struct {
	Summary Summary `json:"summary"`
	// Trace is the best-so-far trace of a study with one objective.
	Trace []TracePoint `json:"trace,omitempty"`
	// Pareto is the front of a study with several objectives.
	Pareto *ParetoSection `json:"pareto,omitempty"`
	// Tradeoff is the engine's trade-off explanation of a study with
	// several objectives, with the Shapley values of one Pareto-optimal
	// trial for every objective (the best feasible on the first).
	Tradeoff *explain.TradeoffResult `json:"tradeoff,omitempty"`
	// Importance, PDPs and Shapley explain the (first) objective.
	Importance *explain.ImportanceResult `json:"importance"`
	PDPs       []*explain.RegionalResult `json:"pdps"`
	Bias       *explain.BiasResult       `json:"sampling_bias"`
	Shapley    *explain.ShapleyResult    `json:"shapley"`
	// Objectives explains the other objectives of a study with several,
	// each as the first is above.
	Objectives []*ObjectiveSection `json:"objectives,omitempty"`
	// Budgets is set when the study has intermediate values.
	Budgets  *BudgetSection `json:"budgets,omitempty"`
	Requests Options        `json:"requests"`
	Seconds  float64        `json:"seconds"` // time spent computing

	h    *history.History
	data *history.Data
	// sections are the explanations of every objective, the first's
	// being the top-level fields.
	sections []*ObjectiveSection
}

// ObjectiveSection explains one objective: its importance, a PDP of every
// hyperparameter, and the Shapley decomposition of the best feasible
// configuration on that objective.
type ObjectiveSection struct {
	Objective  string                    `json:"objective"`
	Direction  space.Direction           `json:"direction"`
	BestTrial  int64                     `json:"best_trial"`
	BestValue  float64                   `json:"best_value"`
	Importance *explain.ImportanceResult `json:"importance"`
	PDPs       []*explain.RegionalResult `json:"pdps"`
	Shapley    *explain.ShapleyResult    `json:"shapley"`

	h    *history.History
	data *history.Data
}

// Summary describes the run.
type Summary struct {
	Source    string         `json:"source,omitempty"`
	Study     string         `json:"study,omitempty"`
	Objective string         `json:"objective"`
	Params    []string       `json:"params"`
	Usable    int            `json:"usable_trials"`
	Skipped   int            `json:"skipped_trials"`
	States    map[string]int `json:"states"`
	// BestTrial is the number of the best usable feasible trial (on the
	// first objective of a study with several).
	BestTrial  int64          `json:"best_trial"`
	BestValue  float64        `json:"best_value"`
	BestConfig map[string]any `json:"best_config"`
	// Objectives and Constraints are those of a study with several
	// objectives or with constraints; Feasible counts the usable trials
	// that keep every constraint, ParetoFront the Pareto-optimal ones.
	Objectives  []space.Objective `json:"objectives,omitempty"`
	Constraints []string          `json:"constraints,omitempty"`
	Feasible    int               `json:"feasible_trials"`
	ParetoFront int               `json:"pareto_front,omitempty"`
	// Note is the study's note, TrialNotes the trials' notes in number
	// order: what people wrote about the run (the dashboard, PUT …/note).
	Note       string      `json:"note,omitempty"`
	TrialNotes []TrialNote `json:"trial_notes,omitempty"`
}

// TrialNote is what a person wrote about one trial.
type TrialNote struct {
	Trial int64  `json:"trial"`
	State string `json:"state"`
	Note  string `json:"note"`
}

// BudgetSection is what the report says about budgets: whether the ranking
// at a low budget predicts the final one, and the importance at a few
// budgets (the lowest, a middle and the highest of the comparison's), all
// from the engine.
type BudgetSection struct {
	Correlation *explain.BudgetsResult      `json:"correlation,omitempty"`
	Importance  []*explain.ImportanceResult `json:"importance,omitempty"`
	// Notes say what could not be computed and why.
	Notes []string `json:"notes,omitempty"`
}

// maxBudgetImportances bounds the importances at budgets a report computes.
const maxBudgetImportances = 3

// TracePoint is one usable trial of the trace, in number order. An
// infeasible trial is never best: BestSoFar is the best feasible value up
// to the trial (null before the first feasible one).
type TracePoint struct {
	Trial      int64    `json:"trial"`
	Value      float64  `json:"value"`
	BestSoFar  *float64 `json:"best_so_far"`
	Infeasible bool     `json:"infeasible,omitempty"`
}

// Build computes every part of the report with the engine. It checks ctx
// between steps, and the engine stops a step when ctx is cancelled.
func Build(ctx context.Context, e *explain.Engine, h *history.History, opts Options) (*Report, error) {
	start := time.Now()
	if e == nil {
		return nil, fmt.Errorf("report: no explanation engine")
	}
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	data, err := h.Encode(explain.MinTrials)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	sp := h.Space
	// The histories explained: the study's, or one per objective.
	hs := []*history.History{h}
	if sp.MultiObjective() {
		hs = hs[:0]
		for _, name := range sp.ObjectiveNames() {
			hk, err := explain.Objective(h, name)
			if err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
			hs = append(hs, hk)
		}
	}
	total := 1 + len(hs)*(2+sp.Dim()) // bias; importance, d PDPs and Shapley per objective
	if sp.MultiObjective() {
		total++ // the trade-offs
	}
	var budgets *BudgetSection
	var importanceAt []int64
	if len(h.Budgets()) > 0 {
		if budgets, importanceAt, err = compareBudgets(ctx, e, h, opts.Budgets); err != nil {
			return nil, err
		}
		total += len(importanceAt)
	}
	done := 0
	step := func(name string) error {
		done++
		if opts.Progress != nil {
			opts.Progress(done, total, name)
		}
		return ctx.Err()
	}
	rep := &Report{Requests: opts, h: h, data: data}
	if err := rep.summarize(); err != nil {
		return nil, err
	}

	for _, hk := range hs {
		sec, err := explainObjective(ctx, e, hk, opts, step)
		if err != nil {
			return nil, err
		}
		rep.sections = append(rep.sections, sec)
	}
	first := rep.sections[0]
	rep.Importance, rep.PDPs, rep.Shapley = first.Importance, first.PDPs, first.Shapley
	rep.Objectives = rep.sections[1:]
	if len(rep.Objectives) == 0 {
		rep.Objectives = nil
	}
	if rep.Pareto != nil {
		if err := buildTradeoff(ctx, e, rep, opts); err != nil {
			return nil, err
		}
		if err := step("trade-offs"); err != nil {
			return nil, err
		}
	}
	if rep.Bias, err = e.SamplingBias(ctx, h); err != nil {
		return nil, fmt.Errorf("report: sampling bias: %w", err)
	}
	if err := step("sampling bias"); err != nil {
		return nil, err
	}
	for _, b := range importanceAt {
		req := opts.Importance
		req.Budget = &b
		res, err := e.Importance(ctx, h, req)
		switch {
		case errors.Is(err, explain.ErrInvalid):
			budgets.Notes = append(budgets.Notes, fmt.Sprintf("importance at budget %d: %v", b, err))
		case err != nil:
			return nil, fmt.Errorf("report: importance at budget %d: %w", b, err)
		default:
			budgets.Importance = append(budgets.Importance, res)
		}
		if err := step(fmt.Sprintf("importance at budget %d", b)); err != nil {
			return nil, err
		}
	}
	rep.Budgets = budgets
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// explainObjective computes the explanations of one objective's history
// (a study's only objective, or one of several): importance, the PDP of
// every hyperparameter, and the Shapley decomposition of the best feasible
// trial on that objective.
func explainObjective(ctx context.Context, e *explain.Engine, h *history.History, opts Options, step func(string) error) (*ObjectiveSection, error) {
	data, err := h.Encode(explain.MinTrials)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	of := ""
	if h.Objective != "" {
		of = " of " + h.Objective
	}
	bestTrial := h.Trials[data.Index[data.Best]]
	sec := &ObjectiveSection{Objective: h.Objective, Direction: h.Direction(), BestTrial: bestTrial.Number, BestValue: bestTrial.Value, h: h, data: data}
	if sec.Objective == "" {
		sec.Objective = h.Space.ObjectiveNames()[0]
	}
	if sec.Importance, err = e.Importance(ctx, h, opts.Importance); err != nil {
		return nil, fmt.Errorf("report: importance%s: %w", of, err)
	}
	if err := step("importance" + of); err != nil {
		return nil, err
	}
	for _, name := range h.Space.Names() {
		req := opts.PDP
		req.Param = name
		part, err := e.Regional(ctx, h, req)
		if err != nil {
			return nil, fmt.Errorf("report: PDP of %s%s: %w", name, of, err)
		}
		sec.PDPs = append(sec.PDPs, part)
		if err := step("PDP " + name + of); err != nil {
			return nil, err
		}
	}
	shap := opts.Shapley
	shap.Trial, shap.Point = &bestTrial.Number, ""
	if sec.Shapley, err = e.Shapley(ctx, h, shap); err != nil {
		return nil, fmt.Errorf("report: Shapley%s: %w", of, err)
	}
	if err := step("Shapley" + of); err != nil {
		return nil, err
	}
	return sec, nil
}

// compareBudgets asks the engine for the comparison between budgets and
// picks the budgets whose importance the report shows. A study whose
// budgets cannot be compared (too few trials at every budget) gets a note,
// not a failed report.
func compareBudgets(ctx context.Context, e *explain.Engine, h *history.History, req explain.BudgetsRequest) (*BudgetSection, []int64, error) {
	sec := &BudgetSection{}
	res, err := e.Budgets(ctx, h, req)
	if errors.Is(err, explain.ErrInvalid) {
		sec.Notes = append(sec.Notes, fmt.Sprintf("budgets: %v", err))
		return sec, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("report: budgets: %w", err)
	}
	sec.Correlation = res
	var steps []int64
	for _, c := range res.Budgets {
		if c.Step != nil && c.Trials >= explain.MinTrials {
			steps = append(steps, *c.Step)
		}
	}
	if len(steps) > maxBudgetImportances {
		steps = []int64{steps[0], steps[len(steps)/2], steps[len(steps)-1]}
	}
	return sec, steps, nil
}

func (rep *Report) summarize() error {
	h, data := rep.h, rep.data
	sp := h.Space
	counts := h.Counts()
	states := map[string]int{}
	for st, n := range counts {
		states[string(st)] = n
	}
	bestTrial := h.Trials[data.Index[data.Best]]
	rep.Summary = Summary{Source: h.Source, Study: h.Name, Objective: string(h.Direction()), Params: sp.Names(),
		Usable: len(data.Y), Skipped: len(h.Trials) - len(data.Y), States: states, BestTrial: bestTrial.Number,
		BestValue: bestTrial.Value, BestConfig: sp.ToMap(bestTrial.Params), Constraints: sp.Constraints, Note: h.Note}
	for _, t := range h.Trials {
		if t.Note != "" {
			rep.Summary.TrialNotes = append(rep.Summary.TrialNotes, TrialNote{Trial: t.Number, State: string(t.State), Note: t.Note})
		}
	}
	for _, i := range data.Index {
		if h.Feasible(&h.Trials[i]) {
			rep.Summary.Feasible++
		}
	}
	if sp.MultiObjective() {
		// Several objectives: the front, not a best-so-far trace.
		names, dirs := sp.ObjectiveNames(), sp.Directions()
		for k := range names {
			rep.Summary.Objectives = append(rep.Summary.Objectives, space.Objective{Name: names[k], Direction: dirs[k]})
		}
		var err error
		if rep.Pareto, err = paretoSection(h); err != nil {
			return fmt.Errorf("report: Pareto front: %w", err)
		}
		rep.Summary.ParetoFront = len(rep.Pareto.Front)
		return nil
	}
	var run *float64
	for k, y := range data.Y {
		t := &h.Trials[data.Index[k]]
		ok := h.Feasible(t)
		if ok && (run == nil || h.Better(y, *run)) {
			run = &y
		}
		rep.Trace = append(rep.Trace, TracePoint{Trial: t.Number, Value: y, BestSoFar: run, Infeasible: !ok})
	}
	return nil
}
