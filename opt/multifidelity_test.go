package opt

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"xbo/gp"
	"xbo/history"
	"xbo/surrogate"
	"xbo/warp"
)

const unit2 = `{"params":[
	{"name":"a","type":"float","low":0,"high":1},
	{"name":"b","type":"float","low":0,"high":1}]}`

// lowBudgetValue is good near (0.2, 0.8).
func lowBudgetValue(u []float64) float64 {
	return math.Pow(u[0]-0.2, 2) + math.Pow(u[1]-0.8, 2)
}

// prunedHistory is n trials at random configurations, every one pruned at
// step 1 with lowBudgetValue as its only intermediate value.
func prunedHistory(n int, seed uint64) []Trial {
	rng := rand.New(rand.NewPCG(seed, 1))
	hist := make([]Trial, n)
	for i := range hist {
		p := []float64{rng.Float64(), rng.Float64()}
		hist[i] = Trial{Params: p, State: Pruned, Curve: []history.Intermediate{{Step: 1, Value: lowBudgetValue(p)}}}
	}
	return hist
}

// With only pruned trials, the multi-fidelity optimizer proposes where their
// low-budget values are good; without a resource it has no complete trial
// and proposes at random. The test fails if the partial evaluations are
// ignored.
func TestMultiFidelityLearnsFromPrunedTrials(t *testing.T) {
	s := mustSpace(t, unit2)
	meanDistance := func(resource *Resource) (float64, []Trial) {
		o, err := New(Config{Space: s, Seed: 3, Resource: resource, History: prunedHistory(24, 5)})
		if err != nil {
			t.Fatal(err)
		}
		asked, err := o.AskBatch(4)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, a := range asked {
			sum += math.Hypot(a.U[0]-0.2, a.U[1]-0.8)
		}
		return sum / float64(len(asked)), asked
	}
	mf, asked := meanDistance(&Resource{Name: "epochs", Min: 1, Max: 27})
	plain, _ := meanDistance(nil)
	t.Logf("mean distance to the low-budget optimum: multi-fidelity %.3f, without resource %.3f", mf, plain)
	if mf > 0.12 {
		t.Errorf("multi-fidelity proposals are %.3f from (0.2, 0.8) on average, want ≤ 0.12", mf)
	}
	if plain < 0.2 {
		t.Errorf("without a resource the proposals are %.3f from (0.2, 0.8): the test would not tell the two apart", plain)
	}
	for _, a := range asked {
		if !a.Fidelity || !strings.Contains(a.Note, "configuration × epochs fitted on 24 values of 24 trials") {
			t.Errorf("proposal %d: fidelity %v, note %q; want the configuration × epochs model on 24 values", a.Number, a.Fidelity, a.Note)
		}
	}
}

// Without a resource the curves imply one once a trial was pruned: from
// the lowest positive step reported to the last step of the longest
// complete curve; none while no trial was pruned within that range, no
// complete trial has a curve, or with PrunedAsFailed. The study's own
// resource wins.
func TestInferResource(t *testing.T) {
	s := mustSpace(t, unit2)
	steps := func(from, to int64) []history.Intermediate {
		var c []history.Intermediate
		for st := from; st <= to; st++ {
			c = append(c, history.Intermediate{Step: st, Value: 1 / float64(st+1)})
		}
		return c
	}
	p := func(v float64) []float64 { return []float64{v, 1 - v} }
	complete := []Trial{
		{Params: p(0.1), State: Complete, Value: 0.1, Curve: steps(0, 26)},
		{Params: p(0.2), State: Complete, Value: 0.2, Curve: steps(0, 20)},
		{Params: p(0.3), State: Failed, Curve: steps(0, 40)},
	}
	cases := []struct {
		name string
		hist []Trial
		cfg  Config
		want *Resource
	}{
		{"no pruned trial", append(slices.Clone(complete), Trial{Params: p(0.4), State: Pending, Curve: steps(0, 3)}), Config{}, nil},
		{"pruned at step 3", append(slices.Clone(complete), Trial{Params: p(0.4), State: Pruned, Curve: steps(0, 3)}), Config{}, &Resource{Name: "step", Min: 1, Max: 26}},
		{"curves from step 2", []Trial{{Params: p(0.1), State: Complete, Value: 0.1, Curve: steps(2, 26)}, {Params: p(0.4), State: Pruned, Curve: steps(2, 5)}}, Config{}, &Resource{Name: "step", Min: 2, Max: 26}},
		{"pruned at step 0 only", append(slices.Clone(complete), Trial{Params: p(0.4), State: Pruned, Curve: steps(0, 0)}), Config{}, nil},
		{"no complete curve", []Trial{{Params: p(0.1), State: Complete, Value: 0.1}, {Params: p(0.4), State: Pruned, Curve: steps(0, 3)}}, Config{}, nil},
		{"pruned as failed", append(slices.Clone(complete), Trial{Params: p(0.4), State: Pruned, Curve: steps(0, 3)}), Config{PrunedAsFailed: true}, nil},
		{"the study's own", append(slices.Clone(complete), Trial{Params: p(0.4), State: Pruned, Curve: steps(0, 3)}), Config{Resource: &Resource{Name: "epochs", Min: 1, Max: 81}}, &Resource{Name: "epochs", Min: 1, Max: 81}},
	}
	for _, c := range cases {
		c.cfg.Space, c.cfg.Seed, c.cfg.History = s, 1, c.hist
		o, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := o.resource()
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: resource %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The configuration × budget data: each trial's values at the levels
// Min·3^k and Max it reached, at its first reported step at or above each
// level (with that step's coordinate), a complete trial's final value at
// Max; failed trials and steps below Min are left out.
func TestFidelityData(t *testing.T) {
	s := mustSpace(t, unit2)
	curve := func(steps ...int64) []history.Intermediate {
		var c []history.Intermediate
		for _, st := range steps {
			c = append(c, history.Intermediate{Step: st, Value: float64(st) * 10})
		}
		return c
	}
	p := func(v float64) []float64 { return []float64{v, v} }
	hist := []Trial{
		{Params: p(0.1), State: Complete, Value: -1, Curve: curve(1, 3, 9, 27)}, // 10, 30, 90, 270
		{Params: p(0.2), State: Complete, Value: -2},                            // final only: -2 at 27
		{Params: p(0.3), State: Pruned, Curve: curve(2, 4)},                     // 2 → 20, 3 → 40 (step 4)
		{Params: p(0.5), State: Pending, Curve: curve(1)},                       // 10
		{Params: p(0.6), State: Failed, Curve: curve(1, 3, 9, 27)},              // never
		{Params: p(0.7), State: Pending},                                        // no curve
		{Params: p(0.8), State: Pruned, Curve: curve(0)},                        // below min
	}
	r := &Resource{Name: "epochs", Min: 1, Max: 27}
	if got := r.fidelityLevels(); !slices.Equal(got, []int64{1, 3, 9, 27}) {
		t.Errorf("levels %v, want 1 3 9 27", got)
	}
	if got := (&Resource{Name: "e", Min: 2, Max: 20}).fidelityLevels(); !slices.Equal(got, []int64{2, 6, 18, 20}) {
		t.Errorf("levels %v, want 2 6 18 20", got)
	}
	o, err := New(Config{Space: s, Seed: 1, Resource: r, History: hist})
	if err != nil {
		t.Fatal(err)
	}
	xz, y, configs, read, ok := o.fidelityData(o.cfg.Resource)
	if !ok || len(configs) != 4 || read != 27 {
		t.Fatalf("ok %v, %d configurations, read at %d; want 4, read at 27 (values at several budgets)", ok, len(configs), read)
	}
	if want := []float64{10, 30, 90, 270, -2, 20, 40, 10}; !slices.Equal(y, want) {
		t.Errorf("values %v, want %v", y, want)
	}
	z := func(step float64) float64 { return math.Log(step) / math.Log(27) }
	wantZ := []float64{0, z(3), z(9), 1, 1, z(2), z(4), 0}
	for i, row := range xz {
		if math.Abs(row[2]-wantZ[i]) > 1e-12 {
			t.Errorf("point %d: budget coordinate %v, want %v", i, row[2], wantZ[i])
		}
	}
	// Values at one budget only: the model is read there.
	o, err = New(Config{Space: s, Seed: 1, Resource: r, History: []Trial{hist[3], {Params: p(0.9), State: Pruned, Curve: curve(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, read, ok := o.fidelityData(o.cfg.Resource); !ok || read != 1 {
		t.Errorf("values at step 1 only: read at %d (ok %v), want 1", read, ok)
	}
	// Every trial complete: no partial value, the ordinary model applies.
	o, err = New(Config{Space: s, Seed: 1, Resource: r, History: hist[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, ok := o.fidelityData(o.cfg.Resource); ok {
		t.Error("complete trials only: the configuration × budget model was used")
	}
}

// Without any trial stopped early a resource changes nothing: the proposal
// is the ordinary full-budget one.
func TestMultiFidelityWithoutPartialValuesIsTheOrdinaryProposal(t *testing.T) {
	s := mustSpace(t, unit2)
	rng := rand.New(rand.NewPCG(9, 9))
	var hist []Trial
	for range 6 {
		p := []float64{rng.Float64(), rng.Float64()}
		hist = append(hist, Trial{Params: p, State: Complete, Value: lowBudgetValue(p)})
	}
	ask := func(resource *Resource) Trial {
		o, err := New(Config{Space: s, Seed: 2, Resource: resource, History: hist})
		if err != nil {
			t.Fatal(err)
		}
		a, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	with, without := ask(&Resource{Name: "epochs", Min: 1, Max: 27}), ask(nil)
	if !slices.Equal(with.U, without.U) || with.Fidelity {
		t.Errorf("with a resource %v (fidelity %v), without %v: want the same full-budget proposal", with.U, with.Fidelity, without.U)
	}
}

func TestReportAndTellPruned(t *testing.T) {
	s := mustSpace(t, unit2)
	o, err := New(Config{Space: s, Seed: 1, Resource: &Resource{Name: "epochs", Min: 1, Max: 9}, InitialSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 6 {
		a, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
		c := []history.Intermediate{{Step: 1, Value: lowBudgetValue(a.U)}}
		if err := o.Report(a.ID, c); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := o.TellPruned(a.ID, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Three pruned and three running trials, all at step 1: 6 ≥ d + 2.
	next, err := o.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if !next.Fidelity || !strings.Contains(next.Note, "fitted on 6 values of 6 trials") {
		t.Errorf("proposal after 6 reports: fidelity %v, note %q; want the configuration × budget model on 6 values", next.Fidelity, next.Note)
	}
	tr, _ := o.Trial(ids[0])
	if tr.State != Pruned || len(tr.Curve) != 1 {
		t.Errorf("pruned trial: state %s, curve %v", tr.State, tr.Curve)
	}
	for _, bad := range [][]history.Intermediate{
		{{Step: 2, Value: 1}, {Step: 2, Value: 1}},
		{{Step: -1, Value: 1}},
		{{Step: 1, Value: math.NaN()}},
	} {
		if err := o.Report(ids[1], bad); err == nil {
			t.Errorf("report %v accepted", bad)
		}
	}
	if err := o.Report(ids[0], nil); err == nil || !strings.Contains(err.Error(), "pruned") {
		t.Errorf("report on a pruned trial: %v", err)
	}
	if _, err := o.SurrogateOf(next.ID); err == nil || !strings.Contains(err.Error(), "configuration × budget") {
		t.Errorf("surrogate of a multi-fidelity proposal: %v, want an error saying why it cannot be rebuilt", err)
	}
}

func TestResourceValidation(t *testing.T) {
	s := mustSpace(t, unit2)
	for _, r := range []Resource{
		{Name: "", Min: 1, Max: 9},
		{Name: "epochs", Min: 0, Max: 9},
		{Name: "epochs", Min: 5, Max: 5},
		{Name: "epochs", Min: 1, Max: MaxResourceStep + 1},
	} {
		if _, err := New(Config{Space: s, Resource: &r}); err == nil || !strings.Contains(err.Error(), "resource") {
			t.Errorf("resource %+v: %v, want an error", r, err)
		}
	}
	cfg, err := ParseSettings(json.RawMessage(`{"resource":{"name":"epochs","min":1,"max":81}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Config(s, nil, 0); c.Resource == nil || *c.Resource != (Resource{Name: "epochs", Min: 1, Max: 81}) {
		t.Errorf("settings resource: %+v", c.Resource)
	}
	if _, err := ParseSettings(json.RawMessage(`{"resource":{"name":"epochs","low":1}}`)); err == nil {
		t.Error("unknown resource field accepted")
	}
}

// FromHistory keeps pruned trials as pruned, with their curves, and reads
// back from its meta that a proposal was multi-fidelity.
func TestFromHistoryKeepsCurves(t *testing.T) {
	s := mustSpace(t, unit2)
	h := &history.History{Space: s, Trials: []history.Trial{
		{Number: 0, State: history.Pruned, Params: []float64{0.1, 0.2}, Value: 3, Completion: -1,
			Intermediate: []history.Intermediate{{Step: 1, Value: 4}, {Step: 3, Value: 3}}},
		{Number: 1, State: history.Running, Params: []float64{0.3, 0.2}, Completion: -1, Meta: json.RawMessage(`{"note":"n","fidelity":true}`)},
	}}
	hist, _, err := FromHistory(h)
	if err != nil {
		t.Fatal(err)
	}
	if hist[0].State != Pruned || len(hist[0].Curve) != 2 || hist[0].Curve[1].Value != 3 || !hist[1].Fidelity {
		t.Errorf("optimizer history: %+v", hist)
	}
}

// The same with a maximized objective and negated values: the sign reaches
// the configuration × budget data, so the proposals are the minimization's.
func TestMultiFidelityMaximize(t *testing.T) {
	ask := func(objective string, sign float64) []Trial {
		s := mustSpace(t, `{"objective":"`+objective+`","params":[
	{"name":"a","type":"float","low":0,"high":1},
	{"name":"b","type":"float","low":0,"high":1}]}`)
		hist := prunedHistory(24, 5)
		for i := range hist {
			hist[i].Curve[0].Value *= sign
		}
		o, err := New(Config{Space: s, Seed: 3, Resource: &Resource{Name: "epochs", Min: 1, Max: 27}, History: hist})
		if err != nil {
			t.Fatal(err)
		}
		asked, err := o.AskBatch(4)
		if err != nil {
			t.Fatal(err)
		}
		return asked
	}
	minimized, maximized := ask("minimize", 1), ask("maximize", -1)
	for i := range minimized {
		if !slices.Equal(minimized[i].U, maximized[i].U) {
			t.Errorf("proposal %d: minimize %v, maximize with negated values %v", i, minimized[i].U, maximized[i].U)
		}
	}
}

// Curves that cross: the values at step 1 are best near (0.2, 0.8), the
// final ones near (0.8, 0.2). With complete trials at both budgets the model
// is read at the full budget, so the proposals go where the final values are
// good, not where the many step-1 values are.
func TestMultiFidelityReadsTheFullBudget(t *testing.T) {
	s := mustSpace(t, unit2)
	final := func(u []float64) float64 { return math.Pow(u[0]-0.8, 2) + math.Pow(u[1]-0.2, 2) }
	hist := prunedHistory(30, 5)
	rng := rand.New(rand.NewPCG(11, 3))
	for range 12 {
		p := []float64{rng.Float64(), rng.Float64()}
		hist = append(hist, Trial{Params: p, State: Complete, Value: final(p),
			Curve: []history.Intermediate{{Step: 1, Value: lowBudgetValue(p)}, {Step: 27, Value: final(p)}}})
	}
	o, err := New(Config{Space: s, Seed: 4, Resource: &Resource{Name: "epochs", Min: 1, Max: 27}, History: hist})
	if err != nil {
		t.Fatal(err)
	}
	asked, err := o.AskBatch(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range asked {
		toFinal, toLow := math.Hypot(a.U[0]-0.8, a.U[1]-0.2), math.Hypot(a.U[0]-0.2, a.U[1]-0.8)
		if !a.Fidelity || !strings.Contains(a.Note, "read at epochs = 27") || toFinal > 0.35 || toFinal > toLow/3 {
			t.Errorf("proposal %v (note %q): %.3f from the final optimum, %.3f from the step-1 one", a.U, a.Note, toFinal, toLow)
		}
	}
}

// Beyond ExactPoints values the configuration × budget model keeps its
// hyperparameters until its data grew by a tenth, as the ordinary model
// does: one more pruned trial (41 values after 40) proposes with exactly
// the same hyperparameters; six more (47) refit them.
func TestFidelityHyperparametersKeptWhileDataGrowsLittle(t *testing.T) {
	s := mustSpace(t, unit2)
	o, err := New(Config{Space: s, Seed: 3, Resource: &Resource{Name: "epochs", Min: 1, Max: 27},
		History: prunedHistory(40, 5), ExactPoints: 20, MeanPoints: 30})
	if err != nil {
		t.Fatal(err)
	}
	askAndPrune := func() *Trial {
		t.Helper()
		tr, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if !tr.Fidelity || tr.Hyper == nil {
			t.Fatalf("trial %d: fidelity %v, hyperparameters %v; want the configuration × budget model's", tr.Number, tr.Fidelity, tr.Hyper)
		}
		if err := o.TellPruned(tr.ID, []history.Intermediate{{Step: 1, Value: lowBudgetValue(tr.U)}}); err != nil {
			t.Fatal(err)
		}
		return &tr
	}
	first := askAndPrune()
	second := askAndPrune()
	if !slices.Equal(first.Hyper.Lengthscales, second.Hyper.Lengthscales) || first.Hyper.NoiseVariance != second.Hyper.NoiseVariance {
		t.Errorf("41 values after 40: hyperparameters %+v, want the previous %+v kept", *second.Hyper, *first.Hyper)
	}
	var last *Trial
	for range 6 {
		last = askAndPrune()
	}
	if slices.Equal(first.Hyper.Lengthscales, last.Hyper.Lengthscales) {
		t.Errorf("47 values after 40: hyperparameters %+v not refitted", *last.Hyper)
	}
}

// ContinueChance on curves y(u, t) = f(u) + 0.5/t: a running trial near
// f's optimum whose first value fits the pattern may well beat the best
// complete trial; one far from it, or near it with a first value far above
// the pattern, has little chance.
func TestContinueChance(t *testing.T) {
	s := mustSpace(t, unit2)
	curve := func(u []float64, steps ...int64) []history.Intermediate {
		var c []history.Intermediate
		for _, st := range steps {
			c = append(c, history.Intermediate{Step: st, Value: lowBudgetValue(u) + 0.5/float64(st)})
		}
		return c
	}
	rng := rand.New(rand.NewPCG(9, 1))
	var hist []Trial
	for range 20 {
		u := []float64{rng.Float64(), rng.Float64()}
		if math.Hypot(u[0]-0.2, u[1]-0.8) < 0.25 {
			continue // leave the optimum's neighbourhood to the running trials
		}
		hist = append(hist, Trial{Params: u, State: Complete, Value: lowBudgetValue(u) + 0.5/27, Curve: curve(u, 1, 3, 9, 27)})
	}
	near, far := []float64{0.21, 0.79}, []float64{0.9, 0.1}
	misleading := curve(near, 1)
	misleading[0].Value += 3
	running := []Trial{
		{Params: near, State: Pending, Curve: curve(near, 1)},
		{Params: far, State: Pending, Curve: curve(far, 1)},
		{Params: near, State: Pending, Curve: misleading},
		{Params: []float64{0.5, 0.5}, State: Pending},
		{Params: far, State: Pending, Curve: curve(far, 1, 3, 9, 27)},
	}
	// Each running trial with the complete ones only, so that they do not
	// inform one another.
	var o *Optimizer
	chance := func(i int) float64 {
		var err error
		o, err = New(Config{Space: s, Seed: 2, Resource: &Resource{Name: "epochs", Min: 1, Max: 27}, History: append(slices.Clone(hist), running[i])})
		if err != nil {
			t.Fatal(err)
		}
		c, err := o.ContinueChance(o.History()[len(hist)].ID, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cNear, cFar, cMisled, cNone := chance(0), chance(1), chance(2), chance(3)
	t.Logf("chance: near %.3g, far %.3g, near with a misleading first value %.3g, no value yet %.3g", cNear, cFar, cMisled, cNone)
	if cNear < 0.3 {
		t.Errorf("near the optimum: chance %.3g, want ≥ 0.3", cNear)
	}
	if cFar > 0.01 {
		t.Errorf("far from it: chance %.3g, want ≤ 0.01", cFar)
	}
	if !(cMisled < cNear/2) {
		t.Errorf("a first value 3 above the pattern should lower the chance: %.3g against %.3g", cMisled, cNear)
	}
	if c := chance(4); c != 1 {
		t.Errorf("a trial at the full budget: chance %v, want 1 (nothing left to save)", c)
	}
	if cNone != 1 {
		t.Errorf("a trial with no value yet: chance %v, want 1", cNone)
	}
	if _, err := o.ContinueChance(o.History()[0].ID, 0.5); err == nil {
		t.Error("a complete trial: want an error")
	}
	plain, err := New(Config{Space: s, Seed: 2, History: running[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.ContinueChance(plain.History()[0].ID, 0.5); err == nil || !strings.Contains(err.Error(), "no resource") {
		t.Errorf("without a resource: error %v", err)
	}
	// Nothing complete to compare with: every running trial may go on.
	first, err := New(Config{Space: s, Seed: 2, Resource: &Resource{Name: "epochs", Min: 1, Max: 27}, History: running[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := first.ContinueChance(first.History()[1].ID, 0.5); err != nil || c != 1 {
		t.Errorf("no complete trial: chance %v, %v; want 1", c, err)
	}
}

// Decisions on one optimizer whose values did not change share one fitted
// model, and give what an optimizer of their own gives; a report that
// changes the values makes the next decision fit again.
func TestContinueChanceReusesItsModel(t *testing.T) {
	s := mustSpace(t, unit2)
	// Noisy values, so that the chances are neither 0 nor 1.
	noise := rand.New(rand.NewPCG(9, 3))
	curve := func(u []float64, steps ...int64) []history.Intermediate {
		var c []history.Intermediate
		for _, st := range steps {
			c = append(c, history.Intermediate{Step: st, Value: lowBudgetValue(u) + 0.5/float64(st) + 0.3*noise.NormFloat64()})
		}
		return c
	}
	rng := rand.New(rand.NewPCG(9, 2))
	var hist []Trial
	for range 16 {
		u := []float64{rng.Float64(), rng.Float64()}
		c := curve(u, 1, 3, 9, 27)
		hist = append(hist, Trial{Params: u, State: Complete, Value: c[3].Value, Curve: c})
	}
	running := []Trial{
		{Params: []float64{0.21, 0.79}, State: Pending, Curve: curve([]float64{0.21, 0.79}, 1)},
		{Params: []float64{0.6, 0.4}, State: Pending, Curve: curve([]float64{0.6, 0.4}, 1)},
		{Params: []float64{0.9, 0.1}, State: Pending, Curve: curve([]float64{0.9, 0.1}, 1, 2, 3)},
	}
	build := func(h []Trial) *Optimizer {
		o, err := New(Config{Space: s, Seed: 2, Resource: &Resource{Name: "epochs", Min: 1, Max: 27}, History: h})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	chance := func(o *Optimizer, i int) float64 {
		c, err := o.ContinueChance(o.History()[len(hist)+i].ID, -1)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	shared := build(append(slices.Clone(hist), running...))
	for i := range running {
		got, fresh := chance(shared, i), chance(build(append(slices.Clone(hist), running...)), i)
		if got != fresh {
			t.Errorf("running trial %d: chance %v from the shared model, %v from an optimizer of its own", i, got, fresh)
		}
		t.Logf("running trial %d: chance %.3g", i, got)
		if got <= 0 || got >= 1 {
			t.Errorf("running trial %d: chance %v, want one the model computed, in (0, 1)", i, got)
		}
	}
	if shared.chanceFits != 1 {
		t.Errorf("%d decisions on unchanged values fitted %d models, want 1", len(running), shared.chanceFits)
	}
	// Trial 1 reaches step 3, a rung: the values change.
	moved := slices.Clone(running)
	moved[1].Curve = curve(moved[1].Params, 1, 2, 3)
	moved[1].Curve[2].Value += 0.4
	if err := shared.Report(shared.History()[len(hist)+1].ID, moved[1].Curve); err != nil {
		t.Fatal(err)
	}
	got, fresh := chance(shared, 1), chance(build(append(slices.Clone(hist), moved...)), 1)
	if got != fresh || shared.chanceFits != 2 {
		t.Errorf("after a report: chance %v (%d fits), an optimizer of its own %v; want equal, 2 fits", got, shared.chanceFits, fresh)
	}
}

// The configuration × budget model is fitted to warped values: with the
// default Yeo-Johnson warp, the continue chance and the proposal equal
// those of an unwarped optimizer given values warped beforehand by the
// same fitted warp, and differ from those on the raw values.
func TestMultiFidelityModelIsWarped(t *testing.T) {
	s := mustSpace(t, unit2)
	rng := rand.New(rand.NewPCG(4, 1))
	var hist []Trial
	for range 16 {
		u := []float64{rng.Float64(), rng.Float64()}
		// A skewed objective: the warp is far from the identity.
		v := func(st int64) float64 { return math.Exp(3*lowBudgetValue(u)) + 0.5/float64(st) }
		var c []history.Intermediate
		for _, st := range []int64{1, 3, 9, 27} {
			c = append(c, history.Intermediate{Step: st, Value: v(st)})
		}
		hist = append(hist, Trial{Params: u, State: Complete, Value: v(27), Curve: c})
	}
	near := []float64{0.25, 0.75}
	hist = append(hist, Trial{Params: near, State: Pending, Curve: []history.Intermediate{{Step: 1, Value: math.Exp(3*lowBudgetValue(near)) + 0.5}}})
	resource := &Resource{Name: "epochs", Min: 1, Max: 27}
	build := func(warpName string, h []Trial) *Optimizer {
		o, err := New(Config{Space: s, Seed: 2, Resource: resource, OutputWarp: warpName, History: h})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	warped := build("", hist)
	if warped.Config().OutputWarp != "yeo-johnson" {
		t.Fatalf("default warp %q", warped.Config().OutputWarp)
	}
	_, y, _, _, ok := warped.fidelityData(warped.cfg.Resource)
	if !ok {
		t.Fatal("no configuration × budget data")
	}
	fit, err := warp.Fit(y)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fit.Lambda-1) < 0.2 {
		t.Fatalf("λ = %.3g: the warp is nearly the identity and the test would not tell", fit.Lambda)
	}
	apply := func(v float64) float64 { return fit.Apply([]float64{v})[0] }
	pre := make([]Trial, len(hist))
	for i, tr := range hist {
		tr.Curve = slices.Clone(tr.Curve)
		for j := range tr.Curve {
			tr.Curve[j].Value = apply(tr.Curve[j].Value)
		}
		if tr.State == Complete {
			tr.Value = apply(tr.Value)
		}
		pre[i] = tr
	}
	chanceAndAsk := func(o *Optimizer) (float64, []float64) {
		c, err := o.ContinueChance(o.History()[len(hist)-1].ID, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		a, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if !a.Fidelity {
			t.Fatalf("proposal %q is not of the configuration × budget model: %s", a.Acquisition, a.Note)
		}
		return c, a.U
	}
	cWarped, uWarped := chanceAndAsk(warped)
	cPre, uPre := chanceAndAsk(build("none", pre))
	cRaw, uRaw := chanceAndAsk(build("none", hist))
	t.Logf("chance: warped %.6g, pre-warped %.6g, raw %.6g; proposals %.4f %.4f %.4f", cWarped, cPre, cRaw, uWarped, uPre, uRaw)
	if math.Abs(cWarped-cPre) > 1e-9 || !slices.Equal(uWarped, uPre) {
		t.Errorf("warped model: chance %v, proposal %v; values warped beforehand: %v, %v", cWarped, uWarped, cPre, uPre)
	}
	if math.Abs(cWarped-cRaw) < 1e-3 && slices.Equal(uWarped, uRaw) {
		t.Errorf("the raw values give the same chance %v and proposal %v: the test cannot tell", cRaw, uRaw)
	}
}

// The model pruner trusts a budget only when the complete trials show that
// values there rank configurations as the final values do: with complete
// trials whose step-1 values rank them in reverse, a trial at step 1 has
// chance 1 (no pruning), where with the same finals and consistent step-1
// values the same trial's chance is low; fewer than five complete trials
// with a value at the step do not show anything either.
func TestContinueChanceTrustsOnlyBudgetsThatRankAsTheFinal(t *testing.T) {
	s := mustSpace(t, unit2)
	rng := rand.New(rand.NewPCG(12, 1))
	far := []float64{0.95, 0.05}
	build := func(n int, step1 func(final float64) float64, minRank float64) float64 {
		var hist []Trial
		for len(hist) < n {
			u := []float64{rng.Float64(), rng.Float64()}
			if math.Hypot(u[0]-far[0], u[1]-far[1]) < 0.3 {
				continue
			}
			final := lowBudgetValue(u)
			hist = append(hist, Trial{Params: u, State: Complete, Value: final, Curve: []history.Intermediate{{Step: 1, Value: step1(final)}, {Step: 27, Value: final}}})
		}
		hist = append(hist, Trial{Params: far, State: Pending, Curve: []history.Intermediate{{Step: 1, Value: step1(lowBudgetValue(far))}}})
		o, err := New(Config{Space: s, Seed: 2, Resource: &Resource{Name: "epochs", Min: 1, Max: 27}, History: hist})
		if err != nil {
			t.Fatal(err)
		}
		c, err := o.ContinueChance(o.History()[n].ID, minRank)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	consistent := func(final float64) float64 { return final + 0.5 }
	reversed := func(final float64) float64 { return 3 - final }
	cConsistent, cReversed, cFew := build(16, consistent, 0.5), build(16, reversed, 0.5), build(4, consistent, 0.5)
	// A bound of −1 (min_rank_correlation) trusts every step once five
	// trials are complete: the reversed step-1 values are taken at face
	// value and the GP's chance decides.
	cTrusted := build(16, reversed, -1)
	t.Logf("chance of a poor trial at step 1: consistent budgets %.3g, reversed %.3g, 4 complete trials %.3g; reversed with the bound −1 %.3g", cConsistent, cReversed, cFew, cTrusted)
	if cTrusted > 0.05 {
		t.Errorf("bound −1 on reversed values: chance %v, want the GP's own (≤ 0.05 here)", cTrusted)
	}
	o, err := New(Config{Space: s, Seed: 2, Resource: &Resource{Name: "epochs", Min: 1, Max: 27},
		History: []Trial{{Params: far, State: Pending, Curve: []history.Intermediate{{Step: 1, Value: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float64{1, -1.5, math.NaN()} {
		if _, err := o.ContinueChance(o.History()[0].ID, bad); err == nil || !strings.Contains(err.Error(), "rank correlation bound") {
			t.Errorf("rank correlation bound %v: error %v", bad, err)
		}
	}
	if cConsistent > 0.05 {
		t.Errorf("step-1 values that rank as the finals: chance %.3g, want ≤ 0.05 (the test needs a prunable trial)", cConsistent)
	}
	if cReversed != 1 {
		t.Errorf("step-1 values that rank in reverse: chance %v, want 1", cReversed)
	}
	if cFew != 1 {
		t.Errorf("4 complete trials: chance %v, want 1 (too few to show the ranking)", cFew)
	}
}

// predictOnly hides a model's Mean, so atBudget falls back on Predict.
type predictOnly struct{ surrogate.Model }

// atBudget's Mean is Predict's mean, bit for bit, for an exact GP, a
// subset-of-data GP (whose mean and variance come from different subsets)
// and a model without a mean-only prediction.
func TestAtBudgetMeanIsPredictsMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	xz := make([][]float64, 400)
	y := make([]float64, len(xz))
	for i := range xz {
		xz[i] = []float64{rng.Float64(), rng.Float64(), rng.Float64()}
		y[i] = math.Sin(6*xz[i][0]) + xz[i][1]*xz[i][2] + 0.01*rng.NormFloat64()
	}
	exact, err := gp.Fit(xz[:100], y[:100], gp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	subset, err := gp.FitSubset(context.Background(), xz, y, gp.SubsetOptions{MeanPoints: 300, VariancePoints: 60})
	if err != nil {
		t.Fatal(err)
	}
	x := make([][]float64, 50)
	for i := range x {
		x[i] = []float64{rng.Float64(), rng.Float64()}
	}
	for name, model := range map[string]surrogate.Model{"exact": exact, "subset": subset, "predict only": predictOnly{subset}} {
		m := atBudget{model: model, z: 0.7}
		got, want, variance := make([]float64, len(x)), make([]float64, len(x)), make([]float64, len(x))
		if err := m.Mean(x, got); err != nil {
			t.Fatal(err)
		}
		if err := m.Predict(x, want, variance); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: Mean %v, Predict's mean %v", name, got[:3], want[:3])
		}
	}
	if err := (atBudget{model: exact, z: 0.7}).Mean([][]float64{{0.5}}, make([]float64, 1)); err == nil {
		t.Error("a point with 1 coordinate of 2 was accepted")
	}
}
