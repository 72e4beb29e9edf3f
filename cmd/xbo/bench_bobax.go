package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"

	"xbo/acq"
	"xbo/bench"
)

func init() {
	registerBenchmark(benchmark{
		name:    "bobax",
		summary: "Tables 1 and 4 of Moosbauer et al. 2022 (BOBAX): PDP accuracy vs regret of RS, BO-EI, PVAR, BAX, BOBAX and variants",
		run:     runBenchBOBAX,
	})
}

func runBenchBOBAX(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench bobax", flag.ContinueOnError)
	functions := fs.String("functions", "branin,camelback,styblinski-tang:3,hartmann3,hartmann6", `comma-separated test functions ("name" or "name:dim")`)
	methods := fs.String("methods", "", "comma-separated methods (default: the 17 of Table 4 of Moosbauer et al. 2022): rs, ei, pvar, lcb<τ>, bax, bobax<k>, bobax-prob<π>, eibax<β>, bo-rs<k>, a-bobax<w> (BOBAX until the mean PD band half-width is at most w, objective units, then EI)")
	seeds := fs.Int("seeds", 20, "repetitions (seeds 1..N)")
	perDim := fs.Int("budget-per-dim", 30, "evaluations per dimension")
	candidates := fs.Int("candidates", acq.DefaultCandidates, "random candidates per acquisition search")
	grid := fs.Int("grid", acq.DefaultPathGrid, "PD grid size G")
	samples := fs.Int("samples", acq.DefaultPathSamples, "PD Monte Carlo sample size n")
	all := fs.Bool("all-variables", false, "EIG_PDP on the PDs of all variables jointly (BAX_all) instead of the first")
	estimator := fs.String("estimator", string(acq.ClosedForm), "EIG_PDP estimator: closed-form or bax")
	baxPath := fs.Int("bax-path", acq.DefaultMaxBAXPath, "largest execution path the bax estimator conditions on")
	tolerance := fs.Float64("tolerance", 0, "also record the evaluations until the mean 95% band half-width of the targeted PDs is at most this, objective units (Table 2's first column; 0: not recorded)")
	workers := fs.Int("workers", 0, "parallel runs (0: one per CPU)")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of tables")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	est := acq.Estimator(*estimator)
	if est != acq.ClosedForm && est != acq.BAX {
		return usagef("--estimator %q: want closed-form or bax", *estimator)
	}
	if *tolerance < 0 || math.IsInf(*tolerance, 0) || math.IsNaN(*tolerance) {
		return usagef("--tolerance must be a finite value ≥ 0")
	}
	if *seeds < 1 || *perDim < 1 || *candidates < 1 || *grid < 2 || *samples < 1 || *workers < 0 || *baxPath < 1 {
		return usagef("--seeds, --budget-per-dim, --candidates, --samples and --bax-path must be ≥ 1, --grid ≥ 2, --workers ≥ 0")
	}
	opts := bench.BOBAXOptions{
		Functions: splitList(*functions), Methods: splitList(*methods), Seeds: *seeds,
		BudgetPerDim: *perDim, Candidates: *candidates, GridSize: *grid, Samples: *samples,
		AllVariables: *all, Estimator: est, MaxBAXPath: *baxPath, Workers: *workers, Tolerance: *tolerance,
	}
	for _, spec := range opts.Functions {
		name, dim, err := bench.ParseFunctionSpec(spec)
		if err != nil {
			return usageError{err}
		}
		if _, err := bench.Lookup(name, dim); err != nil {
			return usageError{err}
		}
	}
	bar := newProgress(env, "bench bobax")
	opts.Progress = bar.set
	defer bar.finish()
	res, err := bench.BOBAX(ctx, opts)
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.WriteTable(env.stdout)
}
