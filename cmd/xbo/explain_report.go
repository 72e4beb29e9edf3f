package main

import (
	"context"
	"flag"
	"fmt"

	"xbo/explain/pdp"
	"xbo/gp"
	"xbo/report"
	"xbo/space"
	"xbo/store"
	"xbo/trials"
)

func init() {
	register(command{
		name:    "explain report",
		summary: "one self-contained HTML report (and --json numbers) with every explanation of a run",
		run:     runExplainReport,
	})
}

func runExplainReport(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain report", flag.ContinueOnError)
	data := fs.String("data", "", "trials CSV (one column per parameter, then value); with --space")
	spacePath := fs.String("space", "", "search space file (JSON or YAML)")
	study := fs.String("study", "", "read this study from the service's store instead of --data/--space")
	db := dbFlag(fs)
	out := fs.String("out", "", "HTML report to write (required)")
	jsonOut := fs.String("json", "", "also write every number of the report as JSON to this file")
	var o report.Options
	fs.IntVar(&o.GridSize, "grid", pdp.DefaultGridSize, "PDP grid points per parameter")
	fs.IntVar(&o.Samples, "mc", pdp.DefaultSamples, "Monte Carlo points over the other parameters")
	fs.Float64Var(&o.Alpha, "alpha", pdp.DefaultAlpha, "PDP bands at level 1−alpha")
	fs.BoolVar(&o.Exact, "exact", false, "exact PDP bands (paper 000 eq. 4) instead of the mean of variances (eq. 5)")
	fs.StringVar(&o.Kernel, "kernel", "matern52", "GP kernel: matern52, matern32 or se")
	fs.IntVar(&o.Trees, "trees", 0, "trees of the fANOVA forest (0: default)")
	fs.IntVar(&o.MaxSplits, "splits", 0, "maximum splits of each confidence-splitting tree (0: default 3)")
	fs.Float64Var(&o.Tau, "tau", 1, "LCB weight τ of the Shapley decomposition")
	fs.IntVar(&o.ShapleyBackground, "background", 1000, "background points of the Shapley game")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of every sample and fit")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	switch {
	case *out == "":
		return usagef("--out is required")
	case *study == "" && (*data == "" || *spacePath == ""):
		return usagef("give --data and --space, or --study (with --db)")
	case *study != "" && (*data != "" || *spacePath != ""):
		return usagef("--study reads the store; drop --data and --space")
	case *jsonOut != "" && *jsonOut == *out:
		return usagef("--json and --out name the same file")
	case o.GridSize < 2:
		return usagef("--grid must be at least 2")
	case o.Samples < 10:
		return usagef("--mc must be at least 10")
	case !(o.Alpha > 0 && o.Alpha < 1):
		return usagef("--alpha must lie in (0, 1)")
	case o.Trees < 0 || o.MaxSplits < 0 || o.ShapleyBackground < 1:
		return usagef("--trees and --splits must not be negative, --background must be positive")
	case !(o.Tau > 0):
		return usagef("--tau must be positive")
	}
	if _, err := gp.ParseKernel(o.Kernel); err != nil {
		return usageError{err}
	}

	var in *report.Input
	if *study != "" {
		st, err := store.Open(ctx, *db)
		if err != nil {
			return fmt.Errorf("%s: %w", *db, err)
		}
		defer st.Close()
		if in, err = report.FromStore(ctx, st, *study); err != nil {
			return fmt.Errorf("%s: %w", *db, err)
		}
	} else {
		sp, err := space.Load(*spacePath)
		if err != nil {
			return err
		}
		tab, err := trials.ReadFile(*data, sp)
		if err != nil {
			return err
		}
		if in, err = report.FromTable(tab, *data); err != nil {
			return err
		}
	}
	if in.Skipped > 0 {
		fmt.Fprintf(env.stderr, "xbo explain report: note: %d trial(s) without a usable value are counted but not modelled\n", in.Skipped)
	}

	bar := newProgress(env, "report")
	o.Progress = func(done, total int, step string) {
		bar.describe("report: " + step)
		bar.set(done, total)
	}
	rep, err := report.Build(ctx, in, o)
	bar.finish()
	if err != nil {
		return err
	}
	if err := report.WriteFiles(rep, *out, *jsonOut); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "wrote %s", *out)
	if *jsonOut != "" {
		fmt.Fprintf(env.stdout, " and %s", *jsonOut)
	}
	fmt.Fprintf(env.stdout, " (%d trials, %d parameters, %.1f s)\n", rep.Summary.Usable, len(rep.Summary.Params), rep.Seconds)
	return nil
}
