package importer

import (
	"strings"
	"testing"

	"xbo/history"
	"xbo/space"
)

// Optuna's stepped FloatDistribution and IntDistribution become stepped
// parameters with the same grid, and their values (as Optuna computes
// them, low + k·step) are read as the grid values; a step that does not
// divide the range is dropped with a warning naming the parameter.
func TestAssembleOptunaKeepsSteps(t *testing.T) {
	parse := func(s string) optunaDist { return mustDist(t, s) }
	x := parse(`{"name": "FloatDistribution", "attributes": {"low": -10, "high": 10, "log": false, "step": 0.5}}`)
	k := parse(`{"name": "IntDistribution", "attributes": {"low": 3, "high": 9, "log": false, "step": 2}}`)
	r := parse(`{"name": "FloatDistribution", "attributes": {"low": 0, "high": 1, "log": false, "step": 0.1}}`)
	tenth := 0.1 // a variable: Go's constant 3 * 0.1 is exactly 0.3
	list := []optunaTrial{
		{number: 0, state: history.Complete, value: 1, params: []optunaParam{{"x", -9.5, x}, {"k", 5, k}, {"r", 3 * tenth, r}}},
		{number: 1, state: history.Complete, value: 2, params: []optunaParam{{"x", 10, x}, {"k", 9, k}, {"r", 0.7000000000000001, r}}},
	}
	run, err := assembleOptuna("optuna-rdb", "test", optunaStudy{name: "s", dirs: []space.Direction{space.Minimize}}, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0.5, 2, 0.1} {
		if got := run.Space.Params[i].Step; got != want {
			t.Errorf("%s: step %v, want %v", run.Space.Params[i].Name, got, want)
		}
	}
	if got := run.Trials[0].Params[2]; got != 0.3 {
		t.Errorf("r = %v, want the grid value 0.3", got)
	}
	if got := run.Trials[1].Params[2]; got != 0.7 {
		t.Errorf("r = %v, want the grid value 0.7", got)
	}
	if len(run.Warnings) > 0 {
		t.Errorf("unexpected warnings: %v", run.Warnings)
	}

	// An enqueued value outside the range widens it off the grid: no step.
	list = append(list, optunaTrial{number: 2, state: history.Complete, value: 3,
		params: []optunaParam{{"x", 10.25, x}, {"k", 5, k}, {"r", 0.2, r}}})
	run, err = assembleOptuna("optuna-rdb", "test", optunaStudy{name: "s", dirs: []space.Direction{space.Minimize}}, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Space.Params[0].Step != 0 {
		t.Errorf("x keeps step %v on [%v, %v]", run.Space.Params[0].Step, run.Space.Params[0].Low, run.Space.Params[0].High)
	}
	if all := strings.Join(run.Warnings, "\n"); !strings.Contains(all, `parameter "x": step 0.5 is not kept`) {
		t.Errorf("warnings lack x's step:\n%s", all)
	}
}

// mustDist parses an Optuna distribution's JSON or fails the test.
func mustDist(t *testing.T, s string) optunaDist {
	t.Helper()
	d, err := parseOptunaDist(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
