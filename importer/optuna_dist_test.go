package importer

import (
	"xbo/history"

	"encoding/json"
	"math"
	"strings"
	"testing"

	"xbo/space"
)

func TestParseOptunaDistributions(t *testing.T) {
	cases := []struct {
		json string
		want optunaDist
	}{
		{`{"name": "UniformDistribution", "attributes": {"low": -1.0, "high": 2.0}}`, optunaDist{typ: space.Float, low: -1, high: 2}},
		{`{"name": "LogUniformDistribution", "attributes": {"low": 1e-05, "high": 1.0}}`, optunaDist{typ: space.Float, low: 1e-5, high: 1, log: true}},
		{`{"name": "DiscreteUniformDistribution", "attributes": {"low": 0.0, "high": 1.0, "q": 0.25}}`, optunaDist{typ: space.Float, low: 0, high: 1, step: 0.25}},
		{`{"name": "IntUniformDistribution", "attributes": {"low": 1, "high": 9, "step": 2}}`, optunaDist{typ: space.Int, low: 1, high: 9, step: 2}},
		{`{"name": "IntLogUniformDistribution", "attributes": {"low": 1, "high": 1024, "step": 1}}`, optunaDist{typ: space.Int, low: 1, high: 1024, log: true}},
		{`{"name": "FloatDistribution", "attributes": {"step": null, "low": 0.0001, "high": 1.0, "log": true}}`, optunaDist{typ: space.Float, low: 1e-4, high: 1, log: true}},
		{`{"name": "IntDistribution", "attributes": {"log": false, "step": 1, "low": 1, "high": 8}}`, optunaDist{typ: space.Int, low: 1, high: 8}},
		{`{"type": "int", "low": 0, "high": 3}`, optunaDist{typ: space.Int, low: 0, high: 3}},
		{`{"name": "CategoricalDistribution", "attributes": {"choices": ["a", 1, 2.5, true, null]}}`, optunaDist{typ: space.Categorical, choices: []string{"a", "1", "2.5", "True", "None"}}},
	}
	for _, c := range cases {
		d, err := parseOptunaDist(c.json)
		if err != nil {
			t.Errorf("%s: %v", c.json, err)
			continue
		}
		if d.typ != c.want.typ || d.low != c.want.low || d.high != c.want.high || d.log != c.want.log ||
			d.step != c.want.step || strings.Join(d.choices, "|") != strings.Join(c.want.choices, "|") {
			t.Errorf("%s: got %+v, want %+v", c.json, d, c.want)
		}
	}
	for _, bad := range []string{
		`{"name": "NormalDistribution", "attributes": {}}`,
		`{"name": "FloatDistribution", "attributes": {"low": 2, "high": 1}}`,
		`{"name": "FloatDistribution", "attributes": {"low": 0, "high": 1, "log": true}}`,
		`{"name": "CategoricalDistribution", "attributes": {"choices": []}}`,
		`{"name": "CategoricalDistribution", "attributes": {"choices": ["a", "a"]}}`,
		`not json`,
	} {
		if _, err := parseOptunaDist(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// A dynamic search space (ranges and choices that change between trials),
// stepped ranges and a single-valued range, as Optuna allows them.
func TestAssembleOptunaDynamicSpace(t *testing.T) {
	parse := func(s string) optunaDist { return mustDist(t, s) }
	x1 := parse(`{"name": "FloatDistribution", "attributes": {"low": 0, "high": 1, "log": false, "step": 0.1}}`)
	x2 := parse(`{"name": "FloatDistribution", "attributes": {"low": -1, "high": 0.5, "log": false, "step": null}}`)
	c1 := parse(`{"name": "CategoricalDistribution", "attributes": {"choices": ["a", "b"]}}`)
	c2 := parse(`{"name": "CategoricalDistribution", "attributes": {"choices": ["b", "c"]}}`)
	one := parse(`{"name": "IntDistribution", "attributes": {"low": 4, "high": 4, "log": false, "step": 1}}`)
	list := []optunaTrial{
		{number: 0, state: history.Complete, value: 1, params: []optunaParam{{"x", 0.3, x1}, {"c", 1, c1}, {"n", 4, one}}},
		{number: 1, state: history.Complete, value: 2, params: []optunaParam{{"x", -0.7, x2}, {"c", 1, c2}, {"n", 4, one}}},
		{number: 2, state: history.Complete, value: 3, params: []optunaParam{{"x", 0.1, x2}, {"c", 0, c2}, {"n", 4, one}}},
	}
	run, err := assembleOptuna("optuna-rdb", "test", optunaStudy{name: "s", dirs: []space.Direction{space.Minimize}}, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Space
	if x := s.Params[0]; x.Low != -1 || x.High != 1 {
		t.Errorf("x: [%v, %v], want the union [-1, 1]", x.Low, x.High)
	}
	if c := s.Params[1]; strings.Join(c.Labels(), ",") != "a,b,c" {
		t.Errorf("c: %v", c.Choices)
	}
	if n := s.Params[2]; n.Type != space.Categorical || len(n.Choices) != 1 {
		t.Errorf("n: %+v", n)
	}
	// Categorical indexes refer to each trial's own choices.
	for i, want := range []string{"b", "c", "b"} {
		if got := s.Format(1, run.Trials[i].Params[1]); got != want {
			t.Errorf("trial %d: c = %q, want %q", i, got, want)
		}
	}
	if run.Trials[1].Params[0] != -0.7 || math.IsNaN(run.Trials[2].Params[2]) {
		t.Errorf("values %v %v", run.Trials[1].Params, run.Trials[2].Params)
	}
	all := strings.Join(run.Warnings, "\n")
	for _, w := range []string{`"x": its distribution changes`, `"c": its distribution changes`, `"x": its step changes between trials`, `"n" takes the single value 4`} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	// A parameter that changes kind is refused with both trials named.
	list[1].params[2] = optunaParam{"n", 0, c1}
	if _, err := assembleOptuna("optuna-rdb", "test", optunaStudy{name: "s", dirs: []space.Direction{space.Minimize}}, list, nil); err == nil || !strings.Contains(err.Error(), "trial 1 uses CategoricalDistribution") {
		t.Errorf("kind change: %v", err)
	}
}

// A parameter missing from some trials with no parent that explains it stays
// unconditional; the trials lacking it are left out and named.
func TestUnexplainedMissingParameter(t *testing.T) {
	x, _ := parseOptunaDist(`{"name": "FloatDistribution", "attributes": {"low": 0, "high": 1, "log": false, "step": null}}`)
	y, _ := parseOptunaDist(`{"name": "FloatDistribution", "attributes": {"low": 0, "high": 1, "log": false, "step": null}}`)
	list := []optunaTrial{
		{number: 0, state: history.Complete, value: 1, params: []optunaParam{{"x", 0.3, x}, {"y", 0.5, y}}},
		{number: 1, state: history.Complete, value: 2, params: []optunaParam{{"x", 0.4, x}}},
		{number: 2, state: history.Failed, value: math.NaN(), params: []optunaParam{{"x", 0.4, x}}},
	}
	run, err := assembleOptuna("optuna-rdb", "test", optunaStudy{name: "s", dirs: []space.Direction{space.Minimize}}, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Trials) != 2 || run.Trials[1].Number != 2 {
		t.Fatalf("trials %+v", run.Trials)
	}
	all := strings.Join(run.Warnings, "\n")
	if !strings.Contains(all, `parameter "y" is missing from 1 of 2 complete trials`) || !strings.Contains(all, "trial 1 (parameter \"y\" is active but has no value)") {
		t.Errorf("warnings:\n%s", all)
	}
}

// Optuna's numeric and boolean choices keep their types in xbo's space
// (null and NaN, which no xbo choice can be, stay the names Python gives
// them); a one-valued int range becomes a numeric choice.
func TestOptunaTypedChoices(t *testing.T) {
	parse := func(text string) optunaDist {
		t.Helper()
		d, err := parseOptunaDist(text)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	units := parse(`{"name": "CategoricalDistribution", "attributes": {"choices": [16, 32.5, true, "adam", null]}}`)
	more := parse(`{"name": "CategoricalDistribution", "attributes": {"choices": [64, 16]}}`)
	one := parse(`{"name": "IntDistribution", "attributes": {"low": 4, "high": 4, "log": false, "step": 1}}`)
	list := []optunaTrial{
		{number: 0, state: history.Complete, value: 1, params: []optunaParam{{"u", 2, units}, {"n", 4, one}}},
		{number: 1, state: history.Complete, value: 2, params: []optunaParam{{"u", 0, more}, {"n", 4, one}}},
	}
	run, err := assembleOptuna("optuna-rdb", "test", optunaStudy{name: "s", dirs: []space.Direction{space.Minimize}}, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal([]any{run.Space.Params[0].Choices, run.Space.Params[1].Choices})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[[16,32.5,true,"adam","None",64],[4]]`; string(got) != want {
		t.Fatalf("choices %s, want %s", got, want)
	}
	if v := run.Space.ToMap(run.Trials[0].Params)["u"]; v != true {
		t.Errorf("trial 0: u = %#v, want true", v)
	}
	if v := run.Space.ToMap(run.Trials[1].Params)["u"]; v != 64.0 {
		t.Errorf("trial 1: u = %#v, want 64", v)
	}
}
