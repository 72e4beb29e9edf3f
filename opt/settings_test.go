package opt

import (
	"encoding/json"
	"math"
	"testing"

	"xbo/history"
	"xbo/space"
)

func TestFromHistory(t *testing.T) {
	sp, err := space.New(space.Minimize, []space.Param{{Name: "x", Type: space.Float, Low: 0, High: 1}})
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(ProposalMeta{Observed: 1, Note: "n"})
	nan := math.NaN()
	h := &history.History{Space: sp, Trials: []history.Trial{
		{Number: 0, State: history.Complete, Params: []float64{0.1}, Value: 1, Acquisition: AcqInitialDesign, Completion: 1},
		{Number: 1, State: history.Complete, Params: []float64{0.2}, Value: 2, Acquisition: AcqInitialDesign, Completion: 0},
		{Number: 2, State: history.Expired, Params: []float64{0.3}, Value: nan, Acquisition: "ei", Completion: -1},
		{Number: 3, State: history.Complete, Params: []float64{0.4}, Value: 3, Acquisition: "ei", Completion: 3},
		// A pruned trial keeps its last intermediate value, better than
		// every complete one: the optimizer must not learn it as a result.
		{Number: 4, State: history.Pruned, Params: []float64{0.5}, Value: 0.05, Acquisition: "ei", Meta: meta, Completion: -1},
		{Number: 5, State: history.Running, Params: []float64{0.6}, Value: nan, Acquisition: "ei", Completion: -1},
	}}
	hist, ids, err := FromHistory(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 5 || ids[2] != 0 || ids[3] != 3 || ids[5] != 5 {
		t.Fatalf("%d trials, ids %v (the expired trial is left out)", len(hist), ids)
	}
	want := []struct {
		state      State
		completion int
		observed   int
	}{{Complete, 1, 0}, {Complete, 0, 0}, {Complete, 2, 2}, {Pruned, -1, 1}, {Pending, -1, 3}}
	for k, w := range want {
		got := hist[k]
		if got.State != w.state || got.Completion != w.completion || got.Observed != w.observed {
			t.Errorf("trial %d: %v completion %d observed %d, want %+v", k, got.State, got.Completion, got.Observed, w)
		}
	}
	if !math.IsNaN(hist[3].Value) {
		t.Errorf("the pruned trial's value %v reached the optimizer", hist[3].Value)
	}
	if hist[3].Note != "n" {
		t.Errorf("the recorded proposal's note was not read back")
	}
}

// The search and long-study settings reach the optimizer's configuration,
// and bad combinations are refused by New.
func TestSettingsSearchAndSubset(t *testing.T) {
	st, err := ParseSettings(json.RawMessage(`{"local_candidates":-1,"exact_points":30,"mean_points":40}`))
	if err != nil {
		t.Fatal(err)
	}
	s := mustSpace(t, square2)
	o, err := st.New(s, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := o.Config(); c.LocalCandidates != 0 || c.ExactPoints != 30 || c.MeanPoints != 40 {
		t.Errorf("config local %d exact %d mean %d, want 0 (off), 30, 40", c.LocalCandidates, c.ExactPoints, c.MeanPoints)
	}
	if d, err := (Settings{}).New(s, nil, 0); err != nil || d.Config().LocalCandidates != defaultLocalCandidates || d.Config().ExactPoints != 256 || d.Config().MeanPoints != 1000 {
		t.Errorf("defaults: %+v, %v", d.Config(), err)
	}
	for _, bad := range []string{`{"exact_points":50,"mean_points":40}`, `{"local_candidates":200000}`, `{"mean_points":6000}`} {
		st, err := ParseSettings(json.RawMessage(bad))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.New(s, nil, 0); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// A value of the wrong JSON type is named by its field and the type the
// document wants, not by Go's struct and type names.
func TestParseSettingsTypeErrors(t *testing.T) {
	for raw, want := range map[string]string{
		`{"candidates": 2e7}`:    `optimizer: candidates: want an integer (digits, no exponent or fraction), got number 2e7`,
		`{"candidates": "500"}`:  `optimizer: candidates: want an integer (digits, no exponent or fraction), got string`,
		`{"strategy": 3}`:        `optimizer: strategy: want a string, got number`,
		`{"tau": "0.1"}`:         `optimizer: tau: want a number, got string`,
		`{"no_such_setting": 1}`: `optimizer: json: unknown field "no_such_setting"`,
	} {
		_, err := ParseSettings(json.RawMessage(raw))
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", raw, err, want)
		}
	}
	if _, err := ParseSettings(json.RawMessage(`{"candidates": 500}`)); err != nil {
		t.Errorf("an integer refused: %v", err)
	}
}

// The lengthscale prior reaches the proposal model's fit: on a function of
// x alone, in a space with an inert z, maximum likelihood switches z off
// (lengthscale above 100), the inverse-squared prior keeps it below 10; an
// unknown prior is refused.
func TestSettingsLengthscalePrior(t *testing.T) {
	s := mustSpace(t, `{"params":[
	{"name":"x","type":"float","low":0,"high":1},
	{"name":"z","type":"float","low":0,"high":1}]}`)
	f := func(p []float64) float64 { return math.Sin(6 * p[0]) }
	inert := map[string]float64{}
	for _, prior := range []string{"none", "inverse-squared"} {
		st, err := ParseSettings(json.RawMessage(`{"lengthscale_prior":"` + prior + `","trust_region":"none","seed":3}`))
		if err != nil {
			t.Fatal(err)
		}
		o, err := st.New(s, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		run(t, o, 25, f)
		h := o.History()
		last := h[len(h)-1]
		if last.Hyper == nil {
			t.Fatalf("prior %q: the last proposal recorded no hyperparameters", prior)
		}
		inert[prior] = last.Hyper.Lengthscales[1]
	}
	if inert["none"] < 100 || inert["inverse-squared"] > 10 {
		t.Errorf("inert dimension's lengthscale %v without a prior (want > 100), %v with (want < 10)", inert["none"], inert["inverse-squared"])
	}
	if _, err := New(Config{Space: s, LengthscalePrior: "gamma"}); err == nil {
		t.Error("unknown lengthscale prior accepted")
	}
}
