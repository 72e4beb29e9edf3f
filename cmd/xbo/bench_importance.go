package main

import (
	"context"
	"flag"

	"xbo/bench"
)

func init() {
	registerBenchmark(benchmark{
		name:    "importance",
		summary: "accuracy and interval coverage of the importance methods against true Sobol indices, on the truth catalogue (--suite tune, heldout or all) or the older analytic and BO-EI cases (--suite legacy)",
		run:     runBenchImportance,
	})
}

func runBenchImportance(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench importance", flag.ContinueOnError)
	cf := addCatalogueFlags(fs, "numbers of uniform observations, 500,1000,3000", "1")
	large := fs.Int("large", 500, "one more size of uniform data, in trials (0: none)")
	boSeeds := fs.Int("bo-seeds", 3, "legacy suite: EI runs per BO case (Hartmann6 with 180 evaluations, Styblinski-Tang d=4 with 120)")
	methods := fs.String("methods", "gp-sobol,forest-fanova", "comma-separated importance methods")
	truth := fs.Int("truth-samples", 1<<15, "base points of the quasi-Monte Carlo truth of indices without a closed form")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	set := setFlags(fs)
	if *large < 0 || *cf.seeds < 0 || *boSeeds < 0 {
		return usagef("--large, --seeds and --bo-seeds must be at least 0")
	}
	bar := newProgress(env, "bench importance")
	defer bar.finish()
	if *cf.suite == suiteLegacy {
		if err := rejectSet(set, "problems", "cache", "points", "data-dir", "data", "large", "workers"); err != nil {
			return err
		}
		o := bench.ImportanceOptions{Seeds: max(1, *cf.seeds), BOSeeds: *boSeeds, Methods: splitList(*methods), TruthSamples: *truth, Progress: bar.set}
		var err error
		if o.Sizes, err = parseSizes(*cf.sizes); err != nil {
			return usagef("--sizes: %v", err)
		}
		if *boSeeds == 0 {
			o.BOSeeds = -1 // none
		}
		res, err := bench.Importance(ctx, o)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.stdout, res)
		}
		return res.WriteTable(env.stdout)
	}
	suite, closePoints, err := cf.suiteOptions(set, []string{"bo-seeds"})
	if err != nil {
		return err
	}
	suite.Progress = bar.set
	o := bench.TruthImportanceOptions{TruthSuiteOptions: suite, Large: *large, Methods: splitList(*methods), TruthSamples: *truth}
	if *large == 0 {
		o.Large = -1 // none
	}
	res, err := bench.TruthImportance(ctx, o)
	if cerr := closePoints(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.stdout, res)
	}
	return res.WriteTable(env.stdout)
}
