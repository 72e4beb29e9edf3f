package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"xbo/client"
	"xbo/explain/fanova"
	"xbo/forest"
	"xbo/space"
	"xbo/store/storetest"
	"xbo/web"
)

// TestDashboardMounted: everything outside /api/ is the dashboard of package
// web, and the API keeps its JSON errors.
func TestDashboardMounted(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	code, body := raw(t, e, "GET", "/", "", false)
	if _, err := web.Assets(); err != nil {
		// Not built: the page says how to build it instead of a blank 404.
		if code != 503 || !strings.Contains(body, "npm run --prefix web build") {
			t.Fatalf("GET / without a bundle: %d %q", code, body)
		}
	} else {
		if code != 200 || !strings.Contains(body, "<title>xbo dashboard</title>") {
			t.Fatalf("GET /: %d %.200q", code, body)
		}
		if code, body := raw(t, e, "GET", "/app.js", "", false); code != 200 || !strings.Contains(body, "events?since=") {
			t.Fatalf("GET /app.js: %d %.100q", code, body)
		}
	}
	for _, c := range []struct {
		method, path string
		want         int
	}{{"GET", "/api/nope", 404}, {"GET", "/api/studies/nope", 404}, {"POST", "/", 404}, {"PUT", "/api/studies", 405}} {
		code, body := raw(t, e, c.method, c.path, "", true)
		if code != c.want || !strings.Contains(body, `"error"`) {
			t.Errorf("%s %s: %d %s, want %d with a JSON error", c.method, c.path, code, body, c.want)
		}
	}
}

// TestImportanceCapQuantile: ?cap_quantile=q is fANOVA of the forest fitted to
// the values capped at the q-quantile (Hutter et al. 2014, section 3.3),
// computed here from the same trials through the packages themselves.
func TestImportanceCapQuantile(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "s", `{"strategy":"random","seed":9}`)
	if err := e.c.Optimize(ctx, "s", 30, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
		t.Fatal(err)
	}
	sp, err := space.Parse([]byte(space2D))
	if err != nil {
		t.Fatal(err)
	}
	trials, err := e.c.Trials(ctx, "s", "complete")
	if err != nil {
		t.Fatal(err)
	}
	var x [][]float64
	var y []float64
	for _, tr := range trials {
		vals, err := sp.FromMap(tr.Params)
		if err != nil {
			t.Fatal(err)
		}
		u, err := sp.Encode(vals)
		if err != nil {
			t.Fatal(err)
		}
		x, y = append(x, u), append(y, *tr.Value)
	}
	importance := func(y []float64) string {
		f, err := forest.Fit(x, y, forest.Options{Levels: sp.Levels(), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := fanova.New(f, fanova.Options{})
		if err != nil {
			t.Fatal(err)
		}
		dec, err := ex.Decompose(true)
		if err != nil {
			t.Fatal(err)
		}
		imp, err := dec.Importance(sp.Names())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(imp)
		return string(b)
	}
	capped, limit, err := fanova.CapQuantile(y, 0.25, false)
	if err != nil {
		t.Fatal(err)
	}
	wantCapped, wantAll := importance(capped), importance(y)
	if wantCapped == wantAll {
		t.Fatalf("capping at %v changed nothing; the test cannot tell the two apart", limit)
	}
	for path, want := range map[string]string{
		"/api/studies/s/explain/importance?method=forest-fanova":                   wantAll,
		"/api/studies/s/explain/importance?method=forest-fanova&cap_quantile=0.25": wantCapped,
	} {
		code, body := raw(t, e, "GET", path, "", false)
		var got struct {
			Main          json.RawMessage `json:"main"`
			Pairs         json.RawMessage `json:"pairs"`
			TotalVariance json.RawMessage `json:"total_variance"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		part, _ := json.Marshal(map[string]json.RawMessage{"main": got.Main, "pairs": got.Pairs, "total_variance": got.TotalVariance})
		if string(part) != want {
			t.Errorf("%s: %d\n got %s\nwant %s", path, code, part, want)
		}
	}
	// The default method, gp-sobol, caps too: its GP is fitted to the capped
	// values, so the variance it decomposes is the capped one's.
	var gpAll, gpCapped struct {
		Method        string  `json:"method"`
		Cap           string  `json:"cap"`
		TotalVariance float64 `json:"total_variance"`
	}
	for path, dst := range map[string]any{"/api/studies/s/explain/importance": &gpAll, "/api/studies/s/explain/importance?cap_quantile=0.25": &gpCapped} {
		code, body := raw(t, e, "GET", path, "", false)
		if code != 200 || json.Unmarshal([]byte(body), dst) != nil {
			t.Fatalf("%s: %d %s", path, code, body)
		}
	}
	if gpAll.Method != "gp-sobol" || gpAll.Cap != "" || !strings.Contains(gpCapped.Cap, "best 25%") || !(gpCapped.TotalVariance < gpAll.TotalVariance) {
		t.Errorf("gp-sobol: uncapped %+v, capped %+v", gpAll, gpCapped)
	}
	for _, q := range []string{"0", "1.5", "-0.1", "abc", "NaN"} {
		if code, body := raw(t, e, "GET", "/api/studies/s/explain/importance?cap_quantile="+q, "", false); code != 400 || !strings.Contains(body, "cap_quantile") {
			t.Errorf("cap_quantile=%s: %d %s, want 400 naming cap_quantile", q, code, body)
		}
	}
}
