package importer

import (
	"xbo/history"

	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"xbo/space"
	"xbo/trials"
)

// The SMAC3 fixtures are hand-written from the documented formats (SMAC3 is
// not installable here): testdata/smac_v1 is the SMAC 1.x shape with
// {"__enum__": ...} statuses, Infinity and NaN literals and ConfigSpace 0.4
// JSON with every condition type; testdata/smac_v2 is the SMAC 2.0 list shape
// with two budgets and ConfigSpace 1.x keys; testdata/smac_v21 the SMAC 2.1+
// object shape.

func paramByName(t *testing.T, s *space.Space, name string) (int, space.Param) {
	t.Helper()
	i, ok := s.Index(name)
	if !ok {
		t.Fatalf("no parameter %q in %v", name, s.Names())
	}
	return i, s.Params[i]
}

func TestImportSMACv1(t *testing.T) {
	run, err := ImportSMAC("testdata/smac_v1", SMACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := run.Space
	if run.Format != "smac3-v1" || s.Objective != space.Minimize || len(run.Trials) != 6 {
		t.Fatalf("format %q objective %q trials %d", run.Format, s.Objective, len(run.Trials))
	}
	// Conditions: EQ → values, AND of NEQs → the remaining level, GT on an
	// ordinal → the later levels; LT on a float and an OR over two parents
	// cannot be expressed.
	condOf := func(name string) string {
		_, p := paramByName(t, s, name)
		if p.Condition == nil {
			return ""
		}
		var vals []string
		for _, v := range p.Condition.Values {
			vals = append(vals, fmt.Sprint(v))
		}
		return p.Condition.Parent + "=" + strings.Join(vals, "|")
	}
	for name, want := range map[string]string{
		"momentum": "solver=sgd", "beta1": "solver=adam", "warm": "size=medium|large",
		"clip": "", "extra": "", "lr": "", "tag": "",
	} {
		if got := condOf(name); got != want {
			t.Errorf("%s: condition %q, want %q", name, got, want)
		}
	}
	_, depth := paramByName(t, s, "depth")
	if depth.Type != space.Int || depth.Low != 1 || depth.High != 4 {
		t.Errorf("ordinal 1..4 should be an int: %+v", depth)
	}
	_, size := paramByName(t, s, "size")
	if size.Type != space.Categorical || strings.Join(size.Labels(), ",") != "small,medium,large" {
		t.Errorf("size %+v", size)
	}
	_, warm := paramByName(t, s, "warm")
	if strings.Join(warm.Labels(), ",") != "true,false" || warm.Choices[0] != true {
		t.Errorf("boolean choices %v", warm.Choices)
	}
	_, dropout := paramByName(t, s, "dropout")
	if dropout.Type != space.Float || dropout.Low != 0 || dropout.High != 0.5 {
		t.Errorf("normal_float should become uniform over its bounds: %+v", dropout)
	}
	_, tag := paramByName(t, s, "tag")
	if tag.Type != space.Categorical || len(tag.Choices) != 1 || tag.Choices[0] != "v1" {
		t.Errorf("constant: %+v", tag)
	}
	wantStates := []history.State{history.Complete, history.Complete, history.Complete, history.Failed, history.Failed, history.Complete}
	wantValues := []float64{0.25, 0.5, 0.7, math.Inf(1), 1000, 0.12}
	for i, tr := range run.Trials {
		if tr.State != wantStates[i] || tr.Value != wantValues[i] {
			t.Errorf("run %d: %s %v, want %s %v", i, tr.State, tr.Value, wantStates[i], wantValues[i])
		}
	}
	get := func(trial int, name string) string {
		i, _ := paramByName(t, s, name)
		return s.Format(i, run.Trials[trial].Params[i])
	}
	// Config 2: sgd, lr 0.05 (clip inactive in SMAC: default 1 imputed),
	// size small (warm inactive), extra 2.
	for name, want := range map[string]string{"solver": "sgd", "momentum": "0.8", "beta1": "", "clip": "1", "warm": "", "extra": "2", "units": "128", "depth": "3"} {
		if got := get(1, name); got != want {
			t.Errorf("config 2 %s = %q, want %q", name, got, want)
		}
	}
	// Config 1: adam, clip 1.0 as given, extra inactive in SMAC → default 0.
	for name, want := range map[string]string{"solver": "adam", "beta1": "0.9", "momentum": "", "warm": "true", "extra": "0", "tag": "v1"} {
		if got := get(0, name); got != want {
			t.Errorf("config 1 %s = %q, want %q", name, got, want)
		}
	}
	if run.Trials[4].Acquisition != "Local Search" || run.Trials[0].Acquisition != "Default" {
		t.Errorf("origins %q %q", run.Trials[0].Acquisition, run.Trials[4].Acquisition)
	}
	all := strings.Join(run.Warnings, "\n")
	for _, want := range []string{
		`parameter "clip": condition LT on "lr" 0.01 cannot be expressed`,
		`parameter "extra": condition (EQ on "solver" sgd OR EQ on "size" large) cannot be expressed`,
		`"dropout": normal_float prior is not kept`,
		`"size": ordinal imported as a categorical`,
		"1 forbidden clauses",
		"1 CRASHED, 1 TIMEOUT",
		`parameter "clip": inactive in 2 trials`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	var buf bytes.Buffer
	if err := run.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	tab, err := trials.ReadCSV(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Usable()) != 4 || len(tab.Trials) != 6 {
		t.Errorf("CSV reads back %d usable of %d", len(tab.Usable()), len(tab.Trials))
	}
}

// A run at two budgets (SMAC's Hyperband): each configuration is one trial
// whose value is its run at its highest budget and whose runs at lower
// budgets are intermediate values; the budgets 2.78 and 8.33 are not whole
// numbers, so their steps are their ranks 0 and 1.
func TestImportSMACv2Budgets(t *testing.T) {
	run, err := ImportSMAC("testdata/smac_v2", SMACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Format != "smac3-v2" || len(run.Trials) != 4 {
		t.Fatalf("format %q, %d trials (want one per configuration)", run.Format, len(run.Trials))
	}
	want := []struct {
		state history.State
		value float64
		inter []history.Intermediate
	}{
		{history.Complete, 0.049, []history.Intermediate{{Step: 0, Value: 0.23}, {Step: 1, Value: 0.049}}},
		{history.Complete, 0.041, []history.Intermediate{{Step: 0, Value: 0.71}, {Step: 1, Value: 0.041}}},
		{history.Failed, math.Inf(1), nil}, // crashed at the lower budget
		{history.Failed, 0.5, nil},         // NaN cost at 2.78, timeout at 8.33
	}
	for k, w := range want {
		tr := run.Trials[k]
		if tr.State != w.state || tr.Value != w.value || !reflect.DeepEqual(tr.Intermediate, w.inter) {
			t.Errorf("trial %d: %s %v %v, want %s %v %v", k, tr.State, tr.Value, tr.Intermediate, w.state, w.value, w.inter)
		}
	}
	if run.Trials[0].UserAttrs["budget"] != 8.333333333333332 {
		t.Errorf("budget attribute %v", run.Trials[0].UserAttrs)
	}
	i, w := paramByName(t, run.Space, "width2")
	if w.Condition == nil || w.Condition.Parent != "depth" || len(w.Condition.Values) != 2 {
		t.Errorf("IN on an int parent: %+v", w.Condition)
	}
	if !math.IsNaN(run.Trials[1].Params[i]) {
		t.Errorf("width2 should be inactive at depth 1")
	}
	if !strings.Contains(strings.Join(run.Warnings, "\n"), "step = the budget's rank, 0 for the lowest") {
		t.Errorf("warnings %q", run.Warnings)
	}

	all, err := ImportSMAC("testdata/smac_v2", SMACOptions{AllBudgets: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Trials) != 7 {
		t.Fatalf("%d trials with --all-budgets, want 7", len(all.Trials))
	}
	if all.Trials[2].State != history.Failed || !math.IsInf(all.Trials[2].Value, 1) {
		t.Errorf("crashed run with Infinity cost: %s %v", all.Trials[2].State, all.Trials[2].Value)
	}
	// A "successful" run whose cost is NaN cannot be used: imported as failed.
	if all.Trials[3].State != history.Failed {
		t.Errorf("NaN-cost run: %s", all.Trials[3].State)
	}
}

// Whole-number budgets (epochs) are the steps; a configuration that
// Hyperband stopped below the highest budget is pruned with its last value;
// with --seeds-apart, runs of one configuration on different seeds are
// different trials.
func TestImportSMACPrunedConfigurations(t *testing.T) {
	dir := t.TempDir()
	cs, _ := os.ReadFile("testdata/smac_v2/configspace.json")
	os.WriteFile(filepath.Join(dir, "configspace.json"), cs, 0o644)
	cfg := `{"alpha": 0.1, "batch_size": 8, "activation": "relu", "depth": 1}`
	os.WriteFile(filepath.Join(dir, "runhistory.json"), []byte(`{"data": [
		{"config_id": 1, "instance": null, "seed": 0, "budget": 1, "cost": 0.9, "status": 1},
		{"config_id": 2, "instance": null, "seed": 0, "budget": 1, "cost": 0.5, "status": 1},
		{"config_id": 2, "instance": null, "seed": 0, "budget": 3, "cost": 0.4, "status": 1},
		{"config_id": 2, "instance": null, "seed": 0, "budget": 9, "cost": 0.3, "status": 1},
		{"config_id": 1, "instance": null, "seed": 5, "budget": 9, "cost": 0.7, "status": 1},
		{"config_id": 3, "instance": null, "seed": 0, "budget": 1, "cost": 0.6, "status": 1},
		{"config_id": 3, "instance": null, "seed": 0, "budget": 3, "cost": 0.55, "status": 1}],
		"configs": {"1": `+cfg+`, "2": `+cfg+`, "3": `+cfg+`}}`), 0o644)
	run, err := ImportSMAC(dir, SMACOptions{SeedsApart: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		state history.State
		value float64
		inter []history.Intermediate
	}{
		{history.Pruned, 0.9, []history.Intermediate{{Step: 1, Value: 0.9}}},
		{history.Complete, 0.3, []history.Intermediate{{Step: 1, Value: 0.5}, {Step: 3, Value: 0.4}, {Step: 9, Value: 0.3}}},
		{history.Complete, 0.7, []history.Intermediate{{Step: 9, Value: 0.7}}}, // config 1, seed 5
		{history.Pruned, 0.55, []history.Intermediate{{Step: 1, Value: 0.6}, {Step: 3, Value: 0.55}}},
	}
	if len(run.Trials) != len(want) {
		t.Fatalf("%d trials, want %d", len(run.Trials), len(want))
	}
	for k, w := range want {
		tr := run.Trials[k]
		if tr.Number != int64(k) || tr.State != w.state || tr.Value != w.value || !reflect.DeepEqual(tr.Intermediate, w.inter) {
			t.Errorf("trial %d: %d %s %v %v, want %s %v %v", k, tr.Number, tr.State, tr.Value, tr.Intermediate, w.state, w.value, w.inter)
		}
	}
	if c := run.Counts(); c[history.Failed] != 0 || len(run.Usable()) != 2 {
		t.Errorf("counts %v, %d usable", c, len(run.Usable()))
	}
	if !strings.Contains(strings.Join(run.Warnings, "\n"), "(step = the budget)") {
		t.Errorf("warnings %q", run.Warnings)
	}
}

func TestImportSMACv21Objects(t *testing.T) {
	run, err := ImportSMAC("testdata/smac_v21/runhistory.json", SMACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := run.Counts()
	if c[history.Complete] != 1 || c[history.Failed] != 1 || c[history.Running] != 1 {
		t.Errorf("counts %v", c)
	}
	// The running run's config (depth 2, width2 9) is carried over.
	i, _ := paramByName(t, run.Space, "width2")
	if run.Trials[2].Params[i] != 9 {
		t.Errorf("width2 = %v", run.Trials[2].Params[i])
	}
}

func TestImportSMACErrors(t *testing.T) {
	dir := t.TempDir()
	cs, _ := os.ReadFile("testdata/smac_v2/configspace.json")
	write := func(sub, rh string) string {
		d := filepath.Join(dir, sub)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "configspace.json"), cs, 0o644)
		os.WriteFile(filepath.Join(d, "runhistory.json"), []byte(rh), 0o644)
		return d
	}
	cases := map[string]struct{ rh, want string }{
		"costs-differ": {`{"data": [{"config_id": 1, "instance": null, "seed": 0, "budget": null, "cost": [0.1, 0.2], "status": 1}, {"config_id": 1, "instance": null, "seed": 1, "budget": null, "cost": [0.1, 0.2, 0.3], "status": 1}], "configs": {"1": {"alpha": 0.1, "batch_size": 8, "activation": "relu", "depth": 1}}}`,
			"data entry 2 has 3 costs but data entry 1 has 2"},
		"unknown-config": {`{"data": [[7, null, 0, 0.0, 0.1, 1.0, 1, 0, 1, {}]], "configs": {}}`, "config_id 7 is not in"},
		"unknown-param":  {`{"data": [[1, null, 0, 0.0, 0.1, 1.0, 1, 0, 1, {}]], "configs": {"1": {"nope": 1}}}`, `"nope" is not a hyperparameter`},
		"truncated":      {`{"data": [[1, null, 0, 0.0, 0.1, 1.0, 1, 0, 1, {}]], "configs": {"1": {"alp`, "runhistory.json: line 1"},
		"bad-shape":      {`{"data": [[1, 2, 3]], "configs": {}}`, "data entry 1"},
		"bad-literal":    {`{"data": [[1, null, 0, 0.0, Infinit, 1.0, 1, 0, 1, {}]], "configs": {}}`, "line 1, column"},
		"bad-status":     {`{"data": [[1, null, 0, 0.0, 0.1, 1.0, 17, 0, 1, {}]], "configs": {"1": {"alpha": 0.1, "batch_size": 8, "activation": "relu", "depth": 1}}}`, "unknown status code 17"},
	}
	for name, tc := range cases {
		_, err := ImportSMAC(write(name, tc.rh), SMACOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", name, err, tc.want)
		}
	}
	if _, err := ImportSMAC(dir, SMACOptions{}); err == nil || !strings.Contains(err.Error(), "SMAC3 runs; name one") {
		t.Errorf("several runs below a directory: %v", err)
	}
	empty := t.TempDir()
	if _, err := ImportSMAC(empty, SMACOptions{}); err == nil || !strings.Contains(err.Error(), "no runhistory.json") {
		t.Errorf("empty dir: %v", err)
	}
	noCS := filepath.Join(t.TempDir(), "run")
	os.MkdirAll(noCS, 0o755)
	os.WriteFile(filepath.Join(noCS, "runhistory.json"), []byte(`{"data": [], "configs": {}}`), 0o644)
	if _, err := ImportSMAC(noCS, SMACOptions{}); err == nil || !strings.Contains(err.Error(), "configuration space") {
		t.Errorf("no configspace.json: %v", err)
	}
}

// TestImportSMACMultiObjective reads a SMAC 2.1 run whose costs are lists:
// the objectives are named after scenario.json's, all minimized; the
// crashed run (SMAC's crash cost, Infinity) is failed without values; the
// Pareto front is the hand-computed one (run 3 is dominated by run 2, runs
// 1 and 6 tie and are both on it).
func TestImportSMACMultiObjective(t *testing.T) {
	run, err := ImportSMAC("testdata/smac_mo", SMACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []space.Objective{{Name: "error", Direction: space.Minimize}, {Name: "time", Direction: space.Minimize}}
	if !slices.Equal(run.Space.Objectives, want) || len(run.Space.Constraints) != 0 {
		t.Fatalf("objectives %+v, constraints %v", run.Space.Objectives, run.Space.Constraints)
	}
	costs := [][]float64{{0.3, 12}, {0.2, 30}, {0.25, 35}, nil, {0.1, 80}, {0.3, 12}, {0.4, 11}}
	for i, tr := range run.Trials {
		if !slices.Equal(tr.Values, costs[i]) || (costs[i] != nil && tr.Value != costs[i][0]) || (costs[i] == nil) != (tr.State == history.Failed) {
			t.Errorf("run %d: %s %v %v, want costs %v", i, tr.State, tr.Value, tr.Values, costs[i])
		}
	}
	front, err := run.ParetoFront()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(front, []int{0, 1, 4, 5, 6}) {
		t.Errorf("front %v, want runs 0, 1, 4, 5, 6", front)
	}
	if err := run.Validate(); err != nil {
		t.Error(err)
	}
}

// TestImportSMACv1MultiObjective reads SMAC 1's shape with list costs and
// no scenario.json: the objectives get xbo's default names; at several
// budgets the lower ones give no intermediate values (one number cannot
// hold several objectives), which a warning says.
func TestImportSMACv1MultiObjective(t *testing.T) {
	dir := t.TempDir()
	cs, err := os.ReadFile("testdata/smac_v21/configspace.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "configspace.json"), cs, 0o644)
	rh := `{"data": [
	  [[1, null, 0, 1.0], [[0.5, 3.0], 1.0, {"__enum__": "StatusType.SUCCESS"}, 0, 1, {}]],
	  [[1, null, 0, 3.0], [[0.4, 9.0], 1.0, {"__enum__": "StatusType.SUCCESS"}, 1, 2, {}]],
	  [[2, null, 0, 1.0], [[0.6, 2.0], 1.0, {"__enum__": "StatusType.SUCCESS"}, 2, 3, {}]]],
	  "configs": {"1": {"alpha": 0.1, "batch_size": 8, "activation": "relu", "depth": 1}, "2": {"alpha": 0.2, "batch_size": 16, "activation": "tanh", "depth": 1}}}`
	os.WriteFile(filepath.Join(dir, "runhistory.json"), []byte(rh), 0o644)
	run, err := ImportSMAC(dir, SMACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Space.ObjectiveNames(); !slices.Equal(got, []string{"objective_0", "objective_1"}) {
		t.Errorf("objectives %v", got)
	}
	if len(run.Trials) != 2 || !slices.Equal(run.Trials[0].Values, []float64{0.4, 9}) || run.Trials[0].Intermediate != nil ||
		run.Trials[1].State != history.Pruned || run.Trials[1].Values != nil {
		t.Fatalf("trials %+v", run.Trials)
	}
	if w := strings.Join(run.Warnings, "\n"); !strings.Contains(w, "lower budgets give no intermediate values") {
		t.Errorf("warnings %q", w)
	}
}
