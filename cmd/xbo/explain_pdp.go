package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"

	"xbo/explain/pdp"
	"xbo/forest"
	"xbo/gp"
	"xbo/space"
	"xbo/surrogate"
	"xbo/trials"
)

func init() {
	register(command{
		name:    "explain pdp",
		summary: "partial dependence (1 or 2 parameters) with confidence bands, or a slice through the best trial",
		run:     runExplainPDP,
	})
}

// pdpInputs is what the PDP-family commands load: the space, the trials and
// a surrogate fitted to them.
type pdpInputs struct {
	space  *space.Space
	table  *trials.Table
	x      [][]float64 // trials in unit encoding
	model  surrogate.Model
	best   int // index of the best trial
	bestU  []float64
	kindOf string
}

type pdpCommonFlags struct {
	command                                string // for messages: the flag set's name
	data, spacePath, surrogateKind, kernel string
	grid, mc                               int
	alpha                                  float64
	exact, asJSON                          bool
	svg                                    string
	seed                                   uint64
}

func (c *pdpCommonFlags) register(fs *flag.FlagSet) {
	c.command = fs.Name()
	fs.StringVar(&c.data, "data", "", "trials CSV (one column per parameter, then value)")
	fs.StringVar(&c.spacePath, "space", "", "search space file (JSON or YAML)")
	fs.StringVar(&c.surrogateKind, "surrogate", "gp", "surrogate model: gp or forest")
	fs.StringVar(&c.kernel, "kernel", "matern52", "GP kernel: matern52, matern32 or se")
	fs.IntVar(&c.grid, "grid", pdp.DefaultGridSize, "grid points per parameter (categoricals: every level)")
	fs.IntVar(&c.mc, "mc", pdp.DefaultSamples, "Monte Carlo points over the other parameters")
	fs.Float64Var(&c.alpha, "alpha", pdp.DefaultAlpha, "bands at level 1−alpha")
	fs.BoolVar(&c.exact, "exact", false, "exact band (paper 000 eq. 4) instead of the mean of variances (eq. 5)")
	fs.BoolVar(&c.asJSON, "json", false, "print JSON instead of a table")
	fs.StringVar(&c.svg, "svg", "", "also write an SVG plot to this file")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the Monte Carlo sample and the model fit")
}

func (c *pdpCommonFlags) validate() error {
	switch {
	case c.data == "" || c.spacePath == "":
		return usagef("--data and --space are required")
	case c.grid < 2:
		return usagef("--grid must be at least 2")
	case c.mc < 1:
		return usagef("--mc must be at least 1")
	case !(c.alpha > 0 && c.alpha < 1):
		return usagef("--alpha must lie in (0, 1)")
	case c.surrogateKind != "gp" && c.surrogateKind != "forest":
		return usagef("--surrogate must be gp or forest, not %q", c.surrogateKind)
	}
	if _, err := gp.ParseKernel(c.kernel); err != nil {
		return usageError{err}
	}
	return nil
}

func (c *pdpCommonFlags) load(env *cliEnv) (*pdpInputs, error) {
	run, err := loadRun(env, c.command, c.spacePath, c.data, "a surrogate")
	if err != nil {
		return nil, err
	}
	sp, table, x := run.space, run.table, run.x
	in := &pdpInputs{space: sp, table: table, x: x, best: table.Best(), kindOf: c.surrogateKind}
	in.bestU = x[in.best]
	switch c.surrogateKind {
	case "forest":
		m, err := forest.Fit(x, table.Values, forest.Options{Levels: sp.Levels(), Seed: c.seed})
		if err != nil {
			return nil, err
		}
		in.model = m
	default:
		k, _ := gp.ParseKernel(c.kernel)
		m, err := gp.Fit(x, table.Values, gp.Options{Kernel: k, Levels: sp.Levels(), Seed: c.seed})
		if err != nil {
			return nil, err
		}
		in.model = m
	}
	return in, nil
}

func (c *pdpCommonFlags) options(keepICE bool) pdp.Options {
	return pdp.Options{GridSize: c.grid, Samples: c.mc, Alpha: c.alpha, Exact: c.exact, KeepICE: keepICE, Seed: c.seed}
}

// rugAndBest lists the evaluated values of parameter p (active ones) and the
// best trial's value, for plots.
func (in *pdpInputs) rugAndBest(p int) ([]float64, *float64) {
	var rug []float64
	for _, row := range in.table.Rows {
		rug = append(rug, row[p])
	}
	b := in.table.Rows[in.best][p]
	return rug, &b
}

func (in *pdpInputs) panel(r *pdp.Result, title string) (pdp.Panel, error) {
	p, ok := in.space.Index(r.Param)
	if !ok {
		return pdp.Panel{}, fmt.Errorf("unknown parameter %q", r.Param)
	}
	panel, err := pdp.PanelOf(r, title)
	if err != nil {
		return pdp.Panel{}, err
	}
	param := in.space.Params[p]
	panel.Scale = param.ToUnit
	panel.Rug, panel.Best = in.rugAndBest(p)
	return panel, nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runExplainPDP(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain pdp", flag.ContinueOnError)
	var c pdpCommonFlags
	c.register(fs)
	param := fs.String("param", "", "parameter of interest")
	param2 := fs.String("param2", "", "second parameter for a two-dimensional PDP")
	ice := fs.Bool("ice", false, "include the ICE curves in the JSON output")
	slice := fs.Bool("slice", false, "instead of a PDP, the slice through the best trial (others fixed; not a PDP)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return err
	}
	if *param == "" {
		return usagef("--param is required")
	}
	if *slice && *param2 != "" {
		return usagef("--slice draws one parameter; drop --param2")
	}
	in, err := c.load(env)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if *slice {
		s, err := pdp.SliceThrough(in.model, in.space, *param, in.table.Rows[in.best], c.grid, c.alpha)
		if err != nil {
			return err
		}
		if c.svg != "" {
			p, _ := in.space.Index(*param)
			panel := pdp.Panel{Title: "SLICE through the best trial (not a PDP): " + *param,
				X: s.Grid, Mean: s.Mean, Lower: s.Lower, Upper: s.Upper, Labels: s.Labels,
				Scale: in.space.Params[p].ToUnit, XLabel: *param,
				YLabel: fmt.Sprintf("posterior mean, others at the best trial (%g%% band)", 100*s.Level)}
			panel.Rug, panel.Best = in.rugAndBest(p)
			if err := writeFile(c.svg, func(w io.Writer) error { return pdp.WriteSVG(w, []pdp.Panel{panel}, 1) }); err != nil {
				return err
			}
		}
		if c.asJSON {
			return printJSON(env.stdout, s)
		}
		fmt.Fprintf(env.stdout, "SLICE of %s through the best trial (other parameters fixed; this is not a partial dependence plot)\n", *param)
		return writeCurveTable(env.stdout, s.Grid, s.Labels, s.Mean, s.SD, s.Lower, s.Upper)
	}
	params := []string{*param}
	if *param2 != "" {
		params = append(params, *param2)
	}
	if c.exact {
		if _, ok := in.model.(surrogate.AverageVariancer); !ok {
			return usagef("--exact needs a surrogate with an average variance (gp or forest)")
		}
	}
	res, err := pdp.Compute(ctx, in.model, in.space, params, c.options(*ice))
	if err != nil {
		return err
	}
	if c.svg != "" {
		err := writeFile(c.svg, func(w io.Writer) error {
			if res.Param2 != "" {
				return pdp.WriteHeatmapSVG(w, res, fmt.Sprintf("PDP of %s × %s (%s surrogate)", res.Param, res.Param2, in.kindOf))
			}
			panel, err := in.panel(res, fmt.Sprintf("PDP of %s (%s surrogate, %d trials)", res.Param, in.kindOf, in.table.Len()))
			if err != nil {
				return err
			}
			return pdp.WriteSVG(w, []pdp.Panel{panel}, 1)
		})
		if err != nil {
			return err
		}
	}
	if c.asJSON {
		return printJSON(env.stdout, res)
	}
	if res.Param2 != "" {
		fmt.Fprintf(env.stdout, "PDP of %s × %s, %g%% band (%s), %d Monte Carlo points\n", res.Param, res.Param2, 100*res.Level, res.Band, res.Samples)
		tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\t%s\tmean\tsd\t\n", res.Param, res.Param2)
		for a := range res.Grid {
			for b := range res.Grid2 {
				k := a*len(res.Grid2) + b
				fmt.Fprintf(tw, "%s\t%s\t%.6g\t%.4g\t\n", gridLabel(res.Grid, res.Labels, a), gridLabel(res.Grid2, res.Labels2, b), res.Mean[k], res.SD[k])
			}
		}
		return tw.Flush()
	}
	fmt.Fprintf(env.stdout, "PDP of %s, %g%% band (%s), %d Monte Carlo points; best trial at %s = %s\n",
		res.Param, 100*res.Level, res.Band, res.Samples, res.Param, formatNatural(in.space, res.Param, in.table.Rows[in.best]))
	return writeCurveTable(env.stdout, res.Grid, res.Labels, res.Mean, res.SD, res.Lower, res.Upper)
}

func formatNatural(sp *space.Space, name string, row []float64) string {
	p, ok := sp.Index(name)
	if !ok {
		return "?"
	}
	if s := sp.Format(p, row[p]); s != "" {
		return s
	}
	return "inactive"
}

func gridLabel(grid []float64, labels []string, i int) string {
	if labels != nil && i < len(labels) {
		return labels[i]
	}
	return strconv.FormatFloat(grid[i], 'g', 6, 64)
}

func writeCurveTable(w io.Writer, grid []float64, labels []string, mean, sd, lower, upper []float64) error {
	if len(mean) != len(grid) {
		return errors.New("curve and grid differ in length")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "value\tmean\tsd\tlower\tupper\t")
	for g := range grid {
		fmt.Fprintf(tw, "%s\t%.6g\t%.4g\t%.6g\t%.6g\t\n", gridLabel(grid, labels, g), mean[g], sd[g], lower[g], upper[g])
	}
	return tw.Flush()
}
