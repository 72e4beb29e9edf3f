package server_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"xbo/server"
	"xbo/store"
)

// TestTooWideRangeRefused: a float range whose span overflows (±1e308) is
// refused when the study is created, instead of every ask answering 400
// for a proposal of +Inf; the widest finite span is accepted and asked.
func TestTooWideRangeRefused(t *testing.T) {
	srv := tokenless(t, server.Config{})
	study := func(name string, lo, hi float64) string {
		return fmt.Sprintf(`{"name":%q,"space":{"objective":"minimize","params":[{"name":"x","type":"float","low":%g,"high":%g}]}}`, name, lo, hi)
	}
	json := map[string]string{"Content-Type": "application/json"}
	if code, body := call(t, srv, "POST", "localhost", "/api/studies", study("wide", -1e308, 1e308), json); code != http.StatusBadRequest || !strings.Contains(body, "too wide") {
		t.Fatalf("a range of ±1e308: %d %s, want 400", code, body)
	}
	if code, body := call(t, srv, "POST", "localhost", "/api/studies", study("widest", -8e307, 8e307), json); code != http.StatusCreated {
		t.Fatalf("a range of ±8e307: %d %s", code, body)
	}
	for range 3 {
		if code, body := call(t, srv, "POST", "localhost", "/api/studies/widest/ask", "", nil); code != http.StatusOK {
			t.Fatalf("an ask in the widest range: %d %s", code, body)
		}
	}
}

// nested is a user attribute value nesting arrays depth deep.
func nested(depth int) string {
	return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
}

// TestUserAttrsDepthBounded: user attributes may nest objects and arrays
// store.MaxAttrDepth deep, not deeper (a client's recursive decoder fails
// on them), in a tell and in an added trial.
func TestUserAttrsDepthBounded(t *testing.T) {
	srv := tokenless(t, server.Config{})
	json := map[string]string{"Content-Type": "application/json"}
	if code, body := call(t, srv, "POST", "localhost", "/api/studies", studyBody, json); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	for _, n := range []int{0, 1} {
		if code, body := call(t, srv, "POST", "localhost", "/api/studies/s/ask", "", nil); code != http.StatusOK {
			t.Fatalf("ask %d: %d %s", n, code, body)
		}
	}
	tell := func(n, depth int) (int, string) {
		return call(t, srv, "POST", "localhost", fmt.Sprintf("/api/studies/s/trials/%d/tell", n), fmt.Sprintf(`{"value":1,"user_attrs":{"deep":%s}}`, nested(depth)), json)
	}
	if code, body := tell(0, store.MaxAttrDepth+1); code != http.StatusBadRequest || !strings.Contains(body, fmt.Sprintf("more than %d deep", store.MaxAttrDepth)) {
		t.Fatalf("a tell with attributes %d deep: %d %s, want 400", store.MaxAttrDepth+1, code, body)
	}
	if code, body := call(t, srv, "GET", "localhost", "/api/studies/s/trials/0", "", nil); code != http.StatusOK || !strings.Contains(body, `"running"`) {
		t.Fatalf("the refused tell changed the trial: %d %s", code, body)
	}
	if code, body := tell(0, store.MaxAttrDepth); code != http.StatusOK {
		t.Fatalf("a tell with attributes %d deep: %d %s", store.MaxAttrDepth, code, body)
	}
	if code, body := tell(1, 5000); code != http.StatusBadRequest {
		t.Fatalf("a tell with attributes 5,000 deep: %d %s, want 400", code, body)
	}
	added := fmt.Sprintf(`{"params":{"x":0.5},"value":1,"user_attrs":{"deep":%s}}`, nested(store.MaxAttrDepth+1))
	if code, body := call(t, srv, "POST", "localhost", "/api/studies/s/trials", added, json); code != http.StatusBadRequest {
		t.Fatalf("an added trial with attributes %d deep: %d %s, want 400", store.MaxAttrDepth+1, code, body)
	}
	// A finished trial never changes: the same value with other
	// attributes is a conflict; the same attributes are a retry.
	if code, body := call(t, srv, "POST", "localhost", "/api/studies/s/trials/0/tell", `{"value":1,"user_attrs":{"other":2}}`, json); code != http.StatusConflict {
		t.Fatalf("a repeated tell with other attributes: %d %s, want 409", code, body)
	}
	if code, body := tell(0, store.MaxAttrDepth); code != http.StatusOK {
		t.Fatalf("a repeated tell with the same attributes: %d %s", code, body)
	}
}

// TestTricklingBodyDropped: a client that sends its headers and then its
// body a byte at a time is answered 408 once the body timeout has passed,
// and its connection closed, instead of being held as long as it trickles.
func TestTricklingBodyDropped(t *testing.T) {
	srv := tokenless(t, server.Config{BodyTimeout: 300 * time.Millisecond})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /api/studies HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", strings.TrimPrefix(hs.URL, "http://"), len(studyBody))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; i < len(studyBody); i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{studyBody[i]}); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a trickling body after %v: %v", time.Since(start), err)
	}
	resp.Body.Close()
	// The whole body would take len(studyBody) × 50 ms, over 5 s.
	if resp.StatusCode != http.StatusRequestTimeout || time.Since(start) > 3*time.Second {
		t.Fatalf("a trickling body: %d after %v, want 408 after about 300 ms", resp.StatusCode, time.Since(start))
	}
	// A body that arrives in time is served as before, on a new connection.
	if code, body := call(t, srv, "POST", "localhost", "/api/studies", studyBody, map[string]string{"Content-Type": "application/json"}); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if _, err := server.New(server.Config{Store: srvStore(t), BodyTimeout: -time.Second}); err == nil {
		t.Fatal("a negative body timeout accepted")
	}
}
