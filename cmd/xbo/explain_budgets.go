package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"xbo/explain"
)

func init() {
	register(command{
		name: "explain budgets",
		summary: "can the low-budget signal be trusted? rank correlations (Spearman, Kendall, with intervals) of the trials' " +
			"intermediate values between budgets and with the final values",
		run: runExplainBudgets,
	})
}

func runExplainBudgets(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain budgets", flag.ContinueOnError)
	var in historyFlags
	in.register(fs, "data", true, false)
	in.curves = true
	list := fs.String("budgets", "", fmt.Sprintf("comma-separated budgets (steps) to compare, at most %d (default: up to %d of the steps "+
		"that at least 5 trials reached, spread on a log scale)", explain.MaxBudgets, explain.DefaultBudgets))
	level := fs.Float64("level", 0.95, "confidence level of the intervals")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	req := explain.BudgetsRequest{Level: *level}
	if *list != "" {
		for _, text := range strings.Split(*list, ",") {
			b, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
			if err != nil || b < 0 {
				return usagef("--budgets: %q is not a step (an integer ≥ 0)", text)
			}
			req.Budgets = append(req.Budgets, b)
		}
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	res, err := compute(ctx, env, "budgets", func(ctx context.Context, e *explain.Engine) (*explain.BudgetsResult, error) {
		return e.Budgets(ctx, h, req)
	})
	if err != nil {
		return err
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	return printBudgets(env.stdout, res)
}

func printBudgets(w io.Writer, res *explain.BudgetsResult) error {
	tw := &textWriter{w: w}
	tw.printf("Rank correlation of the trials' values between budgets (%s)\n", res.Rule)
	tw.printf("%d finished trials with intermediate values, %d complete; %g%% intervals\n\n", res.Curves, res.Final, 100*res.Level)
	t := tabwriter.NewWriter(tw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(t, "budget\ttrials\tpruned\t")
	for _, c := range res.Budgets {
		fmt.Fprintf(t, "%s\t%d\t%d\t\n", c.Label, c.Trials, c.Pruned)
	}
	t.Flush()
	tw.printf("\n")
	t = tabwriter.NewWriter(tw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "budgets\ttrials\tSpearman\tinterval\tKendall\tinterval\tbetter half: trials\tSpearman\tinterval\t")
	for _, p := range res.Pairs {
		if p.Spearman == nil || p.Kendall == nil {
			fmt.Fprintf(t, "%s\t%d\t—\t\t—\t\t\t\t\t%s\n", p.Label, p.Trials, p.Note)
			continue
		}
		better := "\t—\t\t"
		if b := p.BetterHalf; b != nil && b.Spearman != nil {
			better = fmt.Sprintf("%d\t%.3f\t[%.3f, %.3f]\t", b.Trials, b.Spearman.Value, b.Spearman.Lower, b.Spearman.Upper)
		} else if b != nil {
			better = fmt.Sprintf("%d\t—\t\t%s", b.Trials, b.Note)
		}
		fmt.Fprintf(t, "%s\t%d\t%.3f\t[%.3f, %.3f]\t%.3f\t[%.3f, %.3f]\t%s\n", p.Label, p.Trials,
			p.Spearman.Value, p.Spearman.Lower, p.Spearman.Upper, p.Kendall.Value, p.Kendall.Lower, p.Kendall.Upper, better)
	}
	t.Flush()
	tw.printf("\n%s\nnote: %s\n", res.Reading, res.Note)
	if tw.err != nil {
		return fmt.Errorf("writing: %w", tw.err)
	}
	return nil
}
