package opt

// BOBAX strategies (Moosbauer et al. 2022, "Improving accuracy of
// interpretability measures in hyperparameter optimization via Bayesian
// algorithm execution", section 4.2 and appendix B.2) plug into the
// optimizer through Config.Acquire: an acq.Policy picks, at each model-based
// proposal, EI, EIG_PDP, a random point or their product.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"xbo/acq"
	"xbo/space"
)

// BOBAXConfig configures a BOBAX-family strategy for an optimizer.
type BOBAXConfig struct {
	// Strategy: "bax", "bobax", "bobax-prob", "eibax", "bo-rs", "a-bobax"
	// (see acq.NewPolicy).
	Strategy string
	// Params names the hyperparameters whose PDPs should be accurate
	// (default: all).
	Params []string
	// GridSize G [20] and Samples n [1000] of the PD execution path.
	GridSize, Samples int
	K                 int     // interleaving period [2]
	Pi                float64 // bobax-prob probability [0.5]
	Beta              float64 // eibax β [100]
	// Tolerance is a-BOBAX's mean band half-width (objective units).
	Tolerance float64
	Estimator acq.Estimator
	Combine   acq.Combination
	// Seed draws the Monte Carlo sample of the path.
	Seed uint64
}

// NewBOBAXPolicy builds the policy (with its PD execution path) for space s.
// The policy is stateful (a-BOBAX remembers its switch): use one per
// optimizer.
func NewBOBAXPolicy(s *space.Space, c BOBAXConfig) (acq.Policy, error) {
	p, err := newBOBAXPolicy(s, c)
	if err != nil {
		return nil, fmt.Errorf("opt: %w", err)
	}
	return p, nil
}

func newBOBAXPolicy(s *space.Space, c BOBAXConfig) (acq.Policy, error) {
	if s == nil {
		return nil, errors.New("bobax: nil space")
	}
	var params []int
	for _, name := range c.Params {
		i, ok := s.Index(name)
		if !ok {
			return nil, fmt.Errorf("bobax: no hyperparameter %q (have %v)", name, s.Names())
		}
		params = append(params, i)
	}
	grid, n := c.GridSize, c.Samples
	if grid == 0 {
		grid = acq.DefaultPathGrid
	}
	if n == 0 {
		n = acq.DefaultPathSamples
	}
	seed := c.Seed ^ 0x626f626178
	path, err := acq.NewPDPath(s, params, grid, n, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
	if err != nil {
		return nil, fmt.Errorf("bobax: %w", err)
	}
	p, err := acq.NewPolicy(acq.StrategyConfig{
		Strategy: c.Strategy, K: c.K, Pi: c.Pi, Beta: c.Beta, Tolerance: c.Tolerance,
		EIG: acq.EIGConfig{Path: path, Estimator: c.Estimator, Combine: c.Combine},
	})
	if err != nil {
		return nil, fmt.Errorf("bobax: %w", err)
	}
	return p, nil
}

// PolicyAcquire adapts a policy to Config.Acquire. T (for interleaving and
// EIBAX's exponent) is the number of completed trials the model was fitted
// on. The model of an Iteration is also conditioned on pending trials, whose
// locations an Iteration does not carry; with pending trials EIG_PDP then
// uses the BAX estimator, which needs only the model (see acq.EIGConfig.New).
func PolicyAcquire(p acq.Policy) func(Iteration) (acq.Acquisition, error) {
	return func(it Iteration) (acq.Acquisition, error) {
		if p == nil {
			return nil, errors.New("opt: nil acquisition policy")
		}
		return p.Choose(acq.Step{
			Evaluations: len(it.X),
			Model:       it.Model,
			Inputs:      slices.Clone(it.X),
			Best:        it.Best,
			Rng:         it.Rng,
		})
	}
}
