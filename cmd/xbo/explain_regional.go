package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

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
	var c pdpCommonFlags
	c.register(fs)
	param := fs.String("param", "", "parameter of interest")
	splits := fs.Int("splits", regional.DefaultMaxSplits, "maximum number of splits (0: no bound, then --depth must be set)")
	depth := fs.Int("depth", 0, "maximum depth (0: no bound)")
	minSize := fs.Int("min-size", 0, "minimum ICE curves per region (0: max(5, 1% of --mc))")
	minImp := fs.Float64("min-improvement", 0, "minimum relative impurity reduction of a split")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return err
	}
	switch {
	case *param == "":
		return usagef("--param is required")
	case *splits < 0 || *depth < 0 || *minSize < 0:
		return usagef("--splits, --depth and --min-size must not be negative")
	case *splits == 0 && *depth == 0:
		return usagef("--splits 0 needs a --depth")
	case *minImp < 0 || *minImp >= 1:
		return usagef("--min-improvement must lie in [0, 1)")
	}
	in, err := c.load(env)
	if err != nil {
		return err
	}
	p, ok := in.space.Index(*param)
	if !ok {
		return usagef("unknown parameter %q (known: %s)", *param, strings.Join(in.space.Names(), ", "))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	opts := c.options(false)
	opts.KeepVariance = true // the splitting criterion reads the variance ICE curves
	ice, err := pdp.NewICE(ctx, in.model, in.space, []int{p}, opts)
	if err != nil {
		return err
	}
	res, err := regional.Explain(ctx, ice, in.bestU, regional.Options{
		MaxSplits: *splits, MaxDepth: *depth, MinNodeSize: *minSize, MinImprovement: *minImp})
	if err != nil {
		return err
	}
	if c.svg != "" {
		err := writeFile(c.svg, func(w io.Writer) error {
			g, err := in.panel(res.Global, fmt.Sprintf("global PDP of %s (n = %d)", res.Param, res.Global.Samples))
			if err != nil {
				return err
			}
			panels := []pdp.Panel{g}
			for _, l := range res.Leaves {
				title := strings.Join(l.Path, " & ")
				if l.HoldsBest {
					title = "★ " + title
				}
				panel, err := in.panel(l.PDP, title)
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
	if c.asJSON {
		return printJSON(env.stdout, res)
	}
	return writeRegionalText(env.stdout, res, in)
}

func writeRegionalText(w io.Writer, res *regional.Result, in *pdpInputs) error {
	fmt.Fprintf(w, "Confidence splitting for %s: %d splits, impurity %.4g → %.4g (%s bands)\n",
		res.Param, res.Splits, res.RootImpurity, res.LeafImpurity, res.Global.Band)
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
	gmc, _ := metrics.MC(res.Global.SD)
	fmt.Fprintf(w, "\nGlobal PDP (mean sd %.4g):\n", gmc)
	if err := writeCurveTable(w, res.Global.Grid, res.Global.Labels, res.Global.Mean, res.Global.SD, res.Global.Lower, res.Global.Upper); err != nil {
		return err
	}
	for _, l := range res.Leaves {
		mc, _ := metrics.MC(l.PDP.SD)
		delta, _ := metrics.RelativeImprovement(gmc, mc)
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
