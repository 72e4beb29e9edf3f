package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

func (s *sqlStore) Expire(ctx context.Context, study string, now time.Time) ([]Trial, error) {
	var out []Trial
	// A cheap read first: the common case has nothing overdue and then needs
	// neither the write lock nor the study's ask lock.
	var overdueCount int64
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		return q.queryRow(ctx, qOverdueCount, st.ID, micros(now))(&overdueCount)
	})
	if err != nil || overdueCount == 0 {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("store: %w", err) // the study: say so, not what was being done
		}
		if err != nil {
			return nil, fmt.Errorf("store: expire trials of %q: %w", study, err)
		}
		return nil, nil
	}
	err = s.withTx(ctx, idempotentTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		if err := s.b.lockStudy(ctx, q, st.ID); err != nil {
			return err
		}
		r, err := q.query(ctx, `SELECT `+trialColumns+` FROM trials WHERE study_id = $1 AND state = 'running'
			AND deadline_us IS NOT NULL AND deadline_us < $2 ORDER BY number`+s.b.rowLock(true), st.ID, micros(now))
		if err != nil {
			return err
		}
		var overdue []Trial
		for r.Next() {
			t, err := scanTrial(r.Scan)
			if err != nil {
				r.Close()
				return err
			}
			overdue = append(overdue, t)
		}
		r.Close()
		if err := r.Err(); err != nil {
			return err
		}
		if len(overdue) == 0 {
			return nil
		}
		v, first, err := s.reserveVersioned(ctx, q, st.ID, int64(len(overdue)))
		if err != nil {
			return err
		}
		nowUS := micros(now)
		for i, t := range overdue {
			if _, err := q.exec(ctx, `UPDATE trials SET state = 'expired', finished_us = $2, version = $3, updated_us = $2, ask_key = NULL WHERE id = $1`, t.ID, nowUS, v); err != nil {
				return err
			}
			params, err := marshalJSON(t.Params, "{}")
			if err != nil {
				return err
			}
			from := t.Number
			if _, err := insertTrial(ctx, q, trialRow{studyID: st.ID, number: first + int64(i), state: Pending, params: params,
				acquisition: "requeue", requeuedFrom: &from, meta: string(t.Meta), created: nowUS, version: v}); err != nil {
				return err
			}
			t.State, t.FinishedAt, t.Version = Expired, optMicros(&nowUS), v
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: expire trials of %q: %w", study, err)
	}
	return out, nil
}

func (s *sqlStore) Tell(ctx context.Context, study string, number int64, r Result) (*Trial, bool, error) {
	if err := checkResult(r); err != nil {
		return nil, false, fmt.Errorf("store: tell trial %d: %w", number, err)
	}
	// A pruned trial's value may be its last intermediate value, which
	// the transaction below reads.
	vals, cons, infeasible, err := encodeOutcome(&r.Value, r.Values, r.Constraints)
	if err != nil {
		return nil, false, fmt.Errorf("store: tell trial %d: %w", number, err)
	}
	if q, sql := s.b.directTell(); q != nil && len(r.UserAttrs) == 0 && r.State != Pruned && vals == nil && cons == nil {
		var value *float64
		if r.State == Complete {
			value = &r.Value
		}
		t, err := scanTrial(q.queryRow(ctx, sql, study, number, string(r.State), value, r.Reason, micros(r.Now)))
		if err == nil {
			return &t, true, nil
		}
		if !errors.Is(err, errNoRows) && !s.b.lostConnection(err) {
			return nil, false, fmt.Errorf("store: tell %q trial %d: %w", study, number, s.classify(err))
		}
		// Unknown or finished, or the connection died: the transaction
		// below (retried on a fresh connection) tells which, and whether
		// a repeated tell is the same.
	}
	attrs := ""
	var out *Trial
	changed := false
	err = s.withTx(ctx, idempotentTx, func(q tx) error {
		studyID, t, err := s.lockTrial(ctx, q, study, number)
		if err != nil {
			return err
		}
		if t.State.Finished() {
			if sameOutcome(t, r) {
				// A finished trial never changes: a repeat (a retry) is
				// the same only with the attributes it was told with, or
				// some or none of them; new or other ones would be dropped
				// silently with a 200, so they are a conflict.
				merged := mergeAttrs(t.UserAttrs, r.UserAttrs)
				if reflect.DeepEqual(normalizeAttrs(merged), normalizeAttrs(t.UserAttrs)) {
					out = t
					return nil
				}
				return fmt.Errorf("%w: trial %d is already %s with other user attributes (%s); a finished trial never changes",
					ErrConflict, number, t.State, strings.Join(changedAttrs(t.UserAttrs, r.UserAttrs), ", "))
			}
			was := string(t.State)
			if t.Value != nil {
				was += " with value " + strconv.FormatFloat(*t.Value, 'g', -1, 64)
			}
			return fmt.Errorf("%w: trial %d is already %s", ErrConflict, number, was)
		}
		if attrs, err = marshalJSON(mergeAttrs(t.UserAttrs, r.UserAttrs), "{}"); err != nil {
			return fmt.Errorf("%w: user attributes: %v", ErrInvalid, err)
		}
		if r.State == Complete {
			var shape Study
			if err := q.queryRow(ctx, `SELECT n_objectives, n_constraints FROM studies WHERE id = $1`, studyID)(&shape.NumObjectives, &shape.NumConstraints); err != nil {
				return err
			}
			if err := shape.checkShape(r.Values, r.Constraints); err != nil {
				return err
			}
		}
		v, err := s.stamp(ctx, q, studyID)
		if err != nil {
			return err
		}
		tt, err := scanTrial(q.queryRow(ctx, qTellUpdate,
			t.ID, string(r.State), outcomeValue(t, r), r.Reason, attrs, micros(r.Now), v, vals, cons, infeasible))
		if err != nil {
			return err
		}
		if t.State == Expired {
			// A late tell settles the configuration: its requeued copy,
			// if still waiting, must not be run again.
			if _, err := q.exec(ctx, qRetireCopies, studyID, t.Number, micros(r.Now), v); err != nil {
				return err
			}
		}
		out, changed = &tt, true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: tell %q trial %d: %w", study, number, err)
	}
	return out, changed, nil
}

// changedAttrs names the attributes of add that old lacks or holds with
// another value, in order.
func changedAttrs(old, add map[string]any) []string {
	was, now := normalizeAttrs(old), normalizeAttrs(add)
	var keys []string
	for k, v := range now {
		if prev, ok := was[k]; !ok || !reflect.DeepEqual(prev, v) {
			keys = append(keys, strconv.Quote(k))
		}
	}
	slices.Sort(keys)
	return keys
}

// normalizeAttrs gives attributes read back from JSON and attributes as a
// client sent them one form (numbers as float64), so they compare equal.
func normalizeAttrs(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}

// qRetireCopies expires the pending requeued copies of a trial (requeued_from
// holds the trial's number).
const qRetireCopies = `UPDATE trials SET state = 'expired', finished_us = $3, version = $4, updated_us = $3
	WHERE study_id = $1 AND requeued_from = $2 AND state = 'pending'`

const qRelease = `UPDATE trials SET state = 'pending', worker = '', started_us = NULL, deadline_us = NULL,
	version = $2, updated_us = $3, ask_key = NULL WHERE id = $1 RETURNING ` + trialColumns

func (s *sqlStore) Release(ctx context.Context, study string, number int64, now time.Time) (*Trial, bool, error) {
	var out *Trial
	released := false
	err := s.withTx(ctx, idempotentTx, func(q tx) error {
		studyID, t, err := s.lockTrial(ctx, q, study, number)
		if err != nil {
			return err
		}
		if t.State != Running {
			out = t
			return nil
		}
		v, err := s.stamp(ctx, q, studyID)
		if err != nil {
			return err
		}
		tt, err := scanTrial(q.queryRow(ctx, qRelease, t.ID, v, micros(now)))
		if err != nil {
			return err
		}
		out, released = &tt, true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: release %q trial %d: %w", study, number, err)
	}
	return out, released, nil
}
