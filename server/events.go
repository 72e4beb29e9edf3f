package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"xbo/store"
)

// notifier wakes event streams when a study changes in this process.
func (s *Server) changed(study string) {
	s.mu.Lock()
	if ch, ok := s.notify[study]; ok {
		close(ch)
		delete(s.notify, study)
	}
	s.mu.Unlock()
}

func (s *Server) waitChange(study string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.notify[study]
	if !ok {
		ch = make(chan struct{})
		s.notify[study] = ch
	}
	return ch
}

// Events is the response of GET /api/studies/{study}/events: the trials
// changed after version Since, and the version to poll from next. A trial
// may be delivered more than once (see store.Store.Events); clients keep the
// latest copy of each trial number.
type Events struct {
	Since   int64         `json:"since"`
	Version int64         `json:"version"`
	Trials  []store.Trial `json:"trials"`
}

func (s *Server) eventsSince(ctx context.Context, study string, since int64) (Events, error) {
	if since > 0 {
		// A cursor beyond the study's version (a client that outlived a
		// restored or recreated store) would otherwise wait for versions
		// that come late or never: it starts over from 0, and Since says so.
		st, err := s.st.Study(ctx, study)
		if err != nil {
			return Events{}, err
		}
		if since > st.Version {
			since = 0
		}
	}
	trials, next, err := s.st.Events(ctx, study, since, s.now())
	if err != nil {
		return Events{}, err
	}
	if trials == nil {
		trials = []store.Trial{}
	}
	return Events{Since: since, Version: next, Trials: trials}, nil
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	since := int64(0)
	text := r.URL.Query().Get("since")
	if text == "" {
		text = r.Header.Get("Last-Event-ID")
	}
	if text != "" {
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil || v < 0 {
			return badRequest("since=%q must be a version number ≥ 0", text)
		}
		since = v
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		ev, err := s.eventsSince(r.Context(), name, since)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, ev)
	}
	// Server-sent events: one "trials" event per batch of changes. Changes
	// made by this process wake the stream at once; those of other server
	// processes are picked up by polling every two seconds.
	if _, err := s.st.Study(r.Context(), name); err != nil {
		return err
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming is not supported by this connection")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	for {
		wake := s.waitChange(name)
		ev, err := s.eventsSince(r.Context(), name, since)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				fmt.Fprintf(w, "event: deleted\ndata: {}\n\n")
				flusher.Flush()
			}
			return nil
		}
		if len(ev.Trials) > 0 {
			body, _ := json.Marshal(ev)
			fmt.Fprintf(w, "event: trials\nid: %d\ndata: %s\n\n", ev.Version, body)
			flusher.Flush()
			since = ev.Version
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-s.draining:
			return nil // the client reconnects to another (or the restarted) server
		case <-wake:
		case <-time.After(2 * time.Second):
		}
	}
}
