package explain

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"xbo/history"
	"xbo/space"
)

// The trade-off explanation answers, for a study with several objectives,
// which hyperparameters move a configuration along the Pareto front (one
// objective improves as another worsens) and which only push it off the
// front (they improve one objective, or several, at no cost to the others).
//
// Each objective k is explained on its own (Objective): its importance
// (the kind importance, main effects F_kj with their intervals) and the
// partial dependence φ_kj of each parameter j with its band (the kind pdp).
// Write g_kj = s_k·(φ_kj − mean φ_kj)/sd_k, with s_k = +1 for a minimized
// and −1 for a maximized objective (so lower is better for every k) and
// sd_k objective k's standard deviation over the space. Under the uniform
// measure φ_kj(λ_j) is E[f_k | λ_j], so g_kj is the fANOVA main effect of j
// on f_k, standardized, and Var(g_kj) = F_kj (Hooker 2007, "Generalized
// functional ANOVA diagnostics"; Hutter et al. 2014). Main effects of
// different parameters and all interaction terms are orthogonal, so the
// correlation of two sign-aligned objectives over the space splits into a
// sum of per-term covariances; parameter j's main-effect part is
//
//	conflict_j(A, B) = −Cov(g_Aj, g_Bj) = −ρ_j(A, B)·√(F_Aj·F_Bj),
//
// with ρ_j the correlation of the two sign-aligned PD curves over j's grid
// (equally weighted grid points: equidistant on the encoded scale, every
// level of a categorical). Positive means that moving j trades A against B;
// negative that it improves both together; its size is at most
// √(F_Aj·F_Bj). A parameter that acts on one objective only has none.
//
// The estimate alone could show conflict where the data do not; the
// verdict rests on the bands instead. A move of j from grid point g to g'
// improves objective k significantly when k's band at g' lies entirely on
// the better side of its band at g. Then j
//   - moves along the front when some move improves one objective
//     significantly and worsens another significantly;
//   - improves objectives together when some move improves two
//     significantly (and none trades them);
//   - acts on one objective when only one objective changes significantly;
//   - has no clear effect otherwise.
//
// Bands of one PD at two grid points have positively correlated errors,
// so requiring disjoint bands is conservative: a verdict of a trade-off is
// backed at least at the bands' level.

// MaxTradeoffParams bounds the parameters a trade-off explanation draws
// PDPs for (each costs one PDP per objective).
const MaxTradeoffParams = 20

// TradeoffRequest asks for the trade-off explanation of a study with
// several objectives.
type TradeoffRequest struct {
	// Params are the parameters explained (default: every parameter, or the
	// MaxTradeoffParams most important on any objective).
	Params []string `json:"params"`
	// Grid, Samples and Alpha set each PDP (as in PDPRequest).
	Grid    int     `json:"grid"`
	Samples int     `json:"samples"`
	Alpha   float64 `json:"alpha"`
	// Method is the importance method (ImportanceRequest.Method).
	Method string `json:"method"`
	// Trial, when set, adds that trial's Shapley values of every
	// objective's surrogate mean, side by side (e.g. of a Pareto-optimal
	// trial: what each parameter contributes to each objective there).
	Trial *int64 `json:"trial,omitempty"`
}

// Trade-off verdicts.
const (
	AlongFront   = "moves along the front"
	Together     = "improves objectives together"
	OneObjective = "acts on one objective"
	NoClearEff   = "no clear effect"
)

// TradeoffResult is the trade-off explanation.
type TradeoffResult struct {
	About
	Objectives []space.Objective `json:"objectives"`
	// Front lists the Pareto-optimal trials (history.ParetoFront).
	Front  []int64         `json:"front"`
	Params []TradeoffParam `json:"params"`
	// Shapley holds the requested trial's Shapley values of each
	// objective's mean, in the objectives' order.
	Shapley []TradeoffShapley `json:"shapley,omitempty"`
	// Reading says in words which parameters trade which objectives.
	Reading string `json:"reading"`
}

// TradeoffShapley is a trial's Shapley decomposition of one objective's
// surrogate mean (kind shapley, output mean): φ_j in the objective's
// units, summing to Prediction − Average, with the intervals at the
// explanation's level.
type TradeoffShapley struct {
	Objective  string             `json:"objective"`
	Trial      int64              `json:"trial"`
	Prediction float64            `json:"prediction"`
	Average    float64            `json:"average"`
	Phi        map[string]float64 `json:"phi"`
	Lower      map[string]float64 `json:"lower"`
	Upper      map[string]float64 `json:"upper"`
}

// TradeoffParam is one parameter's part in the trade-offs.
type TradeoffParam struct {
	Param string `json:"param"`
	// Importance is the parameter's main effect on each objective, in the
	// objectives' order.
	Importance []RankedEffect `json:"importance"`
	// Pairs are its conflict for each pair of objectives.
	Pairs   []TradeoffPair `json:"pairs"`
	Verdict string         `json:"verdict"`
	Reading string         `json:"reading"`
}

// TradeoffPair is a parameter's conflict between objectives A and B
// (indices into TradeoffResult.Objectives).
type TradeoffPair struct {
	A int `json:"a"`
	B int `json:"b"`
	// Conflict is −ρ·√(F_A·F_B) (see the package comment above): > 0 trades
	// A against B, < 0 improves both.
	Conflict float64 `json:"conflict"`
	// Correlation is ρ, the correlation of the sign-aligned PD curves.
	Correlation float64 `json:"correlation"`
	// Opposed: some move of the parameter improves one of the two
	// significantly and worsens the other significantly; Joint: some move
	// improves both significantly.
	Opposed bool `json:"opposed"`
	Joint   bool `json:"joint"`
}

// Tradeoff explains how the parameters trade the objectives of a study with
// several objectives off against each other. Its parts are the importance
// and PDP explanations of each objective, computed (and cached) as those
// kinds are.
func (e *Engine) Tradeoff(ctx context.Context, h *history.History, req TradeoffRequest) (*TradeoffResult, error) {
	if h == nil || h.Space == nil {
		return nil, invalidf("no history")
	}
	if err := h.Validate(); err != nil {
		return nil, invalidf("%v", err)
	}
	sp := h.Space
	if h.Objective != "" {
		return nil, invalidf("tradeoff covers every objective of the study; leave the objective out")
	}
	if !sp.MultiObjective() {
		return nil, invalidf("tradeoff explains a study with several objectives; this one has one (explain it with importance and pdp)")
	}
	if len(req.Params) > MaxTradeoffParams {
		return nil, invalidf("%d parameters exceed the trade-off limit of %d", len(req.Params), MaxTradeoffParams)
	}
	if err := checkParams(sp, req.Params); err != nil {
		return nil, err
	}
	m := sp.NumObjectives()
	names, dirs := sp.ObjectiveNames(), sp.Directions()
	per := make([]*history.History, m)
	imps := make([]*ImportanceResult, m)
	for k := range m {
		var err error
		if per[k], err = h.ForObjective(k); err != nil {
			return nil, invalidf("%v", err)
		}
		if imps[k], err = e.Importance(ctx, per[k], ImportanceRequest{Method: req.Method, Pairs: new(false)}); err != nil {
			return nil, fmt.Errorf("objective %s: %w", names[k], err)
		}
	}
	params := req.Params
	if len(params) == 0 {
		params = tradeoffParams(sp, imps)
	}
	out := &TradeoffResult{About: imps[0].About}
	out.Kind, out.Objective, out.ModelCheck, out.Surrogate = "tradeoff", "", nil, nil
	out.Units = "importance fractions of each objective's variance; conflict in shares of the objectives' correlation over the space"
	if fp, err := h.Fingerprint(false); err == nil {
		out.Fingerprint = fp
	}
	for k := range m {
		out.Objectives = append(out.Objectives, space.Objective{Name: names[k], Direction: dirs[k]})
	}
	front, err := h.ParetoFront()
	if err != nil {
		return nil, err
	}
	for _, i := range front {
		out.Front = append(out.Front, h.Trials[i].Number)
	}
	for _, name := range params {
		curves := make([]*PDPResult, m)
		for k := range m {
			if curves[k], err = e.PDP(ctx, per[k], PDPRequest{Params: []string{name}, Grid: req.Grid, Samples: req.Samples, Alpha: req.Alpha}); err != nil {
				return nil, fmt.Errorf("objective %s, parameter %s: %w", names[k], name, err)
			}
		}
		out.Params = append(out.Params, tradeoffOf(name, names, dirs, imps, curves))
	}
	if req.Trial != nil {
		for k := range m {
			r, err := e.Shapley(ctx, per[k], ShapleyRequest{Trial: req.Trial})
			if err != nil {
				return nil, fmt.Errorf("objective %s, Shapley values of trial %d: %w", names[k], *req.Trial, err)
			}
			mean, ok := r.Explanation.Output("mean")
			if !ok {
				return nil, fmt.Errorf("objective %s: the Shapley explanation has no mean", names[k])
			}
			sh := TradeoffShapley{Objective: names[k], Trial: *req.Trial, Prediction: mean.Prediction, Average: mean.Average,
				Phi: map[string]float64{}, Lower: map[string]float64{}, Upper: map[string]float64{}}
			for j, p := range r.Explanation.Params {
				sh.Phi[p], sh.Lower[p], sh.Upper[p] = mean.Phi[j], mean.Lower[j], mean.Upper[j]
			}
			out.Shapley = append(out.Shapley, sh)
		}
	}
	out.Reading = tradeoffReading(out)
	return out, nil
}

// tradeoffParams is the default list: every parameter, or the
// MaxTradeoffParams with the largest main effect on any objective.
func tradeoffParams(sp *space.Space, imps []*ImportanceResult) []string {
	names := sp.Names()
	if len(names) <= MaxTradeoffParams {
		return names
	}
	top := func(p string) float64 {
		best := 0.0
		for _, r := range imps {
			best = math.Max(best, r.Main[p].Fraction)
		}
		return best
	}
	ranked := slices.Clone(names)
	slices.SortStableFunc(ranked, func(a, b string) int {
		switch ta, tb := top(a), top(b); {
		case ta > tb:
			return -1
		case ta < tb:
			return 1
		}
		return 0
	})
	return ranked[:MaxTradeoffParams]
}

// tradeoffOf computes one parameter's conflicts and verdict from each
// objective's importance and PDP.
func tradeoffOf(name string, names []string, dirs []space.Direction, imps []*ImportanceResult, curves []*PDPResult) TradeoffParam {
	m := len(names)
	tp := TradeoffParam{Param: name}
	// Sign-aligned curves and bands: lower is better for every objective.
	type aligned struct{ mean, lo, hi []float64 }
	al := make([]aligned, m)
	for k := range m {
		c := curves[k].Result
		a := aligned{mean: slices.Clone(c.Mean), lo: slices.Clone(c.Lower), hi: slices.Clone(c.Upper)}
		if dirs[k] == space.Maximize {
			for g := range a.mean {
				a.mean[g], a.lo[g], a.hi[g] = -c.Mean[g], -c.Upper[g], -c.Lower[g]
			}
		}
		al[k] = a
		eff := imps[k].Main[name]
		tp.Importance = append(tp.Importance, RankedEffect{Param: names[k], Fraction: eff.Fraction, Std: eff.Std, CI95: eff.CI95})
	}
	// better[k][g][g'] : moving from g to g' improves k significantly.
	better := func(k, g, h int) bool { return al[k].hi[h] < al[k].lo[g] }
	grid := len(al[0].mean)
	significant := make([]bool, m)
	for k := range m {
		for g := 0; g < grid && !significant[k]; g++ {
			for h := range grid {
				if better(k, g, h) {
					significant[k] = true
					break
				}
			}
		}
	}
	for a := range m {
		for b := a + 1; b < m; b++ {
			pair := TradeoffPair{A: a, B: b}
			pair.Correlation = correlation(al[a].mean, al[b].mean)
			fa, fb := math.Max(0, imps[a].Main[name].Fraction), math.Max(0, imps[b].Main[name].Fraction)
			pair.Conflict = -pair.Correlation * math.Sqrt(fa*fb)
			for g := range grid {
				for h := range grid {
					if better(a, g, h) && better(b, h, g) || better(b, g, h) && better(a, h, g) {
						pair.Opposed = true
					}
					if better(a, g, h) && better(b, g, h) {
						pair.Joint = true
					}
				}
			}
			tp.Pairs = append(tp.Pairs, pair)
		}
	}
	var opposed, joint []string
	for _, p := range tp.Pairs {
		if p.Opposed {
			opposed = append(opposed, names[p.A]+" against "+names[p.B])
		}
		if p.Joint {
			joint = append(joint, names[p.A]+" with "+names[p.B])
		}
	}
	var moved []string
	for k := range m {
		if significant[k] {
			moved = append(moved, names[k])
		}
	}
	switch {
	case len(opposed) > 0:
		tp.Verdict = AlongFront
		tp.Reading = fmt.Sprintf("%s trades %s: some change of it improves one and worsens the other beyond both bands", name, strings.Join(opposed, ", "))
	case len(joint) > 0:
		tp.Verdict = Together
		tp.Reading = fmt.Sprintf("%s improves %s together: a good setting of it is good for both, so it moves a configuration towards the front, not along it", name, strings.Join(joint, ", "))
	case len(moved) > 0:
		tp.Verdict = OneObjective
		tp.Reading = fmt.Sprintf("%s changes %s only: its best setting costs no other objective, so it only pushes a configuration off (or onto) the front", name, strings.Join(moved, ", "))
	default:
		tp.Verdict = NoClearEff
		tp.Reading = fmt.Sprintf("no change of %s moves any objective beyond its band", name)
	}
	return tp
}

// correlation is the Pearson correlation of two equally weighted curves (0
// when either is flat).
func correlation(a, b []float64) float64 {
	n := float64(len(a))
	var ma, mb float64
	for i := range a {
		ma += a[i] / n
		mb += b[i] / n
	}
	var sab, saa, sbb float64
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	}
	if saa <= 0 || sbb <= 0 {
		return 0
	}
	return math.Max(-1, math.Min(1, sab/math.Sqrt(saa*sbb)))
}

// tradeoffReading sums the verdicts up in one sentence.
func tradeoffReading(r *TradeoffResult) string {
	by := map[string][]string{}
	for _, p := range r.Params {
		by[p.Verdict] = append(by[p.Verdict], p.Param)
	}
	var parts []string
	for _, v := range []string{AlongFront, Together, OneObjective} {
		if len(by[v]) > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s", v, strings.Join(by[v], ", ")))
		}
	}
	if len(parts) == 0 {
		return "no parameter moves any objective beyond its band yet; more trials would tell"
	}
	return strings.Join(parts, "; ") + "."
}
