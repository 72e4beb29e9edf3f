package explain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"xbo/history"
	"xbo/metrics"
	"xbo/space"
)

// Explanations per budget. Every explanation kind but paths and bias takes
// a budget: it then explains the study as it stood at that budget — the
// objective of each trial being its value at the budget, as
// history.AtBudget defines it (the value reported at the largest step ≤ the
// budget, for the complete and pruned trials that reported at a step ≥ it;
// that doc argues the choice). The budget view goes through the same path
// as the final values (prepare, limits, cache, slots): its fingerprint is
// that of the view's data, and the request, budget included, is the rest of
// the cache key. Whether the low-budget signal can be trusted is the kind
// "budgets": the rank correlation (Spearman and Kendall, with intervals; see
// package metrics) of the trials' values between every pair of budgets and
// between each budget and the final values.

// BudgetRule says in words which trials and values an explanation at a
// budget uses (history.AtBudget).
const BudgetRule = "each complete or pruned trial that reported a value at a step ≥ the budget, with its value at the largest step ≤ the budget"

// BudgetInfo says at which budget an explanation was computed and from
// which trials.
type BudgetInfo struct {
	Step int64 `json:"step"`
	// Trials have a value at the budget; Pruned of them were pruned; LeftOut
	// finished (complete or pruned) trials have none (they stopped before
	// the budget, or reported no intermediate value at or below it).
	Trials  int    `json:"trials"`
	Pruned  int    `json:"pruned"`
	LeftOut int    `json:"left_out"`
	Rule    string `json:"rule"`
}

// prepareAt prepares the history, or its view at the budget when one is
// given. A budget no trial (or fewer than MinTrials) reached is an invalid
// request: the budget is the caller's choice, not the study's state.
func prepareAt(h *history.History, budget *int64) (*prepared, error) {
	if budget == nil {
		return prepare(h)
	}
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	view, err := h.AtBudget(*budget)
	if errors.Is(err, history.ErrBudget) {
		return nil, invalidf("%v", err)
	}
	if err != nil {
		return nil, err
	}
	info := &BudgetInfo{Step: *budget, Trials: len(view.Trials), Rule: BudgetRule}
	for i := range h.Trials {
		t := &h.Trials[i]
		if t.State != history.Complete && t.State != history.Pruned {
			continue
		}
		if _, ok := t.ValueAt(*budget); !ok {
			info.LeftOut++
		} else if t.State == history.Pruned {
			info.Pruned++
		}
	}
	if info.Trials < MinTrials {
		return nil, invalidf("budget %d: %d trial(s) have a value there (%s); an explanation needs at least %d",
			*budget, info.Trials, BudgetRule, MinTrials)
	}
	p, err := prepare(view)
	if err != nil {
		return nil, err
	}
	p.budget = info
	return p, nil
}

// Limits of the comparison between budgets: each pair of budgets costs two
// rank correlations, O(n log n) each.
const (
	MaxBudgets     = 16  // budgets one request may name
	DefaultBudgets = 8   // budgets chosen when the request names none
	MaxListedSteps = 200 // budgets listed in BudgetsResult.Steps
)

// BudgetsRequest asks how well the trials' ranking at one budget predicts
// their ranking at another, and at the end.
type BudgetsRequest struct {
	// Budgets to compare (at most MaxBudgets, each reached by a trial). By
	// default up to DefaultBudgets of the budgets that at least
	// metrics.MinRankIntervalPairs trials reached, spread evenly on a log
	// scale (multi-fidelity budgets are usually geometric) from the lowest
	// to the highest.
	Budgets []int64 `json:"budgets,omitempty"`
	// Level of the intervals (default 0.95).
	Level float64 `json:"level"`
}

// BudgetColumn is one budget compared: a step, or the final values.
type BudgetColumn struct {
	// Step is the budget; nil for the final values.
	Step  *int64 `json:"step"`
	Label string `json:"label"`
	// Trials have a value there; Pruned of them were pruned.
	Trials int `json:"trials"`
	Pruned int `json:"pruned"`
}

// RankCorrelation is a rank correlation with its interval.
type RankCorrelation struct {
	Value float64 `json:"value"`
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
}

// BudgetPair compares the values of the trials that have one at both
// budgets (To nil: the final value).
type BudgetPair struct {
	From int64  `json:"from"`
	To   *int64 `json:"to"`
	// Label reads "3 → 9" or "3 → final".
	Label string `json:"label"`
	RankComparison
	// BetterHalf compares the same values among the better half of these
	// trials, by their value at the later budget (set with Spearman). An
	// overall correlation is mostly earned by telling bad configurations
	// from good ones; whether the low budget also ranks the good ones among
	// themselves, which choosing between them needs, is a separate question
	// (docs/research/multifidelity.md: on the digits-mlp table, 0.65 overall at epoch
	// 1 and 0.07 among the configurations that end below 0.15).
	BetterHalf *RankComparison `json:"better_half,omitempty"`
}

// RankComparison is the rank correlations of the values of some trials at
// two budgets.
type RankComparison struct {
	Trials   int              `json:"trials"`
	Spearman *RankCorrelation `json:"spearman,omitempty"`
	Kendall  *RankCorrelation `json:"kendall,omitempty"`
	// Note says why a correlation is missing (too few trials, constant
	// values).
	Note string `json:"note,omitempty"`
}

// BudgetsResult is the comparison between budgets.
type BudgetsResult struct {
	Kind      string `json:"kind"`
	Direction string `json:"direction"`
	// Fingerprint identifies the data: every finished trial's values and
	// intermediate values (history.CurvesFingerprint).
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	// Curves is the number of finished trials with intermediate values,
	// Final the number of usable (complete, finite) trials.
	Curves int `json:"curves"`
	Final  int `json:"final"`
	// Steps lists the budgets with values and how many trials have a value
	// at each (at most MaxListedSteps, spread as the default budgets are;
	// StepsTotal counts them all).
	Steps      []history.BudgetCount `json:"steps"`
	StepsTotal int                   `json:"steps_total"`
	// MinTrials is the fewest trials a budget needs for an explanation at
	// it; listed steps with fewer are refused by the other kinds.
	MinTrials int            `json:"min_trials"`
	Level     float64        `json:"level"`
	Budgets   []BudgetColumn `json:"budgets"`
	Pairs     []BudgetPair   `json:"pairs"`
	// Reading says in words whether the low budgets can be trusted.
	Reading string `json:"reading"`
	Note    string `json:"note"`
}

// trustedLower is the lower interval bound of Spearman's correlation with
// the final values from which a budget's ranking is read as predicting the
// final one.
const trustedLower = 0.7

// Budgets compares the trials' rankings between budgets.
func (e *Engine) Budgets(ctx context.Context, h *history.History, req BudgetsRequest) (*BudgetsResult, error) {
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	all := h.Budgets()
	if len(all) == 0 {
		return nil, invalidf("the study has no intermediate values of complete or pruned trials to compare budgets with")
	}
	if req.Level == 0 {
		req.Level = 0.95
	}
	if !(req.Level >= 0.5 && req.Level < 1) {
		return nil, invalidf("level %v must lie in [0.5, 1)", req.Level)
	}
	if len(req.Budgets) == 0 {
		var eligible []history.BudgetCount
		for _, c := range all {
			if c.Trials >= metrics.MinRankIntervalPairs {
				eligible = append(eligible, c)
			}
		}
		// With no eligible budget the result lists the budgets (a dashboard
		// still offers them for explanations) and says why nothing is
		// compared.
		for _, c := range spreadBudgets(eligible, DefaultBudgets) {
			req.Budgets = append(req.Budgets, c.Step)
		}
	} else {
		req.Budgets = slices.Clone(req.Budgets)
		slices.Sort(req.Budgets)
		if len(req.Budgets) > MaxBudgets {
			return nil, invalidf("%d budgets; at most %d may be compared at once", len(req.Budgets), MaxBudgets)
		}
		for k, b := range req.Budgets {
			if k > 0 && b == req.Budgets[k-1] {
				return nil, invalidf("budget %d given twice", b)
			}
			if _, err := h.AtBudget(b); err != nil {
				return nil, invalidf("%v", err)
			}
		}
	}
	fp, err := h.CurvesFingerprint()
	if err != nil {
		return nil, err
	}
	key, err := requestKey(&prepared{fingerprint: fp}, "budgets", req)
	if err != nil {
		return nil, err
	}
	c, err := e.run(ctx, key, "budgets", h.Name, func(t *task) (any, error) {
		return compareBudgets(t, h, all, req, fp)
	})
	if err != nil {
		return nil, err
	}
	return c.value.(*BudgetsResult), nil
}

// spreadBudgets picks at most k of the budgets, evenly spaced in log(step+1)
// from the lowest to the highest.
func spreadBudgets(list []history.BudgetCount, k int) []history.BudgetCount {
	if len(list) <= k {
		return list
	}
	pos := func(c history.BudgetCount) float64 { return math.Log1p(float64(c.Step)) }
	lo, hi := pos(list[0]), pos(list[len(list)-1])
	var out []history.BudgetCount
	last := -1
	for j := range k {
		target := lo + (hi-lo)*float64(j)/float64(k-1)
		i, _ := slices.BinarySearchFunc(list, target, func(c history.BudgetCount, v float64) int {
			switch p := pos(c); {
			case p < v:
				return -1
			case p > v:
				return 1
			}
			return 0
		})
		if i == len(list) || (i > 0 && target-pos(list[i-1]) < pos(list[i])-target) {
			i--
		}
		if i > last {
			out = append(out, list[i])
			last = i
		}
	}
	return out
}

func compareBudgets(t *task, h *history.History, all []history.BudgetCount, req BudgetsRequest, fp string) (*BudgetsResult, error) {
	res := &BudgetsResult{Kind: "budgets", Direction: string(h.Direction()), Fingerprint: fp, Rule: BudgetRule,
		Steps: spreadBudgets(all, MaxListedSteps), StepsTotal: len(all), MinTrials: MinTrials, Level: req.Level,
		Note: "Rank correlations are the same in both directions of optimization. Intervals: Fisher z with " +
			"Bonett & Wright's (2000) standard errors; they assume independent trials and are approximate with ties."}
	// values[k][i]: trial i's value at budget k (the last column is the
	// final value), NaN when it has none.
	nb := len(req.Budgets)
	values := make([][]float64, nb+1)
	for k := range values {
		values[k] = make([]float64, len(h.Trials))
	}
	for i := range h.Trials {
		tr := &h.Trials[i]
		for k, b := range req.Budgets {
			v, ok := tr.ValueAt(b)
			if !ok {
				v = math.NaN()
			}
			values[k][i] = v
		}
		if (tr.State == history.Complete || tr.State == history.Pruned) && hasFiniteIntermediate(tr) {
			res.Curves++
		}
		values[nb][i] = math.NaN()
		if tr.Usable() {
			values[nb][i] = tr.Value
			res.Final++
		}
	}
	column := func(k int) BudgetColumn {
		col := BudgetColumn{Label: "final"}
		if k < nb {
			b := req.Budgets[k]
			col.Step, col.Label = &b, fmt.Sprint(b)
		}
		for i := range h.Trials {
			if !math.IsNaN(values[k][i]) {
				col.Trials++
				if h.Trials[i].State == history.Pruned {
					col.Pruned++
				}
			}
		}
		return col
	}
	for k := range nb + 1 {
		res.Budgets = append(res.Budgets, column(k))
	}
	total := nb * (nb + 1) / 2
	for a := range nb {
		for b := a + 1; b <= nb; b++ {
			if err := t.ctx.Err(); err != nil {
				return nil, err
			}
			t.progress("rank correlations between budgets", len(res.Pairs), total)
			pair := BudgetPair{From: req.Budgets[a]}
			pair.Label = fmt.Sprintf("%d → %s", pair.From, res.Budgets[b].Label)
			if b < nb {
				to := req.Budgets[b]
				pair.To = &to
			}
			var x, y []float64
			for i := range h.Trials {
				if u, v := values[a][i], values[b][i]; !math.IsNaN(u) && !math.IsNaN(v) {
					x, y = append(x, u), append(y, v)
				}
			}
			if err := pair.correlate(pair.Label, x, y, req.Level); err != nil {
				return nil, err
			}
			if pair.Spearman != nil {
				bx, by := betterHalf(x, y, h.Direction())
				pair.BetterHalf = &RankComparison{}
				if err := pair.BetterHalf.correlate(pair.Label+" (better half)", bx, by, req.Level); err != nil {
					return nil, err
				}
			}
			res.Pairs = append(res.Pairs, pair)
		}
	}
	res.Reading = readBudgets(res)
	return res, nil
}

// betterHalf is the pairs (x, y) of the ⌈n/2⌉ best y in the direction
// (ties at the boundary broken by order: which of equal values is kept does
// not change their ranks' meaning).
func betterHalf(x, y []float64, dir space.Direction) ([]float64, []float64) {
	order := make([]int, len(y))
	for i := range order {
		order[i] = i
	}
	sign := 1.0
	if dir == space.Maximize {
		sign = -1
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sign*y[a], sign*y[b]) })
	keep := order[:(len(order)+1)/2]
	bx, by := make([]float64, len(keep)), make([]float64, len(keep))
	for k, i := range keep {
		bx[k], by[k] = x[i], y[i]
	}
	return bx, by
}

func hasFiniteIntermediate(t *history.Trial) bool {
	return slices.ContainsFunc(t.Intermediate, func(iv history.Intermediate) bool {
		return !math.IsNaN(iv.Value) && !math.IsInf(iv.Value, 0)
	})
}

// correlate fills the number of trials and the correlations of their
// values x and y, or the note when the correlations are undefined; label
// names the comparison in errors.
func (p *RankComparison) correlate(label string, x, y []float64, level float64) error {
	p.Trials = len(x)
	if len(x) < metrics.MinRankIntervalPairs {
		p.Note = fmt.Sprintf("%d trial(s) have values at both; a rank correlation with an interval needs %d",
			len(x), metrics.MinRankIntervalPairs)
		return nil
	}
	if constant(x) || constant(y) {
		p.Note = "the values at one of the budgets are all equal: their ranking is undefined"
		return nil
	}
	for _, m := range []struct {
		name string
		f    func(x, y []float64) (float64, error)
		out  **RankCorrelation
	}{{metrics.RankSpearman, metrics.Spearman, &p.Spearman}, {metrics.RankKendall, metrics.Kendall, &p.Kendall}} {
		r, err := m.f(x, y)
		if err != nil {
			return fmt.Errorf("explain: budgets %s: %w", label, err)
		}
		lo, hi, err := metrics.RankInterval(m.name, r, len(x), level)
		if err != nil {
			return fmt.Errorf("explain: budgets %s: %w", label, err)
		}
		*m.out = &RankCorrelation{Value: r, Lower: lo, Upper: hi}
	}
	return nil
}

func constant(v []float64) bool {
	return !slices.ContainsFunc(v, func(x float64) bool { return x != v[0] })
}

// readBudgets says in words which budgets predict the final ranking.
func readBudgets(res *BudgetsResult) string {
	if len(res.Budgets) == 1 {
		most := slices.MaxFunc(res.Steps, func(a, b history.BudgetCount) int { return a.Trials - b.Trials })
		return fmt.Sprintf("No budget has values of %d trials, the fewest a rank correlation needs (the most: %d trials at step %d), "+
			"so nothing is compared yet.", metrics.MinRankIntervalPairs, most.Trials, most.Step)
	}
	var toFinal []BudgetPair
	for _, p := range res.Pairs {
		if p.To == nil {
			toFinal = append(toFinal, p)
		}
	}
	if res.Final == 0 || len(toFinal) == 0 {
		return "No trial is complete yet, so no budget can be compared with the final values; the table compares budgets with each other."
	}
	for _, p := range toFinal {
		if p.Spearman != nil && p.Spearman.Lower >= trustedLower {
			reading := fmt.Sprintf("From budget %d on, the ranking of the trials predicts their final ranking: Spearman %.2f, "+
				"%.0f%% interval [%.2f, %.2f] over %d trials (lower bound ≥ %.1f). Below it, treat low-budget comparisons with care.",
				p.From, p.Spearman.Value, 100*res.Level, p.Spearman.Lower, p.Spearman.Upper, p.Trials, trustedLower)
			if b := p.BetterHalf; b != nil && b.Spearman != nil && b.Spearman.Lower < trustedLower {
				reading += fmt.Sprintf(" Among the better half of those trials (%d, by final value) budget %d ranks them at %.2f [%.2f, %.2f]: "+
					"it tells the worse configurations from the better ones more surely than it ranks the better ones among themselves, "+
					"so stopping the clearly worse on it is safer than choosing between the good on it.",
					b.Trials, p.From, b.Spearman.Value, b.Spearman.Lower, b.Spearman.Upper)
			}
			return reading
		}
	}
	var parts []string
	for _, p := range toFinal {
		if p.Spearman != nil {
			parts = append(parts, fmt.Sprintf("%d: %.2f [%.2f, %.2f], %d trials", p.From, p.Spearman.Value, p.Spearman.Lower, p.Spearman.Upper, p.Trials))
		}
	}
	if len(parts) == 0 {
		return "Too few trials have values at both a budget and the end for a rank correlation."
	}
	return fmt.Sprintf("No budget's ranking is shown to predict the final ranking (Spearman's lower bound ≥ %.1f): %s. "+
		"Low-budget signal, and pruning on it, may discard configurations that would end well.", trustedLower, strings.Join(parts, "; "))
}
