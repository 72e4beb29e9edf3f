package explain

import (
	"cmp"
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
// The estimate alone could show conflict where the data do not, so the
// verdict asks for evidence. Parameter j affects objective k when the 95%
// interval of its main-effect fraction lies above AffectShare (the
// importance method's interval; for a method without one, the fraction
// less two standard deviations), or when the PD band shows a significant
// move: from grid point g to g′ k's band at g′ lies entirely on the better
// side of its band at g. For two objectives both affected, the sign of the
// relation is ρ_j: at most −RelationCorrelation trades them (opposed), at
// least +RelationCorrelation improves them together (joint); the bands
// back a relation on their own when one move improves one objective
// significantly and worsens (or improves) the other significantly. Then j
//   - moves along the front when it trades some pair;
//   - improves objectives together when it improves some pair together and
//     trades none;
//   - affects objectives in no consistent direction when it affects two or
//     more but |ρ| is below RelationCorrelation for every such pair (a
//     non-monotone relation);
//   - is established on one objective only when it affects one only (its
//     effect on the others is not established, which is not to say it
//     has none);
//   - has no effect established otherwise.
//
// The intervals come from posterior samples of the surrogate (gp-sobol),
// so they hold on the optimizer's concentrated data too, where the
// calibrated PD bands, made wide enough to cover the model-class doubt,
// rarely separate. Bands of one PD at two grid points have positively
// correlated errors, so disjoint bands are conservative evidence.

// AffectShare is the main-effect fraction above which a parameter's
// effect on an objective counts as established (one per cent of the
// objective's variance).
const AffectShare = 0.01

// RelationCorrelation is the |ρ| from which two affected objectives'
// PD curves are read as moving against each other or together.
const RelationCorrelation = 0.5

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
	Mixed        = "affects objectives in no consistent direction"
	OneObjective = "established on one objective only"
	NoClearEff   = "no effect established"
)

// TradeoffResult is the trade-off explanation.
type TradeoffResult struct {
	About
	Objectives []space.Objective `json:"objectives"`
	// Front lists the Pareto-optimal trials (history.ParetoFront).
	Front []int64 `json:"front"`
	// Params are in reading order (TradeoffVerdicts, then among those
	// moving along the front the largest conflict first, then the largest
	// importance on any objective, then the name): choosing a point on the
	// front is choosing the first ones' values.
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
	// Opposed: the parameter trades the two (both affected and ρ ≤
	// −RelationCorrelation, or shown by the bands alone); Joint: it
	// improves both together (ρ ≥ RelationCorrelation, or the bands).
	Opposed bool `json:"opposed"`
	Joint   bool `json:"joint"`
	// BandBacked: the PD bands alone show the relation (a move that
	// improves one objective significantly and worsens, or improves, the
	// other significantly).
	BandBacked bool `json:"band_backed"`
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
	out.Params = tradeoffOrder(out.Params)
	out.Reading = tradeoffReading(out)
	return out, nil
}

// TradeoffVerdicts are the verdicts in the order a result lists them.
var TradeoffVerdicts = []string{AlongFront, Together, Mixed, OneObjective, NoClearEff}

// tradeoffOrder sorts parameters into reading order (TradeoffResult.Params).
func tradeoffOrder(ps []TradeoffParam) []TradeoffParam {
	rank := func(p TradeoffParam) int {
		if i := slices.Index(TradeoffVerdicts, p.Verdict); i >= 0 {
			return i
		}
		return len(TradeoffVerdicts)
	}
	most := func(p TradeoffParam) (conflict, importance float64) {
		for _, q := range p.Pairs {
			conflict = math.Max(conflict, q.Conflict)
		}
		for _, e := range p.Importance {
			importance = math.Max(importance, e.Fraction)
		}
		return conflict, importance
	}
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b TradeoffParam) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		ca, ia := most(a)
		cb, ib := most(b)
		switch {
		case rank(a) == 0 && ca != cb:
			return cmp.Compare(cb, ca)
		case ia != ib:
			return cmp.Compare(ib, ia)
		}
		return strings.Compare(a.Param, b.Param)
	})
	return out
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
	// better(k, g, h): moving from g to h improves k significantly.
	better := func(k, g, h int) bool { return al[k].hi[h] < al[k].lo[g] }
	grid := len(al[0].mean)
	affects := make([]bool, m)
	for k := range m {
		eff := imps[k].Main[name]
		if len(eff.CI95) == 2 {
			affects[k] = eff.CI95[0] >= AffectShare
		} else {
			affects[k] = eff.Fraction-2*eff.Std >= AffectShare
		}
		for g := 0; g < grid && !affects[k]; g++ {
			for h := range grid {
				if better(k, g, h) {
					affects[k] = true
					break
				}
			}
		}
	}
	mixed := false
	for a := range m {
		for b := a + 1; b < m; b++ {
			pair := TradeoffPair{A: a, B: b}
			pair.Correlation = correlation(al[a].mean, al[b].mean)
			fa, fb := math.Max(0, imps[a].Main[name].Fraction), math.Max(0, imps[b].Main[name].Fraction)
			pair.Conflict = -pair.Correlation * math.Sqrt(fa*fb)
			for g := range grid {
				for h := range grid {
					if better(a, g, h) && better(b, h, g) || better(b, g, h) && better(a, h, g) {
						pair.Opposed, pair.BandBacked = true, true
					}
					if better(a, g, h) && better(b, g, h) {
						pair.Joint, pair.BandBacked = true, true
					}
				}
			}
			if affects[a] && affects[b] {
				switch {
				case pair.Correlation <= -RelationCorrelation:
					pair.Opposed = true
				case pair.Correlation >= RelationCorrelation:
					pair.Joint = true
				case !pair.Opposed && !pair.Joint:
					mixed = true
				}
			}
			tp.Pairs = append(tp.Pairs, pair)
		}
	}
	var opposed, joint []string
	bands := false
	for _, p := range tp.Pairs {
		if p.Opposed {
			opposed = append(opposed, names[p.A]+" against "+names[p.B])
			bands = bands || p.BandBacked
		}
		if p.Joint {
			joint = append(joint, names[p.A]+" with "+names[p.B])
		}
	}
	var moved []string
	for k := range m {
		if affects[k] {
			moved = append(moved, names[k])
		}
	}
	evidence := "its effect on each is established by the importance intervals; the direction is that of the PD curves"
	if bands {
		evidence = "the PD bands alone show it"
	}
	switch {
	case len(opposed) > 0:
		tp.Verdict = AlongFront
		tp.Reading = fmt.Sprintf("%s trades %s: changing it improves one as it worsens the other (%s)", name, strings.Join(opposed, ", "), evidence)
	case len(joint) > 0:
		tp.Verdict = Together
		tp.Reading = fmt.Sprintf("%s improves %s together: a good setting of it is good for both, so it moves a configuration towards the front, not along it", name, strings.Join(joint, ", "))
	case mixed:
		tp.Verdict = Mixed
		tp.Reading = fmt.Sprintf("%s affects %s, but its PD curves neither rise nor fall together (|ρ| < %.1f): where it trades them depends on its range", name, strings.Join(moved, ", "), RelationCorrelation)
	case len(moved) == 1:
		tp.Verdict = OneObjective
		tp.Reading = fmt.Sprintf("%s changes %s only (no other objective's main effect is established): its best setting costs nothing elsewhere, so it only pushes a configuration off (or onto) the front", name, moved[0])
	default:
		tp.Verdict = NoClearEff
		tp.Reading = fmt.Sprintf("no main effect of %s on any objective is established (interval above %.0f%% of the variance, or a move beyond the bands)", name, 100*AffectShare)
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
	for _, v := range []string{AlongFront, Together, Mixed, OneObjective} {
		if len(by[v]) > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s", v, strings.Join(by[v], ", ")))
		}
	}
	if len(parts) == 0 {
		return "no parameter's effect on any objective is established yet; more trials would tell"
	}
	return strings.Join(parts, "; ") + "."
}
