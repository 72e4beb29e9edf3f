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
	"unicode/utf8"

	"xbo/explain/fanova"
	"xbo/forest"
	"xbo/space"
	"xbo/trials"
)

func init() {
	register(command{
		name:    "explain importance",
		summary: "fANOVA hyperparameter importance (main effects and pairs) from a trials CSV",
		run:     runExplainImportance,
	})
}

func runExplainImportance(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("explain importance", flag.ContinueOnError)
	dataPath := fs.String("data", "", "trials CSV: one column per parameter (empty cell = inactive), then value")
	spacePath := fs.String("space", "", "search space file (.json, .yaml)")
	pairs := fs.Bool("pairs", false, "also compute every pairwise interaction")
	trees := fs.Int("trees", forest.DefaultTrees, "number of trees in the random forest")
	seed := fs.Uint64("seed", 1, "random seed (same data and seed give the same numbers)")
	capQ := fs.Float64("cap-quantile", 0, "importance in the good region: cap values at the quantile q of the best (e.g. 0.25 = top 25%)")
	capV := fs.String("cap-value", "", "importance in the good region: cap values at this value (e.g. the default configuration's)")
	asJSON := fs.Bool("json", false, `print {"main": {...}, "pairs": {...}, "total_variance": v}`)
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	switch {
	case *dataPath == "":
		return usagef("--data is required")
	case *spacePath == "":
		return usagef("--space is required")
	case *trees < 1:
		return usagef("--trees must be at least 1 (got %d)", *trees)
	case math.IsNaN(*capQ) || *capQ < 0 || *capQ > 1:
		return usagef("--cap-quantile must be in (0,1] (got %v)", *capQ)
	case *capQ > 0 && *capV != "":
		return usagef("--cap-quantile and --cap-value exclude each other")
	}
	var capValue float64
	if *capV != "" {
		v, err := parseFiniteFloat(*capV)
		if err != nil {
			return usagef("--cap-value: %v", err)
		}
		capValue = v
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	run, err := loadRun(env, "explain importance", *spacePath, *dataPath, "fANOVA")
	if err != nil {
		return err
	}
	s, tab, x := run.space, run.table, run.x
	y := tab.Values
	maximize := s.Objective == space.Maximize
	capNote := ""
	switch {
	case *capQ > 0:
		var limit float64
		if y, limit, err = fanova.CapQuantile(y, *capQ, maximize); err != nil {
			return err
		}
		capNote = fmt.Sprintf("values capped at %.6g (best %.0f%%)", limit, 100**capQ)
	case *capV != "":
		if y, err = fanova.Cap(y, capValue, maximize); err != nil {
			return err
		}
		capNote = fmt.Sprintf("values capped at %.6g", capValue)
	}

	f, err := forest.Fit(x, y, forest.Options{Trees: *trees, Seed: *seed, Levels: s.Levels()})
	if err != nil {
		return err
	}
	// A conditional parameter's "off" state weighs as much as it does under
	// uniform sampling of the space (see the package doc of explain/fanova).
	mass, err := fanova.InactiveMass(s)
	if err != nil {
		return err
	}
	e, err := fanova.New(f, fanova.Options{InactiveMass: mass})
	if err != nil {
		return err
	}
	dec, err := e.Decompose(*pairs)
	if err != nil {
		return err
	}
	im, err := dec.Importance(s.Names())
	if err != nil {
		return err
	}
	if im.TreesUsed == 0 {
		fmt.Fprintln(env.stderr, "xbo explain importance: warning: the forest predicts a constant (all values equal after capping?); every fraction is 0")
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(im)
	}
	if err := printImportance(env.stdout, im, tab, *trees, capNote); err != nil {
		return err
	}
	if mass != nil {
		_, err = fmt.Fprintln(env.stdout, "\nnote: a conditional parameter's \"off\" state is weighted by how often it is off in the space;\nread its fraction together with its parent's (see go doc xbo/explain/fanova).")
	}
	return err
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

func printImportance(w io.Writer, im *fanova.Importance, tab *trials.Table, trees int, capNote string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "fANOVA importance: %d trials", tab.Len())
	if tab.Skipped > 0 {
		fmt.Fprintf(&b, " (%d skipped)", tab.Skipped)
	}
	fmt.Fprintf(&b, ", random forest of %d trees (%d with variance), total variance %.4g", trees, im.TreesUsed, im.TotalVariance)
	if capNote != "" {
		fmt.Fprintf(&b, ", %s", capNote)
	}
	b.WriteString("\nfraction of variance explained, mean ± std across trees\n\n")
	pairName := func(key string) string { return strings.Replace(key, ",", " × ", 1) }
	width := len("all main effects")
	for n := range im.Main {
		width = max(width, utf8.RuneCountInString(n))
	}
	for n := range im.Pairs {
		width = max(width, utf8.RuneCountInString(pairName(n)))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
	row := func(rank int, name string, e fanova.Effect) {
		fmt.Fprintf(&b, "%4d  %s  %7.1f%%  ± %5.1f%%\n", rank, pad(name), 100*e.Fraction, 100*e.Std)
	}
	fmt.Fprintf(&b, "%4s  %s  %8s  %10s\n", "rank", pad("parameter"), "fraction", "± std")
	total := 0.0
	for i, r := range im.RankedMain() {
		row(i+1, r.Name, r.Effect)
		total += r.Fraction
	}
	fmt.Fprintf(&b, "      %s  %7.1f%%\n", pad("all main effects"), 100*total)
	if im.Pairs != nil {
		fmt.Fprintf(&b, "\n%4s  %s  %8s  %10s\n", "rank", pad("pair"), "fraction", "± std")
		pt := 0.0
		for i, r := range im.RankedPairs() {
			row(i+1, pairName(r.Name), r.Effect)
			pt += r.Fraction
		}
		fmt.Fprintf(&b, "      %s  %7.1f%%\n", pad("all pairs"), 100*pt)
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return errors.Join(errors.New("writing the table"), err)
	}
	return nil
}
