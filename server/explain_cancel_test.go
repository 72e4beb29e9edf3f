package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"syscall"
	"testing"
	"time"

	"xbo/client"
	"xbo/store/storetest"
)

// cpuTime is the process's user plus system CPU time.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A client that disconnects mid-computation leaves the server idle within a
// second: the explanation stops (the status endpoint lists nothing) and the
// process uses (almost) no CPU afterwards.
func TestExplanationStopsWhenClientLeaves(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "s", `{"strategy":"random","seed":4}`)
	if err := e.c.Optimize(ctx, "s", 300, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
		t.Fatal(err)
	}
	// Fit the surrogate first (the request below then spends its time on
	// grid points, where it checks for cancellation).
	if code, body := raw(t, e, "GET", "/api/studies/s/explain/pdp?param=x&samples=50", "", false); code != 200 {
		t.Fatalf("warm-up: %d %s", code, body)
	}
	// The largest two-parameter PDP the limits allow: about 3 s of work
	// on this machine.
	heavy := e.http.URL + "/api/studies/s/explain/pdp?param=x&param=y&grid=50&samples=160"
	rctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(rctx, "GET", heavy, nil)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	status := func() int {
		code, body := raw(t, e, "GET", "/api/explain/status", "", false)
		var s struct {
			Computing []json.RawMessage `json:"computing"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &s) != nil {
			t.Fatalf("status: %d %s", code, body)
		}
		return len(s.Computing)
	}
	for deadline := time.Now().Add(10 * time.Second); status() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the heavy explanation never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // well into the computation
	cancel()
	left := time.Now()
	<-done
	for status() > 0 {
		if time.Since(left) > time.Second {
			t.Fatal("the explanation was still computing 1 s after its client left")
		}
		time.Sleep(5 * time.Millisecond)
	}
	idleAfter := time.Since(left)
	before := cpuTime(t)
	time.Sleep(500 * time.Millisecond)
	used := cpuTime(t) - before
	t.Logf("idle %v after the client left; CPU over the next 500 ms: %v", idleAfter, used)
	if used > 100*time.Millisecond {
		t.Fatalf("the process used %v of CPU in the 500 ms after the explanation stopped", used)
	}
}
