// Package opt is the sequential model-based optimizer of xbo: an ask/tell
// loop that proposes configurations of a search space and learns from their
// results (Jones, Schonlau & Welch 1998; the SMBO loop of Croppi 2021, section
// 3, and of Moosbauer et al. 2022, Algorithm 1 with EI).
//
// One proposal (Ask) is:
//
//  1. while fewer trials than the initial-design size have been asked, the
//     next point of a seeded maximin Latin hypercube (size max(4·d, 5) by
//     default, as in Croppi 2021, table 3);
//  2. afterwards, fit the surrogate (a GP by default, or a random forest) to
//     the completed trials, with values multiplied by space.Sign() so the
//     surrogate always sees a minimization problem;
//  3. condition it on the trials still pending (asked, not yet told) with a
//     "lie": by default the model's own mean there (the kriging believer of
//     Ginsbourger, Le Riche & Carraro 2010). The posterior variance collapses
//     at pending points and the mean stays where the model puts it, so
//     parallel workers get distinct proposals without a false optimum. The
//     constant liars of the same paper stay selectable: "best" (CL-min),
//     "mean" and "worst" lie with the best, mean and worst observed value. The
//     lie never enters the hyperparameter fit, only the conditioning. The
//     believer is the default because with many trials pending "best" makes
//     every running trial a fake optimum that EI proposes next to
//     (docs/research/peers.md measures both). Candidates within
//     MinDistance (0.01 in the unit cube) of a pending or failed trial are
//     ruled out, because a lie below the model's own prediction digs a dip
//     right beside the pending point;
//  4. maximize the acquisition (EI by default) with best-of-N random
//     candidates (N = 1500 as in Moosbauer et al. 2022) and 500 perturbations of the
//     best trials (see localCandidates), plus a local refinement of the best
//     three (a gradient climb on a GP, a pattern search otherwise), or with
//     mlrMBO focus search (package acq). Every other proposal of a plain
//     acquisition on the GP is confined to a trust region around the
//     incumbent (TuRBO, Eriksson et al. 2019; trust.go), with 1500 more
//     candidates drawn inside it.
//
// GP hyperparameters are warm-started: each Ask runs one L-BFGS start from
// the previous Ask's hyperparameters, and every FullRefitEvery completed
// observations (default 10), and whenever no previous fit exists (the first
// model fit, or a resumed history without recorded hyperparameters), a full fit with GPRestarts starts (default 3;
// the warm start is one of them, so a full fit is never worse than the warm
// one). This keeps an Ask at T = 200, d = 6 cheap without letting a bad
// early optimum of the marginal likelihood persist. Beyond ExactPoints (256)
// completed trials the GP is a gp.Subset (hyperparameters and variance from
// 256 trials, the mean from up to 1,000) whose hyperparameters are refitted
// only as the data grows by a tenth, so a long study's ask stays bounded
// (see fit; BenchmarkAskLong).
//
// On a noise-free objective EI keeps proposing points next to the incumbent
// (docs/research/peers.md counts them). A proposal within Config.DuplicateTolerance (1e-4) of
// an earlier trial is never made: the search runs again with every trial
// walled off within the tolerance and its best candidate is proposed, and
// only when no candidate is worth proposing (EI or PI 0 everywhere else) is
// a random configuration proposed instead, as mlrMBO's
// filter.proposed.points does (duplicate.go). The tolerance is 1e-4 because
// a coarser one costs the final precision a noise-free objective allows,
// and a copy is never answered by a random configuration outright because
// that spends most asks of a corner optimum on random search (docs/research/peers.md,
// "Boundary optima", measures both).
//
// Failed trials (TellFailed) stay in the history but never enter the
// hyperparameter fit, nor SurrogateAt; for proposals they are conditioned on
// with the WORST observed value, so the optimizer is steered away from a
// configuration that crashed instead of proposing it again. Beyond
// ExactPoints failed and pruned trials, a proposal is conditioned on
// ExactPoints of them, the nearest to the incumbent and the latest
// (stoppedToCondition), as conditioning on k points costs O(k³) and under
// a median pruner most of a long study's trials are pruned
// (BenchmarkAskPruned; measured in docs/api.md, Pruners).
//
// Pruned trials (stopped early by a pruner, package prune) are in state
// Pruned, with their intermediate values (Trial.Curve). Their value is an
// intermediate one, at a smaller budget than the complete trials', so the
// full-budget surrogate must not be fitted to it as if it were a final
// result. Once a trial stopped early, the proposal model is a GP over
// configuration × budget fitted on every trial's values at the budgets it
// reached (multifidelity.go), the budget being the study's resource
// (Config.Resource) or, when it names none, the steps of its curves
// (inferResource): a pruner's trials teach the model with no setting. Where
// no budget can be read from the curves (no complete trial reported one, or
// Config.PrunedAsFailed), a pruned trial is treated as a failure: the
// pruner stopped it because it looked worse than the others, so
// conditioning on the worst value steers proposals away. The duplicate
// check, which covers every trial, never proposes it again.
//
// Everything random is derived from Config.Seed and the trial number, so a
// run is reproducible, and an optimizer rebuilt from a stored history
// (Config.History) proposes from the same streams and warm-starts from the
// hyperparameters recorded in the history's last model-based trial.
package opt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"xbo/acq"
	"xbo/design"
	"xbo/gp"
	"xbo/space"
)

// BandLog is a-BOBAX's record of the mean PD band half-width at every
// model-based proposal, and the number of evaluations at which it switched to
// optimization only (ok false before the switch or for other strategies).
func (o *Optimizer) BandLog() (log []acq.BandRecord, switchedAt int, ok bool) {
	ad, isAdaptive := o.policy.(*acq.Adaptive)
	if !isAdaptive {
		return nil, 0, false
	}
	at, switched := ad.SwitchedAt()
	return ad.Log(), at, switched
}

// Optimizer is an ask/tell Bayesian optimizer. Its methods are safe for
// concurrent use; Ask holds a lock while it fits the model.
type Optimizer struct {
	mu      sync.Mutex
	cfg     Config
	s       *space.Space
	kernel  gp.Kernel
	prior   gp.LengthscalePrior // Config.LengthscalePrior
	levels  []int
	design  [][]float64
	maxim   acq.Maximizer
	sur     surrogateComponent
	fitWarp warpComponent // Config.OutputWarp
	liar    liarComponent
	// confine says which asks are confined to the trust region (nil: none).
	confine trustRule

	trials    []Trial
	byID      map[int64]int
	nextID    int64
	completed int // number of completed trials

	// policy is the BOBAX-family acquisition policy, nil for plain strategies.
	policy acq.Policy

	// Warm-start state of the GP hyperparameters, one per kind of model
	// (modelKind).
	warm [2]warmStart

	// Warm-start state of the configuration × budget GP (multifidelity.go).
	fidelityHyper  *gp.Hyper
	fidelityFullAt int // its data size at its last full fit
	fidelityFitAt  int // its data size at its last hyperparameter fit

	// The model of the latest ContinueChance, and how many it fitted (a
	// count the tests read to see that a model was reused; multifidelity.go).
	chance     *chanceModel
	chanceFits int
}

// New validates cfg and builds an optimizer, replaying cfg.History.
func New(cfg Config) (*Optimizer, error) {
	o, err := newOptimizer(cfg)
	if err != nil {
		return nil, fmt.Errorf("opt: %w", err)
	}
	return o, nil
}

func newOptimizer(cfg Config) (*Optimizer, error) {
	if cfg.Space == nil {
		return nil, errors.New("no search space")
	}
	s := cfg.Space
	d := s.Dim()
	if d == 0 {
		return nil, errors.New("search space has no parameters")
	}
	name, newPolicy, err := component("strategy", cfg.Strategy, "ei", strategyComponents)
	if err != nil {
		return nil, err
	}
	cfg.Strategy = name
	var policy acq.Policy
	if newPolicy != nil {
		if policy, err = newPolicy(s, &cfg); err != nil {
			return nil, err
		}
	}
	if cfg.Tau == 0 {
		cfg.Tau = acq.DefaultTau
	}
	if cfg.Tau < 0 || math.IsNaN(cfg.Tau) || math.IsInf(cfg.Tau, 0) {
		return nil, fmt.Errorf("tau %v must be positive and finite", cfg.Tau)
	}
	if cfg.Xi < 0 || math.IsNaN(cfg.Xi) || math.IsInf(cfg.Xi, 0) {
		return nil, fmt.Errorf("xi %v must be ≥ 0 and finite", cfg.Xi)
	}
	var sur surrogateComponent
	if cfg.Surrogate, sur, err = component("surrogate", cfg.Surrogate, "gp", surrogateComponents); err != nil {
		return nil, err
	}
	switch cfg.SE {
	case "":
		cfg.SE = SELatent
	case SELatent:
	case SEPredictive:
		// Only LCB has an s to widen, and only the GP a fitted noise.
		if cfg.Strategy != "lcb" || cfg.Acquire != nil || cfg.Surrogate != "gp" {
			return nil, fmt.Errorf("se %q applies to the lcb strategy on the gp surrogate (got strategy %q, surrogate %q)", cfg.SE, cfg.Strategy, cfg.Surrogate)
		}
	default:
		return nil, fmt.Errorf("se %q: want %q or %q", cfg.SE, SELatent, SEPredictive)
	}
	objectiveUnits := ""
	switch {
	case policy != nil || cfg.Acquire != nil:
		objectiveUnits = "the strategy's acquisition"
	case cfg.Xi != 0:
		objectiveUnits = "xi"
	}
	defaultWarp := DefaultOutputWarp
	if objectiveUnits != "" || cfg.Surrogate != "gp" || cfg.Strategy == AcqRandom {
		defaultWarp = "none"
	}
	var outputWarp warpComponent
	if cfg.OutputWarp, outputWarp, err = component("output warp", cfg.OutputWarp, defaultWarp, warpComponents); err != nil {
		return nil, err
	}
	if cfg.OutputWarp != "none" && objectiveUnits != "" {
		return nil, fmt.Errorf("output warp %q cannot be combined with %s, which works in objective units (use \"none\")", cfg.OutputWarp, objectiveUnits)
	}
	if cfg.Kernel == "" {
		cfg.Kernel = DefaultKernel
	}
	kernel, err := gp.ParseKernel(cfg.Kernel)
	if err != nil {
		return nil, err
	}
	if cfg.LengthscalePrior == "" {
		cfg.LengthscalePrior = DefaultLengthscalePrior
	}
	prior, err := gp.ParsePrior(cfg.LengthscalePrior)
	if err != nil {
		return nil, err
	}
	if cfg.GPRestarts < 0 {
		return nil, fmt.Errorf("gp restarts %d must be ≥ 0", cfg.GPRestarts)
	}
	if cfg.GPRestarts == 0 {
		cfg.GPRestarts = 3
	}
	cfg.ExactPoints, cfg.MeanPoints = cfg.subsetPoints()
	if cfg.ExactPoints < 1 || cfg.MeanPoints < cfg.ExactPoints || cfg.MeanPoints > gp.MaxSubsetPoints {
		return nil, fmt.Errorf("exact points %d and mean points %d: want 1 ≤ exact ≤ mean ≤ %d", cfg.ExactPoints, cfg.MeanPoints, gp.MaxSubsetPoints)
	}
	if cfg.FullRefitEvery == 0 {
		cfg.FullRefitEvery = 10
	}
	if cfg.MinNoise < 0 || math.IsNaN(cfg.MinNoise) || math.IsInf(cfg.MinNoise, 0) {
		return nil, fmt.Errorf("min noise %v must be ≥ 0 and finite (0: the GP's default)", cfg.MinNoise)
	}
	if cfg.InitialDesign == "" {
		cfg.InitialDesign = "maximin"
	}
	kind, err := design.ParseKind(cfg.InitialDesign)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.InitialSize == 0:
		cfg.InitialSize = max(4*d, 5)
	case cfg.InitialSize < 0:
		cfg.InitialSize = 0
	case cfg.InitialSize > MaxInitialSize:
		return nil, fmt.Errorf("initial size %d exceeds the limit of %d", cfg.InitialSize, MaxInitialSize)
	}
	if cfg.Strategy == AcqRandom {
		cfg.InitialSize = 0
	}
	if cfg.Candidates < 0 || cfg.Candidates > MaxCandidates {
		return nil, fmt.Errorf("candidates %d must lie in 0..%d", cfg.Candidates, MaxCandidates)
	}
	var liar liarComponent
	if cfg.Liar, liar, err = component("liar", cfg.Liar, "believer", liarComponents); err != nil {
		return nil, err
	}
	switch {
	case math.IsNaN(cfg.MinDistance) || math.IsInf(cfg.MinDistance, 0):
		return nil, fmt.Errorf("min distance %v must be finite", cfg.MinDistance)
	case cfg.MinDistance == 0:
		cfg.MinDistance = 0.01
	case cfg.MinDistance < 0:
		cfg.MinDistance = 0
	}
	switch {
	case math.IsNaN(cfg.DuplicateTolerance) || math.IsInf(cfg.DuplicateTolerance, 0):
		return nil, fmt.Errorf("duplicate tolerance %v must be finite", cfg.DuplicateTolerance)
	case cfg.DuplicateTolerance == 0:
		cfg.DuplicateTolerance = defaultDuplicateTolerance
	case cfg.DuplicateTolerance < 0:
		cfg.DuplicateTolerance = 0
	}
	if cfg.Workers < 0 {
		return nil, fmt.Errorf("workers %d must be ≥ 0", cfg.Workers)
	}
	if err := cfg.Resource.Validate(); err != nil {
		return nil, err
	}
	if cfg.Resource != nil {
		r := *cfg.Resource
		cfg.Resource = &r
	}
	if cfg.Workers > 0 && cfg.Forest.Workers == 0 {
		cfg.Forest.Workers = cfg.Workers
	}
	switch {
	case cfg.LocalCandidates == 0:
		cfg.LocalCandidates = defaultLocalCandidates
	case cfg.LocalCandidates < 0:
		cfg.LocalCandidates = 0
	case cfg.LocalCandidates > MaxCandidates:
		return nil, fmt.Errorf("local candidates %d above the limit %d", cfg.LocalCandidates, MaxCandidates)
	}
	// A trust region confines the proposals of a plain acquisition on the
	// GP: it needs lengthscales, and a BOBAX-family strategy's schedule
	// chooses where to look by its own rule.
	confinable := policy == nil && cfg.Acquire == nil && cfg.Surrogate == "gp" && cfg.Strategy != AcqRandom
	defaultTrust := DefaultTrustRegion
	if !confinable {
		defaultTrust = "none"
	}
	var confine trustRule
	if cfg.TrustRegion, confine, err = component("trust region", cfg.TrustRegion, defaultTrust, trustRules); err != nil {
		return nil, err
	}
	if confine != nil && !confinable {
		return nil, fmt.Errorf("trust region %q needs a plain acquisition (ei, lcb, pi, pvar) on the gp surrogate (use \"none\")", cfg.TrustRegion)
	}
	var newMaximizer maximizerComponent
	if cfg.AcqOptimizer, newMaximizer, err = component("acquisition optimizer", cfg.AcqOptimizer, "random", maximizerComponents); err != nil {
		return nil, err
	}
	maxim, err := newMaximizer(&cfg)
	if err != nil {
		return nil, err
	}

	o := &Optimizer{
		cfg:     cfg,
		policy:  policy,
		s:       s,
		kernel:  kernel,
		prior:   prior,
		levels:  s.Levels(),
		maxim:   maxim,
		sur:     sur,
		fitWarp: outputWarp,
		liar:    liar,
		confine: confine,
		byID:    map[int64]int{},
		nextID:  1,
	}
	if cfg.InitialSize > 0 {
		pts, err := design.Generate(kind, cfg.InitialSize, d, o.stream(streamDesign, 0))
		if err != nil {
			return nil, err
		}
		for _, p := range pts {
			s.Repair(p)
		}
		o.design = pts
	}
	if err := o.replay(cfg.History); err != nil {
		return nil, err
	}
	o.cfg.History = nil
	return o, nil
}

// Random streams: one per purpose and trial number, so that proposals do not
// depend on how many random numbers an earlier step consumed.
const (
	streamDesign = iota + 1
	streamAsk
	streamFit
	streamLocal
	streamSurrogateAt
	streamTrust
)

func (o *Optimizer) stream(purpose, number int) *rand.Rand {
	seq := uint64(purpose)<<48 ^ uint64(number)
	return rand.New(rand.NewPCG(o.cfg.Seed, (o.cfg.Seed^0x9e3779b97f4a7c15)+seq*0xbf58476d1ce4e5b9))
}

func (o *Optimizer) seedFor(purpose, number int) uint64 {
	return o.stream(purpose, number).Uint64()
}

// replay loads a prior history.
func (o *Optimizer) replay(hist []Trial) error {
	completions := make([]int, 0, len(hist))
	for i, t := range hist {
		t = t.Clone()
		label := fmt.Sprintf("history trial %d", i)
		if t.ID < 0 {
			return fmt.Errorf("%s: negative id %d", label, t.ID)
		}
		if t.ID == 0 {
			t.ID = o.nextID
		}
		if _, dup := o.byID[t.ID]; dup {
			return fmt.Errorf("%s: duplicate id %d", label, t.ID)
		}
		u, err := o.s.Encode(t.Params)
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		t.U = u
		t.Number = i
		if err := checkCurve(t.Curve); err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		switch t.State {
		case Complete:
			if math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
				return fmt.Errorf("%s: complete with value %v", label, t.Value)
			}
			completions = append(completions, t.Completion)
		case Pending, Failed, Pruned:
			t.Value = math.NaN()
			t.Completion = -1
		case "":
			return fmt.Errorf("%s: no state", label)
		default:
			return fmt.Errorf("%s: unknown state %q", label, t.State)
		}
		o.byID[t.ID] = len(o.trials)
		o.nextID = max(o.nextID, t.ID+1)
		o.trials = append(o.trials, t)
	}
	// Keep the stored completion order if it is a permutation of 0..k−1,
	// otherwise take the history order.
	sorted := slices.Clone(completions)
	slices.Sort(sorted)
	valid := true
	for i, c := range sorted {
		if c != i {
			valid = false
		}
	}
	k := 0
	for i := range o.trials {
		if o.trials[i].State == Complete {
			if !valid {
				o.trials[i].Completion = k
			}
			k++
		}
	}
	o.completed = k
	// Warm-start each kind of model from its last recorded GP fit, so a
	// resumed optimizer continues almost exactly as the uninterrupted one
	// would; the next full fit comes at most FullRefitEvery observations
	// later.
	for i := len(o.trials) - 1; i >= 0; i-- {
		t := &o.trials[i]
		ws := &o.warm[modelKind(t.Warped)]
		if h := t.Hyper; ws.hyper == nil && h != nil && !t.Fidelity && len(h.Lengthscales) == o.s.Dim() {
			warm := h.Clone()
			*ws = warmStart{hyper: &warm, lastFullAt: t.Observed}
		}
	}
	return nil
}

// Space returns the optimizer's search space.
func (o *Optimizer) Space() *space.Space { return o.s }

// Ask proposes the next configuration and records it as pending.
func (o *Optimizer) Ask() (Trial, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t, err := o.propose(nil)
	if err != nil {
		return Trial{}, fmt.Errorf("opt: ask: %w", err)
	}
	return o.record(t), nil
}

// AskBatch proposes n configurations at once and records them as pending.
// The surrogate (hyperparameters included) is fitted once on the completed
// trials; each further proposal conditions it on the batch's earlier
// proposals with the Liar value (constant liar), exactly as n calls of Ask
// would, except that the hyperparameters are not refitted between them — the
// data they are fitted on is the same, so a refit would only cost time.
// Random streams are per trial number, so the result is deterministic.
func (o *Optimizer) AskBatch(n int) ([]Trial, error) {
	if n < 1 {
		return nil, fmt.Errorf("opt: ask batch: %d trials requested, want ≥ 1", n)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var reuse [2]fitted
	out := make([]Trial, 0, n)
	for range n {
		t, err := o.propose(&reuse)
		if err != nil {
			return out, fmt.Errorf("opt: ask batch: proposal %d of %d: %w", len(out)+1, n, err)
		}
		out = append(out, o.record(t))
	}
	return out, nil
}

// record stores a proposal as a pending trial and returns a copy of it.
func (o *Optimizer) record(t Trial) Trial {
	t.ID = o.nextID
	o.nextID++
	t.Number = len(o.trials)
	t.State = Pending
	t.Value = math.NaN()
	t.Completion = -1
	t.Params = o.s.Decode(t.U)
	o.byID[t.ID] = len(o.trials)
	o.trials = append(o.trials, t)
	return t.Clone()
}

// Tell completes a pending trial with its objective value.
func (o *Optimizer) Tell(id int64, value float64) error {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return fmt.Errorf("opt: tell trial %d: value %v is not finite (use TellFailed for a failed trial)", id, value)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	t, err := o.pending(id)
	if err != nil {
		return fmt.Errorf("opt: tell: %w", err)
	}
	t.State = Complete
	t.Value = value
	t.Completion = o.completed
	o.completed++
	return nil
}

// TellFailed marks a pending trial as failed (the evaluation crashed or
// diverged). It stays in the history; see the package doc for how failures
// steer later proposals.
func (o *Optimizer) TellFailed(id int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	t, err := o.pending(id)
	if err != nil {
		return fmt.Errorf("opt: tell failed: %w", err)
	}
	t.State = Failed
	return nil
}

func (o *Optimizer) pending(id int64) (*Trial, error) {
	i, ok := o.byID[id]
	if !ok {
		return nil, fmt.Errorf("no trial with id %d", id)
	}
	t := &o.trials[i]
	if t.State != Pending {
		return nil, fmt.Errorf("trial %d is already %s", id, t.State)
	}
	return t, nil
}

// Trial returns the trial with the given id.
func (o *Optimizer) Trial(id int64) (Trial, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i, ok := o.byID[id]
	if !ok {
		return Trial{}, fmt.Errorf("opt: no trial with id %d", id)
	}
	return o.trials[i].Clone(), nil
}

// Pending lists the trials asked but not yet told, in ask order.
func (o *Optimizer) Pending() []Trial {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Trial
	for _, t := range o.trials {
		if t.State == Pending {
			out = append(out, t.Clone())
		}
	}
	return out
}

// History returns every trial in ask order.
func (o *Optimizer) History() []Trial {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Trial, len(o.trials))
	for i, t := range o.trials {
		out[i] = t.Clone()
	}
	return out
}

// Completed is the number of completed trials.
func (o *Optimizer) Completed() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.completed
}

// Best returns the best completed trial for the space's direction (the
// earliest on ties) and false when none has completed.
func (o *Optimizer) Best() (Trial, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	best := o.bestComplete()
	if best < 0 {
		return Trial{}, false
	}
	return o.trials[best].Clone(), true
}

// bestComplete is the index of the best completed trial for the space's
// direction (the earliest on ties), −1 when none has completed. The caller
// holds o.mu.
func (o *Optimizer) bestComplete() int {
	best := -1
	sign := o.s.Sign()
	for i, t := range o.trials {
		if t.State == Complete && (best < 0 || sign*t.Value < sign*o.trials[best].Value) {
			best = i
		}
	}
	return best
}

// Config returns the resolved configuration (defaults filled in, without
// History).
func (o *Optimizer) Config() Config { return o.cfg }
