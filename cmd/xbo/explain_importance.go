package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"xbo/explain"
	"xbo/explain/fanova"
)

func init() {
	register(command{
		name:    "explain importance",
		summary: "hyperparameter importance (Sobol indices of the GP with intervals, or forest fANOVA; main effects and pairs) from a trials CSV",
		run:     runExplainImportance,
	})
}

func runExplainImportance(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain importance", flag.ContinueOnError)
	var in historyFlags
	in.register(fs, "data", true, false)
	in.registerBudget(fs)
	method := fs.String("method", explain.DefaultImportanceMethod, "gp-sobol (Sobol indices of the GP's mean, 95% intervals from posterior samples) or forest-fanova (random-forest fANOVA, ± std across trees)")
	pairs := fs.Bool("pairs", true, "also compute every pairwise interaction (up to 40 parameters)")
	trees := fs.Int("trees", 0, "forest-fanova: number of trees in the random forest (default 30)")
	samples := fs.Int("samples", 0, "gp-sobol: base points of the quasi-Monte Carlo design (default 2048)")
	posterior := fs.Int("posterior", 0, "gp-sobol: posterior sample functions for the intervals (default 300)")
	refits := fs.Int("refits", 0, "gp-sobol: hyperparameter refits the intervals also sample over (default 3; -1 none)")
	kernel := fs.String("kernel", "", "gp-sobol: GP kernel, matern52 (default), matern32 or se")
	seed := fs.Uint64("seed", 1, "random seed (same data and seed give the same numbers)")
	capQ := fs.Float64("cap-quantile", 0, "importance in the good region: cap values at the quantile q of the best (e.g. 0.25 = top 25%)")
	capV := fs.String("cap-value", "", "importance in the good region: cap values at this value (e.g. the default configuration's)")
	outliers := fs.String("outliers", explain.OutliersExclude, "exclude: leave out values far worse than the other trials predict (failed or diverged runs); keep: fit every trial")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	req := explain.ImportanceRequest{Method: *method, Pairs: pairs, Trees: *trees, Seed: *seed, CapQuantile: *capQ,
		Samples: *samples, Posterior: *posterior, Refits: *refits, Budget: in.budget, Outliers: *outliers}
	if *kernel != "" {
		req.Surrogate = &explain.Surrogate{Kind: explain.SurrogateGP, Kernel: *kernel, Seed: *seed}
	}
	if *capV != "" {
		v, err := parseFiniteFloat(*capV)
		if err != nil {
			return usagef("--cap-value: %v", err)
		}
		req.CapValue = &v
	}
	if *trees < 0 {
		return usagef("--trees must be positive (got %d)", *trees)
	}
	if *samples < 0 || *posterior < 0 {
		return usagef("--samples and --posterior must be positive")
	}
	if math.IsNaN(*capQ) || *capQ < 0 {
		return usagef("--cap-quantile must be in (0,1] (got %v)", *capQ)
	}
	h, err := in.load(ctx, env)
	if err != nil {
		return err
	}
	res, err := compute(ctx, env, "importance", func(ctx context.Context, e *explain.Engine) (*explain.ImportanceResult, error) {
		return e.Importance(ctx, h, req)
	})
	if err != nil {
		return err
	}
	if in.asJSON {
		return printJSON(env.stdout, res)
	}
	return printImportance(env.stdout, res)
}

func parseFiniteFloat(text string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", text)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not finite", text)
	}
	return v, nil
}

func printImportance(w io.Writer, res *explain.ImportanceResult) error {
	im := res.Importance
	sobol := res.Method == explain.ImportanceGPSobol
	var b strings.Builder
	if sobol {
		fmt.Fprintf(&b, "Importance (%s): %d trials, Sobol indices of the GP mean (%s kernel), variance %.4g", res.Method, res.Trials,
			res.Surrogate.Kernel, im.TotalVariance)
	} else {
		fmt.Fprintf(&b, "Importance (%s): %d trials, random forest of %d trees (%d with variance), total variance %.4g",
			res.Method, res.Trials, res.Surrogate.Trees, im.TreesUsed, im.TotalVariance)
	}
	if res.Cap != "" {
		fmt.Fprintf(&b, ", %s", res.Cap)
	}
	if res.Budget != nil {
		fmt.Fprintf(&b, "\n%s", budgetLine(res.Budget))
	}
	if bias := res.Bias; bias != nil {
		fmt.Fprintf(&b, "\nsampling bias %s (MMD %.2g× a uniform sample's)", bias.Level, bias.Ratio)
	}
	b.WriteString(checkLines(&res.About))
	if sobol {
		b.WriteString("\nfraction of variance explained (main effect), 95% interval from posterior samples, and total effect (the order)\n\n")
	} else {
		b.WriteString("\nfraction of variance explained, mean ± std across trees\n\n")
	}
	pairName := func(key string) string { return strings.Replace(key, ",", " × ", 1) }
	width := len("all main effects")
	for n := range im.Main {
		width = max(width, utf8.RuneCountInString(n))
	}
	for n := range im.Pairs {
		width = max(width, utf8.RuneCountInString(pairName(n)))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
	header := func(what string, withTotal bool) {
		switch {
		case sobol && withTotal:
			fmt.Fprintf(&b, "%4s  %s  %8s  %17s  %7s\n", "rank", pad(what), "fraction", "95% interval", "total")
		case sobol:
			fmt.Fprintf(&b, "%4s  %s  %8s  %17s\n", "rank", pad(what), "fraction", "95% interval")
		default:
			fmt.Fprintf(&b, "%4s  %s  %8s  %10s\n", "rank", pad(what), "fraction", "± std")
		}
	}
	row := func(rank int, name string, e fanova.Effect, total *fanova.Effect) {
		switch {
		case len(e.CI95) == 2:
			fmt.Fprintf(&b, "%4d  %s  %7.1f%%  [%5.1f%%, %5.1f%%]", rank, pad(name), 100*e.Fraction, 100*e.CI95[0], 100*e.CI95[1])
			if total != nil {
				fmt.Fprintf(&b, "  %6.1f%%", 100*total.Fraction)
			}
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "%4d  %s  %7.1f%%  ± %5.1f%%\n", rank, pad(name), 100*e.Fraction, 100*e.Std)
		}
	}
	header("parameter", true)
	total := 0.0
	// Ranked by total effect, as the report and the dashboard rank.
	for i, r := range res.ByTotal() {
		var tot *fanova.Effect
		if t, ok := res.Total[r.Param]; ok {
			tot = &t
		}
		e := im.Main[r.Param]
		row(i+1, r.Param, e, tot)
		total += e.Fraction
	}
	fmt.Fprintf(&b, "      %s  %7.1f%%\n", pad("all main effects"), 100*total)
	if im.Pairs != nil {
		b.WriteString("\n")
		header("pair", false)
		pt := 0.0
		for i, r := range im.RankedPairs() {
			row(i+1, pairName(r.Name), r.Effect, nil)
			pt += r.Fraction
		}
		fmt.Fprintf(&b, "      %s  %7.1f%%\n", pad("all pairs"), 100*pt)
	}
	if res.Note != "" {
		fmt.Fprintf(&b, "\nnote: %s\n", res.Note)
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return errors.Join(errors.New("writing the table"), err)
	}
	return nil
}
