package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"xbo/client"
	"xbo/server"
	"xbo/store"
	"xbo/store/storetest"
)

// getExplain returns the status, the X-Explain-Cache header and the body.
func getExplain(t *testing.T, base, path string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("X-Explain-Cache"), string(b)
}

// TestExplainCache checks that a repeated explanation is served from the
// cache while the usable trials are unchanged (an ask adds a running trial,
// which explains nothing), and that after a change of the usable trials (a
// tell through this server, a tell by another process on the same database)
// the answer is the one a server with an empty cache gives.
func TestExplainCache(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, 0)
		ctx := context.Background()
		createStudy(t, e, "s", `{"strategy":"random","seed":9}`)
		if err := e.c.Optimize(ctx, "s", 8, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
			t.Fatal(err)
		}
		// fresh answers with no cache: a new server on the same store.
		fresh := func(path string) string {
			t.Helper()
			srv, err := server.New(server.Config{Store: st})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			code, _, body := getExplain(t, hs.URL, path)
			if code != 200 {
				t.Fatalf("fresh %s: %d %s", path, code, body)
			}
			return body
		}
		const pdp = "/api/studies/s/explain/pdp?param=x&samples=100&grid=8"
		expect := func(step, path, cache, want string) string {
			t.Helper()
			code, got, body := getExplain(t, e.http.URL, path)
			if code != 200 || got != cache {
				t.Fatalf("%s: %d, cache %q, want 200 and %q: %.300s", step, code, got, cache, body)
			}
			if want != "" && body != want {
				t.Fatalf("%s: served %.200s…, a fresh computation gives %.200s…", step, body, want)
			}
			return body
		}
		first := expect("first view", pdp, "miss", fresh(pdp))
		expect("same view again", pdp, "hit", first)
		const imp = "/api/studies/s/explain/importance"
		expect("another kind", imp, "miss", fresh(imp))
		expect("another query", pdp+"&ice=true", "miss", "")

		// A tell through this server.
		tr, err := e.c.Ask(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		expect("after an ask", pdp, "hit", first)
		if err := e.c.Tell(ctx, "s", tr.Number, 1000); err != nil {
			t.Fatal(err)
		}
		afterTell := expect("after a tell", pdp, "miss", fresh(pdp))
		if afterTell == first {
			t.Fatal("the PDP did not change with a new trial; the test cannot tell stale from fresh")
		}
		expect("after a tell, again", pdp, "hit", afterTell)

		// A change this server did not make: another process's tell.
		other, err := e.c.Ask(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		expect("after the second ask", imp, "miss", "")
		if _, _, err := st.Tell(ctx, "s", other.Number, store.Result{State: store.Complete, Value: -50, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		expect("after another process's tell", pdp, "miss", fresh(pdp))
		expect("importance after it", imp, "miss", fresh(imp))
	})
}
