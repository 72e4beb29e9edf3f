package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"xbo/explain"
)

func init() {
	register(command{
		name:    "explain tradeoff",
		summary: "several objectives: which hyperparameters move a configuration along the Pareto front and which only push it off (importance per objective side by side)",
		run:     runExplainTradeoff,
	})
}

func runExplainTradeoff(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain tradeoff", flag.ContinueOnError)
	var in historyFlags
	in.register(fs, "data", true, false)
	params := fs.String("params", "", "comma-separated parameters to explain (default: every parameter, or the "+fmt.Sprint(explain.MaxTradeoffParams)+" most important)")
	grid := fs.Int("grid", 0, "grid points of each PDP (default 20; categoricals: every level)")
	mc := fs.Int("mc", 0, "Monte Carlo points of each PDP (default 1000)")
	alpha := fs.Float64("alpha", 0, "PDP bands at level 1−alpha (default 0.05)")
	method := fs.String("method", "", "importance method: gp-sobol or forest-fanova (default as explain importance)")
	trial := fs.Int64("trial", -1, "also give this trial's Shapley values of every objective's mean, side by side (e.g. a Pareto-optimal trial)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	req := explain.TradeoffRequest{Grid: *grid, Samples: *mc, Alpha: *alpha, Method: *method}
	if *trial >= 0 {
		req.Trial = trial
	}
	if *params != "" {
		for _, p := range strings.Split(*params, ",") {
			req.Params = append(req.Params, strings.TrimSpace(p))
		}
	}
	res, err := compute(ctx, env, "trade-offs", func(ctx context.Context, e *explain.Engine) (*explain.TradeoffResult, error) {
		return e.Tradeoff(ctx, h, req)
	})
	if err != nil {
		return explainUsage(err)
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	w := &textWriter{w: env.stdout}
	var objs []string
	for _, o := range res.Objectives {
		objs = append(objs, fmt.Sprintf("%s (%s)", o.Name, o.Direction))
	}
	w.printf("Trade-offs between %s, from %d trials; %d Pareto-optimal\n", strings.Join(objs, ", "), res.Trials, len(res.Front))
	w.printf("%-16s", "parameter")
	for _, o := range res.Objectives {
		w.printf(" %14s", "imp. "+o.Name)
	}
	w.printf(" %10s  %s\n", "conflict", "verdict")
	for _, p := range res.Params {
		w.printf("%-16s", p.Param)
		for _, imp := range p.Importance {
			w.printf(" %14.3f", imp.Fraction)
		}
		worst := 0.0
		for _, pair := range p.Pairs {
			worst = max(worst, pair.Conflict)
		}
		w.printf(" %10.3f  %s\n", worst, p.Verdict)
	}
	w.printf("%s\n", res.Reading)
	if len(res.Shapley) > 0 {
		w.printf("\nShapley values of trial %d (each objective's surrogate mean, in its units):\n%-16s", res.Shapley[0].Trial, "parameter")
		for _, sh := range res.Shapley {
			w.printf(" %14s", sh.Objective)
		}
		w.printf("\n")
		for _, p := range res.Params {
			w.printf("%-16s", p.Param)
			for _, sh := range res.Shapley {
				w.printf(" %14.4g", sh.Phi[p.Param])
			}
			w.printf("\n")
		}
	}
	w.printf("conflict: the part of the objectives' (sign-aligned) correlation over the space carried by the parameter's main effects, > 0 trading them; a verdict needs each effect's importance interval above 1%% of the variance (or the PD bands), and |ρ| ≥ 0.5 for its direction (docs/explanations.md, Trade-offs)\n")
	if w.err != nil {
		return fmt.Errorf("writing: %w", w.err)
	}
	return nil
}
