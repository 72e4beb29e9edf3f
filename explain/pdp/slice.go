package pdp

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"xbo/space"
	"xbo/surrogate"
)

// SliceKind marks a Slice in JSON so that no consumer mistakes it for a PDP.
const SliceKind = "slice"

// Slice is the posterior of the model along one parameter with every other
// parameter held at one configuration (usually the best one observed). It is
// NOT a partial dependence: it shows the model through a single point, where
// a PDP averages over the other parameters. Users of other tools often ask
// for plots centred on the optimum; this is that plot, labelled for what it is.
type Slice struct {
	Kind    string         `json:"kind"` // always "slice"
	Note    string         `json:"note"`
	Param   string         `json:"param"`
	Through map[string]any `json:"through"` // the fixed configuration
	Grid    []float64      `json:"grid"`
	Labels  []any          `json:"labels,omitempty"`
	Mean    []float64      `json:"mean"`
	SD      []float64      `json:"sd"`
	Lower   []float64      `json:"lower"`
	Upper   []float64      `json:"upper"`
	Level   float64        `json:"level"`
}

// SliceThrough computes the slice of model along param through the
// configuration point (natural values, as in a trials table). Grid size and
// α default as for a PDP; the band is the pointwise posterior band.
func SliceThrough(model surrogate.Model, sp *space.Space, param string, point []float64, gridSize int, alpha float64) (*Slice, error) {
	if model == nil || sp == nil {
		return nil, errors.New("pdp: slice: model and space are required")
	}
	opts, err := Options{GridSize: gridSize, Alpha: alpha}.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("pdp: slice: %w", err)
	}
	if model.Dim() != sp.Dim() {
		return nil, fmt.Errorf("pdp: slice: model has %d dimensions, space has %d parameters", model.Dim(), sp.Dim())
	}
	p, ok := sp.Index(param)
	if !ok {
		return nil, fmt.Errorf("pdp: slice: unknown parameter %q", param)
	}
	base, err := sp.Encode(point)
	if err != nil {
		return nil, fmt.Errorf("pdp: slice: configuration: %w", err)
	}
	if math.IsNaN(point[p]) {
		return nil, fmt.Errorf("pdp: slice: parameter %q is inactive in this configuration", param)
	}
	grid, err := sp.Grid(p, opts.GridSize)
	if err != nil {
		return nil, fmt.Errorf("pdp: slice: %w", err)
	}
	pts := make([][]float64, len(grid))
	for g, v := range grid {
		u := slices.Clone(base)
		u[p] = sp.Params[p].ToUnit(v)
		sp.Repair(u)
		pts[g] = u
	}
	s := &Slice{
		Kind:    SliceKind,
		Note:    fmt.Sprintf("slice through one configuration with the other parameters fixed; not a partial dependence plot; band at level %g", 1-opts.Alpha),
		Param:   param,
		Through: sp.ToMap(point),
		Grid:    grid,
		Labels:  labels(sp, p),
		Mean:    make([]float64, len(grid)),
		SD:      make([]float64, len(grid)),
		Lower:   make([]float64, len(grid)),
		Upper:   make([]float64, len(grid)),
		Level:   1 - opts.Alpha,
	}
	variance := make([]float64, len(grid))
	if err := model.Predict(pts, s.Mean, variance); err != nil {
		return nil, fmt.Errorf("pdp: slice: predict: %w", err)
	}
	q := Quantile(opts.Alpha)
	for g := range grid {
		s.SD[g] = math.Sqrt(math.Max(variance[g], 0))
		s.Lower[g] = s.Mean[g] - q*s.SD[g]
		s.Upper[g] = s.Mean[g] + q*s.SD[g]
	}
	return s, nil
}
