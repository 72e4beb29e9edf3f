package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"xbo/opt"
	"xbo/prune"
	"xbo/space"
	"xbo/store"
)

// StudyRequest is the body of POST /api/studies.
type StudyRequest struct {
	Name      string          `json:"name"`
	Space     json.RawMessage `json:"space"`
	Optimizer json.RawMessage `json:"optimizer,omitempty"`
	Pruner    json.RawMessage `json:"pruner,omitempty"`
}

// NewStudyRecord validates a study request (the space, the optimizer
// configuration by building an optimizer from it, and the pruner
// configuration of package prune), picks a seed when none is given, and
// returns what the store keeps: the pruner with every setting written out.
// Errors wrap store.ErrInvalid.
func NewStudyRecord(name string, spaceDoc, optimizer, pruner json.RawMessage, now time.Time) (store.NewStudy, error) {
	if strings.TrimSpace(name) == "" {
		return store.NewStudy{}, fmt.Errorf("%w: study name is missing", store.ErrInvalid)
	}
	if len(bytes.TrimSpace(spaceDoc)) == 0 {
		return store.NewStudy{}, fmt.Errorf("%w: space is missing", store.ErrInvalid)
	}
	sp, err := space.Parse(spaceDoc)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	cfg, err := opt.ParseSettings(optimizer)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if cfg.Seed == nil {
		seed := rand.Uint64() >> 11 // exact in JSON numbers read as float64
		cfg.Seed = &seed
	}
	if _, err := cfg.New(sp, nil, 0); err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if sp.MultiObjective() || len(sp.Constraints) > 0 {
		if _, err := cfg.NewMultiObjective(sp, nil, 0); err != nil {
			return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
		}
	}
	pr, err := prune.Parse(pruner)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if pr.Type != prune.None && sp.MultiObjective() {
		return store.NewStudy{}, fmt.Errorf("%w: a pruner compares one objective's intermediate values; a study with %d objectives has no single curve to prune on", store.ErrInvalid, sp.NumObjectives())
	}
	if pr.Type == prune.Model && cfg.Resource == nil {
		return store.NewStudy{}, fmt.Errorf("%w: the model pruner asks the optimizer's configuration × budget model: name the resource in the optimizer settings, e.g. \"resource\": {\"name\": \"epochs\", \"min\": 1, \"max\": 81}", store.ErrInvalid)
	}
	prJSON, err := json.Marshal(pr)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("encode pruner: %w", err)
	}
	// Keep the document as written (compacted): it is what the user knows,
	// and it parses back to the same space.
	spaceJSON, err := space.DocumentJSON(spaceDoc)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if _, err := space.Parse(spaceJSON); err != nil {
		return store.NewStudy{}, fmt.Errorf("space does not survive a round trip: %w", err)
	}
	optJSON, err := json.Marshal(cfg)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("encode optimizer: %w", err)
	}
	return store.NewStudy{Name: name, Direction: string(sp.Objective), Space: spaceJSON, Optimizer: optJSON, Pruner: prJSON, Now: now}, nil
}

func (s *Server) createStudy(w http.ResponseWriter, r *http.Request) error {
	var req StudyRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	ns, err := NewStudyRecord(req.Name, req.Space, req.Optimizer, req.Pruner, s.now())
	if err != nil {
		return err
	}
	st, err := s.st.CreateStudy(r.Context(), ns)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, st)
}

func (s *Server) listStudies(w http.ResponseWriter, r *http.Request) error {
	list, err := s.st.Studies(r.Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []store.StudySummary{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"studies": list})
}

func (s *Server) getStudy(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	list, err := s.st.Studies(r.Context())
	if err != nil {
		return err
	}
	for _, st := range list {
		if st.Name == name {
			return writeJSON(w, http.StatusOK, st)
		}
	}
	return fmt.Errorf("study %q: %w", name, store.ErrNotFound)
}

func (s *Server) deleteStudy(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	if err := s.st.DeleteStudy(r.Context(), name); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.caches, name)
	delete(s.pruners, name)
	delete(s.decisions, name)
	s.mu.Unlock()
	s.changed(name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
