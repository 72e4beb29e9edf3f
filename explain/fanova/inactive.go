package fanova

import (
	"fmt"
	"math"

	"xbo/space"
)

// InactiveMass is, per parameter of s, the exact probability that it is
// switched off when a configuration is drawn uniformly over the space (as
// space.Sample does): one minus the product, along its chain of parents, of
// the chance that the parent takes one of the condition's values. A
// categorical level has chance 1/K, an integer k its bin of the unit cube
// (wider for small k on a log scale), a float any single value chance 0. The
// result is nil when the space has no conditions; Options.InactiveMass takes
// it.
func InactiveMass(s *space.Space) ([]float64, error) {
	if s == nil {
		return nil, fmt.Errorf("fanova: inactive mass: no space")
	}
	if !s.Conditional() {
		return nil, nil
	}
	d := s.Dim()
	active := make([]float64, d)
	done := make([]bool, d)
	var resolve func(i, depth int) (float64, error)
	resolve = func(i, depth int) (float64, error) {
		if done[i] {
			return active[i], nil
		}
		if depth > d {
			return 0, fmt.Errorf("conditions of %q form a cycle", s.Params[i].Name)
		}
		pi := s.ParentOf(i)
		if pi < 0 {
			active[i], done[i] = 1, true
			return 1, nil
		}
		pa, err := resolve(pi, depth+1)
		if err != nil {
			return 0, err
		}
		match, err := matchChance(s, i, pi)
		if err != nil {
			return 0, err
		}
		active[i], done[i] = pa*match, true
		return active[i], nil
	}
	out := make([]float64, d)
	for i := range d {
		a, err := resolve(i, 0)
		if err != nil {
			return nil, fmt.Errorf("fanova: inactive mass: %w", err)
		}
		out[i] = math.Min(1, math.Max(0, 1-a))
	}
	return out, nil
}

// matchChance is the chance that parent pi, drawn uniformly in its own
// encoding, takes one of the values that activate parameter i.
func matchChance(s *space.Space, i, pi int) (float64, error) {
	parent := &s.Params[pi]
	seen := map[float64]bool{}
	chance := 0.0
	for _, raw := range s.Params[i].Condition.Values {
		v, err := s.ParseValue(pi, fmt.Sprint(raw))
		if err != nil {
			return 0, fmt.Errorf("%q: condition value %v: %w", s.Params[i].Name, raw, err)
		}
		if seen[v] {
			continue
		}
		seen[v] = true
		switch {
		case parent.Stepped():
			// Every grid value has the same bin width in the encoding.
			chance += 1 / float64(parent.Cardinality())
		case parent.Type == space.Categorical:
			chance += 1 / float64(len(parent.Choices))
		case parent.Type == space.Int:
			if parent.Log {
				chance += (math.Log(v+0.5) - math.Log(v-0.5)) / (math.Log(parent.High+0.5) - math.Log(parent.Low-0.5))
			} else {
				chance += 1 / (parent.High - parent.Low + 1)
			}
		}
	}
	return math.Min(1, chance), nil
}
