package store

import (
	"context"
	"fmt"
)

func (s *sqlStore) ReportIntermediate(ctx context.Context, study string, number int64, rep Report) (*Trial, error) {
	if err := checkFinite("intermediate value", rep.Value); err != nil {
		return nil, fmt.Errorf("store: report: %w", err)
	}
	if rep.Step < 0 {
		return nil, fmt.Errorf("store: report: %w: step %d is negative", ErrInvalid, rep.Step)
	}
	var out *Trial
	err := s.withTx(ctx, idempotentTx, func(q tx) error {
		studyID, t, err := s.lockTrial(ctx, q, study, number)
		if err != nil {
			return err
		}
		if t.State.Finished() {
			return fmt.Errorf("%w: trial %d is already %s", ErrConflict, number, t.State)
		}
		inter, err := marshalJSON(withIntermediate(t.Intermediate, rep.Step, rep.Value), "[]")
		if err != nil {
			return err
		}
		deadline := t.Deadline
		var dl *int64
		if deadline != nil {
			d := micros(*deadline)
			if t.State == Running && rep.Extend > 0 {
				d = max(d, micros(rep.Now.Add(rep.Extend)))
			}
			dl = &d
		}
		v, err := s.stamp(ctx, q, studyID)
		if err != nil {
			return err
		}
		tt, err := scanTrial(q.queryRow(ctx, `UPDATE trials SET intermediate = $2, deadline_us = $3, version = $4, updated_us = $5
			WHERE id = $1 RETURNING `+trialColumns, t.ID, inter, dl, v, micros(rep.Now)))
		if err != nil {
			return err
		}
		if _, err := q.exec(ctx, qUpsertStep, studyID, t.Number, rep.Step, rep.Value); err != nil {
			return fmt.Errorf("store: intermediate value of trial %d: %w", t.Number, err)
		}
		out = &tt
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: report %q trial %d: %w", study, number, err)
	}
	return out, nil
}

// qUpsertStep records (or replaces) one intermediate value in the per-step
// table.
const qUpsertStep = `INSERT INTO intermediate_values (study_id, number, step, value) VALUES ($1, $2, $3, $4)
	ON CONFLICT (study_id, number, step) DO UPDATE SET value = excluded.value`

// qCompleteAtStep lists the study's complete trials, each with its value at
// step $2 (NULL when it has none there): the rows count the complete
// trials, and each value is one primary-key lookup, so the cost grows with
// the number of complete trials and no planner (with or without table
// statistics) reads the values of other steps.
const qCompleteAtStep = `SELECT (SELECT i.value FROM intermediate_values i
		WHERE i.study_id = t.study_id AND i.number = t.number AND i.step = $2)
	FROM trials t WHERE t.study_id = $1 AND t.state = 'complete'`

func (s *sqlStore) CompleteAtStep(ctx context.Context, study string, step int64) ([]float64, int, error) {
	var values []float64
	complete := 0
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		r, err := q.query(ctx, qCompleteAtStep, st.ID, step)
		if err != nil {
			return err
		}
		at, err := collect(r, func(v **float64) []any { return []any{v} })
		complete = len(at)
		for _, v := range at {
			if v != nil {
				values = append(values, *v)
			}
		}
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: values of %q at step %d: %w", study, step, err)
	}
	return values, complete, nil
}

// collect reads and closes a result: one value per row, scanned into the
// fields that fields names.
func collect[T any](r rows, fields func(*T) []any) ([]T, error) {
	defer r.Close()
	var out []T
	for r.Next() {
		var v T
		if err := r.Scan(fields(&v)...); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, r.Err()
}

// qFirstFromStep lists the study's trials, each with its first reported
// step at or above $2 and that step's value (NULL when it has none there),
// each found by a seek in the primary key (study_id, number, step): the
// cost grows with the number of trials, not with the number of values they
// reported.
const qFirstFromStep = `SELECT t.number,
	(SELECT j.step FROM intermediate_values j
		WHERE j.study_id = t.study_id AND j.number = t.number AND j.step >= $2 ORDER BY j.step LIMIT 1),
	(SELECT j.value FROM intermediate_values j
		WHERE j.study_id = t.study_id AND j.number = t.number AND j.step >= $2 ORDER BY j.step LIMIT 1)
	FROM trials t WHERE t.study_id = $1 ORDER BY t.number`

func (s *sqlStore) FirstFromStep(ctx context.Context, study string, step int64) ([]StepValue, error) {
	var out []StepValue
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		r, err := q.query(ctx, qFirstFromStep, st.ID, step)
		if err != nil {
			return err
		}
		type row struct {
			number int64
			step   *int64
			value  *float64
		}
		all, err := collect(r, func(v *row) []any { return []any{&v.number, &v.step, &v.value} })
		for _, a := range all {
			if a.step != nil && a.value != nil {
				out = append(out, StepValue{Number: a.number, Step: *a.step, Value: *a.value})
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: first values of %q from step %d: %w", study, step, err)
	}
	return out, nil
}
