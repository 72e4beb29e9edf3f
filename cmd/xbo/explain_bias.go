package main

import (
	"context"
	"flag"
	"fmt"

	"xbo/explain"
)

func init() {
	register(command{
		name:    "explain bias",
		summary: "sampling bias: how far the evaluated configurations are from covering the space evenly (MMD against uniform samples)",
		run:     runExplainBias,
	})
}

func runExplainBias(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain bias", flag.ContinueOnError)
	var in historyFlags
	in.register(fs, "data", true, false)
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	res, err := compute(ctx, env, "sampling bias", func(ctx context.Context, e *explain.Engine) (*explain.BiasResult, error) {
		return e.SamplingBias(ctx, h)
	})
	if err != nil {
		return err
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	b := res.Bias
	w := &textWriter{w: env.stdout}
	w.printf("Sampling bias of %d evaluated configurations: %s\n", res.Trials, b.Level)
	w.printf("MMD %.4g against a uniform reference of %d points: %.3g× the median of uniform samples of %d points (95%% of them stay below %.3g×)\n",
		b.MMD, b.Reference, b.Ratio, b.Points, b.Null95Ratio)
	w.printf("%s\n", b.Reading)
	if b.Warning != "" {
		w.printf("warning: %s\n", b.Warning)
	}
	if w.err != nil {
		return fmt.Errorf("writing: %w", w.err)
	}
	return nil
}
