package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxNoteLength bounds a note, in characters: room for a paragraph or
// two of context, not a document store.
const MaxNoteLength = 10000

// CheckNote checks a note: valid UTF-8 of at most MaxNoteLength
// characters, without NUL (PostgreSQL's text refuses it, and a C reader
// would cut the note there). Line breaks and tabs are kept.
func CheckNote(note string) error {
	if !utf8.ValidString(note) {
		return fmt.Errorf("%w: a note is UTF-8 text", ErrInvalid)
	}
	if n := utf8.RuneCountInString(note); n > MaxNoteLength {
		return fmt.Errorf("%w: a note has at most %d characters, not %d", ErrInvalid, MaxNoteLength, n)
	}
	if i := strings.IndexByte(note, 0); i >= 0 {
		return fmt.Errorf("%w: a note contains a NUL character (byte %d)", ErrInvalid, i)
	}
	return nil
}

func (s *sqlStore) SetStudyNote(ctx context.Context, study, note string) (*Study, error) {
	if err := CheckNote(note); err != nil {
		return nil, fmt.Errorf("store: note of study %q: %w", study, err)
	}
	err := s.withTx(ctx, idempotentTx, func(q tx) error {
		n, err := q.exec(ctx, `UPDATE studies SET note = $2 WHERE name = $1`, study, note)
		if err == nil && n == 0 {
			err = fmt.Errorf("study %q: %w", study, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: note of study %q: %w", study, err)
	}
	// Read back as Study reports it (version and fingerprint from the trials).
	return s.Study(ctx, study)
}

func (s *sqlStore) SetTrialNote(ctx context.Context, study string, number int64, note string) (*Trial, error) {
	if err := CheckNote(note); err != nil {
		return nil, fmt.Errorf("store: note of trial %d of %q: %w", number, study, err)
	}
	var t Trial
	err := s.withTx(ctx, idempotentTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		t, err = scanTrial(q.queryRow(ctx, `UPDATE trials SET note = $3 WHERE study_id = $1 AND number = $2 RETURNING `+trialColumns,
			st.ID, number, note))
		if errors.Is(err, errNoRows) {
			return fmt.Errorf("trial %d of study %q: %w", number, study, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: note of trial %d of %q: %w", number, study, err)
	}
	return &t, nil
}
