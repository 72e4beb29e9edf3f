package acq

// Combinators of BOBAX (Moosbauer et al. 2022, section 4.2 and appendix B.2):
// policies that choose, at every model-based proposal, which acquisition to
// maximize.
//
//   - Interleave: Algorithm 2, "if T mod k = 0 then EIG_PDP else EI", with T
//     the number of evaluations so far (BOBAX^k); with a random acquisition
//     in place of EIG_PDP it is BO-RS^k (BO interleaved with random points).
//   - Probabilistic: EIG_PDP when p ≤ π, p ~ U(0, 1), else EI (BOBAX_prob^π).
//   - Multiplicative: EIBAX^β = EI · minmax(EIG_PDP)^(β/T), the EIG values of
//     the scored batch min-max scaled to [0, 1].
//   - Adaptive (a-BOBAX): interleave while the mean half-width of the 95% PD
//     bands of the hyperparameters of interest exceeds a tolerance, then EI
//     for the rest of the run.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"xbo/gp"
	"xbo/surrogate"
)

// Step is what a Policy sees at one model-based proposal.
type Step struct {
	// Evaluations is T, the number of completed evaluations so far.
	Evaluations int
	// Model is the surrogate (minimization units).
	Model surrogate.Model
	// Inputs are all points the model is conditioned on (unit cube),
	// including pending ones; EIG_PDP's closed form needs them.
	Inputs [][]float64
	// Best is the incumbent (lowest observed value).
	Best float64
	// Rng is this proposal's random stream.
	Rng *rand.Rand
}

// Policy chooses the acquisition of one proposal.
type Policy interface {
	Name() string
	Choose(Step) (Acquisition, error)
}

// Noter is a policy with something to say about its latest choice, which
// the optimizer records in the proposal's note ("" for nothing).
type Noter interface {
	Note() string
}

// Fixed always returns the acquisition its function builds from the step.
type Fixed struct {
	Label string
	Make  func(Step) (Acquisition, error)
}

// Name implements Policy.
func (f Fixed) Name() string { return f.Label }

// Choose implements Policy.
func (f Fixed) Choose(s Step) (Acquisition, error) {
	if f.Make == nil {
		return nil, fmt.Errorf("acq: policy %q has no acquisition", f.Label)
	}
	return f.Make(s)
}

// EIPolicy is expected improvement over the step's incumbent.
func EIPolicy() Policy {
	return Fixed{Label: "ei", Make: func(s Step) (Acquisition, error) {
		if math.IsNaN(s.Best) || math.IsInf(s.Best, 0) {
			return nil, fmt.Errorf("acq: ei needs a finite incumbent, got %v", s.Best)
		}
		return EI{Best: s.Best}, nil
	}}
}

// EIGConfig configures the EIG_PDP acquisitions a policy builds.
type EIGConfig struct {
	Path       *PDPath
	Estimator  Estimator
	Combine    Combination
	Ridge      float64
	MaxBAXPath int
}

// Policy returns the policy that always maximizes EIG_PDP (BAX).
func (c EIGConfig) Policy() Policy {
	return Fixed{Label: "bax", Make: func(s Step) (Acquisition, error) { return c.New(s) }}
}

// New builds the EIG_PDP acquisition for one step. The closed form is used
// unless Estimator says BAX; it falls back to the BAX estimator when it
// cannot apply: a kernel other than the squared exponential, or a model
// conditioned on more points than Step.Inputs lists (pending trials whose
// locations the caller did not pass).
func (c EIGConfig) New(s Step) (*EIGPDP, error) {
	if c.Path == nil {
		return nil, errors.New("acq: eig-pdp: no PD path")
	}
	est := c.Estimator
	if g, ok := s.Model.(*gp.GP); ok && (est == "" || est == ClosedForm) {
		_, hasInputs := s.Model.(inputser)
		if g.Kernel() != gp.SquaredExponential || (!hasInputs && g.Len() != len(s.Inputs)) {
			est = BAX
		}
	}
	return &EIGPDP{Path: c.Path, Inputs: s.Inputs, Estimator: est, Combine: c.Combine, Ridge: c.Ridge, MaxBAXPath: c.MaxBAXPath}, nil
}

// RandomScores gives every candidate an independent uniform score, so its
// maximizer is a uniformly random candidate (the random points of BO-RS).
type RandomScores struct{ Rng *rand.Rand }

// Name implements Acquisition.
func (RandomScores) Name() string { return "random" }

// Score implements Acquisition.
func (r RandomScores) Score(m surrogate.Model, x [][]float64, out []float64) error {
	if r.Rng == nil {
		return errors.New("acq: random: nil random generator")
	}
	if len(out) != len(x) {
		return fmt.Errorf("acq: random: output has %d slots for %d points", len(out), len(x))
	}
	for i := range out {
		out[i] = r.Rng.Float64()
	}
	return nil
}

// RandomPolicy proposes uniformly random candidates.
func RandomPolicy() Policy {
	return Fixed{Label: "random", Make: func(s Step) (Acquisition, error) {
		if s.Rng == nil {
			return nil, errors.New("acq: random policy: step has no random generator")
		}
		return RandomScores{Rng: s.Rng}, nil
	}}
}

// Interleave uses Every when T mod K = 0 and Otherwise else (Moosbauer et
// al. 2022, Algorithm 2).
type Interleave struct {
	K         int
	Every     Policy
	Otherwise Policy
	Label     string
}

// Name implements Policy.
func (p Interleave) Name() string { return p.Label }

// Choose implements Policy.
func (p Interleave) Choose(s Step) (Acquisition, error) {
	if p.K < 1 || p.Every == nil || p.Otherwise == nil {
		return nil, fmt.Errorf("acq: interleave: k = %d must be ≥ 1 and both policies set", p.K)
	}
	if s.Evaluations%p.K == 0 {
		return p.Every.Choose(s)
	}
	return p.Otherwise.Choose(s)
}

// Probabilistic uses Then with probability Pi, else Otherwise.
type Probabilistic struct {
	Pi        float64
	Then      Policy
	Otherwise Policy
	Label     string
}

// Name implements Policy.
func (p Probabilistic) Name() string { return p.Label }

// Choose implements Policy.
func (p Probabilistic) Choose(s Step) (Acquisition, error) {
	if !(p.Pi >= 0 && p.Pi <= 1) || p.Then == nil || p.Otherwise == nil {
		return nil, fmt.Errorf("acq: probabilistic: π = %v must lie in [0, 1] and both policies be set", p.Pi)
	}
	if s.Rng == nil {
		return nil, errors.New("acq: probabilistic: step has no random generator")
	}
	if s.Rng.Float64() <= p.Pi {
		return p.Then.Choose(s)
	}
	return p.Otherwise.Choose(s)
}

// Product is EIBAX's acquisition: Base · minmax(Info)^Exponent, Info scaled to
// [0, 1] over each scored batch (a batch with constant Info scores 1).
type Product struct {
	Base, Info Acquisition
	Exponent   float64
}

// Name implements Acquisition.
func (Product) Name() string { return "eibax" }

// Score implements Acquisition.
func (a Product) Score(m surrogate.Model, x [][]float64, out []float64) error {
	if a.Base == nil || a.Info == nil {
		return errors.New("acq: eibax: both acquisitions are required")
	}
	if !(a.Exponent >= 0) || math.IsInf(a.Exponent, 0) {
		return fmt.Errorf("acq: eibax: exponent %v must be finite and ≥ 0", a.Exponent)
	}
	if len(out) != len(x) {
		return fmt.Errorf("acq: eibax: output has %d slots for %d points", len(out), len(x))
	}
	info := make([]float64, len(x))
	if err := a.Info.Score(m, x, info); err != nil {
		return fmt.Errorf("acq: eibax: %w", err)
	}
	if err := a.Base.Score(m, x, out); err != nil {
		return fmt.Errorf("acq: eibax: %w", err)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range info {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	for i := range out {
		scaled := 1.0
		if hi > lo {
			scaled = (info[i] - lo) / (hi - lo)
		}
		out[i] *= math.Pow(scaled, a.Exponent)
	}
	return nil
}

// Multiplicative is EIBAX^β: EI · minmax(EIG_PDP)^(β/T).
type Multiplicative struct {
	Beta  float64
	Base  Policy
	Info  Policy
	Label string
}

// Name implements Policy.
func (p Multiplicative) Name() string { return p.Label }

// Choose implements Policy.
func (p Multiplicative) Choose(s Step) (Acquisition, error) {
	if !(p.Beta >= 0) || math.IsInf(p.Beta, 0) || p.Base == nil || p.Info == nil {
		return nil, fmt.Errorf("acq: eibax: β = %v must be finite and ≥ 0 and both policies set", p.Beta)
	}
	base, err := p.Base.Choose(s)
	if err != nil {
		return nil, err
	}
	info, err := p.Info.Choose(s)
	if err != nil {
		return nil, err
	}
	return Product{Base: base, Info: info, Exponent: p.Beta / float64(max(s.Evaluations, 1))}, nil
}

// BandRecord is one a-BOBAX decision.
type BandRecord struct {
	Evaluations int     `json:"evaluations"`
	HalfWidth   float64 `json:"half_width"` // mean PD band half-width, objective units
	Phase       string  `json:"phase"`      // "interleave" or "optimize"
	Acquisition string  `json:"acquisition"`
}

// Adaptive is a-BOBAX: Explore (BOBAX interleaving) until the mean half-width of
// the PD bands of Path's hyperparameters (exact eq.-4 bands of Moosbauer et al.
// 2021 at level 1−Alpha) is at most Tolerance, then Exploit (EI) for good. It
// keeps a log of its decisions; it is safe for concurrent use.
type Adaptive struct {
	Path      *PDPath
	Tolerance float64
	Alpha     float64 // default 0.05
	Explore   Policy
	Exploit   Policy

	mu         sync.Mutex
	switchedAt int // evaluations at the switch, −1 before
	started    bool
	log        []BandRecord
}

// Name implements Policy.
func (p *Adaptive) Name() string { return "a-bobax" }

// Choose implements Policy.
func (p *Adaptive) Choose(s Step) (Acquisition, error) {
	if p.Path == nil || p.Explore == nil || p.Exploit == nil {
		return nil, errors.New("acq: a-bobax: path and both policies are required")
	}
	if !(p.Tolerance > 0) || math.IsInf(p.Tolerance, 0) {
		return nil, fmt.Errorf("acq: a-bobax: tolerance %v must be positive and finite", p.Tolerance)
	}
	alpha := p.Alpha
	if alpha == 0 {
		alpha = 0.05
	}
	g, ok := s.Model.(*gp.GP)
	if !ok {
		return nil, fmt.Errorf("acq: a-bobax: needs a Gaussian-process surrogate, got %T", s.Model)
	}
	inputs := s.Inputs
	if in, ok := s.Model.(inputser); ok {
		inputs = in.Inputs()
	}
	bands, err := p.Path.Bands(g, inputs, nil)
	if err != nil {
		return nil, fmt.Errorf("acq: a-bobax: %w", err)
	}
	hw, err := bands.MeanHalfWidth(alpha)
	if err != nil {
		return nil, fmt.Errorf("acq: a-bobax: %w", err)
	}
	p.mu.Lock()
	if !p.started {
		p.started, p.switchedAt = true, -1
	}
	if p.switchedAt < 0 && hw <= p.Tolerance {
		p.switchedAt = s.Evaluations
	}
	phase, next := "interleave", p.Explore
	if p.switchedAt >= 0 {
		phase, next = "optimize", p.Exploit
	}
	p.mu.Unlock()
	a, err := next.Choose(s)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.log = append(p.log, BandRecord{Evaluations: s.Evaluations, HalfWidth: hw, Phase: phase, Acquisition: a.Name()})
	p.mu.Unlock()
	return a, nil
}

// Note implements Noter: the latest mean PD band half-width, the
// tolerance and the phase.
func (p *Adaptive) Note() string {
	log := p.Log()
	if len(log) == 0 {
		return ""
	}
	last := log[len(log)-1]
	return fmt.Sprintf("a-bobax: mean PD band half-width %.6g (tolerance %.6g), phase %s", last.HalfWidth, p.Tolerance, last.Phase)
}

// SwitchedAt is the number of evaluations at which a-BOBAX switched to
// optimization only, and false if it has not.
func (p *Adaptive) SwitchedAt() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started || p.switchedAt < 0 {
		return 0, false
	}
	return p.switchedAt, true
}

// Log returns a copy of the decisions so far (band width per proposal).
func (p *Adaptive) Log() []BandRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]BandRecord(nil), p.log...)
}

// CurrentHalfWidth is the band half-width at the latest decision (live
// display), and false before the first.
func (p *Adaptive) CurrentHalfWidth() (float64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.log) == 0 {
		return 0, false
	}
	return p.log[len(p.log)-1].HalfWidth, true
}

// StrategyConfig selects a BOBAX-family strategy by name (see NewPolicy).
type StrategyConfig struct {
	// Strategy: "bax", "bobax", "bobax-prob", "eibax", "bo-rs", "a-bobax",
	// or a single acquisition "ei", "lcb", "pi", "pvar".
	Strategy string
	K        int     // interleaving period [2]
	Pi       float64 // probability of EIG_PDP in bobax-prob [0.5]
	Beta     float64 // EIBAX exponent numerator β [100]
	Tau      float64 // LCB weight [DefaultTau]
	// Tolerance is a-BOBAX's target mean band half-width (objective units).
	Tolerance float64
	Alpha     float64 // band level 1−α [0.05]
	EIG       EIGConfig
}

// BOBAX-family defaults (Moosbauer et al. 2022: k = 2, π = 0.5; β ∈ {20, 50,
// 100}, of which 100 ranks best in its Table 4).
const (
	DefaultK    = 2
	DefaultPi   = 0.5
	DefaultBeta = 100.0
)

// Strategies lists the names NewPolicy accepts.
func Strategies() []string {
	return []string{"ei", "lcb", "pi", "pvar", "bax", "bobax", "bobax-prob", "eibax", "bo-rs", "a-bobax"}
}

// NewPolicy builds a policy from a strategy name.
func NewPolicy(c StrategyConfig) (Policy, error) {
	p, err := newPolicy(c)
	if err != nil {
		return nil, fmt.Errorf("acq: strategy %q: %w", c.Strategy, err)
	}
	return p, nil
}

func newPolicy(c StrategyConfig) (Policy, error) {
	name := strings.ToLower(strings.TrimSpace(c.Strategy))
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.K < 1 {
		return nil, fmt.Errorf("k = %d must be ≥ 1", c.K)
	}
	if c.Pi == 0 {
		c.Pi = DefaultPi
	}
	if c.Beta == 0 {
		c.Beta = DefaultBeta
	}
	if c.Tau == 0 {
		c.Tau = DefaultTau
	}
	single := func(label string, make func(Step) Acquisition) Policy {
		return Fixed{Label: label, Make: func(s Step) (Acquisition, error) { return make(s), nil }}
	}
	needsPath := func() error {
		if c.EIG.Path == nil {
			return errors.New("needs a PD path (EIGConfig.Path)")
		}
		return nil
	}
	switch name {
	case "ei":
		return EIPolicy(), nil
	case "pi":
		return single("pi", func(s Step) Acquisition { return PI{Best: s.Best} }), nil
	case "lcb":
		tau := c.Tau
		return single(fmt.Sprintf("lcb%g", tau), func(Step) Acquisition { return LCB{Tau: tau} }), nil
	case "pvar":
		return single("pvar", func(Step) Acquisition { return PVAR{} }), nil
	case "bo-rs":
		return Interleave{K: c.K, Every: RandomPolicy(), Otherwise: EIPolicy(), Label: fmt.Sprintf("bo-rs%d", c.K)}, nil
	}
	if err := needsPath(); err != nil {
		return nil, err
	}
	info := c.EIG.Policy()
	switch name {
	case "bax":
		return info, nil
	case "bobax":
		return Interleave{K: c.K, Every: info, Otherwise: EIPolicy(), Label: fmt.Sprintf("bobax%d", c.K)}, nil
	case "bobax-prob":
		if !(c.Pi >= 0 && c.Pi <= 1) {
			return nil, fmt.Errorf("π = %v must lie in [0, 1]", c.Pi)
		}
		return Probabilistic{Pi: c.Pi, Then: info, Otherwise: EIPolicy(), Label: fmt.Sprintf("bobax-prob%g", c.Pi)}, nil
	case "eibax":
		if !(c.Beta > 0) || math.IsInf(c.Beta, 0) {
			return nil, fmt.Errorf("β = %v must be positive and finite", c.Beta)
		}
		return Multiplicative{Beta: c.Beta, Base: EIPolicy(), Info: info, Label: fmt.Sprintf("eibax%g", c.Beta)}, nil
	case "a-bobax":
		if !(c.Tolerance > 0) || math.IsInf(c.Tolerance, 0) {
			return nil, fmt.Errorf("a-bobax needs a positive PD tolerance, got %v", c.Tolerance)
		}
		return &Adaptive{
			Path: c.EIG.Path, Tolerance: c.Tolerance, Alpha: c.Alpha,
			Explore: Interleave{K: c.K, Every: info, Otherwise: EIPolicy(), Label: fmt.Sprintf("bobax%d", c.K)},
			Exploit: EIPolicy(),
		}, nil
	}
	return nil, fmt.Errorf("unknown strategy (want one of %s)", strings.Join(Strategies(), ", "))
}
