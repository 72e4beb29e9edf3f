package server

import (
	"net/http"

	"xbo/store"
)

// NoteRequest is the body of PUT /api/studies/{study}/note and PUT
// /api/studies/{study}/trials/{trial}/note: the note that replaces the
// stored one ("" clears it). Note is a pointer so that a body without it
// is refused rather than read as a clear.
type NoteRequest struct {
	Note *string `json:"note"`
}

func decodeNote(r *http.Request) (string, error) {
	var req NoteRequest
	if err := decode(r, &req, false); err != nil {
		return "", err
	}
	if req.Note == nil {
		return "", badRequest(`note is missing (send {"note": ""} to clear it)`)
	}
	if err := store.CheckNote(*req.Note); err != nil {
		return "", badRequest("%v", err)
	}
	return *req.Note, nil
}

// setStudyNote answers with the study. No change is announced to event
// streams: they carry trials' changes, and a note changes none.
func (s *Server) setStudyNote(w http.ResponseWriter, r *http.Request) error {
	note, err := decodeNote(r)
	if err != nil {
		return err
	}
	st, err := s.st.SetStudyNote(r.Context(), r.PathValue("study"), note)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

// setTrialNote answers with the trial, whose version is unchanged.
func (s *Server) setTrialNote(w http.ResponseWriter, r *http.Request) error {
	num, err := trialNumber(r)
	if err != nil {
		return err
	}
	note, err := decodeNote(r)
	if err != nil {
		return err
	}
	t, err := s.st.SetTrialNote(r.Context(), r.PathValue("study"), num, note)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}
