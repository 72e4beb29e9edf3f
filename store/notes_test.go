package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"xbo/store"
)

// TestNotes: a study's and a trial's note are stored, read back by every
// read, cleared by "", bounded and refused with NUL, and a trial's note
// leaves its version (and so the study's fingerprint) as it was.
func TestNotes(t *testing.T) {
	backends(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		mkStudy(t, s, "noted")
		tr := ask(t, s, "noted", "w", t0, 0)
		before, err := s.Study(ctx, "noted")
		if err != nil {
			t.Fatal(err)
		}

		note := "line one\n<b>second</b> line: ünïcode \t"
		st, err := s.SetStudyNote(ctx, "noted", note)
		if err != nil {
			t.Fatal(err)
		}
		if st.Note != note {
			t.Errorf("SetStudyNote returned note %q, want %q", st.Note, note)
		}
		if got, _ := s.Study(ctx, "noted"); got.Note != note {
			t.Errorf("Study: note %q, want %q", got.Note, note)
		}
		list, err := s.Studies(ctx)
		if err != nil || len(list) != 1 || list[0].Note != note {
			t.Errorf("Studies: %+v, %v; want the note %q", list, err, note)
		}

		got, err := s.SetTrialNote(ctx, "noted", tr.Number, "diverged")
		if err != nil {
			t.Fatal(err)
		}
		if got.Note != "diverged" || got.Version != tr.Version || got.State != store.Running {
			t.Errorf("SetTrialNote: note %q version %d state %s; want diverged, version %d, running", got.Note, got.Version, got.State, tr.Version)
		}
		if read, _ := s.Trial(ctx, "noted", tr.Number); read.Note != "diverged" {
			t.Errorf("Trial: note %q, want diverged", read.Note)
		}
		trials, _, err := s.Trials(ctx, "noted", store.TrialQuery{})
		if err != nil || len(trials) != 1 || trials[0].Note != "diverged" {
			t.Errorf("Trials: %+v, %v; want one trial noted diverged", trials, err)
		}
		// The history every explanation and the report read carries them.
		h, err := store.LoadHistory(ctx, s, "noted")
		if err != nil || h.Note != note || len(h.Trials) != 1 || h.Trials[0].Note != "diverged" {
			t.Errorf("LoadHistory: %+v, %v; want the study's and the trial's notes", h, err)
		}
		after, _ := s.Study(ctx, "noted")
		if after.Fingerprint != before.Fingerprint {
			t.Errorf("notes changed the fingerprint from %s to %s", before.Fingerprint, after.Fingerprint)
		}

		// A finished trial's note can still change; "" clears it.
		if _, _, err := s.Tell(ctx, "noted", tr.Number, store.Result{State: store.Complete, Value: 1, Now: t0}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.SetTrialNote(ctx, "noted", tr.Number, ""); err != nil || got.Note != "" || got.State != store.Complete {
			t.Errorf("clearing a complete trial's note: %+v, %v", got, err)
		}
		if st, err := s.SetStudyNote(ctx, "noted", ""); err != nil || st.Note != "" {
			t.Errorf("clearing the study note: %+v, %v", st, err)
		}

		long := strings.Repeat("é", store.MaxNoteLength)
		if _, err := s.SetStudyNote(ctx, "noted", long); err != nil {
			t.Errorf("a note of %d characters (%d bytes) refused: %v", store.MaxNoteLength, len(long), err)
		}
		for name, bad := range map[string]string{
			"too long": long + "x",
			"NUL":      "a\x00b",
			"not UTF8": "\xff",
		} {
			if _, err := s.SetStudyNote(ctx, "noted", bad); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("study note %s: %v, want ErrInvalid", name, err)
			}
			if _, err := s.SetTrialNote(ctx, "noted", tr.Number, bad); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("trial note %s: %v, want ErrInvalid", name, err)
			}
		}
		if got, _ := s.Study(ctx, "noted"); got.Note != long {
			t.Errorf("a refused note replaced the stored one")
		}
		if _, err := s.SetStudyNote(ctx, "absent", "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("note of an absent study: %v, want ErrNotFound", err)
		}
		if _, err := s.SetTrialNote(ctx, "noted", 99, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("note of an absent trial: %v, want ErrNotFound", err)
		}
	})
}
