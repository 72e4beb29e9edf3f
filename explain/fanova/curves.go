package fanova

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Curve is the marginal â_j of one hyperparameter on a grid of unit-cube
// values, for plots: the mean over trees and the standard deviation across
// trees at each point.
type Curve struct {
	Param string    `json:"param"`
	U     []float64 `json:"u"`
	Mean  []float64 `json:"mean"`
	Std   []float64 `json:"std"`
	// Inactive is the marginal with the parameter switched off; present only
	// for dimensions with a positive inactive mass.
	Inactive *Point `json:"inactive,omitempty"`
}

// Point is a single marginal value with its across-tree spread.
type Point struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

// Surface is the pairwise marginal â_jk on a grid, Mean[a][b] at (UA[a], UB[b]).
type Surface struct {
	ParamA string      `json:"param_a"`
	ParamB string      `json:"param_b"`
	UA     []float64   `json:"u_a"`
	UB     []float64   `json:"u_b"`
	Mean   [][]float64 `json:"mean"`
	Std    [][]float64 `json:"std"`
}

// Grid is the default plotting grid of a dimension: g equidistant points on
// [0,1] for a numeric dimension (g ≥ 2), every level's centre (k+0.5)/K for a
// categorical one.
func Grid(levels, g int) ([]float64, error) {
	if levels > 0 {
		out := make([]float64, levels)
		for k := range out {
			out[k] = (float64(k) + 0.5) / float64(levels)
		}
		return out, nil
	}
	if g < 2 {
		return nil, fmt.Errorf("fanova: grid: %d points, want at least 2", g)
	}
	out := make([]float64, g)
	for i := range out {
		out[i] = float64(i) / float64(g-1)
	}
	return out, nil
}

func (e *Explainer) checkGrid(j int, grid []float64) error {
	if j < 0 || j >= len(e.ms) {
		return fmt.Errorf("dimension %d out of range [0,%d)", j, len(e.ms))
	}
	if len(grid) == 0 {
		return errors.New("empty grid")
	}
	for _, u := range grid {
		if !(u >= 0 && u <= 1) && u != -1 {
			return fmt.Errorf("dimension %d: grid value %v is neither in [0,1] nor Inactive (−1)", j, u)
		}
	}
	return nil
}

// Curve computes the marginal of dimension j on grid (unit-cube values; nil
// means Grid(levels, 20)), exactly per tree from its atom table.
func (e *Explainer) Curve(name string, j int, grid []float64) (*Curve, error) {
	if grid == nil && j >= 0 && j < len(e.ms) {
		grid, _ = Grid(e.ms[j].levels, 20)
	}
	if err := e.checkGrid(j, grid); err != nil {
		return nil, fmt.Errorf("fanova: curve: %w", err)
	}
	pts := append([]float64(nil), grid...)
	withInactive := e.ms[j].inactive > 0
	if withInactive {
		pts = append(pts, -1)
	}
	vals := make([][]float64, len(e.trees)) // [tree][point]
	_ = e.parallel(len(e.trees), func(t int, s *scratch) error {
		p := e.trees[t]
		s.a = grow(s.a, len(p.dims[j].mass))
		p.mainTable(j, s.a, true)
		v := make([]float64, len(pts))
		for i, u := range pts {
			v[i] = s.a[p.dims[j].index(u, e.ms[j].levels)]
		}
		vals[t] = v
		return nil
	})
	c := &Curve{Param: name, U: append([]float64(nil), grid...), Mean: make([]float64, len(grid)), Std: make([]float64, len(grid))}
	col := make([]float64, len(e.trees))
	for i := range pts {
		for t := range vals {
			col[t] = vals[t][i]
		}
		m, s := meanStd(col)
		if i < len(grid) {
			c.Mean[i], c.Std[i] = m, s
		} else {
			c.Inactive = &Point{Mean: m, Std: s}
		}
	}
	return c, nil
}

// Surface computes the pairwise marginal of dimensions j and k on the grids
// (nil means the default Grid with 20 points), exactly per tree.
func (e *Explainer) Surface(nameA, nameB string, j, k int, gridA, gridB []float64) (*Surface, error) {
	if j == k {
		return nil, fmt.Errorf("fanova: surface: both dimensions are %d", j)
	}
	if gridA == nil && j >= 0 && j < len(e.ms) {
		gridA, _ = Grid(e.ms[j].levels, 20)
	}
	if gridB == nil && k >= 0 && k < len(e.ms) {
		gridB, _ = Grid(e.ms[k].levels, 20)
	}
	if err := e.checkGrid(j, gridA); err != nil {
		return nil, fmt.Errorf("fanova: surface: %w", err)
	}
	if err := e.checkGrid(k, gridB); err != nil {
		return nil, fmt.Errorf("fanova: surface: %w", err)
	}
	na, nb := len(gridA), len(gridB)
	vals := make([][]float64, len(e.trees))
	_ = e.parallel(len(e.trees), func(t int, s *scratch) error {
		p := e.trees[t]
		mj, mk := p.dims[j].mass, p.dims[k].mass
		s.a = grow(s.a, (len(mj)+1)*(len(mk)+1))
		stride := p.pairTable(j, k, s.a, true)
		v := make([]float64, na*nb)
		for a, ua := range gridA {
			ia := p.dims[j].index(ua, e.ms[j].levels)
			for b, ub := range gridB {
				v[a*nb+b] = s.a[ia*stride+p.dims[k].index(ub, e.ms[k].levels)]
			}
		}
		vals[t] = v
		return nil
	})
	sf := &Surface{ParamA: nameA, ParamB: nameB, UA: append([]float64(nil), gridA...), UB: append([]float64(nil), gridB...),
		Mean: make([][]float64, na), Std: make([][]float64, na)}
	col := make([]float64, len(e.trees))
	for a := range na {
		sf.Mean[a] = make([]float64, nb)
		sf.Std[a] = make([]float64, nb)
		for b := range nb {
			for t := range vals {
				col[t] = vals[t][a*nb+b]
			}
			sf.Mean[a][b], sf.Std[a][b] = meanStd(col)
		}
	}
	return sf, nil
}

// Quantile is the type-7 (linear interpolation) q-quantile of y.
func Quantile(y []float64, q float64) (float64, error) {
	if len(y) == 0 {
		return 0, errors.New("fanova: quantile: no values")
	}
	if !(q >= 0 && q <= 1) {
		return 0, fmt.Errorf("fanova: quantile: q = %v not in [0,1]", q)
	}
	s := append([]float64(nil), y...)
	for i, v := range s {
		if math.IsNaN(v) {
			return 0, fmt.Errorf("fanova: quantile: value %d is NaN", i)
		}
	}
	sort.Float64s(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1], nil
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo]), nil
}

// Cap returns targets capped at limit so that only the good region varies
// (Hutter et al. 2014, section 3.3): min(y, limit) when minimizing, max(y,
// limit) when maximizing.
func Cap(y []float64, limit float64, maximize bool) ([]float64, error) {
	if math.IsNaN(limit) || math.IsInf(limit, 0) {
		return nil, fmt.Errorf("fanova: cap: limit %v is not finite", limit)
	}
	out := make([]float64, len(y))
	for i, v := range y {
		if maximize {
			out[i] = math.Max(v, limit)
		} else {
			out[i] = math.Min(v, limit)
		}
	}
	return out, nil
}

// CapQuantile caps targets at the value that the best fraction q of them
// beat or equal (q = 0.25: "the top 25%"): the q-quantile when minimizing,
// the (1−q)-quantile when maximizing. It returns the capped targets and the
// limit.
func CapQuantile(y []float64, q float64, maximize bool) ([]float64, float64, error) {
	if !(q > 0 && q <= 1) {
		return nil, 0, fmt.Errorf("fanova: cap quantile: q = %v not in (0,1]", q)
	}
	if maximize {
		q = 1 - q
	}
	limit, err := Quantile(y, q)
	if err != nil {
		return nil, 0, fmt.Errorf("fanova: cap quantile: %w", err)
	}
	out, err := Cap(y, limit, maximize)
	if err != nil {
		return nil, 0, fmt.Errorf("fanova: cap quantile: %w", err)
	}
	return out, limit, nil
}
