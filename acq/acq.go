// Package acq holds acquisition functions for Bayesian optimization and the
// optimizers that maximize them over a search space.
//
// Sign convention: every Acquisition returns a utility, HIGHER IS BETTER, for
// an objective that is MINIMIZED. Callers that maximize (space.Maximize) flip
// the sign of the observations before fitting the surrogate (package opt does
// this with space.Sign), so the acquisitions never need to know the direction.
//
// Formulas, with m and s the posterior mean and standard deviation of the
// latent objective at a candidate x, y* the incumbent (best observed value) and
// Φ, φ the standard normal CDF and density:
//
//   - EI, expected improvement (Jones, Schonlau & Welch 1998; the EI of
//     Moosbauer et al. 2022, section 2): with z = (y* − ξ − m)/s,
//     EI(x) = (y* − ξ − m)·Φ(z) + s·φ(z), and max(y* − ξ − m, 0) when s = 0.
//   - PI, probability of improvement: Φ(z), and 1{m < y* − ξ} when s = 0.
//   - LCB, lower confidence bound cb = m − τ·s (Croppi 2021, "Explaining
//     sequential model-based optimization", section 3, and the LCB variants
//     of Moosbauer et al. 2022): utility −cb = τ·s − m.
//   - PVAR, posterior variance s² (pure exploration; Moosbauer et al. 2022,
//     section 5).
//
// The information-based acquisitions of BOBAX (EIG_PDP; Moosbauer,
// Casalicchio, Lindauer & Bischl 2022, "Improving accuracy of
// interpretability measures in hyperparameter optimization via Bayesian
// algorithm execution") plug in through the same Acquisition interface.
//
// Acquisition optimizers (optimize.go): best of N uniform random candidates
// (Moosbauer et al. 2022 use N = 1500) followed by a local refinement of the
// best few, and mlrMBO's focus search (Croppi 2021, table 3: restarts,
// iterations, points), both respecting integer, categorical and conditional
// parameters through space.Repair. Two things make them cheap on a GP without
// changing what they find:
//
//   - branch and bound over the candidates (prune.go): every closed-form
//     acquisition grows with the posterior variance (PI: or is bounded by 1),
//     so an upper bound on the variance that costs no O(n²) solve
//     (surrogate.VarianceBounder) bounds the utility, and only candidates
//     whose bound reaches the best exact scores are scored exactly;
//   - the refinement climbs the acquisition's gradient (gradient.go) on the
//     float parameters, by projected gradient ascent with Barzilai–Borwein
//     steps and Armijo backtracking (the spectral projected gradient of
//     Birgin, Martínez & Raydan 2000, "Nonmonotone spectral projected
//     gradient methods on convex sets", SIAM J. Optim. 10(4), here with a
//     monotone line search), alternating with int and categorical moves.
//     gonum has no box-constrained optimizer, hence this one. Acquisitions
//     or models without gradients use a batched compass (pattern) search.
package acq

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"xbo/surrogate"
)

// Acquisition scores candidate points given a fitted surrogate. Scores are
// utilities: higher is better, for a minimized objective.
type Acquisition interface {
	// Name is a short lower-case identifier ("ei", "lcb", ...), recorded in
	// trial histories as the reason a configuration was proposed.
	Name() string
	// Score writes the utility of every row of x (unit-cube encodings) into
	// out, which must have len(x) elements.
	Score(m surrogate.Model, x [][]float64, out []float64) error
}

// Pointwise is implemented by acquisitions whose score of a point depends on
// that point and the surrogate only — not on the other points of the batch
// (as a min-max normalization would) nor on a random stream — so a search
// may reuse a score instead of predicting the point again.
type Pointwise interface {
	Pointwise() bool
}

func isPointwise(a Acquisition) bool {
	p, ok := a.(Pointwise)
	return ok && p.Pointwise()
}

// Pointwise implements Pointwise.
func (EI) Pointwise() bool { return true }

// Pointwise implements Pointwise.
func (PI) Pointwise() bool { return true }

// Pointwise implements Pointwise.
func (LCB) Pointwise() bool { return true }

// Pointwise implements Pointwise.
func (PVAR) Pointwise() bool { return true }

// EI is expected improvement over the incumbent Best (the lowest observed
// value in the surrogate's units) by at least Xi (ξ ≥ 0, default 0).
type EI struct {
	Best float64
	Xi   float64
}

// PI is the probability of improving on Best by at least Xi.
type PI struct {
	Best float64
	Xi   float64
}

// LCB is the lower confidence bound m − Tau·s, scored as its negative so that
// higher is better. Tau = 0 is pure exploitation of the mean; the zero value
// therefore does NOT mean the default: use New or set Tau (default 1).
//
// s is the sd of the latent function, √v, unless NoiseVariance σ_n² > 0
// makes it the sd of a new observation, √(v + σ_n²): mlrMBO's convention,
// whose DiceKriging learner predicts with the nugget included (Bischl et
// al. 2017; Roustant, Ginsbourger and Deville 2012). Near the data the
// latent sd shrinks to 0 while the observation sd stays at the noise, so
// with a large τ the two bounds rank points differently.
type LCB struct {
	Tau           float64
	NoiseVariance float64
}

// PVAR is the posterior variance s², for pure exploration.
type PVAR struct{}

// DefaultTau is the LCB trade-off used when none is given (Croppi 2021 uses 1).
const DefaultTau = 1.0

// Name implements Acquisition.
func (EI) Name() string { return "ei" }

// Name implements Acquisition.
func (PI) Name() string { return "pi" }

// Name implements Acquisition.
func (LCB) Name() string { return "lcb" }

// Name implements Acquisition.
func (PVAR) Name() string { return "pvar" }

// Params configures New.
type Params struct {
	// Best is the incumbent for EI and PI (lowest observed value).
	Best float64
	// Xi is the improvement margin of EI and PI (default 0).
	Xi float64
	// Tau is the LCB exploration weight; nil means DefaultTau.
	Tau *float64
	// NoiseVariance σ_n² ≥ 0 is added to the model's variance in LCB's s
	// (see LCB); 0 keeps the latent sd.
	NoiseVariance float64
}

// New builds an acquisition from its name: "ei", "pi", "lcb" or "pvar".
func New(name string, p Params) (Acquisition, error) {
	if math.IsNaN(p.Best) || math.IsInf(p.Best, 0) {
		if n := strings.ToLower(name); n == "ei" || n == "pi" {
			return nil, fmt.Errorf("acq: %s needs a finite incumbent, got %v", n, p.Best)
		}
	}
	if p.Xi < 0 || math.IsNaN(p.Xi) || math.IsInf(p.Xi, 0) {
		return nil, fmt.Errorf("acq: xi must be finite and ≥ 0, got %v", p.Xi)
	}
	tau := DefaultTau
	if p.Tau != nil {
		tau = *p.Tau
	}
	if tau < 0 || math.IsNaN(tau) || math.IsInf(tau, 0) {
		return nil, fmt.Errorf("acq: tau must be finite and ≥ 0, got %v", tau)
	}
	if p.NoiseVariance < 0 || math.IsNaN(p.NoiseVariance) || math.IsInf(p.NoiseVariance, 0) {
		return nil, fmt.Errorf("acq: noise variance must be finite and ≥ 0, got %v", p.NoiseVariance)
	}
	if p.NoiseVariance > 0 && !strings.EqualFold(name, "lcb") {
		return nil, fmt.Errorf("acq: a noise variance applies to lcb only, not %q", name)
	}
	switch strings.ToLower(name) {
	case "ei":
		return EI{Best: p.Best, Xi: p.Xi}, nil
	case "pi":
		return PI{Best: p.Best, Xi: p.Xi}, nil
	case "lcb":
		return LCB{Tau: tau, NoiseVariance: p.NoiseVariance}, nil
	case "pvar":
		return PVAR{}, nil
	}
	return nil, fmt.Errorf("acq: unknown acquisition %q (want ei, pi, lcb or pvar)", name)
}

// predict runs the model and checks its output; it is shared by every
// closed-form acquisition.
func predict(m surrogate.Model, x [][]float64, out []float64) (mean, variance []float64, err error) {
	if m == nil {
		return nil, nil, errors.New("nil surrogate")
	}
	return predictWith(m.Predict, x, out)
}

// predictWith checks x against out, calls predictFn for the mean and the
// variance (or a bound on it) of every point, refuses NaN and clamps
// negative variances to 0.
func predictWith(predictFn func(x [][]float64, mean, variance []float64) error, x [][]float64, out []float64) (mean, variance []float64, err error) {
	if len(out) != len(x) {
		return nil, nil, fmt.Errorf("output has %d slots for %d points", len(out), len(x))
	}
	mean = make([]float64, len(x))
	variance = make([]float64, len(x))
	if len(x) == 0 {
		return mean, variance, nil
	}
	if err := predictFn(x, mean, variance); err != nil {
		return nil, nil, err
	}
	for i := range mean {
		if math.IsNaN(mean[i]) || math.IsNaN(variance[i]) {
			return nil, nil, fmt.Errorf("surrogate predicted NaN at point %d", i)
		}
		if variance[i] < 0 {
			// Round-off in m(x) − kᵀK⁻¹k can go slightly negative.
			variance[i] = 0
		}
	}
	return mean, variance, nil
}

// NormCDF is the standard normal distribution function Φ, through erfc so
// that the lower tail keeps its relative accuracy.
func NormCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// NormPDF is the standard normal density φ.
func NormPDF(z float64) float64 { return math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi) }

// ExpectedImprovement is EI for one Gaussian prediction N(mean, sd²) below
// best − xi. It is never negative.
func ExpectedImprovement(mean, sd, best, xi float64) float64 {
	gap := best - xi - mean
	if !(sd > 0) {
		return math.Max(gap, 0)
	}
	z := gap / sd
	ei := gap*NormCDF(z) + sd*NormPDF(z)
	// For z ≪ 0 the two terms nearly cancel; round-off must not make EI negative.
	return math.Max(ei, 0)
}

// ProbabilityOfImprovement is PI for one Gaussian prediction.
func ProbabilityOfImprovement(mean, sd, best, xi float64) float64 {
	gap := best - xi - mean
	if !(sd > 0) {
		if gap > 0 {
			return 1
		}
		return 0
	}
	return NormCDF(gap / sd)
}

// Score implements Acquisition.
func (a EI) Score(m surrogate.Model, x [][]float64, out []float64) error {
	mean, variance, err := predict(m, x, out)
	if err != nil {
		return fmt.Errorf("acq: ei: %w", err)
	}
	a.fromMoments(mean, variance, out)
	return nil
}

// fromMoments writes EI at every (mean, variance) into out; ScoreBound
// passes a variance bound, EI growing with s.
func (a EI) fromMoments(mean, variance, out []float64) {
	for i := range out {
		out[i] = ExpectedImprovement(mean[i], math.Sqrt(variance[i]), a.Best, a.Xi)
	}
}

// Score implements Acquisition.
func (a PI) Score(m surrogate.Model, x [][]float64, out []float64) error {
	mean, variance, err := predict(m, x, out)
	if err != nil {
		return fmt.Errorf("acq: pi: %w", err)
	}
	for i := range out {
		out[i] = ProbabilityOfImprovement(mean[i], math.Sqrt(variance[i]), a.Best, a.Xi)
	}
	return nil
}

// Score implements Acquisition.
func (a LCB) Score(m surrogate.Model, x [][]float64, out []float64) error {
	if err := a.validate(); err != nil {
		return err
	}
	mean, variance, err := predict(m, x, out)
	if err != nil {
		return fmt.Errorf("acq: lcb: %w", err)
	}
	a.fromMoments(mean, variance, out)
	return nil
}

// validate refuses a τ or σ_n² that would make τ·s − m NaN or infinite: New
// checks them, a literal LCB is checked when it scores.
func (a LCB) validate() error {
	if !(a.Tau >= 0) || math.IsInf(a.Tau, 0) {
		return fmt.Errorf("acq: lcb: tau must be finite and ≥ 0, got %v", a.Tau)
	}
	if !(a.NoiseVariance >= 0) || math.IsInf(a.NoiseVariance, 0) {
		return fmt.Errorf("acq: lcb: noise variance must be finite and ≥ 0, got %v", a.NoiseVariance)
	}
	return nil
}

// fromMoments writes τ·s − m at every (mean, variance) into out; ScoreBound
// passes a variance bound, τ·s − m growing with s.
func (a LCB) fromMoments(mean, variance, out []float64) {
	for i := range out {
		out[i] = a.Tau*math.Sqrt(variance[i]+a.NoiseVariance) - mean[i]
	}
}

// Score implements Acquisition.
func (PVAR) Score(m surrogate.Model, x [][]float64, out []float64) error {
	_, variance, err := predict(m, x, out)
	if err != nil {
		return fmt.Errorf("acq: pvar: %w", err)
	}
	copy(out, variance)
	return nil
}
