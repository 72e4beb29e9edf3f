package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"xbo/opt"
	"xbo/space"
	"xbo/store"
)

// mirror is a study's trials as last read from the store, caught up with
// it by reading only the trials that may have changed: the optimizer of the
// asks (studyCache) and the model pruner's decisions (decisionCache) are
// built from it without reloading the study.
type mirror struct {
	studyID int64
	sp      *space.Space
	cfg     opt.Settings
	next    int64                 // trials numbered below are in trials
	seen    int64                 // highest version in trials
	trials  map[int64]store.Trial // every trial of the study as last read
	vals    map[int64][]float64   // natural values of every trial's params
}

// catchUp reads the trials that changed since the last call into the
// mirror and returns them; reset reports that the mirror started over (its
// first use, or a study deleted and created again under the same name).
func (m *mirror) catchUp(ctx context.Context, view store.AskView) (changed []store.Trial, reset bool, err error) {
	defer func() {
		if err != nil {
			// Half caught up, the mirror could miss changes next time
			// (Changed goes by the highest version seen): start over.
			m.trials = nil
		}
	}()
	st := view.Study()
	if m.trials == nil || m.studyID != st.ID {
		reset = true
		if err := m.reset(st); err != nil {
			return nil, true, err
		}
	}
	if view.Ordered() && m.seen > 0 {
		changed, _, err = view.Changed(ctx, m.seen)
	} else {
		// Complete and failed trials never change again; everything else,
		// and every trial numbered beyond those known, is read again.
		var watch []int64
		for n, t := range m.trials {
			if !t.State.Finished() {
				watch = append(watch, n)
			}
		}
		changed, err = view.Watch(ctx, watch, m.next)
	}
	if err != nil {
		return nil, reset, err
	}
	for _, t := range changed {
		m.seen = max(m.seen, t.Version)
		if _, had := m.trials[t.Number]; !had {
			vals, err := m.sp.FromMap(t.Params)
			if err != nil {
				return nil, reset, fmt.Errorf("study %q: trial %d: %w", st.Name, t.Number, err)
			}
			m.vals[t.Number] = vals
		}
		m.trials[t.Number] = t
		m.next = max(m.next, t.Number+1)
	}
	return changed, reset, nil
}

// reset starts mirroring a study from scratch.
func (m *mirror) reset(st *store.Study) error {
	sp, err := space.Parse(st.Space)
	if err != nil {
		return fmt.Errorf("stored space of %q: %w", st.Name, err)
	}
	cfg, err := opt.ParseSettings(st.Optimizer)
	if err != nil {
		return fmt.Errorf("stored optimizer of %q: %w", st.Name, err)
	}
	m.studyID, m.sp, m.cfg, m.next, m.seen = st.ID, sp, cfg, 0, 0
	m.trials, m.vals = map[int64]store.Trial{}, map[int64][]float64{}
	return nil
}

// optimizer builds the study's optimizer from the mirrored trials, with the
// map from trial numbers to its trial ids and the state it holds each in.
func (m *mirror) optimizer(workers int) (*opt.Optimizer, map[int64]int64, map[int64]store.State, error) {
	hist, optID, state, err := optHistory(m.sorted(), m.vals)
	if err != nil {
		return nil, nil, nil, err
	}
	o, err := m.cfg.New(m.sp, hist, workers)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("rebuild optimizer: %w", err)
	}
	return o, optID, state, nil
}

// proposer builds the optimizer of the asks: the study's optimizer for
// one objective, opt.NewMultiObjective's for several objectives or
// constraints.
func (m *mirror) proposer(workers int) (proposer, map[int64]int64, map[int64]store.State, error) {
	if !m.sp.MultiObjective() && len(m.sp.Constraints) == 0 {
		o, optID, state, err := m.optimizer(workers)
		if err != nil {
			return nil, nil, nil, err
		}
		return singleObjective{o}, optID, state, nil
	}
	hist, optID, state, err := optHistory(m.sorted(), m.vals)
	if err != nil {
		return nil, nil, nil, err
	}
	o, err := m.cfg.NewMultiObjective(m.sp, hist, workers)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("rebuild optimizer: %w", err)
	}
	return multiObjective{o}, optID, state, nil
}

// sorted returns the mirrored trials in number order.
func (m *mirror) sorted() []store.Trial {
	all := make([]store.Trial, 0, len(m.trials))
	for _, t := range m.trials {
		all = append(all, t)
	}
	slices.SortFunc(all, func(a, b store.Trial) int { return cmp.Compare(a.Number, b.Number) })
	return all
}

// history maps stored trials to the optimizer's history. Running and queued
// trials are pending (the constant liar accounts for them), expired trials
// are left out (their requeued copies stand for them), completions keep the
// order in which they were stored. Pruned trials are pruned, as
// opt.FromHistory gives them, and every trial keeps its intermediate values:
// what the optimizer does with them is package opt's decision (a pruned
// value is not at the full budget; see opt.Config.Resource).
func optHistory(all []store.Trial, vals map[int64][]float64) ([]opt.Trial, map[int64]int64, map[int64]store.State, error) {
	var completes []store.Trial
	for _, t := range all {
		if t.State == store.Complete {
			completes = append(completes, t)
		}
	}
	slices.SortStableFunc(completes, func(a, b store.Trial) int { return cmp.Compare(a.Version, b.Version) })
	rank := make(map[int64]int, len(completes))
	for i, t := range completes {
		rank[t.Number] = i
	}
	hist := make([]opt.Trial, 0, len(all))
	optID := make(map[int64]int64, len(all))
	state := make(map[int64]store.State, len(all))
	for _, t := range all {
		if t.State == store.Expired {
			continue
		}
		ht := opt.Trial{ID: int64(len(hist) + 1), Params: vals[t.Number], Acquisition: t.Acquisition, Curve: t.Curve()}
		if len(t.Meta) > 0 {
			var m opt.ProposalMeta
			if json.Unmarshal(t.Meta, &m) == nil {
				ht.SetMeta(m)
			}
		}
		switch t.State {
		case store.Complete:
			if t.Value == nil {
				return nil, nil, nil, fmt.Errorf("trial %d is complete without a value", t.Number)
			}
			ht.State, ht.Value, ht.Completion = opt.Complete, *t.Value, rank[t.Number]
			ht.Values, ht.Constraints = outcomeValues(&t), t.Constraints
			state[t.Number] = store.Complete
		case store.Failed:
			ht.State = opt.Failed
			state[t.Number] = t.State
		case store.Pruned:
			ht.State = opt.Pruned
			state[t.Number] = t.State
		default:
			ht.State = opt.Pending
			state[t.Number] = store.Pending
		}
		optID[t.Number] = ht.ID
		hist = append(hist, ht)
	}
	return hist, optID, state, nil
}
