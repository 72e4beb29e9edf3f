package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"strconv"

	"xbo/bench"
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
	preset := fs.String("preset", "", "settings of a published setup: moosbauer2021 (the authors' code for Table 1 of Moosbauer et al. 2021: budgets 80, 150, 250 for d = 3, 5, 8, a 4·d random LHS, Matérn-3/2 GP with nugget 1e-8, focus search, leaves of ≥ 2 ICE curves); other flags given override it")
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
	if *preset == "" || set["split-on"] {
		switch *splitOn {
		case "variance":
			opts.SplitOnSD = false
		case "sd":
			opts.SplitOnSD = true
		default:
			return usagef("--split-on %q: want variance or sd", *splitOn)
		}
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
	seeds := fs.Int("seeds", 30, "repetitions (seeds 1..N)")
	budget := fs.Int("budget", 200, "evaluations per BO run")
	tau := fs.Float64("tau", 1, "LCB τ")
	depth := fs.Int("depth", 6, "tree depth (the paper's 6 splits)")
	mc := fs.Int("mc", 1000, "Monte Carlo points n")
	grid := fs.Int("grid", 20, "grid points G")
	workers := fs.Int("workers", 0, "parallel runs (0: one per CPU)")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *seeds < 1 || *budget < 30 || !(*tau > 0) || *depth < 1 || *mc < 10 || *grid < 2 || *workers < 0 {
		return usagef("need --seeds ≥ 1, --budget ≥ 30, --tau > 0, --depth ≥ 1, --mc ≥ 10, --grid ≥ 2, --workers ≥ 0")
	}
	if _, err := os.Stat(*data); err != nil {
		return usagef("--data %s: %v (give the path of an LCBench CSV such as lcbench2000_phoneme.csv)", *data, err)
	}
	opts := bench.LCBenchOptions{Data: *data, Seeds: *seeds, Budget: *budget, Tau: *tau, Depth: *depth, Samples: *mc, Grid: *grid, Workers: *workers}
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
