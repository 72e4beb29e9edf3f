package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"xbo/server"
	"xbo/store"
)

// tokenless is a server as `xbo serve` starts it by default: no token,
// listening on addr (the address it is told, not the test's own listener:
// the Host headers are set by hand).
func tokenless(t *testing.T, cfg server.Config) *server.Server {
	t.Helper()
	cfg.Store = srvStore(t)
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// call serves one request in process and returns its status and body; the
// body must be a JSON object whatever the status.
func call(t *testing.T, srv http.Handler, method, host, path, body string, header map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://"+host+path, rd)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	if w.Code != http.StatusOK && !json.Valid(w.Body.Bytes()) && w.Header().Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("%s %s (Host %s): %d with a body that is not JSON: %q", method, path, host, w.Code, w.Body)
	}
	return w.Code, w.Body.String()
}

const studyBody = `{"name":"s","space":{"objective":"minimize","params":[{"name":"x","type":"float","low":0,"high":1}]}}`

// TestCrossSiteWritesRefused: a page of another site can make the browser
// send a "simple" POST (text/plain, no preflight) to a local server; it is
// refused, as is any write with a foreign Origin, while programs (no Origin)
// and the server's own pages write as before.
func TestCrossSiteWritesRefused(t *testing.T) {
	srv := tokenless(t, server.Config{Addr: "127.0.0.1:8080"})
	const host = "127.0.0.1:8080"
	for _, c := range []struct {
		what   string
		header map[string]string
		want   int
	}{
		{"text/plain from another site", map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}, http.StatusForbidden},
		{"JSON from another site", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, http.StatusForbidden},
		{"JSON from another port of the host", map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:9999"}, http.StatusForbidden},
		{"JSON from a sandboxed page", map[string]string{"Content-Type": "application/json", "Origin": "null"}, http.StatusForbidden},
		{"text/plain from a program", map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
		{"a form from a program", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"no type from a program", nil, http.StatusUnsupportedMediaType},
	} {
		if code, body := call(t, srv, "POST", host, "/api/studies", studyBody, c.header); code != c.want {
			t.Errorf("%s: %d %s, want %d", c.what, code, body, c.want)
		}
	}
	if code, body := call(t, srv, "GET", host, "/api/studies", "", nil); code != http.StatusOK || strings.TrimSpace(body) != `{"studies":[]}` {
		t.Fatalf("refused writes created studies: %d %s", code, body)
	}
	if code, body := call(t, srv, "POST", host, "/api/studies", studyBody, map[string]string{"Content-Type": "application/json; charset=utf-8", "Origin": "http://" + host}); code != http.StatusCreated {
		t.Fatalf("a write of the server's own page: %d %s", code, body)
	}
	if code, body := call(t, srv, "DELETE", host, "/api/studies/s", "", map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden {
		t.Fatalf("a delete from another site: %d %s", code, body)
	}
	// A bodiless ask from a program needs no Content-Type (the clients send none).
	if code, body := call(t, srv, "POST", host, "/api/studies/s/ask", "", nil); code != http.StatusOK {
		t.Fatalf("a bodiless ask: %d %s", code, body)
	}
	// Reads from other sites' pages are the browser's to refuse (no CORS
	// header is sent); the server does not look at their Origin.
	if code, body := call(t, srv, "GET", host, "/api/studies/s", "", map[string]string{"Origin": "http://evil.example"}); code != http.StatusOK {
		t.Fatalf("a read with an Origin: %d %s", code, body)
	}
}

// TestForeignHostRefused: a page whose name an attacker rebinds to the
// server's address reaches it with its own name as Host: refused, reads
// too, unless the name is allowed. A server bound to every address accepts
// any IP literal, since its own addresses are not all known.
func TestForeignHostRefused(t *testing.T) {
	cases := []struct {
		addr    string
		allowed []string
		host    string
		want    int
	}{
		{"127.0.0.1:8080", nil, "evil.example", http.StatusMisdirectedRequest},
		{"127.0.0.1:8080", nil, "evil.example:8080", http.StatusMisdirectedRequest},
		{"127.0.0.1:8080", nil, "127.0.0.1:8080", http.StatusOK},
		{"127.0.0.1:8080", nil, "localhost:8080", http.StatusOK},
		{"127.0.0.1:8080", nil, "LOCALHOST.", http.StatusOK},
		{"127.0.0.1:8080", nil, "[::1]:8080", http.StatusOK},
		{"127.0.0.1:8080", nil, "192.168.1.20:8080", http.StatusMisdirectedRequest},
		{"127.0.0.1:8080", []string{"xbo.example"}, "xbo.example:8080", http.StatusOK},
		{"127.0.0.1:8080", []string{"xbo.example"}, "other.example", http.StatusMisdirectedRequest},
		{"127.0.0.1:8080", []string{"xbo.example:443", "[fd00::7]:80"}, "XBO.example", http.StatusOK},
		{"127.0.0.1:8080", []string{"xbo.example:443", "[fd00::7]:80"}, "[fd00::7]:8080", http.StatusOK},
		{"127.0.0.1:8080", []string{"*"}, "anything.example", http.StatusOK},
		{"0.0.0.0:8080", nil, "192.168.1.20:8080", http.StatusOK},
		{"0.0.0.0:8080", nil, "[fd00::5]:8080", http.StatusOK},
		{"0.0.0.0:8080", nil, "evil.example:8080", http.StatusMisdirectedRequest},
		{":8080", nil, "10.0.0.3:8080", http.StatusOK},
		{"[::]:8080", nil, "evil.example", http.StatusMisdirectedRequest},
		{"myhost.lan:8080", nil, "MyHost.lan:8080", http.StatusOK},
		{"myhost.lan:8080", nil, "192.168.1.20:8080", http.StatusMisdirectedRequest},
		{"", nil, "localhost", http.StatusOK},
		{"", nil, "evil.example", http.StatusMisdirectedRequest},
	}
	for _, c := range cases {
		srv := tokenless(t, server.Config{Addr: c.addr, AllowedHosts: c.allowed})
		for _, path := range []string{"/api/studies", "/", "/metrics"} {
			code, body := call(t, srv, "GET", c.host, path, "", nil)
			if code != c.want {
				t.Errorf("listening on %q, allowed %q: GET %s with Host %q: %d, want %d", c.addr, c.allowed, path, c.host, code, c.want)
			}
			if code == http.StatusMisdirectedRequest && !strings.Contains(body, "--allowed-hosts") {
				t.Errorf("the refusal does not say how to allow the name: %s", body)
			}
		}
	}
	// A page served under an allowed name (through a proxy that passes
	// another Host) may write.
	srv := tokenless(t, server.Config{Addr: "127.0.0.1:8080", AllowedHosts: []string{"xbo.example"}})
	if code, body := call(t, srv, "POST", "127.0.0.1:8080", "/api/studies", studyBody, map[string]string{"Content-Type": "application/json", "Origin": "https://xbo.example"}); code != http.StatusCreated {
		t.Fatalf("a write from an allowed host's page: %d %s", code, body)
	}
	for _, bad := range []string{"https://xbo.example", "", "xbo.example/path", "user@xbo.example"} {
		if _, err := server.New(server.Config{Store: srvStore(t), AllowedHosts: []string{bad}}); err == nil || !strings.Contains(err.Error(), "allowed host") {
			t.Errorf("allowed host %q: %v, want a refusal", bad, err)
		}
	}
	if _, err := server.New(server.Config{Store: srvStore(t), Addr: "no-port"}); err == nil {
		t.Error("a listen address without a port accepted")
	}
}

func srvStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "xbo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestTokenReadsGuardMetrics: with the token required on reads, /metrics
// (study states, request mix) needs it too; without, it stays open.
func TestTokenReadsGuardMetrics(t *testing.T) {
	srv := tokenless(t, server.Config{Token: "secret", TokenReads: true})
	if code, _ := call(t, srv, "GET", "localhost", "/metrics", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := call(t, srv, "GET", "localhost", "/metrics", "", map[string]string{"Authorization": "Bearer secret"}); code != http.StatusOK {
		t.Fatalf("/metrics with the token: %d, want 200", code)
	}
	open := tokenless(t, server.Config{Token: "secret"})
	if code, _ := call(t, open, "GET", "localhost", "/metrics", "", nil); code != http.StatusOK {
		t.Fatalf("/metrics with the token on writes only: %d, want 200", code)
	}
}
