package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"xbo/server"
	"xbo/store"
	"xbo/store/storetest"
)

// gate is a TCP proxy in front of PostgreSQL that can be shut (its
// listener closed and every connection cut: the database is down, new
// connections are refused) and opened again on the same port.
type gate struct {
	t      *testing.T
	addr   string // the port clients connect to
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func newGate(t *testing.T, dsn string) (*gate, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{t: t, target: u.Host}
	g.open("127.0.0.1:0")
	t.Cleanup(g.shut)
	u.Host = g.addr
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return g, u.String()
}

func (g *gate) open(addr string) {
	g.t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		g.t.Fatal(err)
	}
	g.mu.Lock()
	g.ln, g.addr = ln, ln.Addr().String()
	g.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", g.target)
			if err != nil {
				c.Close()
				continue
			}
			g.mu.Lock()
			g.conns = append(g.conns, c, s)
			g.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
}

// shut closes the listener and cuts every connection.
func (g *gate) shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ln.Close()
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

// TestStoreOutageAnswered503: while PostgreSQL is unreachable every request
// that needs it is answered 503 with Retry-After and a JSON error (not a
// 500 "internal error"), the outage is logged once when it starts and once
// when it ends (not per request), and its refusals are counted apart from
// the request errors; once the database is back, requests succeed again.
func TestStoreOutageAnswered503(t *testing.T) {
	g, dsn := newGate(t, storetest.PostgresDSN(t))
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var logs syncBuffer
	srv, err := server.New(server.Config{Store: st, Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	send := func(method, path, body string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	if code, _, body := send("POST", "/api/studies", studyBody); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}

	g.shut()
	requests := []struct{ method, path, body string }{
		{"GET", "/api/studies/s", ""},
		{"POST", "/api/studies/s/ask", ""},
		{"GET", "/api/studies/s/trials", ""},
		{"GET", "/api/health", ""},
		{"POST", "/api/studies", strings.Replace(studyBody, `"s"`, `"t"`, 1)},
	}
	for _, r := range requests {
		code, header, body := send(r.method, r.path, r.body)
		var e struct {
			Error string `json:"error"`
		}
		if code != http.StatusServiceUnavailable || header.Get("Retry-After") != "2" || json.Unmarshal([]byte(body), &e) != nil ||
			!strings.Contains(e.Error, "unavailable") || strings.Contains(e.Error, "internal error") {
			t.Fatalf("%s %s with the database down: %d Retry-After %q %s; want 503, Retry-After 2 and a JSON error", r.method, r.path, code, header.Get("Retry-After"), body)
		}
	}
	if n := strings.Count(logs.String(), "store unavailable"); n != 1 || strings.Contains(logs.String(), "request failed") {
		t.Fatalf("the outage logged %d times (want once, and no request failures):\n%s", n, logs.String())
	}
	_, _, metrics := send("GET", "/metrics", "")
	for _, want := range []string{"xbo_store_unavailable_total 5", "xbo_request_errors_total 0"} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("/metrics lacks %q:\n%s", want, grepLines(metrics, "xbo_"))
		}
	}

	g.open(g.addr)
	if code, _, body := send("GET", "/api/studies/s", ""); code != http.StatusOK {
		t.Fatalf("after the database came back: %d %s", code, body)
	}
	if code, _, body := send("GET", "/api/studies/s", ""); code != http.StatusOK {
		t.Fatalf("after the database came back: %d %s", code, body)
	}
	if n := strings.Count(logs.String(), "store available again"); n != 1 || !strings.Contains(logs.String(), `"refused":5`) {
		t.Fatalf("the outage's end logged %d times (want once, with 5 refused):\n%s", n, logs.String())
	}
}

// grepLines keeps the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
