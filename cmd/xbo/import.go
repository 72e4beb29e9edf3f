package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"math"
	"strings"
	"time"
	"xbo/history"

	"xbo/importer"
	"xbo/space"
	"xbo/store"
)

func init() {
	register(command{
		name:     "import",
		summary:  "import an Optuna, SMAC3 or CSV/JSON trial history for xbo explain",
		synopsis: importSynopsis,
		about:    importAbout,
		run:      runImport,
	})
}

const importSynopsis = `xbo import --optuna FILE.db [--study NAME] --out trials.csv --space-out space.json
  xbo import --optuna-journal FILE [--study NAME] --out trials.csv --space-out space.json
  xbo import --smac DIR [--all-budgets] [--seeds-apart] --out trials.csv --space-out space.json
  xbo import --csv FILE --space space.json [--value-column C[,C2...]] [--constraint-column C[,...]] --out trials.csv
  xbo import ... --into xbo.db [--name STUDY]      (load into the service's store)
  xbo import --optuna FILE.db --list                (list the studies)`

const importAbout = `Writes the trials CSV and space JSON that every xbo explain command reads.
Anything that cannot be carried over exactly is printed as a warning.
Studies with several objectives and constraints keep them: the space names
them, the CSV has a column per objective and per constraint.`

func runImport(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	optunaDB := fs.String("optuna", "", "Optuna RDB storage (SQLite file)")
	optunaJournal := fs.String("optuna-journal", "", "Optuna JournalStorage file")
	smacDir := fs.String("smac", "", "SMAC3 run directory (holding runhistory.json and configspace.json)")
	csvFile := fs.String("csv", "", "CSV trial table (needs --space)")
	jsonFile := fs.String("json", "", "JSON trial table: a list or JSON lines (needs --space)")
	spaceFile := fs.String("space", "", "space file for --csv/--json")
	study := fs.String("study", "", "Optuna study name (needed when the storage has several)")
	list := fs.Bool("list", false, "list the studies of an Optuna storage and exit")
	valueColumn := fs.String("value-column", "", "CSV/JSON table: the objective column, or one per objective of the space, comma-separated in its order (default: the space's objective names, value for one unnamed objective)")
	constraintColumn := fs.String("constraint-column", "", "CSV/JSON table: the constraint columns, comma-separated (default: the space's constraint names; for a space without constraints they declare them, named after the columns)")
	allBudgets := fs.Bool("all-budgets", false, "SMAC3: import every run as a trial of its own (by default a configuration's runs at lower budgets are its intermediate values, and it is pruned if it stopped below the highest budget)")
	seedsApart := fs.Bool("seeds-apart", false, "SMAC3: import each seed's run of a configuration as a trial of its own (by default a configuration's runs over several seeds are one trial, the mean of their values)")
	out := fs.String("out", "", "write the trials CSV here")
	spaceOut := fs.String("space-out", "", "write the space JSON here")
	into := fs.String("into", "", "load into a store: a SQLite file (e.g. xbo.db) or a postgres:// URL")
	pruner := fs.String("pruner", "", `for --into: the study's pruner as JSON, e.g. '{"type":"median"}' (Optuna's storages keep no pruner: it is code)`)
	name := fs.String("name", "", "study name in the store for --into (default: the source's study name, else its file name, for SMAC3 <output directory>-<run directory>; a taken default gets the first free suffix -2, -3, ...; a taken --name is an error)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	sources := 0
	for _, s := range []string{*optunaDB, *optunaJournal, *smacDir, *csvFile, *jsonFile} {
		if s != "" {
			sources++
		}
	}
	if sources != 1 {
		return usagef("give exactly one of --optuna, --optuna-journal, --smac, --csv, --json")
	}
	if *list {
		var infos []importer.StudyInfo
		var err error
		switch {
		case *optunaDB != "":
			infos, err = importer.ListOptunaStudies(*optunaDB)
		case *optunaJournal != "":
			infos, err = importer.ListOptunaJournalStudies(*optunaJournal)
		default:
			return usagef("--list works with --optuna and --optuna-journal")
		}
		if err != nil {
			return err
		}
		printStudies(env.stdout, infos)
		return nil
	}
	if *pruner != "" && *into == "" {
		return usagef("--pruner is for --into (a study in a store has a pruner; a trials CSV has none)")
	}
	if *out == "" && *spaceOut == "" && *into == "" {
		return usagef("nothing to write: give --out and --space-out, or --into")
	}
	if (*csvFile != "" || *jsonFile != "") && *spaceFile == "" {
		return usagef("a CSV or JSON table needs --space FILE")
	}
	if *spaceFile != "" && *csvFile == "" && *jsonFile == "" {
		return usagef("--space is for --csv and --json; the other sources carry their own space (write it with --space-out)")
	}
	if *study != "" && *optunaDB == "" && *optunaJournal == "" {
		return usagef("--study is for Optuna storages")
	}
	valueCols, consCols := columnList(*valueColumn), columnList(*constraintColumn)
	if (len(valueCols) > 0 || len(consCols) > 0) && *csvFile == "" && *jsonFile == "" {
		return usagef("--value-column and --constraint-column are for --csv and --json tables")
	}

	if *csvFile != "" || *jsonFile != "" {
		table := *csvFile
		if table == "" {
			table = *jsonFile
		}
		return importTable(ctx, table, *spaceFile, importer.TableOptions{ValueColumns: valueCols, ConstraintColumns: consCols},
			tableTarget{out: *out, spaceOut: *spaceOut, into: *into, name: *name, pruner: *pruner}, env)
	}
	var run *importer.Run
	var err error
	switch {
	case *optunaDB != "":
		run, err = importer.ImportOptuna(*optunaDB, *study)
	case *optunaJournal != "":
		run, err = importer.ImportOptunaJournal(*optunaJournal, *study)
	default:
		run, err = importer.ImportSMAC(*smacDir, importer.SMACOptions{AllBudgets: *allBudgets, SeedsApart: *seedsApart})
	}
	var choice *importer.StudyChoiceError
	if errors.As(err, &choice) {
		printStudies(env.stdout, choice.Studies)
		return usagef("the storage holds %d studies: choose one with --study", len(choice.Studies))
	}
	if err != nil {
		return err
	}
	for _, w := range run.Warnings {
		fmt.Fprintf(env.stderr, "warning: %s\n", w)
	}
	printRunSummary(env.stdout, run, len(run.Trials), run.Counts())
	if *out != "" || *spaceOut != "" {
		if err := importer.WriteFiles(run, *out, *spaceOut); err != nil {
			return err
		}
		if w := csvLossWarning(run); w != "" && *out != "" {
			fmt.Fprintf(env.stderr, "warning: %s\n", w)
		}
		for _, p := range []string{*out, *spaceOut} {
			if p != "" {
				fmt.Fprintf(env.stdout, "wrote %s\n", p)
			}
		}
	}
	if *into != "" {
		studyName := *name
		if studyName == "" {
			studyName = importDefaultName(run)
		}
		prJSON, err := importPruner(run, *pruner, env)
		if err != nil {
			return err
		}
		studyName, tally, err := loadIntoStore(ctx, *into, studyName, *name != "", prJSON, run, importer.Held(run), env)
		if err != nil {
			return err
		}
		printLoaded(env.stdout, *into, studyName, tally)
	}
	return nil
}

// columnList splits a comma-separated list of column names (nil when
// empty).
func columnList(text string) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	parts := strings.Split(text, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

func printStudies(w io.Writer, infos []importer.StudyInfo) {
	fmt.Fprintf(w, "%-30s %8s %10s\n", "study", "trials", "objectives")
	for _, s := range infos {
		fmt.Fprintf(w, "%-30s %8d %10d\n", s.Name, s.Trials, s.Objectives)
	}
}

// tableTarget is where a table import goes: --out, --space-out, --into
// with its --name and --pruner.
type tableTarget struct{ out, spaceOut, into, name, pruner string }

// importTable imports a CSV or JSON table without holding its rows: the
// file is read once for the space, and once more row by row for the
// trials CSV (--out) and again for the store (--into), each row written as
// it is read (importer.OpenTable). What the first read cannot know (the
// counts, the warnings about rows) is printed after the writing, in the
// order an import that holds its trials prints it.
func importTable(ctx context.Context, path, spaceFile string, opts importer.TableOptions, to tableTarget, env *cliEnv) error {
	sp, err := space.Load(spaceFile)
	if err != nil {
		return err
	}
	tt, err := importer.OpenTable(path, sp, opts)
	if err != nil {
		return err
	}
	run := tt.Run
	warnings := func() {
		for _, w := range run.Warnings {
			fmt.Fprintf(env.stderr, "warning: %s\n", w)
		}
	}
	var prJSON json.RawMessage
	if to.into != "" {
		if prJSON, err = importPruner(run, to.pruner, env); err != nil {
			return err
		}
	}
	n, counts := 0, map[history.State]int{}
	var loss csvLoss
	switch {
	case to.out != "":
		written := func(yield func(history.Trial, error) bool) {
			n, counts, loss = 0, map[history.State]int{}, csvLoss{}
			for t, err := range tt.Trials() {
				if err == nil {
					n++
					counts[t.State]++
					loss.see(&t)
				}
				if !yield(t, err) || err != nil {
					return
				}
			}
		}
		err = importer.WriteFilesFrom(run, written, to.out, to.spaceOut)
	case to.spaceOut != "":
		err = importer.WriteFiles(run, "", to.spaceOut)
	}
	if err != nil {
		warnings()
		return err
	}
	studyName := to.name
	var tally importTally
	if to.into != "" {
		if studyName == "" {
			studyName = importDefaultName(run)
		}
		studyName, tally, err = loadIntoStore(ctx, to.into, studyName, to.name != "", prJSON, run, tt.Trials(), env)
		if err != nil {
			warnings()
			return err
		}
		n, counts = tally.trials, tally.states
	}
	warnings()
	printRunSummary(env.stdout, run, n, counts)
	if w := loss.warning(); w != "" && to.out != "" {
		fmt.Fprintf(env.stderr, "warning: %s\n", w)
	}
	for _, p := range []string{to.out, to.spaceOut} {
		if p != "" {
			fmt.Fprintf(env.stdout, "wrote %s\n", p)
		}
	}
	if to.into != "" {
		if to.pruner == "" && counts[history.Pruned] > 0 {
			warnNoPruner(env)
		}
		printLoaded(env.stdout, to.into, studyName, tally)
	}
	return nil
}

// printRunSummary says what an import read: n trials, counted by state.
func printRunSummary(w io.Writer, run *importer.Run, n int, counts map[history.State]int) {
	var parts []string
	for _, st := range history.States {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	what := run.Source
	if run.Name != "" {
		what += fmt.Sprintf(", study %q", run.Name)
	}
	fmt.Fprintf(w, "imported %d trials (%s) over %d parameters (%s; %s) from %s [%s]\n",
		n, strings.Join(parts, ", "), run.Space.Dim(), strings.Join(run.Space.Names(), ", "),
		objectivesText(run.Space), what, run.Format)
}

// objectivesText names a study's objectives with their directions, and its
// constraints: "minimize" for one unnamed objective, "error minimize, size
// maximize; constraints memory" for more.
func objectivesText(sp *space.Space) string {
	if len(sp.Objectives) == 0 && len(sp.Constraints) == 0 {
		return string(sp.Directions()[0])
	}
	names, dirs := sp.ObjectiveNames(), sp.Directions()
	parts := make([]string, len(names))
	for k := range names {
		parts[k] = names[k] + " " + string(dirs[k])
	}
	text := strings.Join(parts, ", ")
	if len(sp.Objectives) == 0 {
		text = string(dirs[0])
	}
	if len(sp.Constraints) > 0 {
		text += "; constraints " + strings.Join(sp.Constraints, ", ")
	}
	return text
}

// importTally counts what an import stored, by the source's state and by
// how the store records it.
type importTally struct {
	trials                 int
	states                 map[history.State]int
	pruned, failed, noCons int
}

// loadIntoStore creates a study in the service's store and records every
// trial with its intermediate values: complete ones with their value,
// pruned ones as pruned (with their value, the last intermediate one), the
// others as failed with the source's state as the reason (a pending trial
// would be handed to workers). The trials are converted as the store reads
// them (store.ImportStudyFrom), so that no second copy of a history is
// held, and a table's rows need not be held at all (importer.OpenTable).
// One transaction: the store never holds half an import. It returns the
// study's name and what it stored.
func loadIntoStore(ctx context.Context, dsn, studyName string, chosen bool, pruner json.RawMessage, run *importer.Run, trials iter.Seq2[history.Trial, error], env *cliEnv) (string, importTally, error) {
	warn := func(w string) { fmt.Fprintf(env.stderr, "warning: %s\n", w) }
	if w := studyAttrsWarning(run); w != "" {
		warn(w)
	}
	var tally importTally
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return "", tally, err
	}
	defer st.Close()
	spaceJSON, err := importer.SpaceJSON(run.Space)
	if err != nil {
		return "", tally, err
	}
	converted := func(yield func(store.ImportedTrial, error) bool) {
		// Counted afresh on every read: a taken name reads the trials
		// again under the next one.
		tally = importTally{states: map[history.State]int{}}
		for t, err := range trials {
			if err != nil {
				yield(store.ImportedTrial{}, err)
				return
			}
			if !yield(importedTrial(run, &t, warn, &tally), nil) {
				return
			}
		}
	}
	studyName, err = importStudy(ctx, st, store.NewStudy{Name: studyName, Direction: string(run.Space.Objective), Space: spaceJSON, Pruner: pruner, Now: time.Now()}, converted, chosen)
	if err != nil {
		return "", tally, err
	}
	return studyName, tally, nil
}

// importedTrial is trial t as the store records it, counted in tally.
func importedTrial(run *importer.Run, t *history.Trial, warn func(string), tally *importTally) store.ImportedTrial {
	tally.trials++
	tally.states[t.State]++
	it := store.ImportedTrial{Params: run.Space.ToMap(t.Params), UserAttrs: importedAttrs(run, t, warn),
		Created: t.Created, Started: t.Started, Finished: t.Finished}
	for _, iv := range t.Intermediate {
		it.Intermediate = append(it.Intermediate, store.Intermediate{Step: iv.Step, Value: iv.Value})
	}
	switch {
	case t.Usable() && len(run.Space.Constraints) > 0 && t.Constraints == nil:
		// The store takes a complete trial of a constrained study with
		// its constraint values only; one that has none cannot be best,
		// so it is kept as failed, its values in the reason.
		it.State = store.Failed
		it.Reason = fmt.Sprintf("imported from %s: complete without constraint values (%s %v)", run.Format, strings.Join(run.Space.ObjectiveNames(), ", "), run.ObjectiveValues(t))
		tally.noCons++
		tally.failed++
	case t.Usable():
		v := t.Value
		it.State, it.Value = store.Complete, &v
		it.Values, it.Constraints = t.Values, t.Constraints
	case t.State == history.Pruned:
		it.State = store.Pruned
		if !math.IsNaN(t.Value) && !math.IsInf(t.Value, 0) {
			v := t.Value
			it.Value = &v
		}
		tally.pruned++
	default:
		it.State = store.Failed
		it.Reason = fmt.Sprintf("imported from %s: %s", run.Format, t.State)
		if t.State == history.Complete && math.IsInf(t.Value, 0) {
			it.Reason = fmt.Sprintf("imported from %s: value %v", run.Format, t.Value)
		}
		tally.failed++
	}
	return it
}

// printLoaded says what an import stored.
func printLoaded(w io.Writer, dsn, studyName string, tally importTally) {
	fmt.Fprintf(w, "loaded %d trials into study %q of %s (%d pruned; %d recorded as failed: failed, running or waiting in the source)\n", tally.trials, studyName, dsn, tally.pruned, tally.failed)
	if tally.noCons > 0 {
		fmt.Fprintf(w, "%d of the failed ones are complete in the source without constraint values (the store records a constrained study's complete trials with them)\n", tally.noCons)
	}
}
