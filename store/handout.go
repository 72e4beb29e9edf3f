package store

import (
	"context"
	"errors"
	"fmt"
)

// qRestartClaim moves a claimed trial's start and deadline to its hand-out,
// with the version of the transaction that hands it out. A trial no longer
// running (it expired while the batch's proposals were made) is left as it is.
const qRestartClaim = `UPDATE trials SET started_us = $2, deadline_us = $3, version = $4, updated_us = $2
	WHERE id = $1 AND state = 'running' RETURNING ` + trialColumns

// handOut stores the proposals props for the asks of reqs after those the
// trials in claimed were claimed for, restarts the claimed trials' clocks at
// the same hand-out (restartClaims), and returns the batch: the claimed
// trials, then the proposed ones.
func (s *sqlStore) handOut(ctx context.Context, q querier, st *Study, claimed []*Trial, reqs []AskRequest, props []Proposal) ([]*Trial, error) {
	made, err := s.insertProposals(ctx, q, st, reqs[len(claimed):], props)
	if err != nil {
		return nil, err
	}
	if err := s.restartClaims(ctx, q, claimed, reqs, made[0].Version); err != nil {
		return nil, err
	}
	return append(claimed, made...), nil
}

// restartClaims starts the clocks of the trials a batch claimed from the
// queue when the batch is handed out, after the proposals for the rest of
// it were made, as insertProposals does for the proposed ones: a claimed
// trial reaches its worker only with the others, and a batch's proposals
// can take longer than the trial timeout, so its deadline counted from the
// claim could pass before its worker ever saw it. claimed[i] was claimed
// for reqs[i]; version is the hand-out transaction's. The trials are
// replaced by what was stored.
func (s *sqlStore) restartClaims(ctx context.Context, q querier, claimed []*Trial, reqs []AskRequest, version int64) error {
	if len(claimed) > len(reqs) {
		return fmt.Errorf("store: restart claims: %d trials for %d asks", len(claimed), len(reqs))
	}
	for i, t := range claimed {
		if reqs[i].HandOut == nil {
			continue
		}
		at := reqs[i].HandOut()
		tt, err := scanTrial(q.queryRow(ctx, qRestartClaim, t.ID, micros(at), deadlineMicros(at, reqs[i].Timeout), version))
		if errors.Is(err, errNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store: restart claimed trial %d: %w", t.Number, err)
		}
		claimed[i] = &tt
	}
	return nil
}
