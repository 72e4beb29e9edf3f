package opt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"xbo/pareto"
	"xbo/space"
)

// ParEGO optimizes several objectives by random scalarization (Knowles
// 2006, "ParEGO: a hybrid algorithm with on-line landscape approximation
// for expensive multiobjective optimization problems", IEEE TEVC 10(1); the
// form SMAC3 uses). Every ask draws weights λ uniformly from the simplex,
// scales each objective to [0, 1] by the range the complete trials span
// (after turning maximized objectives into minimized ones), and gives each
// complete trial the augmented Chebyshev value
//
//	s_λ(f) = max_k λ_k f̃_k + ρ Σ_k λ_k f̃_k    (ρ = 0.05),
//
// whose minimizers over the trials are Pareto-optimal for every λ with
// positive weights, and the augmentation breaks ties between weakly
// dominated ones. The single-objective optimizer of this package, with its
// configuration (initial design, surrogate, acquisition, pending trials),
// then proposes for s_λ. A different λ on every ask spreads the proposals
// along the front.
//
// Constraints (feasible when every value is ≤ 0): an infeasible trial's
// value is 1 + ρ plus its total violation scaled by the largest one seen,
// so every infeasible trial ranks below every feasible one and the less
// violated above the more (Deb's rule, pareto package). The surrogate then
// learns where the feasible region is from those values. A model of
// feasibility would be finer; this keeps one model per ask.
type ParEGO struct {
	mu     sync.Mutex
	cfg    Config
	dirs   []space.Direction
	trials []Trial
	values map[int64][]float64 // complete trials' objective values
	viol   map[int64]float64   // complete trials' total constraint violation
	cons   map[int64][]float64 // complete trials' constraint values (nil: none reported)
}

// ParEGORho is the augmentation weight ρ of the scalarization.
const ParEGORho = 0.05

// NewParEGO builds an optimizer of the objectives dirs (one direction
// each) over cfg.Space; cfg configures the optimizer each ask's
// scalarization is proposed by. With one objective the scalarization is
// the objective itself, rescaled, which leaves the constraint handling:
// that is how a constrained single-objective study is optimized.
// cfg.History, when given, resumes a run: its complete trials carry Values
// (one per objective) and, when constrained, Constraints.
func NewParEGO(cfg Config, dirs []space.Direction) (*ParEGO, error) {
	if len(dirs) < 1 {
		return nil, errors.New("opt: parego: no objectives")
	}
	for k, d := range dirs {
		if d != space.Minimize && d != space.Maximize {
			return nil, fmt.Errorf("opt: parego: objective %d: direction %q", k, d)
		}
	}
	if cfg.Space == nil {
		return nil, errors.New("opt: parego: no space")
	}
	hist := cfg.History
	cfg.History = nil
	// The default lengthscale prior was chosen on unconstrained problems of
	// one objective; scalarized and EHVI proposals keep maximum likelihood
	// unless told, as when they were measured.
	if cfg.LengthscalePrior == "" {
		cfg.LengthscalePrior = "none"
	}
	// The scalarization is always minimized, whatever the study's
	// directions (they are folded into s_λ).
	scalar, err := cfg.Space.ForObjective(0)
	if err != nil {
		return nil, fmt.Errorf("opt: parego: %w", err)
	}
	scalar.Objective = space.Minimize
	cfg.Space = scalar
	// Validate the configuration once, as every ask will build it.
	if _, err := New(cfg); err != nil {
		return nil, fmt.Errorf("opt: parego: %w", err)
	}
	p := &ParEGO{cfg: cfg, dirs: slices.Clone(dirs), values: map[int64][]float64{}, viol: map[int64]float64{}, cons: map[int64][]float64{}}
	ids := map[int64]bool{}
	var next int64
	for _, t := range hist {
		next = max(next, t.ID)
	}
	for i, t := range hist {
		t = t.Clone()
		if t.ID == 0 {
			next++
			t.ID = next
		}
		if ids[t.ID] {
			return nil, fmt.Errorf("opt: parego: history trial %d: duplicate id %d", i, t.ID)
		}
		ids[t.ID] = true
		if t.State == Complete {
			if err := p.checkValues(t.ID, t.Values); err != nil {
				return nil, err
			}
			p.values[t.ID] = t.Values
			p.viol[t.ID] = pareto.Violation(t.Constraints)
			p.cons[t.ID] = t.Constraints
			t.Completion = len(p.values) - 1
		}
		t.Values, t.Constraints = nil, nil
		p.trials = append(p.trials, t)
	}
	return p, nil
}

func (p *ParEGO) checkValues(id int64, values []float64) error {
	if len(values) != len(p.dirs) {
		return fmt.Errorf("opt: parego: trial %d: %d values for %d objectives", id, len(values), len(p.dirs))
	}
	for k, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("opt: parego: trial %d: objective %d is %v", id, k, v)
		}
	}
	return nil
}

// AskBatch proposes n configurations, each for its own weights and with
// the earlier ones pending, as n calls of Ask.
func (p *ParEGO) AskBatch(n int) ([]Trial, error) {
	return askEach(n, "parego", p.Ask)
}

// askEach is a batch of n proposals made one ask at a time, each with the
// earlier ones pending (the optimizers of several objectives propose each
// for its own scalarization or front).
func askEach(n int, who string, ask func() (Trial, error)) ([]Trial, error) {
	if n < 1 {
		return nil, fmt.Errorf("opt: %s: ask batch: %d trials requested, want ≥ 1", who, n)
	}
	out := make([]Trial, 0, n)
	for range n {
		t, err := ask()
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Ask proposes the next configuration and records it as pending.
func (p *ParEGO) Ask() (Trial, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ask()
}

// ask is Ask with p.mu held.
func (p *ParEGO) ask() (Trial, error) {
	lambda := p.weights(len(p.trials))
	cfg := p.cfg
	cfg.History = p.scalarized(lambda)
	o, err := New(cfg)
	if err != nil {
		return Trial{}, fmt.Errorf("opt: parego: ask: %w", err)
	}
	t, err := o.Ask()
	if err != nil {
		return Trial{}, fmt.Errorf("opt: parego: ask: %w", err)
	}
	t.Note = fmt.Sprintf("ParEGO weights %.3f", lambda)
	p.trials = append(p.trials, t.Clone())
	return t, nil
}

// Tell records the objective values (one per direction, finite) and the
// constraint values (nil or empty: unconstrained; NaN counts as violated)
// of a pending trial.
func (p *ParEGO) Tell(id int64, values, constraints []float64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkValues(id, values); err != nil {
		return fmt.Errorf("tell: %w", err)
	}
	t, err := p.pending(id)
	if err != nil {
		return err
	}
	t.State = Complete
	t.Completion = len(p.values)
	p.values[id] = slices.Clone(values)
	p.viol[id] = pareto.Violation(constraints)
	p.cons[id] = slices.Clone(constraints)
	return nil
}

// TellFailed records that a pending trial produced no values.
func (p *ParEGO) TellFailed(id int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, err := p.pending(id)
	if err != nil {
		return err
	}
	t.State = Failed
	return nil
}

func (p *ParEGO) pending(id int64) (*Trial, error) {
	for i := range p.trials {
		if p.trials[i].ID == id {
			if p.trials[i].State != Pending {
				return nil, fmt.Errorf("opt: parego: trial %d is %s, not pending", id, p.trials[i].State)
			}
			return &p.trials[i], nil
		}
	}
	return nil, fmt.Errorf("opt: parego: no trial %d", id)
}

// weights draws λ for ask number n uniformly from the simplex (normalized
// exponentials), from a stream of its own so a run is reproducible.
func (p *ParEGO) weights(n int) []float64 {
	rng := rand.New(rand.NewPCG(p.cfg.Seed^0x9a4e60, uint64(n)))
	lambda := make([]float64, len(p.dirs))
	sum := 0.0
	for k := range lambda {
		lambda[k] = rng.ExpFloat64()
		sum += lambda[k]
	}
	for k := range lambda {
		lambda[k] /= sum
	}
	return lambda
}

// scalarized is the history of trials with each complete one's value
// s_λ (constraints as in the type's doc).
func (p *ParEGO) scalarized(lambda []float64) []Trial {
	m := len(p.dirs)
	lo, hi := make([]float64, m), make([]float64, m)
	for k := range m {
		lo[k], hi[k] = math.Inf(1), math.Inf(-1)
	}
	maxViol := 0.0
	sign := make([]float64, m)
	for k, d := range p.dirs {
		sign[k] = 1
		if d == space.Maximize {
			sign[k] = -1
		}
	}
	for id, v := range p.values {
		for k := range m {
			lo[k], hi[k] = math.Min(lo[k], sign[k]*v[k]), math.Max(hi[k], sign[k]*v[k])
		}
		if vi := p.viol[id]; !math.IsInf(vi, 1) {
			maxViol = math.Max(maxViol, vi)
		}
	}
	out := make([]Trial, len(p.trials))
	for i, t := range p.trials {
		t = t.Clone()
		if t.State == Complete {
			v := p.values[t.ID]
			worst, sum := 0.0, 0.0
			for k := range m {
				f := 0.0
				if r := hi[k] - lo[k]; r > 0 {
					f = (sign[k]*v[k] - lo[k]) / r
				}
				worst = math.Max(worst, lambda[k]*f)
				sum += lambda[k] * f
			}
			t.Value = worst + ParEGORho*sum
			if vi := p.viol[t.ID]; vi > 0 {
				scaled := 1.0
				if maxViol > 0 && !math.IsInf(vi, 1) {
					scaled = vi / maxViol
				}
				t.Value = 1 + ParEGORho + scaled
			}
		}
		out[i] = t
	}
	return out
}
