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
		name:    "explain shapley",
		summary: "Shapley values of a configuration: contributions to mean, uncertainty and confidence bound (ShapleyMBO)",
		run:     runExplainShapley,
	})
}

// shapleyFlags are the settings of the Shapley family.
type shapleyFlags struct {
	target, method, baseline string
	se                       string
	tau, local, level        float64
	k, maxK, background      int
}

func (c *shapleyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.target, "target", explain.TargetCB, "what to explain: cb (the mean, se and confidence bound together), or the acquisition ei, pi, pvar")
	fs.Float64Var(&c.tau, "tau", explain.DefaultTau, "exploration weight τ: cb = m − τ·s when minimizing, m + τ·s when maximizing")
	fs.StringVar(&c.se, "se", "", "cb: s is the sd of the function (latent, the default) or of a new observation, the surrogate's fitted noise included (predictive: mlrMBO's convention)")
	fs.StringVar(&c.method, "method", "", "exact (all 2^p coalitions), mc (permutation sampling) or baseline; default: exact while 2^p × background ≤ 110,000, else mc")
	fs.IntVar(&c.k, "k", 0, "Monte Carlo draws per parameter (mc; default 1000, or 500 when the method is chosen for you)")
	fs.IntVar(&c.maxK, "max-k", 0, "checkSampleSize: double K until the efficiency error is below the smallest gap, up to this K")
	fs.IntVar(&c.background, "background", 0, "uniform background points (default 200)")
	fs.Float64Var(&c.local, "local", 0, "sample the background in a box of this half-width around the point (unit cube) instead of globally")
	fs.StringVar(&c.baseline, "baseline", "", "baseline configuration for --method baseline: default (the default), best, last, or a JSON object")
	fs.Float64Var(&c.level, "level", 0, "confidence level of the intervals (default 0.95)")
}

func runExplainShapley(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain shapley", flag.ContinueOnError)
	var in historyFlags
	var c shapleyFlags
	var s surrogateFlags
	in.register(fs, "data", true, true)
	in.registerBudget(fs)
	c.register(fs)
	s.register(fs)
	point := fs.String("point", "", `configuration to explain: best, last (default), default or a JSON object of natural values ('{"x1": 0.2, ...}')`)
	trial := fs.Int64("trial", -1, "explain the configuration of trial N (its number; any state, e.g. a running proposal)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	tau := c.tau
	req := explain.ShapleyRequest{Point: *point, Target: c.target, Tau: &tau, SE: c.se, Method: c.method, Samples: c.k,
		MaxSamples: c.maxK, Background: c.background, Local: c.local, Baseline: c.baseline, Level: c.level, Surrogate: s.spec(),
		Budget: in.budget}
	if *trial >= 0 {
		if *point != "" {
			return usagef("give --trial or --point, not both")
		}
		req.Trial = trial
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	res, err := compute(ctx, env, "Shapley values", func(ctx context.Context, e *explain.Engine) (*explain.ShapleyResult, error) {
		return e.Shapley(ctx, h, req)
	})
	if err != nil {
		return err
	}
	if in.svg != "" {
		if err := writeFile(in.svg, func(w io.Writer) error { return shapley.WriteDecompositionSVG(w, res.Explanation, h.Space) }); err != nil {
			return err
		}
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	return writeShapleyText(env.stdout, res, h.Space)
}

func writeShapleyText(w io.Writer, res *explain.ShapleyResult, s *space.Space) error {
	e := res.Explanation
	bw := &textWriter{w: w}
	desc := fmt.Sprintf("method %s, background %d points", e.Method, e.BackgroundSize)
	if e.LocalRadius > 0 {
		desc += fmt.Sprintf(" within ±%g of the point", e.LocalRadius)
	}
	if e.Samples > 0 {
		desc += fmt.Sprintf(", K = %d draws per parameter", e.Samples)
	}
	if e.Tau != nil {
		desc += fmt.Sprintf(", τ = %g, %s", *e.Tau, e.Formula)
	}
	what := "a configuration"
	if res.Trial != nil {
		what = fmt.Sprintf("trial %d", *res.Trial)
	}
	bw.printf("Shapley explanation of %s (%s)\n%s\n\n", what, desc, aboutLine(&res.About))
	tw := tabwriter.NewWriter(bw, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "output\tprediction\taverage\tpayout\tΣφ − payout\t\n")
	for _, a := range e.Outputs {
		fmt.Fprintf(tw, "%s\t%.6g\t%.6g\t%.6g\t%.2g\t\n", a.Output, a.Prediction, a.Average, a.Payout, a.EfficiencyError)
	}
	tw.Flush()
	bw.printf("\n")
	vals := s.Decode(e.Point)
	mean, okM := e.Output(shapley.OutputMean)
	se, okS := e.Output(shapley.OutputSE)
	cb, okC := e.Output(shapley.OutputCB)
	pct := fmt.Sprintf("%.0f%%", 100*e.Level)
	tw = tabwriter.NewWriter(bw, 2, 4, 2, ' ', tabwriter.AlignRight)
	if okM && okS && okC && e.SEWeight != nil {
		wgt := *e.SEWeight
		sign := "+"
		if wgt < 0 {
			sign = "−"
		}
		fmt.Fprintf(tw, "parameter\tvalue\tφ(cb)\t%s interval\tφ(m)\t%sτ·φ(se)\tφ(se)\t\n", pct, sign)
		for j, name := range e.Params {
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t[%.4g, %.4g]\t%.4g\t%.4g\t%.4g\t\n", name, formatValue(s, j, vals[j]),
				cb.Phi[j], cb.Lower[j], cb.Upper[j], mean.Phi[j], wgt*se.Phi[j], se.Phi[j])
		}
	} else {
		a := e.Outputs[0]
		fmt.Fprintf(tw, "parameter\tvalue\tφ(%s)\t%s interval\t\n", a.Output, pct)
		for j, name := range e.Params {
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t[%.4g, %.4g]\t\n", name, formatValue(s, j, vals[j]), a.Phi[j], a.Lower[j], a.Upper[j])
		}
	}
	tw.Flush()
	if e.Method == shapley.MonteCarlo {
		ok, ties := true, 0
		for _, a := range e.Outputs {
			ok = ok && a.SampleSizeOK
			ties = max(ties, a.Ties)
		}
		verdict := "K suffices: the efficiency error is below the smallest gap between two parameters for every output"
		if !ok {
			verdict = "K may be too small: for some output the efficiency error exceeds the smallest gap between two parameters (raise --k or set --max-k)"
		}
		if ties > 0 {
			verdict += fmt.Sprintf("; %d pair(s) of parameters left out as ties, neither told from no effect (both intervals contain 0): their order is not resolved", ties)
		}
		bw.printf("\ncheckSampleSize: %s\n", verdict)
	}
	return bw.err
}
