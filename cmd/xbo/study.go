package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"xbo/history"
	"xbo/opt"

	"xbo/server"
	"xbo/space"
	"xbo/store"
	"xbo/trials"
)

func init() {
	register(command{name: "study create", summary: "create a tuning study in the service's database", run: runStudyCreate})
	register(command{name: "study list", summary: "list studies with trial counts and best values", run: runStudyList})
	register(command{name: "study export", summary: "write a study's trials as the trials CSV (or JSON)", run: runStudyExport})
}

// The study commands work on the database directly (SQLite allows this while
// `xbo serve` runs on the same file; PostgreSQL always does), so they need
// no running server.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "xbo.db", "SQLite file, or postgres://... for PostgreSQL")
}

func runStudyCreate(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("study create", flag.ContinueOnError)
	db := dbFlag(fs)
	name := fs.String("name", "", "study name (required)")
	spacePath := fs.String("space", "", "search space file, JSON or YAML (required)")
	settings := optimizerFlags(fs)
	pruner := fs.String("pruner", "", `pruner as JSON, e.g. '{"type":"median","n_warmup_steps":5}' (types none, median, percentile, asha, hyperband, model; docs/api.md)`)
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *name == "" || *spacePath == "" {
		return usagef("--name and --space are required")
	}
	sp, err := space.Load(*spacePath)
	if err != nil {
		return err
	}
	spaceJSON, err := os.ReadFile(*spacePath)
	if err != nil {
		return err
	}
	optJSON, err := json.Marshal(settings())
	if err != nil {
		return err
	}
	ns, err := server.NewStudyRecord(*name, spaceJSON, optJSON, json.RawMessage(*pruner), time.Now())
	if err != nil {
		return usageError{err}
	}
	st, err := store.Open(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	created, err := st.CreateStudy(ctx, ns)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "created study %q (%s, %d parameters, optimizer %s, pruner %s)\n", created.Name, objectivesText(sp), sp.Dim(), created.Optimizer, created.Pruner)
	return nil
}

// optimizerFlags adds the flags that configure a new study's optimizer (xbo
// study create, xbo run) to fs; settings reads them once fs is parsed.
func optimizerFlags(fs *flag.FlagSet) (settings func() opt.Settings) {
	var cfg opt.Settings
	fs.StringVar(&cfg.Strategy, "strategy", "", "ei (default), lcb, pi, pvar, random, or BOBAX: bax, bobax, bobax-prob, eibax, bo-rs, a-bobax")
	fs.IntVar(&cfg.K, "k", 0, "BOBAX: EIG_PDP every k-th model-based proposal (default 2)")
	fs.Float64Var(&cfg.PDTolerance, "pd-tolerance", 0, "a-bobax: target mean PD band half-width, objective units (required for a-bobax)")
	fs.StringVar(&cfg.Surrogate, "surrogate", "", "gp (default) or forest")
	fs.StringVar(&cfg.Kernel, "kernel", "", "GP kernel of the optimizer: matern32 (default), matern52 or se")
	fs.StringVar(&cfg.LengthscalePrior, "lengthscale-prior", "", "prior on the optimizer's GP lengthscales: inverse-squared (default), dimension-scaled or none (maximum likelihood)")
	fs.Float64Var(&cfg.Tau, "tau", 0, "LCB exploration weight τ (default 1)")
	fs.StringVar(&cfg.SE, "se", "", "lcb: s is the sd of the latent function (latent, the default) or of a new observation, noise included (predictive: mlrMBO's convention)")
	fs.IntVar(&cfg.InitialSize, "initial", 0, "initial design size (default max(4·d, 5))")
	fs.StringVar(&cfg.InitialDesign, "design", "", "initial design: maximin (default), lhs, sobol, random")
	fs.StringVar(&cfg.TrustRegion, "trust-region", "", "confine proposals to a box around the incumbent: alternate (default for ei, lcb, pi, pvar on the gp: every other ask), always, none")
	fs.StringVar(&cfg.Liar, "liar", "", "value pending trials are conditioned on: believer (default: the model's mean), best, mean, worst")
	fs.Func("resource", `the study's resource as JSON, e.g. '{"name":"epochs","min":1,"max":81}': proposals then learn from the intermediate values of trials a pruner stopped (docs/api.md, "Pruners")`, func(v string) error {
		dec := json.NewDecoder(strings.NewReader(v))
		dec.DisallowUnknownFields()
		var r opt.Resource
		if err := dec.Decode(&r); err != nil {
			return fmt.Errorf("resource: %w", err)
		}
		cfg.Resource = &r
		return nil
	})
	seed := fs.Int64("seed", -1, "random seed (default: chosen at random and stored)")
	return func() opt.Settings {
		out := cfg
		if *seed >= 0 {
			s := uint64(*seed)
			out.Seed = &s
		}
		return out
	}
}

func runStudyList(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("study list", flag.ContinueOnError)
	db := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	st, err := store.OpenExisting(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	list, err := st.Studies(ctx)
	if err != nil {
		return err
	}
	// A study with several objectives has no one best trial: it shows its
	// Pareto-optimal trials instead.
	rows := make([]studyRow, len(list))
	for i, s := range list {
		rows[i].StudySummary = s
		sp, err := space.Parse(s.Space)
		if err != nil || !sp.MultiObjective() {
			continue
		}
		h, err := store.LoadHistory(ctx, st, s.Name)
		if err != nil {
			return err
		}
		front, err := paretoTrials(h)
		if err != nil {
			return err
		}
		rows[i].Best = nil
		rows[i].Objectives = h.Space.Objectives
		rows[i].BestTrials = front
		rows[i].sp = h.Space
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDIRECTION\tCOMPLETE\tPRUNED\tRUNNING\tPENDING\tFAILED\tEXPIRED\tBEST")
	for _, s := range rows {
		best, direction := "-", s.Direction
		switch {
		case s.sp != nil:
			best = fmt.Sprintf("%d Pareto-optimal (below)", len(s.BestTrials))
			direction = fmt.Sprintf("%d objectives", s.sp.NumObjectives())
		case s.Best != nil:
			best = fmt.Sprintf("%.6g", *s.Best)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Name, direction, s.Counts[store.Complete], s.Counts[store.Pruned],
			s.Counts[store.Running], s.Counts[store.Pending], s.Counts[store.Failed], s.Counts[store.Expired], best)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range rows {
		if s.sp != nil {
			fmt.Fprintf(env.stdout, "\n%s: %s\n", s.Name, objectivesText(s.sp))
			printFront(env.stdout, s.sp, s.BestTrials, maxFrontShown)
		}
	}
	return nil
}

// studyRow is a study of xbo study list: its summary and, with several
// objectives, its objectives and Pareto-optimal trials.
type studyRow struct {
	store.StudySummary
	Objectives []space.Objective `json:"objectives,omitempty"`
	BestTrials []frontTrial      `json:"best_trials,omitempty"`
	sp         *space.Space
}

// frontTrial is a Pareto-optimal trial as the CLI shows it.
type frontTrial struct {
	Number      int64          `json:"number"`
	Values      []float64      `json:"values"`
	Constraints []float64      `json:"constraints,omitempty"`
	Params      map[string]any `json:"params"`
}

// maxFrontShown bounds the Pareto-optimal trials a listing prints per
// study (the JSON has them all; xbo study export has every trial).
const maxFrontShown = 20

// paretoTrials returns a history's Pareto-optimal trials (history's front:
// complete, feasible, dominated by no other), in number order.
func paretoTrials(h *history.History) ([]frontTrial, error) {
	front, err := h.ParetoFront()
	if err != nil {
		return nil, err
	}
	out := make([]frontTrial, len(front))
	for r, i := range front {
		t := &h.Trials[i]
		out[r] = frontTrial{Number: t.Number, Values: h.ObjectiveValues(t), Constraints: t.Constraints, Params: h.Space.ToMap(t.Params)}
	}
	return out, nil
}

// printFront prints Pareto-optimal trials, one a line: number, each
// objective's value by name, the parameters; at most limit of them.
func printFront(w io.Writer, sp *space.Space, front []frontTrial, limit int) {
	if len(front) == 0 {
		fmt.Fprintln(w, "  no Pareto-optimal trial yet (none complete and feasible)")
		return
	}
	fmt.Fprintf(w, "  %d Pareto-optimal trial(s):\n", len(front))
	names := sp.ObjectiveNames()
	for r, t := range front {
		if r == limit {
			fmt.Fprintf(w, "  … and %d more (--json lists them all)\n", len(front)-limit)
			break
		}
		parts := make([]string, len(names))
		for k, name := range names {
			parts[k] = fmt.Sprintf("%s=%.6g", name, t.Values[k])
		}
		fmt.Fprintf(w, "  trial %d: %s  %s\n", t.Number, strings.Join(parts, " "), paramsText(t.Params))
	}
}

// paramsText writes parameters as name=value in name order.
func paramsText(params map[string]any) string {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%v", n, params[n])
	}
	return strings.Join(parts, " ")
}

func runStudyExport(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("study export", flag.ContinueOnError)
	db := dbFlag(fs)
	name := fs.String("name", "", "study name (or give it as the first argument)")
	_ = fs.Bool("csv", true, "write the trials CSV")
	asJSON := fs.Bool("json", false, "write every trial as JSON instead (all states, all fields)")
	failed := fs.Bool("failed", false, "CSV: include failed trials too (with an empty value)")
	out := fs.String("o", "", "output file (default stdout)")
	spaceOut := fs.String("space-out", "", "also write the study's space JSON here: with it the CSV reads back into xbo explain --data and xbo import --csv, choices with their types")
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		*name, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *name == "" {
		return usagef("which study? xbo study export NAME [--csv|--json]")
	}
	st, err := store.OpenExisting(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	if *spaceOut != "" {
		study, err := st.Study(ctx, *name)
		if err != nil {
			return err
		}
		var doc bytes.Buffer
		if err := json.Indent(&doc, study.Space, "", "  "); err != nil {
			return fmt.Errorf("stored space of %q: %w", *name, err)
		}
		doc.WriteByte('\n')
		if err := writeFile(*spaceOut, func(w io.Writer) error { _, err := w.Write(doc.Bytes()); return err }); err != nil {
			return err
		}
	}
	if *asJSON {
		study, err := st.Study(ctx, *name)
		if err != nil {
			return err
		}
		list, _, err := st.Trials(ctx, *name, store.TrialQuery{})
		if err != nil {
			return err
		}
		return writeOut(env, *out, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"study": study, "trials": list})
		})
	}
	h, err := store.LoadHistory(ctx, st, *name)
	if err != nil {
		return err
	}
	// Complete and pruned trials (a pruned one with its last intermediate
	// value and state "pruned"); failed ones on request.
	kept := h.Trials[:0:0]
	for _, t := range h.Trials {
		if t.State == history.Complete || t.State == history.Pruned || (*failed && t.State == history.Failed) {
			kept = append(kept, t)
		}
	}
	h.Trials = kept
	return writeOut(env, *out, func(w io.Writer) error { return trials.Write(w, h) })
}
