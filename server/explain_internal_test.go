package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"xbo/explain"
	"xbo/history"
	"xbo/store"
)

func TestExplainErrorStatuses(t *testing.T) {
	cases := []struct {
		err        error
		status     int
		retryAfter string
	}{
		{fmt.Errorf("%w: %w", explain.ErrInvalid, history.ErrTooFew), http.StatusConflict, ""},
		{fmt.Errorf("%w: grid 500", explain.ErrInvalid), http.StatusBadRequest, ""},
		{fmt.Errorf("%w: 17 running", explain.ErrBusy), http.StatusServiceUnavailable, "5"},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		err := explainError(w, c.err)
		if got := statusOf(err); got != c.status || w.Header().Get("Retry-After") != c.retryAfter {
			t.Errorf("%v: status %d Retry-After %q, want %d %q", c.err, got, w.Header().Get("Retry-After"), c.status, c.retryAfter)
		}
	}
}

// A full store answers 507 with the store's plain message, not an
// "internal error".
func TestStorageFullStatus(t *testing.T) {
	err := fmt.Errorf("store: tell trial 3: %w (%w)", store.ErrStorageFull, errors.New("database or disk is full (13)"))
	if got := statusOf(err); got != http.StatusInsufficientStorage {
		t.Errorf("status %d, want 507", got)
	}
	w := httptest.NewRecorder()
	writeError(w, statusOf(err), err)
	if body := w.Body.String(); strings.Contains(body, "internal error") || !strings.Contains(body, "disk is full: free space, then retry") {
		t.Errorf("body %s", body)
	}
}
