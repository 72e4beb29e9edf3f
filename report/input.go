package report

import (
	"context"
	"errors"
	"fmt"
	"math"

	"xbo/importer"
	"xbo/space"
	"xbo/store"
	"xbo/trials"
)

// FromTable builds the input from a trials CSV already read against its space.
func FromTable(t *trials.Table, source string) (*Input, error) {
	if t == nil || t.Space == nil {
		return nil, errors.New("report: no trials table")
	}
	in := &Input{Space: t.Space, Rows: t.Rows, Values: t.Values, Skipped: t.Skipped, Source: source}
	if t.Skipped > 0 {
		in.States = map[string]int{"usable": t.Len(), "skipped (no usable value)": t.Skipped}
	}
	return in, nil
}

// FromRun builds the input from an imported run: complete trials with a
// finite value in trial-number order; every other state is counted.
func FromRun(r *importer.Run) (*Input, error) {
	if r == nil || r.Space == nil {
		return nil, errors.New("report: no imported run")
	}
	in := &Input{Space: r.Space, Source: r.Format + " " + r.Source, States: map[string]int{}}
	if r.Study != "" {
		in.Source += " (study " + r.Study + ")"
	}
	for _, t := range r.Trials {
		in.States[string(t.State)]++
		if t.State != importer.Complete || math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
			in.Skipped++
			continue
		}
		in.Rows = append(in.Rows, t.Params)
		in.Values = append(in.Values, t.Value)
	}
	return in, nil
}

// FromStore reads a study of the service's store: complete trials with a
// value, in trial-number order; every other state is counted.
func FromStore(ctx context.Context, st store.Store, study string) (*Input, error) {
	if st == nil {
		return nil, errors.New("report: no store")
	}
	s, err := st.Study(ctx, study)
	if err != nil {
		return nil, fmt.Errorf("report: study %q: %w", study, err)
	}
	sp, err := space.Parse(s.Space)
	if err != nil {
		return nil, fmt.Errorf("report: study %q: stored space: %w", study, err)
	}
	list, _, err := st.Trials(ctx, study, store.TrialQuery{})
	if err != nil {
		return nil, fmt.Errorf("report: study %q: trials: %w", study, err)
	}
	in := &Input{Space: sp, Source: "study " + study, States: map[string]int{}}
	for _, t := range list {
		in.States[string(t.State)]++
		if t.State != store.Complete || t.Value == nil || math.IsNaN(*t.Value) || math.IsInf(*t.Value, 0) {
			in.Skipped++
			continue
		}
		vals, err := sp.FromMap(t.Params)
		if err != nil {
			return nil, fmt.Errorf("report: study %q: trial %d: %w", study, t.Number, err)
		}
		in.Rows = append(in.Rows, vals)
		in.Values = append(in.Values, *t.Value)
	}
	return in, nil
}
