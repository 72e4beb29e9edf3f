package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// askView reads trials for a proposer inside an ask.
type askView struct {
	b     backend
	q     querier
	study *Study
}

const qWatch = `SELECT ` + trialColumns + ` FROM trials WHERE study_id = $1
	AND (number >= $2 OR number IN (SELECT value FROM json_each($3))) ORDER BY number`

func (v *askView) Study() *Study { return v.study }

func (v *askView) Ordered() bool { return v.b.orderedVersions() }

func (v *askView) Watch(ctx context.Context, numbers []int64, from int64) ([]Trial, error) {
	q, list, err := v.b.watchQuery(numbers)
	if err != nil {
		return nil, fmt.Errorf("store: watched trials: %w", err)
	}
	r, err := v.q.query(ctx, q, v.study.ID, from, list)
	if err != nil {
		return nil, fmt.Errorf("store: watched trials: %w", err)
	}
	defer r.Close()
	var out []Trial
	for r.Next() {
		t, err := scanTrial(r.Scan)
		if err != nil {
			return nil, fmt.Errorf("store: watched trials: %w", err)
		}
		out = append(out, t)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("store: watched trials: %w", err)
	}
	return out, nil
}

func (v *askView) Changed(ctx context.Context, since int64) ([]Trial, int64, error) {
	r, err := v.q.query(ctx, `SELECT `+trialColumns+` FROM trials WHERE study_id = $1 AND version > $2 ORDER BY number`, v.study.ID, since)
	if err != nil {
		return nil, since, fmt.Errorf("store: changed trials: %w", err)
	}
	defer r.Close()
	var out []Trial
	maxV := since
	for r.Next() {
		t, err := scanTrial(r.Scan)
		if err != nil {
			return nil, since, fmt.Errorf("store: changed trials: %w", err)
		}
		maxV = max(maxV, t.Version)
		out = append(out, t)
	}
	if err := r.Err(); err != nil {
		return nil, since, fmt.Errorf("store: changed trials: %w", err)
	}
	return out, maxV, nil
}

const (
	qClaimSelect = `SELECT id FROM trials WHERE study_id = $1 AND state = 'pending' ORDER BY number LIMIT $2`
	qClaimUpdate = `UPDATE trials SET state = 'running', worker = $2, started_us = $3, deadline_us = $4, version = $5, updated_us = $3,
		ask_key = $6 WHERE id = $1 RETURNING ` + trialColumns
	qPendingExists = `SELECT EXISTS (SELECT 1 FROM trials WHERE study_id = $1 AND state = 'pending')`
	qOverdueCount  = `SELECT count(*) FROM trials WHERE study_id = $1 AND state = 'running'
			AND deadline_us IS NOT NULL AND deadline_us < $2`
	qTellUpdate = `UPDATE trials SET state = $2, value = $3, fail_reason = $4, user_attrs = $5,
			finished_us = $6, version = $7, updated_us = $6, objective_values = $8, constraint_values = $9, infeasible = $10
			WHERE id = $1 RETURNING ` + trialColumns
)

// claim hands the oldest pending trials to the first workers of reqs (as
// many as are queued) and returns them.
func (s *sqlStore) claim(ctx context.Context, q querier, st *Study, reqs []AskRequest) ([]*Trial, error) {
	ids, err := queuedIDs(ctx, q, st.ID, len(reqs), s.b.rowLock(true))
	if err != nil {
		return nil, err
	}
	return s.claimIDs(ctx, q, st, reqs, ids)
}

// queuedIDs selects the ids of up to limit queued trials of a study, oldest
// first, with rowLock appended to the selection.
func queuedIDs(ctx context.Context, q querier, studyID int64, limit int, rowLock string) ([]int64, error) {
	r, err := q.query(ctx, qClaimSelect+rowLock, studyID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: claim pending trials: %w", err)
	}
	ids, err := scanIDs(r)
	if err != nil {
		return nil, fmt.Errorf("store: claim pending trials: %w", err)
	}
	return ids, nil
}

// scanIDs reads and closes a result of one integer column.
func scanIDs(r rows) ([]int64, error) {
	defer r.Close()
	var ids []int64
	for r.Next() {
		var id int64
		if err := r.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, r.Err()
}

// claimIDs hands the queued trials ids (selected and row-locked by the
// caller, at most one per request) to the first requests.
func (s *sqlStore) claimIDs(ctx context.Context, q querier, st *Study, reqs []AskRequest, ids []int64) ([]*Trial, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > len(reqs) {
		return nil, fmt.Errorf("store: claim: %d queued trials for %d asks", len(ids), len(reqs))
	}
	v, err := s.stamp(ctx, q, st.ID)
	if err != nil {
		return nil, err
	}
	out := make([]*Trial, len(ids))
	for i, id := range ids {
		req := reqs[i]
		now := micros(req.Now)
		t, err := scanTrial(q.queryRow(ctx, qClaimUpdate, id, req.Worker, now, deadlineMicros(req.Now, req.Timeout), v, askKey(req)))
		if err != nil {
			return nil, fmt.Errorf("store: claim pending trial: %w", err)
		}
		out[i] = &t
	}
	return out, nil
}

func (s *sqlStore) Ask(ctx context.Context, study string, req AskRequest, propose ProposeFunc) (*Trial, error) {
	if propose == nil {
		return nil, fmt.Errorf("store: ask: %w: no proposer", ErrInvalid)
	}
	out, err := s.AskBatch(ctx, study, []AskRequest{req}, func(ctx context.Context, view AskView, n int) ([]Proposal, error) {
		p, err := propose(ctx, view)
		return []Proposal{p}, err
	})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// askKey is the value stored as a trial's ask_key for req: NULL without a key.
func askKey(req AskRequest) *string {
	if req.Key == "" {
		return nil
	}
	return &req.Key
}

func (s *sqlStore) AskBatch(ctx context.Context, study string, reqs []AskRequest, propose BatchProposeFunc) ([]*Trial, error) {
	if propose == nil {
		return nil, fmt.Errorf("store: ask: %w: no proposer", ErrInvalid)
	}
	keys := map[string]bool{}
	for _, r := range reqs {
		if r.Key == "" {
			continue
		}
		if err := CheckAskKey(r.Key); err != nil {
			return nil, fmt.Errorf("store: ask %q: %w", study, err)
		}
		if keys[r.Key] {
			return nil, fmt.Errorf("store: ask %q: %w: idempotency key %q is given twice in one batch", study, ErrInvalid, r.Key)
		}
		keys[r.Key] = true
	}
	out, err := s.askBatch(ctx, study, reqs, propose)
	if err != nil && len(keys) > 0 && s.b.isUniqueViolation(err) {
		// Only ask_key can collide: trial numbers are reserved under the
		// study's ask lock. Another ask stored one of the keys meanwhile;
		// the caller looks the keys up again (AskedWith).
		err = fmt.Errorf("store: ask %q: %w: an idempotency key of this ask was stored by another ask meanwhile (%w)", study, ErrConflict, err)
	}
	return out, err
}

func (s *sqlStore) askBatch(ctx context.Context, study string, reqs []AskRequest, propose BatchProposeFunc) ([]*Trial, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	pessimistic := !s.b.optimisticAsk()
	if !pessimistic {
		out, done, err := s.askFromSnapshot(ctx, study, reqs, propose)
		if done || err != nil {
			return out, err
		}
	}
	var out []*Trial
	err := s.withTx(ctx, writeTx, func(q tx) error {
		// With the ask lock taken first, the study read next has the
		// number the proposals will get.
		st, ids, err := s.b.lockForAsk(ctx, q, study, len(reqs))
		if err != nil {
			return err
		}
		if out, err = s.claimIDs(ctx, q, st, reqs, ids); err != nil || len(out) == len(reqs) || !pessimistic {
			return err
		}
		props, err := callPropose(ctx, propose, &askView{b: s.b, q: q, study: st}, len(reqs)-len(out))
		if err != nil {
			return err
		}
		batch, err := s.handOut(ctx, q, st, out, reqs, props)
		if err != nil {
			return err
		}
		out = batch
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: ask %q: %w", study, err)
	}
	if len(out) == len(reqs) {
		return out, nil
	}
	// Optimistic path (SQLite): the claims above are committed; propose
	// from a read snapshot, then insert only if no trial was created
	// meanwhile, so the proposals saw every pending trial.
	rest := reqs[len(out):]
	var snapshot *Study
	var props []Proposal
	err = s.withTx(ctx, readTx, func(q tx) error {
		var err error
		if snapshot, err = getStudy(ctx, q, study); err != nil {
			return err
		}
		props, err = callPropose(ctx, propose, &askView{b: s.b, q: q, study: snapshot}, len(rest))
		return err
	})
	if err != nil {
		return out, fmt.Errorf("store: ask %q: %w", study, err)
	}
	conflict := false
	err = s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		if st.ID != snapshot.ID || st.NextNumber != snapshot.NextNumber {
			conflict = true
			return fmt.Errorf("%w: trials were created while proposing", ErrConflict)
		}
		batch, err := s.handOut(ctx, q, st, out, reqs, props)
		if err != nil {
			return err
		}
		out = batch
		return nil
	})
	if !conflict {
		if err != nil {
			return out, fmt.Errorf("store: ask %q: %w", study, err)
		}
		return out, nil
	}
	// Another process created trials meanwhile. Propose again inside the
	// write transaction, which holds SQLite's write lock, so this attempt
	// cannot be overtaken: a busy pair of processes always makes progress.
	err = s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		claimed, err := s.claim(ctx, q, st, rest)
		if err != nil {
			return err
		}
		rest2 := rest[len(claimed):]
		if len(rest2) > 0 {
			if st, err = getStudy(ctx, q, study); err != nil {
				return err
			}
			props, err := callPropose(ctx, propose, &askView{b: s.b, q: q, study: st}, len(rest2))
			if err != nil {
				return err
			}
			// Every claim of the batch, this transaction's and the
			// first one's, is handed out now.
			batch, err := s.handOut(ctx, q, st, append(out, claimed...), reqs, props)
			if err != nil {
				return err
			}
			out = batch
			return nil
		}
		out = append(out, claimed...)
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("store: ask %q: %w", study, err)
	}
	return out, nil
}

// qAskedWith reads the trials that asks with idempotency keys handed out
// ($1: the keys as a JSON array).
var qAskedWith = `SELECT s.name, t.ask_key, ` + trialColumnsT + ` FROM trials t JOIN studies s ON s.id = t.study_id
	WHERE t.ask_key IN (SELECT value FROM json_each($1))`

// qAskedWithPG is qAskedWith for PostgreSQL, which has no json_each of text.
var qAskedWithPG = `SELECT s.name, t.ask_key, ` + trialColumnsT + ` FROM trials t JOIN studies s ON s.id = t.study_id
	WHERE t.ask_key = ANY($1::text[])`

func (s *sqlStore) AskedWith(ctx context.Context, keys []string) (map[string]KeyedAsk, error) {
	out := map[string]KeyedAsk{}
	if len(keys) == 0 {
		return out, nil
	}
	for _, k := range keys {
		if err := CheckAskKey(k); err != nil {
			return nil, fmt.Errorf("store: asks by key: %w", err)
		}
	}
	q, list := qAskedWith, any(nil)
	if s.b.name() == "postgres" {
		q, list = qAskedWithPG, keys
	} else {
		b, err := json.Marshal(keys)
		if err != nil {
			return nil, fmt.Errorf("store: asks by key: %w", err)
		}
		list = string(b)
	}
	err := s.withTx(ctx, readTx, func(tq tx) error {
		r, err := tq.query(ctx, q, list)
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var name, key string
			t, err := scanTrial(func(dest ...any) error { return r.Scan(append([]any{&name, &key}, dest...)...) })
			if err != nil {
				return err
			}
			out[key] = KeyedAsk{Study: name, Trial: t}
		}
		return r.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: asks by key: %w", err)
	}
	return out, nil
}

// askFromSnapshot is the common case of an optimistic ask: nothing is
// queued, so the whole batch is proposed from a read snapshot and inserted
// in one short write transaction, provided that the study's next trial
// number has not moved and the queue is still empty (a released trial
// rejoins the queue without a new number). done is false when the caller
// must take the general path: the queue was not empty, or trials were
// created or released meanwhile.
func (s *sqlStore) askFromSnapshot(ctx context.Context, study string, reqs []AskRequest, propose BatchProposeFunc) (out []*Trial, done bool, err error) {
	var snapshot *Study
	var props []Proposal
	queued := false
	err = s.withTx(ctx, readTx, func(q tx) error {
		var err error
		if snapshot, err = getStudy(ctx, q, study); err != nil {
			return err
		}
		if err := q.queryRow(ctx, qPendingExists, snapshot.ID)(&queued); err != nil {
			return fmt.Errorf("store: queued trials: %w", err)
		}
		if queued {
			return nil
		}
		props, err = callPropose(ctx, propose, &askView{b: s.b, q: q, study: snapshot}, len(reqs))
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: ask %q: %w", study, err)
	}
	if queued {
		return nil, false, nil
	}
	moved := false
	err = s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		if st.ID != snapshot.ID || st.NextNumber != snapshot.NextNumber {
			moved = true
			return nil
		}
		if err := q.queryRow(ctx, qPendingExists, st.ID)(&moved); err != nil {
			return fmt.Errorf("store: queued trials: %w", err)
		}
		if moved {
			return nil
		}
		out, err = s.insertProposals(ctx, q, st, reqs, props)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: ask %q: %w", study, err)
	}
	return out, !moved, nil
}

func callPropose(ctx context.Context, propose BatchProposeFunc, view AskView, n int) ([]Proposal, error) {
	props, err := propose(ctx, view, n)
	if err != nil {
		return nil, err
	}
	if len(props) != n {
		return nil, fmt.Errorf("%w: proposer returned %d proposals for %d asks", ErrInvalid, len(props), n)
	}
	return props, nil
}

// insertProposals stores proposals as running trials numbered from
// st.NextNumber, one per request.
func (s *sqlStore) insertProposals(ctx context.Context, q querier, st *Study, reqs []AskRequest, props []Proposal) ([]*Trial, error) {
	rows := make([]trialRow, len(props))
	for i, prop := range props {
		if prop.Params == nil {
			return nil, fmt.Errorf("%w: proposer returned no params", ErrInvalid)
		}
		params, err := marshalJSON(prop.Params, "{}")
		if err != nil {
			return nil, fmt.Errorf("%w: proposed params: %v", ErrInvalid, err)
		}
		meta := "{}"
		if len(prop.Meta) > 0 {
			var obj map[string]any
			if err := json.Unmarshal(prop.Meta, &obj); err != nil {
				return nil, fmt.Errorf("%w: proposal meta must be a JSON object: %v", ErrInvalid, err)
			}
			meta = string(prop.Meta)
		}
		handOut := reqs[i].Now
		if reqs[i].HandOut != nil {
			handOut = reqs[i].HandOut()
		}
		now := micros(handOut)
		rows[i] = trialRow{studyID: st.ID, state: Running, params: params, meta: meta,
			worker: reqs[i].Worker, acquisition: prop.Acquisition, created: now, started: &now,
			deadline: deadlineMicros(handOut, reqs[i].Timeout), askKey: askKey(reqs[i])}
	}
	v, first, err := s.reserveVersioned(ctx, q, st.ID, int64(len(rows)))
	if err != nil {
		return nil, err
	}
	if first != st.NextNumber {
		return nil, fmt.Errorf("%w: trial number %d was taken while proposing", ErrConflict, st.NextNumber)
	}
	for i := range rows {
		rows[i].number, rows[i].version = first+int64(i), v
	}
	return s.b.insertTrials(ctx, q, rows)
}

// insertTrialsEach inserts rows one statement each: the way for SQLite,
// where a statement is a function call and this one is prepared.
func insertTrialsEach(ctx context.Context, q querier, rows []trialRow) ([]*Trial, error) {
	out := make([]*Trial, len(rows))
	for i, r := range rows {
		var err error
		if out[i], err = insertTrial(ctx, q, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
