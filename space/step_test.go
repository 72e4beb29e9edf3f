package space

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func steppedSpace(t *testing.T) *Space {
	t.Helper()
	s, err := Parse([]byte(`{"params": [
		{"name": "x", "type": "float", "low": -10, "high": 10, "step": 0.5},
		{"name": "k", "type": "int", "low": 3, "high": 9, "step": 2},
		{"name": "r", "type": "float", "low": 0, "high": 1, "step": 0.1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSteppedSampleAndRepairStayOnTheGrid(t *testing.T) {
	s := steppedSpace(t)
	rng := rand.New(rand.NewPCG(1, 2))
	ks := map[float64]int{}
	xs := map[float64]bool{}
	for _, u := range s.Sample(rng, 4000) {
		v := s.Decode(u)
		if err := s.Validate(v); err != nil {
			t.Fatal(err)
		}
		if x := v[0]; x*2 != math.Trunc(x*2) || x < -10 || x > 10 {
			t.Fatalf("x = %v is not on the grid of step 0.5", x)
		}
		xs[v[0]] = true
		ks[v[1]]++
		if r := v[2]; math.Round(r*10)/10 != r {
			t.Fatalf("r = %v is not a tidy multiple of 0.1", r)
		}
		// Repair of a repaired point changes nothing (the duplicate check
		// compares repaired points).
		w := slices.Clone(u)
		s.Repair(w)
		if !slices.Equal(u, w) {
			t.Fatalf("Repair moved %v to %v", u, w)
		}
	}
	if len(xs) != 41 {
		t.Errorf("x took %d distinct values, want all 41", len(xs))
	}
	keys := make([]float64, 0, len(ks))
	for k := range ks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []float64{3, 5, 7, 9}) {
		t.Fatalf("k took %v, want 3, 5, 7, 9", keys)
	}
	for k, n := range ks {
		if n < 850 || n > 1150 { // 1000 expected each: uniform over the grid
			t.Errorf("k = %v drawn %d times of 4000", k, n)
		}
	}
}

func TestSteppedEncodingIsAnIntegerOverGridIndices(t *testing.T) {
	s := steppedSpace(t)
	x, k := &s.Params[0], &s.Params[1]
	if got := x.ToUnit(-10); got != 0.5/41 {
		t.Errorf("ToUnit(-10) = %v, want %v", got, 0.5/41)
	}
	if got := k.ToUnit(7); got != 2.5/4 {
		t.Errorf("ToUnit(7) = %v, want 0.625", got)
	}
	for _, c := range []struct{ u, want float64 }{{0, -10}, {0.5, 0}, {1, 10}, {0.999, 10}} {
		if got := x.FromUnit(c.u); got != c.want {
			t.Errorf("FromUnit(%v) = %v, want %v", c.u, got, c.want)
		}
	}
	if got := s.Params[2].FromUnit(3.5 / 11); got != 0.3 {
		t.Errorf("r's grid value 3 is %v, want 0.3 exactly", got)
	}
	// A value as Optuna computes it (low + k·step, 0.30000000000000004) is
	// on the grid and encodes as the tidy one does.
	r := &s.Params[2]
	if err := r.CheckValue(3 * 0.1); err != nil {
		t.Fatal(err)
	}
	if r.ToUnit(3*0.1) != r.ToUnit(0.3) {
		t.Error("0.1·3 and 0.3 encode differently")
	}
	if x.Cardinality() != 41 || k.Cardinality() != 4 {
		t.Errorf("cardinalities %d, %d; want 41, 4", x.Cardinality(), k.Cardinality())
	}
}

func TestSteppedValuesOffTheGridAreRefused(t *testing.T) {
	s := steppedSpace(t)
	for _, m := range []map[string]any{
		{"x": 0.25, "k": 3.0, "r": 0.1},
		{"x": 0.5, "k": 4.0, "r": 0.1},
		{"x": 0.5, "k": 3.0, "r": 0.15},
	} {
		_, err := s.FromMap(m)
		if err == nil || !strings.Contains(err.Error(), "not on its grid") {
			t.Errorf("%v: err = %v, want a grid error", m, err)
		}
	}
	if _, err := s.FromMap(map[string]any{"x": -9.5, "k": 9.0, "r": 1.0}); err != nil {
		t.Error(err)
	}
}

func TestSteppedValidation(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"name": "a", "type": "float", "low": 0, "high": 1, "step": 0.3}`, `parameter "a": (high − low)/step`},
		{`{"name": "a", "type": "int", "low": 3, "high": 10, "step": 2}`, `parameter "a": (high − low)/step`},
		{`{"name": "a", "type": "int", "low": 0, "high": 10, "step": 2.5}`, "whole number (got 2.5)"},
		{`{"name": "a", "type": "float", "low": 1, "high": 10, "step": 1, "log": true}`, "cannot be combined with a log scale"},
		{`{"name": "a", "type": "int", "low": 1, "high": 9, "step": 2, "log": true}`, "cannot be combined with a log scale"},
		{`{"name": "a", "type": "float", "low": 0, "high": 1, "step": 0}`, "step must be positive"},
		{`{"name": "a", "type": "float", "low": 0, "high": 1, "step": -0.5}`, "step must be positive"},
		{`{"name": "a", "type": "categorical", "choices": ["p"], "step": 1}`, "step is only for float and int"},
	} {
		_, err := Parse([]byte(`{"params": [` + c.doc + `]}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.doc, err, c.want)
		}
	}
	// An int's step of 1 is every integer, with or without log.
	s, err := Parse([]byte(`{"params": [{"name": "a", "type": "int", "low": 1, "high": 9, "step": 1, "log": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Params[0].Stepped() {
		t.Error("int step 1 counts as stepped")
	}
	_, err = New(Minimize, []Param{{Name: "b", Type: Float, Low: 0, High: 1, Step: math.NaN()}})
	if err == nil || !strings.Contains(err.Error(), `parameter "b": step must be a positive finite number`) {
		t.Errorf("NaN step: %v", err)
	}
}

func TestSteppedGrid(t *testing.T) {
	s := steppedSpace(t)
	g, err := s.Grid(0, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != 20 || g[0] != -10 || g[19] != 10 {
		t.Fatalf("grid %v: want 20 values from -10 to 10", g)
	}
	for _, v := range g {
		if v*2 != math.Trunc(v*2) {
			t.Fatalf("grid value %v is off the step-0.5 grid", v)
		}
	}
	g, err = s.Grid(1, 20)
	if err != nil || !slices.Equal(g, []float64{3, 5, 7, 9}) {
		t.Fatalf("int grid %v (%v), want 3 5 7 9", g, err)
	}
	g, _ = s.Grid(2, 20)
	want := []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	if !slices.Equal(g, want) {
		t.Fatalf("grid %v, want %v", g, want)
	}
}

func TestSteppedJSONRoundTrip(t *testing.T) {
	s := steppedSpace(t)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"step":0.5`) || !strings.Contains(string(b), `"step":2`) {
		t.Fatalf("steps missing from %s", b)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Params {
		if back.Params[i].Step != s.Params[i].Step {
			t.Errorf("%s: step %v after a round trip, want %v", s.Params[i].Name, back.Params[i].Step, s.Params[i].Step)
		}
	}
}

func TestSteppedValuesAreReadAsTheirGridValue(t *testing.T) {
	s, err := Parse([]byte(`{"params": [
		{"name": "r", "type": "float", "low": 0, "high": 1, "step": 0.1},
		{"name": "c", "type": "int", "low": 0, "high": 3, "condition": {"parent": "r", "values": [0.30000000000000004]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := s.FromMap(map[string]any{"r": 3 * 0.1, "c": 2.0})
	if err != nil {
		t.Fatal(err)
	}
	if vals[0] != 0.3 {
		t.Errorf("r read as %v, want 0.3", vals[0])
	}
	v, err := s.ParseValue(0, "0.30000000000000004")
	if err != nil || v != 0.3 {
		t.Errorf("ParseValue: %v, %v; want 0.3", v, err)
	}
	// The condition written with Optuna's spelling holds for the decoded
	// proposal, which is the tidy grid value.
	act, err := s.Active(s.Decode([]float64{3.5 / 11, 0.5}))
	if err != nil || !act[1] {
		t.Errorf("c inactive at r = 0.3 (%v)", err)
	}
}
