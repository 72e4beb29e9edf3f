package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"xbo/explain"
	"xbo/explain/pdp"
	"xbo/history"
)

func init() {
	register(command{
		name:    "explain pdp",
		summary: "partial dependence (1 or 2 parameters) with confidence bands, or a slice through the best trial",
		run:     runExplainPDP,
	})
}

// pdpFlags are the settings of the PDP family (pdp, regional).
type pdpFlags struct {
	grid, mc int
	alpha    float64
	band     string
	exact    bool
}

func (c *pdpFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&c.grid, "grid", 0, "grid points per parameter (default 20; categoricals: every level)")
	fs.IntVar(&c.mc, "mc", 0, "Monte Carlo points over the other parameters (default 1000)")
	fs.Float64Var(&c.alpha, "alpha", 0, "bands at level 1−alpha (default 0.05)")
	fs.StringVar(&c.band, "band", "", "band estimator: calibrated (default: eq. 4 × the surrogate's cross-validated variance factor + the Monte Carlo error of the average), approx (mean of variances, eq. 5 of Moosbauer et al. 2021) or exact (eq. 4)")
	fs.BoolVar(&c.exact, "exact", false, "same as --band exact")
}

func (c *pdpFlags) bandName() (string, error) {
	if c.exact {
		if c.band != "" && c.band != explain.BandExact {
			return "", usagef("--exact contradicts --band %s", c.band)
		}
		return explain.BandExact, nil
	}
	return c.band, nil
}

func runExplainPDP(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain pdp", flag.ContinueOnError)
	var in historyFlags
	var c pdpFlags
	var s surrogateFlags
	in.register(fs, "data", true, true)
	in.registerBudget(fs)
	c.register(fs)
	s.register(fs)
	param := fs.String("param", "", "parameter of interest")
	param2 := fs.String("param2", "", "second parameter for a two-dimensional PDP")
	ice := fs.Bool("ice", false, "include the ICE curves in the JSON output")
	slice := fs.Bool("slice", false, "instead of a PDP, the slice through --point (others fixed; not a PDP)")
	point := fs.String("point", "best", "with --slice: the configuration sliced through (best, last, default or a JSON object)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	band, err := c.bandName()
	if err != nil {
		return err
	}
	switch {
	case *param == "":
		return usagef("--param is required")
	case *slice && *param2 != "":
		return usagef("--slice draws one parameter; drop --param2")
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	if *slice {
		req := explain.SliceRequest{Param: *param, Point: *point, Grid: c.grid, Alpha: c.alpha, Surrogate: s.spec(), Budget: in.budget}
		res, err := compute(ctx, env, "slice", func(ctx context.Context, e *explain.Engine) (*explain.SliceResult, error) {
			return e.Slice(ctx, h, req)
		})
		if err != nil {
			return err
		}
		return writeSlice(env, &in, in.shown(h), res)
	}
	params := []string{*param}
	if *param2 != "" {
		params = append(params, *param2)
	}
	req := explain.PDPRequest{Params: params, Grid: c.grid, Samples: c.mc, Alpha: c.alpha, Band: band, ICE: *ice, Surrogate: s.spec(),
		Budget: in.budget}
	res, err := compute(ctx, env, "PDP", func(ctx context.Context, e *explain.Engine) (*explain.PDPResult, error) {
		return e.PDP(ctx, h, req)
	})
	if err != nil {
		return err
	}
	h = in.shown(h)
	if in.svg != "" {
		err := writeFile(in.svg, func(w io.Writer) error {
			if res.Param2 != "" {
				return pdp.WriteHeatmapSVG(w, res.Result, fmt.Sprintf("PDP of %s × %s (%s surrogate)", res.Param, res.Param2, res.Surrogate.Kind))
			}
			panel, err := panelOf(h, res.Result, fmt.Sprintf("PDP of %s (%s surrogate, %d trials)", res.Param, res.Surrogate.Kind, res.Trials))
			if err != nil {
				return err
			}
			return pdp.WriteSVG(w, []pdp.Panel{panel}, 1)
		})
		if err != nil {
			return err
		}
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	w := &textWriter{w: env.stdout}
	if res.Param2 != "" {
		w.printf("PDP of %s × %s, %g%% band (%s), %d Monte Carlo points\n%s\n", res.Param, res.Param2, 100*res.Level, res.Band, res.Samples, aboutLine(&res.About))
		if e := res.Extrapolation; e != nil && len(e.Beyond) > 0 {
			w.printf("extrapolation: %s\n", e.Reading)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\t%s\tmean\tsd\t\n", res.Param, res.Param2)
		for a := range res.Grid {
			for b := range res.Grid2 {
				k := a*len(res.Grid2) + b
				fmt.Fprintf(tw, "%s\t%s\t%.6g\t%.4g\t\n", gridLabel(res.Grid, res.Labels, a), gridLabel(res.Grid2, res.Labels2, b), res.Mean[k], res.SD[k])
			}
		}
		tw.Flush()
		return w.err
	}
	best := "none"
	if b, ok := h.Best(); ok {
		j, _ := h.Space.Index(res.Param)
		best = formatValue(h.Space, j, h.Trials[b].Params[j])
	}
	w.printf("PDP of %s, %g%% band (%s), %d Monte Carlo points; best trial at %s = %s\n%s\n", res.Param, 100*res.Level, res.Band,
		res.Samples, res.Param, best, aboutLine(&res.About))
	if res.Note != "" {
		w.printf("note: %s\n", res.Note)
	}
	w.printf("%s", extrapolationLine(res.Extrapolation, res.Grid, res.Labels))
	if w.err != nil {
		return w.err
	}
	return writeCurveTable(env.stdout, res.Grid, res.Labels, res.Mean, res.SD, res.Lower, res.Upper)
}

func writeSlice(env *cliEnv, in *historyFlags, h *history.History, s *explain.SliceResult) error {
	if in.svg != "" {
		p, _ := h.Space.Index(s.Param)
		panel := pdp.Panel{Title: "SLICE through one configuration (not a PDP): " + s.Param,
			X: s.Grid, Mean: s.Mean, Lower: s.Lower, Upper: s.Upper, Labels: pdp.LabelTexts(s.Labels),
			Scale: h.Space.Params[p].ToUnit, XLabel: s.Param,
			YLabel: fmt.Sprintf("posterior mean, others fixed (%g%% band)", 100*s.Level)}
		panel.Rug, panel.Best = rugAndBest(h, p)
		if err := writeFile(in.svg, func(w io.Writer) error { return pdp.WriteSVG(w, []pdp.Panel{panel}, 1) }); err != nil {
			return err
		}
	}
	if in.asJSON {
		return printJSON(env.stdout, s)
	}
	fmt.Fprintf(env.stdout, "SLICE of %s through %v (other parameters fixed; this is not a partial dependence plot)\n%s\n", s.Param, s.Through, aboutLine(&s.About))
	return writeCurveTable(env.stdout, s.Grid, s.Labels, s.Mean, s.SD, s.Lower, s.Upper)
}
