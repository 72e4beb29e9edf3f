package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"xbo/history"
	"xbo/space"
)

// LoadHistory reads a study and all its trials as a history, the form every
// explanation reads. The study and its trials are read in two statements, so
// a change committed between them may be seen partly; callers that cache
// derived results key them on the history's fingerprint, not on the study's.
func LoadHistory(ctx context.Context, st Store, name string) (*history.History, error) {
	if st == nil {
		return nil, fmt.Errorf("store: no store")
	}
	s, err := st.Study(ctx, name)
	if err != nil {
		return nil, err
	}
	trials, _, err := st.Trials(ctx, name, TrialQuery{})
	if err != nil {
		return nil, err
	}
	return ToHistory(s, trials)
}

// ToHistory converts a study and its trials (any order) into a history:
// parameters decoded against the study's space, values in the objective's
// own units, and complete trials ranked by the version their completion was
// committed with, the order the optimizer learnt them in.
func ToHistory(s *Study, trials []Trial) (*history.History, error) {
	if s == nil {
		return nil, fmt.Errorf("store: no study")
	}
	sp, err := space.Parse(s.Space)
	if err != nil {
		return nil, fmt.Errorf("store: stored space of %q: %w", s.Name, err)
	}
	h := &history.History{Name: s.Name, Source: "study " + s.Name, Space: sp, Optimizer: s.Optimizer,
		StudyVersion: s.Version, Note: s.Note, Trials: make([]history.Trial, 0, len(trials))}
	version := make(map[int64]int64, len(trials))
	for _, t := range trials {
		vals, err := sp.FromMap(t.Params)
		if err != nil {
			return nil, fmt.Errorf("store: study %q, trial %d: %w", s.Name, t.Number, err)
		}
		ht := history.Trial{Number: t.Number, State: history.State(t.State), Params: vals, Value: math.NaN(),
			UserAttrs: t.UserAttrs, Acquisition: t.Acquisition, Worker: t.Worker, FailReason: t.FailReason, Note: t.Note,
			Meta: t.Meta, Created: t.CreatedAt, Started: deref(t.StartedAt), Finished: deref(t.FinishedAt)}
		if t.Value != nil {
			ht.Value = *t.Value
		}
		ht.Values, ht.Constraints = t.Values, t.Constraints
		ht.Intermediate = t.Curve()
		version[t.Number] = t.Version
		h.Trials = append(h.Trials, ht)
	}
	slices.SortFunc(h.Trials, func(a, b history.Trial) int { return cmp.Compare(a.Number, b.Number) })
	h.CompletionOrder(func(t *history.Trial) int64 { return version[t.Number] })
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("store: study %q: %w", s.Name, err)
	}
	return h, nil
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// Curve is the trial's intermediate values in the history's form (nil when
// it reported none).
func (t *Trial) Curve() []history.Intermediate {
	if len(t.Intermediate) == 0 {
		return nil
	}
	out := make([]history.Intermediate, len(t.Intermediate))
	for i, iv := range t.Intermediate {
		out[i] = history.Intermediate{Step: iv.Step, Value: iv.Value}
	}
	return out
}
