package server

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"xbo/explain"
	"xbo/history"
	"xbo/store"
)

// explain serves GET /api/studies/{study}/explain/{kind}: the query string
// is read by explain.ParseQuery (the same request types the CLI and the
// report fill) and the study's history is explained by the server's engine.
// Results are cached by the engine under the fingerprint of the study's
// usable trials; the X-Explain-Cache header says whether this one was.
func (s *Server) explain(w http.ResponseWriter, r *http.Request) error {
	name, kind := r.PathValue("study"), r.PathValue("kind")
	if !slices.Contains(explain.Kinds, kind) {
		return &httpError{http.StatusNotFound, fmt.Errorf("unknown explanation kind %q (known: %s)", kind, strings.Join(explain.Kinds, ", "))}
	}
	h, err := s.history(r, name)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if len(q[explain.ObjectiveParam]) > 1 {
		return badRequest("%s is given %d times", explain.ObjectiveParam, len(q[explain.ObjectiveParam]))
	}
	if q.Has(explain.ObjectiveParam) {
		if h, err = explain.Objective(h, q.Get(explain.ObjectiveParam)); err != nil {
			return &httpError{http.StatusBadRequest, err}
		}
	}
	req, err := explain.ParseQuery(kind, h.Space, q)
	if err != nil {
		return &httpError{http.StatusBadRequest, err}
	}
	hit := false
	v, err := s.engine.Explain(explain.WithCacheHit(r.Context(), &hit), h, req)
	if err != nil {
		return explainError(w, err)
	}
	w.Header().Set("X-Explain-Cache", map[bool]string{true: "hit", false: "miss"}[hit])
	if a, ok := v.(interface{ Header() *explain.About }); ok && !hit {
		w.Header().Set("Server-Timing", fmt.Sprintf("explain;dur=%.1f", 1000*a.Header().Seconds))
	}
	return writeJSON(w, http.StatusOK, v)
}

// explainError maps the engine's errors onto statuses: too few trials is a
// conflict with the study's state, a bad request a 400, a full engine a 503
// with Retry-After.
func explainError(w http.ResponseWriter, err error) error {
	switch {
	case errors.Is(err, history.ErrTooFew):
		return &httpError{http.StatusConflict, err}
	case errors.Is(err, explain.ErrInvalid):
		return &httpError{http.StatusBadRequest, err}
	case errors.Is(err, explain.ErrBusy), errors.Is(err, explain.ErrClosed):
		w.Header().Set("Retry-After", "5")
		return &httpError{http.StatusServiceUnavailable, err}
	}
	return err
}

// explainStatus serves GET /api/explain/status: the explanations computing
// or waiting in this process, with their progress.
func (s *Server) explainStatus(w http.ResponseWriter, r *http.Request) error {
	cfg := s.engine.Config()
	return writeJSON(w, http.StatusOK, map[string]any{"computing": s.engine.InFlight(),
		"concurrency": cfg.Concurrency, "queue": cfg.Queue})
}

// historyCache keeps the latest history read of each study with the study's
// fingerprint (store.Study.Fingerprint), so repeated explanations of an
// unchanged study do not read and decode every trial again.
type historyCache struct {
	mu      sync.Mutex
	entries map[string]historyEntry
}

type historyEntry struct {
	fingerprint string
	h           *history.History
}

// maxCachedHistories bounds the studies whose history is kept.
const maxCachedHistories = 64

// history returns the study's history, read again only when the study changed.
func (s *Server) history(r *http.Request, name string) (*history.History, error) {
	st, err := s.st.Study(r.Context(), name)
	if err != nil {
		return nil, err
	}
	c := &s.histories
	c.mu.Lock()
	e, ok := c.entries[name]
	c.mu.Unlock()
	if ok && e.fingerprint == st.Fingerprint {
		return e.h, nil
	}
	trials, _, err := s.st.Trials(r.Context(), name, store.TrialQuery{})
	if err != nil {
		return nil, err
	}
	h, err := store.ToHistory(st, trials)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxCachedHistories {
		c.entries = map[string]historyEntry{}
	}
	c.entries[name] = historyEntry{fingerprint: st.Fingerprint, h: h}
	c.mu.Unlock()
	return h, nil
}

// Drain ends the server's long requests before a shutdown: it cancels every
// explanation computing (their requests answer 503, and new ones too) and
// ends the event streams, so http.Server.Shutdown waits only for short
// requests such as asks and tells.
func (s *Server) Drain() {
	s.drainOnce.Do(func() {
		s.engine.Close()
		close(s.draining)
	})
}
