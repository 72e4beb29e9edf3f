package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"sync"

	"xbo/gp"
	"xbo/space"
	"xbo/store"
	"xbo/surrogate"
)

// Explainer is the hook through which the explanation packages serve
// GET /api/studies/{study}/explain/{kind}. Explain returns a value that
// marshals to the JSON the dashboard and report share. Errors wrapping
// ErrBadExplainRequest become 400 responses, ErrNotImplemented 501.
type Explainer interface {
	Explain(ctx context.Context, in *ExplainInput) (any, error)
}

// ExplainerFunc adapts a function to Explainer.
type ExplainerFunc func(ctx context.Context, in *ExplainInput) (any, error)

// Explain calls f.
func (f ExplainerFunc) Explain(ctx context.Context, in *ExplainInput) (any, error) { return f(ctx, in) }

// Errors an Explainer may wrap.
var (
	ErrBadExplainRequest = errors.New("bad explanation request")
	ErrNotImplemented    = errors.New("not implemented")
)

// ExplainInput is what an explainer gets: the study, its space, its complete
// trials, the query string, and a surrogate fitted on demand.
type ExplainInput struct {
	Study  *store.Study
	Space  *space.Space
	Trials []store.Trial // complete trials, in number order
	// X and Y are the complete trials in unit-cube encoding and their values
	// in the objective's own units (not sign-flipped).
	X     [][]float64
	Y     []float64
	Query url.Values
	// Lookup reads any trial of the study (e.g. a running proposal).
	Lookup func(number int64) (*store.Trial, error)
	// All reads every trial of the study (any state), in number order.
	All func() ([]store.Trial, error)

	once  sync.Once
	model surrogate.Model
	err   error
}

// MinTrials is the fewest complete trials an explanation needs.
const MinTrials = 3

// GP returns a Gaussian process fitted to X, Y (Matérn 5/2, three restarts,
// fixed seed), computed once per request.
func (in *ExplainInput) GP() (surrogate.Model, error) {
	in.once.Do(func() {
		g, err := gp.Fit(in.X, in.Y, gp.Options{Kernel: gp.Matern52, Levels: in.Space.Levels(), Restarts: 3, Seed: 1})
		if err != nil {
			in.err = fmt.Errorf("fit GP surrogate: %w", err)
			return
		}
		in.model = g
	})
	return in.model, in.err
}

// BestU is the best complete trial in unit encoding (nil when none).
func (in *ExplainInput) BestU() []float64 {
	best := -1
	sign := in.Space.Sign()
	for i, y := range in.Y {
		if best < 0 || sign*y < sign*in.Y[best] {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return in.X[best]
}

// ExplainKinds lists the explanation kinds the API names; kinds without an
// Explainer answer 501.
var ExplainKinds = []string{"pdp", "importance", "regional", "shapley", "paths"}

func (s *Server) explain(w http.ResponseWriter, r *http.Request) error {
	name, kind := r.PathValue("study"), r.PathValue("kind")
	e, ok := s.explainers[kind]
	if !ok {
		known := slices.Clone(ExplainKinds)
		for k := range s.explainers {
			if !slices.Contains(known, k) {
				known = append(known, k)
			}
		}
		sort.Strings(known)
		if !slices.Contains(ExplainKinds, kind) {
			return &httpError{http.StatusNotFound, fmt.Errorf("unknown explanation kind %q (known: %v)", kind, known)}
		}
		return &httpError{http.StatusNotImplemented, fmt.Errorf("explanation %q is not available in this build yet", kind)}
	}
	st, err := s.st.Study(r.Context(), name)
	if err != nil {
		return err
	}
	// Explanations are deterministic functions of the study's trials and
	// the query: one computed for the same trial state is served again.
	key := name + "\x00" + kind + "\x00" + r.URL.Query().Encode()
	if body, ok := s.explained.get(key, st.Fingerprint); ok {
		w.Header().Set("X-Explain-Cache", "hit")
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
		return nil
	}
	sp, err := space.Parse(st.Space)
	if err != nil {
		return fmt.Errorf("stored space of %q: %w", name, err)
	}
	trials, _, err := s.st.Trials(r.Context(), name, store.TrialQuery{States: []store.State{store.Complete}})
	if err != nil {
		return err
	}
	if len(trials) < MinTrials {
		return &httpError{http.StatusConflict, fmt.Errorf("study %q has %d complete trials; explanations need at least %d", name, len(trials), MinTrials)}
	}
	ctx := r.Context()
	in := &ExplainInput{Study: st, Space: sp, Trials: trials, Query: r.URL.Query(),
		Lookup: func(number int64) (*store.Trial, error) { return s.st.Trial(ctx, name, number) },
		All: func() ([]store.Trial, error) {
			all, _, err := s.st.Trials(ctx, name, store.TrialQuery{})
			return all, err
		}}
	for _, t := range trials {
		vals, err := sp.FromMap(t.Params)
		if err != nil {
			return fmt.Errorf("trial %d: %w", t.Number, err)
		}
		u, err := sp.Encode(vals)
		if err != nil {
			return fmt.Errorf("trial %d: %w", t.Number, err)
		}
		in.X = append(in.X, u)
		in.Y = append(in.Y, *t.Value)
	}
	out, err := e.Explain(r.Context(), in)
	switch {
	case errors.Is(err, ErrBadExplainRequest):
		return &httpError{http.StatusBadRequest, err}
	case errors.Is(err, ErrNotImplemented):
		return &httpError{http.StatusNotImplemented, err}
	case err != nil:
		return fmt.Errorf("explain %s: %w", kind, err)
	}
	body, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("explain %s: encode: %w", kind, err)
	}
	body = append(body, '\n')
	// Stored under the fingerprint read before the trials: if they changed
	// meanwhile, later requests see a newer fingerprint and miss.
	s.explained.put(key, st.Fingerprint, body)
	w.Header().Set("X-Explain-Cache", "miss")
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
	return nil
}

// explainCache keeps the latest explanations, each with the fingerprint
// (store.Study.Fingerprint) of the trials it was computed from, so that a
// dashboard showing the same views again does not refit a surrogate while
// nothing changed. Any change of any trial (ask, tell, report, expiry,
// release, in this process or another one sharing the database) changes the
// fingerprint, and the next request recomputes. Entries are evicted oldest
// first beyond explainCacheEntries or explainCacheBytes.
type explainCache struct {
	mu      sync.Mutex
	entries map[string]explainEntry
	order   []string // keys, oldest first
	bytes   int
}

type explainEntry struct {
	fingerprint string
	body        []byte
}

const (
	explainCacheEntries = 256
	explainCacheBytes   = 64 << 20
)

func (c *explainCache) get(key, fingerprint string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.fingerprint != fingerprint {
		return nil, false
	}
	return e.body, true
}

func (c *explainCache) put(key, fingerprint string, body []byte) {
	if len(body) > explainCacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]explainEntry{}
	}
	if old, ok := c.entries[key]; ok {
		c.bytes -= len(old.body)
	} else {
		c.order = append(c.order, key)
	}
	c.entries[key] = explainEntry{fingerprint, body}
	c.bytes += len(body)
	for len(c.order) > explainCacheEntries || c.bytes > explainCacheBytes {
		oldest := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.entries[oldest].body)
		delete(c.entries, oldest)
	}
}
