package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"xbo/client"
	"xbo/store"
	"xbo/store/storetest"
)

// keyedAsk sends POST …/ask with the given Idempotency-Key values and
// returns the status, the trial (on 200), whether the answer says it was
// replayed, and the error message otherwise.
func keyedAsk(t *testing.T, e *env, study, worker string, keys ...string) (int, client.Trial, bool, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.http.URL+"/api/studies/"+study+"/ask", strings.NewReader(fmt.Sprintf(`{"worker":%q}`, worker)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for _, k := range keys {
		req.Header.Add("Idempotency-Key", k)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var tr client.Trial
	var msg struct {
		Error string `json:"error"`
	}
	if resp.StatusCode == 200 {
		if err := json.Unmarshal(body, &tr); err != nil {
			t.Fatal(err)
		}
	} else {
		json.Unmarshal(body, &msg)
	}
	return resp.StatusCode, tr, resp.Header.Get("Idempotent-Replayed") == "true", msg.Error
}

// An ask repeated with its Idempotency-Key gets the trial the first one got,
// concurrent repetitions included; other keys get other trials; a key sent
// with another study, another worker, or after its trial finished is
// refused with a 422 that says why.
func TestIdempotentAsks(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, time.Hour)
		createStudy(t, e, "s", `{"strategy":"random","seed":5}`)
		createStudy(t, e, "o", `{"strategy":"random","seed":6}`)
		ctx := context.Background()

		code, a, replayed, msg := keyedAsk(t, e, "s", "w1", "key-1")
		if code != 200 || replayed || a.State != "running" || a.Worker != "w1" {
			t.Fatalf("first ask: %d %+v replayed=%v %s", code, a, replayed, msg)
		}
		code, again, replayed, msg := keyedAsk(t, e, "s", "w1", "key-1")
		if code != 200 || !replayed || again.Number != a.Number || !paramsEqual(again.Params, a.Params) {
			t.Fatalf("repeated ask: %d trial %d replayed=%v %s; want trial %d replayed", code, again.Number, replayed, msg, a.Number)
		}
		if code, text := raw(t, e, "GET", "/metrics", "", false); code != 200 || !strings.Contains(text, "xbo_ask_replays_total 1\n") {
			t.Errorf("metrics after one replay: %d, want xbo_ask_replays_total 1", code)
		}
		code, b, replayed, _ := keyedAsk(t, e, "s", "w1", "key-2")
		if code != 200 || replayed || b.Number == a.Number {
			t.Fatalf("ask with another key: %d trial %d replayed=%v, first was %d", code, b.Number, replayed, a.Number)
		}
		for _, c := range []struct {
			name, study, worker string
			keys                []string
			status              int
			says                string
		}{
			{"another study", "o", "w1", []string{"key-1"}, 422, "another study"},
			{"another worker", "s", "w2", []string{"key-1"}, 422, `worker "w1", not "w2"`},
			{"key with a space", "s", "w1", []string{"a b"}, 400, "printable ASCII"},
			{"empty key", "s", "w1", []string{""}, 400, "1 to 200 characters"},
			{"two keys", "s", "w1", []string{"k", "l"}, 400, "given 2 times"},
		} {
			code, _, _, msg := keyedAsk(t, e, c.study, c.worker, c.keys...)
			if code != c.status || !strings.Contains(msg, c.says) {
				t.Errorf("%s: %d %q, want %d saying %q", c.name, code, msg, c.status, c.says)
			}
		}
		if err := e.c.Tell(ctx, "s", a.Number, 1.5); err != nil {
			t.Fatal(err)
		}
		if code, _, _, msg := keyedAsk(t, e, "s", "w1", "key-1"); code != 422 || !strings.Contains(msg, "complete now") {
			t.Errorf("key of a finished trial: %d %q, want 422", code, msg)
		}

		// Concurrent repetitions of one ask get one trial; concurrent asks
		// with their own keys get one each.
		const n = 8
		var wg sync.WaitGroup
		same := make([]int64, n)
		own := make([]int64, n)
		for i := range n {
			wg.Add(2)
			go func() {
				defer wg.Done()
				code, tr, _, msg := keyedAsk(t, e, "s", "w3", "shared")
				if code != 200 {
					t.Errorf("shared key: %d %s", code, msg)
				}
				same[i] = tr.Number
			}()
			go func() {
				defer wg.Done()
				code, tr, _, msg := keyedAsk(t, e, "s", "w4", fmt.Sprintf("own-%d", i))
				if code != 200 {
					t.Errorf("own key: %d %s", code, msg)
				}
				own[i] = tr.Number
			}()
		}
		wg.Wait()
		distinct := map[int64]bool{}
		for i := range n {
			if same[i] != same[0] {
				t.Errorf("asks with one key got trials %v", same)
				break
			}
			distinct[own[i]] = true
		}
		if len(distinct) != n || distinct[same[0]] {
			t.Errorf("asks with their own keys got trials %v (the shared key got %d)", own, same[0])
		}
		all, err := e.c.Trials(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2+1+n {
			t.Errorf("%d trials stored, want %d (a, b, one for the shared key, %d own)", len(all), 3+n, n)
		}
	})
}

// failingProxy stands between a client and the server and spoils the first
// requests of each kind it is told to: "lost" forwards the request and
// answers 502 instead of the server's answer (the server acted; the client
// cannot know), "reset" forwards it and closes the connection without an
// answer, "refused" answers 503 without forwarding.
type failingProxy struct {
	target string
	mu     sync.Mutex
	plan   map[string][]string // path suffix → failures to inflict, in order
	seen   atomic.Int64        // requests that reached the proxy
}

func (p *failingProxy) next(path string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for suffix, fails := range p.plan {
		if strings.HasSuffix(path, suffix) && len(fails) > 0 {
			p.plan[suffix] = fails[1:]
			return fails[0]
		}
	}
	return ""
}

func (p *failingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.seen.Add(1)
	fail := p.next(r.URL.Path)
	if fail == "refused" {
		http.Error(w, `{"error":"injected: service unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch fail {
	case "lost":
		http.Error(w, `{"error":"injected: bad gateway"}`, http.StatusBadGateway)
		return
	case "reset":
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
}

// The Go client retries asks and tells through lost answers, resets and
// 503s: each ask ends with the trial the server handed out for it (no
// trial is left running for nobody) and each tell is stored once.
func TestClientRetriesThroughFailures(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, time.Hour)
		createStudy(t, e, "s", `{"strategy":"random","seed":8}`)
		proxy := &failingProxy{target: e.http.URL, plan: map[string][]string{
			"/ask":  {"lost", "reset", "refused", "lost", "", "lost", "", "reset"},
			"/tell": {"lost", "reset", "", "refused", "lost"},
		}}
		ps := httptest.NewServer(proxy)
		t.Cleanup(ps.Close)
		c := client.New(ps.URL, client.WithToken(token), client.WithWorker("retrier"), client.WithRetries(6, time.Millisecond))
		ctx := context.Background()
		const n = 5
		if err := c.Optimize(ctx, "s", n, func(ctx context.Context, tr *client.Trial) (float64, error) {
			return evalBranin(tr)
		}); err != nil {
			t.Fatal(err)
		}
		all, err := e.c.Trials(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != n {
			t.Errorf("%d trials stored for %d asks: %+v", len(all), n, all)
		}
		for _, tr := range all {
			if tr.State != "complete" || tr.Worker != "retrier" {
				t.Errorf("trial %d is %s (worker %q), want complete by retrier", tr.Number, tr.State, tr.Worker)
			}
		}
		if left := proxy.next("/ask") + proxy.next("/tell"); left != "" {
			t.Errorf("the proxy still had failures to inflict (%q): the test did not exercise them", left)
		}
		// 6 spoiled asks and 4 spoiled tells, each repeated.
		if got := proxy.seen.Load(); got != n*2+10 {
			t.Errorf("%d requests reached the proxy, want %d (every failure retried once)", got, n*2+10)
		}
		open, _, err := st.Trials(ctx, "s", store.TrialQuery{States: []store.State{store.Running, store.Pending}})
		if err != nil {
			t.Fatal(err)
		}
		if len(open) != 0 {
			t.Errorf("trials left running or pending: %+v", open)
		}
	})
}
