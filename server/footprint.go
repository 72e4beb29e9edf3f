package server

import (
	"net/http"

	"xbo/explain"
)

// footprint serves GET /api/studies/{study}/explain/footprint: the map of
// the configurations the study evaluated (explain.Footprint), for the
// dashboard's footprint panel. It is not one of the engine's kinds: it
// fits no surrogate, takes no query, costs one principal component
// analysis of the usable trials' encodings, and so needs neither the
// engine's cache nor its queue.
func (s *Server) footprint(w http.ResponseWriter, r *http.Request) error {
	h, err := s.history(r, r.PathValue("study"))
	if err != nil {
		return err
	}
	res, err := explain.Footprint(h)
	if err != nil {
		return explainError(w, err)
	}
	return writeJSON(w, http.StatusOK, res)
}
