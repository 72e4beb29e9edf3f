// Package importer reads the trial histories of other tuning tools so that
// xbo can explain runs it did not make (DESIGN.md, user 3): Optuna storages
// (the SQLite RDB file, read directly with SQL, and the JSON-lines journal
// file), SMAC3 run directories (runhistory.json in its v1 and v2 shapes with
// configspace.json), and generic CSV or JSON trial tables with a space file.
//
// Every importer produces a Run: an xbo search space and the trials as
// natural values (space package conventions: a categorical's level index, NaN
// for an inactive parameter). The rule throughout is "carry over faithfully,
// never drop silently":
//
//   - failed, pruned, running and waiting trials are kept with their state
//     (they are written without a value, which every xbo command reads as
//     "no usable result");
//   - values outside the declared domain (Optuna lets enqueued trials leave
//     it; dynamic search spaces change it between trials) widen the domain;
//   - what xbo's space cannot express (a step that does not divide the
//     range, a step on a log scale, steps that differ between trials, normal priors,
//     conditions other than "parent takes one of these values", a trial whose
//     parameters fit no consistent space) is named in Run.Warnings, which the
//     CLI prints.
//
// A table can also be read without holding its rows (OpenTable): once for
// its space and once more row by row, for imports into a store or a trials
// CSV, whose memory then does not grow with the table.
//
// Optuna stores no conditions: a parameter that a trial did not suggest is
// simply absent. The importer infers the condition from the data: the
// parameter is active exactly when some categorical (or integer) parameter
// takes one of the values observed with it, and never with the values seen
// without it (see inferCondition). The inference is reported as a warning so
// the user can check it.
package importer

import "xbo/history"

// Run is an imported history and the format it was read from. Trials keep
// the source's states (failed, pruned, running and waiting trials too, a
// waiting trial as history.Pending), numbers and origins (as the trials'
// acquisition); Warnings name everything that could not be carried over
// exactly.
type Run struct {
	Format string // "optuna-rdb", "optuna-journal", "smac3-v1", "smac3-v2", "csv", "json"
	*history.History
	// StudyAttrs are the source study's own attributes (Optuna's study
	// user attributes); nil when it has none.
	StudyAttrs map[string]any
}
