package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"xbo/explain/shapley"
)

func init() {
	register(command{
		name:    "explain lpi",
		summary: "local parameter importance at a configuration (variance along each parameter), optionally Friedman's H for pairs",
		run:     runExplainLPI,
	})
}

func runExplainLPI(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain lpi", flag.ContinueOnError)
	var c shapleyCommonFlags
	c.register(fs, "data")
	pointText := fs.String("point", "best", `configuration: JSON of natural values, best, last or default`)
	grid := fs.Int("grid", shapley.DefaultGrid, "values per float parameter (discrete ones: every value up to this many)")
	tau := fs.Float64("tau", 1, "LCB weight τ for the cb output")
	hstat := fs.Bool("hstat", false, "also compute Friedman's H-statistic of the surrogate mean for every pair")
	hpoints := fs.Int("hpoints", 100, "sample size of the H-statistic (cost grows as p²·n²)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	switch {
	case c.svg != "":
		return usagef("--svg is not available for lpi")
	case *grid < 2:
		return usagef("--grid must be at least 2")
	case *hpoints < 2:
		return usagef("--hpoints must be at least 2")
	}
	in, err := c.load(env, "data")
	if err != nil {
		return err
	}
	point, err := in.parsePoint(*pointText)
	if err != nil {
		return err
	}
	model, err := in.surrogateAt(len(in.x))
	if err != nil {
		return err
	}
	fn, err := shapley.LCB(model, *tau)
	if err != nil {
		return usageError{err}
	}
	lpi, err := shapley.LPI(fn, point, shapley.LPIOptions{Grid: *grid, Space: in.space})
	if err != nil {
		return err
	}
	var h *shapley.Interaction
	if *hstat {
		h, err = shapley.HStatistic(ctx, fn, shapley.HOptions{Output: shapley.OutputMean, Points: *hpoints, Space: in.space, Seed: c.seed})
		if err != nil {
			return err
		}
	}
	if c.asJSON {
		return printJSON(env.stdout, struct {
			LPI         *shapley.LocalImportance `json:"lpi"`
			Interaction *shapley.Interaction     `json:"interaction,omitempty"`
		}{lpi, h})
	}
	return writeLPIText(env.stdout, lpi, h)
}

func writeLPIText(w io.Writer, l *shapley.LocalImportance, h *shapley.Interaction) error {
	bw := &shapleyWriter{w: w}
	bw.printf("Local parameter importance (share of the variance along each parameter through the point, grid %d)\n\n", l.Grid)
	tw := tabwriter.NewWriter(bw, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "parameter\t")
	for _, o := range l.Outputs {
		fmt.Fprintf(tw, "%s\t", o.Output)
	}
	fmt.Fprintln(tw)
	for j, name := range l.Params {
		fmt.Fprintf(tw, "%s\t", name)
		for _, o := range l.Outputs {
			fmt.Fprintf(tw, "%.3f\t", o.Fraction[j])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if h != nil {
		bw.printf("\nFriedman's H² of the surrogate %s (%d points): share of the pair's joint effect due to its interaction\n\n", h.Output, h.Points)
		tw = tabwriter.NewWriter(bw, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\t")
		for _, name := range h.Params {
			fmt.Fprintf(tw, "%s\t", name)
		}
		fmt.Fprintln(tw)
		for j, name := range h.Params {
			fmt.Fprintf(tw, "%s\t", name)
			for k := range h.Params {
				if j == k {
					fmt.Fprintf(tw, "·\t")
					continue
				}
				fmt.Fprintf(tw, "%.3f\t", h.H2[j][k])
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	return bw.err
}
