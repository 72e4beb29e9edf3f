package explain

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"net/url"
	"sort"
	"strings"
	"testing"

	"xbo/history"
	"xbo/metrics"
	"xbo/space"
)

// curveValue is the value of configuration (a, b) at step s of the curve
// study: early on b decides (a learning-rate-like effect), late a does.
func curveValue(a, b float64, s int64) float64 {
	w := float64(s-1) / 7 // 0 at step 1, 1 at step 8
	return (1-w)*3*b + w*3*a + 0.05*float64(s)
}

// curveStudy has n trials reporting at steps 1, 2, 4 and 8 (minimize);
// every third trial was pruned after step 2, every fifth reported on the
// other grid 1, 3, 8, and the last one is still running.
func curveStudy(t testing.TB, n int) *history.History {
	t.Helper()
	sp, err := space.New(space.Minimize, []space.Param{
		{Name: "a", Type: space.Float, Low: 0, High: 1},
		{Name: "b", Type: space.Float, Low: 0, High: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	h := &history.History{Name: "curves", Space: sp}
	for i := range n {
		a, b := rng.Float64(), rng.Float64()
		steps := []int64{1, 2, 4, 8}
		if i%5 == 4 {
			steps = []int64{1, 3, 8}
		}
		tr := history.Trial{Number: int64(i), State: history.Complete, Params: []float64{a, b}, Completion: i}
		if i%3 == 2 {
			tr.State, tr.Completion, steps = history.Pruned, -1, steps[:2]
		}
		if i == n-1 {
			tr.State, tr.Completion = history.Running, -1
		}
		for _, s := range steps {
			tr.Intermediate = append(tr.Intermediate, history.Intermediate{Step: s, Value: curveValue(a, b, s)})
		}
		tr.Value = tr.Intermediate[len(tr.Intermediate)-1].Value
		if tr.State == history.Complete {
			tr.Value += 0.01 * a // the final evaluation differs a little from the last report
		} else if tr.State == history.Running {
			tr.Value = math.NaN()
		}
		h.Trials = append(h.Trials, tr)
	}
	return h
}

// handView is the study whose objectives are the values at budget b, built
// from the curve's definition (not from history.AtBudget): the complete
// and pruned trials whose last step is ≥ b, at their last step ≤ b.
func handView(t testing.TB, h *history.History, b int64) *history.History {
	out := &history.History{Name: h.Name, Space: h.Space}
	for _, tr := range h.Trials {
		if tr.State == history.Running {
			continue
		}
		steps := []int64{}
		for _, iv := range tr.Intermediate {
			steps = append(steps, iv.Step)
		}
		if steps[len(steps)-1] < b {
			continue
		}
		at := steps[sort.Search(len(steps), func(k int) bool { return steps[k] > b })-1]
		out.Trials = append(out.Trials, history.Trial{Number: tr.Number, State: history.Complete, Params: tr.Params,
			Value: curveValue(tr.Params[0], tr.Params[1], at), Completion: len(out.Trials)})
	}
	return out
}

// withoutBudget is the JSON of a result with its budget header removed.
func withoutBudget(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "budget")
	return m
}

func TestExplanationAtBudgetIsExplanationOfStepValues(t *testing.T) {
	ctx := context.Background()
	h := curveStudy(t, 30)
	for _, b := range []int64{1, 3, 8} {
		want := handView(t, h, b)
		budget := b
		imp, err := newEngine(t, Config{}).Importance(ctx, h, ImportanceRequest{Samples: 256, Posterior: 40, Refits: -1, Budget: &budget})
		if err != nil {
			t.Fatalf("budget %d: %v", b, err)
		}
		ref, err := newEngine(t, Config{}).Importance(ctx, want, ImportanceRequest{Samples: 256, Posterior: 40, Refits: -1})
		if err != nil {
			t.Fatal(err)
		}
		got, exp := withoutBudget(t, imp), withoutBudget(t, ref)
		if g, w := mustJSON(t, got), mustJSON(t, exp); g != w {
			t.Errorf("budget %d: importance differs from the hand-made study's:\n%s\n%s", b, g, w)
		}
		pruned := 0
		for _, tr := range want.Trials {
			if h.Trials[tr.Number].State == history.Pruned {
				pruned++
			}
		}
		bi := imp.Budget
		if bi == nil || bi.Step != b || bi.Trials != len(want.Trials) || imp.Trials != len(want.Trials) || bi.Pruned != pruned ||
			bi.LeftOut != 29-len(want.Trials) || bi.Rule != BudgetRule {
			t.Errorf("budget %d: header %+v (trials %d), want %d trials, %d pruned", b, bi, imp.Trials, len(want.Trials), pruned)
		}
		pdpAt, err := newEngine(t, Config{}).PDP(ctx, h, PDPRequest{Params: []string{"b"}, Samples: 200, Budget: &budget})
		if err != nil {
			t.Fatal(err)
		}
		pdpRef, err := newEngine(t, Config{}).PDP(ctx, want, PDPRequest{Params: []string{"b"}, Samples: 200})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := mustJSON(t, withoutBudget(t, pdpAt)), mustJSON(t, withoutBudget(t, pdpRef)); g != w {
			t.Errorf("budget %d: PDP differs from the hand-made study's", b)
		}
	}
	// The signal moves from b early to a late: the budgets are really used.
	e := newEngine(t, Config{})
	fraction := func(b int64, name string) float64 {
		res, err := e.Importance(ctx, h, ImportanceRequest{Samples: 256, Posterior: 40, Refits: -1, Budget: &b})
		if err != nil {
			t.Fatal(err)
		}
		return res.Main[name].Fraction
	}
	if fb, fa := fraction(1, "b"), fraction(8, "a"); fb < 0.9 || fa < 0.9 {
		t.Errorf("importance of b at budget 1: %.3f, of a at budget 8: %.3f; want both > 0.9", fb, fa)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBudgetRefusedAndCached(t *testing.T) {
	ctx := context.Background()
	h := curveStudy(t, 30)
	e := newEngine(t, Config{})
	b := int64(9)
	_, err := e.PDP(ctx, h, PDPRequest{Params: []string{"a"}, Budget: &b})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "no complete or pruned trial has a value at budget 9") {
		t.Fatalf("budget 9: %v", err)
	}
	b = -1
	if _, err := e.PDP(ctx, h, PDPRequest{Params: []string{"a"}, Budget: &b}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("budget -1: %v", err)
	}
	// In a study of four trials two reach budget 8 (one was pruned, one
	// runs): refused with the count, not as "too few trials" of the study.
	small := curveStudy(t, 4)
	b = 8
	_, err = e.PDP(ctx, small, PDPRequest{Params: []string{"a"}, Budget: &b})
	if !errors.Is(err, ErrInvalid) || errors.Is(err, history.ErrTooFew) || !strings.Contains(err.Error(), "budget 8: 2 trial(s)") {
		t.Fatalf("budget 8 of 4 trials: %v", err)
	}
	// The budget is part of the cache key: budget 8 and the final values
	// differ, the same budget twice is a hit.
	b8 := int64(8)
	req := PDPRequest{Params: []string{"a"}, Samples: 100}
	for _, c := range []struct {
		budget *int64
		hit    bool
	}{{nil, false}, {&b8, false}, {&b8, true}, {nil, true}} {
		hit := false
		req.Budget = c.budget
		if _, err := e.PDP(WithCacheHit(ctx, &hit), h, req); err != nil {
			t.Fatal(err)
		}
		if hit != c.hit {
			t.Errorf("budget %v: cache hit %v, want %v", c.budget, hit, c.hit)
		}
	}
}

// spearmanBrute is 1 − 6Σd²/(n(n²−1)), exact without ties.
func spearmanBrute(x, y []float64) float64 {
	rank := func(v []float64) []float64 {
		r := make([]float64, len(v))
		for i := range v {
			for j := range v {
				if v[j] < v[i] {
					r[i]++
				}
			}
		}
		return r
	}
	rx, ry := rank(x), rank(y)
	d2 := 0.0
	for i := range rx {
		d2 += (rx[i] - ry[i]) * (rx[i] - ry[i])
	}
	n := float64(len(x))
	return 1 - 6*d2/(n*(n*n-1))
}

func kendallBrute(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			s += math.Copysign(1, (x[i]-x[j])*(y[i]-y[j]))
		}
	}
	n := float64(len(x))
	return s / (n * (n - 1) / 2)
}

func TestBudgetsCorrelationsMatchBruteForce(t *testing.T) {
	ctx := context.Background()
	h := curveStudy(t, 30)
	res, err := newEngine(t, Config{}).Budgets(ctx, h, BudgetsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// Steps 1, 2, 3, 4, 8; step 3 has 6 values (>= 5), so every step is a
	// default budget.
	var labels []string
	for _, c := range res.Budgets {
		labels = append(labels, c.Label)
	}
	if strings.Join(labels, " ") != "1 2 3 4 8 final" {
		t.Fatalf("budgets %v", labels)
	}
	if res.Curves != 29 || res.Final != len(h.Usable()) || res.StepsTotal != 5 || res.MinTrials != MinTrials {
		t.Errorf("curves %d final %d steps %d", res.Curves, res.Final, res.StepsTotal)
	}
	if len(res.Pairs) != 15 {
		t.Fatalf("%d pairs, want 15", len(res.Pairs))
	}
	for _, p := range res.Pairs {
		var x, y []float64
		for _, tr := range h.Trials {
			if tr.State == history.Running {
				continue
			}
			from := handView(t, &history.History{Space: h.Space, Trials: []history.Trial{tr}}, p.From)
			if len(from.Trials) == 0 {
				continue
			}
			var to float64
			if p.To == nil {
				if tr.State != history.Complete {
					continue
				}
				to = tr.Value
			} else {
				v := handView(t, &history.History{Space: h.Space, Trials: []history.Trial{tr}}, *p.To)
				if len(v.Trials) == 0 {
					continue
				}
				to = v.Trials[0].Value
			}
			x, y = append(x, from.Trials[0].Value), append(y, to)
		}
		if p.Trials != len(x) {
			t.Fatalf("%s: %d trials, want %d", p.Label, p.Trials, len(x))
		}
		if p.Spearman == nil || p.Kendall == nil {
			t.Fatalf("%s: no correlation (%s)", p.Label, p.Note)
		}
		if ws, wk := spearmanBrute(x, y), kendallBrute(x, y); math.Abs(p.Spearman.Value-ws) > 1e-12 || math.Abs(p.Kendall.Value-wk) > 1e-12 {
			t.Errorf("%s: Spearman %v Kendall %v, brute force %v %v", p.Label, p.Spearman.Value, p.Kendall.Value, ws, wk)
		}
		if !(p.Spearman.Lower <= p.Spearman.Value && p.Spearman.Value <= p.Spearman.Upper) {
			t.Errorf("%s: interval %+v", p.Label, p.Spearman)
		}
	}
	// Step 1 ranks by b, the end by a: weak; step 8 predicts the end.
	if !strings.Contains(res.Reading, "From budget 8 on") {
		t.Errorf("reading: %s", res.Reading)
	}
	// Through the query parser, with explicit budgets; a budget no trial
	// reached is refused.
	req, err := ParseQuery("budgets", h.Space, url.Values{"budget": {"1,8"}, "level": {"0.9"}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := newEngine(t, Config{}).Explain(ctx, h, req)
	if err != nil {
		t.Fatal(err)
	}
	if r := v.(*BudgetsResult); len(r.Pairs) != 3 || r.Level != 0.9 || r.Pairs[0].Label != "1 → 8" {
		t.Errorf("explicit budgets: %+v", r.Pairs)
	}
	for _, q := range []url.Values{{"budget": {"9"}}, {"budget": {"1,1"}}, {"budget": {"x"}}, {"level": {"0.2"}}} {
		req, err := ParseQuery("budgets", h.Space, q)
		if err == nil {
			_, err = newEngine(t, Config{}).Explain(ctx, h, req)
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%v: %v, want ErrInvalid", q, err)
		}
	}
}

func TestParseQueryBudget(t *testing.T) {
	h := curveStudy(t, 10)
	req, err := ParseQuery("importance", h.Space, url.Values{"budget": {"4"}})
	if err != nil || req.(ImportanceRequest).Budget == nil || *req.(ImportanceRequest).Budget != 4 {
		t.Fatalf("%+v %v", req, err)
	}
	for _, kind := range []string{"pdp", "importance"} {
		if _, err := ParseQuery(kind, h.Space, url.Values{"param": {"a"}, "budget": {"-2"}}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s budget -2: %v", kind, err)
		}
	}
	if _, err := ParseQuery("paths", h.Space, url.Values{"budget": {"2"}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("paths with a budget: %v", err)
	}
}

// BenchmarkBudgets10000 compares budgets on 10,000 trials with 50 reports
// each (a third pruned at a random step): the cost of one uncached request
// (a fresh engine per iteration) with the default 8 budgets, 36 pairs.
func BenchmarkBudgets10000(b *testing.B) {
	sp, err := space.New(space.Minimize, []space.Param{{Name: "a", Type: space.Float, Low: 0, High: 1}, {Name: "b", Type: space.Float, Low: 0, High: 1}})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	h := &history.History{Space: sp}
	for i := range 10000 {
		x, y := rng.Float64(), rng.Float64()
		tr := history.Trial{Number: int64(i), State: history.Complete, Params: []float64{x, y}}
		last := int64(50)
		if i%3 == 0 {
			tr.State, last = history.Pruned, 1+rng.Int64N(49)
		}
		for s := int64(1); s <= last; s++ {
			tr.Intermediate = append(tr.Intermediate, history.Intermediate{Step: s, Value: curveValue(x, y, 1+s*7/50) + 0.1*rng.NormFloat64()})
		}
		tr.Value = tr.Intermediate[len(tr.Intermediate)-1].Value
		h.Trials = append(h.Trials, tr)
	}
	b.ResetTimer()
	for range b.N {
		res, err := newEngine(b, Config{}).Budgets(context.Background(), h, BudgetsRequest{})
		if err != nil || len(res.Pairs) != 36 {
			b.Fatalf("%v %d pairs", err, len(res.Pairs))
		}
	}
}

// The better half of a pair is the trials with the better later values: a
// budget that ranks the worse half perfectly and the better half at random
// predicts the final ranking overall, and its better half's correlation is
// the one computed by brute force on those trials alone, in both
// directions; the reading says the low budget does not rank the good ones.
func TestBudgetsBetterHalf(t *testing.T) {
	const n = 60
	rng := rand.New(rand.NewPCG(8, 9))
	shuffled := rng.Perm(n / 2)
	study := func(dir space.Direction, orderedTop bool) *history.History {
		sp, err := space.New(dir, []space.Param{{Name: "a", Type: space.Float, Low: 0, High: 1}})
		if err != nil {
			t.Fatal(err)
		}
		sign := 1.0
		if dir == space.Maximize {
			sign = -1
		}
		h := &history.History{Name: "halves", Space: sp}
		for i := range n {
			final, early := float64(i), float64(i)+100
			if i < n/2 && !orderedTop {
				early = float64(shuffled[i])
			}
			h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: []float64{rng.Float64()},
				Completion: i, Value: sign * final, Intermediate: []history.Intermediate{{Step: 1, Value: sign * early}, {Step: 2, Value: sign * final}}})
		}
		return h
	}
	var top, topEarly []float64
	for i := range n / 2 {
		top, topEarly = append(top, float64(i)), append(topEarly, float64(shuffled[i]))
	}
	want := spearmanBrute(topEarly, top)
	for _, dir := range []space.Direction{space.Minimize, space.Maximize} {
		res, err := newEngine(t, Config{}).Budgets(context.Background(), study(dir, false), BudgetsRequest{Budgets: []int64{1}})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Pairs[0]
		if p.Label != "1 → final" || p.Spearman == nil || p.Spearman.Lower < trustedLower || p.BetterHalf == nil || p.BetterHalf.Spearman == nil {
			t.Fatalf("%s: pair %+v", dir, p)
		}
		if b := p.BetterHalf; b.Trials != n/2 || math.Abs(b.Spearman.Value-want) > 1e-12 || math.Abs(b.Kendall.Value-kendallBrute(topEarly, top)) > 1e-12 {
			t.Errorf("%s: better half %d trials, Spearman %v Kendall %v; brute force %v %v", dir, b.Trials, b.Spearman.Value, b.Kendall.Value, want, kendallBrute(topEarly, top))
		}
		if !strings.Contains(res.Reading, "From budget 1 on") || !strings.Contains(res.Reading, "Among the better half of those trials (30") {
			t.Errorf("%s: reading %s", dir, res.Reading)
		}
	}
	res, err := newEngine(t, Config{}).Budgets(context.Background(), study(space.Minimize, true), BudgetsRequest{Budgets: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Pairs[0].BetterHalf; b == nil || b.Spearman == nil || b.Spearman.Value != 1 || strings.Contains(res.Reading, "better half") {
		t.Errorf("ordered better half: %+v, reading %s", b, res.Reading)
	}
}

// The better half's intervals cover the truth they claim: with (x, y)
// bivariate normal (ρ = 0.8) and the better half taken by y from 80 trials,
// the truth is Spearman's correlation of the population below y's median
// (200,000 draws); the 95% intervals of 2,000 samples cover it at 95% ±
// 1.5 points (Monte Carlo sd 0.5 points), although the half is cut at the
// sample's median, not the population's.
func TestBudgetsBetterHalfCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte Carlo coverage")
	}
	const rho, n, reps = 0.8, 80, 2000
	rng := rand.New(rand.NewPCG(21, 22))
	draw := func(m int) ([]float64, []float64) {
		x, y := make([]float64, m), make([]float64, m)
		for i := range m {
			z1, z2 := rng.NormFloat64(), rng.NormFloat64()
			x[i], y[i] = rho*z1+math.Sqrt(1-rho*rho)*z2, z1
		}
		return x, y
	}
	px, py := draw(200_000)
	var tx, ty []float64
	for i := range py {
		if py[i] < 0 { // the population median of y
			tx, ty = append(tx, px[i]), append(ty, py[i])
		}
	}
	truth, err := metrics.Spearman(tx, ty)
	if err != nil {
		t.Fatal(err)
	}
	covered := 0
	for range reps {
		x, y := draw(n)
		bx, by := betterHalf(x, y, space.Minimize)
		var p RankComparison
		if err := p.correlate("better half", bx, by, 0.95); err != nil || p.Spearman == nil {
			t.Fatalf("%v %+v", err, p)
		}
		if p.Spearman.Lower <= truth && truth <= p.Spearman.Upper {
			covered++
		}
	}
	c := float64(covered) / reps
	t.Logf("coverage %.3f of the better half's Spearman %.3f", c, truth)
	if math.Abs(c-0.95) > 0.015 {
		t.Errorf("coverage %.3f of the better half's Spearman %.3f, want 0.95 ± 0.015", c, truth)
	}
}
