package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"xbo/explain"
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
	var in historyFlags
	var s surrogateFlags
	in.register(fs, "data", true, false)
	in.registerBudget(fs)
	s.register(fs)
	pointText := fs.String("point", explain.PointBest, `configuration: JSON of natural values, best, last or default`)
	grid := fs.Int("grid", 0, "values per float parameter (default 20; discrete ones: every value up to this many)")
	tau := fs.Float64("tau", explain.DefaultTau, "exploration weight τ for the cb output")
	hstat := fs.Bool("hstat", false, "also compute Friedman's H-statistic of the surrogate mean for every pair")
	hpoints := fs.Int("hpoints", 0, "sample size of the H-statistic (default 100; cost grows as p²·n²)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	req := explain.LPIRequest{Point: *pointText, Grid: *grid, Tau: tau, HStat: *hstat, HPoints: *hpoints, Surrogate: s.spec(), Budget: in.budget}
	res, err := compute(ctx, env, "local importance", func(ctx context.Context, e *explain.Engine) (*explain.LPIResult, error) {
		return e.LPI(ctx, h, req)
	})
	if err != nil {
		return err
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	return writeLPIText(env.stdout, res)
}

func writeLPIText(w io.Writer, res *explain.LPIResult) error {
	l, h := res.LocalImportance, res.Interaction
	bw := &textWriter{w: w}
	bw.printf("Local parameter importance at %v (share of the variance along each parameter through the point, grid %d)\n%s\n\n", res.Point, l.Grid, aboutLine(&res.About))
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
