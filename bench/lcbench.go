package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/forest"
	"xbo/gp"
	"xbo/opt"
	"xbo/space"
)

// LCBenchSpace is the MLP search space of LCBench (Zimmer et al. 2021) as used
// by Moosbauer et al. 2021, section 6.2 (its Table 5), restricted to the values
// the phoneme file holds: num_layers takes 2..5 there (5 is written "True").
const LCBenchSpace = `{"objective":"minimize","params":[
 {"name":"batch_size","type":"int","low":16,"high":512,"log":true},
 {"name":"learning_rate","type":"float","low":0.0001,"high":0.1,"log":true},
 {"name":"momentum","type":"float","low":0.1,"high":0.99},
 {"name":"weight_decay","type":"float","low":0.00001,"high":0.1},
 {"name":"num_layers","type":"int","low":2,"high":5},
 {"name":"max_units","type":"int","low":64,"high":1024,"log":true},
 {"name":"max_dropout","type":"float","low":0,"high":1}]}`

// LCBenchModel is an empirical performance model: a random forest fitted to the
// LCBench evaluations of one task, predicting the balanced validation error in %
// (100 − balanced accuracy) from a configuration in unit encoding. It stands in
// for training the network (Moosbauer et al. 2021, section 6.2), and its own
// partial dependence is the ground truth that BO's surrogate is judged by.
type LCBenchModel struct {
	Space  *space.Space
	Forest *forest.Forest
	Rows   int
}

// LoadLCBench reads an LCBench CSV (the columns of
// shared/data/lcbench2000_phoneme.csv) and fits the forest.
func LoadLCBench(path string, seed uint64) (*LCBenchModel, error) {
	m, err := loadLCBench(path, seed)
	if err != nil {
		return nil, fmt.Errorf("bench: lcbench: %w", err)
	}
	return m, nil
}

func loadLCBench(path string, seed uint64) (*LCBenchModel, error) {
	sp, err := space.Parse([]byte(LCBenchSpace))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	target := "final_val_balanced_accuracy"
	need := append(sp.Names(), target)
	for _, name := range need {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("%s: no column %q", path, name)
		}
	}
	var x [][]float64
	var y []float64
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		vals := make([]float64, sp.Dim())
		for j, name := range sp.Names() {
			text := strings.TrimSpace(rec[col[name]])
			if name == "num_layers" && text == "True" {
				text = "5" // an extraction bug upstream wrote 5 as True (data README)
			}
			v, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d, column %q: %q is not a number", path, line, name, text)
			}
			p := &sp.Params[j]
			if p.Type == space.Int {
				v = math.Round(v)
			}
			vals[j] = math.Min(p.High, math.Max(p.Low, v))
		}
		u, err := sp.Encode(vals)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		acc, err := strconv.ParseFloat(strings.TrimSpace(rec[col[target]]), 64)
		if err != nil || math.IsNaN(acc) {
			return nil, fmt.Errorf("%s: line %d: bad %s", path, line, target)
		}
		x = append(x, u)
		y = append(y, 100-acc)
	}
	if len(x) < 10 {
		return nil, fmt.Errorf("%s: only %d rows", path, len(x))
	}
	rf, err := forest.Fit(x, y, forest.Options{Seed: seed, Levels: sp.Levels()})
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return &LCBenchModel{Space: sp, Forest: rf, Rows: len(x)}, nil
}

// Eval is the objective: predicted balanced error (%) at natural values.
func (m *LCBenchModel) Eval(vals []float64) (float64, error) {
	u, err := m.Space.Encode(vals)
	if err != nil {
		return 0, err
	}
	mean, variance := []float64{0}, []float64{0}
	if err := m.Forest.Predict([][]float64{u}, mean, variance); err != nil {
		return 0, err
	}
	return mean[0], nil
}

// LCBenchOptions configure the reproduction of Table 2 of Moosbauer et al. 2021.
type LCBenchOptions struct {
	Data    string  // LCBench CSV
	Seeds   int     // default 30
	Budget  int     // evaluations, default 200 (as the paper)
	Tau     float64 // LCB τ, default 1 (as the paper)
	Depth   int     // tree depth ("6 splits" in the customtrees sense), default 6
	Samples int     // n, default 1000
	Grid    int     // G, default 20
	Workers int
	// InitialDesign and InitialSize are opt.Config's (default a maximin
	// Latin hypercube of opt's default size).
	InitialDesign string
	InitialSize   int
	// AcqOptimizer and FullRefitEvery are opt.Config's.
	AcqOptimizer   string
	FullRefitEvery int
	// TreeSettings configure the confidence-splitting tree and the MMD.
	TreeSettings
	// Preset names the preset these options came from, for the table.
	Preset string
	// Progress, if set, is called after each finished run.
	Progress func(done, total int)
}

// LCBenchPreset returns the options of a named preset (or of an earlier
// name, presetAliases). PresetMoosbauer2021 is section 6.2 of the paper's
// text: τ = 1, 200 evaluations, 6 splits, n = 1,000, G = 20, 30
// replications. PresetMoosbauer2021Code is the authors' public code for
// Table 2 (benchmarks/mlp/2_mbo_runs/config.R and 4_tree_splitting/config.R):
// λ = 0.5; an initial random Latin hypercube of 2·d points
// (generateDesign(2·d, fun = lhs::randomLHS)); mlrMBO's focus search and a
// hyperparameter refit at every iteration; trees of depth 6 grown with
// SS_L2 on the ICE curves of the sd with leaves of at least 2 curves; their
// MMD estimator; and one replication, because the code scores only the
// first replication's final model of each task (compute_trees on models[1]).
func LCBenchPreset(name string) (LCBenchOptions, error) {
	if canonical, ok := presetAliases[name]; ok {
		name = canonical
	}
	paper := LCBenchOptions{Preset: PresetMoosbauer2021, Seeds: 30, Budget: 200, Tau: 1, Depth: 6, Samples: 1000, Grid: 20}
	switch name {
	case PresetMoosbauer2021:
		return paper, nil
	case PresetMoosbauer2021Code:
		d := strings.Count(LCBenchSpace, `"name"`)
		code := paper
		code.Preset, code.Seeds, code.Tau = PresetMoosbauer2021Code, 1, 0.5
		code.InitialDesign, code.InitialSize, code.AcqOptimizer, code.FullRefitEvery = "lhs", 2*d, "focus", -1
		code.TreeSettings = TreeSettings{MinNodeSize: 2, SplitOnSD: true, Criterion: regional.CriterionL2, MMD: MMDMedian}
		return code, nil
	default:
		return LCBenchOptions{}, fmt.Errorf("bench: lcbench: unknown preset %q (want %s or %s)", name, PresetMoosbauer2021, PresetMoosbauer2021Code)
	}
}

// LCBenchRow is one hyperparameter of Table 2: relative improvements in %.
type LCBenchRow struct {
	Param      string  `json:"param"`
	DeltaMC    float64 `json:"delta_mc"`
	DeltaMCSD  float64 `json:"delta_mc_sd"`
	DeltaOC    float64 `json:"delta_oc"`
	DeltaOCSD  float64 `json:"delta_oc_sd"`
	DeltaNLL   float64 `json:"delta_nll"`
	DeltaNLLSD float64 `json:"delta_nll_sd"`
	// Paper is Table 2's row (δMC, δOC, δNLL means over 35 tasks).
	Paper []float64 `json:"paper,omitempty"`
}

// LCBenchResult is the reproduced Table 2 for one task.
type LCBenchResult struct {
	Task   string `json:"task"`
	Preset string `json:"preset,omitempty"`
	Seeds  int    `json:"seeds"`
	// The settings the run used, for the table's footer.
	Tau          float64      `json:"tau"`
	Budget       int          `json:"budget"`
	Depth        int          `json:"depth"`
	Design       string       `json:"initial_design"`
	InitialSize  int          `json:"initial_size,omitempty"`
	AcqOptimizer string       `json:"acq_optimizer"`
	MinNodeSize  int          `json:"min_node_size,omitempty"`
	SplitOnSD    bool         `json:"split_on_sd,omitempty"`
	Criterion    string       `json:"criterion"`
	MMDEstimator string       `json:"mmd_estimator"`
	MMD          float64      `json:"mmd"`
	Rows         []LCBenchRow `json:"rows"`
}

var paperTable2 = map[string][]float64{
	"batch_size": {40.8, 61.9, 19.8}, "learning_rate": {50.2, 57.6, 17.9}, "max_dropout": {49.7, 62.4, 17.4},
	"max_units": {51.1, 58.6, 24.6}, "momentum": {51.7, 58.3, 19.7}, "num_layers": {30.6, 50.9, 13.8},
	"weight_decay": {36.3, 61.0, 11.9},
}

// LCBench runs BO (Matérn-3/2 GP, LCB) on the forest objective and scores,
// for every hyperparameter, the leaf holding the best configuration against
// the global PDP, with the forest's own PD (same grid and Monte Carlo sample)
// as the truth.
func LCBench(ctx context.Context, o LCBenchOptions) (*LCBenchResult, error) {
	res, err := lcbench(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("bench: lcbench: %w", err)
	}
	return res, nil
}

func lcbench(ctx context.Context, o LCBenchOptions) (*LCBenchResult, error) {
	if o.Seeds == 0 {
		o.Seeds = 30
	}
	if o.Budget == 0 {
		o.Budget = 200
	}
	if o.Tau == 0 {
		o.Tau = 1
	}
	if o.Depth == 0 {
		o.Depth = 6
	}
	if o.Samples == 0 {
		o.Samples = pdp.DefaultSamples
	}
	if o.Grid == 0 {
		o.Grid = pdp.DefaultGridSize
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
	if err := o.TreeSettings.fill(); err != nil {
		return nil, err
	}
	if o.InitialSize < 0 || o.InitialSize >= o.Budget {
		return nil, fmt.Errorf("need 0 ≤ initial size < budget, got %d and %d", o.InitialSize, o.Budget)
	}
	if o.Seeds < 1 || o.Budget < 30 || !(o.Tau > 0) || o.Depth < 1 || o.Samples < 10 || o.Grid < 2 || o.Workers < 1 {
		return nil, errors.New("need seeds ≥ 1, budget ≥ 30, τ > 0, depth ≥ 1, samples ≥ 10, grid ≥ 2, workers ≥ 1")
	}
	model, err := loadLCBench(o.Data, 1)
	if err != nil {
		return nil, err
	}
	sp := model.Space
	d := sp.Dim()
	runs := make([]pdpSplitRun, o.Seeds*d)
	mmds := make([]float64, o.Seeds)
	err = parallelDo(ctx, o.Seeds, o.Workers, o.Progress, func(s int) error {
		rs, mmd, err := lcbenchOne(ctx, o, model, uint64(s+1))
		if err != nil {
			return fmt.Errorf("seed %d: %w", s+1, err)
		}
		copy(runs[s*d:], rs)
		mmds[s] = mmd
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &LCBenchResult{Task: o.Data, Preset: o.Preset, Seeds: o.Seeds, Tau: o.Tau, Budget: o.Budget, Depth: o.Depth,
		Design: o.InitialDesign, InitialSize: o.InitialSize, AcqOptimizer: o.AcqOptimizer, MinNodeSize: o.MinNodeSize,
		SplitOnSD: o.SplitOnSD, Criterion: string(o.Criterion), MMDEstimator: o.MMD,
		MMD: meanOf(o.Seeds, func(k int) float64 { return mmds[k] })}
	for j, name := range sp.Names() {
		at := func(k int) pdpSplitRun { return runs[k*d+j] }
		row := LCBenchRow{Param: name, Paper: paperTable2[name]}
		row.DeltaMC, row.DeltaMCSD = meanSD(o.Seeds, func(k int) float64 { return 100 * at(k).deltaMC[0] })
		row.DeltaOC, row.DeltaOCSD = meanSD(o.Seeds, func(k int) float64 { return 100 * at(k).deltaOC[0] })
		row.DeltaNLL, row.DeltaNLLSD = meanSD(o.Seeds, func(k int) float64 { return 100 * at(k).deltaN[0] })
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// lcbenchOne runs one BO, scores every hyperparameter and measures the
// design's sampling bias.
func lcbenchOne(ctx context.Context, o LCBenchOptions, m *LCBenchModel, seed uint64) ([]pdpSplitRun, float64, error) {
	out, x, err := lcbenchScores(ctx, o, m, seed)
	if err != nil {
		return nil, 0, err
	}
	mmd, err := designMMD(m.Space, x, o.MMD, o.Samples, seed)
	return out, mmd, err
}

// optConfig is the optimizer of one run: LCB on a Matérn-3/2 GP fitted to
// the values themselves over the whole space with hyperparameters of
// maximum likelihood, as the authors' mlrMBO.
func (o LCBenchOptions) optConfig(sp *space.Space, seed uint64) opt.Config {
	return opt.Config{Space: sp, Strategy: "lcb", Tau: o.Tau, Kernel: "matern32", OutputWarp: "none", TrustRegion: "none", LengthscalePrior: "none", Seed: seed,
		InitialDesign: o.InitialDesign, InitialSize: o.InitialSize, AcqOptimizer: o.AcqOptimizer, FullRefitEvery: o.FullRefitEvery}
}

// lcbenchScores runs one BO and scores every hyperparameter; it returns the
// scores and the evaluated configurations.
func lcbenchScores(ctx context.Context, o LCBenchOptions, m *LCBenchModel, seed uint64) ([]pdpSplitRun, [][]float64, error) {
	sp := m.Space
	optimizer, err := opt.New(o.optConfig(sp, seed))
	if err != nil {
		return nil, nil, err
	}
	for range o.Budget {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		tr, err := optimizer.Ask()
		if err != nil {
			return nil, nil, err
		}
		y, err := m.Eval(tr.Params)
		if err != nil {
			return nil, nil, err
		}
		if err := optimizer.Tell(tr.ID, y); err != nil {
			return nil, nil, err
		}
	}
	x, y := completed(optimizer.History())
	best, ok := optimizer.Best()
	if !ok {
		return nil, nil, errors.New("no completed trial")
	}
	surrogate, err := gp.Fit(x, y, gp.Options{Kernel: gp.Matern32, Levels: sp.Levels(), Seed: seed})
	if err != nil {
		return nil, nil, err
	}
	var out []pdpSplitRun
	for j := range sp.Dim() {
		// The truth is the forest's own PD on the same grid and Monte Carlo
		// sample (same seed), over the same ICE curves as the estimate: the
		// whole sample for the global PDP, the leaf's members for a region.
		truthICE, err := pdp.NewICE(context.Background(), m.Forest, sp, []int{j}, pdp.Options{Samples: o.Samples, GridSize: o.Grid, Seed: seed, Workers: 1})
		if err != nil {
			return nil, nil, err
		}
		truth := func(grid []float64, leaf *regional.Leaf, _ *regional.Node) ([]float64, error) {
			var members []int
			if leaf != nil {
				members = leaf.Members()
			}
			res, err := truthICE.PDP(context.Background(), members)
			if err != nil {
				return nil, err
			}
			return res.Mean, nil
		}
		r, err := scoreRegional(surrogate, sp, best.U, j, truth, o.Samples, o.Grid, []int{o.Depth},
			o.regional(), seed)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", sp.Params[j].Name, err)
		}
		out = append(out, r)
	}
	return out, x, nil
}

// WriteTable prints the result in the shape of the paper's Table 2, with the
// paper's means (over 35 tasks) beside ours (one task).
func (r *LCBenchResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Hyperparameter\tδMC (%)\tδOC (%)\tδNLL (%)\t|\tpaper δMC\tδOC\tδNLL\t")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%.1f (%.1f)\t%.1f (%.1f)\t%.1f (%.1f)\t|\t", row.Param, row.DeltaMC, row.DeltaMCSD, row.DeltaOC, row.DeltaOCSD, row.DeltaNLL, row.DeltaNLLSD)
		if row.Paper != nil {
			fmt.Fprintf(tw, "%.1f\t%.1f\t%.1f\t\n", row.Paper[0], row.Paper[1], row.Paper[2])
		} else {
			fmt.Fprintln(tw, "–\t–\t–\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	preset, leaves := presetPrefix(r.Preset), treeDescription(r.MinNodeSize, r.SplitOnSD, r.Criterion)
	design := "opt's default number of"
	if r.InitialSize > 0 {
		design = strconv.Itoa(r.InitialSize)
	}
	_, err := fmt.Fprintf(w, "%smean (sd) over %d seeds on %s; LCB τ = %g, %d evaluations, %s %s design points, %s acquisition search; tree depth %d, %s; mean MMD of the BO design vs uniform %.3f (%s). Paper columns: Table 2 of Moosbauer et al. 2021, means over 35 tasks.\n",
		preset, r.Seeds, r.Task, r.Tau, r.Budget, design, r.Design, r.AcqOptimizer, r.Depth, leaves, r.MMD, mmdDescription(r.MMDEstimator, 1000))
	return err
}
