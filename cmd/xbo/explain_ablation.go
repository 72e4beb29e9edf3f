package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"xbo/explain"
	"xbo/explain/shapley"
	"xbo/space"
)

func init() {
	register(command{
		name:    "explain ablation",
		summary: "ablation analysis on the surrogate: greedy path from a source (e.g. the default) to a target configuration",
		run:     runExplainAblation,
	})
}

func runExplainAblation(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain ablation", flag.ContinueOnError)
	var in historyFlags
	var s surrogateFlags
	in.register(fs, "data", true, false)
	in.registerBudget(fs)
	s.register(fs)
	source := fs.String("source", explain.PointDefault, "source configuration: default, best, last, or a JSON object of natural values")
	target := fs.String("target", explain.PointBest, "target configuration: best, last, default, or a JSON object")
	output := fs.String("output", shapley.OutputMean, "surrogate output to ablate: mean, se or cb")
	tau := fs.Float64("tau", explain.DefaultTau, "exploration weight τ for --output cb")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	req := explain.AblationRequest{Source: *source, Target: *target, Output: *output, Tau: tau, Surrogate: s.spec(), Budget: in.budget}
	res, err := compute(ctx, env, "ablation", func(ctx context.Context, e *explain.Engine) (*explain.AblationResult, error) {
		return e.Ablation(ctx, h, req)
	})
	if err != nil {
		return err
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	return writeAblationText(env.stdout, res, h.Space)
}

func writeAblationText(w io.Writer, res *explain.AblationResult, s *space.Space) error {
	a := res.Ablation
	bw := &textWriter{w: w}
	bw.printf("Ablation of the surrogate %s from %.6g (source) to %.6g (target)\n%s\n\n", a.Output, a.SourcePrediction, a.TargetPrediction, aboutLine(&res.About))
	tw := tabwriter.NewWriter(bw, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "round\tparameter\tfrom\tto\tprediction\timprovement\trelative\t\n")
	for i, st := range a.Steps {
		from := formatValue(s, st.Index, s.Decode(a.Source)[st.Index])
		to := formatValue(s, st.Index, s.Decode(a.Target)[st.Index])
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.6g\t%.4g\t%.3f\t\n", i+1, st.Param, from, to, st.Prediction, st.Contribution, st.Relative)
	}
	tw.Flush()
	return bw.err
}
