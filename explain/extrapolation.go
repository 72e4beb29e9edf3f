package explain

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"xbo/explain/pdp"
	"xbo/gp"
	"xbo/space"
)

// Extrapolation: where an explanation rests on the model's prior.
//
// A partial dependence at a grid value is an average of the surrogate over
// the space. Where the trials determine that average, its posterior
// variance is a small fraction of its prior variance; where no trial is
// near, the fraction is near 1 and the curve is the model's extrapolation.
// The ratio
//
//	ρ(g) = Var_post(PD(g)) / Var_prior(PD(g))
//
// (eq. 4 of Moosbauer et al. 2021 over its prior counterpart, computed by the GP
// whose hyperparameters and variances the explanation uses, the uncertain mean
// level included) measures how much the value at g rests on extrapolation. How
// large is too large depends on how many trials there are and how smooth the
// model is, so ρ is read against designs that rest on it as little as uniform
// sampling does: extrapolationReplicates designs of as many uniformly random
// configurations as the model's variances are conditioned on, with the same
// hyperparameters. A grid value is flagged when ρ(g) exceeds all of theirs. For
// trials that are themselves a uniform sample the flag is a rank test: each grid
// value is flagged with probability 1/(extrapolationReplicates+1) = 4% when the
// hyperparameters do not depend on the trials. They are fitted to them, which
// raises the rate somewhat (docs/research/explanations.md measures it), so 24 designs
// keep the false alarms below the nominal 5%. Trials spread more evenly than
// random ones (a full factorial grid) are flagged less often still. An
// optimizer's concentrated trials leave the regions it did not visit to the
// prior, and those grid values are flagged.
//
// The same ratio of the curve of each parameter, averaged over a coarse
// grid, flags the importance indices that rest on extrapolation. A
// two-parameter PDP has none (its grid of 225 values would cost more than
// the PDP itself).
const (
	extrapolationReplicates = 24
	extrapolationPoints     = 50 // Monte Carlo points per grid value
	extrapolationSeed       = 23
	// A parameter's importance is judged on a coarser curve with fewer
	// Monte Carlo points: the rank test's false-alarm rate does not depend
	// on them (every design is judged on the same points), only its power,
	// and it runs for every parameter of every importance request.
	importanceExtrapolationGrid   = 6
	importanceExtrapolationPoints = 16
)

// Extrapolation says, per grid point of a curve, how much its value rests
// on the model's prior, against uniform designs of the same size.
type Extrapolation struct {
	// Ratio is ρ(g), the posterior variance of the curve's value at each
	// grid point as a fraction of its prior variance.
	Ratio []float64 `json:"ratio"`
	// Uniform is, per grid point, the largest ρ among the uniform designs.
	Uniform []float64 `json:"uniform_max"`
	// Beyond lists the grid points whose ρ exceeds Uniform: there the curve
	// rests on extrapolation more than with any uniform design.
	Beyond  []int  `json:"beyond,omitempty"`
	Reading string `json:"reading"`
}

// nullModels are the model's variance part conditioned on uniform designs
// of its size, once per fitted model.
func (m *fitted) nullModels(sp *space.Space) (*gp.GP, []*gp.GP, error) {
	var part *gp.GP
	switch g := m.model.(type) {
	case *gp.GP:
		part = g
	case *gp.Subset:
		_, part = g.Parts()
	default:
		return nil, nil, nil
	}
	m.altMu.Lock()
	defer m.altMu.Unlock()
	if m.nulls != nil {
		return part, m.nulls, nil
	}
	h, out := part.Hyper(), part.OutputScale()
	rng := rand.New(rand.NewPCG(extrapolationSeed, extrapolationSeed^0x94d049bb133111eb))
	zeros := make([]float64, part.Len())
	nulls := make([]*gp.GP, extrapolationReplicates)
	for r := range nulls {
		g, err := gp.Fit(sp.Sample(rng, part.Len()), zeros, gp.Options{Kernel: part.Kernel(), Levels: sp.Levels(), Fixed: &h,
			Output: &out, Workers: 1, UncertainLevel: true})
		if err != nil {
			return nil, nil, fmt.Errorf("explain: uniform design %d: %w", r+1, err)
		}
		nulls[r] = g
	}
	m.nulls = nulls
	return part, nulls, nil
}

// ratio is ρ of the average over points under g, given its prior part
// (the same for every model with g's hyperparameters).
func ratio(g *gp.GP, points [][]float64, prior float64) (float64, error) {
	v, err := g.AverageVarianceGivenPrior(points, prior)
	if err != nil {
		return 0, err
	}
	if !(prior > 0) {
		return 0, nil
	}
	return v / prior, nil
}

// ratios computes ρ at every grid point of ice (on its first points Monte
// Carlo points) under the model's variance part and under each uniform
// design's model: actual[g] and null[r][g]. part is nil for a model that is
// not a GP.
func ratios(ctx context.Context, m *fitted, sp *space.Space, ice *pdp.ICE, points int) (part *gp.GP, actual []float64, null [][]float64, err error) {
	part, nulls, err := m.nullModels(sp)
	if err != nil || part == nil {
		return nil, nil, nil, err
	}
	members := make([]int, min(points, ice.Len()))
	for i := range members {
		members[i] = i
	}
	G := ice.GridLen()
	actual = make([]float64, G)
	null = make([][]float64, len(nulls))
	for r := range null {
		null[r] = make([]float64, G)
	}
	for g := range G {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		pts := ice.PointsAt(g, members)
		prior, err := part.PriorAverage(pts)
		if err != nil {
			return nil, nil, nil, err
		}
		if actual[g], err = ratio(part, pts, prior); err != nil {
			return nil, nil, nil, err
		}
		for r, nm := range nulls {
			if null[r][g], err = ratio(nm, pts, prior); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return part, actual, null, nil
}

// curveExtrapolation is the extrapolation of every grid point of ice, or
// nil for a model that is not a GP.
func curveExtrapolation(ctx context.Context, m *fitted, sp *space.Space, ice *pdp.ICE, points int) (*Extrapolation, error) {
	part, actual, null, err := ratios(ctx, m, sp, ice, points)
	if err != nil || part == nil {
		return nil, err
	}
	G := len(actual)
	e := &Extrapolation{Ratio: actual, Uniform: make([]float64, G)}
	for g := range G {
		for r := range null {
			e.Uniform[g] = math.Max(e.Uniform[g], null[r][g])
		}
		if e.Ratio[g] > e.Uniform[g] {
			e.Beyond = append(e.Beyond, g)
		}
	}
	if len(e.Beyond) == 0 {
		e.Reading = fmt.Sprintf("At each of the %d grid points the trials determine the curve at least as well as one of %d designs of "+
			"as many uniformly random configurations would.", G, extrapolationReplicates)
	} else {
		e.Reading = fmt.Sprintf("At %d of the %d grid points the curve rests on the model's extrapolation more than with any of %d "+
			"designs of as many uniformly random configurations: no trial is near, so its value there is mostly the model's prior and "+
			"its band the model's own judgement (uniformly random trials are flagged at about 1 grid point in 20).",
			len(e.Beyond), G, extrapolationReplicates)
	}
	return e, nil
}

// importanceExtrapolation flags the parameters whose curve, averaged over
// a coarse grid, rests on extrapolation more than with any uniform design
// (its mean ρ above every design's mean ρ): their importance indices are
// the model's extrapolation too.
func importanceExtrapolation(t *task, m *fitted, sp *space.Space) ([]string, error) {
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	var flagged []string
	for j, p := range sp.Params {
		ice, err := pdp.NewICE(t.ctx, m.model, sp, []int{j}, pdp.Options{GridSize: importanceExtrapolationGrid,
			Samples: importanceExtrapolationPoints, Band: pdp.BandApprox, Seed: mcSeed, Workers: t.workers})
		if err != nil {
			return nil, err
		}
		part, actual, null, err := ratios(t.ctx, m, sp, ice, importanceExtrapolationPoints)
		if err != nil || part == nil {
			return nil, err
		}
		beyond := true
		for r := range null {
			beyond = beyond && mean(actual) > mean(null[r])
		}
		if beyond {
			flagged = append(flagged, p.Name)
		}
	}
	return flagged, nil
}
