package space

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

const issueExample = `{"objective": "minimize",
 "params": [
  {"name": "lr", "type": "float", "low": 1e-4, "high": 0.1, "log": true},
  {"name": "layers", "type": "int", "low": 1, "high": 5},
  {"name": "opt", "type": "categorical", "choices": ["sgd", "adam"]},
  {"name": "momentum", "type": "float", "low": 0.1, "high": 0.99,
   "condition": {"parent": "opt", "values": ["sgd"]}}]}`

func mustParse(t *testing.T, text string) *Space {
	t.Helper()
	s, err := Parse([]byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func TestParseIssueExample(t *testing.T) {
	s := mustParse(t, issueExample)
	if s.Dim() != 4 || s.Objective != Minimize {
		t.Fatalf("dim %d objective %q", s.Dim(), s.Objective)
	}
	if got := s.Levels(); got[2] != 2 || got[0] != 0 || got[1] != 0 {
		t.Fatalf("levels %v", got)
	}
	vals, err := s.FromMap(map[string]any{"lr": 0.01, "layers": 3.0, "opt": "adam"})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(vals[3]) {
		t.Fatalf("momentum should be inactive for adam, got %v", vals[3])
	}
	u, err := s.Encode(vals)
	if err != nil {
		t.Fatal(err)
	}
	// lr = 0.01 is two thirds of the way from 1e-4 to 1e-1 on the log scale.
	want := []float64{2.0 / 3, (3 - 1 + 0.5) / 5, 0.75, Inactive}
	for i := range want {
		if math.Abs(u[i]-want[i]) > 1e-12 {
			t.Fatalf("u[%d] = %v, want %v", i, u[i], want[i])
		}
	}
	if _, err := s.FromMap(map[string]any{"lr": 0.01, "layers": 3.0, "opt": "adam", "momentum": 0.5}); err == nil || !strings.Contains(err.Error(), "momentum") {
		t.Fatalf("momentum given while inactive: err = %v", err)
	}
	if _, err := s.FromMap(map[string]any{"lr": 0.01, "layers": 3.0, "opt": "sgd"}); err == nil || !strings.Contains(err.Error(), `"momentum" is missing`) {
		t.Fatalf("momentum missing while active: err = %v", err)
	}
}

func TestParseYAML(t *testing.T) {
	s := mustParse(t, `
objective: maximize
params:
  - {name: c, type: float, low: 0.001, high: 1000, log: true}
  - {name: kernel, type: categorical, choices: [rbf, linear]}
`)
	if s.Sign() != -1 || s.Params[1].Choices[1] != "linear" {
		t.Fatalf("YAML parsed wrong: %+v", s)
	}
}

func TestBadSpacesNameParameterAndProblem(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"low>=high", `{"params":[{"name":"a","type":"float","low":1,"high":1}]}`, `"a": low 1 must be below high 1`},
		{"log low<=0", `{"params":[{"name":"a","type":"float","low":0,"high":1,"log":true}]}`, `"a": log scale needs low > 0`},
		{"empty choices", `{"params":[{"name":"c","type":"categorical","choices":[]}]}`, `"c": categorical parameter has no choices`},
		{"unknown parent", `{"params":[{"name":"a","type":"float","low":0,"high":1,"condition":{"parent":"zz","values":[1]}}]}`, `"a": condition names unknown parent "zz"`},
		{"cycle", `{"params":[
			{"name":"a","type":"categorical","choices":["x","y"],"condition":{"parent":"b","values":["x"]}},
			{"name":"b","type":"categorical","choices":["x","y"],"condition":{"parent":"a","values":["x"]}}]}`, "cycle"},
		{"duplicate", `{"params":[{"name":"a","type":"int","low":0,"high":3},{"name":"a","type":"int","low":0,"high":3}]}`, `"a": duplicate name`},
		{"bad type", `{"params":[{"name":"a","type":"double","low":0,"high":3}]}`, `"a": unknown type "double"`},
		{"missing bounds", `{"params":[{"name":"a","type":"float","low":0}]}`, `"a": float parameter needs both low and high`},
		{"int not whole", `{"params":[{"name":"n","type":"int","low":0.5,"high":3}]}`, `"n": int bounds must be whole numbers`},
		{"condition value not a level", `{"params":[{"name":"o","type":"categorical","choices":["a","b"]},{"name":"m","type":"float","low":0,"high":1,"condition":{"parent":"o","values":["c"]}}]}`, `"m": condition value c is not a value of parent "o"`},
		{"unknown field", `{"params":[{"name":"a","type":"float","low":0,"high":1,"hgih":2}]}`, `unknown field "hgih"`},
		{"no params", `{"params":[]}`, "no parameters"},
		{"bad objective", `{"objective":"maximise","params":[{"name":"a","type":"float","low":0,"high":1}]}`, `objective "maximise"`},
		{"default out of range", `{"params":[{"name":"a","type":"float","low":0,"high":1,"default":2}]}`, `"a": default: parameter "a": 2 is outside [0, 1]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc))
			if err == nil {
				t.Fatalf("accepted a bad space")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

// genSpace draws a random valid space with every parameter type, log scales
// and conditions on earlier categorical or int parameters.
func genSpace(t *rapid.T) *Space {
	n := rapid.IntRange(1, 7).Draw(t, "n")
	var params []Param
	for i := 0; i < n; i++ {
		p := Param{Name: fmt.Sprintf("p%d", i)}
		switch rapid.IntRange(0, 2).Draw(t, "type") {
		case 0:
			p.Type = Float
			p.Log = rapid.Bool().Draw(t, "log")
			lo := rapid.Float64Range(-100, 100).Draw(t, "lo")
			if p.Log {
				lo = math.Exp(rapid.Float64Range(-10, 5).Draw(t, "loglo"))
			}
			p.Low, p.High = lo, lo+rapid.Float64Range(1e-3, 1e3).Draw(t, "width")
		case 1:
			p.Type = Int
			p.Log = rapid.Bool().Draw(t, "log")
			lo := rapid.IntRange(-20, 20).Draw(t, "ilo")
			if p.Log {
				lo = rapid.IntRange(1, 20).Draw(t, "ilolog")
			}
			p.Low, p.High = float64(lo), float64(lo+rapid.IntRange(1, 300).Draw(t, "iwidth"))
		default:
			p.Type = Categorical
			k := rapid.IntRange(1, 6).Draw(t, "k")
			for j := 0; j < k; j++ {
				p.Choices = append(p.Choices, fmt.Sprintf("c%d", j))
			}
		}
		if i > 0 && rapid.Bool().Draw(t, "conditional") {
			parent := params[rapid.IntRange(0, i-1).Draw(t, "parent")]
			switch parent.Type {
			case Categorical:
				p.Condition = &Condition{Parent: parent.Name, Values: []any{parent.Choices[0]}}
			case Int:
				p.Condition = &Condition{Parent: parent.Name, Values: []any{parent.Low, parent.High}}
			}
		}
		params = append(params, p)
	}
	s, err := New(Minimize, params)
	if err != nil {
		t.Fatalf("generated space refused: %v", err)
	}
	return s
}

func TestPropertyEncodeDecodeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSpace(t)
		rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		for _, u := range s.Sample(rng, 20) {
			vals := s.Decode(u)
			if err := s.Validate(vals); err != nil {
				t.Fatalf("decoded sample invalid: %v", err)
			}
			u2, err := s.Encode(vals)
			if err != nil {
				t.Fatal(err)
			}
			for i := range u {
				if math.Abs(u[i]-u2[i]) > 1e-9 {
					t.Fatalf("dim %d: sample %v re-encodes to %v", i, u[i], u2[i])
				}
			}
			back := s.Decode(u2)
			for i := range vals {
				same := vals[i] == back[i] || (math.IsNaN(vals[i]) && math.IsNaN(back[i])) ||
					math.Abs(vals[i]-back[i]) <= 1e-9*math.Max(1, math.Abs(vals[i]))
				if !same {
					t.Fatalf("dim %d: %v decodes back to %v", i, vals[i], back[i])
				}
			}
			// The JSON map form round-trips too.
			m := s.ToMap(vals)
			raw, _ := json.Marshal(m)
			var decoded map[string]any
			_ = json.Unmarshal(raw, &decoded)
			fromMap, err := s.FromMap(decoded)
			if err != nil {
				t.Fatalf("FromMap(ToMap(v)): %v", err)
			}
			for i := range vals {
				if !(vals[i] == fromMap[i] || math.IsNaN(vals[i]) && math.IsNaN(fromMap[i])) {
					t.Fatalf("map round trip dim %d: %v -> %v", i, vals[i], fromMap[i])
				}
			}
		}
	})
}

func TestPropertyRepairIsIdempotentAndStaysInCube(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSpace(t)
		u := make([]float64, s.Dim())
		for i := range u {
			u[i] = rapid.Float64Range(-0.5, 1.5).Draw(t, "u")
		}
		s.Repair(u)
		again := append([]float64(nil), u...)
		s.Repair(again)
		for i := range u {
			if u[i] != again[i] {
				t.Fatalf("repair not idempotent at %d: %v then %v", i, u[i], again[i])
			}
			if u[i] != Inactive && (u[i] < 0 || u[i] > 1) {
				t.Fatalf("repaired coordinate %v outside the cube", u[i])
			}
		}
		if err := s.Validate(s.Decode(u)); err != nil {
			t.Fatalf("repaired point decodes invalid: %v", err)
		}
	})
}

func TestSampleIsUniformOnEachScale(t *testing.T) {
	s := mustParse(t, `{"params":[
		{"name":"n","type":"int","low":1,"high":4},
		{"name":"lr","type":"float","low":1e-4,"high":1,"log":true},
		{"name":"k","type":"categorical","choices":["a","b","c"]}]}`)
	rng := rand.New(rand.NewPCG(7, 7))
	const N = 60000
	counts := map[float64]int{}
	levels := map[float64]int{}
	below := 0
	for _, u := range s.Sample(rng, N) {
		v := s.Decode(u)
		counts[v[0]]++
		levels[v[2]]++
		if v[1] < 1e-2 { // half of the log range
			below++
		}
	}
	// Each frequency is binomial; 5 standard deviations is a generous bound.
	check := func(what string, got int, p float64) {
		sd := math.Sqrt(N * p * (1 - p))
		if math.Abs(float64(got)-N*p) > 5*sd {
			t.Errorf("%s: %d of %d, expected %.0f ± %.0f", what, got, N, N*p, 5*sd)
		}
	}
	for k := 1.0; k <= 4; k++ {
		check(fmt.Sprintf("int %v", k), counts[k], 0.25)
	}
	for k := 0.0; k < 3; k++ {
		check(fmt.Sprintf("level %v", k), levels[k], 1.0/3)
	}
	check("log-uniform lower half", below, 0.5)
}

func TestGrid(t *testing.T) {
	s := mustParse(t, `{"params":[
		{"name":"lr","type":"float","low":0.001,"high":10,"log":true},
		{"name":"n","type":"int","low":2,"high":6},
		{"name":"big","type":"int","low":0,"high":1000},
		{"name":"k","type":"categorical","choices":["a","b","c"]}]}`)
	g, _ := s.Grid(0, 5)
	for i, want := range []float64{0.001, 0.01, 0.1, 1, 10} {
		if math.Abs(g[i]-want) > 1e-12*want {
			t.Fatalf("log grid %v", g)
		}
	}
	if g, _ := s.Grid(1, 20); len(g) != 5 || g[0] != 2 || g[4] != 6 {
		t.Fatalf("small int grid should list every integer: %v", g)
	}
	if g, _ := s.Grid(2, 11); len(g) != 11 || g[1] != 100 || g[10] != 1000 {
		t.Fatalf("large int grid: %v", g)
	}
	if g, _ := s.Grid(3, 2); len(g) != 3 {
		t.Fatalf("categorical grid must list every level: %v", g)
	}
	if _, err := s.Grid(9, 3); err == nil {
		t.Fatal("grid of a missing parameter accepted")
	}
}

func TestNestedConditionsAndDefaults(t *testing.T) {
	s := mustParse(t, `{"params":[
		{"name":"c","type":"float","low":0,"high":1,"default":0.5,"condition":{"parent":"b","values":[2]}},
		{"name":"b","type":"int","low":1,"high":3,"default":2,"condition":{"parent":"a","values":["on"]}},
		{"name":"a","type":"categorical","choices":["on","off"],"default":"on"}]}`)
	act, err := s.Active([]float64{0.3, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	if act[0] || act[1] || !act[2] {
		t.Fatalf("with a=off, b and c must be inactive: %v", act)
	}
	if act, _ := s.Active([]float64{0.3, 2, 0}); !act[0] || !act[1] {
		t.Fatalf("with a=on, b=2, c must be active: %v", act)
	}
	d, ok := s.Defaults()
	if !ok || d[0] != 0.5 || d[1] != 2 || d[2] != 0 {
		t.Fatalf("defaults %v %v", d, ok)
	}
}

func TestMarshalKeepsZeroBounds(t *testing.T) {
	s := mustParse(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"int","low":-3,"high":0}]}`)
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(raw)
	if err != nil {
		t.Fatalf("re-parse of %s: %v", raw, err)
	}
	if back.Params[0].Low != 0 || back.Params[1].High != 0 {
		t.Fatalf("bounds lost: %s", raw)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	s := mustParse(t, issueExample)
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Parse(raw)
	if err != nil {
		t.Fatalf("re-parse of %s: %v", raw, err)
	}
	if s2.Dim() != s.Dim() || s2.Params[3].Condition.Parent != "opt" || !s2.Params[0].Log {
		t.Fatalf("round trip lost information: %s", raw)
	}
}

func TestMaxParams(t *testing.T) {
	params := make([]Param, MaxParams+1)
	for i := range params {
		params[i] = Param{Name: fmt.Sprintf("p%d", i), Type: Float, Low: 0, High: 1}
	}
	if _, err := New(Minimize, params); err == nil || !strings.Contains(err.Error(), "limit of 500") {
		t.Errorf("%d parameters: %v", len(params), err)
	}
	if _, err := New(Minimize, params[:MaxParams]); err != nil {
		t.Errorf("%d parameters refused: %v", MaxParams, err)
	}
}

// Categorical choices keep their JSON types: numbers come back as numbers
// and booleans as booleans, in ToMap (what the service hands out), in the
// space's own JSON, and in conditions and defaults; text forms (CSV cells,
// trials stored before choices were typed) still name them.
func TestTypedChoices(t *testing.T) {
	s := mustParse(t, `{"params":[
		{"name":"units","type":"categorical","choices":[16,32,64],"default":32},
		{"name":"flag","type":"categorical","choices":[true,false]},
		{"name":"mixed","type":"categorical","choices":["a",1.5,false,100000000]},
		{"name":"drop","type":"float","low":0,"high":1,"condition":{"parent":"flag","values":[true]}}]}`)
	vals, err := s.FromMap(map[string]any{"units": 64.0, "flag": true, "mixed": 1.5, "drop": 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if vals[0] != 2 || vals[1] != 0 || vals[2] != 1 || vals[3] != 0.25 {
		t.Fatalf("natural values %v", vals)
	}
	got, err := json.Marshal(s.ToMap(vals))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"drop":0.25,"flag":true,"mixed":1.5,"units":64}`; string(got) != want {
		t.Fatalf("ToMap JSON %s, want %s", got, want)
	}
	// The flag's condition holds for true only: false switches drop off.
	if vals, err := s.FromMap(map[string]any{"units": 16.0, "flag": false, "mixed": false}); err != nil || !math.IsNaN(vals[3]) {
		t.Fatalf("flag false: %v %v", vals, err)
	}
	// Text forms name the same choices: CSV cells and old stored trials.
	old, err := s.FromMap(map[string]any{"units": "64", "flag": "true", "mixed": "1.5", "drop": 0.25})
	if err != nil || fmt.Sprint(old) != fmt.Sprint(vals) {
		t.Fatalf("text forms: %v %v", old, err)
	}
	// Old trials wrote numbers with %g; a string equal as a number matches.
	if k, err := s.Params[2].Level("1e+08"); err != nil || k != 3 {
		t.Fatalf(`Level("1e+08") = %d, %v`, k, err)
	}
	if got := s.Format(2, 3); got != "100000000" {
		t.Fatalf("label of 1e8: %q", got)
	}
	for i, want := range []string{"64", "true", "1.5"} {
		if got := s.Format(i, vals[i]); got != want {
			t.Fatalf("Format(%d) = %q, want %q", i, got, want)
		}
		v, err := s.ParseValue(i, want)
		if err != nil || v != vals[i] {
			t.Fatalf("ParseValue(%d, %q) = %v, %v", i, want, v, err)
		}
	}
	if _, err := s.FromMap(map[string]any{"units": 17.0, "flag": true, "mixed": "a", "drop": 0.1}); err == nil ||
		!strings.Contains(err.Error(), `"units": 17 is not one of its choices [16,32,64]`) {
		t.Fatalf("17: %v", err)
	}
	d, ok := s.Defaults()
	if ok || d != nil {
		t.Fatalf("defaults are partial, got %v %v", d, ok)
	}
	// The space's JSON keeps the types, and parses back to the same space.
	doc, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"choices":[16,32,64]`) || !strings.Contains(string(doc), `"choices":[true,false]`) ||
		!strings.Contains(string(doc), `"choices":["a",1.5,false,100000000]`) || !strings.Contains(string(doc), `"default":32`) {
		t.Fatalf("space JSON lost types: %s", doc)
	}
	again := mustParse(t, string(doc))
	if again.Params[0].Choices[1] != 32.0 || again.Params[1].Choices[0] != true {
		t.Fatalf("round trip: %#v %#v", again.Params[0].Choices, again.Params[1].Choices)
	}
	// Go callers may give ints; they become JSON numbers, and the
	// caller's slice is left alone.
	mine := []any{1, 2, 3}
	g, err := New(Minimize, []Param{{Name: "k", Type: Categorical, Choices: mine}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Params[0].Choices[2] != 3.0 || mine[2] != 3 {
		t.Fatalf("normalized %#v, caller's %#v", g.Params[0].Choices, mine)
	}
}

func TestBadChoicesNameParameter(t *testing.T) {
	for name, c := range map[string]struct{ choices, want string }{
		"null":           {`[1, null]`, `parameter "u": choice #2: null is not a choice`},
		"object":         {`["a", {"b": 1}]`, `parameter "u": choice #2: map[b:1]`},
		"array":          {`[[1, 2]]`, `parameter "u": choice #1: [1 2]`},
		"duplicate":      {`[16, 32, 16]`, `parameter "u": choice 16 appears twice`},
		"same number":    {`[1, 1.0]`, `parameter "u": choice 1 appears twice`},
		"same text form": {`[16, "16"]`, `parameter "u": choices 16 and "16" are both written "16"`},
		"bool and text":  {`[true, "true"]`, `parameter "u": choices true and "true" are both written "true"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(`{"params":[{"name":"u","type":"categorical","choices":` + c.choices + `}]}`))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// Order puts every parent before its children, whatever the order of the
// parameters in the file.
func TestOrder(t *testing.T) {
	s, err := Parse([]byte(`{"params":[
		{"name":"momentum","type":"float","low":0,"high":1,"condition":{"parent":"opt","values":["sgd"]}},
		{"name":"opt","type":"categorical","choices":["sgd","adam"]},
		{"name":"lr","type":"float","low":0.001,"high":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	order := s.Order()
	pos := map[int]int{}
	for k, i := range order {
		pos[i] = k
	}
	if len(order) != 3 || len(pos) != 3 || pos[1] > pos[0] {
		t.Errorf("order %v: opt (1) must come before momentum (0)", order)
	}
	order[0] = 99
	if s.Order()[0] == 99 {
		t.Error("Order returns the space's own slice")
	}
}

// A space names several objectives and constraints, writes them back, and
// refuses bad ones.
func TestObjectives(t *testing.T) {
	sp, err := Parse([]byte(`{"objectives":[{"name":"err"},{"name":"acc","direction":"maximize"}],"constraints":["mem"],
		"params":[{"name":"x","type":"float","low":0,"high":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if sp.NumObjectives() != 2 || !sp.MultiObjective() || sp.Objective != Minimize || sp.Directions()[1] != Maximize || sp.Constraints[0] != "mem" {
		t.Fatalf("parsed %+v", sp)
	}
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil || !reflect.DeepEqual(back.Objectives, sp.Objectives) || !reflect.DeepEqual(back.Constraints, sp.Constraints) {
		t.Fatalf("round trip %s: %+v %v", b, back, err)
	}
	if k, err := sp.ObjectiveIndex("acc"); err != nil || k != 1 {
		t.Errorf("ObjectiveIndex(acc) = %d, %v", k, err)
	}
	if k, err := sp.ObjectiveIndex("1"); err != nil || k != 1 {
		t.Errorf("ObjectiveIndex(1) = %d, %v", k, err)
	}
	if _, err := sp.ObjectiveIndex("2"); err == nil {
		t.Error("objective 2 of 2 accepted")
	}
	one, err := sp.ForObjective(1)
	if err != nil || one.Objective != Maximize || one.MultiObjective() || one.Constraints[0] != "mem" {
		t.Errorf("ForObjective(1) = %+v, %v", one, err)
	}
	plain, _ := Parse([]byte(`{"objective":"maximize","params":[{"name":"x","type":"float","low":0,"high":1}]}`))
	if plain.NumObjectives() != 1 || plain.ObjectiveNames()[0] != "value" || plain.Directions()[0] != Maximize {
		t.Errorf("single objective: %d %v %v", plain.NumObjectives(), plain.ObjectiveNames(), plain.Directions())
	}
	for _, doc := range []string{
		`{"objectives":[{"name":"a"},{"name":"a"}],"params":[{"name":"x","type":"float","low":0,"high":1}]}`,
		`{"objectives":[{"name":"a","direction":"up"}],"params":[{"name":"x","type":"float","low":0,"high":1}]}`,
		`{"objective":"maximize","objectives":[{"name":"a"}],"params":[{"name":"x","type":"float","low":0,"high":1}]}`,
		`{"objectives":[{},{},{},{},{}],"params":[{"name":"x","type":"float","low":0,"high":1}]}`,
		`{"constraints":["c",""],"params":[{"name":"x","type":"float","low":0,"high":1}]}`,
		`{"constraints":["c","c"],"params":[{"name":"x","type":"float","low":0,"high":1}]}`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("accepted %s", doc)
		}
	}
}

// DocumentJSON gives one compact JSON text for a JSON or a YAML document
// of the same space, and refuses an empty or malformed one.
func TestDocumentJSON(t *testing.T) {
	jsonDoc := []byte("{\n  \"params\": [ {\"name\": \"x\", \"type\": \"float\", \"low\": 0, \"high\": 1} ]\n}\n")
	yamlDoc := []byte("params:\n  - name: x\n    type: float\n    low: 0\n    high: 1\n")
	want := `{"params":[{"high":1,"low":0,"name":"x","type":"float"}]}`
	fromYAML, err := DocumentJSON(yamlDoc)
	if err != nil || string(fromYAML) != want {
		t.Errorf("YAML: %s, %v; want %s", fromYAML, err, want)
	}
	fromJSON, err := DocumentJSON(jsonDoc)
	if err != nil || string(fromJSON) != `{"params":[{"name":"x","type":"float","low":0,"high":1}]}` {
		t.Errorf("JSON: %s, %v", fromJSON, err)
	}
	for _, bad := range []string{"", "  \n", "{\"params\": [", "a: [b"} {
		if _, err := DocumentJSON([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
