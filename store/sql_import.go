package store

import (
	"context"
	"fmt"
	"iter"
)

// importBatch is how many imported trials are prepared and inserted at a
// time: an import holds one batch, not the whole history, so its memory
// does not grow with the number of trials (all batches are still one
// transaction).
const importBatch = 1000

func (s *sqlStore) ImportStudy(ctx context.Context, ns NewStudy, trials []ImportedTrial) (*Study, error) {
	return s.ImportStudyFrom(ctx, ns, func(yield func(ImportedTrial, error) bool) {
		for _, t := range trials {
			if !yield(t, nil) {
				return
			}
		}
	})
}

// importRow is an imported trial encoded for its row.
type importRow struct {
	state                       State
	params, attrs, intermediate string
	values, constraints         *string
	infeasible                  int
}

// encodeImported checks an imported trial and encodes it for its row.
func encodeImported(t ImportedTrial) (importRow, error) {
	var r importRow
	var err error
	if r.state, r.intermediate, err = importedState(t); err != nil {
		return r, err
	}
	if r.params, r.attrs, err = encodeTrial(t.Params, t.Value, t.UserAttrs); err != nil {
		return r, err
	}
	if (len(t.Values) > 0 || len(t.Constraints) > 0) && r.state != Complete {
		return r, fmt.Errorf("%w: objective and constraint values go with a complete trial only", ErrInvalid)
	}
	if r.values, r.constraints, r.infeasible, err = encodeOutcome(t.Value, t.Values, t.Constraints); err != nil {
		return r, err
	}
	return r, nil
}

func (s *sqlStore) ImportStudyFrom(ctx context.Context, ns NewStudy, trials iter.Seq2[ImportedTrial, error]) (*Study, error) {
	if err := checkNewStudy(ns); err != nil {
		return nil, fmt.Errorf("store: import study: %w", err)
	}
	if trials == nil {
		return nil, fmt.Errorf("store: import study: %w: no trials sequence (give an empty one for a study without trials)", ErrInvalid)
	}
	var st *Study
	err := s.withTx(ctx, writeTx, func(q tx) error {
		var err error
		if st, err = s.insertStudy(ctx, q, ns); err != nil {
			return err
		}
		// The sequence is read inside the transaction, a batch at a time:
		// a trial it refuses, or an error it yields, rolls back the study
		// and every batch written before.
		batch := make([]ImportedTrial, 0, importBatch)
		written, locked := 0, false
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			if !locked {
				if err := s.b.lockStudy(ctx, q, st.ID); err != nil {
					return err
				}
				locked = true
			}
			if err := s.insertImported(ctx, q, st, ns, batch, written); err != nil {
				return err
			}
			written += len(batch)
			batch = batch[:0]
			return nil
		}
		for t, err := range trials {
			if err != nil {
				return err // the source's own error, which names what failed
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			batch = append(batch, t)
			if len(batch) == importBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	})
	if err != nil {
		return nil, fmt.Errorf("store: import study: %w", err)
	}
	return st, nil
}

// insertImported writes one batch of imported trials, the first of which
// is the import's trial number offset (for messages).
func (s *sqlStore) insertImported(ctx context.Context, q tx, st *Study, ns NewStudy, batch []ImportedTrial, offset int) error {
	rows := make([]importRow, len(batch))
	for i, t := range batch {
		var err error
		if rows[i], err = encodeImported(t); err != nil {
			return fmt.Errorf("trial %d: %w", offset+i, err)
		}
		if rows[i].state == Complete {
			if err := st.checkShape(t.Values, t.Constraints); err != nil {
				return fmt.Errorf("trial %d: %w", offset+i, err)
			}
		}
	}
	v, first, err := s.reserveVersioned(ctx, q, st.ID, int64(len(batch)))
	if err != nil {
		return err
	}
	trialRows := make([]trialRow, len(batch))
	for i, t := range batch {
		created, started, finished := importedTimes(t, ns.Now)
		trialRows[i] = trialRow{studyID: st.ID, number: first + int64(i), state: rows[i].state, params: rows[i].params,
			userAttrs: rows[i].attrs, value: t.Value, acquisition: "imported", created: created, started: started, finished: &finished, version: v,
			values: rows[i].values, constraints: rows[i].constraints, infeasible: rows[i].infeasible}
	}
	// The backend's way for many rows: one statement for the batch in
	// PostgreSQL (a round trip per trial dominated a large import there).
	inserted, err := s.b.insertTrials(ctx, q, trialRows)
	if err != nil {
		return err
	}
	for i, t := range batch {
		reason := ""
		if trialRows[i].state == Failed {
			reason = t.Reason
		}
		if reason != "" || len(t.Intermediate) > 0 {
			if _, err := q.exec(ctx, `UPDATE trials SET fail_reason = $2, intermediate = $3 WHERE id = $1`, inserted[i].ID, reason, rows[i].intermediate); err != nil {
				return err
			}
		}
		if err := insertSteps(ctx, q, st.ID, trialRows[i].number, t.Intermediate); err != nil {
			return err
		}
	}
	return nil
}
