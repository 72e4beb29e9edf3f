package importer

import (
	"errors"
	"fmt"
	"iter"
	"slices"

	"xbo/history"
	"xbo/space"
)

// TableTrials is a table import that does not hold the table's trials: a
// first read of the file gives the space (the declared one, widened to the
// values the rows hold), and Trials reads the file again, handing on each
// row as it is made. A table whose trial numbers do not ascend is the
// exception: its rows must be sorted, so it is imported whole (ImportTable)
// and Trials hands on the trials it holds; InMemory says so.
type TableTrials struct {
	// Run has the format, the source and the space; no trials. Its
	// Warnings are those of the first read until Trials has been read to
	// its end, and then all of them.
	*Run
	tb       *table
	base     int // the warnings of the first read
	inMemory *Run
}

// errFileChanged says a table's rows changed between its two reads.
var errFileChanged = errors.New("the file changed while it was imported (its trial numbers no longer ascend); import it again")

// OpenTable reads a trial table (as ImportTable reads it) once for its
// space and its warnings, holding per parameter what widens its domain,
// but no rows; Trials then reads the rows.
func OpenTable(path string, s *space.Space, opts TableOptions) (*TableTrials, error) {
	tb, err := newTable(path, s, opts)
	if err != nil {
		return nil, err
	}
	b := tb.b
	ascending, seen, last := true, false, 0
	var widenErr error
	err = tb.read(b.warnf, func(rt rawTrial) error {
		ascending = ascending && (!seen || rt.number > last)
		seen, last = true, rt.number
		if widenErr == nil {
			// Kept until the file has been read: a row the reader refuses
			// is reported first, as ImportTable does.
			widenErr = b.observe(rt)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !ascending {
		run, err := ImportTable(path, s, opts)
		if err != nil {
			return nil, err
		}
		hollow := *run
		hollow.History = &history.History{Name: run.Name, Source: run.Source, Space: run.Space, Warnings: run.Warnings}
		return &TableTrials{Run: &hollow, inMemory: run}, nil
	}
	if len(b.params) == 0 {
		return nil, fmt.Errorf("%s: no parameters found (no trial suggested any)", path)
	}
	if widenErr != nil {
		return nil, fmt.Errorf("%s: %w", path, widenErr)
	}
	b.widened()
	run, err := b.newRun()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	run.Warnings = slices.Clone(b.warnings)
	return &TableTrials{Run: run, tb: tb, base: len(b.warnings)}, nil
}

// InMemory reports whether the table's trials are held (their numbers do
// not ascend in the file, so they were sorted).
func (t *TableTrials) InMemory() bool { return t.inMemory != nil }

// Trials yields the table's trials in number order, as ImportTable's Run
// holds them; an error ends the sequence. Each use reads the file again
// and, once read to its end, sets Warnings to all of the import's.
func (t *TableTrials) Trials() iter.Seq2[history.Trial, error] {
	if t.inMemory != nil {
		return Held(t.inMemory)
	}
	return func(yield func(history.Trial, error) bool) {
		b := t.tb.b
		b.warnings = b.warnings[:t.base]
		b.rows = rowTally{}
		stopped := errors.New("stopped")
		seen, last := false, 0
		err := t.tb.read(func(string, ...any) {}, func(rt rawTrial) error {
			if seen && rt.number <= last {
				return errFileChanged
			}
			seen, last = true, rt.number
			tr, keep, err := b.row(t.Space, rt)
			if err != nil {
				return err
			}
			if !keep {
				return nil
			}
			// The order of completion is the trials' order, as build sets
			// it for a source that records no finishing times.
			tr.Completion = -1
			if tr.State == history.Complete {
				tr.Completion = b.rows.complete
				b.rows.complete++
			}
			if !yield(tr, nil) {
				return stopped
			}
			return nil
		})
		switch {
		case errors.Is(err, stopped):
			return
		case err != nil:
			yield(history.Trial{}, err) // read names the file
			return
		}
		b.rowWarnings()
		t.Warnings = slices.Clone(b.warnings)
	}
}
