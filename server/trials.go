package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"xbo/space"
	"xbo/store"
)

// AskRequest is the optional body of POST /api/studies/{study}/ask.
type AskRequest struct {
	Worker string `json:"worker,omitempty"`
}

// IdempotencyKeyHeader carries an ask's idempotency key: an ask repeated
// with the key of an earlier one (whose answer was lost) gets the trial that
// one handed out instead of a new one.
const IdempotencyKeyHeader = "Idempotency-Key"

// ReplayedHeader is set to "true" on the answer to a repeated ask.
const ReplayedHeader = "Idempotent-Replayed"

func (s *Server) ask(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	var req AskRequest
	if err := decode(r, &req, true); err != nil {
		return err
	}
	if len(req.Worker) > 200 {
		return badRequest("worker id is longer than 200 bytes")
	}
	key := ""
	if values, ok := r.Header[IdempotencyKeyHeader]; ok {
		if len(values) != 1 {
			return badRequest("%s is given %d times", IdempotencyKeyHeader, len(values))
		}
		if err := store.CheckAskKey(values[0]); err != nil {
			return badRequest("%s: %v", IdempotencyKeyHeader, err)
		}
		key = values[0]
	}
	t, timing, replayed, err := s.askTrial(r.Context(), name, req.Worker, key)
	if err != nil {
		return err
	}
	w.Header().Set("Server-Timing", timing.header())
	if replayed {
		w.Header().Set(ReplayedHeader, "true")
		s.metrics.replays.Inc()
	} else {
		s.changed(name)
	}
	return writeJSON(w, http.StatusOK, t)
}

// TellRequest is the body of POST /api/studies/{study}/trials/{trial}/tell:
// a value, state "failed" with an optional reason, or state "pruned" with
// an optional value (by default the trial's last intermediate value).
type TellRequest struct {
	// Value is the objective value; for a study with several objectives a
	// list of them (as Values).
	Value json.RawMessage `json:"value,omitempty"`
	// Values are every objective's value, in the space's order.
	Values []json.RawMessage `json:"values,omitempty"`
	// Constraints are the constraint values, in the space's order
	// (feasible when every one is ≤ 0).
	Constraints []json.RawMessage `json:"constraints,omitempty"`
	State       string            `json:"state,omitempty"` // "complete" (default with a value), "failed" or "pruned"
	Reason      string            `json:"reason,omitempty"`
	UserAttrs   map[string]any    `json:"user_attrs,omitempty"`
}

func trialNumber(r *http.Request) (int64, error) {
	text := r.PathValue("trial")
	n, err := strconv.ParseInt(text, 10, 64)
	// Only the canonical spelling names a trial: "+4" or "04" are not 4.
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != text {
		return 0, &httpError{http.StatusNotFound, fmt.Errorf("trial %q: not found (trial numbers are integers ≥ 0)", text)}
	}
	return n, nil
}

func (s *Server) tell(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	num, err := trialNumber(r)
	if err != nil {
		return err
	}
	var req TellRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	res := store.Result{Reason: req.Reason, Now: s.now()}
	if req.UserAttrs != nil {
		res.UserAttrs = normalizeNumbers(req.UserAttrs).(map[string]any)
	}
	switch req.State {
	case "", string(store.Complete):
		res.State = store.Complete
		if res.Value, res.Values, res.Constraints, err = outcome(req.Value, req.Values, req.Constraints); err != nil {
			return err
		}
		if req.Reason != "" {
			return badRequest("a reason goes with state \"failed\" only")
		}
	case string(store.Failed):
		res.State = store.Failed
		if len(req.Value) > 0 && string(req.Value) != "null" {
			return badRequest("a failed trial has no value")
		}
	case string(store.Pruned):
		res.State, res.Value = store.Pruned, math.NaN() // NaN: the last intermediate value
		if len(req.Value) > 0 && string(req.Value) != "null" {
			if res.Value, err = finite("value", req.Value); err != nil {
				return err
			}
		}
		if req.Reason != "" {
			return badRequest("a reason goes with state \"failed\" only")
		}
	default:
		return badRequest("state %q: a tell sets \"complete\" (with a value), \"failed\" or \"pruned\"", req.State)
	}
	if res.State != store.Complete && (len(req.Values) > 0 || len(req.Constraints) > 0) {
		return badRequest("objective and constraint values go with state \"complete\" only")
	}
	t, changed, err := s.st.Tell(r.Context(), name, num, res)
	if err != nil {
		return err
	}
	if changed {
		s.changed(name)
	}
	return writeJSON(w, http.StatusOK, t)
}

// AddTrialRequest is the body of POST /api/studies/{study}/trials.
type AddTrialRequest struct {
	Params map[string]any  `json:"params"`
	Value  json.RawMessage `json:"value,omitempty"`
	// Values and Constraints as in TellRequest, with a value only.
	Values      []json.RawMessage `json:"values,omitempty"`
	Constraints []json.RawMessage `json:"constraints,omitempty"`
	UserAttrs   map[string]any    `json:"user_attrs,omitempty"`
}

func (s *Server) addTrial(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	var req AddTrialRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	st, err := s.st.Study(r.Context(), name)
	if err != nil {
		return err
	}
	sp, err := space.Parse(st.Space)
	if err != nil {
		return fmt.Errorf("stored space of %q: %w", name, err)
	}
	if req.Params == nil {
		return badRequest("params are missing")
	}
	vals, err := sp.FromMap(normalizeNumbers(req.Params).(map[string]any))
	if err != nil {
		return badRequest("%v", err)
	}
	nt := store.NewTrial{Params: sp.ToMap(vals), Now: s.now()}
	if req.UserAttrs != nil {
		nt.UserAttrs = normalizeNumbers(req.UserAttrs).(map[string]any)
	}
	if len(req.Value) > 0 && string(req.Value) != "null" || len(req.Values) > 0 {
		v, vals, cons, err := outcome(req.Value, req.Values, req.Constraints)
		if err != nil {
			return err
		}
		nt.Value, nt.Values, nt.Constraints = &v, vals, cons
	} else if len(req.Constraints) > 0 {
		return badRequest("constraint values go with a trial's value(s); a trial to evaluate has none yet")
	}
	t, err := s.st.AddTrial(r.Context(), name, nt)
	if err != nil {
		return err
	}
	s.changed(name)
	return writeJSON(w, http.StatusCreated, t)
}

func (s *Server) getTrial(w http.ResponseWriter, r *http.Request) error {
	num, err := trialNumber(r)
	if err != nil {
		return err
	}
	t, err := s.st.Trial(r.Context(), r.PathValue("study"), num)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

func intParam(r *http.Request, name string, def int) (int, error) {
	text := r.URL.Query().Get(name)
	if text == "" {
		return def, nil
	}
	v, err := strconv.Atoi(text)
	if err != nil || v < 0 {
		return 0, badRequest("query parameter %s=%q must be an integer ≥ 0", name, text)
	}
	return v, nil
}

// TrialPage is the response of GET /api/studies/{study}/trials.
type TrialPage struct {
	Trials []store.Trial `json:"trials"`
	Total  int           `json:"total"`
	Offset int           `json:"offset"`
	Limit  int           `json:"limit"`
}

func (s *Server) listTrials(w http.ResponseWriter, r *http.Request) error {
	q := store.TrialQuery{}
	var err error
	if q.Offset, err = intParam(r, "offset", 0); err != nil {
		return err
	}
	if q.Limit, err = intParam(r, "limit", 100); err != nil {
		return err
	}
	if q.Limit > 10000 {
		return badRequest("limit %d is above 10000", q.Limit)
	}
	for _, field := range r.URL.Query()["state"] {
		for _, st := range strings.Split(field, ",") {
			state := store.State(strings.TrimSpace(st))
			if !state.Valid() {
				return badRequest("state %q is not one of %s", st, stateNames())
			}
			q.States = append(q.States, state)
		}
	}
	trials, total, err := s.st.Trials(r.Context(), r.PathValue("study"), q)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, TrialPage{Trials: trials, Total: total, Offset: q.Offset, Limit: q.Limit})
}

// stateNames lists the trial states for messages.
func stateNames() string {
	names := make([]string, len(store.States))
	for i, st := range store.States {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}

func (s *Server) best(w http.ResponseWriter, r *http.Request) error {
	t, err := s.st.Best(r.Context(), r.PathValue("study"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// BestTrials is the response of GET /api/studies/{study}/best_trials: the
// Pareto-optimal trials (history.History.ParetoFront: complete, feasible,
// dominated by no other), in number order, with the study's objectives.
type BestTrials struct {
	Objectives []space.Objective `json:"objectives"`
	Trials     []store.Trial     `json:"trials"`
}

func (s *Server) bestTrials(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	st, err := s.st.Study(r.Context(), name)
	if err != nil {
		return err
	}
	trials, _, err := s.st.Trials(r.Context(), name, store.TrialQuery{States: []store.State{store.Complete}})
	if err != nil {
		return err
	}
	h, err := store.ToHistory(st, trials)
	if err != nil {
		return err
	}
	front, err := h.ParetoFront()
	if err != nil {
		return err
	}
	byNumber := make(map[int64]store.Trial, len(trials))
	for _, t := range trials {
		byNumber[t.Number] = t
	}
	out := BestTrials{Trials: make([]store.Trial, 0, len(front))}
	names, dirs := h.Space.ObjectiveNames(), h.Space.Directions()
	for k := range names {
		out.Objectives = append(out.Objectives, space.Objective{Name: names[k], Direction: dirs[k]})
	}
	for _, i := range front {
		out.Trials = append(out.Trials, byNumber[h.Trials[i].Number])
	}
	return writeJSON(w, http.StatusOK, out)
}
