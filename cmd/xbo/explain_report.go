package main

import (
	"context"
	"flag"
	"fmt"

	"xbo/explain"
	"xbo/report"
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
	var in historyFlags
	var c pdpFlags
	var s surrogateFlags
	in.register(fs, "data", false, false)
	c.register(fs)
	s.register(fs)
	out := fs.String("out", "", "HTML report to write (required)")
	jsonOut := fs.String("json", "", "also write every number of the report as JSON to this file")
	splits := fs.Int("splits", 0, "maximum splits of each confidence-splitting tree (default 3)")
	impMethod := fs.String("importance-method", explain.DefaultImportanceMethod, "importance method: gp-sobol or forest-fanova")
	impTrees := fs.Int("importance-trees", 0, "trees of the fANOVA forest (with --importance-method forest-fanova; default 30)")
	tau := fs.Float64("tau", explain.DefaultTau, "exploration weight τ of the Shapley decomposition")
	background := fs.Int("background", 0, "background points of the Shapley game (default 200)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	band, err := c.bandName()
	if err != nil {
		return err
	}
	switch {
	case *out == "":
		return usagef("--out is required")
	case *jsonOut != "" && *jsonOut == *out:
		return usagef("--json and --out name the same file")
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	o := report.Options{
		PDP: explain.RegionalRequest{Grid: c.grid, Samples: c.mc, Alpha: c.alpha, Band: band, MaxSplits: *splits,
			Surrogate: s.spec()},
		Importance: explain.ImportanceRequest{Method: *impMethod, Trees: *impTrees},
		Shapley:    explain.ShapleyRequest{Tau: tau, Background: *background, Surrogate: s.spec()},
	}
	e, err := explainEngine()
	if err != nil {
		return err
	}
	bar := newProgress(env, "report")
	o.Progress = func(done, total int, step string) {
		bar.describe("report: " + step)
		bar.set(done, total)
	}
	rep, err := report.Build(ctx, e, h, o)
	bar.finish()
	if err != nil {
		return explainUsage(err)
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
