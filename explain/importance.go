package explain

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"

	"xbo/explain/fanova"
	"xbo/explain/sobol"
	"xbo/forest"
	"xbo/gp"
	"xbo/history"
	"xbo/internal/parallel"
	"xbo/space"
	"xbo/surrogate"
)

// Importance methods.
const (
	// ImportanceForest is the fANOVA of Hutter, Hoos and Leyton-Brown 2014 ("An
	// efficient approach for assessing hyperparameter importance"): the variance
	// decomposition of each tree of a random forest, with exact marginals,
	// averaged over trees (mean ± std across trees). Each tree is a step
	// function of a bootstrap sample, so a tree's variance holds its own noise
	// (every fraction is biased towards the others and large smooth effects are
	// understated) and small effects fall below the trees' resolution; the std
	// across trees is the trees' disagreement, not an interval for the
	// objective's index (docs/research/importance.md measures both).
	ImportanceForest = "forest-fanova"
	// ImportanceGPSobol is the Sobol decomposition of the GP's posterior
	// mean (package explain/sobol) with 95% intervals from posterior sample
	// functions. The mean is smoother than the objective where data are
	// scarce, which biases the indices towards the effects the data show;
	// the intervals carry that uncertainty.
	ImportanceGPSobol = "gp-sobol"
)

// Limits and defaults of gp-sobol importance.
const (
	MaxImportanceSamples   = 16384 // base points of the QMC design
	MaxImportancePosterior = 2000  // posterior sample functions
	DefaultRefits          = 3     // hyperparameter refits
	MaxRefits              = 32
	maxRefitTrials         = 128 // trials a refit's hyperparameters are fitted on
)

// trialsPerLeafTrial sets the forest's least leaf size: one trial per this
// many, so a tree has at most about that many leaves and the pairwise
// decomposition, quadratic in the leaves, stays interactive on large
// studies (at 10,000 trials leaves hold at least 5).
const trialsPerLeafTrial = 2000

// MaxPairsParams bounds the spaces whose pairwise interactions are computed
// (their number grows as d²).
const MaxPairsParams = 40

// ImportanceRequest asks for hyperparameter importance: the fraction of the
// objective's variance over the space that each parameter (and each pair)
// explains. Zero values mean the defaults.
type ImportanceRequest struct {
	// Method is gp-sobol or forest-fanova (see ImportanceGPSobol,
	// ImportanceForest; the default is DefaultImportanceMethod).
	Method string `json:"method"`
	// Pairs includes pairwise interactions (default true up to
	// MaxPairsParams parameters).
	Pairs *bool `json:"pairs"`
	// CapQuantile q in (0, 1] computes importance in the good region: values
	// worse than the quantile q of the best are capped there (Hutter et al.
	// 2014, section 3.3); CapValue caps at a value instead.
	CapQuantile float64  `json:"cap_quantile,omitempty"`
	CapValue    *float64 `json:"cap_value,omitempty"`
	// Trees of the forest (default forest.DefaultTrees; forest-fanova only)
	// and the seed of the forest or of the design and posterior samples.
	Trees int    `json:"trees,omitempty"`
	Seed  uint64 `json:"seed"`
	// Samples is the number of base points of gp-sobol's quasi-Monte Carlo
	// design (default sobol.DefaultSamples; it costs Samples·(d+2) GP
	// means, Samples·(2d+2) with pairs); Posterior the number of posterior
	// sample functions its intervals come from (default
	// sobol.DefaultPosterior).
	Samples   int `json:"samples,omitempty"`
	Posterior int `json:"posterior,omitempty"`
	// Refits is the number of hyperparameter refits gp-sobol's intervals
	// also sample over (default DefaultRefits; −1 none; see hyperRefits).
	Refits int `json:"refits,omitempty"`
	// Surrogate is gp-sobol's GP (kind gp; the kernel may be chosen; its
	// seed defaults to Seed).
	Surrogate *Surrogate `json:"surrogate,omitempty"`
	// Budget explains the values at that budget instead of the final ones
	// (see BudgetInfo; nil: the final values).
	Budget *int64 `json:"budget,omitempty"`
	// Outliers is "exclude" (default) or "keep" (see Surrogate.Outliers);
	// for gp-sobol it is its surrogate's setting.
	Outliers string `json:"outliers,omitempty"`
}

// ImportanceResult is the importance with a ranking of the main effects.
type ImportanceResult struct {
	About
	Method string `json:"method"`
	*fanova.Importance
	// Total holds gp-sobol's total effects: everything a parameter takes
	// part in, its main effect and all its interactions.
	Total   map[string]fanova.Effect `json:"total,omitempty"`
	Ranking []RankedEffect           `json:"ranking"`
	// Extrapolated lists the parameters whose curve rests on the model's
	// prior more than with uniformly random trials (gp-sobol;
	// extrapolation.go): their indices are the model's extrapolation.
	Extrapolated []string `json:"extrapolated,omitempty"`
	// Cap says how values were capped, when they were.
	Cap  string `json:"cap,omitempty"`
	Note string `json:"note,omitempty"`
}

// RankedEffect is one row of the ranking of main effects: the fraction, its
// std (across trees for forest-fanova; posterior and design error for
// gp-sobol) and, for gp-sobol, the 95% interval and the total effect.
type RankedEffect struct {
	Param    string    `json:"param"`
	Fraction float64   `json:"fraction"`
	Std      float64   `json:"std"`
	CI95     []float64 `json:"ci95,omitempty"`
	Total    *float64  `json:"total,omitempty"`
}

// ByTotal is Ranking ordered by total effect (ties and rows without one
// keep the order of their main effects): a parameter that acts only through
// its interactions (main 0%, total 70%) must not be read as unimportant.
// Without total effects (forest-fanova) it is Ranking. Every view of the
// ranking — report, CLI text, dashboard — reads in this order.
func (r *ImportanceResult) ByTotal() []RankedEffect {
	out := slices.Clone(r.Ranking)
	key := func(e RankedEffect) float64 {
		if e.Total != nil {
			return *e.Total
		}
		return e.Fraction
	}
	slices.SortStableFunc(out, func(a, b RankedEffect) int { return cmp.Compare(key(b), key(a)) })
	return out
}

// DefaultImportanceMethod is the method of a request that names none.
const DefaultImportanceMethod = ImportanceGPSobol

func (r *ImportanceRequest) normalize(sp *space.Space) error {
	if r.Method == "" {
		r.Method = DefaultImportanceMethod
	}
	switch r.Method {
	case ImportanceForest:
		switch {
		case r.Samples != 0 || r.Posterior != 0 || r.Refits != 0:
			return invalidf("samples, posterior and refits apply to %s, not %s", ImportanceGPSobol, ImportanceForest)
		case r.Surrogate != nil:
			return invalidf("%s fits its own forest (trees, seed); a surrogate applies to %s", ImportanceForest, ImportanceGPSobol)
		}
		if r.Trees == 0 {
			r.Trees = forest.DefaultTrees
		}
	case ImportanceGPSobol:
		if r.Trees != 0 {
			return invalidf("trees apply to %s, not %s", ImportanceForest, ImportanceGPSobol)
		}
		if r.Samples == 0 {
			r.Samples = sobol.DefaultSamples
		}
		if r.Posterior == 0 {
			r.Posterior = sobol.DefaultPosterior
		}
		if r.Refits == 0 {
			r.Refits = DefaultRefits
		}
		switch {
		case r.Samples < sobol.MinSamples || r.Samples > MaxImportanceSamples:
			return invalidf("samples %d must lie in %d..%d", r.Samples, sobol.MinSamples, MaxImportanceSamples)
		case r.Posterior < 10 || r.Posterior > MaxImportancePosterior:
			return invalidf("posterior %d must lie in 10..%d", r.Posterior, MaxImportancePosterior)
		case r.Refits < -1 || r.Refits > MaxRefits:
			return invalidf("refits %d must be −1 (none) or lie in 1..%d", r.Refits, MaxRefits)
		}
	default:
		return invalidf("importance method %q: want %s or %s", r.Method, ImportanceGPSobol, ImportanceForest)
	}
	if r.Pairs == nil {
		v := sp.Dim() > 1 && sp.Dim() <= MaxPairsParams
		r.Pairs = &v
	}
	if *r.Pairs && sp.Dim() > MaxPairsParams {
		return invalidf("pairs of %d parameters: the limit is %d parameters", sp.Dim(), MaxPairsParams)
	}
	if r.Seed == 0 {
		r.Seed = 1
	}
	if r.Outliers == "" {
		r.Outliers = OutliersExclude
		if r.Surrogate != nil && r.Surrogate.Outliers != "" {
			r.Outliers = r.Surrogate.Outliers
		}
	}
	if r.Outliers != OutliersExclude && r.Outliers != OutliersKeep {
		return invalidf("outliers %q: want %s or %s", r.Outliers, OutliersExclude, OutliersKeep)
	}
	if r.Method == ImportanceGPSobol {
		spec := Surrogate{Seed: r.Seed}
		if r.Surrogate != nil {
			spec = *r.Surrogate
		}
		if spec.Outliers == "" {
			spec.Outliers = r.Outliers
		}
		if spec.Outliers != r.Outliers {
			return invalidf("outliers %q and the surrogate's %q differ", r.Outliers, spec.Outliers)
		}
		if spec.Kind != "" && spec.Kind != SurrogateGP {
			return invalidf("%s needs a GP surrogate, not %q", ImportanceGPSobol, spec.Kind)
		}
		if err := spec.normalize(); err != nil {
			return err
		}
		r.Surrogate = &spec
	}
	switch {
	case r.Method == ImportanceForest && (r.Trees < 1 || r.Trees > MaxTrees):
		return invalidf("trees %d must lie in 1..%d", r.Trees, MaxTrees)
	case math.IsNaN(r.CapQuantile) || r.CapQuantile < 0 || r.CapQuantile > 1:
		return invalidf("cap_quantile %v must lie in (0, 1]", r.CapQuantile)
	case r.CapQuantile > 0 && r.CapValue != nil:
		return invalidf("cap_quantile and cap_value exclude each other")
	case r.CapValue != nil && (math.IsNaN(*r.CapValue) || math.IsInf(*r.CapValue, 0)):
		return invalidf("cap_value %v is not finite", *r.CapValue)
	}
	return nil
}

// Importance computes hyperparameter importance.
func (e *Engine) Importance(ctx context.Context, h *history.History, req ImportanceRequest) (*ImportanceResult, error) {
	return explainAs(ctx, e, h, "importance", req.Budget, func(p *prepared) (any, error) {
		if req.Samples == 0 && (req.Method == "" || req.Method == ImportanceGPSobol) && len(p.data.Y) > gp.DefaultVariancePoints {
			// A design costs samples × the mean's conditioning points:
			// beyond the exact GP (a 1,000-point mean) half the design
			// keeps an importance interactive (docs/research/importance.md).
			req.Samples = sobol.DefaultSamples / 2
		}
		err := req.normalize(h.Space)
		return req, err
	}, func(t *task, p *prepared) (*ImportanceResult, error) {
		if req.Method == ImportanceGPSobol {
			return sobolImportance(t, p, req)
		}
		return forestImportance(t, p, req)
	})
}

// capped applies the request's cap to the values and says how.
func capped(y []float64, req ImportanceRequest, maximize bool) ([]float64, string, error) {
	switch {
	case req.CapQuantile > 0:
		y, limit, err := fanova.CapQuantile(y, req.CapQuantile, maximize)
		if err != nil {
			return nil, "", invalidf("%v", err)
		}
		return y, fmt.Sprintf("values capped at %.6g (the best %.0f%%)", limit, 100*req.CapQuantile), nil
	case req.CapValue != nil:
		y, err := fanova.Cap(y, *req.CapValue, maximize)
		if err != nil {
			return nil, "", invalidf("%v", err)
		}
		return y, fmt.Sprintf("values capped at %.6g", *req.CapValue), nil
	}
	return y, "", nil
}

// sobolImportance is gp-sobol: the Sobol indices of the GP's posterior mean
// with intervals from posterior samples. A capped request fits its GP to
// the capped values (a model of its own in the cache).
func sobolImportance(t *task, p *prepared, req ImportanceRequest) (*ImportanceResult, error) {
	sp := p.h.Space
	out := &ImportanceResult{About: p.about("importance"), Method: req.Method}
	y, how, err := capped(p.data.Y, req, p.h.Direction() == space.Maximize)
	if err != nil {
		return nil, err
	}
	if how != "" {
		out.Cap = how
		data := *p.data
		data.Y = y
		p = &prepared{h: p.h, data: &data, fingerprint: p.fingerprint + "\x00" + how}
	}
	m, err := t.model(p, *req.Surrogate)
	if err != nil {
		return nil, err
	}
	out.describe(m)
	alts, err := hyperRefits(t, m.data, p.h, *req.Surrogate, m.model, req.Refits)
	if err != nil {
		return nil, err
	}
	t.progress(fmt.Sprintf("Sobol indices of the GP mean (%d base points) and of %d posterior samples", req.Samples, req.Posterior), 0, 1)
	scale := 1.0
	if m.check != nil {
		scale = m.check.VarianceFactor
	}
	res, err := sobol.Analyze(t.ctx, m.model, sp, sobol.Options{Samples: req.Samples, Pairs: *req.Pairs,
		Posterior: req.Posterior, Alternatives: alts, CovarianceScale: scale, Seed: req.Seed, Workers: max(1, t.workers)})
	if err != nil {
		if ctxErr := t.ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("explain: importance: %w", err)
	}
	reached, err := reachAlternatives(t, m, sp, res, req)
	if err != nil {
		return nil, err
	}
	forestReached, err := reachForest(t, p, sp, res, req)
	if err != nil {
		return nil, err
	}
	t.progress("where the indices rest on extrapolation", 0, 1)
	if out.Extrapolated, err = importanceExtrapolation(t, m, sp); err != nil {
		return nil, err
	}
	names := sp.Names()
	effect := func(ix sobol.Index) fanova.Effect {
		return fanova.Effect{Fraction: ix.Estimate, Std: ix.Std, CI95: []float64{ix.Lower, ix.Upper}}
	}
	im := &fanova.Importance{Main: map[string]fanova.Effect{}, TotalVariance: res.Variance}
	out.Total = map[string]fanova.Effect{}
	for j, n := range names {
		im.Main[n] = effect(res.Main[j])
		out.Total[n] = effect(res.Total[j])
	}
	if *req.Pairs {
		im.Pairs = map[string]fanova.Effect{}
		for _, pr := range res.Pairs {
			im.Pairs[fanova.PairKey(names[pr.I], names[pr.J])] = effect(pr.Interaction)
		}
	}
	out.Importance = im
	for _, r := range im.RankedMain() {
		total := out.Total[r.Name].Fraction
		out.Ranking = append(out.Ranking, RankedEffect{Param: r.Name, Fraction: r.Fraction, Std: r.Std, CI95: r.CI95, Total: &total})
	}
	notes := []string{fmt.Sprintf("Sobol indices of the GP's posterior mean over the space (Saltelli 2010 pick-freeze, %d quasi-Monte Carlo base points); "+
		"95%% intervals and ± from %d posterior sample functions on %d points, with the design error", res.Samples, res.PosteriorSamples, res.PosteriorPoints)}
	if len(alts) > 0 {
		notes[0] += fmt.Sprintf(", drawn from the GP and from %d refits of its hyperparameters on random halves of the trials", len(alts))
	}
	if len(out.Extrapolated) > 0 {
		notes = append(notes, fmt.Sprintf("the curves of %s rest on the model's extrapolation more than with any of %d designs of as many "+
			"uniformly random configurations, so their indices are mostly the model's prior", strings.Join(out.Extrapolated, ", "), extrapolationReplicates))
	}
	if forestReached > 0 {
		notes = append(notes, fmt.Sprintf("%d intervals also reach the Sobol indices of a random forest's mean on the same trials "+
			"(doubt about the model class, as in the PDP bands)", forestReached))
	}
	if len(reached) > 0 {
		notes = append(notes, fmt.Sprintf("the intervals of %s also reach its indices under the GP with its lengthscale at the 95%% "+
			"profile-likelihood limit, which the data support about as well (see model_check)", strings.Join(reached, ", ")))
	}
	if res.Variance == 0 {
		notes = append(notes, "the GP mean is constant (all values equal after capping?); every fraction is 0")
	}
	if sp.Conditional() {
		notes = append(notes, "a conditional parameter counts as having no effect where it is off, so its fractions are scaled by how often it is on; read them together with its parent's")
	}
	out.Note = strings.Join(notes, "; ")
	return out, nil
}

func forestImportance(t *task, p *prepared, req ImportanceRequest) (*ImportanceResult, error) {
	sp := p.h.Space
	maximize := p.h.Direction() == space.Maximize
	out := &ImportanceResult{About: p.about("importance"), Method: req.Method}
	data := p.data
	var cl *cleaning
	if req.Outliers != OutliersKeep {
		var err error
		if cl, err = t.cleaned(p); err != nil {
			return nil, err
		}
		data = cl.data
	}
	y, how, err := capped(data.Y, req, maximize)
	if err != nil {
		return nil, err
	}
	out.Cap = how
	t.progress(fmt.Sprintf("fitting a forest of %d trees to %d trials", req.Trees, len(y)), 0, 2)
	minLeaf := (len(y) + trialsPerLeafTrial - 1) / trialsPerLeafTrial
	f, err := forest.Fit(data.X, y, forest.Options{Trees: req.Trees, Seed: req.Seed, Levels: sp.Levels(), Workers: t.workers, MinSamplesLeaf: minLeaf})
	if err != nil {
		return nil, fmt.Errorf("explain: importance: %w", err)
	}
	m := &fitted{model: f, data: &history.Data{X: data.X, Y: y, Index: data.Index, Best: data.Best},
		info: SurrogateInfo{Kind: SurrogateForest, Trees: req.Trees, Seed: req.Seed, Trials: len(p.data.Y), ConditionedOn: len(y)}}
	if minLeaf > 1 {
		m.info.Note = fmt.Sprintf("every leaf holds at least %d trials (one more per %d trials), which bounds the cost of the decomposition", minLeaf, trialsPerLeafTrial)
	}
	if m.check, err = forestCheck(t, m, sp, Surrogate{Kind: SurrogateForest, Trees: req.Trees, Seed: req.Seed}); err != nil {
		return nil, err
	}
	if cl != nil {
		m.check.Outliers = cl.outliers
	}
	m.check.judge(cl)
	out.describe(m)
	// A conditional parameter's "off" state weighs as much as it does under
	// uniform sampling of the space (see the package doc of explain/fanova).
	mass, err := fanova.InactiveMass(sp)
	if err != nil {
		return nil, err
	}
	fa, err := fanova.New(f, fanova.Options{InactiveMass: mass})
	if err != nil {
		return nil, err
	}
	t.progress("decomposing the variance", 1, 2)
	dec, err := fa.Decompose(*req.Pairs)
	if err != nil {
		return nil, err
	}
	if out.Importance, err = dec.Importance(sp.Names()); err != nil {
		return nil, err
	}
	for _, r := range out.RankedMain() {
		out.Ranking = append(out.Ranking, RankedEffect{Param: r.Name, Fraction: r.Fraction, Std: r.Std})
	}
	if out.TreesUsed == 0 {
		out.Note = "the forest predicts a constant (all values equal after capping?); every fraction is 0"
	} else if mass != nil {
		out.Note = "a conditional parameter's \"off\" state is weighted by how often it is off in the space; read its fraction together with its parent's"
	}
	return out, nil
}

// hyperRefits are the GP under other plausible hyperparameters. The GP's
// hyperparameters are a point estimate (maximum marginal likelihood), and
// on the trials an optimizer gathers they are often ill-determined: a
// lengthscale that makes a parameter irrelevant and one that makes it
// matter explain the data almost equally well, and posterior samples at the
// point estimate then rule out effects the data cannot rule out. Each refit
// fits the hyperparameters on a random half of the trials (at most
// maxRefitTrials of them, which bounds the cost on large studies; on the
// model's own output scale) and conditions a GP with them on the trials,
// all of them up to gp.DefaultVariancePoints and otherwise that many chosen
// as the subset GP chooses them (its mean then differs from the model's a
// little more, which only widens the intervals). Sampling from them too
// approximates integrating over the hyperparameters (a half-sampling
// stand-in for their posterior).
func hyperRefits(t *task, d *history.Data, h *history.History, spec Surrogate, main surrogate.Model, refits int) ([]surrogate.Covariancer, error) {
	x, y := d.X, d.Y
	half := min(len(y)/2, maxRefitTrials)
	if refits <= 0 || half < 2*MinTrials {
		return nil, nil
	}
	var scale gp.OutputScale
	switch g := main.(type) {
	case *gp.Subset:
		scale = g.OutputScale()
	case *gp.GP:
		scale = g.OutputScale()
	default:
		return nil, nil
	}
	if !(scale.Std > 0) {
		return nil, nil // constant values: nothing to refit
	}
	k, err := gp.ParseKernel(spec.Kernel)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	levels := h.Space.Levels()
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x6a09e667f3bcc909))
	halves := make([][]int, refits)
	for r := range halves {
		halves[r] = rng.Perm(len(y))[:half]
	}
	// Every refit conditions on the same representative trials (those the
	// subset GP would choose), selected once.
	keep, err := gp.Representative(x, y, gp.DefaultVariancePoints, h.Direction() == space.Maximize)
	if err != nil {
		return nil, err
	}
	kx, ky := make([][]float64, len(keep)), make([]float64, len(keep))
	for i, j := range keep {
		kx[i], ky[i] = x[j], y[j]
	}
	// Refits are independent: two at a time, each on one goroutine, give
	// the same models as one after the other.
	alts := make([]surrogate.Covariancer, refits)
	errs := make([]error, refits)
	var done atomic.Int64
	parallel.Run(refits, t.workers, func() func(int) {
		return func(r int) {
			idx := halves[r]
			hx, hy := make([][]float64, half), make([]float64, half)
			for i, j := range idx {
				hx[i], hy[i] = x[j], y[j]
			}
			g, err := gp.FitContext(t.ctx, hx, hy, gp.Options{Kernel: k, Levels: levels, Restarts: 1, Seed: spec.Seed + uint64(r) + 1,
				Workers: 1, Output: &scale})
			if err != nil {
				errs[r] = fmt.Errorf("explain: importance: hyperparameter refit %d: %w", r+1, err)
				return
			}
			h := g.Hyper()
			alt, err := gp.FitContext(t.ctx, kx, ky, gp.Options{Kernel: k, Levels: levels, Fixed: &h, Workers: 1, Output: &scale, UncertainLevel: true})
			if err != nil {
				errs[r] = fmt.Errorf("explain: importance: GP at refit %d's hyperparameters: %w", r+1, err)
				return
			}
			alts[r] = alt
			n := int(done.Add(1))
			t.progress(fmt.Sprintf("refitting the GP's hyperparameters on half of the trials (%d of %d)", n, refits), n, refits)
		}
	})
	if err := t.ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return alts, nil
}

// reachAlternatives widens the intervals of the main and total effects of
// every parameter j the model check names as switched off to include its
// indices under the GP with ℓ_j at its 95% profile-likelihood limit
// (fitted.alternative), where that model differs:
// the data do not rule out the effect it shows, so an interval that
// excludes it would claim more than they say (a parameter the GP switches
// off gets 0% [0%, 0%] otherwise). The alternative's indices come from a
// design of a quarter of the request's base points (the interval's bound,
// not its centre, rests on them). It returns the parameters widened.
func reachAlternatives(t *task, m *fitted, sp *space.Space, res *sobol.Result, req ImportanceRequest) ([]string, error) {
	if m.limits == nil {
		return nil, nil
	}
	var reached []string
	for j, p := range sp.Params {
		if m.check == nil || !slices.ContainsFunc(m.check.SwitchedOff, func(s SwitchedOff) bool { return s.Param == p.Name }) {
			continue
		}
		alt, err := m.alternative(j)
		if err != nil {
			return nil, err
		}
		if alt == nil {
			continue
		}
		t.progress(fmt.Sprintf("indices of %s under its shortest plausible lengthscale", p.Name), j, sp.Dim())
		est, err := sobol.Estimate(t.ctx, func(x [][]float64, out []float64) error { return surrogate.PredictMean(alt, x, out) },
			sp, sobol.Options{Samples: max(sobol.MinSamples, req.Samples/4), Seed: req.Seed, Workers: max(1, t.workers)})
		if err != nil {
			if ctxErr := t.ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, fmt.Errorf("explain: importance: alternative of %s: %w", p.Name, err)
		}
		widened := false
		for _, pair := range [][2]*sobol.Index{{&res.Main[j], &est.Main[j]}, {&res.Total[j], &est.Total[j]}} {
			ix, v := pair[0], pair[1].Estimate
			if v < ix.Lower {
				ix.Lower, widened = math.Max(0, v), true
			}
			if v > ix.Upper {
				ix.Upper, widened = math.Min(1, v), true
			}
		}
		if widened {
			reached = append(reached, p.Name)
		}
	}
	return reached, nil
}

// reachForest widens every main and total effect's interval to include
// the same index of a random forest's mean function on every trial (the
// ones the GP leaves out as failures included), within its design error:
// the doubt about the model class and about the exclusion that a GP's
// calibrated PDP band carries (forestband.go), for the
// indices. The forest's indices come from a quasi-Monte Carlo design of
// half the request's base points. It returns how many intervals it widened.
func reachForest(t *task, p *prepared, sp *space.Space, res *sobol.Result, req ImportanceRequest) (int, error) {
	forest, err := t.forestFor(p, *req.Surrogate, BandCalibrated)
	if err != nil || forest == nil {
		return 0, err
	}
	t.progress("Sobol indices of the random forest's mean", 0, 1)
	est, err := sobol.Estimate(t.ctx, func(x [][]float64, out []float64) error { return surrogate.PredictMean(forest.model, x, out) },
		sp, sobol.Options{Samples: max(sobol.MinSamples, req.Samples/2), Seed: req.Seed, Workers: max(1, t.workers)})
	if err != nil {
		if ctxErr := t.ctx.Err(); ctxErr != nil {
			return 0, ctxErr
		}
		return 0, fmt.Errorf("explain: importance: the forest's indices: %w", err)
	}
	widened := 0
	for j := range sp.Params {
		for _, pair := range [][2]*sobol.Index{{&res.Main[j], &est.Main[j]}, {&res.Total[j], &est.Total[j]}} {
			ix, f := pair[0], pair[1]
			w := false
			if lo := math.Max(0, f.Lower); lo < ix.Lower {
				ix.Lower, w = lo, true
			}
			if hi := math.Min(1, f.Upper); hi > ix.Upper {
				ix.Upper, w = hi, true
			}
			if w {
				widened++
			}
		}
	}
	return widened, nil
}
