package report

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"xbo/explain"
	"xbo/space"
)

// The trade-off section of a study with several objectives: which
// hyperparameters move a configuration along the Pareto front and which
// only push it off, and what each parameter contributes to every
// objective at one Pareto-optimal trial. Both are the engine's kind
// tradeoff (explain.Engine.Tradeoff, defined in docs/explanations.md,
// "Trade-offs between objectives"); the report only lays them out.

// tradeoffRequest asks the engine for the trade-offs with the report's
// own PDP settings (grid, Monte Carlo points, band level) and importance
// method, so that its bands and fractions are those of the sections that
// explain each objective, and for the Shapley values of trial.
func tradeoffRequest(opts Options, trial *int64) explain.TradeoffRequest {
	return explain.TradeoffRequest{Grid: opts.PDP.Grid, Samples: opts.PDP.Samples, Alpha: opts.PDP.Alpha, Method: opts.Importance.Method, Trial: trial}
}

// tradeoffTrial is the Pareto-optimal trial whose Shapley values the
// section shows: the one the report already names (the best feasible trial
// on the first objective, which the tie-break keeps on the front), else
// the first of the front; none when the front is empty.
func tradeoffTrial(rep *Report) *int64 {
	front := rep.Pareto.Front
	if len(front) == 0 {
		return nil
	}
	n := front[0].Trial
	if slices.ContainsFunc(front, func(f ParetoTrial) bool { return f.Trial == rep.Summary.BestTrial }) {
		n = rep.Summary.BestTrial
	}
	return &n
}

// buildTradeoff asks the engine for the section.
func buildTradeoff(ctx context.Context, e *explain.Engine, rep *Report, opts Options) error {
	res, err := e.Tradeoff(ctx, rep.h, tradeoffRequest(opts, tradeoffTrial(rep)))
	if err != nil {
		return fmt.Errorf("report: trade-offs: %w", err)
	}
	rep.Tradeoff = res
	return nil
}

// tradeoffView is the section as the page shows it.
type tradeoffView struct {
	Reading string
	Intro   string
	Head    []string
	Rows    []tradeoffRow
	Caption string
	// The Shapley values of one Pareto-optimal trial for every objective.
	ShapTitle string
	ShapCap   string
	ShapHead  []string
	ShapRows  [][]string
	ShapNote  string
}

type tradeoffRow struct {
	Param   string
	Cells   []tradeoffCell // importance per objective, conflict per pair
	Verdict string
	Class   string // the verdict's style
	Reading string
}

// tradeoffCell is a number and, on a line under it, its interval or what
// the engine established about it.
type tradeoffCell struct{ Value, Note string }

var verdictClass = map[string]string{explain.AlongFront: "along", explain.Together: "together", explain.Mixed: "mixed", explain.OneObjective: "one", explain.NoClearEff: "none"}

// importanceCell writes a fraction with its interval: the 95% interval of
// a GP's Sobol index, or ± the spread across a forest's trees.
func importanceCell(e explain.RankedEffect) tradeoffCell {
	if len(e.CI95) == 2 {
		return tradeoffCell{Number(e.Fraction), fmt.Sprintf("[%s, %s]", Number(e.CI95[0]), Number(e.CI95[1]))}
	}
	return tradeoffCell{Number(e.Fraction), "± " + Number(e.Std)}
}

// conflictCell writes a conflict and what the engine established about
// the pair: the parameter trades the two objectives or improves both, and
// whether the PD bands alone show it.
func conflictCell(q explain.TradeoffPair) tradeoffCell {
	rel := ""
	switch {
	case q.Opposed:
		rel = "trades"
	case q.Joint:
		rel = "improves both"
	}
	if rel != "" && q.BandBacked {
		rel += ", by the bands"
	}
	return tradeoffCell{Number(q.Conflict), rel}
}

func (rep *Report) tradeoffView() *tradeoffView {
	r := rep.Tradeoff
	os := r.Objectives
	rows := r.Params // in reading order (explain.TradeoffResult.Params)
	tv := &tradeoffView{Reading: r.Reading}
	tv.Head = []string{"hyperparameter"}
	for _, o := range os {
		tv.Head = append(tv.Head, fmt.Sprintf("importance for %s (%s)", o.Name, dirShort(o.Direction)))
	}
	var pairs []explain.TradeoffPair
	if len(rows) > 0 {
		pairs = rows[0].Pairs
	}
	for _, q := range pairs {
		tv.Head = append(tv.Head, fmt.Sprintf("conflict %s × %s", os[q.A].Name, os[q.B].Name))
	}
	tv.Head = append(tv.Head, "verdict")
	ci := false
	for _, p := range rows {
		row := tradeoffRow{Param: p.Param, Verdict: p.Verdict, Class: verdictClass[p.Verdict], Reading: p.Reading}
		for _, e := range p.Importance {
			row.Cells = append(row.Cells, importanceCell(e))
			ci = ci || len(e.CI95) == 2
		}
		for _, q := range p.Pairs {
			row.Cells = append(row.Cells, conflictCell(q))
		}
		tv.Rows = append(tv.Rows, row)
	}
	interval := "± one standard deviation across the forest's trees"
	if ci {
		interval = "its 95% interval from posterior samples of the objective's GP"
	}
	tv.Intro = fmt.Sprintf("Which hyperparameters trade the %d objectives against each other, from %d usable trials and %d Pareto-optimal ones: "+
		"each objective explained with its own surrogate, as in its sections below. The parameters that move a configuration along the front come first.",
		len(os), r.Trials, len(r.Front))
	tv.Caption = "How to read the table. Importance is the parameter's main effect on each objective: the fraction (0 to 1) of that objective's " +
		"variance over the space it explains alone, with " + interval + ". The conflict of a pair A × B is −ρ·√(F_A·F_B), where F are the two " +
		"importances and ρ the correlation of the parameter's partial dependence curves of A and B, each turned so that lower is better: it is " +
		"the parameter's share of the two objectives' correlation over the space. Above 0, changing the parameter improves one objective and " +
		"worsens the other (it trades them); below 0, it improves both; its size is at most √(F_A·F_B). The verdict asks for evidence, not " +
		"the estimate: a parameter affects an objective when the 95% interval of its importance lies above 1% of the variance or a change of it " +
		"moves the objective beyond its PD band; for two objectives it affects, ρ ≤ −0.5 trades them and ρ ≥ 0.5 improves both (marked under " +
		"the conflict; \"by the bands\" when a change of the parameter shows it beyond both PD bands on its own). It moves along the front when " +
		"it trades some pair, improves objectives together when it improves some pair together and trades none, affects objectives in no " +
		"consistent direction when |ρ| < 0.5 for every pair it affects, is established on one objective only when it affects one (which is not " +
		"to say it has no effect on the others), and has no effect established otherwise. The definitions are in docs/explanations.md, " +
		"section \"Trade-offs between objectives\"."

	if len(r.Shapley) == 0 {
		tv.ShapNote = "No Pareto-optimal trial to explain: no usable trial is feasible yet."
		return tv
	}
	n := r.Shapley[0].Trial
	i, _ := rep.h.Index(n)
	t := &rep.h.Trials[i]
	vals := rep.h.ObjectiveValues(t)
	parts := make([]string, len(os))
	for k, o := range os {
		parts[k] = fmt.Sprintf("%s %s", o.Name, Number(vals[k]))
	}
	which := "a Pareto-optimal trial"
	if n == rep.Summary.BestTrial {
		which = fmt.Sprintf("the best feasible trial on %s, on the front", os[0].Name)
	}
	tv.ShapTitle = fmt.Sprintf("Shapley values of trial #%d for every objective", n)
	var sums []string
	for _, s := range r.Shapley {
		sums = append(sums, fmt.Sprintf("%s: %s = %s + %s", s.Objective, Number(s.Prediction), Number(s.Average), Number(s.Prediction-s.Average)))
	}
	tv.ShapCap = fmt.Sprintf("Trial #%d (%s; %s): each objective's surrogate mean there split into one contribution φ per hyperparameter "+
		"(Shapley values, the game of Croppi 2021), relative to the objective's average over the space, in that objective's own units: "+
		"prediction = average + the sum of the φ (%s). A φ that lowers a minimized objective or raises a maximized one helps it; "+
		"a parameter whose φ help one objective and hurt another is where this trial traded them. Numbers of different columns are in "+
		"different units: compare signs and sizes within a column. Brackets give the φ's interval where it has one.",
		n, which, strings.Join(parts, ", "), strings.Join(sums, "; "))
	tv.ShapHead = []string{"hyperparameter", "value"}
	for _, o := range os {
		tv.ShapHead = append(tv.ShapHead, fmt.Sprintf("φ for %s (%s)", o.Name, dirShort(o.Direction)))
	}
	sp := rep.h.Space
	for _, p := range rows {
		j, _ := sp.Index(p.Param)
		val := sp.Format(j, t.Params[j])
		switch {
		case val == "":
			val = "inactive"
		case len(sp.Params[j].Choices) == 0 && sp.Params[j].Type != space.Int:
			val = Number(t.Params[j])
		}
		row := []string{p.Param, val}
		for _, s := range r.Shapley {
			cell := Number(s.Phi[p.Param])
			if lo, hi := s.Lower[p.Param], s.Upper[p.Param]; lo != hi {
				cell += fmt.Sprintf(" [%s, %s]", Number(lo), Number(hi))
			}
			row = append(row, cell)
		}
		tv.ShapRows = append(tv.ShapRows, row)
	}
	pred, avg := []string{"prediction (surrogate mean)", ""}, []string{"average over the space", ""}
	for _, s := range r.Shapley {
		pred, avg = append(pred, Number(s.Prediction)), append(avg, Number(s.Average))
	}
	tv.ShapRows = append(tv.ShapRows, pred, avg)
	return tv
}
