package space

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Natural values as people and documents write them: levels and their
// labels, numbers as text, configurations as maps.

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
