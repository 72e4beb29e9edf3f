package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"xbo/explain"
	"xbo/explain/shapley"
	"xbo/opt"
)

func init() {
	register(command{
		name:    "explain paths",
		summary: "desirability paths: Shapley contributions of every proposal of a run, each with its own iteration's surrogate",
		run:     runExplainPaths,
	})
}

func runExplainPaths(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain paths", flag.ContinueOnError)
	var in historyFlags
	in.register(fs, "trials", true, true)
	tau := fs.Float64("tau", explain.DefaultTau, "exploration weight τ of the confidence bound (default: the study's τ when its strategy is lcb, else 1)")
	se := fs.String("se", "", "s is the sd of the function (latent) or of an observation, noise included (predictive); default: the study's se when its strategy is lcb, else latent")
	k := fs.Int("k", 0, "Monte Carlo draws per parameter and proposal (mc; default 200)")
	method := fs.String("method", "", "mc (permutation sampling; the default) or exact")
	proposals := fs.Int("proposals", 0, "explain the latest N model-chosen proposals (default 50)")
	background := fs.Int("background", 0, "background points (default min(250·p, 2000))")
	level := fs.Float64("level", 0, "confidence level of the intervals (default 0.95)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	req := explain.PathsRequest{Tau: tau, SE: *se, Samples: *k, Method: *method, Proposals: *proposals, Background: *background, Level: *level}
	tauSet := false
	fs.Visit(func(f *flag.Flag) { tauSet = tauSet || f.Name == "tau" })
	if !tauSet {
		req.Tau = nil // the study's own
	}
	res, err := compute(ctx, env, "explaining proposals", func(ctx context.Context, e *explain.Engine) (*explain.PathsResult, error) {
		return e.Paths(ctx, h, req)
	})
	if err != nil {
		return err
	}
	if len(res.Steps) == 0 {
		return fmt.Errorf("no proposals to explain: %s", res.Note)
	}
	if in.svg != "" {
		path := &shapley.Path{Params: res.Params}
		for _, st := range res.Steps {
			path.Steps = append(path.Steps, shapley.PathStep{Iteration: int(st.Trial), Explanation: st.Explanation})
		}
		if err := writeFile(in.svg, func(w io.Writer) error { return shapley.WritePathSVG(w, path) }); err != nil {
			return err
		}
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	return writePathText(env.stdout, res)
}

func writePathText(w io.Writer, res *explain.PathsResult) error {
	bw := &textWriter{w: w}
	sd := ""
	if res.SE == opt.SEPredictive {
		sd = ", s the sd of an observation"
	}
	bw.printf("Desirability paths: φ(cb) per proposal (%s, %d of %d proposals, τ = %g%s)\n%s\n", res.Method, res.Explained, res.Proposals, res.Tau, sd, aboutLine(&res.About))
	if res.Note != "" {
		bw.printf("note: %s\n", res.Note)
	}
	bw.printf("\n")
	tw := tabwriter.NewWriter(bw, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "trial\tpayout\t")
	for _, p := range res.Params {
		fmt.Fprintf(tw, "%s\t", p)
	}
	fmt.Fprintln(tw)
	for _, st := range res.Steps {
		a, _ := st.Explanation.Output(shapley.OutputCB)
		fmt.Fprintf(tw, "%d\t%.4g\t", st.Trial, a.Payout)
		for _, v := range a.Phi {
			fmt.Fprintf(tw, "%.4g\t", v)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	return bw.err
}
