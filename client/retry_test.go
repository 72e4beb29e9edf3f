package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"xbo/client"
	"xbo/server"
	"xbo/store"
)

// outageServer is a real server behind a switch: while down, every request
// is answered 503 with the given Retry-After (none when ""), as the server
// answers during a store outage; the requests that got a 503 are counted,
// with the time of each.
type outageServer struct {
	*httptest.Server
	st store.Store

	mu         sync.Mutex
	downUntil  time.Time
	retryAfter string
	refused    []time.Time
	served     atomic.Int64
}

func newOutageServer(t *testing.T) *outageServer {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "xbo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	o := &outageServer{st: st}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		down := time.Now().Before(o.downUntil)
		if down {
			o.refused = append(o.refused, time.Now())
		}
		ra := o.retryAfter
		o.mu.Unlock()
		if down {
			if ra != "" {
				w.Header().Set("Retry-After", ra)
			}
			http.Error(w, `{"error":"store unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		o.served.Add(1)
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *outageServer) down(d time.Duration, retryAfter string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.downUntil, o.retryAfter, o.refused = time.Now().Add(d), retryAfter, nil
}

func (o *outageServer) refusals() []time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]time.Time(nil), o.refused...)
}

// A tell during a 3.5 s outage whose 503s say Retry-After: 1 lands once it
// ends (the former budget of 5 retries gave up after about 3 s), and the
// client waits the second the server asks for between attempts instead of
// its own 10 ms backoff.
func TestTellRidesOutAnOutageHonouringRetryAfter(t *testing.T) {
	o := newOutageServer(t)
	ctx := context.Background()
	c := client.New(o.URL, client.WithRetries(-1, 10*time.Millisecond))
	if c.RetryFor() != client.DefaultRetryFor || client.DefaultRetryFor < time.Minute {
		t.Fatalf("default retry window %v, want at least a minute", c.RetryFor())
	}
	if _, err := c.CreateStudy(ctx, client.StudySpec{Name: "s", Space: json.RawMessage(spaceDoc)}); err != nil {
		t.Fatal(err)
	}
	tr, err := c.Ask(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	const outage = 3500 * time.Millisecond
	o.down(outage, "1")
	start := time.Now()
	if err := c.Tell(ctx, "s", tr.Number, 0.25); err != nil {
		t.Fatalf("tell across a %v outage: %v", outage, err)
	}
	if took := time.Since(start); took < outage {
		t.Fatalf("the tell succeeded after %v, inside the outage", took)
	}
	got, err := o.st.Trial(ctx, "s", tr.Number)
	if err != nil || got.Value == nil || *got.Value != 0.25 {
		t.Fatalf("stored: %+v %v", got, err)
	}
	refused := o.refusals()
	if len(refused) > 5 {
		t.Fatalf("%d attempts during a %v outage with Retry-After: 1 (want one a second)", len(refused), outage)
	}
	for i := 1; i < len(refused); i++ {
		if gap := refused[i].Sub(refused[i-1]); gap < 990*time.Millisecond {
			t.Fatalf("attempt %d came %v after the one before, not the second Retry-After asked for", i, gap)
		}
	}
}

// The retry window is kept exactly, whatever the jitter draws: a request
// that keeps failing is last tried at the window's end (not before it, and
// not a doubled backoff after it), and then its error is returned.
func TestRetryWindowIsKept(t *testing.T) {
	o := newOutageServer(t)
	const window = 1500 * time.Millisecond
	c := client.New(o.URL, client.WithRetryFor(window), client.WithRetries(-1, 700*time.Millisecond))
	o.down(time.Hour, "")
	start := time.Now()
	_, err := c.Study(context.Background(), "s")
	took := time.Since(start)
	if !client.IsStatus(err, http.StatusServiceUnavailable) || !client.IsOutage(err) {
		t.Fatalf("after the window: %v, want the 503", err)
	}
	refused := o.refusals()
	if last := refused[len(refused)-1].Sub(start); last < window || took > window+time.Second {
		t.Fatalf("last attempt %v after the first, gave up after %v; want the last at the window's end (%v)", last, took, window)
	}

	// A 4xx is no outage: it is returned at once.
	o.down(0, "")
	start = time.Now()
	if _, err := c.Study(context.Background(), "absent"); !client.IsStatus(err, http.StatusNotFound) || client.IsOutage(err) || time.Since(start) > window/2 {
		t.Fatalf("a 404: %v after %v", err, time.Since(start))
	}

	// WithRetryFor(0) turns retries off.
	o.down(time.Hour, "")
	if _, err := client.New(o.URL, client.WithRetryFor(0)).Study(context.Background(), "s"); err == nil || len(o.refusals()) != 1 {
		t.Fatalf("no retries: %v after %d attempts", err, len(o.refusals()))
	}
}
