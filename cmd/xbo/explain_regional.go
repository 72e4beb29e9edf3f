package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"xbo/explain"
	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/metrics"
)

func init() {
	register(command{
		name:    "explain regional",
		summary: "regional PDPs by confidence splitting: the tree and a PDP per leaf",
		run:     runExplainRegional,
	})
}

func runExplainRegional(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain regional", flag.ContinueOnError)
	var in historyFlags
	var c pdpFlags
	var s surrogateFlags
	in.register(fs, "data", true, true)
	in.registerBudget(fs)
	c.register(fs)
	s.register(fs)
	param := fs.String("param", "", "parameter of interest")
	splits := fs.Int("splits", explain.DefaultSplits, "maximum number of splits (0 with --depth: no bound)")
	depth := fs.Int("depth", 0, "maximum depth (0: no bound)")
	minSize := fs.Int("min-size", 0, "minimum ICE curves per region (0: max(5, 1% of --mc))")
	minImp := fs.Float64("min-improvement", 0, "minimum relative impurity reduction of a split")
	criterion := fs.String("criterion", "", "impurity a split minimizes: l2 (eq. 6 of Moosbauer et al. 2021, the default), l1 (Σ|v − median|), area (spread of the curves' mean heights) or point (spread of the sd at the Monte Carlo points)")
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
	case *splits == 0 && *depth == 0:
		return usagef("--splits 0 needs a --depth")
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	req := explain.RegionalRequest{Param: *param, Grid: c.grid, Samples: c.mc, Alpha: c.alpha, Band: band,
		MaxSplits: *splits, MaxDepth: *depth, MinSize: *minSize, MinImprovement: *minImp, Criterion: *criterion, Surrogate: s.spec(), Budget: in.budget}
	res, err := compute(ctx, env, "regional PDP", func(ctx context.Context, e *explain.Engine) (*explain.RegionalResult, error) {
		return e.Regional(ctx, h, req)
	})
	if err != nil {
		return err
	}
	h = in.shown(h)
	if in.svg != "" {
		err := writeFile(in.svg, func(w io.Writer) error {
			g, err := panelOf(h, res.Global, fmt.Sprintf("global PDP of %s (n = %d)", res.Param, res.Global.Samples))
			if err != nil {
				return err
			}
			panels := []pdp.Panel{g}
			for _, l := range res.Leaves {
				title := strings.Join(l.Path, " & ")
				if l.HoldsBest {
					title = "★ " + title
				}
				panel, err := panelOf(h, l.PDP, title)
				if err != nil {
					return err
				}
				panels = append(panels, panel)
			}
			return pdp.WriteSVG(w, panels, 2)
		})
		if err != nil {
			return err
		}
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	return writeRegionalText(env.stdout, res)
}

func writeRegionalText(w io.Writer, res *explain.RegionalResult) error {
	fmt.Fprintf(w, "Confidence splitting for %s: %d splits, impurity %.4g → %.4g (%s bands)\n%s\n",
		res.Param, res.Splits, res.RootImpurity, res.LeafImpurity, res.Global.Band, aboutLine(&res.About))
	if res.Note != "" {
		fmt.Fprintf(w, "note: %s\n", res.Note)
	}
	fmt.Fprint(w, extrapolationLine(res.Extrapolation, res.Global.Grid, res.Global.Labels))
	var walk func(n *regional.Node, indent string, label string)
	walk = func(n *regional.Node, indent, label string) {
		mark := ""
		if n.IsLeaf() && n.ID == res.BestLeaf {
			mark = "  ★ best trial"
		}
		fmt.Fprintf(w, "%s%s[node %d] n=%d impurity=%.4g%s\n", indent, label, n.ID, n.Size, n.Impurity, mark)
		if !n.IsLeaf() {
			walk(n.Left, indent+"  ", n.Split.Describe(true)+": ")
			walk(n.Right, indent+"  ", n.Split.Describe(false)+": ")
		}
	}
	walk(res.Tree, "", "")
	fmt.Fprintf(w, "\nGlobal PDP (mean sd %.4g):\n", res.MCGlobal)
	if err := writeCurveTable(w, res.Global.Grid, res.Global.Labels, res.Global.Mean, res.Global.SD, res.Global.Lower, res.Global.Upper); err != nil {
		return err
	}
	for _, l := range res.Leaves {
		mc, _ := metrics.MC(l.PDP.SD)
		delta, _ := metrics.RelativeImprovement(res.MCGlobal, mc)
		mark := ""
		if l.HoldsBest {
			mark = " ★ holds the best trial"
		}
		path := strings.Join(l.Path, " & ")
		if path == "" {
			path = "whole space"
		}
		fmt.Fprintf(w, "\nLeaf %d: %s (n=%d, mean sd %.4g, δMC %+.1f%%)%s\n", l.ID, path, l.Size, mc, 100*delta, mark)
		if err := writeCurveTable(w, l.PDP.Grid, l.PDP.Labels, l.PDP.Mean, l.PDP.SD, l.PDP.Lower, l.PDP.Upper); err != nil {
			return err
		}
	}
	return nil
}
