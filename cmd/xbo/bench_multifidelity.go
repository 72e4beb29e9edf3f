package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"xbo/bench"
	"xbo/opt"
	"xbo/prune"
)

func init() {
	registerBenchmark(benchmark{
		name:    "multifidelity",
		summary: "pruners and multi-fidelity proposals against no pruning and Optuna TPE + median/Hyperband pruners on learning-curve problems (resource to a target regret, final regret at equal resource)",
		run:     runBenchMultiFidelity,
	})
}

func runBenchMultiFidelity(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench multifidelity", flag.ContinueOnError)
	problems := fs.String("problems", "", "comma-separated curve problems (default all: "+strings.Join(bench.CurveProblems, ",")+")")
	methods := fs.String("methods", "", "comma-separated methods (default all: "+strings.Join(bench.MFMethods, ",")+")")
	seeds := fs.Int("seeds", 5, "repetitions (seeds 1..N)")
	steps := fs.Int64("steps", 27, "T: the step (epoch) at which a trial is fully trained (digits-mlp: at most 27, the epochs its table holds)")
	fullTrials := fs.Int("full-trials", 0, "one run's resource in full trials, i.e. steps·T (0: 6·d + 18)")
	python := fs.String("python", bench.DefaultPython(), "Python interpreter with Optuna (Debian python3-optuna)")
	extend := fs.Int("extend", 3, "xbo without pruning also runs this many times the resource, for the saving at each method's own final regret (1: not)")
	jobs := fs.Int("jobs", 0, "runs at once (0: one per CPU); regrets do not depend on it, ask times do")
	settings := fs.String("optimizer", "", `xbo's base optimizer settings as a study's JSON (e.g. '{"candidates":500}'); the multi-fidelity methods add the resource`)
	perfect := fs.Bool("perfect", false, "every step of every curve shows the trial's final value, for every method: the savings with perfect information, a ceiling for any model of the curves (xbo without pruning, and so the target, is unchanged)")
	asFailed := fs.Bool("pruned-as-failed", false, "the xbo methods that do not name the resource treat pruned trials as failures instead of learning from their steps (as before xbo inferred the resource), for comparison")
	asJSON := fs.Bool("json", false, "print JSON (every run included) instead of the tables")
	pruners := map[string]prune.Config{}
	fs.Func("pruner", `a pruner's settings as a study's "pruner" JSON (e.g. '{"type":"median","n_warmup_steps":3}'), replacing the defaults of the xbo methods of its type (not the Optuna methods'); repeat for several types; hyperband's max_resource must equal --steps`, func(doc string) error {
		c, err := prune.Parse(json.RawMessage(doc))
		if err != nil {
			return err
		}
		if _, twice := pruners[c.Type]; twice {
			return fmt.Errorf("the %s pruner's settings are given twice", c.Type)
		}
		pruners[c.Type] = c
		return nil
	})
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *seeds < 1 || *jobs < 0 || *extend < 1 {
		return usagef("need --seeds ≥ 1, --jobs ≥ 0 and --extend ≥ 1")
	}
	o := bench.MFOptions{Problems: splitList(*problems), Methods: splitList(*methods), Seeds: *seeds, Steps: *steps, FullTrials: *fullTrials, Python: *python, Jobs: *jobs, Extend: *extend, Pruners: pruners, Perfect: *perfect}
	if *settings != "" {
		st, err := opt.ParseSettings(json.RawMessage(*settings))
		if err != nil {
			return usagef("--optimizer: %v", err)
		}
		if st.Resource != nil {
			return usagef("--optimizer: the resource is the benchmark's (its multi-fidelity methods set it)")
		}
		cfg := st.Config(nil, nil, 0)
		o.Config = &cfg
	}
	if *asFailed {
		if o.Config == nil {
			o.Config = &opt.Config{}
		}
		o.Config.PrunedAsFailed = true
	}
	bar := newProgress(env, "bench multifidelity")
	o.Progress = bar.set
	defer bar.finish()
	res, err := bench.MultiFidelity(ctx, o)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.stdout, res)
	}
	return res.WriteTable(env.stdout)
}

func init() {
	registerBenchmark(benchmark{
		name:    "pruning",
		summary: "the same number of trials of a learning-curve problem with no pruner, with ASHA (its trials teach the model) and with ASHA's trials treated as failures: regret and steps spent",
		run:     runBenchPruning,
	})
}

func runBenchPruning(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench pruning", flag.ContinueOnError)
	seeds := fs.Int("seeds", 10, "repetitions (seeds 1..N)")
	trials := fs.Int("trials", 60, "trials per run")
	jobs := fs.Int("jobs", 0, "runs at once (0: one per CPU)")
	asJSON := fs.Bool("json", false, "print JSON (every run included) instead of the table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *seeds < 1 || *trials < 2 || *jobs < 0 {
		return usagef("need --seeds ≥ 1, --trials ≥ 2 and --jobs ≥ 0")
	}
	bar := newProgress(env, "bench pruning")
	defer bar.finish()
	res, err := bench.Pruning(ctx, bench.PruningOptions{Seeds: *seeds, Trials: *trials, Jobs: *jobs, Progress: bar.set})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.stdout, res)
	}
	return res.WriteTable(env.stdout)
}
