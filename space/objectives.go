package space

import (
	"fmt"
	"slices"
	"strings"
)

// Objective is one objective of a study: its name (what a trial's value
// measures, e.g. "error" or "size_mb") and its direction.
type Objective struct {
	Name      string    `json:"name"`
	Direction Direction `json:"direction"`
}

// MaxObjectives bounds a study's objectives: the exact hypervolume that
// measures a front costs exponentially in their number (package pareto).
const MaxObjectives = 4

// MaxConstraints bounds a study's constraint values.
const MaxConstraints = 32

// NewWithObjectives validates params, objectives and constraint names and
// returns the space of a study with one or several named objectives. The
// direction objective, when not empty, must be that of the first
// objective (a document may carry both).
func NewWithObjectives(objective Direction, objectives []Objective, constraints []string, params []Param) (*Space, error) {
	if len(objectives) > MaxObjectives {
		return nil, fmt.Errorf("space: %d objectives exceed the limit of %d", len(objectives), MaxObjectives)
	}
	if len(constraints) > MaxConstraints {
		return nil, fmt.Errorf("space: %d constraints exceed the limit of %d", len(constraints), MaxConstraints)
	}
	objs := slices.Clone(objectives)
	names := map[string]bool{}
	for k := range objs {
		o := &objs[k]
		if strings.TrimSpace(o.Name) == "" {
			o.Name = fmt.Sprintf("objective_%d", k)
		}
		if names[o.Name] {
			return nil, fmt.Errorf("space: objective %d: duplicate name %q", k, o.Name)
		}
		names[o.Name] = true
		switch o.Direction {
		case "":
			o.Direction = Minimize
		case Minimize, Maximize:
		default:
			return nil, fmt.Errorf("space: objective %q: direction %q must be %q or %q", o.Name, o.Direction, Minimize, Maximize)
		}
	}
	cons := slices.Clone(constraints)
	seen := map[string]bool{}
	for j, c := range cons {
		if strings.TrimSpace(c) == "" {
			return nil, fmt.Errorf("space: constraint %d: empty name", j)
		}
		if seen[c] {
			return nil, fmt.Errorf("space: constraint %d: duplicate name %q", j, c)
		}
		seen[c] = true
	}
	if len(objs) > 0 {
		if objective != "" && objective != objs[0].Direction {
			return nil, fmt.Errorf("space: objective %q differs from the first objective's direction %q (give one of them)", objective, objs[0].Direction)
		}
		objective = objs[0].Direction
	}
	s, err := New(objective, params)
	if err != nil {
		return nil, err
	}
	if len(objs) > 0 {
		s.Objectives = objs
	}
	if len(cons) > 0 {
		s.Constraints = cons
	}
	return s, nil
}

// NumObjectives is the number of objectives: 1 unless the study names
// several.
func (s *Space) NumObjectives() int { return max(1, len(s.Objectives)) }

// MultiObjective reports whether the study has several objectives.
func (s *Space) MultiObjective() bool { return len(s.Objectives) > 1 }

// Directions returns the direction of every objective.
func (s *Space) Directions() []Direction {
	if len(s.Objectives) == 0 {
		d := s.Objective
		if d == "" {
			d = Minimize
		}
		return []Direction{d}
	}
	out := make([]Direction, len(s.Objectives))
	for k, o := range s.Objectives {
		out[k] = o.Direction
	}
	return out
}

// ObjectiveNames returns every objective's name ("value" for one unnamed
// objective, the name a single-objective study's trials give it).
func (s *Space) ObjectiveNames() []string {
	if len(s.Objectives) == 0 {
		return []string{"value"}
	}
	out := make([]string, len(s.Objectives))
	for k, o := range s.Objectives {
		out[k] = o.Name
	}
	return out
}

// ObjectiveIndex returns the position of an objective given by name or by
// its index written as a number ("0", "1", ...).
func (s *Space) ObjectiveIndex(name string) (int, error) {
	names := s.ObjectiveNames()
	if k := slices.Index(names, name); k >= 0 {
		return k, nil
	}
	var k int
	if _, err := fmt.Sscanf(name, "%d", &k); err == nil && fmt.Sprint(k) == name {
		if k >= 0 && k < len(names) {
			return k, nil
		}
		return 0, fmt.Errorf("space: objective %d: the study has %d objective(s) (0 to %d)", k, len(names), len(names)-1)
	}
	return 0, fmt.Errorf("space: no objective %q (objectives: %s)", name, strings.Join(names, ", "))
}

// ForObjective returns the single-objective space of objective k: the same
// parameters and constraints, objective k's direction. Explanations of one
// objective of a multi-objective study run on it.
func (s *Space) ForObjective(k int) (*Space, error) {
	if k < 0 || k >= s.NumObjectives() {
		return nil, fmt.Errorf("space: objective %d: the study has %d objective(s)", k, s.NumObjectives())
	}
	c := *s
	c.Objective = s.Directions()[k]
	c.Objectives = nil
	return &c, nil
}
