package explain

import (
	"fmt"
	"math"
	"slices"

	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/history"
	"xbo/space"
)

// Two model classes: the calibrated PDP band of a GP is the union of its
// own calibrated band and a random forest's.
//
// A stationary GP and a forest of axis-aligned trees are wrong in
// different ways: the GP is smooth where the objective has steps, plateaus
// or a cliff and reverts to its mean far from the trials; the forest is a
// step function that extends the nearest trials' values. Where they agree,
// the data decide; where they disagree, neither model's posterior knows
// which is right — doubt about the model class itself. The calibrated band
// therefore covers what either allows: at every grid point it runs from the
// lower of the two calibrated bands' lower ends to the higher of their
// upper ends,
//
//	[min(φ_gp − q·s_gp, φ_forest − q·s_forest), max(φ_gp + q·s_gp, φ_forest + q·s_forest)],
//
// around the GP's curve, which stays the estimate (the smaller error of the
// two in docs/research/calibration.md). No weight between the
// two is fitted: how well each predicts the trials held out (a stacking
// weight, Yao et al. 2018) says little about its error on an average over
// the whole space, and a band weighted by it covered less (docs/calibration
// .md). The forest sees every trial, those the GP leaves out as failed or
// diverged runs included: whether an extreme value is a failure or the
// objective itself (a learning rate at which training really diverges) is
// a judgement the trials cannot settle, and a forest's average carries a
// trial only through the leaves that hold it, so the band reaches what
// that region contributes if it is real while the GP's robust curve stays
// the estimate. Both models see the same Monte Carlo sample, so their
// curves, and the regions of a regional PDP, match point for point. The
// result keeps the forest's curve and band (ForestCurve); the band's sd is
// half its width over the quantile.

// ForestCurve is the forest's curve and band that a calibrated band of a GP
// also covers.
type ForestCurve struct {
	Mean   []float64      `json:"mean"`
	Lower  []float64      `json:"lower"`
	Upper  []float64      `json:"upper"`
	Forest *SurrogateInfo `json:"surrogate"`
}

// forestFor returns the forest a calibrated band of the GP surrogate spec
// also covers, or nil for another band or a forest surrogate.
func (t *task) forestFor(p *prepared, spec Surrogate, band string) (*fitted, error) {
	if band != BandCalibrated || spec.Kind != SurrogateGP {
		return nil, nil
	}
	fspec := Surrogate{Kind: SurrogateForest, Seed: spec.Seed, Outliers: OutliersKeep}
	if err := fspec.normalize(); err != nil {
		return nil, err
	}
	return t.unchecked(p, fspec)
}

// hullResult returns the GP's result with its band widened to the union
// with the forest's (same grid and Monte Carlo sample), and the forest's
// curve.
func hullResult(gr, fr *pdp.Result, forest *fitted) (*pdp.Result, *ForestCurve, error) {
	if len(gr.Mean) != len(fr.Mean) {
		return nil, nil, fmt.Errorf("explain: forest band: %d and %d grid points", len(gr.Mean), len(fr.Mean))
	}
	q := pdp.Quantile(1 - gr.Level)
	out := *gr
	G := len(gr.Mean)
	out.SD, out.Lower, out.Upper = make([]float64, G), make([]float64, G), make([]float64, G)
	for g := range G {
		out.Lower[g] = math.Min(gr.Lower[g], fr.Lower[g])
		out.Upper[g] = math.Max(gr.Upper[g], fr.Upper[g])
		out.SD[g] = (out.Upper[g] - out.Lower[g]) / (2 * q)
	}
	return &out, &ForestCurve{Mean: fr.Mean, Lower: fr.Lower, Upper: fr.Upper, Forest: &forest.info}, nil
}

// forestICE evaluates the forest on ice's grid and Monte Carlo sample.
func forestICE(t *task, sp *space.Space, ice *pdp.ICE, forest *fitted, opts pdp.Options) (*pdp.ICE, error) {
	fopts := opts
	fopts.Background, fopts.Alternatives, fopts.MinVarianceScale, fopts.KeepICE = ice.Background, nil, 0, false
	return pdp.NewICE(t.ctx, forest.model, sp, ice.Params, fopts)
}

// hullPDP widens the GP's curve gr (of ice, all members) to the forest's
// band.
func hullPDP(t *task, sp *space.Space, ice *pdp.ICE, gr *pdp.Result, forest *fitted, opts pdp.Options) (*pdp.Result, *ForestCurve, error) {
	fice, err := forestICE(t, sp, ice, forest, opts)
	if err != nil {
		return nil, nil, err
	}
	fr, err := fice.PDP(t.ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	return hullResult(gr, fr, forest)
}

// hullRegional widens the global and every leaf's band of a regional
// result to the forest's over the same Monte Carlo points.
func hullRegional(t *task, sp *space.Space, ice *pdp.ICE, res *regional.Result, forest *fitted, opts pdp.Options) (*ForestCurve, error) {
	fice, err := forestICE(t, sp, ice, forest, opts)
	if err != nil {
		return nil, err
	}
	fr, err := fice.PDP(t.ctx, nil)
	if err != nil {
		return nil, err
	}
	global, curve, err := hullResult(res.Global, fr, forest)
	if err != nil {
		return nil, err
	}
	res.Global = global
	for k := range res.Leaves {
		l := &res.Leaves[k]
		lf, err := fice.PDP(t.ctx, l.Members())
		if err != nil {
			return nil, err
		}
		if l.PDP, _, err = hullResult(l.PDP, lf, forest); err != nil {
			return nil, err
		}
	}
	return curve, nil
}

// holdPlateaus widens a one-parameter calibrated band, at every grid point
// whose nearest trials (at least 3, by the parameter's unit-cube value,
// the parameter active) all have the same value, to include that value.
// Identical values at configurations that differ in everything else are a
// saturated objective — chance-level error, a clipped loss — and the
// partial dependence there, an average over the other parameters, is that
// value wherever the saturation holds: no model may exclude what the
// trials show this plainly (a GP overshoots at the step next to such a
// plateau). It returns the grid points widened.
func holdPlateaus(r *pdp.Result, ice *pdp.ICE, d *history.Data) []int {
	if len(ice.Params) != 1 || r.Band != pdp.BandCalibrated {
		return nil
	}
	j := ice.Params[0]
	groups := map[int][]float64{}
	for i, row := range d.X {
		u := row[j]
		if u < 0 {
			continue // inactive
		}
		best, bd := 0, math.Inf(1)
		for g, gu := range ice.GridU {
			if dd := math.Abs(gu[0] - u); dd < bd {
				best, bd = g, dd
			}
		}
		groups[best] = append(groups[best], d.Y[i])
	}
	q := pdp.Quantile(1 - r.Level)
	var widened []int
	for g := range r.Mean {
		vals := groups[g]
		if len(vals) < 3 || slices.ContainsFunc(vals, func(v float64) bool { return v != vals[0] }) {
			continue
		}
		v := vals[0]
		if v >= r.Lower[g] && v <= r.Upper[g] {
			continue
		}
		r.Lower[g], r.Upper[g] = math.Min(r.Lower[g], v), math.Max(r.Upper[g], v)
		r.SD[g] = (r.Upper[g] - r.Lower[g]) / (2 * q)
		widened = append(widened, g)
	}
	return widened
}
