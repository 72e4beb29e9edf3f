package server

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"xbo/store"
)

// storeRetryAfter is the Retry-After of a 503 during a store outage: short,
// since PostgreSQL restarts and SQLite locks pass in seconds, and the
// clients back off further on their own when it lasts.
const storeRetryAfter = 2 * time.Second

// outage follows the store's availability across requests, so that an
// outage is logged twice (when it starts and when it ends) however many
// requests it refuses: a log line per request would bury everything else
// under thousands of identical errors while the database restarts.
type outage struct {
	down atomic.Bool // fast path: most requests only read this

	mu      sync.Mutex
	since   time.Time
	refused int
}

// failed records a request (or background task) that found the store
// unavailable, and logs the outage's start.
func (o *outage) failed(log *slog.Logger, now time.Time, what string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refused++
	if o.down.Load() {
		return
	}
	o.down.Store(true)
	o.since = now
	log.Warn("store unavailable: answering 503 with Retry-After until it is back", "during", what, "err", err)
}

// reached records a request that reached the store, and logs the end of an
// outage with its length and the requests it refused.
func (o *outage) reached(log *slog.Logger, now time.Time) {
	if !o.down.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.down.Load() {
		return
	}
	o.down.Store(false)
	log.Warn("store available again", "after", now.Sub(o.since).Round(time.Millisecond), "refused", o.refused)
	o.refused = 0
}

// unavailable answers a request during an outage: 503 with Retry-After and
// a message that does not repeat the driver's (it names the database's
// host and user; the log has it).
func unavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(storeRetryAfter/time.Second)))
	writeError(w, http.StatusServiceUnavailable, store.ErrUnavailable)
}
