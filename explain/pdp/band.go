package pdp

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"xbo/surrogate"
)

// The calibrated band's variance terms beside the posterior's: the spread
// across hyperparameter samples, the doubt between model classes, the
// cross-validated scale, the model's systematic error and the Monte Carlo
// error of the average.

// hyperposterior fills hyperMean from the model's hyperposterior samples,
// if it has them, and altMean from the alternative models, looking at ctx
// between grid points.
func (c *ICE) hyperposterior(ctx context.Context) error {
	if hs, ok := c.model.(surrogate.HyperposteriorSampler); ok {
		models, err := hs.HyperposteriorModels(HyperSamples, hyperSeed)
		if err != nil {
			return err
		}
		if c.hyperMean, err = c.firstCurves(ctx, models); err != nil {
			return err
		}
	}
	var err error
	c.altMean, err = c.firstCurves(ctx, c.opts.Alternatives)
	return err
}

// firstCurves evaluates the means of models on the first hyperCurves ICE
// curves: out[s][i][g] is model s's mean at curve i, grid point g.
func (c *ICE) firstCurves(ctx context.Context, models []surrogate.Model) ([][][]float64, error) {
	if len(models) == 0 {
		return nil, nil
	}
	n, G := min(len(c.Sample), hyperCurves), len(c.GridU)
	base := c.Sample[:n]
	var values [][]float64
	if c.gridOnlyMovesParams() {
		values = c.repairedGrid()
	}
	out := make([][][]float64, len(models))
	for s, m := range models {
		if m == nil || m.Dim() != c.Space.Dim() {
			return nil, fmt.Errorf("model %d has the wrong dimension", s)
		}
		curves := make([][]float64, n)
		for i := range curves {
			curves[i] = make([]float64, G)
		}
		shared, isShared := m.(surrogate.SharedPredictor)
		for g0 := 0; g0 < G; g0 += sharedGridChunk {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			g1 := min(G, g0+sharedGridChunk)
			if isShared && values != nil {
				mean := make([]float64, (g1-g0)*n)
				if err := shared.PredictShared(base, c.Params, values[g0:g1], mean, nil); err != nil {
					return nil, err
				}
				for g := g0; g < g1; g++ {
					for i := range n {
						curves[i][g] = mean[(g-g0)*n+i]
					}
				}
				continue
			}
			mean := make([]float64, n)
			for g := g0; g < g1; g++ {
				if err := surrogate.PredictMean(m, c.PointsAt(g, nil)[:n], mean); err != nil {
					return nil, err
				}
				for i := range n {
					curves[i][g] = mean[i]
				}
			}
		}
		out[s] = curves
	}
	return out, nil
}

// doubt is the largest squared distance at grid point g between the PD of
// an alternative model and the model's own, over the members among the
// curves the alternatives were evaluated at (all of those when fewer than
// 10 members are).
func (c *ICE) doubt(rows []int, g int) float64 {
	if len(c.altMean) == 0 {
		return 0
	}
	use := c.firstMembers(rows)
	worst := 0.0
	for _, alt := range c.altMean {
		d := 0.0
		for _, i := range use {
			d += alt[i][g] - c.Mean[i][g]
		}
		d /= float64(len(use))
		worst = math.Max(worst, d*d)
	}
	return worst
}

// firstMembers returns the members among the first hyperCurves curves, or
// all of those when fewer than 10 members are.
func (c *ICE) firstMembers(rows []int) []int {
	n := min(len(c.Sample), hyperCurves)
	use := make([]int, 0, len(rows))
	for _, i := range rows {
		if i < n {
			use = append(use, i)
		}
	}
	if len(use) < 10 {
		use = use[:0]
		for i := range n {
			use = append(use, i)
		}
	}
	return use
}

// hyperVariance is the variance across hyperposterior models of the PD
// estimate at grid point g over the members (those among the curves the
// models were evaluated at; all of those when fewer than 10 members are).
func (c *ICE) hyperVariance(rows []int, g int) float64 {
	S := len(c.hyperMean)
	if S < 2 {
		return 0
	}
	use := c.firstMembers(rows)
	pd := make([]float64, S)
	for s := range S {
		for _, i := range use {
			pd[s] += c.hyperMean[s][i][g]
		}
		pd[s] /= float64(len(use))
	}
	return stat.Variance(pd, nil)
}

// varianceScale is the model's cross-validated variance factor for averages,
// at least 1 (1 for a model that has none): the factor is a noisy estimate
// from the model's own data, and a band is only widened by it, never
// narrowed below the model's own posterior.
func (c *ICE) varianceScale() (float64, error) {
	vs, ok := c.model.(surrogate.VarianceScaler)
	if !ok {
		return 1, nil
	}
	s, err := varianceTerm("variance scale", vs.VarianceScale)
	if err != nil {
		return 0, err
	}
	return max(s, 1), nil
}

// discrepancy is the model's estimate of its systematic error variance along
// the PDP's parameters (0 for a model that has none).
func (c *ICE) discrepancy() (float64, error) {
	de, ok := c.model.(surrogate.DiscrepancyEstimator)
	if !ok {
		return 0, nil
	}
	return varianceTerm("discrepancy", func() (float64, error) { return de.Discrepancy(c.Params) })
}

// varianceTerm calls a model's estimate of a calibrated band's term and
// refuses a value that is not finite and non-negative.
func varianceTerm(what string, estimate func() (float64, error)) (float64, error) {
	v, err := estimate()
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%s %v", what, v)
	}
	return v, nil
}

// monteCarloVariance is the variance of the n-point average of the ICE
// curves at grid point g as an estimate of their integral over the
// reference measure: the sample variance of the curves' values divided by n
// (0 for a single curve, whose spread is unknown).
func monteCarloVariance(curves [][]float64, rows []int, g int, mean float64) float64 {
	n := len(rows)
	if n < 2 {
		return 0
	}
	ss := 0.0
	for _, i := range rows {
		d := curves[i][g] - mean
		ss += d * d
	}
	return ss / float64(n-1) / float64(n)
}
