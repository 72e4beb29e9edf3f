package opt

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"xbo/history"
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
		if a.Budget != 1 || a.Observed != 24 || !strings.Contains(a.Note, "epochs = 1") {
			t.Errorf("proposal %d: budget %d, observed %d, note %q; want the model at epochs = 1 on 24 trials", a.Number, a.Budget, a.Observed, a.Note)
		}
	}
}

// The model's budget is the largest one that d + 2 trials reached, and each
// trial's value there is its value at its first reported step at or above
// it (a complete trial without such a step: its final value).
func TestBudgetData(t *testing.T) {
	s := mustSpace(t, unit2) // d = 2: 4 trials needed
	curve := func(steps ...int64) []history.Intermediate {
		var c []history.Intermediate
		for _, st := range steps {
			c = append(c, history.Intermediate{Step: st, Value: float64(st) * 10})
		}
		return c
	}
	p := func(v float64) []float64 { return []float64{v, v} }
	hist := []Trial{
		{Params: p(0.1), State: Complete, Value: -1, Curve: curve(1, 3, 9, 27)}, // at 9: 90
		{Params: p(0.2), State: Complete, Value: -2},                            // no curve: -2
		{Params: p(0.3), State: Pruned, Curve: curve(1, 3, 10)},                 // first step ≥ 9 is 10: 100
		{Params: p(0.4), State: Pruned, Curve: curve(1, 3)},                     // below 9
		{Params: p(0.5), State: Pending, Curve: curve(2, 9)},                    // running, at 9: 90
		{Params: p(0.6), State: Failed, Curve: curve(1, 3, 9, 27)},              // failed: never data
		{Params: p(0.7), State: Pending},                                        // no curve
		{Params: p(0.8), State: Pruned, Curve: curve(0)},                        // below min
	}
	o, err := New(Config{Space: s, Seed: 1, Resource: &Resource{Name: "epochs", Min: 1, Max: 27}, History: hist})
	if err != nil {
		t.Fatal(err)
	}
	x, y, budget, inData, full, ok := o.budgetData()
	if !ok || full || budget != 9 {
		t.Fatalf("budget %d (full %v, ok %v), want 9", budget, full, ok)
	}
	if want := []float64{90, -2, 100, 90}; !slices.Equal(y, want) {
		t.Errorf("values at budget 9: %v, want %v", y, want)
	}
	if want := []bool{true, true, true, false, true, false, false, false}; !slices.Equal(inData, want) || len(x) != 4 {
		t.Errorf("trials in the data: %v (%d points), want %v", inData, len(x), want)
	}

	// Steps beyond max count at max; with fewer than d + 2 trials the
	// lowest budget reached is used, with every trial.
	o, err = New(Config{Space: s, Seed: 1, Resource: &Resource{Name: "epochs", Min: 1, Max: 5}, History: []Trial{
		{Params: p(0.1), State: Pruned, Curve: curve(1, 3, 9)},
		{Params: p(0.2), State: Pruned, Curve: curve(2)},
		{Params: p(0.3), State: Pruned, Curve: curve(3)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, y, budget, _, _, ok = o.budgetData()
	if !ok || budget != 2 || !slices.Equal(y, []float64{30, 20, 30}) {
		t.Errorf("budget %d, values %v (ok %v); want budget 2 with values 30, 20, 30", budget, y, ok)
	}

	// Enough complete trials: the ordinary full-budget model.
	var done []Trial
	for i := range 4 {
		done = append(done, Trial{Params: p(0.1 + 0.2*float64(i)), State: Complete, Value: float64(i)})
	}
	o, err = New(Config{Space: s, Seed: 1, Resource: &Resource{Name: "epochs", Min: 1, Max: 5}, History: done})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, budget, _, full, ok := o.budgetData(); !full || !ok || budget != 5 {
		t.Errorf("4 complete trials: budget %d full %v, want the full budget 5", budget, full)
	}
}

// Once d + 2 trials are complete, a resource changes nothing: the proposal
// is the full-budget one, pruned trials conditioned on as failures.
func TestMultiFidelityFullBudgetIsTheOrdinaryProposal(t *testing.T) {
	s := mustSpace(t, unit2)
	hist := prunedHistory(10, 7)
	rng := rand.New(rand.NewPCG(9, 9))
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
	if !slices.Equal(with.U, without.U) || with.Budget != 0 {
		t.Errorf("with a resource %v (budget %d), without %v: want the same full-budget proposal", with.U, with.Budget, without.U)
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
	if next.Budget != 1 || next.Observed != 6 {
		t.Errorf("proposal after 6 reports: budget %d on %d trials, want 1 on 6", next.Budget, next.Observed)
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
	if _, err := o.SurrogateOf(next.ID); err == nil || !strings.Contains(err.Error(), "budget 1") {
		t.Errorf("surrogate of a budget-1 proposal: %v, want an error naming the budget", err)
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
// a proposal's budget back from its meta.
func TestFromHistoryKeepsCurves(t *testing.T) {
	s := mustSpace(t, unit2)
	h := &history.History{Space: s, Trials: []history.Trial{
		{Number: 0, State: history.Pruned, Params: []float64{0.1, 0.2}, Value: 3, Completion: -1,
			Intermediate: []history.Intermediate{{Step: 1, Value: 4}, {Step: 3, Value: 3}}},
		{Number: 1, State: history.Running, Params: []float64{0.3, 0.2}, Completion: -1, Meta: json.RawMessage(`{"observed":1,"budget":3}`)},
	}}
	hist, _, err := FromHistory(h)
	if err != nil {
		t.Fatal(err)
	}
	if hist[0].State != Pruned || len(hist[0].Curve) != 2 || hist[0].Curve[1].Value != 3 || hist[1].Budget != 3 {
		t.Errorf("optimizer history: %+v", hist)
	}
}
