package space

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Stepped ranges: a float or int parameter with Step > 0 takes only the
// values low, low + step, …, high (Optuna's FloatDistribution and
// IntDistribution with step). Such a parameter is encoded like an integer
// over its grid indices: value k of n sits at u = (k + ½)/n, so a uniform u
// gives every grid value the same chance, and Repair, Sample and Decode land
// on the grid. The optimizer and its duplicate check then work on the grid
// without knowing about steps: they only see repaired unit-cube points.

// stepTolerance is how far (in grid steps) a value or a range may be off the
// grid and still count as on it: decimal steps such as 0.1 are not exact in
// binary, so (0.3 − 0)/0.1 is 2.9999999999999996. Optuna uses the same
// tolerance for its own check, so every value an Optuna study holds passes.
const stepTolerance = 1e-8

// maxGridPoints bounds a stepped parameter's grid so that its size fits an
// int and its indices are exact in a float64.
const maxGridPoints = 1 << 50

// Continuous reports whether the parameter takes every value of its range:
// a float without a step. Gradient climbs and compass steps in u move only
// such parameters; the others move from grid value to grid value.
func (p *Param) Continuous() bool {
	return p.Type == Float && !p.Stepped()
}

// Stepped reports whether the parameter takes only the values of a grid
// other than every integer (a float with a step, an int with a step above 1).
func (p *Param) Stepped() bool {
	return p.Step > 0 && p.Type != Categorical
}

// validateStep checks Step against the range and normalizes an int's step
// of 1 to none, so that both spell the same space.
func (p *Param) validateStep() error {
	if p.Step == 0 {
		return nil
	}
	if p.Type == Categorical {
		return errors.New("step is only for float and int parameters")
	}
	if math.IsNaN(p.Step) || math.IsInf(p.Step, 0) || p.Step < 0 {
		return fmt.Errorf("step must be a positive finite number (got %v)", p.Step)
	}
	if p.Type == Int {
		if p.Step != math.Trunc(p.Step) {
			return fmt.Errorf("an int parameter's step must be a whole number (got %v)", p.Step)
		}
		if p.Step == 1 {
			p.Step = 0
			return nil
		}
	}
	if p.Log {
		// As Optuna: a grid evenly spaced in x is not evenly spaced in ln x,
		// and neither encoding would be uniform over both.
		return fmt.Errorf("step %v cannot be combined with a log scale", p.Step)
	}
	m := (p.High - p.Low) / p.Step
	k := math.Round(m)
	if math.IsInf(m, 0) || k+1 > maxGridPoints {
		return fmt.Errorf("step %v makes more than %d grid points on [%v, %v]", p.Step, int64(maxGridPoints), p.Low, p.High)
	}
	if !nearWhole(m) {
		return fmt.Errorf("(high − low)/step = (%v − %v)/%v = %v is not a whole number: high must be low plus a whole number of steps (e.g. high %v)",
			p.High, p.Low, p.Step, m, p.tidy(p.Low+math.Floor(m)*p.Step))
	}
	return nil
}

// nearWhole reports whether m, a count of steps, is a whole number within
// stepTolerance; beyond 10⁷ steps the rounding error of the division
// itself approaches that, so the tolerance grows with m.
func nearWhole(m float64) bool {
	return math.Abs(m-math.Round(m)) <= stepTolerance*math.Max(1, math.Abs(m)/1e7)
}

// gridSize is the number of values of a stepped parameter.
func (p *Param) gridSize() int {
	return int(math.Round((p.High-p.Low)/p.Step)) + 1
}

// gridIndex is the index of the grid value nearest v, within the grid.
func (p *Param) gridIndex(v float64) int {
	k := math.Round((v - p.Low) / p.Step)
	return int(math.Min(float64(p.gridSize()-1), math.Max(0, k)))
}

// GridValue is value k of a discrete numeric parameter: low + k·step for a
// stepped one, low + k for an int. k is clamped to the range.
func (p *Param) GridValue(k int) float64 {
	if !p.Stepped() {
		return math.Min(p.High, p.Low+float64(max(k, 0)))
	}
	k = min(max(k, 0), p.gridSize()-1)
	if k == p.gridSize()-1 {
		return p.High
	}
	return math.Min(p.High, p.tidy(p.Low+float64(k)*p.Step))
}

// GridIndex is the index of a discrete numeric parameter's value nearest v
// (the inverse of GridValue).
func (p *Param) GridIndex(v float64) int {
	if !p.Stepped() {
		return int(math.Round(math.Min(p.High, math.Max(p.Low, v)) - p.Low))
	}
	return p.gridIndex(v)
}

// tidy drops the binary noise of low + k·step when low and step are short
// decimals, so that a grid of step 0.1 holds 0.3 and not
// 0.30000000000000004: the values users, CSV files and reports see are the
// ones they wrote. Both are within stepTolerance of each other.
func (p *Param) tidy(v float64) float64 {
	if p.Type == Int {
		return math.Round(v)
	}
	d := max(decimals(p.Low), decimals(p.Step))
	if d < 0 || d > 15 {
		return v
	}
	t, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', d, 64), 64)
	if err != nil || math.Abs(t-v) > stepTolerance*p.Step {
		return v
	}
	return t
}

// decimals counts the digits after the point of x's shortest decimal form,
// or −1 when that form needs an exponent.
func decimals(x float64) int {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if strings.ContainsAny(s, "eE") {
		return -1
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// snap moves a value already checked to be on a stepped parameter's grid
// onto the grid value itself (0.30000000000000004 to 0.3), so that a
// condition on the parameter, a CSV cell and a decoded proposal all hold the
// same number. Other parameters' values are returned as they are.
func (p *Param) snap(v float64) float64 {
	if !p.Stepped() {
		return v
	}
	return p.GridValue(p.gridIndex(v))
}

// checkStep reports whether v lies on a stepped parameter's grid.
func (p *Param) checkStep(v float64) error {
	if !nearWhole((v - p.Low) / p.Step) {
		return fmt.Errorf("parameter %q: %v is not on its grid %v, %v, …, %v (step %v)",
			p.Name, v, p.Low, p.GridValue(1), p.High, p.Step)
	}
	return nil
}

// stepGrid lists g values of a stepped parameter evenly spread over its grid
// indices, or every grid value when there are at most g.
func (p *Param) stepGrid(g int) []float64 {
	n := p.gridSize()
	if n <= g {
		out := make([]float64, n)
		for k := range out {
			out[k] = p.GridValue(k)
		}
		return out
	}
	out := make([]float64, 0, g)
	last := -1
	for j := range g {
		k := n / 2
		if g > 1 {
			k = int(math.Round(float64(j) * float64(n-1) / float64(g-1)))
		}
		if k == last {
			continue
		}
		last = k
		out = append(out, p.GridValue(k))
	}
	return out
}
