package main

import (
	"context"
	"flag"

	"xbo/bench"
)

func init() {
	registerBenchmark(benchmark{
		name:    "importance",
		summary: "issue 17: accuracy of the importance methods against analytic and Monte Carlo Sobol indices (uniform and BO-EI data)",
		run:     runBenchImportance,
	})
}

func runBenchImportance(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench importance", flag.ContinueOnError)
	sizes := fs.String("sizes", "500,1000,3000", "comma-separated numbers of uniform random observations")
	seeds := fs.Int("seeds", 1, "datasets per case and size (seeds 1..N)")
	boSeeds := fs.Int("bo-seeds", 3, "EI runs per BO case (Hartmann6 with 180 evaluations, Styblinski-Tang d=4 with 120)")
	methods := fs.String("methods", "gp-sobol,forest-fanova", "comma-separated importance methods")
	truth := fs.Int("truth-samples", 1<<15, "base points of the quasi-Monte Carlo truth for Hartmann6")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	o := bench.ImportanceOptions{Seeds: *seeds, BOSeeds: *boSeeds, Methods: splitList(*methods), TruthSamples: *truth}
	var err error
	if o.Sizes, err = parseInts(*sizes); err != nil {
		return usagef("--sizes: %v", err)
	}
	if *seeds < 1 || *boSeeds < 0 {
		return usagef("need --seeds ≥ 1 and --bo-seeds ≥ 0")
	}
	if *boSeeds == 0 {
		o.BOSeeds = -1 // none
	}
	bar := newProgress(env, "bench importance")
	o.Progress = bar.set
	defer bar.finish()
	res, err := bench.Importance(ctx, o)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.stdout, res)
	}
	return res.WriteTable(env.stdout)
}
