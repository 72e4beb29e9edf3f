package opt

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"xbo/acq"
	"xbo/forest"
	"xbo/gp"
	"xbo/space"
	"xbo/surrogate"
	"xbo/warp"
)

// The one place that maps the names a study's settings use to the
// optimizer's components, the way SMAC3's facades wire an initial design, a
// surrogate, a pending-trial policy, an acquisition and its maximizer: a
// setting is looked up here, an unknown name is refused with the list of
// known ones, and the rest of the package calls the components it was given
// instead of comparing names. The initial designs' names are package
// design's (design.ParseKind).

// strategyComponent builds a strategy's acquisition policy; a nil builder
// means a plain acquisition (EI, LCB, PI, PVar) made per proposal by
// Optimizer.acquisition, or random search.
type strategyComponent func(s *space.Space, cfg *Config) (acq.Policy, error)

var strategyComponents = map[string]strategyComponent{
	"ei": nil, "lcb": nil, "pi": nil, "pvar": nil, AcqRandom: nil,
	"bax": bobaxStrategy, "bobax": bobaxStrategy, "bobax-prob": bobaxStrategy, "eibax": bobaxStrategy,
	"bo-rs": bobaxStrategy, "a-bobax": bobaxStrategy,
}

// bobaxStrategy builds the BOBAX family's policy (Moosbauer et al. 2022); its
// default kernel is the squared exponential of the paper's experiments.
func bobaxStrategy(s *space.Space, cfg *Config) (acq.Policy, error) {
	if cfg.Acquire != nil {
		return nil, fmt.Errorf("strategy %q and a custom Acquire cannot be combined", cfg.Strategy)
	}
	if cfg.Kernel == "" {
		cfg.Kernel = "se"
	}
	bc := cfg.BOBAX
	bc.Strategy = cfg.Strategy
	if bc.Seed == 0 {
		bc.Seed = cfg.Seed
	}
	p, err := newBOBAXPolicy(s, bc)
	if err != nil {
		return nil, err
	}
	cfg.Acquire = PolicyAcquire(p)
	return p, nil
}

// surrogateComponent fits the proposal model and rebuilds the one a past
// proposal used.
type surrogateComponent interface {
	// fit builds the surrogate on (x, y); see Optimizer.fit for warm.
	fit(o *Optimizer, x [][]float64, y []float64, warm *warmStart) (surrogate.Model, *gp.Hyper, error)
	// rebuild refits the model a proposal recorded hyperparameters for
	// (nil when it recorded none).
	rebuild(o *Optimizer, x [][]float64, y []float64, hyper *gp.Hyper) (surrogate.Model, error)
	// condition returns model, fitted on (x, y), given the values lies at
	// the points px as well (pending trials' lies, failed trials' worst).
	condition(o *Optimizer, model surrogate.Model, x [][]float64, y []float64, px [][]float64, lies []float64) (surrogate.Model, error)
}

var surrogateComponents = map[string]surrogateComponent{
	"gp":     gpSurrogate{},
	"forest": forestSurrogate{},
}

type gpSurrogate struct{}

func (gpSurrogate) fit(o *Optimizer, x [][]float64, y []float64, warm *warmStart) (surrogate.Model, *gp.Hyper, error) {
	return o.fitWarmGP(x, y, warm)
}

func (gpSurrogate) rebuild(o *Optimizer, x [][]float64, y []float64, hyper *gp.Hyper) (surrogate.Model, error) {
	if hyper == nil {
		m, _, err := o.fitWarmGP(x, y, nil)
		return m, err
	}
	m, _, err := o.fitGP(x, y, gp.Options{Kernel: o.kernel, Levels: o.levels, Fixed: hyper, Workers: o.cfg.Workers})
	return m, err
}

// condition updates the GP (or the configuration × budget GP read at a
// budget) in O(n²k) with its hyperparameters kept.
func (gpSurrogate) condition(_ *Optimizer, model surrogate.Model, _ [][]float64, _ []float64, px [][]float64, lies []float64) (surrogate.Model, error) {
	c, ok := model.(surrogate.Conditioner)
	if !ok {
		return nil, fmt.Errorf("a %T cannot be conditioned on", model)
	}
	return c.ConditionOn(px, lies)
}

type forestSurrogate struct{}

// condition refits the forest on the augmented data: a forest has no cheap
// update.
func (forestSurrogate) condition(o *Optimizer, _ surrogate.Model, x [][]float64, y []float64, px [][]float64, lies []float64) (surrogate.Model, error) {
	return forest.Fit(append(slices.Clone(x), px...), append(slices.Clone(y), lies...), o.forestOptions(len(x)))
}

func (forestSurrogate) fit(o *Optimizer, x [][]float64, y []float64, _ *warmStart) (surrogate.Model, *gp.Hyper, error) {
	f, err := forest.Fit(x, y, o.forestOptions(len(x)))
	if err != nil {
		return nil, nil, err
	}
	return f, nil, nil
}

func (s forestSurrogate) rebuild(o *Optimizer, x [][]float64, y []float64, _ *gp.Hyper) (surrogate.Model, error) {
	m, _, err := s.fit(o, x, y, nil)
	return m, err
}

// liarComponent gives the values pending trials are conditioned on (failed
// and pruned ones always get the worst observed value): a constant liar of
// Ginsbourger et al. 2010 or the kriging believer.
type liarComponent func(model surrogate.Model, pending [][]float64, y []float64, best float64) ([]float64, error)

var liarComponents = map[string]liarComponent{
	"believer": func(model surrogate.Model, pending [][]float64, _ []float64, _ float64) ([]float64, error) {
		mean, variance := make([]float64, len(pending)), make([]float64, len(pending))
		if err := model.Predict(pending, mean, variance); err != nil {
			return nil, fmt.Errorf("kriging believer: %w", err)
		}
		return mean, nil
	},
	"best":  constantLiar(func(_ []float64, best float64) float64 { return best }),
	"worst": constantLiar(func(y []float64, _ float64) float64 { return slices.Max(y) }),
	"mean": constantLiar(func(y []float64, _ float64) float64 {
		s := 0.0
		for _, v := range y {
			s += v
		}
		return s / float64(len(y))
	}),
}

func constantLiar(value func(y []float64, best float64) float64) liarComponent {
	return func(_ surrogate.Model, pending [][]float64, y []float64, best float64) ([]float64, error) {
		lies := make([]float64, len(pending))
		v := value(y, best)
		for i := range lies {
			lies[i] = v
		}
		return lies, nil
	}
}

// warpComponent fits, to the observed values (minimization units), the map
// to the values the proposal model is fitted to; it keeps their order. The
// map applies to other values too: the model pruner compares the best
// final value with a model fitted to warped values (multifidelity.go).
type warpComponent func(y []float64) (func([]float64) []float64, error)

var warpComponents = map[string]warpComponent{
	"none": func([]float64) (func([]float64) []float64, error) {
		return func(y []float64) []float64 { return y }, nil
	},
	"yeo-johnson": func(y []float64) (func([]float64) []float64, error) {
		t, err := warp.Fit(y)
		if err != nil {
			return nil, err
		}
		return t.Apply, nil
	},
}

// warp returns y warped as Config.OutputWarp says, the warp fitted to y.
func (o *Optimizer) warp(y []float64) ([]float64, error) {
	apply, err := o.fitWarp(y)
	if err != nil {
		return nil, err
	}
	return apply(y), nil
}

// maximizerComponent builds the acquisition maximizer from the settings.
type maximizerComponent func(cfg *Config) (acq.Maximizer, error)

var maximizerComponents = map[string]maximizerComponent{
	"random": func(cfg *Config) (acq.Maximizer, error) {
		return acq.RandomSearch{Candidates: cfg.Candidates, Refine: cfg.Refine, Workers: cfg.Workers}, nil
	},
	"focus": func(cfg *Config) (acq.Maximizer, error) {
		if cfg.FocusRestarts < 0 || cfg.FocusIterations < 0 || cfg.FocusPoints < 0 {
			return nil, errors.New("focus search settings must be ≥ 0")
		}
		return acq.FocusSearch{Restarts: cfg.FocusRestarts, Iterations: cfg.FocusIterations, Points: cfg.FocusPoints,
			Refine: max(cfg.Refine, 0), Workers: cfg.Workers}, nil
	},
}

// component normalizes a setting's name (empty: def) and looks it up in
// one of the maps above; an unknown name is an error listing the known ones.
func component[T any](what, name, def string, known map[string]T) (string, T, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		name = def
	}
	c, ok := known[name]
	if !ok {
		names := make([]string, 0, len(known))
		for k := range known {
			names = append(names, k)
		}
		sort.Strings(names)
		return name, c, fmt.Errorf("unknown %s %q (want %s)", what, name, strings.Join(names, ", "))
	}
	return name, c, nil
}
