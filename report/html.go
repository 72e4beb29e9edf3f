package report

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"

	"xbo/explain"
	"xbo/explain/pdp"
	"xbo/explain/shapley"
	"xbo/space"
)

type kv struct{ Key, Value string }

type pdpView struct {
	Param   string
	Figure  template.HTML
	Tree    template.HTML
	Caption string
	TreeCap string
}

type pageView struct {
	Title      string
	Note       string      // the study's note
	TrialNotes []TrialNote // the trials' notes
	Nav        []kv        // anchor, label
	Summary    []kv
	States     []kv
	BestConfig []kv
	Trace      template.HTML
	TraceCap   string
	// Pareto leads the report of a study with several objectives, and
	// Tradeoff follows it.
	Pareto   *paretoView
	Tradeoff *tradeoffView
	// Objectives are the explanations of each objective (one for a study
	// with one).
	Objectives []objectiveView
	MMD        []kv
	MMDReading string
	// Budgets, for a study with intermediate values.
	Budgets *budgetView
	// Trials are the parallel coordinates and the table of every trial.
	Trials *trialsView
}

// objectiveView is the explanations of one objective. A study with one
// objective has one, with the section ids and titles the report always
// had; with several, each id carries the objective's index and each
// title its name.
type objectiveView struct {
	ID         string // suffix of the sections' ids: "" or "-k"
	ImpTitle   string
	PDPTitle   string
	CheckTitle string
	ShapTitle  string
	Importance template.HTML
	ImpCap     string
	Pairs      []kv
	PDPs       []pdpView
	PDPIntro   string
	// Check is the model check of the GP the PDPs rest on.
	Check        []kv
	CheckReading string
	// Bias places the sampling bias after the model check (one objective).
	Bias     bool
	Shapley  template.HTML
	ShapCap  string
	ShapRows [][]string
	ShapHead []string
}

// paretoView is the Pareto section: the front's figure, the hypervolume's,
// and the table of Pareto-optimal trials.
type paretoView struct {
	Figure     template.HTML
	Caption    string
	HV         template.HTML
	HVCap      string
	Head       []string
	Rows       []paretoRow
	TableIntro string
}

type paretoRow struct {
	Trial  int64
	Cells  []string // objective and constraint values
	Config string
}

type budgetView struct {
	Intro    string
	Reading  string
	PairHead []string
	Pairs    [][]string
	ImpCap   string
	ImpHead  []string
	ImpRows  [][]string
	Notes    []string
}

// WriteHTML renders the report as one self-contained HTML page. It renders
// into memory first, so w receives either the whole page or nothing.
func (rep *Report) WriteHTML(w io.Writer) error {
	if rep == nil || rep.h == nil || rep.data == nil {
		return errors.New("report: html: the report was not built by Build")
	}
	v, err := rep.view()
	if err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// usableRows are the natural values of the usable trials.
func (sec *ObjectiveSection) usableRows() [][]float64 {
	rows := make([][]float64, len(sec.data.Index))
	for k, i := range sec.data.Index {
		rows[k] = sec.h.Trials[i].Params
	}
	return rows
}

// bestRow is the best feasible configuration on the section's objective.
func (sec *ObjectiveSection) bestRow() []float64 {
	return sec.h.Trials[sec.data.Index[sec.data.Best]].Params
}

func (rep *Report) bestRow() []float64 { return rep.h.Trials[rep.data.Index[rep.data.Best]].Params }

// objectiveWords lists the objectives with their directions.
func objectiveWords(os []space.Objective) string {
	parts := make([]string, len(os))
	for k, o := range os {
		parts[k] = fmt.Sprintf("%s %s", o.Direction, o.Name)
	}
	return strings.Join(parts, ", ")
}

func (rep *Report) view() (*pageView, error) {
	sp := rep.h.Space
	s := rep.Summary
	maximize := sp.Objective == space.Maximize
	v := &pageView{Title: "xbo explanation report"}
	switch {
	case s.Study != "":
		v.Title += ": study " + s.Study
	case s.Source != "":
		v.Title += ": " + s.Source
	}
	multi := rep.Pareto != nil
	var surrogateText, pdpText string
	if len(rep.PDPs) > 0 {
		g := rep.PDPs[0]
		surrogateText = surrogateWords(g.Surrogate)
		pdpText = fmt.Sprintf("G = %d grid points, n = %d Monte Carlo points, %g%% bands (%s)",
			len(g.Global.Grid), g.Global.Samples, 100*g.Global.Level, bandName(string(g.Global.Band)))
	}
	objective := kv{"objective", fmt.Sprintf("%s (every number below is in the objective's own units: %s is better)", s.Objective,
		map[bool]string{true: "higher", false: "lower"}[maximize])}
	if multi {
		objective = kv{"objectives", objectiveWords(s.Objectives) + " (every number below is in its objective's own units and direction)"}
		surrogateText = "one per objective, fitted to that objective's values: " + surrogateText
	}
	v.Summary = []kv{
		{"source", s.Source},
		objective,
		{"hyperparameters", fmt.Sprintf("%d (%s)", len(s.Params), strings.Join(s.Params, ", "))},
		{"usable trials", fmt.Sprint(s.Usable)},
		{"trials without a usable value", fmt.Sprint(s.Skipped)},
	}
	if len(s.Constraints) > 0 {
		v.Summary = append(v.Summary, kv{"constraints", strings.Join(s.Constraints, ", ") + " (a trial is feasible when every constraint value is ≤ 0; an infeasible trial is never best)"},
			kv{"feasible usable trials", fmt.Sprint(s.Feasible)})
	}
	if multi {
		// Several objectives have no single best value: the front instead.
		v.Summary = append(v.Summary, kv{"Pareto front", fmt.Sprintf("%d trials (see below)", s.ParetoFront)})
	} else {
		v.Summary = append(v.Summary, kv{"best value", Number(s.BestValue)}, kv{"best trial", fmt.Sprintf("#%d", s.BestTrial)})
	}
	v.Summary = append(v.Summary, kv{"surrogate", surrogateText}, kv{"PDP settings", pdpText}, kv{"computed in", fmt.Sprintf("%.1f s", rep.Seconds)})
	for _, k := range sortedKeys(s.States) {
		v.States = append(v.States, kv{k, fmt.Sprint(s.States[k])})
	}
	v.Note, v.TrialNotes = s.Note, s.TrialNotes
	v.Nav = []kv{{"summary", "summary"}}
	v.Trials = rep.trialsView()
	if multi {
		v.Pareto = rep.paretoView()
		v.Nav = append(v.Nav, kv{"pareto", "Pareto front"})
		if rep.Tradeoff != nil {
			v.Tradeoff = rep.tradeoffView()
			v.Nav = append(v.Nav, kv{"tradeoff", "trade-offs"})
		}
		for k, sec := range rep.explained() {
			ov, err := rep.objectiveView(sec, k, true)
			if err != nil {
				return nil, err
			}
			v.Objectives = append(v.Objectives, *ov)
			v.Nav = append(v.Nav, kv{"importance" + ov.ID, sec.Objective})
		}
		v.Nav = append(v.Nav, kv{"bias", "sampling bias"})
		v.biasView(rep)
		if rep.Budgets != nil {
			v.Budgets = budgetText(rep.Budgets, rep.Importance)
			v.Nav = append(v.Nav, kv{"budgets", "budgets"})
		}
		v.Nav = append(v.Nav, kv{"parallel", "parallel coordinates"}, kv{"trials", "trials"})
		return v, nil
	}
	bestRow := rep.bestRow()
	for i, p := range sp.Params {
		x := bestRow[i]
		val := sp.Format(i, x)
		switch {
		case val == "":
			val = "inactive"
		case len(p.Choices) == 0 && p.Type != "int":
			val = Number(x) // the JSON keeps every digit
		}
		v.BestConfig = append(v.BestConfig, kv{p.Name, val})
	}

	// Trace.
	v.Trace = template.HTML(traceSVG(rep.Trace, maximize))
	lastImp := 0
	infeasible := 0
	values := make([]float64, len(rep.Trace))
	for i, p := range rep.Trace {
		values[i] = p.Value
		if i > 0 && !sameBest(p.BestSoFar, rep.Trace[i-1].BestSoFar) {
			lastImp = i
		}
		if p.Infeasible {
			infeasible++
		}
	}
	improvement := fmt.Sprintf("The last improvement came at usable trial %d of %d, so the final %d trials found nothing better.", lastImp+1, s.Usable, s.Usable-1-lastImp)
	if lastImp == s.Usable-1 {
		improvement = "The last trial was still an improvement: the search had not levelled off."
	}
	v.TraceCap = fmt.Sprintf("Each dot is one of the %d usable trials, in trial order, at its objective value; "+
		"the orange step line is the best value found so far%s. %s "+
		"%d trial(s) without a usable value (failed, pruned or unfinished) are not drawn. "+
		"The trace is data, not a model: it carries no uncertainty of its own, but a single noisy evaluation can set the best value.%s",
		s.Usable, infeasibleWords(infeasible), improvement, s.Skipped, clippedWords(values, maximize))

	ov, err := rep.objectiveView(rep.explained()[0], 0, false)
	if err != nil {
		return nil, err
	}
	ov.Bias = true
	v.Objectives = []objectiveView{*ov}
	v.biasView(rep)
	v.Nav = append(v.Nav, kv{"trace", "trace"}, kv{"importance", "importance"}, kv{"pdp", "partial dependence"}, kv{"bias", "sampling bias"}, kv{"shapley", "Shapley"})
	if rep.Budgets != nil {
		v.Budgets = budgetText(rep.Budgets, rep.Importance)
		v.Nav = append(v.Nav, kv{"budgets", "budgets"})
	}
	v.Nav = append(v.Nav, kv{"parallel", "parallel coordinates"}, kv{"trials", "trials"})
	return v, nil
}

// explained returns the section of every objective as the report's
// exported fields hold it (the first objective's results are the
// top-level ones), each with its objective's history.
func (rep *Report) explained() []*ObjectiveSection {
	first := *rep.sections[0]
	first.Importance, first.PDPs, first.Shapley = rep.Importance, rep.PDPs, rep.Shapley
	return append([]*ObjectiveSection{&first}, rep.Objectives...)
}

// objectiveView lays out the explanations of one objective (k of a study
// with several when multi).
func (rep *Report) objectiveView(sec *ObjectiveSection, k int, multi bool) (*objectiveView, error) {
	usable := len(sec.data.Y)
	ov := &objectiveView{ImpTitle: "Hyperparameter importance", PDPTitle: "Partial dependence with confidence bands",
		CheckTitle: "How well the model predicts these trials", ShapTitle: "Why the best configuration is good: Shapley decomposition"}
	if multi {
		name := fmt.Sprintf("%s (%s)", sec.Objective, sec.Direction)
		ov.ID = fmt.Sprintf("-%d", k)
		ov.ImpTitle = "Objective " + name + ": hyperparameter importance"
		ov.PDPTitle = "Objective " + name + ": partial dependence with confidence bands"
		ov.CheckTitle = "Objective " + sec.Objective + ": how well its model predicts these trials"
		ov.ShapTitle = fmt.Sprintf("Objective %s: why its best feasible configuration (trial #%d, %s) is good", sec.Objective, sec.BestTrial, Number(sec.BestValue))
	}
	// Importance.
	imp := sec.Importance
	ranked := rankImportance(imp)
	ov.Importance = template.HTML(importanceSVG(ranked))
	sumMain := 0.0
	for _, r := range imp.Ranking {
		sumMain += r.Fraction
	}
	pairsNote := ""
	if len(imp.Pairs) > 0 {
		sumPairs := 0.0
		for i, r := range imp.RankedPairs() {
			sumPairs += r.Fraction
			if i < 5 {
				// With its interval, as the CLI prints it (a ± of a
				// skewed interval would reach below 0%).
				ov.Pairs = append(ov.Pairs, kv{strings.Replace(r.Name, ",", " × ", 1), effectText(r.Effect)})
			}
		}
		pairsNote = fmt.Sprintf(" Pairwise interactions explain %s together (largest in the table below);", percent(sumPairs))
	}
	if imp.Method == explain.ImportanceGPSobol {
		ov.ImpCap = fmt.Sprintf("Sobol indices (method %s) of the variance of the GP's posterior mean over the whole space, from %d usable trials. "+
			"Hyperparameters are ranked by their total effect (dark bar: the fraction they take part in, alone and through interactions); "+
			"beside it, the main effect (light bar: the fraction one hyperparameter explains alone). Whiskers show the 95%% interval from posterior "+
			"sample functions of the GP, the uncertainty about the objective's true index given the data. Main effects add up to %s;%s "+
			"the rest is higher-order interaction. Importance is about variation over the whole space, not near the optimum.",
			imp.Method, usable, percent(sumMain), pairsNote)
	} else {
		ov.ImpCap = fmt.Sprintf("fANOVA (Hutter, Hoos and Leyton-Brown 2014; method %s): a random forest of %d trees is fitted to the %d usable trials, and each bar is the fraction of "+
			"the forest's prediction variance over the whole space that one hyperparameter explains alone (its main effect), averaged over trees; "+
			"whiskers show ±1 standard deviation across trees. Main effects add up to %s;%s the rest is higher-order interaction. "+
			"Two parameters whose whiskers overlap cannot be ranked apart with %d trials. Importance is about variation over the whole space, "+
			"not near the optimum.", imp.Method, imp.Surrogate.Trees, usable, percent(sumMain), pairsNote, usable)
	}
	if imp.Cap != "" {
		ov.ImpCap += " Here " + imp.Cap + "."
	}

	// PDPs: one shared vertical scale so that effect sizes compare by eye.
	yr := [2]float64{math.Inf(1), math.Inf(-1)}
	for _, p := range sec.PDPs {
		g := p.Global
		for i := range g.Mean {
			yr[0], yr[1] = math.Min(yr[0], g.Lower[i]), math.Max(yr[1], g.Upper[i])
		}
		if b := p.Best(); p.ShowRegional && b != nil {
			for i := range b.PDP.Mean {
				yr[0], yr[1] = math.Min(yr[0], b.PDP.Lower[i]), math.Max(yr[1], b.PDP.Upper[i])
			}
		}
	}
	order := map[string]int{}
	for i, r := range ranked {
		order[r.Param] = i
	}
	parts := append([]*explain.RegionalResult(nil), sec.PDPs...)
	sort.SliceStable(parts, func(a, b int) bool { return order[parts[a].Param] < order[parts[b].Param] })
	ov.PDPIntro = fmt.Sprintf("One figure per hyperparameter, in order of importance. Every panel shares the same vertical scale (%s to %s), "+
		"so a flat curve means a small effect compared with the others.", Number(yr[0]), Number(yr[1]))
	for _, p := range parts {
		pv, err := rep.pdpView(sec, p, &yr)
		if err != nil {
			return nil, err
		}
		ov.PDPs = append(ov.PDPs, *pv)
	}

	// The model check of the surrogate the PDPs rest on.
	if len(sec.PDPs) > 0 && sec.PDPs[0].ModelCheck != nil {
		c := sec.PDPs[0].ModelCheck
		ov.Check = []kv{
			{"status", c.Status},
			{"held-out 95% coverage", fmt.Sprintf("%d of %d trials (%s)", c.Trials-c.Misses, c.Trials, c.Method)},
		}
		if c.Spearman != nil {
			ov.Check = append(ov.Check, kv{"rank correlation of held-out predictions", Number(*c.Spearman) + " " + interval(c.SpearmanCI[0], c.SpearmanCI[1])})
		}
		if len(c.Outliers) > 0 {
			trials := make([]string, len(c.Outliers))
			for k, o := range c.Outliers {
				trials[k] = fmt.Sprintf("%d (%s)", o.Trial, Number(o.Value))
			}
			ov.Check = append(ov.Check, kv{"trials left out", strings.Join(trials, ", ")})
		}
		ov.CheckReading = c.Reading
	}

	// Shapley.
	if sec.Shapley != nil {
		var buf bytes.Buffer
		if err := shapley.WriteDecompositionSVG(&buf, sec.Shapley.Explanation, sec.h.Space); err != nil {
			return nil, err
		}
		ov.Shapley = template.HTML(buf.String())
		ov.ShapCap, ov.ShapHead, ov.ShapRows = shapleyText(sec.Shapley, usable)
	}
	return ov, nil
}

// biasView lays out the sampling bias (the evaluated configurations
// against a uniform sample: one measure for every objective).
func (v *pageView) biasView(rep *Report) {
	// Sampling bias.
	if sb := rep.Bias.Bias; sb != nil {
		v.MMD = []kv{
			{"MMD (evaluated vs uniform)", Number(sb.MMD)},
			{"as a multiple of a uniform sample's", fmt.Sprintf("%s× (95%% of uniform samples of the same size stay below %s×)", Number(sb.Ratio), Number(sb.Null95Ratio))},
			{"level", sb.Level},
			{"measured on", fmt.Sprintf("%d evaluated configurations against a uniform reference of %d points (Gaussian kernel on the unit cube)", sb.Points, sb.Reference)},
		}
		v.MMDReading = sb.Reading
		if sb.Warning != "" {
			v.MMDReading += " " + sb.Warning
		}
	}

}

// sameBest: two best-so-far values are equal (both absent, or the same).
func sameBest(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// infeasibleWords says how the trace treats infeasible trials, if any.
func infeasibleWords(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" among the feasible trials (the %d infeasible ones, crossed, are never best)", n)
}

// budgetText lays out the section on budgets: the rank correlations between
// budgets, and the main effects at each budget beside the final ones.
func budgetText(sec *BudgetSection, final *explain.ImportanceResult) *budgetView {
	bv := &budgetView{Notes: sec.Notes}
	if c := sec.Correlation; c != nil {
		bv.Intro = fmt.Sprintf("The trials reported intermediate values. A trial's value at a budget is %s. "+
			"Each row compares the values of the trials that have one at both budgets: Spearman's and Kendall's rank correlations "+
			"(and Spearman's among the better half of those trials by the later value: does the budget rank the good ones among themselves?) "+
			"with %g%% intervals (%s). %d finished trials have intermediate values, %d are complete.",
			c.Rule, 100*c.Level, c.Note, c.Curves, c.Final)
		bv.Reading = c.Reading
		bv.PairHead = []string{"budgets", "trials", "Spearman", "interval", "Kendall", "interval", "better half: trials", "Spearman", "interval"}
		interval := func(r *explain.RankCorrelation) (string, string) {
			return Number(r.Value), interval(r.Lower, r.Upper)
		}
		for _, p := range c.Pairs {
			row := []string{p.Label, fmt.Sprint(p.Trials), "—", p.Note, "—", "", "", "—", ""}
			if p.Spearman != nil && p.Kendall != nil {
				row[2], row[3] = interval(p.Spearman)
				row[4], row[5] = interval(p.Kendall)
			}
			if b := p.BetterHalf; b != nil {
				row[6], row[8] = fmt.Sprint(b.Trials), b.Note
				if b.Spearman != nil {
					row[7], row[8] = interval(b.Spearman)
				}
			}
			bv.Pairs = append(bv.Pairs, row)
		}
	}
	if len(sec.Importance) == 0 {
		return bv
	}
	bv.ImpHead = []string{"hyperparameter"}
	for _, r := range sec.Importance {
		bv.ImpHead = append(bv.ImpHead, fmt.Sprintf("budget %d (%d trials, %d pruned)", r.Budget.Step, r.Budget.Trials, r.Budget.Pruned))
	}
	bv.ImpHead = append(bv.ImpHead, fmt.Sprintf("final (%d trials)", final.Trials))
	for _, rk := range final.Ranking {
		row := []string{rk.Param}
		for _, r := range append(append([]*explain.ImportanceResult(nil), sec.Importance...), final) {
			e, ok := r.Main[rk.Param]
			switch {
			case !ok:
				row = append(row, "—")
			default:
				row = append(row, effectText(e))
			}
		}
		bv.ImpRows = append(bv.ImpRows, row)
	}
	bv.ImpCap = fmt.Sprintf("Main effects (method %s) of each hyperparameter when the objective is the value at a budget, beside the final "+
		"importance above: a parameter that matters early but not at the end (or the reverse) is one whose low-budget signal misleads.",
		final.Method)
	return bv
}

// surrogateWords describes the model an explanation rests on.
func surrogateWords(si *explain.SurrogateInfo) string {
	if si == nil {
		return ""
	}
	kind := "random forest"
	if si.Kind == explain.SurrogateGP {
		kind = "GP (" + si.Kernel + " kernel)"
	}
	if si.Approximate {
		return fmt.Sprintf("%s conditioned on %d of the %d usable trials (%s)", kind, si.ConditionedOn, si.Trials, si.Note)
	}
	return fmt.Sprintf("%s fitted on all %d usable trials", kind, si.Trials)
}

func (rep *Report) pdpView(sec *ObjectiveSection, p *explain.RegionalResult, yr *[2]float64) (*pdpView, error) {
	sp := sec.h.Space
	j, ok := sp.Index(p.Param)
	if !ok {
		return nil, fmt.Errorf("unknown parameter %q", p.Param)
	}
	param := sp.Params[j]
	rows := sec.usableRows()
	rug := make([]float64, 0, len(rows))
	for _, r := range rows {
		rug = append(rug, r[j])
	}
	best := sec.bestRow()[j]
	mk := func(r *pdp.Result, title string) (pdp.Panel, error) {
		panel, err := pdp.PanelOf(r, title)
		if err != nil {
			return panel, err
		}
		panel.Scale, panel.Rug, panel.Best, panel.YRange = param.ToUnit, rug, &best, yr
		return panel, nil
	}
	res := p.Result
	g, err := mk(res.Global, fmt.Sprintf("global PDP of %s", p.Param))
	if err != nil {
		return nil, err
	}
	panels := []pdp.Panel{g}
	leaf := res.Best()
	if p.ShowRegional && leaf != nil {
		r, err := mk(leaf.PDP, fmt.Sprintf("regional PDP, best region (δ = %.0f%%)", 100*p.Delta))
		if err != nil {
			return nil, err
		}
		panels = append(panels, r)
	}
	var buf bytes.Buffer
	if len(param.Choices) > 0 {
		buf.WriteString(categoricalSVG(panels, 2))
	} else if err := pdp.WriteSVG(&buf, panels, 2); err != nil {
		return nil, err
	}
	pv := &pdpView{Param: p.Param, Figure: template.HTML(buf.String())}

	var c strings.Builder
	if len(param.Choices) > 0 {
		fmt.Fprintf(&c, "Each point is the partial dependence of the predicted objective on one level of %s: the surrogate's mean averaged over "+
			"n = %d configurations of the other parameters drawn uniformly; its bar is the %g%% band (%s). Under each level, how many of the "+
			"%d usable trials have it; the best configuration's level is orange. ",
			p.Param, res.Global.Samples, 100*res.Global.Level, bandName(string(res.Global.Band)), len(rows))
	} else {
		fmt.Fprintf(&c, "The blue line is the partial dependence of the predicted objective on %s: the surrogate's mean averaged over "+
			"n = %d configurations of the other parameters drawn uniformly, at %d values of %s; the shaded band is the %g%% band (%s). "+
			"Ticks along the bottom are the %d evaluated values, the dashed orange line the best configuration. ",
			p.Param, res.Global.Samples, len(res.Global.Grid), p.Param, 100*res.Global.Level, bandName(string(res.Global.Band)), len(rows))
	}
	if p.Note != "" {
		c.WriteString(strings.ToUpper(p.Note[:1]) + p.Note[1:] + ". ")
	}
	ratio := p.Range / math.Max(p.HalfWidth, 1e-300)
	switch {
	case p.HalfWidth == 0:
		fmt.Fprintf(&c, "The curve spans %s; the model reports no uncertainty. ", Number(p.Range))
	case ratio >= 2:
		fmt.Fprintf(&c, "The curve spans %s, %.1f× the band's mean half-width %s: the effect is well resolved by the data. ", Number(p.Range), ratio, Number(p.HalfWidth))
	case ratio >= 1:
		fmt.Fprintf(&c, "The curve spans %s against a band half-width of %s: the direction of the effect is resolved, its size only roughly. ", Number(p.Range), Number(p.HalfWidth))
	default:
		fmt.Fprintf(&c, "The curve spans only %s, less than the band's mean half-width %s: these trials cannot tell this curve from a flat one. ", Number(p.Range), Number(p.HalfWidth))
	}
	switch {
	case res.Splits == 0:
		c.WriteString("The confidence-splitting tree found no split that makes the band narrower.")
	case leaf == nil:
		fmt.Fprintf(&c, "The tree made %d split(s), but the best configuration has %s switched off, so no region holds it.", res.Splits, p.Param)
	case math.IsNaN(best):
		fmt.Fprintf(&c, "The best configuration has %s switched off; the tree's regions (below) still show where the band is narrowest, "+
			"and the region its other values fall in is %s confident (δ).", p.Param, moreOrLess(p.Delta, "more", "less"))
	case p.ShowRegional:
		fmt.Fprintf(&c, "In the region holding the best configuration (%s; %d of %d Monte Carlo points) the band is %.0f%% narrower "+
			"(relative improvement δ of the mean standard deviation, %s → %s); its regional PDP is drawn on the right and is the "+
			"more trustworthy reading near the optimum.", peopleNumbers(strings.Join(leaf.Path, " and ")), leaf.Size, res.Global.Samples,
			100*p.Delta, Number(p.MCGlobal), Number(p.MCRegion))
	default:
		// δ may be negative: the region is then less confident, said so.
		how := moreOrLess(p.Delta, "more", "less")
		if p.Delta >= 0 {
			how = "only " + how
		}
		fmt.Fprintf(&c, "The region of the best configuration (%s) is %s confident than the whole space (δ below %.0f%%), so neither its regional PDP nor the tree is drawn.",
			peopleNumbers(strings.Join(leaf.Path, " and ")), how, 100*p.MinDelta)
	}
	if e := p.Extrapolation; e != nil && len(e.Beyond) > 0 {
		at := make([]string, len(e.Beyond))
		for k, g := range e.Beyond {
			at[k] = Number(res.Global.Grid[g])
			if res.Global.Labels != nil {
				at[k] = pdp.LabelTexts(res.Global.Labels)[g]
			}
		}
		fmt.Fprintf(&c, " At %s the curve rests on the model's extrapolation more than with uniformly random trials: no trial is near, "+
			"so its value there is mostly the model's prior.", strings.Join(at, ", "))
	}
	pv.Caption = c.String()
	// The tree is drawn with the regional PDP it leads to, or to show the
	// regions of a configuration that has the parameter switched off;
	// never under a sentence that says nothing regional is drawn.
	if res.Splits > 0 && (p.ShowRegional || leaf != nil && math.IsNaN(best)) {
		pv.Tree = template.HTML(treeSVG(res))
		pv.TreeCap = fmt.Sprintf("Confidence-splitting tree for %s (Moosbauer et al. 2021, Algorithm 1): each box is a set of Monte Carlo points of the other "+
			"parameters, split where the ICE curves of the posterior variance are most alike on each side (impurity R, eq. 6, from %s at the root "+
			"to %s over the leaves). The highlighted leaf holds the best configuration.", p.Param, Number(res.RootImpurity), Number(res.LeafImpurity))
	}
	return pv, nil
}

func shapleyText(r *explain.ShapleyResult, n int) (string, []string, [][]string) {
	e := r.Explanation
	effErr := 0.0
	for _, a := range e.Outputs {
		effErr = math.Max(effErr, a.EfficiencyError)
	}
	method := "exactly, over all 2^p coalitions"
	if e.Method == shapley.MonteCarlo {
		method = fmt.Sprintf("by permutation sampling with K = %d draws per parameter (whiskers: %g%% intervals)", e.Samples, 100*e.Level)
	}
	tau := 0.0
	if e.Tau != nil {
		tau = *e.Tau
	}
	bound, better, sign := "lower", "lowers (left)", "−"
	if r.Direction == space.Maximize {
		bound, better, sign = "upper", "raises (right)", "+"
	}
	cap := fmt.Sprintf("ShapleyMBO (Croppi 2021) splits the %s confidence bound %s (τ = %g) of the surrogate at the best configuration "+
		"into one contribution per hyperparameter, relative to the average over %d background configurations drawn uniformly, computed %s "+
		"(efficiency error %.2g). Blue: φ(m), how much the parameter's value moves the predicted objective (in its own units) — exploitation; "+
		"orange: %sτ·φ(se), its share of the uncertainty bonus — exploration; the diamond is φ(cb), their sum. A value that %s cb makes the "+
		"configuration more attractive to the optimizer. The surrogate is fitted on all %d usable trials, so this shows what the final model credits each value for.",
		bound, e.Formula, tau, e.BackgroundSize, method, effErr, sign, better, n)
	head := []string{"parameter", "value"}
	for _, a := range e.Outputs {
		head = append(head, "φ("+a.Output+")")
	}
	var rows [][]string
	for j, name := range e.Params {
		val := "inactive"
		if v, ok := r.Point[name]; ok {
			val = fmt.Sprint(v)
			if f, isFloat := v.(float64); isFloat {
				val = Number(f)
			}
		}
		row := []string{name, val}
		for _, a := range e.Outputs {
			row = append(row, Number(a.Phi[j]))
		}
		rows = append(rows, row)
	}
	pay := []string{"payout f(θ) − mean f", ""}
	for _, a := range e.Outputs {
		pay = append(pay, Number(a.Payout))
	}
	rows = append(rows, pay)
	return cap, head, rows
}

func bandName(b string) string {
	switch b {
	case string(pdp.BandExact):
		return "exact, eq. 4"
	case string(pdp.BandCalibrated):
		return "calibrated: eq. 4 scaled by the surrogate's leave-one-out variance factor, plus the Monte Carlo error of the average"
	}
	return "mean of pointwise variances, eq. 5, which never understates the surrogate's uncertainty"
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: Georgia, "Times New Roman", serif; max-width: 900px; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
td, th { border-bottom: 1px solid #e5e5e5; padding: 0.25em 0.8em 0.25em 0; text-align: left; vertical-align: top; }
th { font-weight: bold; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 0.8em 0 1.6em 0; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 0.9em; color: #444; margin-top: 0.4em; }
.reading { background: #f6f6f0; border-left: 3px solid #b5b58a; padding: 0.5em 0.8em; }
td.verdict { border-left: 4px solid transparent; padding-left: 0.4em; }
td.verdict.along { border-left-color: #E69F00; font-weight: bold; }
td.verdict.together { border-left-color: #009E73; }
td.verdict.mixed { border-left-color: #CC79A7; }
td.verdict.one { border-left-color: #56B4E9; }
td.verdict.none { border-left-color: #ccc; color: #666; }
p.caption, ul.caption { font-size: 0.9em; color: #444; }
td small { color: #555; }
nav a { margin-right: 1em; }
p.note { background: #fffbea; border-left: 3px solid #E69F00; padding: .3em .6em; max-width: 60em; }
p.note, td.note-text { white-space: pre-wrap; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<nav>{{range .Nav}}<a href="#{{.Key}}">{{.Value}}</a>{{end}}</nav>

<h2 id="summary">Run summary</h2>
{{if .Note}}<p class="note" id="study-note"><strong>Study note</strong> {{.Note}}</p>{{end}}
<table>{{range .Summary}}<tr><th>{{.Key}}</th><td>{{.Value}}</td></tr>{{end}}</table>
{{if .TrialNotes}}<h3 id="trial-notes">Trial notes</h3>
<table id="trial-notes-table"><tr><th>trial</th><th>state</th><th>note</th></tr>
{{range .TrialNotes}}<tr data-trial="{{.Trial}}"><th>#{{.Trial}}</th><td>{{.State}}</td><td class="note-text">{{.Note}}</td></tr>
{{end}}</table>{{end}}
{{if .States}}<h3>Trials by state</h3>
<table>{{range .States}}<tr><th>{{.Key}}</th><td class="num">{{.Value}}</td></tr>{{end}}</table>{{end}}
{{if .BestConfig}}<h3>Best configuration</h3>
<table>{{range .BestConfig}}<tr><th>{{.Key}}</th><td>{{.Value}}</td></tr>{{end}}</table>{{end}}
{{if .Trace}}
<h2 id="trace">Optimization trace</h2>
<figure>{{.Trace}}<figcaption>{{.TraceCap}}</figcaption></figure>
{{end}}{{with .Pareto}}
<h2 id="pareto">Pareto front</h2>
<figure>{{.Figure}}<figcaption>{{.Caption}}</figcaption></figure>
{{if .HV}}<h3 id="hypervolume">Hypervolume over trials</h3>
<figure>{{.HV}}<figcaption>{{.HVCap}}</figcaption></figure>{{end}}
<h3 id="pareto-trials">Pareto-optimal trials</h3>
<p>{{.TableIntro}}</p>
<table id="pareto-table"><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr data-trial="{{.Trial}}"><th>#{{.Trial}}</th>{{range .Cells}}<td class="num">{{.}}</td>{{end}}<td>{{.Config}}</td></tr>
{{end}}</table>
{{end}}{{with .Tradeoff}}
<h2 id="tradeoff">Trade-offs between objectives</h2>
<p class="reading">{{.Reading}}</p>
<p>{{.Intro}}</p>
<table id="tradeoff-table"><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr data-param="{{.Param}}"><th>{{.Param}}</th>{{range .Cells}}<td class="num">{{.Value}}{{if .Note}}<br><small>{{.Note}}</small>{{end}}</td>{{end}}<td class="verdict {{.Class}}">{{.Verdict}}</td></tr>
{{end}}</table>
<p class="caption">{{.Caption}}</p>
<ul class="caption">{{range .Rows}}<li>{{.Reading}}.</li>{{end}}</ul>
{{if .ShapRows}}<h3 id="tradeoff-shapley">{{.ShapTitle}}</h3>
<p class="caption">{{.ShapCap}}</p>
<table id="tradeoff-shapley-table"><tr>{{range .ShapHead}}<th>{{.}}</th>{{end}}</tr>
{{range .ShapRows}}<tr>{{range $i, $c := .}}{{if $i}}<td class="num">{{$c}}</td>{{else}}<th>{{$c}}</th>{{end}}{{end}}</tr>
{{end}}</table>{{else}}<p>{{.ShapNote}}</p>{{end}}
{{end}}{{range .Objectives}}
<h2 id="importance{{.ID}}">{{.ImpTitle}}</h2>
<figure>{{.Importance}}<figcaption>{{.ImpCap}}</figcaption></figure>
{{if .Pairs}}<h3>Largest pairwise interactions</h3>
<table>{{range .Pairs}}<tr><th>{{.Key}}</th><td class="num">{{.Value}}</td></tr>{{end}}</table>{{end}}

<h2 id="pdp{{.ID}}">{{.PDPTitle}}</h2>
<p>{{.PDPIntro}}</p>
{{range .PDPs}}<section>
<h3>{{.Param}}</h3>
<figure>{{.Figure}}<figcaption>{{.Caption}}</figcaption></figure>
{{if .Tree}}<figure>{{.Tree}}<figcaption>{{.TreeCap}}</figcaption></figure>{{end}}
</section>
{{end}}
{{if .Check}}<h2 id="check{{.ID}}">{{.CheckTitle}}</h2>
<table>{{range .Check}}<tr><th>{{.Key}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<p class="reading">{{.CheckReading}}</p>
{{end}}{{if .Bias}}
<h2 id="bias">Sampling bias</h2>
<table>{{range $.MMD}}<tr><th>{{.Key}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<p class="reading">{{$.MMDReading}}</p>
{{end}}
<h2 id="shapley{{.ID}}">{{.ShapTitle}}</h2>
{{if .Shapley}}<figure>{{.Shapley}}<figcaption>{{.ShapCap}}</figcaption></figure>
<table><tr>{{range .ShapHead}}<th>{{.}}</th>{{end}}</tr>
{{range .ShapRows}}<tr>{{range $i, $c := .}}{{if $i}}<td class="num">{{$c}}</td>{{else}}<th>{{$c}}</th>{{end}}{{end}}</tr>
{{end}}</table>{{else}}<p>Not computed.</p>{{end}}
{{end}}{{if .Pareto}}
<h2 id="bias">Sampling bias</h2>
<table>{{range .MMD}}<tr><th>{{.Key}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<p class="reading">{{.MMDReading}}</p>
{{end}}{{with .Budgets}}
<h2 id="budgets">Budgets: can the low-budget signal be trusted?</h2>
{{if .Intro}}<p>{{.Intro}}</p>
<p class="reading">{{.Reading}}</p>
{{if .Pairs}}<table><tr>{{range .PairHead}}<th>{{.}}</th>{{end}}</tr>
{{range .Pairs}}<tr>{{range $i, $c := .}}{{if $i}}<td class="num">{{$c}}</td>{{else}}<th>{{$c}}</th>{{end}}{{end}}</tr>
{{end}}</table>{{end}}{{end}}
{{if .ImpRows}}<h3>Importance at budgets</h3>
<table><tr>{{range .ImpHead}}<th>{{.}}</th>{{end}}</tr>
{{range .ImpRows}}<tr>{{range $i, $c := .}}{{if $i}}<td class="num">{{$c}}</td>{{else}}<th>{{$c}}</th>{{end}}{{end}}</tr>
{{end}}</table>
<p>{{.ImpCap}}</p>{{end}}
{{range .Notes}}<p>Note: {{.}}</p>{{end}}
{{end}}{{with .Trials}}
<h2 id="parallel">Parallel coordinates of the trials</h2>
<figure>{{.Parallel}}<figcaption>{{.ParallelCap}}</figcaption></figure>
<h2 id="trials">Trials</h2>
{{if .TableCap}}<p>{{.TableCap}}</p>{{end}}<table id="trials-table"><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr data-trial="{{.Trial}}"><th>#{{.Trial}}</th><td>{{.State}}</td>{{range .Cells}}<td{{if .Num}} class="num"{{end}}{{if .Note}} class="note-text"{{end}}{{if .Title}} title="{{.Title}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{end}}
</body>
</html>
`))
