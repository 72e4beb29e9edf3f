package explain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"xbo/explain/pdp"
	"xbo/forest"
	"xbo/gp"
	"xbo/history"
	"xbo/metrics"
	"xbo/space"
	"xbo/surrogate"
)

// ModelCheck is how well the surrogate an explanation rests on predicts the
// study's own trials when each is left out: a check on the user's data,
// where no ground truth exists, of the model every number comes from.
//
//   - Coverage: the fraction of trials inside their held-out 95% predictive
//     interval (mean ± 1.96·sd, noise included). Under a calibrated model the
//     misses are about Binomial(n, 0.05); PValue is the chance of at least
//     as many, and a small one says the model is overconfident on these data.
//   - VarianceFactor: the squared ratio of the 95% quantile of the |z| to
//     1.96, at least 1: how much wider the model's intervals must be to
//     cover 95% of the held-out trials. Calibrated bands and intervals are
//     widened by it (a model that passes the check has a factor near 1).
//   - Spearman: the rank correlation of the held-out predictions with the
//     values, with its 95% interval: whether the model ranks configurations
//     it has not seen. Near 0, the explanations show mostly the prior.
//   - SwitchedOff: parameters the model treats as having no effect
//     (lengthscale long enough that the prior correlation across the whole
//     range is at least offCorrelation) although lengthscales short enough
//     for an effect (correlation at most onCorrelation) fit the data about
//     as well (inside the 95% profile-likelihood interval,
//     gp.GP.LengthscaleLimit). Their PDP bands include the effect the data
//     allow.
//   - Outliers: trials left out as failed or diverged runs (robust.go).
//
// The check of a GP uses its closed-form leave-one-out predictions; a
// subset-of-data GP predicts the trials its mean is not conditioned on as
// new points. A forest is checked on out-of-fold predictions of
// checkFolds refits.
type ModelCheck struct {
	Method string `json:"method"`
	Trials int    `json:"trials"`
	// Coverage95 is the fraction of trials inside their held-out 95%
	// predictive interval; Misses the number outside.
	Coverage95 float64 `json:"coverage95"`
	Misses     int     `json:"misses"`
	// PValue is P(Binomial(Trials, 0.05) ≥ Misses).
	PValue         float64 `json:"p_value"`
	VarianceFactor float64 `json:"variance_factor"`
	// NoiseSD is a GP's fitted noise standard deviation in objective units
	// and NoiseShare its share of the prior variance of an observation:
	// the variation the model does not attribute to the parameters — noisy
	// evaluations, or structure finer than the trials resolve.
	NoiseSD    float64   `json:"noise_sd,omitempty"`
	NoiseShare float64   `json:"noise_share,omitempty"`
	Spearman   *float64  `json:"spearman,omitempty"`
	SpearmanCI []float64 `json:"spearman_ci95,omitempty"`
	// SwitchedOff lists the parameters switched off without evidence.
	SwitchedOff []SwitchedOff `json:"switched_off,omitempty"`
	// Outliers are the trials left out of the fit.
	Outliers []Outlier `json:"outliers,omitempty"`
	// Status is "ok", "warn" or "fail"; Reading says in words what the
	// check found and what the explanations do about it.
	Status  string `json:"status"`
	Reading string `json:"reading"`

	// forest marks a forest's check, whose intervals are the trees'
	// spread, not predictive intervals.
	forest bool
}

// SwitchedOff is a parameter whose effect the model rules out although the
// data do not.
type SwitchedOff struct {
	Param string `json:"param"`
	// Lengthscale is the fitted one; Limit the shortest that fits the data
	// about as well (the 95% profile-likelihood limit), in unit-cube units.
	Lengthscale float64 `json:"lengthscale"`
	Limit       float64 `json:"limit"`
}

// Model check statuses.
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

const (
	// checkFailP and checkWarnP are the binomial tail probabilities of the
	// misses below which the check fails or warns.
	checkFailP = 0.01
	checkWarnP = 0.05
	// profileDrop is the log-likelihood drop of a 95% likelihood-ratio
	// interval for one hyperparameter (χ²₁'s 95% quantile, 3.84, halved).
	profileDrop = 1.92
	// offCorrelation and onCorrelation classify a lengthscale by the prior
	// correlation of f at the two ends of the parameter's range.
	offCorrelation = 0.99
	onCorrelation  = 0.9
	checkFolds     = 5
	// checkOutsideTrials bounds the trials outside a subset GP's subsets
	// its check predicts (a sample beyond).
	checkOutsideTrials = 1000
	checkSeed          = 31
)

// z95 is the standard normal's 97.5% quantile.
var z95 = distuv.UnitNormal.Quantile(0.975)

// predictiveCheck scores held-out predictions (mean, variance with the
// noise) of the values y.
func predictiveCheck(method string, y, mean, variance []float64) (*ModelCheck, error) {
	n := len(y)
	if n == 0 || len(mean) != n || len(variance) != n {
		return nil, fmt.Errorf("explain: model check: %d values, %d means, %d variances", n, len(mean), len(variance))
	}
	c := &ModelCheck{Method: method, Trials: n}
	absZ := make([]float64, n)
	for i := range n {
		sd := math.Sqrt(variance[i])
		if !(sd > 0) || math.IsNaN(mean[i]) {
			return nil, fmt.Errorf("explain: model check: trial row %d predicted %v ± %v", i, mean[i], sd)
		}
		absZ[i] = math.Abs(y[i]-mean[i]) / sd
		if absZ[i] > z95 {
			c.Misses++
		}
	}
	c.Coverage95 = 1 - float64(c.Misses)/float64(n)
	c.PValue = 1
	if c.Misses > 0 {
		c.PValue = 1 - distuv.Binomial{N: float64(n), P: 0.05}.CDF(float64(c.Misses-1))
	}
	q := quantileSorted(sortedCopy(absZ), 0.95)
	c.VarianceFactor = math.Max(1, (q/z95)*(q/z95))
	if rho, err := metrics.Spearman(mean, y); err == nil && n >= metrics.MinRankIntervalPairs {
		if lo, hi, err := metrics.RankInterval(metrics.RankSpearman, rho, n, 0.95); err == nil {
			c.Spearman, c.SpearmanCI = &rho, []float64{lo, hi}
		}
	}
	return c, nil
}

func sortedCopy(v []float64) []float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// switchedOff lists the numeric or categorical parameters the GP g (the one
// its hyperparameters were fitted on) switches off without evidence, with
// the 95% lower lengthscale limit of every parameter whose fitted effect is
// weak (limits[j]; the fitted value for the others and where the limit
// could not be computed).
func switchedOff(g *gp.GP, sp *space.Space) ([]SwitchedOff, []float64) {
	h := g.Hyper()
	k := g.Kernel()
	limits := make([]float64, len(h.Lengthscales))
	var out []SwitchedOff
	for j, l := range h.Lengthscales {
		limits[j] = l
		// A parameter whose fitted lengthscale already gives it an effect
		// (correlation across its range below onCorrelation) has no
		// effect to be switched off; its profile is not searched (it costs
		// a dozen likelihood evaluations per parameter).
		if k.Correlation(1/l) < onCorrelation {
			continue
		}
		lim, err := g.LengthscaleLimit(j, profileDrop)
		if err != nil {
			continue
		}
		limits[j] = lim
		if k.Correlation(1/l) >= offCorrelation && k.Correlation(1/lim) <= onCorrelation {
			out = append(out, SwitchedOff{Param: sp.Params[j].Name, Lengthscale: l, Limit: lim})
		}
	}
	return out, limits
}

// judge sets the status and the reading from the check's parts.
func (c *ModelCheck) judge(cl *cleaning) {
	var parts []string
	c.Status = CheckOK
	worse := func(s string) {
		if s == CheckFail || c.Status == CheckOK {
			c.Status = s
		}
	}
	parts = append(parts, fmt.Sprintf("%d of %d trials (%.0f%%) lie in the 95%% interval the model predicts for them when each is left out (%s)",
		c.Trials-c.Misses, c.Trials, 100*c.Coverage95, c.Method))
	switch {
	case c.forest:
		parts[0] = fmt.Sprintf("%d of %d trials (%.0f%%) lie within 1.96 spreads of the trees when each is left out (%s); "+
			"a forest has no noise model, so this is no predictive interval and does not widen its bands", c.Trials-c.Misses, c.Trials, 100*c.Coverage95, c.Method)
	case c.PValue < checkFailP:
		worse(CheckFail)
		parts = append(parts, fmt.Sprintf("far fewer than 95%%: the model is overconfident on these trials, so bands and intervals are widened by %.2g× (the width that covers 95%% of them)",
			math.Sqrt(c.VarianceFactor)))
	case c.PValue < checkWarnP:
		worse(CheckWarn)
		parts = append(parts, fmt.Sprintf("fewer than 95%%: bands and intervals are widened by %.2g×", math.Sqrt(c.VarianceFactor)))
	}
	if c.Spearman != nil {
		s := fmt.Sprintf("its held-out predictions rank the trials with Spearman %.2f [%.2f, %.2f]", *c.Spearman, c.SpearmanCI[0], c.SpearmanCI[1])
		if c.SpearmanCI[0] <= 0 {
			worse(CheckWarn)
			s += ": hardly better than chance, so the explanations show mostly the model's prior"
		}
		parts = append(parts, s)
	}
	for _, s := range c.SwitchedOff {
		worse(CheckWarn)
		parts = append(parts, fmt.Sprintf("%s is treated as having no effect, though the trials fit an effect of it about as well: "+
			"its PDP band and importance interval include that effect", s.Param))
	}
	if cl != nil {
		if t := cl.outliersText(); t != "" {
			worse(CheckWarn)
			parts = append(parts, t)
		}
	}
	c.Reading = strings.Join(parts, "; ") + "."
	c.Reading = strings.ToUpper(c.Reading[:1]) + c.Reading[1:]
}

// gpCheck is the model check of a GP surrogate fitted to data.
func gpCheck(model any, d *history.Data, sp *space.Space) (*ModelCheck, []float64, error) {
	var mean, variance []float64
	var err error
	var hyperModel *gp.GP
	method := "leave-one-out"
	y := d.Y
	switch g := model.(type) {
	case *gp.Subset:
		// The trials outside the subsets are predicted as new points; a
		// fixed-seed sample of at most checkOutsideTrials of them bounds
		// the cost on a large study.
		rows := make([]int, len(d.Y))
		for i := range rows {
			rows[i] = i
		}
		meanOn, _ := g.Conditioned()
		if len(rows) > meanOn+checkOutsideTrials {
			rng := rand.New(rand.NewPCG(checkSeed, checkSeed^0x7c15a1e3b3d5f4c9))
			rng.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
			rows = rows[:meanOn+checkOutsideTrials]
			slices.Sort(rows)
		}
		mean, variance, err = g.LeaveOneOutRows(d.X, d.Y, rows)
		y = make([]float64, len(rows))
		for k, i := range rows {
			y[k] = d.Y[i]
		}
		_, hyperModel = g.Parts()
		if !g.Exact() {
			method = "leave-one-out within the subset GP, prediction for the trials outside it"
			if len(rows) < len(d.Y) {
				method += fmt.Sprintf(" (%d of the %d trials)", len(rows), len(d.Y))
			}
		}
	case *gp.GP:
		mean, variance, err = g.LeaveOneOut()
		hyperModel = g
	default:
		return nil, nil, fmt.Errorf("explain: model check: %T is not a GP", model)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("explain: model check: %w", err)
	}
	c, err := predictiveCheck(method, y, mean, variance)
	if err != nil {
		return nil, nil, err
	}
	var limits []float64
	c.SwitchedOff, limits = switchedOff(hyperModel, sp)
	h := hyperModel.Hyper()
	c.NoiseSD = math.Sqrt(hyperModel.NoiseVariance())
	c.NoiseShare = h.NoiseVariance / (h.NoiseVariance + h.SignalVariance)
	return c, limits, nil
}

// checkForestTrials bounds the trials a forest's check refits on (a
// fixed-seed random subset beyond), so the check of a large study costs
// checkFolds small fits.
const checkForestTrials = 1000

// forestCheck is the model check of a forest: out-of-fold predictions of
// checkFolds forests with the same settings, each fitted without one fold.
// A forest has no noise model, so its intervals are the trees' spread; the
// check reports their coverage, but only its rank correlation decides the
// status (see judge).
func forestCheck(t *task, m *fitted, sp *space.Space, spec Surrogate) (*ModelCheck, error) {
	d := m.data
	n := len(d.Y)
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x51ed270b27d9e4f1))
	rng.Shuffle(n, func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
	if n > checkForestTrials {
		rows = rows[:checkForestTrials]
	}
	k := min(checkFolds, len(rows))
	y := make([]float64, len(rows))
	mean, variance := make([]float64, len(rows)), make([]float64, len(rows))
	for fold := range k {
		var tx [][]float64
		var ty []float64
		var hx [][]float64
		var at []int
		for r, i := range rows {
			y[r] = d.Y[i]
			if r%k == fold {
				hx, at = append(hx, d.X[i]), append(at, r)
			} else {
				tx, ty = append(tx, d.X[i]), append(ty, d.Y[i])
			}
		}
		if len(ty) == 0 || len(hx) == 0 {
			continue
		}
		f, err := forest.Fit(tx, ty, forest.Options{Trees: spec.Trees, Seed: spec.Seed + uint64(fold) + 1, Levels: sp.Levels(), Workers: t.workers})
		if err != nil {
			return nil, fmt.Errorf("explain: model check: %w", err)
		}
		pm, pv := make([]float64, len(hx)), make([]float64, len(hx))
		if err := f.Predict(hx, pm, pv); err != nil {
			return nil, fmt.Errorf("explain: model check: %w", err)
		}
		for q, r := range at {
			// A tree spread of 0 (all trees agree) still has rounding.
			mean[r], variance[r] = pm[q], math.Max(pv[q], 1e-300)
		}
		if err := t.ctx.Err(); err != nil {
			return nil, err
		}
	}
	method := fmt.Sprintf("%d-fold cross-validation, intervals of the trees' spread", k)
	if len(rows) < n {
		method += fmt.Sprintf(", on %d of the %d trials", len(rows), n)
	}
	c, err := predictiveCheck(method, y, mean, variance)
	if err != nil {
		return nil, err
	}
	c.forest = true
	return c, nil
}

// bandOptions sets what the model check adds to a calibrated PDP band of
// params: the variance factor its held-out predictions need (a GP's; a
// forest's intervals are no predictive intervals) and, for a GP, the model
// with each parameter's lengthscale at its 95% profile-likelihood limit,
// whose curve the band must reach (see pdp.Options.Alternatives).
func (m *fitted) bandOptions(opts *pdp.Options, sp *space.Space, params []string) error {
	if opts.Band != pdp.BandCalibrated || m.limits == nil {
		return nil
	}
	if m.check != nil {
		opts.MinVarianceScale = m.check.VarianceFactor
	}
	for _, name := range params {
		j, ok := sp.Index(name)
		if !ok {
			return invalidf("unknown parameter %q", name)
		}
		alt, err := m.alternative(j)
		if err != nil {
			return err
		}
		if alt != nil {
			opts.Alternatives = append(opts.Alternatives, alt)
		}
	}
	return nil
}

// alternativeRatio is how much shorter than the fitted lengthscale the
// limit must be for its model to differ enough to be worth evaluating.
const alternativeRatio = 0.8

// alternative returns (once per dimension) the GP whose mean the model's
// comes from with dimension j's lengthscale at its limit, or nil when the
// limit is close to the fitted value.
func (m *fitted) alternative(j int) (surrogate.Model, error) {
	var g *gp.GP
	switch model := m.model.(type) {
	case *gp.GP:
		g = model
	case *gp.Subset:
		g, _ = model.Parts()
	default:
		return nil, nil
	}
	if m.limits[j] >= alternativeRatio*g.Hyper().Lengthscales[j] {
		return nil, nil
	}
	m.altMu.Lock()
	defer m.altMu.Unlock()
	if alt, ok := m.alts[j]; ok {
		return alt, nil
	}
	alt, err := g.WithLengthscales([]int{j}, []float64{m.limits[j]})
	if err != nil {
		return nil, fmt.Errorf("explain: the model at a lengthscale limit: %w", err)
	}
	if m.alts == nil {
		m.alts = map[int]surrogate.Model{}
	}
	m.alts[j] = alt
	return alt, nil
}
