package shapley

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"xbo/space"
)

// Method selects the estimator.
type Method string

// Estimators (see the package doc). The empty Method means Exact when the
// dimension is at most Options.MaxExactDim and MonteCarlo beyond.
const (
	Exact      Method = "exact"
	MonteCarlo Method = "mc"
	Baseline   Method = "baseline"
)

// Defaults.
const (
	DefaultMaxExactDim = 12
	DefaultSamples     = 1000
	DefaultLevel       = 0.95
	DefaultBatchSize   = 2048
	// maxBaselineExactDim bounds 2^p single evaluations of baseline Shapley.
	maxBaselineExactDim = 20
	maxMonteCarloDim    = 64
)

// ParseMethod reads "exact", "mc" (or "montecarlo") and "baseline"; "" and
// "auto" give the automatic choice.
func ParseMethod(s string) (Method, error) {
	switch s {
	case "", "auto":
		return "", nil
	case "exact":
		return Exact, nil
	case "mc", "montecarlo", "monte-carlo", "permutation":
		return MonteCarlo, nil
	case "baseline":
		return Baseline, nil
	}
	return "", fmt.Errorf("shapley: unknown method %q (want exact, mc or baseline)", s)
}

// Options configures Explain. The zero value works: automatic method, 1000·p
// Latin-hypercube background on the continuous unit cube, K = 1000.
type Options struct {
	Method Method
	// Samples is K, the Monte Carlo draws per parameter (default 1000).
	Samples int
	// MaxSamples > Samples turns on checkSampleSize with greedy growth: K
	// doubles (keeping the draws made so far) until the efficiency error is
	// below the smallest gap between two parameters for every output, or K
	// reaches MaxSamples.
	MaxSamples int
	// Background replaces the drawn background (unit-cube rows).
	Background [][]float64
	// BackgroundSize is the number of points drawn (default 1000·p).
	BackgroundSize int
	// LocalRadius > 0 draws the background in a box of this half-width
	// around the explicand instead of over the whole space.
	LocalRadius float64
	// Baseline is the configuration θ' of baseline Shapley (unit cube).
	Baseline []float64
	// Space, when set, supplies parameter names, repairs drawn points onto
	// ints/categoricals and resolves conditional parameters.
	Space *space.Space
	// Names overrides the parameter names (default: Space or x1..xp).
	Names []string
	// MaxExactDim is the largest p for the exact estimator (default 12).
	MaxExactDim int
	// Level of the confidence intervals (default 0.95).
	Level float64
	// Seed drives every random draw.
	Seed uint64
	// Workers evaluating batches in parallel (default GOMAXPROCS).
	Workers int
	// Progress, if set, is called by ExplainPath after each explained
	// iteration with the number done so far and the total (serialized).
	Progress func(done, total int)
	// BatchSize is the number of points per Eval call (default 2048).
	BatchSize int
}

// Attribution is the decomposition of one output of the explained function.
type Attribution struct {
	Output string `json:"output"`
	// Prediction is f(θ̃), Average the background mean v(∅) and Payout their
	// difference, the quantity the values share out (efficiency axiom).
	Prediction float64   `json:"prediction"`
	Average    float64   `json:"average"`
	Payout     float64   `json:"payout"`
	Phi        []float64 `json:"phi"`
	// StdErr is σ̂_j/√K (Monte Carlo only); Lower and Upper bound the t-based
	// interval at the explanation's level (equal to Phi for exact methods).
	StdErr []float64 `json:"std_err,omitempty"`
	Lower  []float64 `json:"lower"`
	Upper  []float64 `json:"upper"`
	// EfficiencyError is |Σ_j φ_j − payout|; MinGap is the smallest
	// |φ_j − φ_l|, j ≠ l, over the pairs the check ranks (absent when there
	// is none); SampleSizeOK is the check of thesis appendix C,
	// EfficiencyError < MinGap (always true for exact). Ties counts the
	// pairs of a Monte Carlo estimate the check leaves out (tied): two
	// values whose intervals both contain 0. No K separates such a pair when
	// the model ignores both parameters (their values differ by rounding),
	// so the check orders the others, and their order is reported as
	// unresolved instead.
	EfficiencyError float64  `json:"efficiency_error"`
	MinGap          *float64 `json:"min_gap,omitempty"`
	SampleSizeOK    bool     `json:"sample_size_ok"`
	Ties            int      `json:"ties,omitempty"`
}

// SampleSizeStep records one round of checkSampleSize.
type SampleSizeStep struct {
	Samples         int       `json:"samples"`
	EfficiencyError []float64 `json:"efficiency_error"`
	MinGap          []float64 `json:"min_gap"`
	OK              bool      `json:"ok"`
}

// Explanation holds the Shapley values of one configuration.
type Explanation struct {
	Method Method    `json:"method"`
	Params []string  `json:"params"`
	Point  []float64 `json:"point"` // unit-cube explicand
	// Tau is the confidence-bound weight when the function was an LCBFunc;
	// SEWeight is then the coefficient of φ(se) in φ(cb) = φ(m) + w·φ(se)
	// (−τ for a minimized objective's lower bound, +τ for a maximized one's
	// upper bound) and Formula says which bound cb is.
	Tau            *float64         `json:"tau,omitempty"`
	SEWeight       *float64         `json:"se_weight,omitempty"`
	Formula        string           `json:"formula,omitempty"`
	Samples        int              `json:"samples,omitempty"`
	BackgroundSize int              `json:"background_size"`
	LocalRadius    float64          `json:"local_radius,omitempty"`
	Level          float64          `json:"level"`
	Outputs        []Attribution    `json:"outputs"`
	SampleSize     []SampleSizeStep `json:"sample_size,omitempty"`
}

// Output returns the attribution of the named output.
func (e *Explanation) Output(name string) (*Attribution, bool) {
	for i := range e.Outputs {
		if e.Outputs[i].Output == name {
			return &e.Outputs[i], true
		}
	}
	return nil, false
}

// prepared is an explanation problem after validation.
type prepared struct {
	f          Function
	names      []string
	x          []float64
	background [][]float64
	method     Method
	samples    int
	maxSamples int
	level      float64
	seed       uint64
	workers    int
	batch      int
	mix        *mixer
	local      float64
}

func prepare(f Function, x []float64, opt Options) (*prepared, error) {
	if f == nil {
		return nil, errors.New("shapley: nil function")
	}
	p := f.Dim()
	if p < 1 {
		return nil, fmt.Errorf("shapley: function dimension %d", p)
	}
	if len(f.Outputs()) == 0 {
		return nil, errors.New("shapley: function has no outputs")
	}
	if opt.Space != nil && opt.Space.Dim() != p {
		return nil, fmt.Errorf("shapley: space has %d parameters, function %d", opt.Space.Dim(), p)
	}
	pt, err := checkPoint("point", x, p, opt.Space)
	if err != nil {
		return nil, err
	}
	pr := &prepared{f: f, x: pt, mix: newMixer(p, opt.Space), seed: opt.Seed, workers: opt.Workers, local: opt.LocalRadius}
	pr.names, err = paramNames(p, opt)
	if err != nil {
		return nil, err
	}
	pr.batch = opt.BatchSize
	if pr.batch <= 0 {
		pr.batch = DefaultBatchSize
	}
	pr.level = opt.Level
	if pr.level == 0 {
		pr.level = DefaultLevel
	}
	if !(pr.level > 0 && pr.level < 1) {
		return nil, fmt.Errorf("shapley: level %v must be in (0,1)", opt.Level)
	}
	pr.samples = opt.Samples
	if pr.samples == 0 {
		pr.samples = DefaultSamples
	}
	if pr.samples < 2 {
		return nil, fmt.Errorf("shapley: %d Monte Carlo samples; need at least 2 for a standard error", opt.Samples)
	}
	pr.maxSamples = max(opt.MaxSamples, pr.samples)
	maxExact := opt.MaxExactDim
	if maxExact == 0 {
		maxExact = DefaultMaxExactDim
	}
	if maxExact < 1 {
		return nil, fmt.Errorf("shapley: MaxExactDim %d", opt.MaxExactDim)
	}
	if opt.LocalRadius < 0 || math.IsNaN(opt.LocalRadius) {
		return nil, fmt.Errorf("shapley: local radius %v must be ≥ 0", opt.LocalRadius)
	}

	pr.method = opt.Method
	switch pr.method {
	case "":
		pr.method = Exact
		if p > maxExact {
			pr.method = MonteCarlo
		}
	case Exact:
		if p > maxExact {
			return nil, fmt.Errorf("shapley: exact Shapley values need all 2^%d = %d coalitions, each averaged over the background; "+
				"above p = %d use the Monte Carlo method (mc) or raise the exact limit", p, uint64(1)<<uint(min(p, 63)), maxExact)
		}
	case MonteCarlo, Baseline:
	default:
		return nil, fmt.Errorf("shapley: unknown method %q", pr.method)
	}
	if pr.method == MonteCarlo && p > maxMonteCarloDim {
		return nil, fmt.Errorf("shapley: Monte Carlo estimator supports up to %d parameters, got %d", maxMonteCarloDim, p)
	}

	switch {
	case pr.method == Baseline:
		if opt.Baseline == nil {
			return nil, errors.New("shapley: baseline method needs a baseline configuration (a default or the incumbent)")
		}
		b, err := checkPoint("baseline", opt.Baseline, p, opt.Space)
		if err != nil {
			return nil, err
		}
		pr.background = [][]float64{b}
		if p > maxBaselineExactDim {
			if p > maxMonteCarloDim {
				return nil, fmt.Errorf("shapley: baseline Shapley supports up to %d parameters, got %d", maxMonteCarloDim, p)
			}
			// 2^p single evaluations are too many: sample orders instead.
			pr.method = MonteCarlo
		}
	case opt.Background != nil:
		if len(opt.Background) == 0 {
			return nil, errors.New("shapley: empty background")
		}
		pr.background = make([][]float64, len(opt.Background))
		for i, z := range opt.Background {
			b, err := checkPoint(fmt.Sprintf("background point %d", i), z, p, opt.Space)
			if err != nil {
				return nil, err
			}
			pr.background[i] = b
		}
	default:
		n := opt.BackgroundSize
		if n == 0 {
			n = DefaultBackgroundPerDim * p
		}
		if n < 1 {
			return nil, fmt.Errorf("shapley: background size %d", opt.BackgroundSize)
		}
		if opt.LocalRadius > 0 {
			pr.background, err = LocalBackground(opt.Space, pt, opt.LocalRadius, n, opt.Seed^0x5851f42d4c957f2d)
		} else {
			pr.background, err = UniformBackground(opt.Space, p, n, opt.Seed^0x5851f42d4c957f2d)
		}
		if err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// checkPoint validates a unit-cube point and returns a repaired copy.
func checkPoint(what string, x []float64, dim int, s *space.Space) ([]float64, error) {
	if len(x) != dim {
		return nil, fmt.Errorf("shapley: %s has %d coordinates, want %d", what, len(x), dim)
	}
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("shapley: %s: coordinate %d is %v", what, j, v)
		}
		if s != nil && v < 0 && v != space.Inactive {
			return nil, fmt.Errorf("shapley: %s: coordinate %d is %v, outside the unit cube", what, j, v)
		}
	}
	out := slices.Clone(x)
	if s != nil {
		s.Repair(out)
	}
	return out, nil
}

func paramNames(p int, opt Options) ([]string, error) {
	switch {
	case opt.Names != nil:
		if len(opt.Names) != p {
			return nil, fmt.Errorf("shapley: %d names for %d parameters", len(opt.Names), p)
		}
		return slices.Clone(opt.Names), nil
	case opt.Space != nil:
		return opt.Space.Names(), nil
	}
	names := make([]string, p)
	for j := range names {
		names[j] = fmt.Sprintf("x%d", j+1)
	}
	return names, nil
}

// Explain computes the Shapley values of every output of f at the unit-cube
// point x.
func Explain(ctx context.Context, f Function, x []float64, opt Options) (*Explanation, error) {
	pr, err := prepare(f, x, opt)
	if err != nil {
		return nil, err
	}
	var e *Explanation
	if pr.method == MonteCarlo {
		e, err = pr.monteCarlo(ctx)
	} else {
		e, err = pr.exact(ctx)
	}
	if err != nil {
		return nil, err
	}
	if opt.Method == Baseline {
		e.Method = Baseline
	}
	if l, ok := f.(*LCBFunc); ok {
		tau, w := l.Tau, l.SEWeight()
		e.Tau, e.SEWeight, e.Formula = &tau, &w, l.Formula()
	}
	return e, nil
}

func (pr *prepared) newExplanation() *Explanation {
	e := &Explanation{
		Method:         pr.method,
		Params:         pr.names,
		Point:          pr.x,
		BackgroundSize: len(pr.background),
		LocalRadius:    pr.local,
		Level:          pr.level,
	}
	return e
}

// evalPoints evaluates f at the given points in batches (sequentially) and
// returns out[o][i].
func (pr *prepared) evalPoints(pts [][]float64) ([][]float64, error) {
	nOut := len(pr.f.Outputs())
	out := make([][]float64, nOut)
	for o := range out {
		out[o] = make([]float64, len(pts))
	}
	for start := 0; start < len(pts); start += pr.batch {
		end := min(start+pr.batch, len(pts))
		view := make([][]float64, nOut)
		for o := range view {
			view[o] = out[o][start:end]
		}
		if err := evalChecked(pr.f, pts[start:end], view); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// finishAttribution fills the efficiency check of an attribution;
// monteCarlo says whether its values are estimates with intervals (exact
// values rank every pair).
func finishAttribution(a *Attribution, monteCarlo bool) {
	sum := 0.0
	for _, v := range a.Phi {
		sum += v
	}
	a.EfficiencyError = math.Abs(sum - a.Payout)
	a.SampleSizeOK = true
	a.MinGap, a.Ties = nil, 0
	gap := math.Inf(1)
	for j := range a.Phi {
		for l := j + 1; l < len(a.Phi); l++ {
			if a.tied(j, l, monteCarlo) {
				a.Ties++
				continue
			}
			gap = math.Min(gap, math.Abs(a.Phi[j]-a.Phi[l]))
		}
	}
	if !math.IsInf(gap, 1) {
		a.MinGap = &gap
		a.SampleSizeOK = a.EfficiencyError < gap
	}
}

// tied says whether the check leaves the pair (j, l) out: both Monte Carlo
// intervals contain 0, so neither parameter is told from no effect and
// their order says nothing. Pairs whose difference is merely within Monte
// Carlo error stay in: leaving them out too would pass the check at any K
// (every gap the check kept would exceed the error the efficiency error
// measures), and more draws do separate two different effects.
func (a *Attribution) tied(j, l int, monteCarlo bool) bool {
	return monteCarlo && a.Lower[j] <= 0 && a.Upper[j] >= 0 && a.Lower[l] <= 0 && a.Upper[l] >= 0
}

// exact evaluates all 2^p coalitions over the background.
func (pr *prepared) exact(ctx context.Context) (*Explanation, error) {
	p := pr.f.Dim()
	nOut := len(pr.f.Outputs())
	n := len(pr.background)
	full := uint64(1)<<uint(p) - 1
	chunks := (n + pr.batch - 1) / pr.batch
	// Coalition `full` is the explicand itself; it is evaluated once.
	jobs := int(full) * chunks
	partial := make([]float64, jobs*nOut)
	// Sums are of f − f(θ̃): a coalition whose hybrids all equal the
	// explicand (P minus a dummy, or minus a switched-off child) then has
	// worth f(θ̃) exactly, and the dummy axiom holds without rounding.
	at, err := pr.evalPoints([][]float64{pr.x})
	if err != nil {
		return nil, err
	}
	workers := pr.workers
	if workers < 1 {
		workers = defaultWorkers()
	}
	bufs := make([]*buffers, workers)
	err = parallel(ctx, workers, jobs, func(w, job int) error {
		if bufs[w] == nil {
			bufs[w] = newBuffers(pr.batch, p, nOut)
		}
		b := bufs[w]
		mask := uint64(job / chunks)
		start := (job % chunks) * pr.batch
		end := min(start+pr.batch, n)
		pts, out := b.view(end - start)
		for i := range pts {
			pr.mix.mix(pts[i], pr.x, pr.background[start+i], mask, b.src)
		}
		if err := evalChecked(pr.f, pts, out); err != nil {
			return fmt.Errorf("shapley: coalition %0*b: %w", p, mask, err)
		}
		for o := range out {
			s, ref := 0.0, at[o][0]
			for _, v := range out[o] {
				s += v - ref
			}
			partial[job*nOut+o] = s
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// worth[mask*nOut+o] = v(mask) for output o.
	worth := make([]float64, (full+1)*uint64(nOut))
	for mask := uint64(0); mask < full; mask++ {
		for o := 0; o < nOut; o++ {
			s := 0.0
			for c := 0; c < chunks; c++ {
				s += partial[(int(mask)*chunks+c)*nOut+o]
			}
			worth[mask*uint64(nOut)+uint64(o)] = at[o][0] + s/float64(n)
		}
	}
	for o := 0; o < nOut; o++ {
		worth[full*uint64(nOut)+uint64(o)] = at[o][0]
	}
	weights := shapleyWeights(p)
	e := pr.newExplanation()
	for o, name := range pr.f.Outputs() {
		a := Attribution{Output: name, Prediction: at[o][0], Average: worth[o]}
		a.Payout = a.Prediction - a.Average
		a.Phi = make([]float64, p)
		for j := 0; j < p; j++ {
			bit := uint64(1) << uint(j)
			s := 0.0
			for mask := uint64(0); mask <= full; mask++ {
				if mask&bit != 0 {
					continue
				}
				size := popcount(mask)
				s += weights[size] * (worth[(mask|bit)*uint64(nOut)+uint64(o)] - worth[mask*uint64(nOut)+uint64(o)])
			}
			a.Phi[j] = s
		}
		a.Lower = slices.Clone(a.Phi)
		a.Upper = slices.Clone(a.Phi)
		finishAttribution(&a, false)
		a.SampleSizeOK = true
		e.Outputs = append(e.Outputs, a)
	}
	return e, nil
}

// shapleyWeights[s] = s!(p−1−s)!/p! (eq. 6), through log-gamma to stay
// finite for any p.
func shapleyWeights(p int) []float64 {
	w := make([]float64, p)
	lp, _ := math.Lgamma(float64(p + 1))
	for s := range w {
		a, _ := math.Lgamma(float64(s + 1))
		b, _ := math.Lgamma(float64(p - s))
		w[s] = math.Exp(a + b - lp)
	}
	return w
}

func popcount(x uint64) int {
	n := 0
	for x != 0 {
		x &= x - 1
		n++
	}
	return n
}

// tQuantile is the two-sided t quantile for a level with df degrees.
func tQuantile(level float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.5 + level/2)
}
