package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strings"

	"xbo/bench"
)

func init() {
	registerBenchmark(benchmark{
		name:    "calibration",
		summary: "how often the PDP bands cover the true partial dependence, on the truth catalogue (--suite tune, heldout or all) or the older suite (--suite legacy)",
		run:     runBenchCalibration,
	})
}

// suiteLegacy selects the older suites of docs/research/calibration.md and
// docs/research/importance.md, kept so their measurements can be repeated.
const suiteLegacy = "legacy"

// catalogueFlags are the flags shared by the catalogue benchmarks.
type catalogueFlags struct {
	suite, problems, data, sizes, cache, points, dataDir *string
	seeds, workers                                       *int
}

func addCatalogueFlags(fs *flag.FlagSet, legacySizes, legacySeeds string) catalogueFlags {
	return catalogueFlags{
		suite:    fs.String("suite", bench.SuiteTune, "tune (the problems the explanations are tuned on, seeds 1..N), heldout (problems never looked at while tuning, seeds 1001..1000+N), all (both, reported apart) or legacy (the older suite)"),
		problems: fs.String("problems", "", "comma-separated problems of the suite (default: all of it)"),
		data:     fs.String("data", "", "data kinds: uniform, default (xbo's default optimizer), lcb (τ = 0.1), ei (EI without trust region or output warp) (default uniform,default,lcb; legacy uniform,ei,lcb)"),
		sizes:    fs.String("sizes", "", "comma-separated trials per dimension, the smaller a prefix of the larger (default 10,30; legacy: "+legacySizes+")"),
		seeds:    fs.Int("seeds", 0, "seeds per cell (default 5; legacy "+legacySeeds+")"),
		cache:    fs.String("cache", "", "directory where generated data sets are kept and reused (delete it after changing the optimizer)"),
		points:   fs.String("points", "", "file that receives every raw comparison with the truth as a JSON line"),
		dataDir:  fs.String("data-dir", "../shared/data", "directory of the shared tables (lda, svm and logreg grids); absent tables are skipped with a note"),
		workers:  fs.Int("workers", 0, "data sets computed in parallel (default: all processors)"),
	}
}

// suiteOptions turns the flags into options; set says which flags were
// given. The returned close flushes and closes the points file.
func (c catalogueFlags) suiteOptions(set map[string]bool, legacyOnly []string) (bench.TruthSuiteOptions, func() error, error) {
	none := func() error { return nil }
	for _, name := range legacyOnly {
		if set[name] {
			return bench.TruthSuiteOptions{}, none, usagef("--%s belongs to --suite legacy", name)
		}
	}
	sz, err := parseSizes(*c.sizes)
	if err != nil {
		return bench.TruthSuiteOptions{}, none, usagef("--sizes: %v", err)
	}
	if *c.seeds < 0 || *c.workers < 0 {
		return bench.TruthSuiteOptions{}, none, usagef("--seeds and --workers must be at least 0")
	}
	switch *c.suite {
	case bench.SuiteTune, bench.SuiteHeldOut, bench.SuiteAll:
	default:
		return bench.TruthSuiteOptions{}, none, usagef("--suite %q: want %s, %s, %s or %s", *c.suite, bench.SuiteTune, bench.SuiteHeldOut, bench.SuiteAll, suiteLegacy)
	}
	// Unknown problems, or problems of the other part, are refused before
	// any work (the benchmark would refuse them too, as a run-time error).
	all, skipped, err := bench.LoadTruthCatalogue(bench.CatalogueOptions{DataDir: *c.dataDir})
	if err != nil {
		return bench.TruthSuiteOptions{}, none, err
	}
	for _, s := range skipped {
		if slices.Contains(splitList(*c.problems), s.Name) {
			return bench.TruthSuiteOptions{}, none, usagef("%s: %s (see --data-dir)", s.Name, s.Reason)
		}
	}
	if _, err := bench.SelectTruthProblems(all, *c.suite, splitList(*c.problems)); err != nil {
		return bench.TruthSuiteOptions{}, none, usageError{err}
	}
	o := bench.TruthSuiteOptions{Suite: *c.suite, Problems: splitList(*c.problems), DataDir: *c.dataDir, Data: splitList(*c.data),
		Sizes: sz, Seeds: *c.seeds, Cache: *c.cache, Workers: *c.workers}
	if *c.points == "" {
		return o, none, nil
	}
	fh, err := os.Create(*c.points)
	if err != nil {
		return o, none, err
	}
	buf := bufio.NewWriter(fh)
	o.Points = buf
	return o, func() error {
		err := buf.Flush()
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// rejectSet refuses catalogue flags under --suite legacy.
func rejectSet(set map[string]bool, names ...string) error {
	for _, n := range names {
		if set[n] {
			return usagef("--%s does not apply to --suite legacy", n)
		}
	}
	return nil
}

// parseSizes is parseInts with an empty list meaning the suite's default.
func parseSizes(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	return parseInts(s)
}

func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

func runBenchCalibration(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench calibration", flag.ContinueOnError)
	cf := addCatalogueFlags(fs, "10,25", "3")
	funcs := fs.String("functions", "", "legacy suite: comma-separated name[:dim] (default: "+strings.Join(bench.CalibrationFunctions, ",")+")")
	surrogates := fs.String("surrogates", "", "surrogates: gp, forest (default gp; legacy gp,forest)")
	bands := fs.String("bands", "", "band estimators: calibrated, approx, exact (default: the engine's default band; legacy all three)")
	samples := fs.Int("samples", 0, "Monte Carlo points of each PDP (default: the engine's; legacy 1000)")
	truth := fs.Int("truth-samples", 0, "Monte Carlo points of a true PD without a closed form (default 50000; legacy 20000)")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	set := setFlags(fs)
	if *samples < 0 || *truth < 0 {
		return usagef("--samples and --truth-samples must be at least 0")
	}
	bar := newProgress(env, "bench calibration")
	if *cf.suite == suiteLegacy {
		if err := rejectSet(set, "problems", "cache", "points", "data-dir"); err != nil {
			return err
		}
		sz, err := parseSizes(*cf.sizes)
		if err != nil {
			return usagef("--sizes: %v", err)
		}
		opts := bench.CalibrationOptions{Functions: splitList(*funcs), Sizes: sz, Data: splitList(*cf.data),
			Surrogates: splitList(*surrogates), Bands: splitList(*bands), Seeds: *cf.seeds, Samples: *samples,
			TruthSamples: *truth, Workers: *cf.workers, Progress: bar.set}
		cells, err := bench.Calibration(ctx, opts)
		bar.finish()
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(env.stdout).Encode(cells)
		}
		return bench.WriteCalibrationTable(env.stdout, cells)
	}
	suite, closePoints, err := cf.suiteOptions(set, []string{"functions"})
	if err != nil {
		return err
	}
	suite.Progress = bar.set
	res, err := bench.TruthCalibration(ctx, bench.TruthCalibrationOptions{TruthSuiteOptions: suite,
		Surrogates: splitList(*surrogates), Bands: splitList(*bands), Samples: *samples, TruthSamples: *truth})
	bar.finish()
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
