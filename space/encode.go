package space

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Natural values and the unit cube: validation, encoding and decoding,
// repair, sampling, defaults and grids.

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
