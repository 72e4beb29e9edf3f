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
//     (docs/peers.md measures both). Candidates within
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
// (docs/peers.md counts them). A proposal within Config.DuplicateTolerance (1e-4) of
// an earlier trial is never made: the search runs again with every trial
// walled off within the tolerance and its best candidate is proposed, and
// only when no candidate is worth proposing (EI or PI 0 everywhere else) is
// a random configuration proposed instead, as mlrMBO's
// filter.proposed.points does (duplicate.go). The tolerance is 1e-4 because
// a coarser one costs the final precision a noise-free objective allows,
// and a copy is never answered by a random configuration outright because
// that spends most asks of a corner optimum on random search (docs/peers.md,
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
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/floats"

	"xbo/acq"
	"xbo/design"
	"xbo/forest"
	"xbo/gp"
	"xbo/history"
	"xbo/internal/parallel"
	"xbo/space"
	"xbo/surrogate"
)

// State of a trial.
type State string

// Trial states.
const (
	Pending  State = "pending"
	Complete State = "complete"
	Failed   State = "failed"
	// Pruned: stopped early by a pruner (see the package doc and
	// Config.Resource).
	Pruned State = "pruned"
)

// Acquisition names recorded for trials not chosen by an acquisition function.
const (
	AcqInitialDesign = "initial-design"
	AcqRandom        = "random"
	// AcqRandomFallback marks a random proposal made because the surrogate
	// could not be fitted, too few trials had completed, or the model's
	// proposal was a near-copy of an earlier trial with no other candidate
	// worth proposing (see Trial.Note and duplicate.go).
	AcqRandomFallback = "random-fallback"
)

// Trial is one configuration proposed by Ask. It is plain data, so the
// service can store it and give it back through Config.History. Params and
// Value may hold NaN, which encoding/json cannot represent: serialize
// Params with space.ToMap and Value as a nullable number.
type Trial struct {
	// ID identifies the trial in Tell; unique within an optimizer.
	ID int64
	// Number is the trial's position in the history (0-based ask order).
	Number int
	// Params are natural values (space package), NaN for inactive parameters.
	Params []float64
	// U is the unit-cube encoding of Params.
	U []float64
	// Acquisition names what chose the trial: "initial-design", "random",
	// "random-fallback", or the acquisition's Name ("ei", "lcb", ...).
	Acquisition string
	State       State
	// Value is the told objective value (NaN unless Complete).
	Value float64
	// Completion is the order in which the trial was completed (0 for the
	// first told value), −1 unless Complete. SurrogateAt(t) uses the trials
	// with Completion < t.
	Completion int
	// Observed is the number of completed trials the surrogate that proposed
	// this trial was fitted on (0 for design and random trials).
	Observed int
	// Hyper are the GP hyperparameters of that surrogate (nil when no GP was
	// used), so the proposing model can be rebuilt exactly.
	Hyper *gp.Hyper
	// Note explains unusual proposals, e.g. why a fallback was used.
	Note string
	// Curve holds the intermediate values the trial reported, in
	// increasing step order (Report, TellPruned; a resumed history).
	Curve []history.Intermediate
	// Fidelity marks a proposal of the configuration × budget model
	// (Config.Resource), whose data were intermediate values: it cannot be
	// rebuilt by SurrogateOf.
	Fidelity bool
	// Warped marks a proposal whose model was fitted to output-warped values
	// (Config.OutputWarp; a confined ask's model never is).
	Warped bool
	// Values and Constraints are a complete trial's objective and
	// constraint values in a history given to ParEGO (several objectives
	// or constraints); nil otherwise.
	Values, Constraints []float64
}

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

// Clone returns a deep copy.
func (t Trial) Clone() Trial {
	t.Params = slices.Clone(t.Params)
	t.U = slices.Clone(t.U)
	t.Curve = slices.Clone(t.Curve)
	t.Values = slices.Clone(t.Values)
	t.Constraints = slices.Clone(t.Constraints)
	if t.Hyper != nil {
		h := t.Hyper.Clone()
		t.Hyper = &h
	}
	return t
}

// Iteration is what a custom acquisition chooser (Config.Acquire) sees when
// a model-based proposal is to be made.
type Iteration struct {
	// Number of the trial being proposed.
	Number int
	Space  *space.Space
	// Model is the proposal surrogate (conditioned on pending trials), in
	// minimization units (values × Space.Sign()).
	Model surrogate.Model
	// Best is the incumbent in minimization units.
	Best float64
	// X and Y are the completed trials the model was fitted on (unit cube,
	// minimization units).
	X [][]float64
	Y []float64
	// Rng is this proposal's random stream.
	Rng *rand.Rand
}

// DefaultWorkers is the number of goroutines a proposal uses by default:
// the machines xbo targets are small, and a GP fit gains little from more.
const DefaultWorkers = parallel.DefaultWorkers

// Config configures an Optimizer. Only Space is required; the zero value of
// every other field means the default given in brackets.
type Config struct {
	Space *space.Space
	// Strategy is the acquisition: "ei" [default], "lcb", "pi", "pvar",
	// "random" for random search (no initial design, no model), or a
	// BOBAX-family strategy "bax", "bobax", "bobax-prob", "eibax", "bo-rs",
	// "a-bobax" configured by BOBAX (Moosbauer et al. 2022).
	Strategy string
	// BOBAX holds the settings of a BOBAX-family Strategy (its Strategy and,
	// when zero, Seed fields are filled from this Config). These strategies
	// default to the squared-exponential kernel, for which EIG_PDP has a
	// fast closed form.
	BOBAX BOBAXConfig
	// Tau is the LCB exploration weight τ in m − τ·s [1]. Zero means the
	// default; use a tiny positive τ for (almost) pure exploitation.
	Tau float64
	// Xi is the EI/PI improvement margin ξ [0], in objective units.
	Xi float64
	// Acquire, if set, picks the acquisition of each model-based proposal
	// instead of Strategy (for interleaving schemes such as BOBAX).
	Acquire func(Iteration) (acq.Acquisition, error)

	// Surrogate is "gp" [default] or "forest".
	Surrogate string
	// Kernel of the GP: "matern32" [DefaultKernel], "matern52", "se".
	Kernel string
	// GPRestarts is the number of L-BFGS starts of a full GP fit [3].
	GPRestarts int
	// FullRefitEvery: a full GP fit every that many new observations [10];
	// between them one warm-started L-BFGS run. Negative: always full fits.
	FullRefitEvery int
	// ExactPoints is the number of completed trials up to which the GP is
	// exact [gp.DefaultVariancePoints = 256]; beyond it a gp.Subset whose
	// hyperparameters and variance use ExactPoints trials and whose mean
	// uses MeanPoints [gp.DefaultMeanPoints = 1000] (see fit). It also
	// bounds the failed and pruned trials a proposal is conditioned on
	// (stoppedToCondition).
	ExactPoints int
	MeanPoints  int
	// MinNoise is the lower bound of the GP's fitted noise variance in
	// standardized units (gp.Options.MinNoise) [gp's 1e-6]. A deterministic
	// objective drives the fitted noise to this bound, so it acts as the
	// nugget: mlrMBO's DiceKriging learner fixes nugget = 1e-8·var(y), which
	// is MinNoise 1e-8 here (xbo bench pdp-split --preset moosbauer2021).
	MinNoise float64
	// Forest options when Surrogate is "forest" (Seed and Levels are set by
	// the optimizer).
	Forest forest.Options
	// OutputWarp transforms the observed values before the proposal model
	// is fitted to them: "yeo-johnson" (package warp: standardization and a
	// power transform that compresses a heavy tail of bad values) or
	// "none" [DefaultOutputWarp for a plain acquisition on the GP without
	// ξ, "none" otherwise]. Only the asks that search the whole space are
	// warped: a trust-region ask's model sees the values as they are (see
	// DefaultOutputWarp). BOBAX's strategies and ξ work in objective units and
	// refuse a warp. The configuration × budget model (Resource) is warped
	// too, its values at all budgets by one warp. Explanations never see
	// the warp: they fit their own surrogates to the objective.
	OutputWarp string

	// InitialDesign is the design kind: "maximin" [default], "lhs", "sobol",
	// "random".
	InitialDesign string
	// InitialSize is the number of design points [max(4·d, 5)]. Negative
	// means no initial design.
	InitialSize int

	// AcqOptimizer is "random" [default: best of Candidates random points,
	// then pattern search on the best Refine] or "focus" (mlrMBO focus
	// search with FocusRestarts, FocusIterations, FocusPoints [3, 5, 1000]).
	AcqOptimizer string
	Candidates   int // [1500]
	// LocalCandidates are scored beside the random search's uniform
	// candidates: perturbations of the best completed trials (see
	// localCandidates) [defaultLocalCandidates]; negative: none.
	LocalCandidates int
	Refine          int // [acq.DefaultRefine]; negative: none
	FocusRestarts   int
	FocusIterations int
	FocusPoints     int

	// TrustRegion confines proposals to a box around the incumbent
	// (trust.go): "alternate" (every other ask), "always", or "none"
	// [DefaultTrustRegion for a plain acquisition on the GP, "none"
	// otherwise, which is the only value a BOBAX strategy or the forest
	// accepts].
	TrustRegion string

	// Liar is the value pending trials are conditioned on: "believer"
	// [default, the model's mean], "best", "mean" or "worst" (see the
	// package doc).
	Liar string
	// MinDistance is the Euclidean distance in the unit cube within which
	// candidates around pending and failed trials are ruled out [0.01];
	// negative turns it off. A lie lower than the model's own prediction can
	// dig a dip right next to the pending point, which the acquisition
	// would otherwise propose again as a near-copy.
	MinDistance float64

	// DuplicateTolerance is the Euclidean distance in the unit cube within
	// which a model-based proposal counts as a near-copy of an earlier trial
	// (complete, pending, failed or pruned): the acquisition's best
	// candidate outside it is proposed instead, and when none is worth
	// proposing a uniform random configuration, recorded as
	// "random-fallback" with a note: mlrMBO's filter.proposed.points
	// (Bischl et al. 2017), with its tolerance. [1e-4]; negative turns it
	// off. See the package doc and duplicate.go for what it does to a run.
	DuplicateTolerance float64

	// Workers bounds the goroutines one proposal uses (the GP fit and
	// predictions, the acquisition refinement, a forest's trees)
	// [DefaultWorkers, never more than GOMAXPROCS; a forest's default is
	// GOMAXPROCS]. Proposals do not depend on it. 1 leaves the
	// other cores to whatever runs beside the optimizer, e.g. a server's
	// handlers (xbo serve --optimizer-workers).
	Workers int

	// Resource, when set, names the study's budget (what intermediate
	// steps count) and its range, and proposals learn from the values of
	// trials stopped early (multi-fidelity, see multifidelity.go). nil: the
	// curves imply it once a pruner stopped a trial (inferResource).
	Resource *Resource
	// PrunedAsFailed, with no Resource, keeps the intermediate values of
	// pruned trials out of the proposal model: they steer proposals as
	// failed trials do (the behaviour before the resource was inferred,
	// kept for comparison).
	PrunedAsFailed bool

	// Seed makes the run reproducible.
	Seed uint64
	// History is a prior run to resume from (e.g. trials read back from a
	// store). Trials are validated; Params are authoritative (U is
	// recomputed); a zero ID gets a fresh one.
	History []Trial
}

// Optimizer is an ask/tell Bayesian optimizer. Its methods are safe for
// concurrent use; Ask holds a lock while it fits the model.
type Optimizer struct {
	mu      sync.Mutex
	cfg     Config
	s       *space.Space
	kernel  gp.Kernel
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

// warmStart is the warm-start state of one kind of proposal model's GP
// hyperparameters.
type warmStart struct {
	hyper      *gp.Hyper
	lastFullAt int // completed count at the last full fit
	lastFitAt  int // completed count at the last fit of a gp.Subset's hyperparameters
}

// modelKind indexes the per-kind state of the proposal models: 0 for the
// model of the values, 1 for the model of the output-warped values.
func modelKind(warped bool) int {
	if warped {
		return 1
	}
	return 0
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

// fitted is a surrogate fitted on the first `observed` completed trials,
// shared by the proposals of one AskBatch.
type fitted struct {
	observed int
	fidelity int       // points of a configuration × budget model (0: none)
	readAt   int64     // the budget it is read at
	means    []float64 // its means there at the observed configurations
	model    surrogate.Model
	hyper    *gp.Hyper
}

// propose makes the next proposal. A non-nil reuse caches the surrogate fits,
// one per kind of model (modelKind): if it holds a model of the
// current completed trials that model is used again (only the pending-trial
// lies differ), otherwise the fit is stored in it.
func (o *Optimizer) propose(reuses *[2]fitted) (Trial, error) {
	n := len(o.trials)
	rng := o.stream(streamAsk, n)
	if o.cfg.Strategy == AcqRandom {
		return Trial{U: o.s.Sample(rng, 1)[0], Acquisition: AcqRandom}, nil
	}
	if n < len(o.design) {
		return Trial{U: slices.Clone(o.design[n]), Acquisition: AcqInitialDesign}, nil
	}
	x, y := o.data(o.completed)
	// With a named resource, once a trial stopped early, the model is
	// over configuration × budget (multifidelity.go).
	var xz [][]float64
	var yz []float64
	var readAt int64
	var skip []bool // trials the proposal model is not conditioned on
	resource := o.resource()
	if resource != nil {
		var configs [][]float64
		var ok bool
		if xz, yz, configs, readAt, ok = o.fidelityData(resource); ok {
			x = configs
		} else {
			xz = nil
		}
		skip = o.skipPruned(nil)
	}
	fidelity := xz != nil
	// A confined ask's model sees the values unwarped (see
	// DefaultOutputWarp); the noise rule, which needs the fit, can still
	// leave such an ask unconfined.
	warped := !fidelity && o.cfg.OutputWarp != "none" && !o.confinable(n, len(x))
	var reuse *fitted
	if reuses != nil {
		reuse = &reuses[modelKind(warped)]
	}
	var err error
	if warped {
		if y, err = o.warp(y); err != nil {
			return Trial{U: o.s.Sample(rng, 1)[0], Acquisition: AcqRandomFallback, Note: "output warp failed: " + err.Error()}, nil
		}
	}
	if len(x) < 2 {
		return Trial{
			U:           o.s.Sample(rng, 1)[0],
			Acquisition: AcqRandomFallback,
			Note:        fmt.Sprintf("only %d completed trial(s): too few to fit a surrogate", len(x)),
		}, nil
	}
	var model surrogate.Model
	var hyper *gp.Hyper
	switch {
	case reuse != nil && reuse.model != nil && reuse.observed == len(x) && reuse.fidelity == len(xz) && reuse.readAt == readAt:
		model, hyper = reuse.model, reuse.hyper
		if fidelity {
			y = reuse.means
		}
	case fidelity:
		// The model over budgets is fitted to warped values as the
		// whole-space model is (multifidelity.go).
		if yz, err = o.warp(yz); err != nil {
			err = fmt.Errorf("output warp: %w", err)
			break
		}
		model, y, hyper, err = o.fitFidelity(xz, yz, x, resource, readAt)
	default:
		model, hyper, err = o.fit(x, y, &o.warm[modelKind(warped)])
	}
	if err == nil && reuse != nil {
		*reuse = fitted{observed: len(x), fidelity: len(xz), readAt: readAt, means: y, model: model, hyper: hyper}
	}
	if err != nil {
		return Trial{
			U:           o.s.Sample(rng, 1)[0],
			Acquisition: AcqRandomFallback,
			Note:        "surrogate fit failed: " + err.Error(),
		}, nil
	}
	best := slices.Min(y)
	// Numerics must not stop a study: a step that fails on this history
	// gives a random configuration that says why, and the next ask tries
	// again with the next observation.
	fallback := func(step string, err error) (Trial, error) {
		return Trial{
			U:           o.s.Sample(rng, 1)[0],
			Acquisition: AcqRandomFallback,
			Note:        step + " failed: " + err.Error(),
		}, nil
	}
	proposal, err := o.condition(model, x, y, best, skip)
	if err != nil {
		return fallback("conditioning on the pending trials", err)
	}
	a, err := o.acquisition(proposal, x, y, best, n, rng)
	if err != nil {
		return fallback("building the acquisition", err)
	}
	global := o.searchAround(x, y, n)
	maxim := global
	var box *trustBox
	if !fidelity && o.confines(n, len(x), hyper) {
		if box, err = o.trustRegion(proposal, x, y, hyper.Lengthscales); err != nil {
			return fallback("building the trust region", err)
		}
		if rs, ok := maxim.(acq.RandomSearch); ok {
			rs.Extra = append(rs.Extra, box.candidates(o.s, trustCandidates, o.stream(streamTrust, n))...)
			maxim = rs
		}
	}
	// search maximizes a inside the box, and over the whole space (box
	// cleared) when nothing in the box is admissible: all of it near
	// pending or failed trials or, withDone, every level in it evaluated.
	search := func(withDone bool) (acq.Result, error) {
		res, err := maxim.Maximize(o.exclude(a, withDone, box), proposal, o.s, rng)
		if box != nil && (err != nil || math.IsInf(res.Score, -1)) {
			box = nil
			res, err = global.Maximize(o.exclude(a, withDone, nil), proposal, o.s, rng)
		}
		return res, err
	}
	res, err := search(false)
	if err != nil {
		return fallback("maximizing the acquisition", err)
	}
	if _, _, ok := o.nearCopy(res.U); ok {
		// The favourite repeats a trial: the best configuration away from
		// every trial, by the same acquisition (see duplicate.go).
		if again, err := search(true); err == nil && o.worthProposing(a, again.Score) {
			res = again
		}
	}
	if near, dist, ok := o.nearCopy(res.U); ok {
		return Trial{
			U:           o.freshRandom(rng),
			Acquisition: AcqRandomFallback,
			Note:        fmt.Sprintf("the %s proposal was %.3g from trial %d (duplicate tolerance %g): replaced by a random configuration", a.Name(), dist, near, o.cfg.DuplicateTolerance),
		}, nil
	}
	t := Trial{U: res.U, Acquisition: a.Name(), Observed: len(x), Fidelity: fidelity, Warped: warped, Note: res.Warning}
	if box != nil {
		t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + fmt.Sprintf("within the trust region of side %.3g around complete trial %d", box.side, o.completionNumber(box.incumbent))
	}
	if fidelity {
		t.Observed = 0 // the model's data are not the first complete trials
		t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + fmt.Sprintf("model over configuration × %s fitted on %d values of %d trials, read at %s = %d",
			resource.Name, len(xz), len(x), resource.Name, readAt)
	}
	if n, ok := o.policy.(acq.Noter); ok {
		if note := n.Note(); note != "" {
			t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + note
		}
	}
	if hyper != nil {
		t.Hyper = hyper
	}
	return t, nil
}

// Limits of a configuration, so that no setting makes an ask unbounded: the
// initial design is built at once (O(n²) for maximin), and every
// model-based ask scores every candidate.
const (
	MaxInitialSize = 2000
	MaxCandidates  = 100_000
)

// searchAround returns the acquisition search for ask number n: the
// configured one, and for the random search with LocalCandidates perturbations
// of the best completed trials among its candidates (see localCandidates).
func (o *Optimizer) searchAround(x [][]float64, y []float64, n int) acq.Maximizer {
	rs, ok := o.maxim.(acq.RandomSearch)
	if !ok || o.cfg.LocalCandidates <= 0 {
		return o.maxim
	}
	rs.Extra = o.localCandidates(x, y, o.cfg.LocalCandidates, o.stream(streamLocal, n))
	return rs
}

// Local candidates are centred, alternately, on the incumbent and on one of
// the next best trials. Two in three move every coordinate by a Gaussian
// step whose scale is drawn log-uniformly from [localMinStep, localMaxStep]
// of the unit range (a fine polish and a jump to the neighbouring basin both
// get proposed); one in three redraws one or two coordinates uniformly
// (another basin along a few axes). With Matérn-5/2 on Styblinski-Tang
// d = 8 (budget 240, 10 seeds) the median regret went from 55 without local
// candidates to 43 with the Gaussian moves only and to 36 with the redraws;
// Hartmann6's from 8.1e-5 to 4.1e-5; Branin's from 8.4e-6 to 1.7e-5;
// LCBench-phoneme's from 0.31 to 0.24 (`xbo bench peers
// --methods xbo --workers 1 --optimizer '{"local_candidates":-1}'`).
const (
	localTop     = 5
	localMinStep = 0.005
	localMaxStep = 0.3
	// localLevelSwitch is the probability that a categorical coordinate
	// takes a uniformly random level instead of its centre's.
	localLevelSwitch = 0.2
)

// localCandidates draws count perturbations of the best completed trials (in
// minimization units y) in the unit cube, repaired onto the space. Uniform
// candidates alone cover a d-dimensional cube at a spacing of about
// N^(−1/d): 1,500 of them are 0.4 apart per coordinate at d = 8, so the
// climb from the best of them rarely starts in the incumbent's basin. TuRBO
// (Eriksson et al. 2019) samples its candidates in a box around the
// incumbent for the same reason; the spread of step sizes here stands in for
// its adaptive box length.
func (o *Optimizer) localCandidates(x [][]float64, y []float64, count int, rng *rand.Rand) [][]float64 {
	if len(x) == 0 || count <= 0 {
		return nil
	}
	order := make([]int, len(y))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(y[a], y[b]) })
	top := order[:min(localTop, len(order))]
	logMin, logMax := math.Log(localMinStep), math.Log(localMaxStep)
	out := make([][]float64, count)
	for k := range out {
		centre := top[0]
		if k%2 == 1 {
			centre = top[rng.IntN(len(top))]
		}
		u := slices.Clone(x[centre])
		if k%3 == 2 {
			// Redraw one or two coordinates: a jump to another basin along
			// a few axes that a step in every coordinate rarely makes.
			for range 1 + rng.IntN(2) {
				u[rng.IntN(len(u))] = rng.Float64()
			}
			o.s.Repair(u)
			out[k] = u
			continue
		}
		step := math.Exp(logMin + rng.Float64()*(logMax-logMin))
		for j, p := range o.s.Params {
			switch {
			case u[j] == space.Inactive:
				u[j] = rng.Float64() // used only if the move switches it on
			case p.Type == space.Categorical:
				if rng.Float64() < localLevelSwitch {
					u[j] = rng.Float64()
				}
			default:
				u[j] = reflectUnit(u[j] + step*rng.NormFloat64())
			}
		}
		o.s.Repair(u)
		out[k] = u
	}
	return out
}

// reflectUnit folds v into [0, 1] by reflection at the edges, so a step
// that overshoots a bound lands inside rather than piling up on it.
func reflectUnit(v float64) float64 {
	v = math.Mod(math.Abs(v), 2)
	if v > 1 {
		v = 2 - v
	}
	return v
}

// discrete says whether the space has a parameter that takes a grid of
// values: an int, a categorical or a stepped float.
func (o *Optimizer) discrete() bool {
	return slices.ContainsFunc(o.s.Params, func(p space.Param) bool { return !p.Continuous() })
}

// freshRandomTries bounds the random draws freshRandom makes.
const freshRandomTries = 1000

// freshRandom is a random configuration that is not a copy of an earlier
// trial, when one turns up in freshRandomTries draws (on an exhausted grid
// none does, and the last draw is returned).
func (o *Optimizer) freshRandom(rng *rand.Rand) []float64 {
	var u []float64
	for range freshRandomTries {
		u = o.s.Sample(rng, 1)[0]
		if _, _, dup := o.nearCopy(u); !dup {
			return u
		}
	}
	return u
}

// DefaultTrustRegion is Config.TrustRegion's default for a plain acquisition
// on the GP.
const DefaultTrustRegion = "alternate"

// DefaultKernel is the optimizer's GP kernel: Matérn-3/2, the kernel of
// the experiments of Moosbauer et al. 2021. Rougher than Matérn-5/2, it fits
// objectives with kinks and plateaus (tuned models, surrogates of tables)
// without taking them for noise, at some cost on smooth functions
// (docs/peers.md compares the two). Explanations keep Matérn-5/2 (package
// explain), whose bands the calibration benchmark measured.
const DefaultKernel = "matern32"

// DefaultOutputWarp is Config.OutputWarp's default for a plain acquisition
// on the GP. The warp sharpens the model where the values are good when a
// few very bad ones (a diverging configuration) would dominate a
// standardization, which makes the acquisition greedier. Warping the
// whole-space asks and leaving the trust-region asks unwarped was measured
// against warping every ask and warping none (docs/peers.md, "Output
// warping with trust regions"): on LCBench-phoneme over 50 seeds the median
// regret went from 0.176 to 0.022 sequentially and from 0.204 to 0.089 with
// 8 workers (every ask warped: 0.033 and 0.237), at the price of more runs
// of Styblinski-Tang d = 4 ending in the second-best basin (22 of 40
// sequential runs against 12).
const DefaultOutputWarp = "yeo-johnson"

// defaultLocalCandidates is Config.LocalCandidates' default.
const defaultLocalCandidates = 500

// defaultDuplicateTolerance is Config.DuplicateTolerance's default.
const defaultDuplicateTolerance = 1e-4

// nearCopy reports the earliest trial within DuplicateTolerance of u and its
// distance.
func (o *Optimizer) nearCopy(u []float64) (number int, dist float64, ok bool) {
	tol2 := o.cfg.DuplicateTolerance * o.cfg.DuplicateTolerance
	if tol2 == 0 {
		return 0, 0, false
	}
	for i := range o.trials {
		if d2 := squaredDistance(o.trials[i].U, u); d2 <= tol2 {
			return o.trials[i].Number, math.Sqrt(d2), true
		}
	}
	return 0, 0, false
}

// data returns the first t completed trials (by completion order) as
// unit-cube points and minimization-unit values.
func (o *Optimizer) data(t int) ([][]float64, []float64) {
	x := make([][]float64, t)
	y := make([]float64, t)
	sign := o.s.Sign()
	for i := range o.trials {
		tr := &o.trials[i]
		if tr.State == Complete && tr.Completion < t {
			x[tr.Completion] = tr.U
			y[tr.Completion] = sign * tr.Value
		}
	}
	return x, y
}

// fit builds the surrogate on (x, y). With a warm state the GP is
// warm-started from the previous fit of its kind and updates that state;
// with nil (SurrogateAt) it is a full fit seeded by the number of
// observations.
//
// Beyond ExactPoints observations the GP is a gp.Subset (see fitGP), so an
// ask costs the same at T = 5,000 as at T = 1,000 instead of growing as T³.
// Its hyperparameters, fitted on a bounded subset, move little from one ask
// to the next: they are refitted (warm-started) only once the data grew by a
// tenth since the last fit, with all GPRestarts starts once it grew by half,
// and kept fixed in between. The choice depends only on the number of
// observations, and every proposal records the hyperparameters it used, so
// SurrogateOf rebuilds the same model.
func (o *Optimizer) fit(x [][]float64, y []float64, warm *warmStart) (surrogate.Model, *gp.Hyper, error) {
	return o.sur.fit(o, x, y, warm)
}

// fitWarmGP is the GP surrogate's fit (see fit).
func (o *Optimizer) fitWarmGP(x [][]float64, y []float64, warm *warmStart) (surrogate.Model, *gp.Hyper, error) {
	opts := gp.Options{
		Kernel:   o.kernel,
		Levels:   o.levels,
		Restarts: o.cfg.GPRestarts,
		Seed:     o.seedFor(streamFit, len(x)),
		Workers:  o.cfg.Workers,
		MinNoise: o.cfg.MinNoise,
	}
	subset := len(x) > o.cfg.ExactPoints
	refit, full := true, true
	if warm != nil && warm.hyper != nil {
		opts.Init = warm.hyper
		switch {
		case subset && grewLittle(len(x), warm.lastFitAt):
			opts.Fixed, refit, full = warm.hyper, false, false
		case subset && 2*(len(x)-warm.lastFullAt) < warm.lastFullAt,
			!subset && o.cfg.FullRefitEvery > 0 && len(x)-warm.lastFullAt < o.cfg.FullRefitEvery:
			opts.Restarts, full = 1, false
		}
	}
	m, h, err := o.fitGP(x, y, opts)
	if err != nil {
		return nil, nil, err
	}
	if warm != nil {
		warm.hyper = &h
		if refit && subset {
			warm.lastFitAt = len(x)
		}
		if full {
			warm.lastFullAt = len(x)
		}
	}
	return m, &h, nil
}

// grewLittle says whether data of n points grew by less than a tenth since
// a fit on at: a subset GP's hyperparameters are then kept (see fit).
func grewLittle(n, at int) bool { return 10*(n-at) < at }

// fitGP fits the GP to (x, y) with opts: exact up to ExactPoints
// observations, beyond them a gp.Subset whose hyperparameters and variance
// come from ExactPoints of them and whose mean from MeanPoints (the best
// quarter and a space-filling rest).
func (o *Optimizer) fitGP(x [][]float64, y []float64, opts gp.Options) (surrogate.Model, gp.Hyper, error) {
	m, h, err := fitScalableGP(x, y, opts, o.cfg.ExactPoints, o.cfg.MeanPoints)
	if err != nil {
		return nil, gp.Hyper{}, err
	}
	return m, h, nil
}

// subsetPoints are ExactPoints and MeanPoints with their defaults.
func (c Config) subsetPoints() (exact, mean int) {
	exact = cmp.Or(c.ExactPoints, gp.DefaultVariancePoints)
	return exact, cmp.Or(c.MeanPoints, max(gp.DefaultMeanPoints, exact))
}

// conditionable is a fitted GP that pending points can be added to.
type conditionable interface {
	surrogate.Model
	ConditionOn(xs [][]float64, ys []float64) (surrogate.Model, error)
}

// fitScalableGP fits an exact GP up to exact observations and a gp.Subset
// beyond (hyperparameters and variance from exact of them, the mean from
// mean of them), so a long study's fit costs the same at any length.
func fitScalableGP(x [][]float64, y []float64, opts gp.Options, exact, mean int) (conditionable, gp.Hyper, error) {
	if len(x) > exact {
		s, err := gp.FitSubset(context.Background(), x, y, gp.SubsetOptions{Options: opts, MeanPoints: mean, VariancePoints: exact})
		if err != nil {
			return nil, gp.Hyper{}, err
		}
		return s, s.Hyper(), nil
	}
	g, err := gp.Fit(x, y, opts)
	if err != nil {
		return nil, gp.Hyper{}, err
	}
	return g, g.Hyper(), nil
}

// forestOptions are the forest's settings for a fit on n observations.
func (o *Optimizer) forestOptions(n int) forest.Options {
	fo := o.cfg.Forest
	fo.Levels = o.levels
	fo.Seed = o.seedFor(streamFit, n)
	return fo
}

// condition adds the pending, failed and pruned trials to the proposal
// model with their lies (see the package doc), except those skip marks (nil
// for none: with a resource, the trials a multi-fidelity model was fitted on
// and the pruned ones; see multifidelity.go).
func (o *Optimizer) condition(model surrogate.Model, x [][]float64, y []float64, best float64, skip []bool) (surrogate.Model, error) {
	var px [][]float64
	var failed []bool
	var stopped []int // failed and pruned trials, in trial order
	for i := range o.trials {
		if skip != nil && skip[i] {
			continue
		}
		switch o.trials[i].State {
		case Pending:
			px = append(px, o.trials[i].U)
			failed = append(failed, false)
		case Failed, Pruned:
			stopped = append(stopped, i)
		}
	}
	for _, i := range o.stoppedToCondition(stopped, x, y) {
		px = append(px, o.trials[i].U)
		failed = append(failed, true)
	}
	if len(px) == 0 {
		return model, nil
	}
	lies, err := o.liar(model, px, y, best)
	if err != nil {
		return nil, err
	}
	worst := slices.Max(y)
	for i := range lies {
		if failed[i] {
			lies[i] = worst
		}
	}
	c, err := o.sur.condition(o, model, x, y, px, lies)
	if err != nil {
		return nil, fmt.Errorf("conditioning on %d pending trials: %w", len(px), err)
	}
	return c, nil
}

// stoppedToCondition returns which of the failed and pruned trials stopped
// (indices into o.trials, in trial order) a proposal model is conditioned
// on: all of them up to ExactPoints, else ExactPoints of them, half the
// nearest to the incumbent (the configuration of x with the least y, where
// the local candidates and the trust region look) and half the latest of
// the rest (where the search has just been); with no complete trial in x,
// the latest. Conditioning on k points costs O(k³), and under a median
// pruner most trials of a long study are pruned (BenchmarkAskPruned).
// Every stopped trial still keeps proposals MinDistance away (exclude) and
// is never proposed again (the duplicate check).
func (o *Optimizer) stoppedToCondition(stopped []int, x [][]float64, y []float64) []int {
	limit := o.cfg.ExactPoints
	if len(stopped) <= limit {
		return stopped
	}
	if len(x) == 0 || len(x) != len(y) {
		// No incumbent to be near: the latest.
		return stopped[len(stopped)-limit:]
	}
	incumbent := x[floats.MinIdx(y)]
	// Positions in stopped, nearest first.
	dist := make([]float64, len(stopped))
	byDistance := make([]int, len(stopped))
	for j, i := range stopped {
		dist[j] = squaredDistance(o.trials[i].U, incumbent)
		byDistance[j] = j
	}
	slices.SortStableFunc(byDistance, func(a, b int) int { return cmp.Compare(dist[a], dist[b]) })
	keep := make([]bool, len(stopped))
	for _, j := range byDistance[:limit/2] {
		keep[j] = true
	}
	for j, kept := len(stopped)-1, limit/2; kept < limit; j-- {
		if !keep[j] {
			keep[j] = true
			kept++
		}
	}
	chosen := make([]int, 0, limit)
	for j, i := range stopped {
		if keep[j] {
			chosen = append(chosen, i)
		}
	}
	return chosen
}

func (o *Optimizer) acquisition(model surrogate.Model, x [][]float64, y []float64, best float64, number int, rng *rand.Rand) (acq.Acquisition, error) {
	if o.cfg.Acquire != nil {
		a, err := o.cfg.Acquire(Iteration{Number: number, Space: o.s, Model: model, Best: best, X: x, Y: y, Rng: rng})
		if err != nil {
			return nil, fmt.Errorf("acquisition chooser: %w", err)
		}
		if a == nil {
			return nil, errors.New("acquisition chooser returned nil")
		}
		return a, nil
	}
	tau := o.cfg.Tau
	return acq.New(o.cfg.Strategy, acq.Params{Best: best, Xi: o.cfg.Xi, Tau: &tau})
}

// exclude wraps a with the MinDistance rule around pending and failed
// trials, and with the trust region's walls when box is not nil.
func (o *Optimizer) exclude(a acq.Acquisition, withDone bool, box *trustBox) acq.Acquisition {
	var pts, done [][]float64
	for i := range o.trials {
		switch o.trials[i].State {
		case Pending, Failed, Pruned:
			if o.cfg.MinDistance > 0 {
				pts = append(pts, o.trials[i].U)
			}
		}
		// With withDone every trial (evaluated, pending, failed or pruned)
		// is excluded within the duplicate tolerance too, whatever
		// MinDistance is (see propose: only after a first answer was a
		// copy, because walls around every evaluated point would stop the
		// gradient climb that refines the incumbent in continuous spaces).
		if withDone && o.cfg.DuplicateTolerance > 0 {
			done = append(done, o.trials[i].U)
		}
	}
	if len(pts) == 0 && len(done) == 0 && box == nil {
		return a
	}
	return excluding{Acquisition: a, points: pts, r2: o.cfg.MinDistance * o.cfg.MinDistance,
		done: done, doneR2: o.cfg.DuplicateTolerance * o.cfg.DuplicateTolerance, box: box}
}

// excluding scores −Inf within √r2 of any of points, so a maximizer never
// picks them while anything else is available.
type excluding struct {
	acq.Acquisition
	points [][]float64
	r2     float64
	// done are the evaluated configurations, excluded within √doneR2 (the
	// duplicate tolerance).
	done   [][]float64
	doneR2 float64
	// box, if not nil, is the trust region: everything outside is excluded.
	box *trustBox
}

// Pointwise implements acq.Pointwise: the exclusion depends on the point
// only, so the wrapper is pointwise when the wrapped acquisition is.
func (e excluding) Pointwise() bool {
	p, ok := e.Acquisition.(acq.Pointwise)
	return ok && p.Pointwise()
}

func (e excluding) Score(m surrogate.Model, x [][]float64, out []float64) error {
	if err := e.Acquisition.Score(m, x, out); err != nil {
		return err
	}
	for i, c := range x {
		if e.excluded(c) {
			out[i] = math.Inf(-1)
		}
	}
	return nil
}

// Differentiable implements acq.Differentiable: the exclusion is a hard
// wall (−Inf inside), which a climb's line search never crosses, so the
// wrapper is differentiable wherever the wrapped acquisition is.
func (e excluding) Differentiable() bool {
	d, ok := e.Acquisition.(acq.Differentiable)
	return ok && d.Differentiable()
}

// ScoreGradient implements acq.Differentiable.
func (e excluding) ScoreGradient(m surrogate.Gradienter, x, grad []float64) (float64, error) {
	d, ok := e.Acquisition.(acq.Differentiable)
	if !ok || !d.Differentiable() {
		return 0, fmt.Errorf("acquisition %q has no gradient", e.Name())
	}
	if e.excluded(x) {
		clear(grad)
		return math.Inf(-1), nil
	}
	return d.ScoreGradient(m, x, grad)
}

// Bounded implements acq.Bounded: the wrapped bound, −Inf where excluded.
func (e excluding) Bounded() bool {
	b, ok := e.Acquisition.(acq.Bounded)
	return ok && b.Bounded()
}

// ScoreBound implements acq.Bounded.
func (e excluding) ScoreBound(m surrogate.VarianceBounder, x [][]float64, out []float64) error {
	b, ok := e.Acquisition.(acq.Bounded)
	if !ok || !b.Bounded() {
		return fmt.Errorf("acquisition %q has no bound", e.Name())
	}
	if err := b.ScoreBound(m, x, out); err != nil {
		return err
	}
	for i, c := range x {
		if e.excluded(c) {
			out[i] = math.Inf(-1)
		}
	}
	return nil
}

func (e excluding) excluded(c []float64) bool {
	if e.box != nil && !e.box.contains(c) {
		return true
	}
	for _, p := range e.points {
		if squaredDistance(c, p) < e.r2 {
			return true
		}
	}
	for _, p := range e.done {
		if squaredDistance(c, p) <= e.doneR2 {
			return true
		}
	}
	return false
}

// squaredDistance is the squared Euclidean distance of two unit-cube points.
func squaredDistance(a, b []float64) float64 {
	var d2 float64
	for j, v := range a {
		d2 += (v - b[j]) * (v - b[j])
	}
	return d2
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

// SurrogateAt rebuilds the surrogate fitted on the first t completed trials
// (in completion order), in the proposal model's units (values ×
// Space.Sign(), warped as Config.OutputWarp says), without pending-trial
// lies: the model behind an unconfined proposal made after t observations
// (a confined one's model is unwarped: SurrogateOf). When a
// recorded proposal of that model was made from exactly those t observations with a GP,
// its recorded hyperparameters are reused, so the model is the one that
// proposed it; otherwise the GP is fitted afresh with GPRestarts starts and
// a seed that depends only on Config.Seed and t.
func (o *Optimizer) SurrogateAt(t int) (surrogate.Model, error) {
	// The trials are copied under the lock and the model is fitted outside
	// it, so parallel explainers (and Ask) do not queue behind each other's
	// fits. The fit reads only the immutable configuration, so the model is
	// the same as with the lock held.
	o.mu.Lock()
	var hyper *gp.Hyper
	warped := o.cfg.OutputWarp != "none"
	for i := range o.trials {
		if tr := &o.trials[i]; tr.Hyper != nil && !tr.Fidelity && tr.Observed == t && tr.Warped == warped {
			h := tr.Hyper.Clone()
			hyper = &h
			break
		}
	}
	x, y, err := o.snapshot(t)
	o.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("opt: surrogate at %d: %w", t, err)
	}
	m, err := o.fitSnapshot(x, y, hyper, warped)
	if err != nil {
		return nil, fmt.Errorf("opt: surrogate at %d: %w", t, err)
	}
	return m, nil
}

// snapshot copies the data of the first t completed trials; o.mu must be held.
func (o *Optimizer) snapshot(t int) ([][]float64, []float64, error) {
	if t < 1 || t > o.completed {
		return nil, nil, fmt.Errorf("want 1 ≤ t ≤ %d completed trials", o.completed)
	}
	x, y := o.data(t)
	for i := range x {
		x[i] = slices.Clone(x[i])
	}
	return x, y, nil
}

// fitSnapshot fits the surrogate of SurrogateAt/SurrogateOf on copied data;
// it touches no mutable optimizer state, so it runs without o.mu.
func (o *Optimizer) fitSnapshot(x [][]float64, y []float64, hyper *gp.Hyper, warped bool) (surrogate.Model, error) {
	if warped {
		var err error
		if y, err = o.warp(y); err != nil {
			return nil, err
		}
	}
	return o.sur.rebuild(o, x, y, hyper)
}

// SurrogateOf returns the surrogate (before pending-trial lies) that proposed
// the trial with the given id, rebuilt from its recorded observations and
// hyperparameters; design and random trials have none.
func (o *Optimizer) SurrogateOf(id int64) (surrogate.Model, error) {
	o.mu.Lock()
	i, ok := o.byID[id]
	if !ok {
		o.mu.Unlock()
		return nil, fmt.Errorf("opt: no trial with id %d", id)
	}
	tr := o.trials[i].Clone()
	if tr.Fidelity {
		o.mu.Unlock()
		return nil, fmt.Errorf("opt: trial %d was proposed by the configuration × budget model, from intermediate values not kept as of then", id)
	}
	if tr.Observed == 0 {
		o.mu.Unlock()
		return nil, fmt.Errorf("opt: trial %d was proposed by %q, not by a surrogate", id, tr.Acquisition)
	}
	x, y, err := o.snapshot(tr.Observed)
	o.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("opt: surrogate of trial %d: %w", id, err)
	}
	m, err := o.fitSnapshot(x, y, tr.Hyper, tr.Warped)
	if err != nil {
		return nil, fmt.Errorf("opt: surrogate of trial %d: %w", id, err)
	}
	return m, nil
}

// Config returns the resolved configuration (defaults filled in, without
// History).
func (o *Optimizer) Config() Config { return o.cfg }
