package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/gp"
	"xbo/metrics"
	"xbo/opt"
	"xbo/space"
)

// PDPSplitOptions configure the reproduction of section 6.1 of Moosbauer
// et al. 2021 (its Table 1): BO with a Matérn-3/2 GP and LCB with
// τ ∈ {0.1, 1, 5} on Styblinski-Tang in d ∈ {3, 5, 8}; PDP of x1 with the
// eq. 5 band from the GP of the last iteration; confidence splitting at
// depth 1 and 3; relative improvement of MC and NLL (against the closed-form
// PD) in the leaf holding the best observed configuration.
//
// The zero value runs xbo's own settings: an initial maximin Latin hypercube of
// 4·d points, a total budget of BudgetPerDim·d evaluations (default 30·d, as
// Moosbauer et al. 2022 and `xbo bench compare`), random-candidate acquisition
// search and gp's noise floor 1e-6. PDPSplitPreset(PresetMoosbauer2021) gives
// the settings of the authors' public code instead. "n_sp = k" is read as the
// customtrees convention of that code: every node is split down to depth k (up
// to 2^k leaves), not k splits in total.
type PDPSplitOptions struct {
	Dims         []int     // default 3, 5, 8
	Taus         []float64 // default 0.1, 1, 5
	Seeds        int       // repetitions, default 30
	BudgetPerDim int       // evaluations per dimension, default 30
	Depths       []int     // n_sp, default 1, 3
	Samples      int       // Monte Carlo points n, default 1000
	GridSize     int       // G, default 20
	Workers      int       // parallel runs, default GOMAXPROCS
	// Budgets, if set, holds the total number of evaluations for each
	// dimension and replaces BudgetPerDim; every dimension run needs one.
	Budgets map[int]int
	// InitialDesign is opt.Config.InitialDesign (default "maximin"); the
	// design always has 4·d points.
	InitialDesign string
	// AcqOptimizer is opt.Config.AcqOptimizer (default "random").
	AcqOptimizer string
	// MinNoise is the GP noise floor in standardized units, of the
	// optimizer's GPs and of the final GP the PDPs come from (default gp's
	// 1e-6); see opt.Config.MinNoise.
	MinNoise float64
	// FullRefitEvery is opt.Config.FullRefitEvery (default 10; negative:
	// a full hyperparameter fit at every iteration).
	FullRefitEvery int
	// TreeSettings configure the confidence-splitting tree and the MMD.
	TreeSettings
	// Preset names the preset these options came from, for the table.
	Preset string
	// Progress, if set, is called after each finished run.
	Progress func(done, total int)
}

// TreeSettings are the settings of the confidence-splitting tree and of the
// sampling-bias measure that both reproductions of Moosbauer et al. 2021
// share.
type TreeSettings struct {
	// MinNodeSize is the smallest number of ICE curves in a leaf of the
	// confidence-splitting tree (regional.Options.MinNodeSize; default
	// regional's max(5, n/100)).
	MinNodeSize int
	// SplitOnSD grows the tree on the ICE curves of the posterior sd, as
	// the authors' code does, instead of eq. 6's variance
	// (regional.Options.OnSD).
	SplitOnSD bool
	// Criterion is the tree's impurity (regional.Options.Criterion; default
	// eq. 6, regional.CriterionL2).
	Criterion regional.Criterion
	// MMD is the sampling-bias estimator: MMDUniformBandwidth (default) or
	// MMDMedian.
	MMD string
}

// fill sets an empty criterion to eq. 6's and an empty MMD estimator to
// MMDUniformBandwidth, and rejects unknown ones and a negative leaf size.
func (t *TreeSettings) fill() error {
	c, err := regional.ParseCriterion(string(t.Criterion))
	if err != nil {
		return err
	}
	t.Criterion = c
	if t.MMD == "" {
		t.MMD = MMDUniformBandwidth
	}
	if t.MMD != MMDUniformBandwidth && t.MMD != MMDMedian {
		return fmt.Errorf("unknown MMD estimator %q (want %s or %s)", t.MMD, MMDUniformBandwidth, MMDMedian)
	}
	if t.MinNodeSize < 0 {
		return fmt.Errorf("min node size %d must be ≥ 0 (0: regional's default)", t.MinNodeSize)
	}
	return nil
}

// regional is the tree's options, without its depth.
func (t TreeSettings) regional() regional.Options {
	return regional.Options{MinNodeSize: t.MinNodeSize, OnSD: t.SplitOnSD, Criterion: t.Criterion}
}

// PresetMoosbauer2021 names the settings of an earlier version of the
// authors' public code for section 6.1 of Moosbauer et al. 2021
// (github.com/slds-lmu/paper_2021_xautoml, benchmarks/synthetic/config.R
// before it drew the design uniformly at random, and mlrMBO's default
// learner and infill optimizer it relies on); for Table 2 it is the paper's
// text (LCBenchPreset).
const PresetMoosbauer2021 = "moosbauer2021"

// PresetMoosbauer2021Code names the settings of the authors' public code at
// its latest commit (github.com/slds-lmu/paper_2021_xautoml 8b9dad8), where
// they differ from PresetMoosbauer2021: for Table 1 an initial design drawn
// uniformly at random (generateRandomDesign) and the authors' MMD estimator;
// for Table 2 λ = 0.5, a 2·d random Latin hypercube, and one replication.
const PresetMoosbauer2021Code = "moosbauer2021-code"

// The sampling-bias estimators of the MMD column.
const (
	// MMDUniformBandwidth is xbo's: the square root of the biased MMD² with
	// a Gaussian kernel of fixed bandwidth √(d/6) (metrics.UniformBandwidth)
	// against Samples uniform points; fixed so that runs compare.
	MMDUniformBandwidth = "uniform-bandwidth"
	// MMDMedian is the authors' (metrics.MMD2Median): median-heuristic
	// bandwidth, against a uniform sample as large as the run; the column
	// shows √MMD² averaged over replications, as their Table 1 does.
	MMDMedian = "median"
)

// presetAliases are earlier names of presets, still accepted so that
// command lines and scripts written with them keep working, but never shown
// in help: the first name of moosbauer2021 was the project's internal number
// of the paper, which means nothing to a user.
var presetAliases = map[string]string{"paper000": PresetMoosbauer2021, "paper000-code": PresetMoosbauer2021Code}

// PDPSplitPreset returns the options of a named preset (or of an earlier
// name of one, presetAliases). PresetMoosbauer2021:
// Styblinski-Tang in d = 3, 5, 8 with 80, 150 and 250 evaluations; an
// initial random Latin hypercube of 4·d points (lhs::randomLHS); a
// Matérn-3/2 GP whose nugget is 1e-8 of the output variance (mlrMBO's
// nugget.stability = 1e-8, i.e. 1e-8 in the GP's standardized units), its
// hyperparameters refitted at every iteration as mlrMBO does; LCB with
// λ = τ ∈ {5, 1, 0.1}, maximized by mlrMBO's focus search; G = 20 grid
// points, n = 1,000 Monte Carlo points; depths n_sp = 1, 3, with leaves of
// at least 2 ICE curves (the code's min.split = 2), grown on the ICE curves
// of the posterior sd (the code's compute_tree on getPredictionSE, where
// eq. 6 has the variance); 30 replications. PresetMoosbauer2021Code: the
// same with the initial 4·d points drawn uniformly at random (the code's
// generateRandomDesign; the random LHS of PresetMoosbauer2021 is an earlier
// commit's) and the authors' MMD estimator (MMDMedian).
func PDPSplitPreset(name string) (PDPSplitOptions, error) {
	if canonical, ok := presetAliases[name]; ok {
		name = canonical
	}
	switch name {
	case PresetMoosbauer2021:
		return PDPSplitOptions{
			Preset: PresetMoosbauer2021,
			Dims:   []int{3, 5, 8}, Budgets: map[int]int{3: 80, 5: 150, 8: 250},
			Taus: []float64{5, 1, 0.1}, Depths: []int{1, 3}, Seeds: 30,
			Samples: 1000, GridSize: 20,
			InitialDesign: "lhs", AcqOptimizer: "focus", MinNoise: 1e-8, FullRefitEvery: -1,
			TreeSettings: TreeSettings{MinNodeSize: 2, SplitOnSD: true},
		}, nil
	case PresetMoosbauer2021Code:
		p, err := PDPSplitPreset(PresetMoosbauer2021)
		p.Preset, p.InitialDesign, p.Criterion, p.MMD = PresetMoosbauer2021Code, "random", regional.CriterionL2, MMDMedian
		return p, err
	default:
		return PDPSplitOptions{}, fmt.Errorf("bench: pdp-split: unknown preset %q (want %s or %s)", name, PresetMoosbauer2021, PresetMoosbauer2021Code)
	}
}

// PDPSplitRow is one line of the table: one (d, τ) averaged over seeds.
type PDPSplitRow struct {
	Dim  int     `json:"d"`
	Tau  float64 `json:"tau"`
	Bias string  `json:"bias"` // "high", "medium", "low" as in the paper
	MMD  float64 `json:"mmd"`
	// DeltaMC, DeltaOC and DeltaNLL hold one mean relative improvement (in %)
	// per depth in PDPSplitResult.Depths; the SD fields are their standard
	// deviations over seeds.
	DeltaMC    []float64 `json:"delta_mc"`
	DeltaMCSD  []float64 `json:"delta_mc_sd"`
	DeltaOC    []float64 `json:"delta_oc"`
	DeltaNLL   []float64 `json:"delta_nll"`
	DeltaNLLSD []float64 `json:"delta_nll_sd"`
	// GlobalMC and GlobalNLL are the global PDP's means over seeds.
	GlobalMC  float64 `json:"global_mc"`
	GlobalNLL float64 `json:"global_nll"`
	Seeds     int     `json:"seeds"`
	// Paper holds the paper's Table 1 row (MMD, δMC 1, δMC 3, δNLL 1, δNLL 3)
	// when the paper has this (d, τ), for side-by-side reading.
	Paper []float64 `json:"paper,omitempty"`
	// Runs holds every replication's values: a published figure from a
	// single run is to be read against their spread, not against the mean.
	Runs []PDPSplitRunValues `json:"runs"`
}

// PDPSplitRunValues are one replication's MMD and relative improvements (in
// %, one per depth).
type PDPSplitRunValues struct {
	Seed     int       `json:"seed"`
	MMD      float64   `json:"mmd"`
	DeltaMC  []float64 `json:"delta_mc"`
	DeltaNLL []float64 `json:"delta_nll"`
}

// PDPSplitResult is the reproduced table.
type PDPSplitResult struct {
	Preset       string        `json:"preset,omitempty"`
	Depths       []int         `json:"depths"`
	BudgetPerDim int           `json:"budget_per_dim,omitempty"`
	Budgets      map[int]int   `json:"budgets,omitempty"`
	Design       string        `json:"initial_design"`
	AcqOptimizer string        `json:"acq_optimizer"`
	MinNoise     float64       `json:"min_noise"`
	MinNodeSize  int           `json:"min_node_size,omitempty"`
	SplitOnSD    bool          `json:"split_on_sd,omitempty"`
	Criterion    string        `json:"criterion"`
	MMD          string        `json:"mmd_estimator"`
	Samples      int           `json:"samples"`
	GridSize     int           `json:"grid_size"`
	Rows         []PDPSplitRow `json:"rows"`
}

// paperTable1 is Table 1 of Moosbauer et al. 2021: d, τ → MMD, δMC(1), δMC(3),
// δNLL(1), δNLL(3) in %. The caption pairs "medium" with τ = 2 while the text
// and figure use τ = 1; we run τ = 1.
var paperTable1 = map[[2]float64][]float64{
	{3, 5}: {0.18, 7.65, 13.64, 5.89, 10.92}, {3, 1}: {0.51, 12.86, 36.92, 4.78, 7.70}, {3, 0.1}: {0.56, 16.52, 34.84, 2.77, -1.62},
	{5, 5}: {0.15, 6.63, 15.45, 2.82, 6.05}, {5, 1}: {0.45, 19.67, 37.28, 4.05, 7.80}, {5, 0.1}: {0.53, 11.99, 33.06, -3.86, -1.93},
	{8, 5}: {0.11, 3.58, 9.67, 0.84, 2.40}, {8, 1}: {0.42, 8.86, 23.03, 1.51, 3.30}, {8, 0.1}: {0.56, 6.59, 19.84, 1.53, 4.29},
}

func biasLabel(tau float64) string {
	switch {
	case tau <= 0.5:
		return "high"
	case tau < 3:
		return "medium"
	default:
		return "low"
	}
}

// pdpSplitRun is one seed of one (d, τ).
type pdpSplitRun struct {
	mmd                      float64
	globalMC, globalNLL      float64
	deltaMC, deltaOC, deltaN []float64
}

// PDPSplit runs the experiment.
func PDPSplit(ctx context.Context, o PDPSplitOptions) (*PDPSplitResult, error) {
	res, err := pdpSplit(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("bench: pdp-split: %w", err)
	}
	return res, nil
}

func pdpSplit(ctx context.Context, o PDPSplitOptions) (*PDPSplitResult, error) {
	if o.Dims == nil {
		o.Dims = []int{3, 5, 8}
	}
	if o.Taus == nil {
		o.Taus = []float64{5, 1, 0.1}
	}
	if o.Depths == nil {
		o.Depths = []int{1, 3}
	}
	if o.Seeds == 0 {
		o.Seeds = 30
	}
	if o.BudgetPerDim == 0 {
		o.BudgetPerDim = 30
	}
	if o.Samples == 0 {
		o.Samples = pdp.DefaultSamples
	}
	if o.GridSize == 0 {
		o.GridSize = pdp.DefaultGridSize
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.InitialDesign == "" {
		o.InitialDesign = "maximin"
	}
	if o.AcqOptimizer == "" {
		o.AcqOptimizer = "random"
	}
	if o.MinNoise == 0 {
		o.MinNoise = gp.DefaultMinNoise
	}
	if err := o.TreeSettings.fill(); err != nil {
		return nil, err
	}
	switch {
	case o.Seeds < 1 || o.BudgetPerDim < 5 || o.Samples < 10 || o.GridSize < 2 || o.Workers < 1:
		return nil, fmt.Errorf("need seeds ≥ 1, budget per dimension ≥ 5 (the initial design is 4·d), samples ≥ 10, grid ≥ 2, workers ≥ 1")
	case len(o.Dims) == 0 || len(o.Taus) == 0 || len(o.Depths) == 0:
		return nil, errors.New("dimensions, τ values and depths must not be empty")
	case !(o.MinNoise > 0) || math.IsInf(o.MinNoise, 0):
		return nil, fmt.Errorf("min noise %v must be positive and finite", o.MinNoise)
	}
	for _, d := range o.Dims {
		if d < 2 {
			return nil, fmt.Errorf("dimension %d: need at least 2 (one to explain, one to split on)", d)
		}
		if b := o.budget(d); b <= 4*d {
			return nil, fmt.Errorf("dimension %d: budget %d leaves no evaluation after the 4·d = %d design points (set Budgets[%d])", d, b, 4*d, d)
		}
	}
	for _, tau := range o.Taus {
		if !(tau > 0) || math.IsInf(tau, 0) {
			return nil, fmt.Errorf("τ = %v must be positive", tau)
		}
	}
	for _, k := range o.Depths {
		if k < 1 {
			return nil, fmt.Errorf("depth %d must be at least 1", k)
		}
	}
	type job struct{ di, ti, seed int }
	var jobs []job
	for di := range o.Dims {
		for ti := range o.Taus {
			for s := 1; s <= o.Seeds; s++ {
				jobs = append(jobs, job{di, ti, s})
			}
		}
	}
	runs := make([][][]pdpSplitRun, len(o.Dims))
	for di := range runs {
		runs[di] = make([][]pdpSplitRun, len(o.Taus))
		for ti := range runs[di] {
			runs[di][ti] = make([]pdpSplitRun, o.Seeds)
		}
	}
	err := parallelDo(ctx, len(jobs), o.Workers, o.Progress, func(k int) error {
		j := jobs[k]
		r, err := pdpSplitOne(ctx, o, o.Dims[j.di], o.Taus[j.ti], uint64(j.seed))
		if err != nil {
			return fmt.Errorf("d=%d τ=%g seed %d: %w", o.Dims[j.di], o.Taus[j.ti], j.seed, err)
		}
		runs[j.di][j.ti][j.seed-1] = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &PDPSplitResult{Preset: o.Preset, Depths: o.Depths, Samples: o.Samples, GridSize: o.GridSize,
		Design: o.InitialDesign, AcqOptimizer: o.AcqOptimizer, MinNoise: o.MinNoise, MinNodeSize: o.MinNodeSize, SplitOnSD: o.SplitOnSD,
		Criterion: string(o.Criterion), MMD: o.MMD}
	if o.Budgets != nil {
		out.Budgets = map[int]int{}
		for _, d := range o.Dims {
			out.Budgets[d] = o.Budgets[d]
		}
	} else {
		out.BudgetPerDim = o.BudgetPerDim
	}
	for di, d := range o.Dims {
		for ti, tau := range o.Taus {
			rs := runs[di][ti]
			row := PDPSplitRow{Dim: d, Tau: tau, Bias: biasLabel(tau), Seeds: len(rs), Paper: paperTable1[[2]float64{float64(d), tau}]}
			row.MMD = meanOf(len(rs), func(k int) float64 { return rs[k].mmd })
			row.GlobalMC = meanOf(len(rs), func(k int) float64 { return rs[k].globalMC })
			row.GlobalNLL = meanOf(len(rs), func(k int) float64 { return rs[k].globalNLL })
			for l := range o.Depths {
				m, s := meanSD(len(rs), func(k int) float64 { return rs[k].deltaMC[l] })
				row.DeltaMC, row.DeltaMCSD = append(row.DeltaMC, 100*m), append(row.DeltaMCSD, 100*s)
				m, _ = meanSD(len(rs), func(k int) float64 { return rs[k].deltaOC[l] })
				row.DeltaOC = append(row.DeltaOC, 100*m)
				m, s = meanSD(len(rs), func(k int) float64 { return rs[k].deltaN[l] })
				row.DeltaNLL, row.DeltaNLLSD = append(row.DeltaNLL, 100*m), append(row.DeltaNLLSD, 100*s)
			}
			for k, r := range rs {
				v := PDPSplitRunValues{Seed: k + 1, MMD: r.mmd}
				for l := range o.Depths {
					v.DeltaMC, v.DeltaNLL = append(v.DeltaMC, 100*r.deltaMC[l]), append(v.DeltaNLL, 100*r.deltaN[l])
				}
				row.Runs = append(row.Runs, v)
			}
			out.Rows = append(out.Rows, row)
		}
	}
	return out, nil
}

// designMMD is the sampling bias of a run's evaluations x (unit encoding)
// by the named estimator, against uniform points drawn from seed.
func designMMD(sp *space.Space, x [][]float64, estimator string, samples int, seed uint64) (float64, error) {
	rng := rand.New(rand.NewPCG(seed^0x4d4d44, seed^0x9e3779b97f4a7c15))
	if estimator == MMDMedian {
		m2, err := metrics.MMD2Median(x, sp.Sample(rng, len(x)))
		return math.Sqrt(m2), err
	}
	return metrics.MMD(x, sp.Sample(rng, samples), metrics.UniformBandwidth(sp.Dim()))
}

func meanOf(n int, f func(int) float64) float64 {
	m, _ := meanSD(n, f)
	return m
}

func meanSD(n int, f func(int) float64) (float64, float64) {
	s, s2 := 0.0, 0.0
	for k := range n {
		v := f(k)
		s += v
		s2 += v * v
	}
	m := s / float64(n)
	if n < 2 {
		return m, 0
	}
	return m, math.Sqrt(math.Max(0, (s2-float64(n)*m*m)/float64(n-1)))
}

// budget is the total number of evaluations of a run in d dimensions; zero
// when Budgets lacks d.
func (o PDPSplitOptions) budget(d int) int {
	if o.Budgets != nil {
		return o.Budgets[d]
	}
	return o.BudgetPerDim * d
}

// runOptions is the BO run of one (d, τ, seed) on options with defaults
// filled in: LCB with τ on a Matérn-3/2 GP after a 4·d-point design, fitted
// to the values themselves as in the paper.
func (o PDPSplitOptions) runOptions(d int, tau float64, seed uint64) RunOptions {
	return RunOptions{
		Function: NameStyblinskiTang, Dim: d, Budget: o.budget(d), Seed: seed,
		Strategy: "lcb", Tau: tau,
		Config: &opt.Config{
			Kernel: "matern32", MinNoise: o.MinNoise, InitialDesign: o.InitialDesign, InitialSize: 4 * d,
			AcqOptimizer: o.AcqOptimizer, FullRefitEvery: o.FullRefitEvery,
			OutputWarp:       "none", // the authors' mlrMBO fits its GP to the values themselves
			TrustRegion:      "none", // and searches the whole space
			LengthscalePrior: "none", // with hyperparameters of maximum likelihood
		},
	}
}

// finalGPOptions configure the GP "fitted in the last iteration" that the
// PDPs are computed from: the optimizer's kernel and noise floor.
func (o PDPSplitOptions) finalGPOptions(seed uint64) gp.Options {
	return gp.Options{Kernel: gp.Matern32, MinNoise: o.MinNoise, Seed: seed}
}

// pdpSplitOne runs BO once and scores the global and regional PDPs of x1.
func pdpSplitOne(ctx context.Context, o PDPSplitOptions, d int, tau float64, seed uint64) (pdpSplitRun, error) {
	run, err := Run(ctx, o.runOptions(d, tau, seed))
	if err != nil {
		return pdpSplitRun{}, err
	}
	f := run.Function
	sp, err := f.Space()
	if err != nil {
		return pdpSplitRun{}, err
	}
	x, y := completed(run.History)
	// The GP "fitted in the last iteration": refit on all evaluations, with
	// the optimizer's kernel.
	model, err := gp.Fit(x, y, o.finalGPOptions(seed))
	if err != nil {
		return pdpSplitRun{}, err
	}
	truth := func(grid []float64, leaf *regional.Leaf, tree *regional.Node) ([]float64, error) {
		return styblinskiTangRegionalPD(sp, 0, grid, leaf, tree)
	}
	r, err := scoreRegional(model, sp, run.Best.U, 0, truth, o.Samples, o.GridSize, o.Depths,
		o.regional(), seed)
	if err != nil {
		return r, err
	}
	r.mmd, err = designMMD(sp, x, o.MMD, o.Samples, seed)
	return r, err
}

// styblinskiTangRegionalPD is the closed-form PD of x_p over a box-shaped
// region of the other coordinates, uniform there: the function is additive,
// so PD(v) = g(v) + Σ_{j≠p} E[g(x_j)], x_j ~ U[lo_j, hi_j], with
// E[x^k] = (hi^{k+1} − lo^{k+1})/((k+1)(hi − lo)). The whole space (leaf
// nil) gives bench's PartialDependence. The box is read from the split path.
func styblinskiTangRegionalPD(sp *space.Space, p int, grid []float64, leaf *regional.Leaf, tree *regional.Node) ([]float64, error) {
	lo := make([]float64, sp.Dim())
	hi := make([]float64, sp.Dim())
	for j, par := range sp.Params {
		lo[j], hi[j] = par.Low, par.High
	}
	if leaf != nil {
		if err := leafBox(sp, tree, leaf.ID, lo, hi); err != nil {
			return nil, err
		}
	}
	offset := 0.0
	for j := range sp.Dim() {
		if j == p {
			continue
		}
		moment := func(k float64) float64 {
			if hi[j] == lo[j] {
				return math.Pow(lo[j], k)
			}
			return (math.Pow(hi[j], k+1) - math.Pow(lo[j], k+1)) / ((k + 1) * (hi[j] - lo[j]))
		}
		offset += 0.5 * (moment(4) - 16*moment(2) + 5*moment(1))
	}
	out := make([]float64, len(grid))
	for g, v := range grid {
		out[g] = styblinskiTangTerm(v) + offset
	}
	return out, nil
}

// leafBox narrows lo/hi to the box of the leaf with the given ID by walking
// the numeric splits from the root.
func leafBox(sp *space.Space, n *regional.Node, id int, lo, hi []float64) error {
	var walk func(n *regional.Node) bool
	walk = func(n *regional.Node) bool {
		if n.IsLeaf() {
			return n.ID == id
		}
		j, ok := sp.Index(n.Split.Param)
		if !ok || n.Split.Threshold == nil {
			return false
		}
		t := *n.Split.Threshold
		oldLo, oldHi := lo[j], hi[j]
		hi[j] = math.Min(oldHi, t)
		if walk(n.Left) {
			return true
		}
		hi[j] = oldHi
		lo[j] = math.Max(oldLo, t)
		if walk(n.Right) {
			return true
		}
		lo[j] = oldLo
		return false
	}
	if !walk(n) {
		return fmt.Errorf("leaf %d is not in the tree or lies behind a non-numeric split", id)
	}
	return nil
}

// regionalTruth gives the true PD on the grid for the whole space (leaf nil)
// or for the region of a leaf of tree.
type regionalTruth func(grid []float64, leaf *regional.Leaf, tree *regional.Node) ([]float64, error)

func completed(history []opt.Trial) ([][]float64, []float64) {
	var x [][]float64
	var y []float64
	for _, t := range history {
		if t.State == opt.Complete {
			x = append(x, t.U)
			y = append(y, t.Value)
		}
	}
	return x, y
}

// scoreRegional computes the global PDP of parameter p with the eq. 5 band, and for each depth the
// relative improvements of MC, OC and NLL in the leaf holding best. Each PDP
// is judged against the true PD of its own region: a regional PDP estimates
// the partial dependence within the region, which differs from the global
// one unless the function is free of interactions and the region is the
// whole space.
func scoreRegional(model *gp.GP, sp *space.Space, best []float64, p int,
	truth regionalTruth, samples, grid int, depths []int, split regional.Options, seed uint64) (pdpSplitRun, error) {
	var r pdpSplitRun
	ice, err := pdp.NewICE(context.Background(), model, sp, []int{p}, pdp.Options{Samples: samples, GridSize: grid, Seed: seed, KeepVariance: true, Workers: 1})
	if err != nil {
		return r, err
	}
	global, err := ice.PDP(context.Background(), nil)
	if err != nil {
		return r, err
	}
	bestGrid := best[p]
	gridU := make([]float64, len(ice.GridU))
	for g, u := range ice.GridU {
		gridU[g] = u[0]
	}
	score := func(res *pdp.Result, leaf *regional.Leaf, tree *regional.Node) (mc, oc, nll float64, err error) {
		if mc, err = metrics.MC(res.SD); err != nil {
			return
		}
		if oc, err = metrics.OC(gridU, res.SD, bestGrid); err != nil {
			return
		}
		trueCurve, err := truth(res.Grid, leaf, tree)
		if err != nil {
			return 0, 0, 0, err
		}
		nll, err = metrics.NLL(trueCurve, res.Mean, res.SD)
		return
	}
	gMC, gOC, gNLL, err := score(global, nil, nil)
	if err != nil {
		return r, err
	}
	r.globalMC, r.globalNLL = gMC, gNLL
	for _, depth := range depths {
		split.MaxDepth = depth
		reg, err := regional.Explain(context.Background(), ice, best, split)
		if err != nil {
			return r, err
		}
		leaf := reg.Best()
		if leaf == nil {
			return r, errors.New("no leaf holds the best configuration")
		}
		mc, oc, nll, err := score(leaf.PDP, leaf, reg.Tree)
		if err != nil {
			return r, err
		}
		dMC, err1 := metrics.RelativeImprovement(gMC, mc)
		dOC, err2 := metrics.RelativeImprovement(gOC, oc)
		dN, err3 := metrics.RelativeImprovement(gNLL, nll)
		if err := errors.Join(err1, err2, err3); err != nil {
			return r, err
		}
		r.deltaMC = append(r.deltaMC, dMC)
		r.deltaOC = append(r.deltaOC, dOC)
		r.deltaN = append(r.deltaN, dN)
	}
	return r, nil
}

// WriteTable prints the result in the shape of the paper's Table 1, with the
// paper's numbers beside ours.
func (r *PDPSplitResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "d\tτ\tMMD\t")
	for _, k := range r.Depths {
		fmt.Fprintf(tw, "δMC n_sp=%d\t", k)
	}
	for _, k := range r.Depths {
		fmt.Fprintf(tw, "δNLL n_sp=%d\t", k)
	}
	fmt.Fprintf(tw, "|\tpaper MMD\tδMC 1\tδMC 3\tδNLL 1\tδNLL 3\t\n")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%d\t%g\t%s (%.2f)\t", row.Dim, row.Tau, row.Bias, row.MMD)
		for l := range r.Depths {
			fmt.Fprintf(tw, "%.2f ± %.1f\t", row.DeltaMC[l], row.DeltaMCSD[l])
		}
		for l := range r.Depths {
			fmt.Fprintf(tw, "%.2f ± %.1f\t", row.DeltaNLL[l], row.DeltaNLLSD[l])
		}
		fmt.Fprintf(tw, "|\t")
		if row.Paper != nil {
			fmt.Fprintf(tw, "%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t", row.Paper[0], row.Paper[1], row.Paper[2], row.Paper[3], row.Paper[4])
		} else {
			fmt.Fprintf(tw, "–\t–\t–\t–\t–\t")
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	budget := fmt.Sprintf("budget %d·d", r.BudgetPerDim)
	if r.Budgets != nil {
		dims := slices.Sorted(maps.Keys(r.Budgets))
		parts := make([]string, len(dims))
		for k, d := range dims {
			parts[k] = fmt.Sprintf("%d (d = %d)", r.Budgets[d], d)
		}
		budget = "budgets " + strings.Join(parts, ", ")
	}
	preset, leaves := presetPrefix(r.Preset), treeDescription(r.MinNodeSize, r.SplitOnSD, r.Criterion)
	_, err := fmt.Fprintf(w, "%sδ in %% (mean ± sd over %d seeds), leaf holding the best configuration vs global PDP of x1; eq. 5 bands; n = %d, G = %d; %s with a 4·d-point %s design; Matérn-3/2 GP, noise floor %g; %s acquisition search; n_sp = tree depth, %s; %s. Paper columns: Table 1 of Moosbauer et al. 2021.\n",
		preset, seedsOf(r), r.Samples, r.GridSize, budget, r.Design, r.MinNoise, r.AcqOptimizer, leaves, mmdDescription(r.MMD, r.Samples))
	return err
}

// presetPrefix names a preset at the start of a table's footer.
func presetPrefix(preset string) string {
	if preset == "" {
		return ""
	}
	return "preset " + preset + "; "
}

// treeDescription says how the tree was grown, for a table's footer.
func treeDescription(minNodeSize int, onSD bool, criterion string) string {
	leaves := "regional's default smallest leaf"
	if minNodeSize > 0 {
		leaves = fmt.Sprintf("leaves of ≥ %d ICE curves", minNodeSize)
	}
	return leaves + splitDescription(onSD, criterion)
}

// splitDescription says what the tree split, for a table's footer.
func splitDescription(onSD bool, criterion string) string {
	curves := "variance"
	if onSD {
		curves = "sd"
	}
	switch regional.Criterion(criterion) {
	case regional.CriterionL1:
		return ", L1 impurity around the median on the ICE curves of the " + curves
	case regional.CriterionArea:
		return ", impurity of the mean heights of the ICE curves of the " + curves
	case regional.CriterionPoint:
		return ", impurity of the " + curves + " at the Monte Carlo points"
	}
	return ", eq. 6 on the ICE curves of the " + curves
}

// mmdDescription names the MMD estimator, for a table's footer.
func mmdDescription(estimator string, samples int) string {
	if estimator == MMDMedian {
		return "MMD: √MMD² with a Gaussian kernel of median-heuristic bandwidth against as many uniform points as evaluations (the authors' estimator)"
	}
	return fmt.Sprintf("MMD with a Gaussian kernel of bandwidth √(d/6) against %d uniform points", samples)
}

func seedsOf(r *PDPSplitResult) int {
	if len(r.Rows) == 0 {
		return 0
	}
	return r.Rows[0].Seeds
}
