// Package report assembles every explanation xbo has of one tuning run into a
// single self-contained HTML file (inline SVG and CSS, readable without
// scripts) and a JSON document with all of its numbers: the run summary, the
// optimization trace, fANOVA importance (Hutter, Hoos and Leyton-Brown 2014,
// paper 003, eq. 6), a PDP with confidence band for every hyperparameter
// (Moosbauer et al. 2021, paper 000, eq. 2–5) together with the regional PDP
// of the confidence-splitting tree (paper 000, Algorithm 1, eq. 6) and its
// relative improvement δ = (MC_global − MC_region)/MC_global, the sampling
// bias as the maximum mean discrepancy between the evaluated configurations and
// a uniform sample (Gretton et al. 2012, eq. 5), and the ShapleyMBO
// decomposition of the best configuration (Croppi 2021, paper 004, eq. 8).
//
// The package computes nothing new: it calls the explainers through their
// exported APIs and only adds the reading aids a report needs (captions that
// quote band widths and sample sizes, a null reference for the MMD).
package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"xbo/explain/fanova"
	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/explain/shapley"
	"xbo/forest"
	"xbo/gp"
	"xbo/metrics"
	"xbo/space"
	"xbo/surrogate"
)

// Input is a finished run: the usable trials in the order they were
// evaluated, plus how many were not usable.
type Input struct {
	Space *space.Space
	// Rows are natural values (space conventions, NaN = inactive), Values the
	// objective values, both in evaluation order and holding only usable
	// (complete, finite) trials.
	Rows   [][]float64
	Values []float64
	// Skipped counts trials without a usable value; States, when known, breaks
	// every trial down by the source's state names ("failed", "pruned", ...).
	Skipped int
	States  map[string]int
	// Source describes where the run came from, for the summary.
	Source string
}

// Options tune the computation. The zero value gives the papers' defaults
// where they are affordable: G = 20, n = 1000, 95% bands from eq. 5,
// a Matérn 5/2 GP, 3 confidence splits, 1000 background points for Shapley.
type Options struct {
	GridSize int
	Samples  int
	Alpha    float64
	Exact    bool   // eq. 4 bands instead of eq. 5
	Kernel   string // GP kernel: matern52 (default), matern32, se
	Trees    int    // fANOVA forest size (0: forest default)
	// MaxSplits bounds the confidence-splitting tree (0: regional default).
	MaxSplits int
	// Tau is the LCB weight of the Shapley decomposition (default 1).
	Tau float64
	// ShapleyBackground is the background sample of the Shapley game
	// (default 1000 points; the thesis' 1000·p is affordable only for small p).
	ShapleyBackground int
	// MMDReplicates is the number of uniform-vs-uniform draws that give the
	// MMD's null reference (default 50).
	MMDReplicates int
	// MinDelta is the relative improvement δ from which a regional PDP is
	// shown next to the global one (default 0.05).
	MinDelta float64
	Seed     uint64
	// Progress, if set, is called after each step with the steps done and the
	// total; the CLI draws a progress bar from it.
	Progress func(done, total int, step string)
}

func (o *Options) defaults() error {
	if o.GridSize == 0 {
		o.GridSize = pdp.DefaultGridSize
	}
	if o.Samples == 0 {
		o.Samples = pdp.DefaultSamples
	}
	if o.Alpha == 0 {
		o.Alpha = pdp.DefaultAlpha
	}
	if o.Kernel == "" {
		o.Kernel = "matern52"
	}
	if o.Tau == 0 {
		o.Tau = 1
	}
	if o.ShapleyBackground == 0 {
		o.ShapleyBackground = 1000
	}
	if o.MMDReplicates == 0 {
		o.MMDReplicates = 50
	}
	if o.MinDelta == 0 {
		o.MinDelta = 0.05
	}
	switch {
	case o.GridSize < 2:
		return fmt.Errorf("grid size %d: need at least 2", o.GridSize)
	case o.Samples < 10:
		return fmt.Errorf("Monte Carlo sample %d: need at least 10", o.Samples)
	case !(o.Alpha > 0 && o.Alpha < 1):
		return fmt.Errorf("alpha %v: must lie in (0, 1)", o.Alpha)
	case o.Trees < 0 || o.MaxSplits < 0 || o.ShapleyBackground < 1 || o.MMDReplicates < 1:
		return errors.New("trees, splits, Shapley background and MMD replicates must not be negative")
	case !(o.Tau > 0) || math.IsInf(o.Tau, 0):
		return fmt.Errorf("tau %v: must be finite and positive", o.Tau)
	case !(o.MinDelta > 0 && o.MinDelta < 1):
		return fmt.Errorf("minimum δ %v: must lie in (0, 1)", o.MinDelta)
	}
	return nil
}

// Report holds every number of the report; it is what --json writes.
type Report struct {
	Summary    Summary            `json:"summary"`
	Trace      []TracePoint       `json:"trace"`
	Importance *fanova.Importance `json:"importance"`
	// Ranking lists the main effects by decreasing fraction.
	Ranking  []RankedEffect `json:"ranking"`
	PDPs     []ParamPDP     `json:"pdps"`
	Sampling SamplingBias   `json:"sampling_bias"`
	Shapley  *ShapleyPart   `json:"shapley"`
	Settings Settings       `json:"settings"`
	Seconds  float64        `json:"seconds"` // time spent computing

	// The figures draw the evaluated values as rugs on each parameter's scale.
	space *space.Space
	rows  [][]float64
}

// Summary describes the run.
type Summary struct {
	Source     string         `json:"source,omitempty"`
	Objective  string         `json:"objective"`
	Params     []string       `json:"params"`
	Usable     int            `json:"usable_trials"`
	Skipped    int            `json:"skipped_trials"`
	States     map[string]int `json:"states,omitempty"`
	BestIndex  int            `json:"best_index"` // among usable trials, 0-based
	BestValue  float64        `json:"best_value"`
	BestConfig map[string]any `json:"best_config"`
}

// TracePoint is one usable trial of the trace.
type TracePoint struct {
	Trial     int     `json:"trial"` // 0-based among usable trials
	Value     float64 `json:"value"`
	BestSoFar float64 `json:"best_so_far"`
}

// RankedEffect is one row of the importance ranking.
type RankedEffect struct {
	Param    string  `json:"param"`
	Fraction float64 `json:"fraction"`
	Std      float64 `json:"std"`
}

// ParamPDP is the PDP section of one hyperparameter.
type ParamPDP struct {
	Param string `json:"param"`
	// Regional holds the global PDP, the tree and the leaves.
	Regional *regional.Result `json:"regional"`
	// MCGlobal is the mean band standard deviation of the global PDP;
	// MCRegion that of the leaf holding the best configuration, and Delta
	// their relative improvement (0 when the tree did not split).
	MCGlobal float64 `json:"mc_global"`
	MCRegion float64 `json:"mc_region"`
	Delta    float64 `json:"delta"`
	// ShowRegional says whether Delta reached Options.MinDelta.
	ShowRegional bool `json:"show_regional"`
	// Range is max − min of the global PDP, HalfWidth the mean band
	// half-width q·ŝ_S: an effect is resolved when Range exceeds it clearly.
	Range     float64 `json:"range"`
	HalfWidth float64 `json:"half_width"`
}

// SamplingBias compares the evaluated configurations with uniform sampling.
type SamplingBias struct {
	MMD       float64 `json:"mmd"`
	Bandwidth float64 `json:"bandwidth"`
	// NullMedian and Null95 summarise the MMD between a uniform sample of the
	// same size and the uniform reference: what no bias looks like.
	NullMedian float64 `json:"null_median"`
	Null95     float64 `json:"null_95"`
	Reference  int     `json:"reference_size"`
	Reading    string  `json:"reading"`
}

// ShapleyPart is the decomposition of the best configuration.
type ShapleyPart struct {
	Explanation *shapley.Explanation `json:"explanation"`
	Summary     *shapley.Summary     `json:"summary"`
}

// Settings record how the numbers were computed.
type Settings struct {
	Surrogate  string  `json:"surrogate"`
	GridSize   int     `json:"grid_size"`
	Samples    int     `json:"samples"`
	Level      float64 `json:"level"`
	Band       string  `json:"band"`
	Trees      int     `json:"trees"`
	Tau        float64 `json:"tau"`
	Background int     `json:"shapley_background"`
	Seed       uint64  `json:"seed"`
}

func (in *Input) check() error {
	if in == nil || in.Space == nil {
		return errors.New("no space")
	}
	d := in.Space.Dim()
	if d == 0 {
		return errors.New("the space has no parameters")
	}
	if len(in.Rows) != len(in.Values) {
		return fmt.Errorf("%d rows but %d values", len(in.Rows), len(in.Values))
	}
	if len(in.Rows) < 3 {
		return fmt.Errorf("%d usable trials; a report needs at least 3", len(in.Rows))
	}
	for i, r := range in.Rows {
		if len(r) != d {
			return fmt.Errorf("trial %d: %d values for %d parameters", i, len(r), d)
		}
		if err := in.Space.Validate(r); err != nil {
			return fmt.Errorf("trial %d: %w", i, err)
		}
		if math.IsNaN(in.Values[i]) || math.IsInf(in.Values[i], 0) {
			return fmt.Errorf("trial %d: value %v is not finite", i, in.Values[i])
		}
	}
	return nil
}

// Build computes every part of the report. It checks ctx between steps.
func Build(ctx context.Context, in *Input, opts Options) (*Report, error) {
	start := time.Now()
	if err := in.check(); err != nil {
		return nil, fmt.Errorf("report: input: %w", err)
	}
	if err := opts.defaults(); err != nil {
		return nil, fmt.Errorf("report: options: %w", err)
	}
	kernel, err := gp.ParseKernel(opts.Kernel)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	sp := in.Space
	d := sp.Dim()
	total := 4 + d // fit, importance, d PDPs, MMD, Shapley
	done := 0
	step := func(name string) error {
		done++
		if opts.Progress != nil {
			opts.Progress(done, total, name)
		}
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	x := make([][]float64, len(in.Rows))
	for i, r := range in.Rows {
		if x[i], err = sp.Encode(r); err != nil {
			return nil, fmt.Errorf("report: trial %d: %w", i, err)
		}
	}
	rep := &Report{Settings: Settings{
		Surrogate: "GP (" + opts.Kernel + " kernel)", GridSize: opts.GridSize, Samples: opts.Samples,
		Level: 1 - opts.Alpha, Band: string(pdp.BandApprox), Trees: opts.Trees, Tau: opts.Tau,
		Background: opts.ShapleyBackground, Seed: opts.Seed},
		space: sp, rows: in.Rows}
	if opts.Exact {
		rep.Settings.Band = string(pdp.BandExact)
	}
	if rep.Settings.Trees == 0 {
		rep.Settings.Trees = forest.DefaultTrees
	}
	rep.summarize(in)

	model, err := gp.Fit(x, in.Values, gp.Options{Kernel: kernel, Levels: sp.Levels(), Seed: opts.Seed})
	if err != nil {
		return nil, fmt.Errorf("report: surrogate: %w", err)
	}
	if err := step("surrogate"); err != nil {
		return nil, err
	}

	if err := rep.importance(sp, x, in.Values, opts); err != nil {
		return nil, fmt.Errorf("report: importance: %w", err)
	}
	if err := step("importance"); err != nil {
		return nil, err
	}

	bestU := x[rep.Summary.BestIndex]
	for j := range sp.Params {
		part, err := paramPDP(ctx, model, sp, j, bestU, opts)
		if err != nil {
			return nil, fmt.Errorf("report: PDP of %s: %w", sp.Params[j].Name, err)
		}
		rep.PDPs = append(rep.PDPs, *part)
		if err := step("PDP " + sp.Params[j].Name); err != nil {
			return nil, err
		}
	}

	if rep.Sampling, err = samplingBias(sp, x, opts); err != nil {
		return nil, fmt.Errorf("report: sampling bias: %w", err)
	}
	if err := step("sampling bias"); err != nil {
		return nil, err
	}

	if rep.Shapley, err = explainBest(ctx, model, sp, bestU, opts); err != nil {
		return nil, fmt.Errorf("report: Shapley: %w", err)
	}
	if err := step("Shapley"); err != nil {
		return nil, err
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

func (rep *Report) summarize(in *Input) {
	sp := in.Space
	sign := sp.Sign()
	best := 0
	for i, v := range in.Values {
		if sign*v < sign*in.Values[best] {
			best = i
		}
	}
	rep.Summary = Summary{Source: in.Source, Objective: string(sp.Objective), Params: sp.Names(),
		Usable: len(in.Rows), Skipped: in.Skipped, States: in.States, BestIndex: best,
		BestValue: in.Values[best], BestConfig: sp.ToMap(in.Rows[best])}
	if rep.Summary.Objective == "" {
		rep.Summary.Objective = "minimize"
	}
	run := math.Inf(1)
	for i, v := range in.Values {
		if i == 0 || sign*v < sign*run {
			run = v
		}
		rep.Trace = append(rep.Trace, TracePoint{Trial: i, Value: v, BestSoFar: run})
	}
}

func (rep *Report) importance(sp *space.Space, x [][]float64, y []float64, opts Options) error {
	f, err := forest.Fit(x, y, forest.Options{Trees: opts.Trees, Seed: opts.Seed, Levels: sp.Levels()})
	if err != nil {
		return err
	}
	mass, err := fanova.InactiveMass(sp)
	if err != nil {
		return err
	}
	e, err := fanova.New(f, fanova.Options{InactiveMass: mass})
	if err != nil {
		return err
	}
	dec, err := e.Decompose(sp.Dim() > 1)
	if err != nil {
		return err
	}
	im, err := dec.Importance(sp.Names())
	if err != nil {
		return err
	}
	rep.Importance = im
	for _, r := range im.RankedMain() {
		rep.Ranking = append(rep.Ranking, RankedEffect{Param: r.Name, Fraction: r.Fraction, Std: r.Std})
	}
	return nil
}

func paramPDP(ctx context.Context, model surrogate.Model, sp *space.Space, j int, bestU []float64, opts Options) (*ParamPDP, error) {
	ice, err := pdp.NewICE(ctx, model, sp, []int{j}, pdp.Options{GridSize: opts.GridSize, Samples: opts.Samples,
		Alpha: opts.Alpha, Exact: opts.Exact, KeepVariance: true, Seed: opts.Seed + uint64(j)})
	if err != nil {
		return nil, err
	}
	// The best configuration locates the region a user cares about; when the
	// parameter of interest is off there, no leaf can hold it.
	res, err := regional.Explain(ctx, ice, bestU, regional.Options{MaxSplits: opts.MaxSplits})
	if err != nil {
		return nil, err
	}
	part := &ParamPDP{Param: sp.Params[j].Name, Regional: res}
	g := res.Global
	if part.MCGlobal, err = metrics.MC(g.SD); err != nil {
		return nil, err
	}
	part.MCRegion = part.MCGlobal
	if leaf := res.Best(); leaf != nil && res.Splits > 0 {
		if part.MCRegion, err = metrics.MC(leaf.PDP.SD); err != nil {
			return nil, err
		}
		if part.MCGlobal > 0 {
			if part.Delta, err = metrics.RelativeImprovement(part.MCGlobal, part.MCRegion); err != nil {
				return nil, err
			}
		}
		part.ShowRegional = part.Delta >= opts.MinDelta
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	hw := 0.0
	for i := range g.Mean {
		lo, hi = math.Min(lo, g.Mean[i]), math.Max(hi, g.Mean[i])
		hw += (g.Upper[i] - g.Lower[i]) / 2
	}
	part.Range = hi - lo
	part.HalfWidth = hw / float64(len(g.Mean))
	return part, nil
}

// samplingBias measures how far the evaluated configurations are from a
// uniform sample. MMD's size depends on n and d, so the reading compares it
// with the MMD of uniform samples of the same size against the same reference.
func samplingBias(sp *space.Space, x [][]float64, opts Options) (SamplingBias, error) {
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	nRef := max(1000, 2*len(x))
	ref := sp.Sample(rng, nRef)
	bw := metrics.UniformBandwidth(sp.Dim())
	mmd, err := metrics.MMD(x, ref, bw)
	if err != nil {
		return SamplingBias{}, err
	}
	null := make([]float64, opts.MMDReplicates)
	for r := range null {
		if null[r], err = metrics.MMD(sp.Sample(rng, len(x)), ref, bw); err != nil {
			return SamplingBias{}, err
		}
	}
	sort.Float64s(null)
	sb := SamplingBias{MMD: mmd, Bandwidth: bw, Reference: nRef,
		NullMedian: quantileSorted(null, 0.5), Null95: quantileSorted(null, 0.95)}
	sb.Reading = readMMD(sb, len(x))
	return sb, nil
}

func quantileSorted(v []float64, q float64) float64 {
	pos := q * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(v)-1)
	return v[lo] + (pos-float64(lo))*(v[hi]-v[lo])
}

func readMMD(sb SamplingBias, n int) string {
	ratio := sb.MMD / sb.NullMedian
	switch {
	case sb.MMD <= sb.Null95:
		return fmt.Sprintf("The %d evaluated configurations are as spread out as a uniform sample of the same size would be "+
			"(MMD %.3g, within the 95%% range of uniform samples, ≤ %.3g). PDPs and importances rest on data that cover the space evenly.",
			n, sb.MMD, sb.Null95)
	case ratio < 3:
		return fmt.Sprintf("The evaluated configurations are mildly concentrated (MMD %.3g, %.1f× the typical value %.3g for a uniform sample "+
			"of %d points). The optimizer favoured some regions; curves are best supported where the rug marks are dense.",
			sb.MMD, ratio, sb.NullMedian, n)
	default:
		return fmt.Sprintf("The evaluated configurations are strongly concentrated (MMD %.3g, %.1f× the typical value %.3g for a uniform "+
			"sample of %d points), as expected of an optimizer that exploits. A PDP averages over the whole space, so away from the "+
			"evaluated region it is the surrogate's extrapolation: trust the bands there, and prefer the regional PDP of the best region.",
			sb.MMD, ratio, sb.NullMedian, n)
	}
}

// negated turns a maximization surrogate into the minimization one ShapleyMBO
// expects: the mean changes sign, the variance does not.
type negated struct{ surrogate.Model }

func (n negated) Predict(x [][]float64, mean, variance []float64) error {
	if err := n.Model.Predict(x, mean, variance); err != nil {
		return err
	}
	for i := range mean {
		mean[i] = -mean[i]
	}
	return nil
}

func explainBest(ctx context.Context, model surrogate.Model, sp *space.Space, bestU []float64, opts Options) (*ShapleyPart, error) {
	m := model
	if sp.Sign() < 0 {
		m = negated{model}
	}
	fn, err := shapley.LCB(m, opts.Tau)
	if err != nil {
		return nil, err
	}
	e, err := shapley.Explain(ctx, fn, bestU, shapley.Options{Space: sp, BackgroundSize: opts.ShapleyBackground,
		Seed: opts.Seed, Samples: shapley.DefaultSamples})
	if err != nil {
		return nil, err
	}
	sum, err := e.Summarize(sp)
	if err != nil {
		return nil, err
	}
	return &ShapleyPart{Explanation: e, Summary: sum}, nil
}
