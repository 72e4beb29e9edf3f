package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"xbo/client"
	"xbo/server"
	"xbo/store"
	"xbo/store/storetest"
)

const token = "s3cret"

const space2D = `{"objective":"minimize","params":[
	{"name":"x","type":"float","low":-5,"high":10},
	{"name":"y","type":"float","low":0,"high":15}]}`

// clock is a settable time source for expiry tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type env struct {
	st    store.Store
	srv   *server.Server
	http  *httptest.Server
	c     *client.Client
	clock *clock
}

func newEnv(t testing.TB, st store.Store, timeout time.Duration) *env {
	t.Helper()
	clk := &clock{now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	srv, err := server.New(server.Config{Store: st, Token: token, TrialTimeout: timeout, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &env{st: st, srv: srv, http: hs, clock: clk,
		c: client.New(hs.URL, client.WithToken(token), client.WithWorker("test"), client.WithRetries(0, 0))}
}

func forBackends(t *testing.T, f func(t *testing.T, backend string)) {
	for _, b := range []string{"sqlite", "postgres"} {
		t.Run(b, func(t *testing.T) { f(t, b) })
	}
}

func createStudy(t testing.TB, e *env, name, optimizer string) {
	t.Helper()
	spec := client.StudySpec{Name: name, Space: json.RawMessage(space2D)}
	if optimizer != "" {
		spec.Optimizer = json.RawMessage(optimizer)
	}
	if _, err := e.c.CreateStudy(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
}

func branin(x, y float64) float64 {
	b := 5.1 / (4 * math.Pi * math.Pi)
	c := 5 / math.Pi
	return math.Pow(y-b*x*x+c*x-6, 2) + 10*(1-1/(8*math.Pi))*math.Cos(x) + 10
}

func evalBranin(t *client.Trial) (float64, error) {
	x, err := t.Float("x")
	if err != nil {
		return 0, err
	}
	y, err := t.Float("y")
	if err != nil {
		return 0, err
	}
	return branin(x, y), nil
}

// raw sends a request and returns status and body.
func raw(t *testing.T, e *env, method, path, body string, auth bool) (int, string) {
	t.Helper()
	code, b, err := rawErr(e, method, path, body, auth)
	if err != nil {
		t.Fatal(err)
	}
	return code, b
}

// rawErr is raw returning the request's error.
func rawErr(e *env, method, path, body string, auth bool) (int, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.http.URL+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// dump is every study and trial as stored, to check that rejected requests
// changed nothing.
func dump(t *testing.T, st store.Store) string {
	t.Helper()
	ctx := context.Background()
	list, err := st.Studies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, s := range list {
		trials, _, err := st.Trials(ctx, s.Name, store.TrialQuery{})
		if err != nil {
			t.Fatal(err)
		}
		json.NewEncoder(&b).Encode(s)
		json.NewEncoder(&b).Encode(trials)
	}
	return b.String()
}

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	code, body := raw(t, e, "GET", "/api/openapi.json", "", false)
	if code != 200 {
		t.Fatalf("openapi: %d", code)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	documented := 0
	opIDs := map[string]bool{}
	for _, route := range e.srv.Routes() {
		method, path, _ := strings.Cut(route, " ")
		ops, ok := doc.Paths[path]
		if !ok {
			t.Errorf("route %s: path not in openapi.json", route)
			continue
		}
		op, ok := ops[strings.ToLower(method)]
		if !ok {
			t.Errorf("route %s: method not in openapi.json", route)
			continue
		}
		// Client generators need a unique operationId on every operation,
		// and the token's scheme on every write.
		var o struct {
			OperationID string                `json:"operationId"`
			Security    []map[string][]string `json:"security"`
		}
		if err := json.Unmarshal(op, &o); err != nil || o.OperationID == "" || opIDs[o.OperationID] {
			t.Errorf("route %s: operationId %q missing or repeated (%v)", route, o.OperationID, err)
		}
		opIDs[o.OperationID] = true
		if method != "GET" && (len(o.Security) != 1 || o.Security[0]["bearer"] == nil) {
			t.Errorf("route %s: a write without the bearer security scheme", route)
		}
		documented++
	}
	// And nothing documented that is not served.
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			if !slices.Contains(e.srv.Routes(), strings.ToUpper(method)+" "+path) {
				t.Errorf("openapi.json documents %s %s, which is not served", method, path)
			}
		}
	}
	if documented < 15 {
		t.Fatalf("only %d routes", documented)
	}
}

// TestBadInput sends every kind of bad request named in the issue and checks
// status, a JSON error body, and that the store is unchanged.
func TestBadInput(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, time.Minute)
		ctx := context.Background()
		createStudy(t, e, "s", `{"strategy":"random","seed":3}`)
		t0, _ := e.c.Ask(ctx, "s")
		e.c.Ask(ctx, "s")
		if err := e.c.Tell(ctx, "s", t0.Number, 1.25); err != nil {
			t.Fatal(err)
		}
		big := `{"name":"` + strings.Repeat("a", 2<<20) + `"}`
		cases := []struct {
			name, method, path, body string
			auth                     bool
			status                   int
			msg                      string // regexp the error must match
		}{
			{"malformed create", "POST", "/api/studies", `{"name": "t", "space": `, true, 400, "malformed JSON"},
			{"create unknown field", "POST", "/api/studies", `{"name":"t","space":` + space2D + `,"budget":3}`, true, 400, "unknown field"},
			{"create bad space", "POST", "/api/studies", `{"name":"t","space":{"params":[{"name":"x","type":"float","low":2,"high":1}]}}`, true, 400, "low 2 must be below high 1"},
			{"create bad strategy", "POST", "/api/studies", `{"name":"t","space":` + space2D + `,"optimizer":{"strategy":"magic"}}`, true, 400, "unknown strategy"},
			{"create duplicate", "POST", "/api/studies", `{"name":"s","space":` + space2D + `}`, true, 409, "already exists"},
			{"create no name", "POST", "/api/studies", `{"space":` + space2D + `}`, true, 400, "name is missing"},
			{"tell plus number", "POST", "/api/studies/s/trials/+1/tell", `{"value": 1}`, true, 404, "not found"},
			{"tell zero-padded number", "POST", "/api/studies/s/trials/01/tell", `{"value": 1}`, true, 404, "not found"},
			{"ask NUL worker", "POST", "/api/studies/s/ask", `{"worker":"w\u0000x"}`, true, 400, "NUL"},
			{"fail NUL reason", "POST", "/api/studies/s/trials/1/tell", `{"state":"failed","reason":"bad\u0000"}`, true, 400, "NUL"},
			{"ask null body", "POST", "/api/studies/s/ask", `null`, true, 400, "null"},
			{"tell underflow", "POST", "/api/studies/s/trials/1/tell", `{"value": 1e-400}`, true, 400, "too small"},
			{"create huge design", "POST", "/api/studies", `{"name":"t","space":` + space2D + `,"optimizer":{"initial_size":100000}}`, true, 400, "limit of 2000"},
			{"create huge candidates", "POST", "/api/studies", `{"name":"t","space":` + space2D + `,"optimizer":{"candidates":20000000}}`, true, 400, "0..100000"},
			{"create name dot", "POST", "/api/studies", `{"name":".","space":` + space2D + `}`, true, 400, "cannot be addressed"},
			{"create name dot dot", "POST", "/api/studies", `{"name":"..","space":` + space2D + `}`, true, 400, "cannot be addressed"},
			{"create name bad UTF-8", "POST", "/api/studies", "{\"name\":\"a\xff\",\"space\":" + space2D + `}`, true, 400, "UTF-8"},
			{"create empty body", "POST", "/api/studies", ``, true, 400, "empty"},
			{"create too large", "POST", "/api/studies", big, true, 413, "too large"},
			{"malformed ask", "POST", "/api/studies/s/ask", `{"worker":`, true, 400, "malformed JSON"},
			{"malformed tell", "POST", "/api/studies/s/trials/1/tell", `{"value": 1.0`, true, 400, "malformed JSON"},
			{"tell NaN literal", "POST", "/api/studies/s/trials/1/tell", `{"value": NaN}`, true, 400, "malformed JSON"},
			{"tell NaN string", "POST", "/api/studies/s/trials/1/tell", `{"value": "NaN"}`, true, 400, "finite"},
			{"tell Infinity string", "POST", "/api/studies/s/trials/1/tell", `{"value": "Infinity"}`, true, 400, "finite"},
			{"tell overflow", "POST", "/api/studies/s/trials/1/tell", `{"value": 1e999}`, true, 400, "not a finite number"},
			{"tell no value", "POST", "/api/studies/s/trials/1/tell", `{}`, true, 400, "value is missing"},
			{"tell bad state", "POST", "/api/studies/s/trials/1/tell", `{"state":"running","value":1}`, true, 400, "complete"},
			{"fail with value", "POST", "/api/studies/s/trials/1/tell", `{"state":"failed","value":1}`, true, 400, "no value"},
			{"tell bad state names pruned", "POST", "/api/studies/s/trials/1/tell", `{"state":"stopped"}`, true, 400, `"failed" or "pruned"`},
			{"prune with reason", "POST", "/api/studies/s/trials/1/tell", `{"state":"pruned","reason":"slow"}`, true, 400, "reason goes with state \"failed\" only"},
			{"prune NaN value", "POST", "/api/studies/s/trials/1/tell", `{"state":"pruned","value":"NaN"}`, true, 400, "finite"},
			{"prune after complete", "POST", "/api/studies/s/trials/0/tell", `{"state":"pruned"}`, true, 409, "already complete"},
			{"create bad pruner setting", "POST", "/api/studies", `{"name":"t","space":` + space2D + `,"pruner":{"type":"median","n_warmup_steps":-1}}`, true, 400, `n_warmup_steps -1 must be in \[0, 1000000000\]`},
			{"create unknown pruner", "POST", "/api/studies", `{"name":"t","space":` + space2D + `,"pruner":{"type":"patient"}}`, true, 400, `type "patient" is not one of`},
			{"create pruner setting of another type", "POST", "/api/studies", `{"name":"t","space":` + space2D + `,"pruner":{"type":"asha","percentile":20}}`, true, 400, "percentile does not apply to the asha pruner"},
			{"create hyperband without max", "POST", "/api/studies", `{"name":"t","space":` + space2D + `,"pruner":{"type":"hyperband"}}`, true, 400, "max_resource is required"},
			{"tell unknown field", "POST", "/api/studies/s/trials/1/tell", `{"value":1,"loss":2}`, true, 400, "unknown field"},
			{"tell different value", "POST", "/api/studies/s/trials/0/tell", `{"value": 2}`, true, 409, "already complete with value 1.25"},
			{"fail after complete", "POST", "/api/studies/s/trials/0/tell", `{"state": "failed"}`, true, 409, "already complete"},
			{"tell unknown trial", "POST", "/api/studies/s/trials/99/tell", `{"value": 1}`, true, 404, "trial 99"},
			{"tell non-numeric trial", "POST", "/api/studies/s/trials/abc/tell", `{"value": 1}`, true, 404, "abc"},
			{"tell unknown study", "POST", "/api/studies/nope/trials/0/tell", `{"value": 1}`, true, 404, "nope"},
			{"ask unknown study", "POST", "/api/studies/nope/ask", ``, true, 404, `^store: study "nope": not found$`},
			{"get unknown study", "GET", "/api/studies/nope", ``, false, 404, "nope"},
			{"delete unknown study", "DELETE", "/api/studies/nope", ``, true, 404, "nope"},
			{"trials unknown study", "GET", "/api/studies/nope/trials", ``, false, 404, "nope"},
			{"get unknown trial", "GET", "/api/studies/s/trials/7", ``, false, 404, "trial 7"},
			{"best unknown study", "GET", "/api/studies/nope/best", ``, false, 404, "nope"},
			{"events unknown study", "GET", "/api/studies/nope/events", ``, false, 404, "nope"},
			{"events bad since", "GET", "/api/studies/s/events?since=x", ``, false, 400, "since"},
			{"trials bad state", "GET", "/api/studies/s/trials?state=done", ``, false, 400, "state \"done\""},
			{"trials negative limit", "GET", "/api/studies/s/trials?limit=-1", ``, false, 400, "limit"},
			{"enqueue outside space", "POST", "/api/studies/s/trials", `{"params":{"x":11,"y":1}}`, true, 400, `^space: parameter "x": 11 is outside \[-5, 10\]$`},
			{"enqueue numeric string", "POST", "/api/studies/s/trials", `{"params":{"x":"0.5","y":1}}`, true, 400, `parameter "x": the string "0.5" is not a number`},
			{"enqueue unknown param", "POST", "/api/studies/s/trials", `{"params":{"x":1,"y":1,"z":0}}`, true, 400, `unknown parameter "z"`},
			{"enqueue missing param", "POST", "/api/studies/s/trials", `{"params":{"x":1}}`, true, 400, `"y" is missing`},
			{"enqueue string number", "POST", "/api/studies/s/trials", `{"params":{"x":"big","y":1}}`, true, 400, `not a number`},
			{"import NaN value", "POST", "/api/studies/s/trials", `{"params":{"x":1,"y":1},"value":"NaN"}`, true, 400, "finite"},
			{"report no step", "POST", "/api/studies/s/trials/1/report", `{"value": 1}`, true, 400, "step"},
			{"report Inf", "POST", "/api/studies/s/trials/1/report", `{"step": 1, "value": "-Infinity"}`, true, 400, "finite"},
			{"report on complete", "POST", "/api/studies/s/trials/0/report", `{"step": 1, "value": 1}`, true, 409, "already complete"},
			{"no token", "POST", "/api/studies/s/ask", ``, false, 401, "bearer token"},
			{"no token tell", "POST", "/api/studies/s/trials/1/tell", `{"value":1}`, false, 401, "bearer token"},
			{"no token delete", "DELETE", "/api/studies/s", ``, false, 401, "bearer token"},
			{"explain unknown kind", "GET", "/api/studies/s/explain/astrology", ``, false, 404, "unknown explanation kind"},
			{"explain too few trials", "GET", "/api/studies/s/explain/pdp?param=x", ``, false, 409, "at least 3"},
			{"unknown route", "GET", "/api/nothing", ``, false, 404, "no route"},
			{"wrong method", "PUT", "/api/studies/s", ``, true, 405, "not allowed.*GET, DELETE"},
		}
		before := dump(t, st)
		for _, c := range cases {
			code, body, err := rawErr(e, c.method, c.path, c.body, c.auth)
			if err != nil {
				if c.status == http.StatusRequestEntityTooLarge && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
					// The server answered before reading the whole body
					// and closed the connection; the client, still
					// writing, saw the reset instead of the 413. Nothing
					// was stored (dump, below).
					continue
				}
				t.Fatalf("%s: %v", c.name, err)
			}
			if code != c.status {
				t.Errorf("%s: status %d, want %d (%s)", c.name, code, c.status, body)
				continue
			}
			var eb struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &eb); err != nil || eb.Error == "" {
				t.Errorf("%s: body %q is not {\"error\": ...}", c.name, body)
				continue
			}
			if !regexp.MustCompile(c.msg).MatchString(eb.Error) {
				t.Errorf("%s: error %q does not match %q", c.name, eb.Error, c.msg)
			}
			if after := dump(t, st); after != before {
				t.Fatalf("%s changed the store", c.name)
			}
		}
		// A wrong token is refused too.
		bad := client.New(e.http.URL, client.WithToken("wrong"), client.WithRetries(0, 0))
		if _, err := bad.Ask(ctx, "s"); !client.IsStatus(err, 401) {
			t.Fatalf("wrong token: %v", err)
		}
		// The same tell again is accepted and changes nothing.
		code, body := raw(t, e, "POST", "/api/studies/s/trials/0/tell", `{"value": 1.25}`, true)
		if code != 200 || !strings.Contains(body, `"value":1.25`) {
			t.Fatalf("idempotent tell: %d %s", code, body)
		}
		if after := dump(t, st); after != before {
			t.Fatal("repeated tell changed the store")
		}
	})
}

// TestAskTell runs a GP study end to end with 4 concurrent workers and checks
// the listing, best trial, events and the Server-Timing header.
func TestAskTell(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, 0)
		ctx := context.Background()
		createStudy(t, e, "b", `{"seed":7,"initial_size":6,"candidates":300}`)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- e.c.Optimize(ctx, "b", 5, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) })
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		all, err := e.c.Trials(ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 20 {
			t.Fatalf("%d trials", len(all))
		}
		acqs := map[string]int{}
		seen := map[string]bool{}
		bestV := math.Inf(1)
		for i, tr := range all {
			if tr.Number != int64(i) || tr.State != "complete" {
				t.Fatalf("trial %d: %+v", i, tr)
			}
			want, _ := evalBranin(&tr)
			if *tr.Value != want {
				t.Fatalf("trial %d value %v, want %v", i, *tr.Value, want)
			}
			key := fmt.Sprint(tr.Params["x"], tr.Params["y"])
			if seen[key] {
				t.Fatalf("configuration %s proposed twice", key)
			}
			seen[key] = true
			acqs[tr.Acquisition]++
			bestV = min(bestV, want)
		}
		if acqs["initial-design"] != 6 || acqs["ei"] != 14 {
			t.Fatalf("acquisitions %v", acqs)
		}
		best, err := e.c.Best(ctx, "b")
		if err != nil || *best.Value != bestV {
			t.Fatalf("best %+v %v, want %v", best, err, bestV)
		}
		evs, v, err := e.c.Events(ctx, "b", 0)
		if err != nil || len(evs) != 20 {
			t.Fatalf("events: %d trials, version %d, %v", len(evs), v, err)
		}
		sum, err := e.c.Study(ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		if backend == "sqlite" && v != sum.Version { // versions follow commit order
			t.Fatalf("events version %d, study version %d", v, sum.Version)
		}
		// Once the changes have settled the cursor passes all of them.
		e.clock.Add(10 * time.Second)
		if evs, v, err = e.c.Events(ctx, "b", 0); err != nil || len(evs) != 20 || v != sum.Version {
			t.Fatalf("settled events: %d trials, version %d (study %d), %v", len(evs), v, sum.Version, err)
		}
		if evs, v2, _ := e.c.Events(ctx, "b", v); len(evs) != 0 || v2 != v {
			t.Fatalf("no new events expected: %d %d", len(evs), v2)
		}
		req, _ := http.NewRequest("POST", e.http.URL+"/api/studies/b/ask", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h := resp.Header.Get("Server-Timing"); !regexp.MustCompile(`opt;dur=[0-9.]+.*total;dur=[0-9.]*[1-9]`).MatchString(h) {
			t.Fatalf("Server-Timing %q", h)
		}
		// Delete.
		if err := e.c.DeleteStudy(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Study(ctx, "b"); !client.IsStatus(err, 404) {
			t.Fatalf("deleted study: %v", err)
		}
	})
}

// TestExpiryRequeue: a trial not told within the timeout expires, its
// configuration is handed out again, the optimizer stops counting it as
// pending, and a late tell is still kept.
func TestExpiryRequeue(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, time.Minute)
		ctx := context.Background()
		createStudy(t, e, "s", `{"seed":1,"initial_size":4}`)
		a, _ := e.c.Ask(ctx, "s")
		b, _ := e.c.Ask(ctx, "s")
		e.clock.Add(30 * time.Second)
		if _, err := e.c.Report(ctx, "s", a.Number, 1, 5); err != nil { // heartbeat keeps a alive
			t.Fatal(err)
		}
		e.clock.Add(45 * time.Second)
		c, err := e.c.Ask(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if c.RequeuedFrom == nil || *c.RequeuedFrom != b.Number || fmt.Sprint(c.Params) != fmt.Sprint(b.Params) || c.Acquisition != "requeue" {
			t.Fatalf("expected trial %d requeued, got %+v", b.Number, c)
		}
		old, _ := e.c.Trial(ctx, "s", b.Number)
		if old.State != "expired" {
			t.Fatalf("trial %d is %s", b.Number, old.State)
		}
		// The next proposal is new (design point 2), not b again.
		d, _ := e.c.Ask(ctx, "s")
		if d.Acquisition != "initial-design" || d.RequeuedFrom != nil {
			t.Fatalf("next ask: %+v", d)
		}
		if err := e.c.Tell(ctx, "s", b.Number, 3); err != nil {
			t.Fatalf("late tell: %v", err)
		}
		for _, n := range []int64{a.Number, c.Number, d.Number} {
			if err := e.c.Tell(ctx, "s", n, float64(n)); err != nil {
				t.Fatal(err)
			}
		}
		// The optimizer catches up with the late tell and the expiry.
		for i := 0; i < 3; i++ {
			tr, err := e.c.Ask(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			e.c.Tell(ctx, "s", tr.Number, 1)
		}
		counts := map[string]int{}
		all, _ := e.c.Trials(ctx, "s")
		for _, tr := range all {
			counts[tr.State]++
		}
		// b expired, then its late tell completed it; its requeued copy c ran too.
		if counts["complete"] != 7 || counts["running"] != 0 || len(all) != 7 {
			t.Fatalf("states %v", counts)
		}
	})
}

func TestEnqueueAndImport(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "s", `{"strategy":"random","seed":2}`)
	q, err := e.c.Enqueue(ctx, "s", map[string]any{"x": 1, "y": 2})
	if err != nil || q.State != "pending" {
		t.Fatalf("enqueue: %+v %v", q, err)
	}
	if _, err := e.c.AddResult(ctx, "s", map[string]any{"x": 3, "y": 4}, 9); err != nil {
		t.Fatal(err)
	}
	a, err := e.c.Ask(ctx, "s")
	if err != nil || a.Number != q.Number || a.Acquisition != "enqueued" || a.Params["x"] != 1.0 {
		t.Fatalf("ask after enqueue: %+v %v", a, err)
	}
	b, _ := e.c.Ask(ctx, "s")
	if b.Acquisition != "random" || b.Number != 2 {
		t.Fatalf("proposal: %+v", b)
	}
}

// TestExplainEndpoints wires the explanation packages: each kind answers
// JSON for a study with enough trials and 400 for bad parameters.
func TestExplainEndpoints(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "s", `{"strategy":"random","seed":5}`)
	if err := e.c.Optimize(ctx, "s", 25, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Ask(ctx, "s"); err != nil { // trial 25, running
		t.Fatal(err)
	}
	ok := []struct{ path, want string }{
		{"/api/studies/s/explain/pdp?param=x&samples=200&grid=10", `"param":"x"`},
		{"/api/studies/s/explain/pdp?param=x,y&samples=100&grid=5", `"param2":"y"`},
		{"/api/studies/s/explain/importance", `"main"`},
		{"/api/studies/s/explain/regional?param=x&samples=200&grid=10", `"leaves"`},
		{"/api/studies/s/explain/shapley?trial=3&samples=200", `"trial":3`},
		{"/api/studies/s/explain/shapley?trial=25&samples=200", `"trial":25`}, // still running
	}
	for _, c := range ok {
		code, body := raw(t, e, "GET", c.path, "", false)
		if code != 200 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %.300s", c.path, code, body)
		}
	}
	bad := []string{
		"/api/studies/s/explain/pdp",
		"/api/studies/s/explain/pdp?param=z",
		"/api/studies/s/explain/pdp?param=x&grid=1",
		"/api/studies/s/explain/pdp?param=x&alpha=2",
		"/api/studies/s/explain/regional?param=x,y",
		"/api/studies/s/explain/shapley?trial=99",
		"/api/studies/s/explain/shapley?point=best&tau=1e308", // D8
		"/api/studies/s/explain/paths?tau=NaN",
		"/api/studies/s/explain/paths?tau=-1",
	}
	for _, p := range bad {
		if code, body := raw(t, e, "GET", p, "", false); code != 400 {
			t.Errorf("%s: %d %s, want 400", p, code, body)
		}
	}
	// A cursor beyond the study's version starts over (D14): every trial
	// comes back, with the real version.
	var ev struct {
		Since, Version int64
		Trials         []json.RawMessage
	}
	code, body := raw(t, e, "GET", "/api/studies/s/events?since=1000000", "", false)
	if err := json.Unmarshal([]byte(body), &ev); code != 200 || err != nil || ev.Since != 0 || len(ev.Trials) != 26 || ev.Version >= 1000000 || ev.Version < 26 {
		t.Fatalf("events beyond the version: %d since %d version %d, %d trials (%v)", code, ev.Since, ev.Version, len(ev.Trials), err)
	}
	// Nothing is computing once every request has been answered.
	code, body = raw(t, e, "GET", "/api/explain/status", "", false)
	if code != 200 || !strings.Contains(body, `"computing":[]`) || !strings.Contains(body, `"concurrency":`) {
		t.Fatalf("status: %d %s", code, body)
	}
}

func TestServerSentEvents(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	createStudy(t, e, "s", `{"strategy":"random"}`)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/api/studies/s/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	tr, err := e.c.Ask(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var got string
	for !strings.Contains(got, "\n\n") {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("read stream: %v (got %q)", err, got)
		}
		got += string(buf[:n])
	}
	if !strings.HasPrefix(got, "event: trials\nid: 1\ndata: ") || !strings.Contains(got, fmt.Sprintf(`"number":%d`, tr.Number)) {
		t.Fatalf("event %q", got)
	}
}

// Every request leaves one access-log line with its method, path, status
// and duration (what an operator needs first).
func TestAccessLog(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	var buf syncBuffer
	srv, err := server.New(server.Config{Store: st, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for _, path := range []string{"/api/health", "/api/studies/nope"} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 || lines[0]["path"] != "/api/health" || lines[0]["status"] != 200.0 ||
		lines[1]["status"] != 404.0 || lines[1]["method"] != "GET" || lines[1]["ms"] == nil {
		t.Fatalf("access log: %v", lines)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// GET /metrics exposes request latency by route (ask, tell, explain among
// them), errors, the explanation queue and trials by state, in Prometheus'
// text format.
func TestMetrics(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "s", `{"strategy":"random","seed":2}`)
	if err := e.c.Optimize(ctx, "s", 4, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Ask(ctx, "s"); err != nil { // one running
		t.Fatal(err)
	}
	raw(t, e, "GET", "/api/studies/nope", "", false)
	code, body := raw(t, e, "GET", "/metrics", "", false)
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	for _, want := range []string{
		`xbo_http_request_duration_seconds_count{code="2xx",route="POST /api/studies/{study}/ask"} 5`,
		`xbo_http_request_duration_seconds_count{code="2xx",route="POST /api/studies/{study}/trials/{trial}/tell"} 4`,
		`xbo_http_request_duration_seconds_count{code="4xx",route="GET /api/studies/{study}"} 1`,
		`xbo_trials{state="complete"} 4`,
		`xbo_trials{state="running"} 1`,
		`xbo_explain_waiting 0`,
		`xbo_request_errors_total 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// With TokenReads, reads need the token too, except the health check and
// the API description.
func TestTokenReads(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	if _, err := server.New(server.Config{Store: st, TokenReads: true}); err == nil {
		t.Fatal("token on reads without a token accepted")
	}
	srv, err := server.New(server.Config{Store: st, Token: "secret", TokenReads: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	get := func(path, token string) int {
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for path, want := range map[string]int{"/api/studies": 401, "/api/explain/status": 401, "/api/health": 200, "/api/openapi.json": 200} {
		if got := get(path, ""); got != want {
			t.Errorf("%s without a token: %d, want %d", path, got, want)
		}
	}
	if got := get("/api/studies", "secret"); got != 200 {
		t.Errorf("/api/studies with the token: %d", got)
	}
	if got := get("/api/studies", "wrong"); got != 401 {
		t.Errorf("/api/studies with a wrong token: %d", got)
	}
}
