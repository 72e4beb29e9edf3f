package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

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
	var c shapleyCommonFlags
	c.register(fs, "data")
	source := fs.String("source", "default", "source configuration: default, best, last, or a JSON object of natural values")
	target := fs.String("target", "best", "target configuration: best, last, default, or a JSON object")
	output := fs.String("output", "mean", "surrogate output to ablate: mean, se or cb")
	tau := fs.Float64("tau", 1, "LCB weight τ for --output cb")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if c.svg != "" {
		return usagef("--svg is not available for ablation")
	}
	switch *output {
	case shapley.OutputMean, shapley.OutputSE, shapley.OutputCB:
	default:
		return usagef("--output must be mean, se or cb (got %q)", *output)
	}
	in, err := c.load(env, "data")
	if err != nil {
		return err
	}
	src, err := in.parsePoint(*source)
	if err != nil {
		return fmt.Errorf("--source: %w", err)
	}
	tgt, err := in.parsePoint(*target)
	if err != nil {
		return fmt.Errorf("--target: %w", err)
	}
	model, err := in.surrogateAt(len(in.x))
	if err != nil {
		return err
	}
	fn, err := shapley.LCB(model, *tau)
	if err != nil {
		return usageError{err}
	}
	// The surrogate minimizes; a high se is what exploration wants.
	a, err := shapley.Ablate(fn, src, tgt, shapley.AblationOptions{Output: *output, Maximize: *output == shapley.OutputSE, Space: in.space})
	if err != nil {
		return err
	}
	if c.asJSON {
		return printJSON(env.stdout, a)
	}
	return writeAblationText(env.stdout, a, in.space)
}

func writeAblationText(w io.Writer, a *shapley.Ablation, s *space.Space) error {
	bw := &shapleyWriter{w: w}
	bw.printf("Ablation of the surrogate %s from %.6g (source) to %.6g (target)", a.Output, a.SourcePrediction, a.TargetPrediction)
	if s.Objective == space.Maximize && a.Output != shapley.OutputSE {
		bw.printf("; minimization units (−objective)")
	}
	bw.printf("\n\n")
	tw := tabwriter.NewWriter(bw, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "round\tparameter\tfrom\tto\tprediction\timprovement\trelative\t\n")
	for i, st := range a.Steps {
		from := s.Format(st.Index, s.Decode(a.Source)[st.Index])
		to := s.Format(st.Index, s.Decode(a.Target)[st.Index])
		if from == "" {
			from = "(inactive)"
		}
		if to == "" {
			to = "(inactive)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.6g\t%.4g\t%.3f\t\n", i+1, st.Param, from, to, st.Prediction, st.Contribution, st.Relative)
	}
	tw.Flush()
	return bw.err
}
