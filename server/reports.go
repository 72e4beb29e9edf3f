package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"xbo/prune"
	"xbo/space"
	"xbo/store"
)

// ReportRequest is the body of POST /api/studies/{study}/trials/{trial}/report.
type ReportRequest struct {
	Step  *int64          `json:"step"`
	Value json.RawMessage `json:"value"`
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	num, err := trialNumber(r)
	if err != nil {
		return err
	}
	var req ReportRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	if req.Step == nil {
		return badRequest("step is missing")
	}
	v, err := finite("value", req.Value)
	if err != nil {
		return err
	}
	t, err := s.st.ReportIntermediate(r.Context(), name, num, store.Report{Step: *req.Step, Value: v, Now: s.now(), Extend: s.cfg.TrialTimeout})
	if err != nil {
		return err
	}
	s.changed(name)
	d, err := s.shouldPrune(r.Context(), name, t)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ReportResponse{Trial: t, Prune: d.Prune, PruneReason: d.Reason})
}

// ReportResponse is the answer to a report: the trial as stored, and
// whether the study's pruner says to stop it now (the worker then tells
// {"state": "pruned"}) and why.
type ReportResponse struct {
	*store.Trial
	Prune       bool   `json:"prune"`
	PruneReason string `json:"prune_reason"`
}

// studyPruner is a study's pruner and direction, which never change: kept
// per study name for the study's id, so that a study deleted and created
// again under the same name (by any server) is read afresh.
type studyPruner struct {
	studyID  int64
	cfg      prune.Config
	maximize bool
}

// maxPruners bounds the cached pruners (one per study name); past it the
// cache starts over.
const maxPruners = 10_000

// pruner returns the pruner of the study that trial t belongs to.
func (s *Server) pruner(ctx context.Context, name string, t *store.Trial) (studyPruner, error) {
	s.mu.Lock()
	p, ok := s.pruners[name]
	s.mu.Unlock()
	if ok && p.studyID == t.StudyID {
		return p, nil
	}
	st, err := s.st.Study(ctx, name)
	if err != nil {
		return studyPruner{}, err
	}
	cfg, err := prune.Parse(st.Pruner)
	if err != nil {
		return studyPruner{}, fmt.Errorf("stored pruner of %q: %w", name, err)
	}
	p = studyPruner{studyID: st.ID, cfg: cfg, maximize: st.Direction == string(space.Maximize)}
	s.mu.Lock()
	if len(s.pruners) >= maxPruners {
		clear(s.pruners)
	}
	s.pruners[name] = p
	s.mu.Unlock()
	return p, nil
}

// shouldPrune asks the study's pruner about a trial that just reported,
// from the intermediate values in the store (package prune).
func (s *Server) shouldPrune(ctx context.Context, name string, t *store.Trial) (prune.Decision, error) {
	p, err := s.pruner(ctx, name, t)
	if err != nil {
		return prune.Decision{}, err
	}
	curve := make([]prune.Point, len(t.Intermediate))
	for i, iv := range t.Intermediate {
		curve[i] = prune.Point{Step: iv.Step, Value: iv.Value}
	}
	trial := prune.Trial{Study: name, Number: t.Number, Curve: curve, Maximize: p.maximize}
	src := storeSource{s.st, name}
	if p.cfg.Type == prune.Model {
		return p.cfg.Decide(ctx, trial, modelSource{src, s})
	}
	return p.cfg.Decide(ctx, trial, src)
}

// modelSource answers the model pruner with the study's optimizer
// (opt.Optimizer.ContinueChance), built from the study's decision cache.
type modelSource struct {
	storeSource
	s *Server
}

func (src modelSource) ContinueChance(ctx context.Context, number int64, minRank float64) (float64, error) {
	return src.s.decisionCache(src.study).continueChance(ctx, src.st, src.study, number, minRank, src.s.cfg.OptimizerWorkers)
}

// storeSource reads what a pruner compares a trial with from the store.
type storeSource struct {
	st    store.Store
	study string
}

func (src storeSource) CompleteAtStep(ctx context.Context, step int64) ([]float64, int, error) {
	return src.st.CompleteAtStep(ctx, src.study, step)
}

func (src storeSource) FirstFromStep(ctx context.Context, step int64) ([]prune.StepValue, error) {
	values, err := src.st.FirstFromStep(ctx, src.study, step)
	if err != nil {
		return nil, err
	}
	out := make([]prune.StepValue, len(values))
	for i, v := range values {
		out[i] = prune.StepValue{Number: v.Number, Step: v.Step, Value: v.Value}
	}
	return out, nil
}
