package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"xbo/acq"
	"xbo/explain/shapley"
	"xbo/gp"
	"xbo/opt"
	"xbo/space"
	"xbo/surrogate"
	"xbo/trials"
)

func init() {
	register(command{
		name:    "explain shapley",
		summary: "Shapley values of a proposal: contributions to mean, uncertainty and LCB (ShapleyMBO)",
		run:     runExplainShapley,
	})
}

// shapleyInputs is what the Shapley-family commands load: the space, the
// trials as an optimizer history (so that opt.SurrogateAt rebuilds the
// surrogate behind any proposal) and the values in minimization units.
type shapleyInputs struct {
	space  *space.Space
	table  *trials.Table
	x      [][]float64
	y      []float64 // sign·value: the surrogate always minimizes
	hist   []opt.Trial
	kernel string
	seed   uint64
}

type shapleyCommonFlags struct {
	command                 string // for messages: the flag set's name
	data, spacePath, kernel string
	seed                    uint64
	asJSON                  bool
	svg                     string
}

func (c *shapleyCommonFlags) register(fs *flag.FlagSet, dataName string) {
	c.command = fs.Name()
	fs.StringVar(&c.data, dataName, "", "trials CSV: one column per parameter, then value (and acquisition)")
	fs.StringVar(&c.spacePath, "space", "", "search space file (JSON or YAML)")
	fs.StringVar(&c.kernel, "kernel", "matern52", "GP kernel of the surrogate: matern52, matern32 or se")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the background, the Monte Carlo draws and the GP fit")
	fs.BoolVar(&c.asJSON, "json", false, "print JSON")
	fs.StringVar(&c.svg, "svg", "", "also write an SVG plot to this file")
}

func (c *shapleyCommonFlags) load(env *cliEnv, dataName string) (*shapleyInputs, error) {
	if c.data == "" || c.spacePath == "" {
		return nil, usagef("--%s and --space are required", dataName)
	}
	if _, err := gp.ParseKernel(c.kernel); err != nil {
		return nil, usageError{err}
	}
	run, err := loadRun(env, c.command, c.spacePath, c.data, "a surrogate")
	if err != nil {
		return nil, err
	}
	sp, table, x := run.space, run.table, run.x
	in := &shapleyInputs{space: sp, table: table, x: x, kernel: c.kernel, seed: c.seed}
	for i, row := range table.Rows {
		in.y = append(in.y, sp.Sign()*table.Values[i])
		in.hist = append(in.hist, opt.Trial{Params: row, Value: table.Values[i], State: opt.Complete,
			Acquisition: table.Acquisitions[i], Completion: i})
	}
	return in, nil
}

// optimizer rebuilds the run from the trials; only SurrogateAt is used.
func (in *shapleyInputs) optimizer() (*opt.Optimizer, error) {
	return opt.New(opt.Config{Space: in.space, Kernel: in.kernel, Seed: in.seed, History: in.hist, InitialSize: -1})
}

// surrogateAt is the surrogate fitted on the first t trials, in minimization
// units, as the optimizer saw it at that iteration.
func (in *shapleyInputs) surrogateAt(t int) (surrogate.Model, error) {
	o, err := in.optimizer()
	if err != nil {
		return nil, err
	}
	return o.SurrogateAt(t)
}

// incumbentAt is the best of the first t values in minimization units.
func (in *shapleyInputs) incumbentAt(t int) float64 {
	best := math.Inf(1)
	for _, v := range in.y[:t] {
		best = math.Min(best, v)
	}
	return best
}

// parsePoint reads --point: a JSON object of natural values, or "best"
// (incumbent), "last" (the last trial) or "default" (the space's defaults).
func (in *shapleyInputs) parsePoint(text string) ([]float64, error) {
	switch strings.TrimSpace(text) {
	case "", "last":
		return in.x[len(in.x)-1], nil
	case "best", "incumbent":
		return in.x[in.table.Best()], nil
	case "default", "defaults":
		vals, ok := in.space.Defaults()
		if !ok {
			return nil, errors.New("the space does not give a default for every active parameter")
		}
		return in.space.Encode(vals)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, usagef(`--point must be a JSON object such as '{"x1": 0.2}', or best, last or default: %v`, err)
	}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			f, err := n.Float64()
			if err != nil {
				return nil, usagef("--point: %s: %v", k, err)
			}
			m[k] = f
		}
	}
	vals, err := in.space.FromMap(m)
	if err != nil {
		return nil, usageError{err}
	}
	return in.space.Encode(vals)
}

// shapleyTargets are the --target values: the LCB family (mean, se and cb
// are always explained together, from shared samples) or an acquisition
// explained as its value.
func explainFunction(model surrogate.Model, target string, tau, incumbent float64) (shapley.Function, error) {
	switch target {
	case "cb", "lcb", "mean", "se", "m":
		return shapley.LCB(model, tau)
	case "ei", "pi", "pvar":
		a, err := acq.New(target, acq.Params{Best: incumbent, Tau: &tau})
		if err != nil {
			return nil, err
		}
		return shapley.Acquisition(model, a)
	}
	return nil, usagef("--target must be mean, se, cb, ei, pi or pvar (got %q)", target)
}

type shapleyMethodFlags struct {
	target, method, baseline string
	tau, local, level        float64
	k, maxK, background      int
}

func (c *shapleyMethodFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.target, "target", "cb", "what to explain: mean, se, cb (all three from shared samples), or the acquisition ei, pi, pvar")
	fs.Float64Var(&c.tau, "tau", 1, "LCB weight τ in cb = m − τ·s")
	fs.StringVar(&c.method, "method", "", "exact (all 2^p coalitions; default up to 12 parameters), mc (permutation sampling) or baseline")
	fs.IntVar(&c.k, "k", shapley.DefaultSamples, "Monte Carlo draws per parameter (mc)")
	fs.IntVar(&c.maxK, "max-k", 0, "checkSampleSize: double K until the efficiency error is below the smallest gap, up to this K")
	fs.IntVar(&c.background, "background", 0, "background points (default 1000·p Latin hypercube)")
	fs.Float64Var(&c.local, "local", 0, "sample the background in a box of this half-width around the point (unit cube) instead of globally")
	fs.StringVar(&c.baseline, "baseline", "default", "baseline configuration for --method baseline: default, best, or a JSON object")
	fs.Float64Var(&c.level, "level", 0.95, "confidence level of the intervals")
}

func (c *shapleyMethodFlags) options(in *shapleyInputs, point []float64) (shapley.Options, error) {
	m, err := shapley.ParseMethod(c.method)
	if err != nil {
		return shapley.Options{}, usageError{err}
	}
	switch {
	case c.k < 2:
		return shapley.Options{}, usagef("--k must be at least 2")
	case c.maxK != 0 && c.maxK < c.k:
		return shapley.Options{}, usagef("--max-k must be at least --k")
	case c.background < 0:
		return shapley.Options{}, usagef("--background must be positive")
	case !(c.local >= 0 && c.local <= 1):
		return shapley.Options{}, usagef("--local must be a radius in [0, 1]")
	case !(c.tau >= 0) || math.IsInf(c.tau, 0):
		return shapley.Options{}, usagef("--tau must be finite and ≥ 0")
	case !(c.level > 0 && c.level < 1):
		return shapley.Options{}, usagef("--level must lie in (0, 1)")
	}
	o := shapley.Options{Method: m, Samples: c.k, MaxSamples: c.maxK, BackgroundSize: c.background,
		LocalRadius: c.local, Space: in.space, Level: c.level, Seed: in.seed}
	if m == shapley.Baseline {
		b, err := in.parsePoint(c.baseline)
		if err != nil {
			return o, fmt.Errorf("--baseline: %w", err)
		}
		o.Baseline = b
	}
	return o, nil
}

func runExplainShapley(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain shapley", flag.ContinueOnError)
	var c shapleyCommonFlags
	var mf shapleyMethodFlags
	c.register(fs, "data")
	mf.register(fs)
	pointText := fs.String("point", "last", `configuration to explain: JSON of natural values ('{"x1": 0.2, ...}'), best, last or default`)
	trial := fs.Int("trial", -1, "explain trial N (0-based row among usable trials) with the surrogate fitted on the trials before it, as the optimizer saw it")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	in, err := c.load(env, "data")
	if err != nil {
		return err
	}
	var point []float64
	t := len(in.x)
	if *trial >= 0 {
		if *trial < 2 || *trial >= len(in.x) {
			return usagef("--trial must lie in 2..%d (a surrogate needs two earlier trials)", len(in.x)-1)
		}
		t = *trial
		point = in.x[t]
	} else if point, err = in.parsePoint(*pointText); err != nil {
		return err
	}
	model, err := in.surrogateAt(t)
	if err != nil {
		return err
	}
	fn, err := explainFunction(model, mf.target, mf.tau, in.incumbentAt(t))
	if err != nil {
		return err
	}
	opts, err := mf.options(in, point)
	if err != nil {
		return err
	}
	e, err := shapley.Explain(ctx, fn, point, opts)
	if err != nil {
		return err
	}
	if c.svg != "" {
		if err := writeFile(c.svg, func(w io.Writer) error { return shapley.WriteDecompositionSVG(w, e, in.space) }); err != nil {
			return err
		}
	}
	if c.asJSON {
		sum, err := e.Summarize(in.space)
		if err != nil {
			return err
		}
		return printJSON(env.stdout, sum)
	}
	return writeShapleyText(env.stdout, e, in.space, t)
}

func writeShapleyText(w io.Writer, e *shapley.Explanation, s *space.Space, t int) error {
	bw := &shapleyWriter{w: w}
	desc := fmt.Sprintf("method %s, background %d points", e.Method, e.BackgroundSize)
	if e.LocalRadius > 0 {
		desc += fmt.Sprintf(" within ±%g of the point", e.LocalRadius)
	}
	if e.Samples > 0 {
		desc += fmt.Sprintf(", K = %d draws per parameter", e.Samples)
	}
	if e.Tau != nil {
		desc += fmt.Sprintf(", τ = %g", *e.Tau)
	}
	bw.printf("Shapley explanation (%s), surrogate fitted on %d trials", desc, t)
	if s.Objective == space.Maximize {
		bw.printf("; values in minimization units (−objective)")
	}
	bw.printf("\n\n")
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
	if okM && okS && okC && e.Tau != nil {
		fmt.Fprintf(tw, "parameter\tvalue\tφ(cb)\t%s interval\tφ(m)\t−τ·φ(se)\tφ(se)\t\n", pct)
		for j, name := range e.Params {
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t[%.4g, %.4g]\t%.4g\t%.4g\t%.4g\t\n", name, formatShapleyValue(s, j, vals[j]),
				cb.Phi[j], cb.Lower[j], cb.Upper[j], mean.Phi[j], -*e.Tau*se.Phi[j], se.Phi[j])
		}
	} else {
		a := e.Outputs[0]
		fmt.Fprintf(tw, "parameter\tvalue\tφ(%s)\t%s interval\t\n", a.Output, pct)
		for j, name := range e.Params {
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t[%.4g, %.4g]\t\n", name, formatShapleyValue(s, j, vals[j]), a.Phi[j], a.Lower[j], a.Upper[j])
		}
	}
	tw.Flush()
	if e.Method == shapley.MonteCarlo {
		ok := true
		for _, a := range e.Outputs {
			ok = ok && a.SampleSizeOK
		}
		verdict := "K suffices: the efficiency error is below the smallest gap between two parameters for every output"
		if !ok {
			verdict = "K may be too small: for some output the efficiency error exceeds the smallest gap between two parameters (raise --k or set --max-k)"
		}
		bw.printf("\ncheckSampleSize: %s\n", verdict)
	}
	return bw.err
}

// shapleyWriter keeps the first write error so text output can be written
// without checking every line.
type shapleyWriter struct {
	w   io.Writer
	err error
}

func (e *shapleyWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *shapleyWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }

// formatShapleyValue shows a parameter's natural value briefly: floats to
// six significant digits, "(inactive)" for a switched-off parameter.
func formatShapleyValue(s *space.Space, j int, v float64) string {
	switch {
	case math.IsNaN(v):
		return "(inactive)"
	case s.Params[j].Type == space.Float:
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return s.Format(j, v)
}
