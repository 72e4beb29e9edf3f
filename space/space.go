// Package space defines hyperparameter search spaces: float (linear or log),
// int and categorical parameters, floats and ints optionally on a stepped
// grid, with conditions that switch a parameter on only when its parent
// takes given values.
//
// A configuration has two representations, both []float64 with one entry per
// parameter in declaration order:
//
//   - natural values: numbers for float and int parameters, the level index for
//     categoricals, NaN for an inactive conditional parameter;
//   - the unit-cube encoding u that models and designs work in. Float parameters
//     map linearly, or linearly in ln x when Log is set, onto [0,1]. Integers
//     get equal-width bins, u = (k − low + ½)/(high − low + 1), so a uniform u
//     gives a uniform integer (log integers use the log scale of [low−½, high+½]).
//     A stepped float or int (Step, step.go) is an integer over its grid
//     indices: grid value k of n at (k + ½)/n.
//     A categorical with K levels puts level k at (k + ½)/K. An inactive
//     parameter is encoded as Inactive (−1), outside the cube on purpose: a
//     model then sees "switched off" as a value of its own rather than
//     confusing it with the lower bound.
//
// "Uniform over the space" therefore means uniform in u: log parameters are
// log-uniform, every integer and every level equally likely. This is the
// reference measure of partial dependence (Moosbauer et al. 2021, eq. 2),
// fANOVA (Hutter et al. 2014, section 2) and Shapley backgrounds (Croppi
// 2021).
package space

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Inactive encodes a switched-off conditional parameter in the unit cube.
const Inactive = -1.0

// Type is the kind of a parameter.
type Type string

// Parameter types.
const (
	Float       Type = "float"
	Int         Type = "int"
	Categorical Type = "categorical"
)

// Direction says whether the objective is to be minimized or maximized.
type Direction string

// Objective directions.
const (
	Minimize Direction = "minimize"
	Maximize Direction = "maximize"
)

// Condition makes a parameter active only when Parent takes one of Values.
// Values are choices (their JSON values or text forms) for a categorical
// parent and numbers for an int or float parent.
type Condition struct {
	Parent string `json:"parent"`
	Values []any  `json:"values"`
}

// Param is one hyperparameter.
type Param struct {
	Name string  `json:"name"`
	Type Type    `json:"type"`
	Low  float64 `json:"low,omitempty"`
	High float64 `json:"high,omitempty"`
	Log  bool    `json:"log,omitempty"`
	// Step, when positive, restricts a float or int parameter to the grid
	// low, low + step, …, high (step.go); it cannot go with Log.
	Step float64 `json:"step,omitempty"`
	// Choices are a categorical's levels as JSON scalars: strings, numbers
	// (float64) and booleans, kept with their type so that a choice of 16
	// is handed out as the number 16 and true as a boolean. Each has a text
	// form (Label), the way CSV files and plots show it; text forms are
	// unique within a parameter, so a CSV cell names one choice.
	Choices   []any      `json:"choices,omitempty"`
	Condition *Condition `json:"condition,omitempty"`
	// Default is the configuration a user would run without tuning (optional);
	// baseline Shapley values and good-region importance can start from it.
	Default any `json:"default,omitempty"`

	parent     int       // index of Condition.Parent, −1 when unconditional
	activeVals []float64 // Condition.Values as natural values of the parent
}

// Space is a validated search space. Build it with Parse, Load or New; the
// zero value is an empty space.
type Space struct {
	// Objective is the direction of the first (often the only) objective.
	Objective Direction `json:"objective"`
	// Objectives name every objective with its direction when the study
	// has several, or names its one objective; empty for one unnamed
	// objective (see objectives.go).
	Objectives []Objective `json:"objectives,omitempty"`
	// Constraints name the constraint values each trial reports (feasible
	// when every one is ≤ 0); empty for an unconstrained study.
	Constraints []string `json:"constraints,omitempty"`
	Params      []Param  `json:"params"`

	order []int // parameters in an order where every parent precedes its children
	index map[string]int
}

// MaxParams bounds a space's parameters: every model-based proposal and
// explanation costs at least linearly in them, and the explanations'
// quasi-Monte Carlo designs support 500.
const MaxParams = 500

// New validates params and returns a space for the given direction
// (empty means minimize).
func New(objective Direction, params []Param) (*Space, error) {
	s := &Space{Objective: objective, Params: slices.Clone(params)}
	if err := s.init(); err != nil {
		return nil, err
	}
	return s, nil
}

// DocumentJSON returns a space document as compact JSON: JSON as it is
// (compacted), YAML converted. It checks the syntax only; Parse checks the
// space. A server keeps the document as its user wrote it, in one
// notation.
func DocumentJSON(doc []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(doc)
	if len(trimmed) == 0 {
		return nil, errors.New("space: empty document")
	}
	if !bytes.HasPrefix(trimmed, []byte("{")) {
		var v any
		if err := yaml.Unmarshal(trimmed, &v); err != nil {
			return nil, fmt.Errorf("space: not JSON and not YAML: %w", err)
		}
		converted, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("space: YAML document has a shape JSON cannot hold: %w", err)
		}
		trimmed = converted
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	return buf.Bytes(), nil
}

// Parse reads a space from JSON, or from YAML when the text is not JSON.
func Parse(data []byte) (*Space, error) {
	data, err := DocumentJSON(data)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Objective   Direction   `json:"objective"`
		Objectives  []Objective `json:"objectives"`
		Constraints []string    `json:"constraints"`
		Params      []struct {
			Name      string     `json:"name"`
			Type      Type       `json:"type"`
			Low       *float64   `json:"low"`
			High      *float64   `json:"high"`
			Log       bool       `json:"log"`
			Step      *float64   `json:"step"`
			Choices   []any      `json:"choices"`
			Condition *Condition `json:"condition"`
			Default   any        `json:"default"`
		} `json:"params"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	params := make([]Param, len(raw.Params))
	for i, rp := range raw.Params {
		p := Param{Name: rp.Name, Type: rp.Type, Log: rp.Log, Condition: rp.Condition, Default: rp.Default}
		label := paramLabel(i, rp.Name)
		switch rp.Type {
		case Float, Int:
			if rp.Low == nil || rp.High == nil {
				return nil, fmt.Errorf("space: %s: %s parameter needs both low and high", label, rp.Type)
			}
			p.Low, p.High = *rp.Low, *rp.High
			if len(rp.Choices) > 0 {
				return nil, fmt.Errorf("space: %s: choices are only for categorical parameters", label)
			}
		case Categorical:
			if rp.Low != nil || rp.High != nil {
				return nil, fmt.Errorf("space: %s: low and high are not used by a categorical parameter", label)
			}
			if rp.Step != nil {
				return nil, fmt.Errorf("space: %s: step is only for float and int parameters", label)
			}
			p.Choices = rp.Choices
		}
		if rp.Step != nil {
			if *rp.Step <= 0 {
				return nil, fmt.Errorf("space: %s: step must be positive (got %v)", label, *rp.Step)
			}
			p.Step = *rp.Step
		}
		params[i] = p
	}
	if len(raw.Objectives) > 0 || len(raw.Constraints) > 0 {
		return NewWithObjectives(raw.Objective, raw.Objectives, raw.Constraints, params)
	}
	return New(raw.Objective, params)
}

// Load reads a space file (.json, .yaml or .yml).
func Load(path string) (*Space, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return s, nil
}

// MarshalJSON writes the space in the file format Parse reads.
func (s *Space) MarshalJSON() ([]byte, error) {
	type plain struct {
		Objective   Direction   `json:"objective"`
		Objectives  []Objective `json:"objectives,omitempty"`
		Constraints []string    `json:"constraints,omitempty"`
		Params      []Param     `json:"params"`
	}
	obj := s.Objective
	if obj == "" {
		obj = Minimize
	}
	return json.Marshal(plain{Objective: obj, Objectives: s.Objectives, Constraints: s.Constraints, Params: s.Params})
}

// MarshalJSON writes a parameter in the file format; numeric bounds are
// always written, even when zero.
func (p Param) MarshalJSON() ([]byte, error) {
	type numeric struct {
		Name      string     `json:"name"`
		Type      Type       `json:"type"`
		Low       float64    `json:"low"`
		High      float64    `json:"high"`
		Log       bool       `json:"log,omitempty"`
		Step      float64    `json:"step,omitempty"`
		Condition *Condition `json:"condition,omitempty"`
		Default   any        `json:"default,omitempty"`
	}
	type categorical struct {
		Name      string     `json:"name"`
		Type      Type       `json:"type"`
		Choices   []any      `json:"choices"`
		Condition *Condition `json:"condition,omitempty"`
		Default   any        `json:"default,omitempty"`
	}
	if p.Type == Categorical {
		return json.Marshal(categorical{p.Name, p.Type, p.Choices, p.Condition, p.Default})
	}
	return json.Marshal(numeric{p.Name, p.Type, p.Low, p.High, p.Log, p.Step, p.Condition, p.Default})
}

// UnmarshalJSON lets a Space be embedded in other JSON documents.
func (s *Space) UnmarshalJSON(data []byte) error {
	parsed, err := Parse(data)
	if err != nil {
		return err
	}
	*s = *parsed
	return nil
}

func paramLabel(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("parameter #%d", i+1)
	}
	return fmt.Sprintf("parameter %q", name)
}

// choiceValue normalizes a choice (or a value given for a categorical) to
// the JSON scalar it stands for: a string, a float64 or a bool. JSON null,
// objects and arrays are refused, and so are numbers that are not finite.
func choiceValue(v any) (any, error) {
	switch x := v.(type) {
	case string, bool:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a finite number", x)
		}
		return x, nil
	case float32:
		return choiceValue(float64(x))
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s is not a number JSON can hold: %w", x, err)
		}
		return choiceValue(f)
	case nil:
		return nil, errors.New("null is not a choice (use a string, number or boolean)")
	default:
		return nil, fmt.Errorf("%v (a %T) is not a choice: a choice is a string, number or boolean", v, v)
	}
}

// ChoiceLabel is the text form of a choice: a string as it is, a number as
// JSON writes it, a boolean as true or false. CSV files, tables and plots
// show choices so.
func ChoiceLabel(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return formatNumber(x)
	}
	return fmt.Sprint(v)
}

// formatNumber writes a number as encoding/json does: plain decimals from
// 1e-6 up to 1e21, exponents beyond (so 100000000 is not "1e+08").
func formatNumber(x float64) string {
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// Label is the text form of choice k: how CSV files, tables and plots show
// it, and what ParseValue reads back.
func (p *Param) Label(k int) string {
	if k < 0 || k >= len(p.Choices) {
		return strconv.Itoa(k)
	}
	return ChoiceLabel(p.Choices[k])
}

// Labels lists the text forms of a categorical's choices (nil for other
// types).
func (p *Param) Labels() []string {
	if p.Type != Categorical {
		return nil
	}
	out := make([]string, len(p.Choices))
	for k := range out {
		out[k] = p.Label(k)
	}
	return out
}

// Level finds the choice a value names: the choice itself (16, true,
// "adam") or its text form ("16", "true"), which is how trials stored
// before choices kept their types, and CSV cells, give it. A string that
// reads as a number names the numeric choice equal to it ("16.0" is 16).
func (p *Param) Level(x any) (int, error) {
	if p.Type != Categorical {
		return 0, fmt.Errorf("parameter %q is %s, not categorical", p.Name, p.Type)
	}
	v, err := choiceValue(x)
	if err != nil {
		return 0, fmt.Errorf("parameter %q: %w", p.Name, err)
	}
	text := ChoiceLabel(v)
	for k, c := range p.Choices {
		if ChoiceLabel(c) == text {
			return k, nil
		}
	}
	if str, ok := v.(string); ok {
		if f, err := strconv.ParseFloat(strings.TrimSpace(str), 64); err == nil {
			for k, c := range p.Choices {
				if c == any(f) {
					return k, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("parameter %q: %s is not one of its choices %s", p.Name, quoteChoice(v), p.choiceList())
}

// quoteChoice shows a value as JSON would, so that "16" and 16 differ in
// messages.
func quoteChoice(v any) string {
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}

func (p *Param) choiceList() string {
	b, err := json.Marshal(p.Choices)
	if err != nil {
		return fmt.Sprint(p.Choices)
	}
	return string(b)
}

// init validates the space and builds its lookup tables.
func (s *Space) init() error {
	switch s.Objective {
	case "":
		s.Objective = Minimize
	case Minimize, Maximize:
	default:
		return fmt.Errorf("space: objective %q must be %q or %q", s.Objective, Minimize, Maximize)
	}
	if len(s.Params) > MaxParams {
		return fmt.Errorf("space: %d parameters exceed the limit of %d", len(s.Params), MaxParams)
	}
	if len(s.Params) == 0 {
		return errors.New("space: no parameters")
	}
	s.index = make(map[string]int, len(s.Params))
	for i := range s.Params {
		p := &s.Params[i]
		label := paramLabel(i, p.Name)
		if strings.TrimSpace(p.Name) == "" {
			return fmt.Errorf("space: %s: empty name", label)
		}
		if _, dup := s.index[p.Name]; dup {
			return fmt.Errorf("space: %s: duplicate name", label)
		}
		s.index[p.Name] = i
		if err := p.validateDomain(); err != nil {
			return fmt.Errorf("space: %s: %w", label, err)
		}
		if err := p.validateStep(); err != nil {
			return fmt.Errorf("space: %s: %w", label, err)
		}
		if p.Default != nil {
			if _, err := p.naturalFromAny(p.Default); err != nil {
				return fmt.Errorf("space: %s: default: %w", label, err)
			}
		}
	}
	for i := range s.Params {
		p := &s.Params[i]
		p.parent = -1
		p.activeVals = nil
		if p.Condition == nil {
			continue
		}
		label := paramLabel(i, p.Name)
		pi, ok := s.index[p.Condition.Parent]
		if !ok {
			return fmt.Errorf("space: %s: condition names unknown parent %q", label, p.Condition.Parent)
		}
		if pi == i {
			return fmt.Errorf("space: %s: condition on itself", label)
		}
		if len(p.Condition.Values) == 0 {
			return fmt.Errorf("space: %s: condition on %q lists no values", label, p.Condition.Parent)
		}
		p.parent = pi
		parent := &s.Params[pi]
		for _, v := range p.Condition.Values {
			nv, err := parent.naturalFromAny(v)
			if err != nil {
				return fmt.Errorf("space: %s: condition value %v is not a value of parent %q: %w", label, v, parent.Name, err)
			}
			p.activeVals = append(p.activeVals, nv)
		}
	}
	order, err := s.topoOrder()
	if err != nil {
		return err
	}
	s.order = order
	return nil
}

func (p *Param) validateDomain() error {
	switch p.Type {
	case Float, Int:
		if math.IsNaN(p.Low) || math.IsNaN(p.High) || math.IsInf(p.Low, 0) || math.IsInf(p.High, 0) {
			return fmt.Errorf("low and high must be finite (got %v, %v)", p.Low, p.High)
		}
		if p.Low >= p.High {
			return fmt.Errorf("low %v must be below high %v", p.Low, p.High)
		}
		// Every encoding divides by high − low (and an int's by one more):
		// a span that overflows to +Inf would make every proposal +Inf.
		if math.IsInf(p.High-p.Low, 0) {
			return fmt.Errorf("the range [%v, %v] is too wide: high − low must be a finite float64", p.Low, p.High)
		}
		if p.Log && p.Low <= 0 {
			return fmt.Errorf("log scale needs low > 0 (got %v)", p.Low)
		}
		if p.Type == Int && (p.Low != math.Trunc(p.Low) || p.High != math.Trunc(p.High)) {
			return fmt.Errorf("int bounds must be whole numbers (got %v, %v)", p.Low, p.High)
		}
		if len(p.Choices) > 0 {
			return errors.New("choices are only for categorical parameters")
		}
	case Categorical:
		if len(p.Choices) == 0 {
			return errors.New("categorical parameter has no choices")
		}
		if p.Log {
			return errors.New("a categorical parameter cannot be on a log scale")
		}
		// A fresh slice: New shares the caller's, which is not to change.
		choices := make([]any, len(p.Choices))
		seen := map[string]int{}
		for k, c := range p.Choices {
			v, err := choiceValue(c)
			if err != nil {
				return fmt.Errorf("choice #%d: %w", k+1, err)
			}
			text := ChoiceLabel(v)
			if j, dup := seen[text]; dup {
				if ChoiceLabel(choices[j]) == text && quoteChoice(choices[j]) == quoteChoice(v) {
					return fmt.Errorf("choice %s appears twice", quoteChoice(v))
				}
				return fmt.Errorf("choices %s and %s are both written %q in CSV files and reports; make them distinct", quoteChoice(choices[j]), quoteChoice(v), text)
			}
			seen[text] = k
			choices[k] = v
		}
		p.Choices = choices
	case "":
		return errors.New("missing type (float, int or categorical)")
	default:
		return fmt.Errorf("unknown type %q (want float, int or categorical)", p.Type)
	}
	return nil
}

// topoOrder orders parameters parents-first and refuses cycles.
func (s *Space) topoOrder() ([]int, error) {
	const (
		unseen = iota
		visiting
		done
	)
	state := make([]int, len(s.Params))
	order := make([]int, 0, len(s.Params))
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		switch state[i] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("space: parameter %q: conditions form a cycle (%s)", s.Params[i].Name, strings.Join(append(path, s.Params[i].Name), " -> "))
		}
		state[i] = visiting
		if pi := s.Params[i].parent; pi >= 0 {
			if err := visit(pi, append(path, s.Params[i].Name)); err != nil {
				return err
			}
		}
		state[i] = done
		order = append(order, i)
		return nil
	}
	for i := range s.Params {
		if err := visit(i, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// Dim is the number of parameters, which is also the encoded dimension.
func (s *Space) Dim() int { return len(s.Params) }

// Names lists the parameter names in order.
func (s *Space) Names() []string {
	names := make([]string, len(s.Params))
	for i, p := range s.Params {
		names[i] = p.Name
	}
	return names
}

// Index returns the position of the named parameter.
func (s *Space) Index(name string) (int, bool) {
	i, ok := s.index[name]
	return i, ok
}

// Sign is +1 for minimization and −1 for maximization: sign·value is always
// to be minimized.
func (s *Space) Sign() float64 {
	if s.Objective == Maximize {
		return -1
	}
	return 1
}

// Levels gives, per dimension, 0 for a numeric parameter and the number of
// choices for a categorical one.
func (s *Space) Levels() []int {
	levels := make([]int, len(s.Params))
	for i, p := range s.Params {
		if p.Type == Categorical {
			levels[i] = len(p.Choices)
		}
	}
	return levels
}

// Conditional reports whether any parameter has a condition.
func (s *Space) Conditional() bool {
	for _, p := range s.Params {
		if p.Condition != nil {
			return true
		}
	}
	return false
}

// ParentOf returns the index of a parameter's parent, or −1.
func (s *Space) ParentOf(i int) int { return s.Params[i].parent }

// Order returns the parameters' indices in an order where every parent
// precedes its children (the order in which a define-by-run sampler must
// suggest them).
func (s *Space) Order() []int { return slices.Clone(s.order) }

// Cardinality is the number of distinct values of an int, stepped or
// categorical parameter, and 0 for a continuous float parameter.
func (p *Param) Cardinality() int {
	if p.Stepped() {
		return p.gridSize()
	}
	switch p.Type {
	case Int:
		return int(p.High-p.Low) + 1
	case Categorical:
		return len(p.Choices)
	}
	return 0
}

// ToUnit encodes one natural value of an active parameter into [0,1].
func (p *Param) ToUnit(v float64) float64 {
	if p.Stepped() {
		return (float64(p.gridIndex(v)) + 0.5) / float64(p.gridSize())
	}
	switch p.Type {
	case Float:
		if p.Log {
			return (math.Log(v) - math.Log(p.Low)) / (math.Log(p.High) - math.Log(p.Low))
		}
		return (v - p.Low) / (p.High - p.Low)
	case Int:
		if p.Log {
			lo, hi := math.Log(p.Low-0.5), math.Log(p.High+0.5)
			return (math.Log(math.Max(v, math.Exp(lo))) - lo) / (hi - lo)
		}
		return (v - p.Low + 0.5) / (p.High - p.Low + 1)
	default:
		return (v + 0.5) / float64(len(p.Choices))
	}
}

// FromUnit decodes a coordinate in [0,1] (clamped) to a natural value,
// rounding ints and categoricals.
func (p *Param) FromUnit(u float64) float64 {
	u = math.Min(1, math.Max(0, u))
	if p.Stepped() {
		return p.GridValue(int(math.Floor(u * float64(p.gridSize()))))
	}
	switch p.Type {
	case Float:
		if p.Log {
			v := math.Exp(math.Log(p.Low) + u*(math.Log(p.High)-math.Log(p.Low)))
			return math.Min(p.High, math.Max(p.Low, v))
		}
		return p.Low + u*(p.High-p.Low)
	case Int:
		if p.Log {
			lo, hi := math.Log(p.Low-0.5), math.Log(p.High+0.5)
			v := math.Round(math.Exp(lo + u*(hi-lo)))
			return math.Min(p.High, math.Max(p.Low, v))
		}
		n := p.High - p.Low + 1
		return math.Min(p.High, p.Low+math.Floor(u*n))
	default:
		k := len(p.Choices)
		return math.Min(float64(k-1), math.Floor(u*float64(k)))
	}
}

// CheckValue reports whether v is a valid natural value of the parameter.
func (p *Param) CheckValue(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("parameter %q: value %v is not finite", p.Name, v)
	}
	switch p.Type {
	case Float:
		if v < p.Low || v > p.High {
			return fmt.Errorf("parameter %q: %v is outside [%v, %v]", p.Name, v, p.Low, p.High)
		}
	case Int:
		if v != math.Trunc(v) {
			return fmt.Errorf("parameter %q: %v is not an integer", p.Name, v)
		}
		if v < p.Low || v > p.High {
			return fmt.Errorf("parameter %q: %v is outside [%v, %v]", p.Name, v, p.Low, p.High)
		}
	default:
		if v != math.Trunc(v) || v < 0 || int(v) >= len(p.Choices) {
			return fmt.Errorf("parameter %q: level index %v is not one of its %d choices", p.Name, v, len(p.Choices))
		}
	}
	if p.Stepped() {
		return p.checkStep(v)
	}
	return nil
}

// active reports whether parameter i is active given the natural values of
// its ancestors (which must already be resolved in vals).
func (s *Space) active(i int, vals []float64) bool {
	p := &s.Params[i]
	if p.parent < 0 {
		return true
	}
	pv := vals[p.parent]
	if math.IsNaN(pv) {
		return false
	}
	return slices.Contains(p.activeVals, pv)
}

// Active tells which parameters are active in a configuration of natural
// values (only the parents' values are read).
func (s *Space) Active(vals []float64) ([]bool, error) {
	if len(vals) != len(s.Params) {
		return nil, fmt.Errorf("space: configuration has %d values, want %d", len(vals), len(s.Params))
	}
	act := make([]bool, len(s.Params))
	resolved := make([]float64, len(vals))
	for _, i := range s.order {
		act[i] = s.active(i, resolved)
		if act[i] {
			resolved[i] = vals[i]
		} else {
			resolved[i] = math.NaN()
		}
	}
	return act, nil
}

// Validate checks a configuration of natural values: every active parameter
// within its domain, every inactive one NaN.
func (s *Space) Validate(vals []float64) error {
	act, err := s.Active(vals)
	if err != nil {
		return err
	}
	for i, p := range s.Params {
		if !act[i] {
			if !math.IsNaN(vals[i]) {
				return fmt.Errorf("space: parameter %q is inactive (its condition on %q does not hold) but has a value", p.Name, p.Condition.Parent)
			}
			continue
		}
		if math.IsNaN(vals[i]) {
			return fmt.Errorf("space: parameter %q is active but has no value", p.Name)
		}
		if err := p.CheckValue(vals[i]); err != nil {
			return fmt.Errorf("space: %w", err)
		}
	}
	return nil
}

// Encode maps a valid configuration of natural values to the unit cube.
func (s *Space) Encode(vals []float64) ([]float64, error) {
	if err := s.Validate(vals); err != nil {
		return nil, err
	}
	u := make([]float64, len(vals))
	for i := range s.Params {
		if math.IsNaN(vals[i]) {
			u[i] = Inactive
			continue
		}
		u[i] = s.Params[i].ToUnit(vals[i])
	}
	return u, nil
}

// Decode maps a unit-cube point to natural values, clamping to the cube,
// rounding ints and categoricals and applying the conditions (inactive → NaN).
// Coordinates of parameters that are active after decoding but were Inactive
// in u decode to the middle of their range.
func (s *Space) Decode(u []float64) []float64 {
	vals := make([]float64, len(s.Params))
	for _, i := range s.order {
		if !s.active(i, vals) {
			vals[i] = math.NaN()
			continue
		}
		ui := u[i]
		if ui < 0 || math.IsNaN(ui) {
			ui = 0.5
		}
		vals[i] = s.Params[i].FromUnit(ui)
	}
	return vals
}

// Repair moves a unit-cube point in place onto the representable set: ints,
// stepped parameters and categoricals to their bin centres, floats clamped, inactive parameters
// to Inactive. Repair(Encode(v)) = Encode(v) for valid v.
func (s *Space) Repair(u []float64) {
	vals := s.Decode(u)
	for i, p := range s.Params {
		if math.IsNaN(vals[i]) {
			u[i] = Inactive
			continue
		}
		if p.Type == Float && !p.Stepped() {
			u[i] = math.Min(1, math.Max(0, u[i]))
			continue
		}
		u[i] = p.ToUnit(vals[i])
	}
}

// Sample draws n points uniformly over the space, in unit-cube encoding.
func (s *Space) Sample(rng *rand.Rand, n int) [][]float64 {
	pts := make([][]float64, n)
	for k := range pts {
		u := make([]float64, len(s.Params))
		for i := range u {
			u[i] = rng.Float64()
		}
		s.Repair(u)
		pts[k] = u
	}
	return pts
}

// Defaults returns the natural values of the parameters' defaults and
// whether every active parameter has one.
func (s *Space) Defaults() ([]float64, bool) {
	vals := make([]float64, len(s.Params))
	for _, i := range s.order {
		vals[i] = math.NaN()
		p := &s.Params[i]
		if !s.active(i, vals) {
			continue
		}
		if p.Default == nil {
			return nil, false
		}
		v, err := p.naturalFromAny(p.Default)
		if err != nil {
			return nil, false
		}
		vals[i] = v
	}
	return vals, true
}

// Format renders the natural value of parameter i as it appears in CSV files
// and reports: "" for inactive, the choice's text form (Label) for
// categoricals.
func (s *Space) Format(i int, v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	p := &s.Params[i]
	switch p.Type {
	case Int:
		return strconv.FormatInt(int64(v), 10)
	case Categorical:
		k := int(v)
		if float64(k) != v || k < 0 || k >= len(p.Choices) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
		return p.Label(k)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Value is the JSON value of parameter i's natural value v: nil for
// inactive (NaN), a float64 for floats, an int for ints, and for a
// categorical its choice with the choice's own type (string, number or
// boolean). Every typed value the service, the CLI and the explanations
// hand out comes from here.
func (s *Space) Value(i int, v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	p := &s.Params[i]
	switch p.Type {
	case Int:
		return int(v)
	case Categorical:
		k := int(v)
		if float64(k) != v || k < 0 || k >= len(p.Choices) {
			return v
		}
		return p.Choices[k]
	}
	return v
}

// ParseValue reads the text form of parameter i ("" means inactive → NaN).
// It checks the domain but not the conditions.
func (s *Space) ParseValue(i int, text string) (float64, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return math.NaN(), nil
	}
	p := &s.Params[i]
	var v float64
	if p.Type == Categorical {
		k, err := p.Level(text)
		if err != nil {
			return 0, err
		}
		v = float64(k)
	} else {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return 0, fmt.Errorf("parameter %q: %q is not a number", p.Name, text)
		}
		if p.Type == Int && f == math.Round(f) {
			f = math.Round(f)
		}
		v = f
	}
	if err := p.CheckValue(v); err != nil {
		return 0, err
	}
	return p.snap(v), nil
}

// naturalFromAny converts a JSON scalar into the parameter's natural value.
// A number must be a JSON number: a string that looks like one is refused,
// so that a client's mistake is not silently read. Errors name the
// parameter.
func (p *Param) naturalFromAny(x any) (float64, error) {
	var v float64
	switch p.Type {
	case Categorical:
		k, err := p.Level(x)
		if err != nil {
			return 0, err
		}
		v = float64(k)
	default:
		switch n := x.(type) {
		case float64:
			v = n
		case int:
			v = float64(n)
		case int64:
			v = float64(n)
		case json.Number:
			f, err := n.Float64()
			if err != nil {
				return 0, fmt.Errorf("parameter %q: %w", p.Name, err)
			}
			v = f
		case string:
			return 0, fmt.Errorf("parameter %q: the string %q is not a number (give a JSON number)", p.Name, n)
		default:
			return 0, fmt.Errorf("parameter %q: %v is not a number", p.Name, x)
		}
	}
	if err := p.CheckValue(v); err != nil {
		return 0, err
	}
	return p.snap(v), nil
}

// ToMap turns natural values into a name → value map for JSON (see Value:
// float64 for floats, int for ints, the typed choice for categoricals);
// inactive parameters are left out.
func (s *Space) ToMap(vals []float64) map[string]any {
	m := make(map[string]any, len(vals))
	for i, p := range s.Params {
		if x := s.Value(i, vals[i]); x != nil {
			m[p.Name] = x
		}
	}
	return m
}

// FromMap reads a name → value map (as decoded from JSON) into natural values
// and validates it: unknown names, values outside the domain, missing active
// parameters and values given for inactive ones are errors.
func (s *Space) FromMap(m map[string]any) ([]float64, error) {
	for name := range m {
		if _, ok := s.index[name]; !ok {
			return nil, fmt.Errorf("space: unknown parameter %q (known: %s)", name, strings.Join(s.Names(), ", "))
		}
	}
	vals := make([]float64, len(s.Params))
	for i := range vals {
		vals[i] = math.NaN()
	}
	for _, i := range s.order {
		p := &s.Params[i]
		x, given := m[p.Name]
		if !s.active(i, vals) {
			if given && x != nil {
				return nil, fmt.Errorf("space: parameter %q is inactive (its condition on %q does not hold) but was given", p.Name, p.Condition.Parent)
			}
			continue
		}
		if !given || x == nil {
			return nil, fmt.Errorf("space: parameter %q is missing", p.Name)
		}
		v, err := p.naturalFromAny(x)
		if err != nil {
			return nil, fmt.Errorf("space: %w", err)
		}
		vals[i] = v
	}
	return vals, nil
}

// Grid returns g natural values of parameter i spread evenly on its own scale
// (log-spaced for log parameters), every integer when an int parameter has at
// most g values, every level of a categorical, and only grid values of a
// stepped parameter (all of them when there are at most g).
func (s *Space) Grid(i, g int) ([]float64, error) {
	if i < 0 || i >= len(s.Params) {
		return nil, fmt.Errorf("space: no parameter #%d", i)
	}
	if g < 1 {
		return nil, fmt.Errorf("space: grid size %d must be at least 1", g)
	}
	p := &s.Params[i]
	if p.Stepped() {
		return p.stepGrid(g), nil
	}
	if c := p.Cardinality(); c > 0 && (p.Type == Categorical || c <= g) {
		out := make([]float64, c)
		for k := range out {
			if p.Type == Categorical {
				out[k] = float64(k)
			} else {
				out[k] = p.Low + float64(k)
			}
		}
		return out, nil
	}
	out := make([]float64, 0, g)
	for k := 0; k < g; k++ {
		t := 0.5
		if g > 1 {
			t = float64(k) / float64(g-1)
		}
		var v float64
		switch {
		case p.Log:
			v = math.Exp(math.Log(p.Low) + t*(math.Log(p.High)-math.Log(p.Low)))
		default:
			v = p.Low + t*(p.High-p.Low)
		}
		if p.Type == Int {
			v = math.Round(v)
			if len(out) > 0 && out[len(out)-1] == v {
				continue
			}
		}
		out = append(out, math.Min(p.High, math.Max(p.Low, v)))
	}
	return out, nil
}
