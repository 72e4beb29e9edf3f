package explain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"xbo/metrics"
	"xbo/space"
)

// About is the header every explanation carries: what was explained, in
// which units, from how many trials, with which surrogate, and how far the
// evaluated configurations are from covering the space evenly. It depends
// only on the data and the request, so a cached explanation is still
// exactly right for any study whose usable trials are the same.
type About struct {
	Kind string `json:"kind"`
	// Objective names the objective explained, in a study with several
	// (each is explained with its own surrogate); empty for one.
	Objective string          `json:"objective,omitempty"`
	Direction space.Direction `json:"direction"`
	// Units says in words how to read the numbers.
	Units string `json:"units"`
	// Trials is the number of usable (complete, finite) trials explained; a
	// dashboard marks an explanation stale when its study has more.
	Trials int `json:"trials"`
	// Fingerprint identifies the data (the space and the usable trials).
	Fingerprint string `json:"fingerprint"`
	// Budget is set when the values explained are those at a budget
	// (Trials then counts the trials that have a value there).
	Budget    *BudgetInfo    `json:"budget,omitempty"`
	Surrogate *SurrogateInfo `json:"surrogate,omitempty"`
	// ModelCheck is how well that surrogate predicts the trials it was
	// fitted to, each left out in turn, and what the explanation does about
	// it (check.go).
	ModelCheck *ModelCheck `json:"model_check,omitempty"`
	Bias       *Bias       `json:"sampling_bias,omitempty"`
	// Seconds is how long the computation took. It is not part of the JSON,
	// so an explanation is the same document on every surface and every
	// time; the service sends it in a Server-Timing header.
	Seconds float64 `json:"-"`
}

// describe records the surrogate an explanation rests on and its check.
func (a *About) describe(m *fitted) {
	a.Surrogate, a.ModelCheck = &m.info, m.check
}

func (p *prepared) about(kind string) About {
	return About{Kind: kind, Objective: p.h.Objective, Direction: p.h.Direction(), Units: unitsText(p.h.Direction()),
		Trials: len(p.data.Y), Fingerprint: p.fingerprint, Budget: p.budget}
}

// Bias measures how far the evaluated configurations are from a uniform
// sample of the space, the reference measure of PDPs and importance: the
// maximum mean discrepancy (Gretton et al. 2012, eq. 5; Gaussian kernel on
// the unit-cube encoding, bandwidth metrics.UniformBandwidth) against a
// uniform reference sample, read against the MMDs of uniform samples of the
// same size (its null distribution).
type Bias struct {
	MMD float64 `json:"mmd"`
	// Ratio is MMD divided by the median null MMD: about 1 for data spread
	// like a uniform sample, large when the optimizer concentrated.
	Ratio float64 `json:"ratio"`
	// Null95Ratio is the null distribution's 95% quantile as a ratio: data
	// with Ratio below it are not distinguishable from uniform sampling.
	Null95Ratio float64 `json:"null95_ratio"`
	// Level is "none", "mild" (Ratio below 3) or "strong".
	Level string `json:"level"`
	// Points is the number of evaluated configurations measured (a random
	// subset beyond MaxBiasPoints), Reference the uniform sample's size.
	Points    int `json:"points"`
	Reference int `json:"reference"`
	// Reading says what the level means for the explanations; Warning is set
	// for strong bias and points to regional PDPs.
	Reading string `json:"reading"`
	Warning string `json:"warning,omitempty"`
}

// Bias levels.
const (
	BiasNone   = "none"
	BiasMild   = "mild"
	BiasStrong = "strong"
)

// Sizes of the sampling-bias measure: at most MaxBiasPoints evaluated
// configurations (a fixed-seed subset beyond), a uniform reference of twice
// that (at least 1000), and biasReplicates null draws, cached per space and
// size because they do not depend on the data.
const (
	MaxBiasPoints  = 500
	biasReplicates = 30
	biasSeed       = 1
)

// bias computes the sampling-bias measure of the prepared data (its cost is
// bounded by MaxBiasPoints, whatever the study's size).
func (t *task) bias(p *prepared) (*Bias, error) {
	sp := p.h.Space
	x := p.data.X
	// Separate streams, so the reference does not depend on whether the
	// data were subsampled (the null distribution is cached by size).
	rng := rand.New(rand.NewPCG(biasSeed, biasSeed^0x9e3779b97f4a7c15))
	refRNG := rand.New(rand.NewPCG(biasSeed+2, biasSeed^0x3c6ef372fe94f82b))
	if len(x) > MaxBiasPoints {
		idx := rng.Perm(len(x))[:MaxBiasPoints]
		slices.Sort(idx)
		sub := make([][]float64, len(idx))
		for k, i := range idx {
			sub[k] = x[i]
		}
		x = sub
	}
	n := len(x)
	nRef := max(1000, 2*n)
	ref, err := metrics.NewMMDReference(sp.Sample(refRNG, nRef), metrics.UniformBandwidth(sp.Dim()))
	if err != nil {
		return nil, fmt.Errorf("explain: sampling bias: %w", err)
	}
	mmd, err := ref.Distance(x)
	if err != nil {
		return nil, fmt.Errorf("explain: sampling bias: %w", err)
	}
	null, err := t.biasNull(sp, ref, n, nRef)
	if err != nil {
		return nil, err
	}
	median, q95 := quantileSorted(null, 0.5), quantileSorted(null, 0.95)
	b := &Bias{MMD: mmd, Points: n, Reference: nRef}
	if median > 0 {
		b.Ratio, b.Null95Ratio = mmd/median, q95/median
	}
	switch {
	case mmd <= q95 || median <= 0:
		b.Level = BiasNone
		b.Reading = fmt.Sprintf("The %d evaluated configurations are spread like a uniform sample of the same size "+
			"(MMD %.3g, within the 95%% range of uniform samples). Explanations rest on data that cover the space evenly.", n, mmd)
	case b.Ratio < 3:
		b.Level = BiasMild
		b.Reading = fmt.Sprintf("The evaluated configurations are mildly concentrated (MMD %.2g× that of a uniform sample "+
			"of %d points). Curves are best supported where the evaluated values are dense.", b.Ratio, n)
	default:
		b.Level = BiasStrong
		b.Reading = fmt.Sprintf("The evaluated configurations are strongly concentrated (MMD %.2g× that of a uniform sample "+
			"of %d points), as expected of an optimizer that exploits.", b.Ratio, n)
		b.Warning = "Sampling bias is high: away from the evaluated region PDPs and importances are the surrogate's " +
			"extrapolation. Trust the bands there, and prefer the regional PDP of the best region (explain regional)."
	}
	return b, nil
}

// biasNull returns the sorted null MMDs of n uniform points against the
// reference, computed once per (space, reference, n).
func (t *task) biasNull(sp *space.Space, ref *metrics.MMDReference, n, nRef int) ([]float64, error) {
	e := t.engine
	spaceJSON, err := sp.MarshalJSON()
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", spaceJSON, n, nRef)
	e.mu.Lock()
	v, ok := e.biasNull.get(key)
	e.mu.Unlock()
	if ok {
		return v.([]float64), nil
	}
	rng := rand.New(rand.NewPCG(biasSeed+1, biasSeed^0x7f4a7c159e3779b9))
	null := make([]float64, biasReplicates)
	for r := range null {
		if err := t.ctx.Err(); err != nil {
			return nil, err
		}
		if null[r], err = ref.Distance(sp.Sample(rng, n)); err != nil {
			return nil, fmt.Errorf("explain: sampling bias: %w", err)
		}
	}
	sort.Float64s(null)
	e.mu.Lock()
	e.biasNull.put(key, null, 1)
	e.mu.Unlock()
	return null, nil
}

func quantileSorted(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(v)-1)
	return v[lo] + (pos-float64(lo))*(v[hi]-v[lo])
}
