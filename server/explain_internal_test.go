package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"xbo/explain"
	"xbo/history"
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
