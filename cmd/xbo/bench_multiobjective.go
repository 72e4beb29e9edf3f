package main

import (
	"context"
	"flag"
	"strings"

	"xbo/bench"
)

func init() {
	registerBenchmark(benchmark{
		name:    "multiobjective",
		summary: "hypervolume on ZDT1–3, DTLZ2, the constrained BNH and a real scikit-learn error-vs-size grid against Optuna's NSGA-II and TPE and random search, sequential and with 8 workers",
		run:     runBenchMultiObjective,
	})
}

func runBenchMultiObjective(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench multiobjective", flag.ContinueOnError)
	var names []string
	for _, p := range bench.MOProblems() {
		names = append(names, p.Name)
	}
	problems := fs.String("problems", "", "comma-separated problems (default all: "+strings.Join(names, ",")+")")
	methods := fs.String("methods", "", "comma-separated methods (default all: "+strings.Join(bench.MOMethods, ",")+")")
	workers := fs.String("workers", "1,8", "comma-separated numbers of simulated parallel workers (trials kept pending)")
	seeds := fs.Int("seeds", 10, "repetitions (seeds first-seed..first-seed+N−1)")
	firstSeed := fs.Int("first-seed", 1, "first seed (a held-out set of seeds starts elsewhere, e.g. 101)")
	budget := fs.Int("budget", 0, "evaluations per run (0: 100, 200 for three objectives)")
	python := fs.String("python", bench.DefaultPython(), "Python interpreter with Optuna (Debian python3-optuna)")
	jobs := fs.Int("jobs", 0, "runs at once (0: one per CPU); hypervolumes do not depend on it, ask times do")
	asJSON := fs.Bool("json", false, "print JSON (every run's hypervolume after each evaluation included) instead of the table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *seeds < 1 || *firstSeed < 1 || *jobs < 0 || *budget < 0 {
		return usagef("need --seeds ≥ 1, --first-seed ≥ 1, --jobs ≥ 0 and --budget ≥ 0")
	}
	o := bench.MOOptions{Problems: splitList(*problems), Methods: splitList(*methods), Seeds: *seeds, FirstSeed: *firstSeed, Budget: *budget, Python: *python, Jobs: *jobs}
	var err error
	if o.Workers, err = parseInts(*workers); err != nil {
		return usagef("--workers: %v", err)
	}
	bar := newProgress(env, "bench multiobjective")
	o.Progress = bar.set
	defer bar.finish()
	res, err := bench.MultiObjective(ctx, o)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.stdout, res)
	}
	return res.WriteTable(env.stdout)
}
