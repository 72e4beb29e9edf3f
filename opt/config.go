package opt

import (
	"cmp"

	"xbo/acq"
	"xbo/forest"
	"xbo/gp"
	"xbo/internal/parallel"
	"xbo/space"
)

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
	// SE is what LCB's s is the sd of: SELatent, the latent function f
	// [default], or SEPredictive, a new observation of it (f plus the GP's
	// fitted noise), mlrMBO's convention (see acq.LCB). Only the lcb
	// strategy on the GP accepts SEPredictive.
	SE string
	// Xi is the EI/PI improvement margin ξ [0], in objective units.
	Xi float64
	// Acquire, if set, picks the acquisition of each model-based proposal
	// instead of Strategy (for interleaving schemes such as BOBAX).
	Acquire func(Iteration) (acq.Acquisition, error)

	// Surrogate is "gp" [default] or "forest".
	Surrogate string
	// Kernel of the GP: "matern32" [DefaultKernel], "matern52", "se".
	Kernel string
	// LengthscalePrior is the prior on the GP's lengthscales:
	// "none" (maximum likelihood), "inverse-squared" or
	// "dimension-scaled" (gp.ParsePrior) [DefaultLengthscalePrior; "none"
	// for ParEGO and EHVI, i.e. with several objectives or constraints].
	LengthscalePrior string
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

// Limits of a configuration, so that no setting makes an ask unbounded: the
// initial design is built at once (O(n²) for maximin), and every
// model-based ask scores every candidate.
const (
	MaxInitialSize = 2000
	MaxCandidates  = 100_000
)

// Config.SE's values.
const (
	SELatent     = "latent"
	SEPredictive = "predictive"
)

// DefaultTrustRegion is Config.TrustRegion's default for a plain acquisition
// on the GP.
const DefaultTrustRegion = "alternate"

// DefaultLengthscalePrior is Config.LengthscalePrior's default: maximum
// likelihood lets a parameter whose effect the trials cannot yet resolve
// take a lengthscale at the bound, and proposals then leave it wherever the
// initial design put it; the inverse-squared prior (Optuna's GPSampler's)
// keeps every lengthscale finite. docs/research/peers.md, "A prior on the
// lengthscales", measures what it changes.
const DefaultLengthscalePrior = "inverse-squared"

// DefaultKernel is the optimizer's GP kernel: Matérn-3/2, the kernel of
// the experiments of Moosbauer et al. 2021. Rougher than Matérn-5/2, it fits
// objectives with kinks and plateaus (tuned models, surrogates of tables)
// without taking them for noise, at some cost on smooth functions
// (docs/research/peers.md compares the two). Explanations keep Matérn-5/2 (package
// explain), whose bands the calibration benchmark measured.
const DefaultKernel = "matern32"

// DefaultOutputWarp is Config.OutputWarp's default for a plain acquisition
// on the GP. The warp sharpens the model where the values are good when a
// few very bad ones (a diverging configuration) would dominate a
// standardization, which makes the acquisition greedier. Warping the
// whole-space asks and leaving the trust-region asks unwarped was measured
// against warping every ask and warping none (docs/research/peers.md, "Output
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

// subsetPoints are ExactPoints and MeanPoints with their defaults.
func (c Config) subsetPoints() (exact, mean int) {
	exact = cmp.Or(c.ExactPoints, gp.DefaultVariancePoints)
	return exact, cmp.Or(c.MeanPoints, max(gp.DefaultMeanPoints, exact))
}
