package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"strconv"

	"xbo/bench"
	"xbo/explain/regional"
)

func init() {
	registerBenchmark(benchmark{
		name:    "pdp-split",
		summary: "Table 1 of Moosbauer et al. 2021: regional vs global PDP confidence on Styblinski-Tang under LCB sampling bias",
		run:     runBenchPDPSplit,
	})
}

func runBenchPDPSplit(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench pdp-split", flag.ContinueOnError)
	preset := fs.String("preset", "", "settings of a published setup: moosbauer2021 (Table 1 of Moosbauer et al. 2021 as an earlier commit of the authors' code ran it: budgets 80, 150, 250 for d = 3, 5, 8, a 4·d random LHS, Matérn-3/2 GP with nugget 1e-8, focus search, leaves of ≥ 2 ICE curves, split on the sd curves) or moosbauer2021-code (the same as their latest code: a 4·d uniform random design and their MMD estimator); other flags given override it")
	dims := fs.String("dims", "3,5,8", "comma-separated dimensions of Styblinski-Tang")
	taus := fs.String("taus", "5,1,0.1", "comma-separated LCB τ values (low, medium, high sampling bias)")
	depths := fs.String("depths", "1,3", "comma-separated tree depths n_sp")
	seeds := fs.Int("seeds", 30, "repetitions (seeds 1..N)")
	fs.IntVar(seeds, "reps", 30, "the same as --seeds")
	perDim := fs.Int("budget-per-dim", 30, "evaluations per dimension (the first 4·d are a maximin LHS); not with --preset")
	mc := fs.Int("mc", 1000, "Monte Carlo points n")
	grid := fs.Int("grid", 20, "grid points G")
	workers := fs.Int("workers", 0, "parallel runs (0: one per CPU)")
	splitOn := fs.String("split-on", "variance", "ICE curves the tree splits: variance (eq. 6) or sd (the authors' code; the moosbauer2021 preset's)")
	criterion := fs.String("criterion", "l2", criterionHelp)
	mmd := fs.String("mmd", bench.MMDUniformBandwidth, mmdHelp)
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	opts := bench.PDPSplitOptions{Seeds: *seeds, BudgetPerDim: *perDim, Samples: *mc, GridSize: *grid, Workers: *workers}
	if *preset != "" {
		if set["budget-per-dim"] {
			return usagef("--budget-per-dim cannot be combined with --preset: the preset fixes each dimension's budget")
		}
		p, err := bench.PDPSplitPreset(*preset)
		if err != nil {
			return usagef("--preset: %v", err)
		}
		// The preset's values stand unless a flag was given.
		if set["seeds"] || set["reps"] {
			p.Seeds = *seeds
		}
		if set["mc"] {
			p.Samples = *mc
		}
		if set["grid"] {
			p.GridSize = *grid
		}
		p.Workers = *workers
		opts = p
	}
	if err := splitFlags(*preset == "", set, *splitOn, *criterion, *mmd, &opts.TreeSettings); err != nil {
		return err
	}
	var err error
	if *preset == "" || set["dims"] {
		if opts.Dims, err = parseInts(*dims); err != nil {
			return usagef("--dims: %v", err)
		}
	}
	if *preset == "" || set["depths"] {
		if opts.Depths, err = parseInts(*depths); err != nil {
			return usagef("--depths: %v", err)
		}
	}
	if *preset == "" || set["taus"] {
		opts.Taus = nil
		for _, s := range splitList(*taus) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v > 0) {
				return usagef("--taus: %q is not a positive number", s)
			}
			opts.Taus = append(opts.Taus, v)
		}
	}
	if *seeds < 1 || *perDim < 5 || *mc < 10 || *grid < 2 || *workers < 0 {
		return usagef("need --seeds ≥ 1, --budget-per-dim ≥ 5, --mc ≥ 10, --grid ≥ 2, --workers ≥ 0")
	}
	if opts.Budgets != nil {
		for _, d := range opts.Dims {
			if opts.Budgets[d] == 0 {
				return usagef("--dims: preset %s has budgets for d = 3, 5, 8 only, not d = %d", *preset, d)
			}
		}
	}
	bar := newProgress(env, "bench pdp-split")
	opts.Progress = bar.set
	defer bar.finish()
	res, err := bench.PDPSplit(ctx, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.stdout, res)
	}
	return res.WriteTable(env.stdout)
}

const (
	criterionHelp = "impurity the tree minimizes: l2 (eq. 6, the authors' SS_L2), l1 (Σ|v − median|), area (spread of the curves' mean heights, SS_area) or point (spread of the sd at the Monte Carlo points, SS_sd)"
	mmdHelp       = "sampling-bias estimator: uniform-bandwidth (Gaussian kernel of bandwidth √(d/6) against n uniform points) or median (the authors': median-heuristic bandwidth against as many uniform points as evaluations, √MMD² shown)"
)

// splitFlags applies --split-on, --criterion and --mmd to a benchmark's
// options: all of them without a preset, otherwise only those given.
func splitFlags(all bool, set map[string]bool, splitOn, criterion, mmd string, t *bench.TreeSettings) error {
	if all || set["split-on"] {
		switch splitOn {
		case "variance":
			t.SplitOnSD = false
		case "sd":
			t.SplitOnSD = true
		default:
			return usagef("--split-on %q: want variance or sd", splitOn)
		}
	}
	if all || set["criterion"] {
		c, err := regional.ParseCriterion(criterion)
		if err != nil || criterion == "" {
			return usagef("--criterion %q: want l2, l1, area or point", criterion)
		}
		t.Criterion = c
	}
	if all || set["mmd"] {
		if mmd != bench.MMDUniformBandwidth && mmd != bench.MMDMedian {
			return usagef("--mmd %q: want %s or %s", mmd, bench.MMDUniformBandwidth, bench.MMDMedian)
		}
		t.MMD = mmd
	}
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, part := range splitList(s) {
		v, err := strconv.Atoi(part)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

func init() {
	registerBenchmark(benchmark{
		name:    "pdp-split-lcbench",
		summary: "Table 2 of Moosbauer et al. 2021: regional PDPs per hyperparameter, BO on an LCBench random-forest objective",
		run:     runBenchPDPSplitLCBench,
	})
}

// lcbenchDefault is where the project's shared data sits when a command runs
// from the repository root, as CI lays it out.
const lcbenchDefault = "../shared/data/lcbench2000_phoneme.csv"

func runBenchPDPSplitLCBench(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench pdp-split-lcbench", flag.ContinueOnError)
	data := fs.String("data", lcbenchDefault, "LCBench CSV of one task (default: the objective lcbench-phoneme from the project's shared data, beside the repository)")
	preset := fs.String("preset", "", "settings of a published setup: moosbauer2021 (Table 2 of Moosbauer et al. 2021 as the text describes it: τ = 1, 200 evaluations, 6 splits, 30 replications) or moosbauer2021-code (the authors' code: λ = 0.5, a 2·d random LHS, focus search, SS_L2 on the sd curves with leaves of ≥ 2, their MMD estimator, one replication); other flags given override it")
	seeds := fs.Int("seeds", 30, "repetitions (seeds 1..N)")
	budget := fs.Int("budget", 200, "evaluations per BO run")
	tau := fs.Float64("tau", 1, "LCB τ")
	depth := fs.Int("depth", 6, "tree depth (the paper's 6 splits)")
	mc := fs.Int("mc", 1000, "Monte Carlo points n")
	grid := fs.Int("grid", 20, "grid points G")
	workers := fs.Int("workers", 0, "parallel runs (0: one per CPU)")
	splitOn := fs.String("split-on", "variance", "ICE curves the tree splits: variance (eq. 6) or sd (the authors' code)")
	criterion := fs.String("criterion", "l2", criterionHelp)
	mmd := fs.String("mmd", bench.MMDUniformBandwidth, mmdHelp)
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *seeds < 1 || *budget < 30 || !(*tau > 0) || *depth < 1 || *mc < 10 || *grid < 2 || *workers < 0 {
		return usagef("need --seeds ≥ 1, --budget ≥ 30, --tau > 0, --depth ≥ 1, --mc ≥ 10, --grid ≥ 2, --workers ≥ 0")
	}
	if _, err := os.Stat(*data); err != nil {
		return usagef("--data %s: %v (give the path of an LCBench CSV such as lcbench2000_phoneme.csv)", *data, err)
	}
	opts := bench.LCBenchOptions{Data: *data, Seeds: *seeds, Budget: *budget, Tau: *tau, Depth: *depth, Samples: *mc, Grid: *grid}
	if *preset != "" {
		p, err := bench.LCBenchPreset(*preset)
		if err != nil {
			return usagef("--preset: %v", err)
		}
		// The preset's values stand unless a flag was given.
		for name, apply := range map[string]func(){
			"seeds": func() { p.Seeds = *seeds }, "budget": func() { p.Budget = *budget }, "tau": func() { p.Tau = *tau },
			"depth": func() { p.Depth = *depth }, "mc": func() { p.Samples = *mc }, "grid": func() { p.Grid = *grid },
		} {
			if set[name] {
				apply()
			}
		}
		p.Data = *data
		opts = p
	}
	opts.Workers = *workers
	if err := splitFlags(*preset == "", set, *splitOn, *criterion, *mmd, &opts.TreeSettings); err != nil {
		return err
	}
	bar := newProgress(env, "bench pdp-split-lcbench")
	opts.Progress = bar.set
	defer bar.finish()
	res, err := bench.LCBench(ctx, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.stdout, res)
	}
	return res.WriteTable(env.stdout)
}
