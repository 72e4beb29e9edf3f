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

	"xbo/explain"
	"xbo/explain/pdp"
	"xbo/history"
	"xbo/internal/atomicfile"
	"xbo/space"
	"xbo/store"
	"xbo/trials"
)

// The explain commands are adapters over the explanation engine (package
// explain): they read a history (a trials file with its space, or a study
// of the service's store), fill the engine's request from their flags, and
// print the engine's result, so the numbers are the API's and the report's.

// historyFlags are the input flags of every explain command.
type historyFlags struct {
	command                           string
	data, spacePath, study, db, dataN string
	// objective is --objective: which objective of a study with several.
	objective string
	asJSON    bool
	svg       string
	// budget is --budget, for the commands that register it.
	budget *int64
	// curves: the command reads every trial's intermediate values, pruned
	// trials' too, so the note on trials without a final value is not said.
	curves bool
}

// registerBudget adds --budget: explain the values at a budget (a step of
// the intermediate values) instead of the final ones.
func (f *historyFlags) registerBudget(fs *flag.FlagSet) {
	fs.Func("budget", "explain each trial's value at this budget (a step of its intermediate values: the value at the largest step ≤ it, "+
		"for the complete and pruned trials that reported at a step ≥ it) instead of its final value", func(text string) error {
		b, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil || b < 0 {
			return fmt.Errorf("%q is not a step (an integer ≥ 0)", text)
		}
		f.budget = &b
		return nil
	})
}

// shown is the history the text and SVG outputs mark trials from (rugs, the
// best trial): the study at the budget when one was asked for, as the
// engine explained it.
func (f *historyFlags) shown(h *history.History) *history.History {
	if f.budget == nil {
		return h
	}
	if v, err := h.AtBudget(*f.budget); err == nil {
		return v
	}
	return h
}

// register adds the input flags, and --json and --svg when the command
// prints an explanation (withOutput) and draws one (svg).
func (f *historyFlags) register(fs *flag.FlagSet, dataName string, withOutput, svg bool) {
	f.command, f.dataN = fs.Name(), dataName
	fs.StringVar(&f.data, dataName, "", "trials CSV: one column per parameter (empty cell = inactive), then value, acquisition, state")
	fs.StringVar(&f.spacePath, "space", "", "search space file (JSON or YAML) of --"+dataName)
	fs.StringVar(&f.study, "study", "", "explain this study of the store instead of --"+dataName+"/--space")
	fs.StringVar(&f.db, "db", "xbo.db", "with --study: SQLite file, or postgres://... for PostgreSQL")
	fs.StringVar(&f.objective, "objective", "", "with several objectives: the one to explain, by name or index (default: the first)")
	if withOutput {
		fs.BoolVar(&f.asJSON, "json", false, "print the explanation as JSON (the same document the API serves)")
	}
	if svg {
		fs.StringVar(&f.svg, "svg", "", "also write an SVG plot to this file")
	}
}

// load reads the history. Warnings (columns kept as attributes, trials
// without a usable value) go to stderr, never silently.
func (f *historyFlags) load(ctx context.Context, env *cliEnv) (*history.History, error) {
	var h *history.History
	switch {
	case f.study != "" && (f.data != "" || f.spacePath != ""):
		return nil, usagef("--study reads the store; drop --%s and --space", f.dataN)
	case f.study != "":
		st, err := store.OpenExisting(ctx, f.db)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.db, err)
		}
		defer st.Close()
		if h, err = store.LoadHistory(ctx, st, f.study); err != nil {
			return nil, fmt.Errorf("%s: %w", f.db, err)
		}
	case f.data == "" || f.spacePath == "":
		return nil, usagef("give --%s and --space, or --study (with --db)", f.dataN)
	default:
		sp, err := space.Load(f.spacePath)
		if err != nil {
			return nil, err
		}
		if h, err = trials.ReadFile(f.data, sp); err != nil {
			return nil, err
		}
	}
	for _, w := range h.Warnings {
		fmt.Fprintf(env.stderr, "xbo %s: warning: %s\n", f.command, w)
	}
	if f.objective != "" {
		one, err := explain.Objective(h, f.objective)
		if err != nil {
			return nil, usagef("--objective: %v", err)
		}
		h = one
	}
	if n := len(h.Trials) - len(h.Usable()); n > 0 && f.budget == nil && !f.curves {
		fmt.Fprintf(env.stderr, "xbo %s: note: %d trial(s) without a usable value (failed, pruned, pending or empty) are not modelled\n", f.command, n)
	}
	return h, nil
}

// surrogateFlags choose the model of the PDP and Shapley families.
type surrogateFlags struct {
	kind, kernel, outliers string
	trees                  int
	seed                   uint64
}

func (s *surrogateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.kind, "surrogate", explain.SurrogateGP, "surrogate model: gp or forest")
	fs.StringVar(&s.kernel, "kernel", "", "GP kernel: matern52 (default), matern32 or se")
	fs.IntVar(&s.trees, "trees", 0, "trees of the forest surrogate (default 30)")
	fs.Uint64Var(&s.seed, "seed", 1, "seed of the surrogate's fit")
	fs.StringVar(&s.outliers, "outliers", explain.OutliersExclude, "exclude: leave out values far worse than the other trials predict (failed or diverged runs); keep: fit every trial")
}

func (s *surrogateFlags) spec() explain.Surrogate {
	return explain.Surrogate{Kind: s.kind, Kernel: s.kernel, Trees: s.trees, Seed: s.seed, Outliers: s.outliers}
}

// explainEngine is the CLI's engine: one computation at a time.
func explainEngine() (*explain.Engine, error) {
	return explain.New(explain.Config{Concurrency: 1, Queue: 1})
}

// compute runs one explanation with a progress bar; an invalid request is a
// usage error (exit status 2).
func compute[T any](ctx context.Context, env *cliEnv, desc string, f func(ctx context.Context, e *explain.Engine) (T, error)) (T, error) {
	var zero T
	e, err := explainEngine()
	if err != nil {
		return zero, err
	}
	bar := newProgress(env, desc)
	ctx = explain.WithProgress(ctx, func(s explain.Status) {
		bar.describe(desc + ": " + s.Step)
		if s.Total > 0 {
			bar.set(s.Done, s.Total)
		}
	})
	v, err := f(ctx, e)
	bar.finish()
	return v, explainUsage(err)
}

// explainUsage makes an invalid explanation request a usage error (exit
// status 2).
func explainUsage(err error) error {
	if errors.Is(err, explain.ErrInvalid) && !errors.Is(err, history.ErrTooFew) && !errors.Is(err, history.ErrBadTrial) {
		return usageError{err}
	}
	return err
}

// aboutLine says what an explanation rests on, for the text outputs.
func aboutLine(a *explain.About) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d usable trials, %s", a.Trials, a.Units)
	if bi := a.Budget; bi != nil {
		fmt.Fprintf(&b, "; %s", budgetLine(bi))
	}
	if s := a.Surrogate; s != nil {
		kind := "random forest"
		if s.Kind == explain.SurrogateGP {
			kind = "GP (" + s.Kernel + ")"
		}
		fmt.Fprintf(&b, "; surrogate %s", kind)
		if s.Note != "" {
			fmt.Fprintf(&b, " (%s)", s.Note)
		}
	}
	if bias := a.Bias; bias != nil {
		fmt.Fprintf(&b, "; sampling bias %s (MMD %.2g× a uniform sample's)", bias.Level, bias.Ratio)
	}
	b.WriteString(checkLines(a))
	return b.String()
}

// checkLines are the model check's status and, when it is not ok, its
// reading, then the sampling-bias warning, for the text outputs.
func checkLines(a *explain.About) string {
	var b strings.Builder
	if c := a.ModelCheck; c != nil {
		fmt.Fprintf(&b, "\nmodel check: %s", c.Status)
		if c.Status != explain.CheckOK {
			fmt.Fprintf(&b, ": %s", c.Reading)
		} else {
			fmt.Fprintf(&b, " (%d of %d trials in their held-out 95%% interval)", c.Trials-c.Misses, c.Trials)
		}
	}
	if bias := a.Bias; bias != nil && bias.Warning != "" {
		fmt.Fprintf(&b, "\nwarning: %s", bias.Warning)
	}
	return b.String()
}

// extrapolationLine names the grid values where a curve rests on the
// model's extrapolation, with the reading (empty when there are none).
func extrapolationLine(e *explain.Extrapolation, grid []float64, labels []any) string {
	if e == nil || len(e.Beyond) == 0 {
		return ""
	}
	at := make([]string, len(e.Beyond))
	for k, g := range e.Beyond {
		at[k] = gridLabel(grid, labels, g)
	}
	return fmt.Sprintf("extrapolation at %s: %s\n", strings.Join(at, ", "), e.Reading)
}

// budgetLine says at which budget an explanation was computed and from
// which trials.
func budgetLine(bi *explain.BudgetInfo) string {
	return fmt.Sprintf("values at budget %d: %d trials (%d of them pruned; %d finished trials left out), %s",
		bi.Step, bi.Trials, bi.Pruned, bi.LeftOut, bi.Rule)
}

// rugAndBest lists the evaluated values of parameter p and the best trial's.
func rugAndBest(h *history.History, p int) ([]float64, *float64) {
	var rug []float64
	for _, i := range h.Usable() {
		rug = append(rug, h.Trials[i].Params[p])
	}
	b, ok := h.Best()
	if !ok {
		return rug, nil
	}
	v := h.Trials[b].Params[p]
	return rug, &v
}

// panelOf turns a PDP into a plot panel with the evaluated values as a rug.
func panelOf(h *history.History, r *pdp.Result, title string) (pdp.Panel, error) {
	p, ok := h.Space.Index(r.Param)
	if !ok {
		return pdp.Panel{}, fmt.Errorf("unknown parameter %q", r.Param)
	}
	panel, err := pdp.PanelOf(r, title)
	if err != nil {
		return pdp.Panel{}, err
	}
	panel.Scale = h.Space.Params[p].ToUnit
	panel.Rug, panel.Best = rugAndBest(h, p)
	return panel, nil
}

// writeFile writes a file through a temporary file in the same directory,
// renamed into place only when it is complete: a failure or a kill never
// leaves a truncated file that looks whole.
func writeFile(path string, write func(io.Writer) error) error {
	return atomicfile.Write(path, write)
}

// writeOut writes to the file path (atomically, see writeFile), or to
// stdout when path is empty.
func writeOut(env *cliEnv, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(env.stdout)
	}
	return writeFile(path, write)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// gridLabel shows grid value i: a categorical's choice (labels, typed) in
// its text form, a number otherwise.
func gridLabel(grid []float64, labels []any, i int) string {
	if labels != nil && i < len(labels) {
		return space.ChoiceLabel(labels[i])
	}
	return strconv.FormatFloat(grid[i], 'g', 6, 64)
}

func writeCurveTable(w io.Writer, grid []float64, labels []any, mean, sd, lower, upper []float64) error {
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

// textWriter keeps the first write error so text output can be written
// without checking every line.
type textWriter struct {
	w   io.Writer
	err error
}

func (e *textWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *textWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }

// formatValue shows a natural value briefly: floats to six significant
// digits, "(inactive)" for a switched-off parameter.
func formatValue(s *space.Space, j int, v float64) string {
	switch {
	case math.IsNaN(v):
		return "(inactive)"
	case s.Params[j].Type == space.Float:
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return s.Format(j, v)
}
