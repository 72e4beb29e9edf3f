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
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
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
