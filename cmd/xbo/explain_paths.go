package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

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

// notProposals are acquisition labels of trials no surrogate chose.
var notProposals = map[string]bool{
	opt.AcqInitialDesign: true, opt.AcqRandom: true, opt.AcqRandomFallback: true,
	"design": true, "initial": true, "init": true,
}

func runExplainPaths(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain paths", flag.ContinueOnError)
	var c shapleyCommonFlags
	var mf shapleyMethodFlags
	c.register(fs, "trials")
	mf.register(fs)
	from := fs.Int("from", -1, "first trial (0-based) to explain when the CSV has no acquisition column (default max(4·p, 5), opt's initial design)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "proposals explained in parallel")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if mf.method == "" {
		mf.method = string(shapley.MonteCarlo) // the thesis' default for paths
	}
	if *workers < 1 {
		return usagef("--workers must be at least 1")
	}
	in, err := c.load(env, "trials")
	if err != nil {
		return err
	}
	// A proposal at row i was made from the i trials before it (a
	// sequential run), so it is explained with SurrogateAt(i).
	var iters []int
	hasAcq := false
	for _, a := range in.table.Acquisitions {
		hasAcq = hasAcq || a != ""
	}
	start := *from
	if start < 0 {
		start = max(4*in.space.Dim(), 5)
	}
	for i := 2; i < len(in.x); i++ {
		if hasAcq && *from < 0 {
			if a := in.table.Acquisitions[i]; a != "" && !notProposals[a] {
				iters = append(iters, i)
			}
		} else if i >= start {
			iters = append(iters, i)
		}
	}
	if len(iters) == 0 {
		return fmt.Errorf("%s: no proposals to explain (acquisition column empty or only design trials; set --from)", c.data)
	}
	opts, err := mf.options(in, nil)
	if err != nil {
		return err
	}
	opts.Workers = *workers
	bar := newProgress(env, "explaining proposals")
	opts.Progress = bar.set
	defer bar.finish()
	// One optimizer serves every worker: SurrogateAt fits outside its lock.
	o, err := in.optimizer()
	if err != nil {
		return err
	}
	step := func(_ context.Context, it int) (shapley.Function, []float64, error) {
		model, err := o.SurrogateAt(it)
		if err != nil {
			return nil, nil, err
		}
		fn, err := explainFunction(model, mf.target, mf.tau, in.incumbentAt(it))
		return fn, in.x[it], err
	}
	path, err := shapley.ExplainPath(ctx, iters, step, opts)
	if err != nil {
		return err
	}
	if c.svg != "" {
		if err := writeFile(c.svg, func(w io.Writer) error { return shapley.WritePathSVG(w, path) }); err != nil {
			return err
		}
	}
	if c.asJSON {
		type stepJSON struct {
			Iteration int              `json:"iteration"`
			Summary   *shapley.Summary `json:"explanation"`
		}
		out := struct {
			Params []string   `json:"params"`
			Steps  []stepJSON `json:"steps"`
		}{Params: path.Params}
		for _, st := range path.Steps {
			sum, err := st.Explanation.Summarize(in.space)
			if err != nil {
				return err
			}
			out.Steps = append(out.Steps, stepJSON{Iteration: st.Iteration, Summary: sum})
		}
		return printJSON(env.stdout, out)
	}
	return writePathText(env.stdout, path, mf.target)
}

func writePathText(w io.Writer, path *shapley.Path, target string) error {
	bw := &shapleyWriter{w: w}
	first := path.Steps[0].Explanation
	name := first.Outputs[0].Output
	if _, ok := first.Output(shapley.OutputCB); ok {
		name = shapley.OutputCB
		if target == shapley.OutputMean || target == shapley.OutputSE {
			name = target
		}
	}
	bw.printf("Desirability paths: φ(%s) per proposal (%s, %d proposals)\n\n", name, first.Method, len(path.Steps))
	tw := tabwriter.NewWriter(bw, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "trial\tpayout\t")
	for _, p := range path.Params {
		fmt.Fprintf(tw, "%s\t", p)
	}
	fmt.Fprintln(tw)
	for _, st := range path.Steps {
		a, _ := st.Explanation.Output(name)
		fmt.Fprintf(tw, "%d\t%.4g\t", st.Iteration, a.Payout)
		for _, v := range a.Phi {
			fmt.Fprintf(tw, "%.4g\t", v)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	return bw.err
}
