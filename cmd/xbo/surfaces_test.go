package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xbo/client"
	"xbo/server"
	"xbo/store"
)

// surfacesSpace has every kind of parameter: a log float, an int, a
// categorical and a float active only for one of its levels, with defaults
// (ablation starts from them).
const surfacesSpace = `{"objective": "%s", "params": [
  {"name": "lr", "type": "float", "low": 0.001, "high": 1, "log": true, "default": 0.1},
  {"name": "layers", "type": "int", "low": 1, "high": 5, "default": 2},
  {"name": "opt", "type": "categorical", "choices": ["sgd", "adam"], "default": "adam"},
  {"name": "momentum", "type": "float", "low": 0, "high": 0.99, "condition": {"parent": "opt", "values": ["sgd"]}}]}`

// surfacesObjective is a score to maximize (or its negative to minimize).
func surfacesObjective(t *client.Trial, sign float64) (float64, error) {
	lr, err := t.Float("lr")
	if err != nil {
		return 0, err
	}
	layers, err := t.Float("layers")
	if err != nil {
		return 0, err
	}
	v := 1 - math.Pow(math.Log10(lr)+1.5, 2)/4 - 0.05*math.Abs(layers-3)
	if t.Params["opt"] == "sgd" {
		m, err := t.Float("momentum")
		if err != nil {
			return 0, err
		}
		v += 0.2*m - 0.1
	}
	return sign * v, nil
}

// serveStore starts a service on a new SQLite store in a temporary
// directory: it returns the directory, the database path (for the CLI's
// --db), a client, and a getter of the study's explanations from the API
// (normalized JSON; anything but 200 fails the test).
func serveStore(t *testing.T) (dir, db string, c *client.Client, api func(study string) func(kind, query string) string) {
	t.Helper()
	dir = t.TempDir()
	db = filepath.Join(dir, "xbo.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	api = func(study string) func(kind, query string) string {
		return func(kind, query string) string {
			t.Helper()
			resp, err := http.Get(hs.URL + "/api/studies/" + study + "/explain/" + kind + "?" + query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("API %s %s?%s: %d %s", study, kind, query, resp.StatusCode, b)
			}
			return normalizeJSON(t, "API "+kind, b)
		}
	}
	return dir, db, client.New(hs.URL, client.WithRetries(0, 0)), api
}

// normalizeJSON decodes and re-encodes a document, so that two encodings of
// the same numbers (indented or not, keys in any order) compare equal.
func normalizeJSON(t *testing.T, what string, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: not JSON: %v: %.300s", what, err, b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestEverySurfaceGivesTheSameAnswer checks that every surface agrees: one
// maximize and one minimize study (numeric, integer, categorical and
// conditional parameters) give the same document for every explanation
// from the HTTP API, the CLI (reading the same store) and the report's
// JSON; the dashboard draws the API's documents (web's end-to-end test).
// It also checks the convention itself: a maximize study's explanations are
// the mirror images of the equivalent minimize study's.
func TestEverySurfaceGivesTheSameAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every explanation on every surface")
	}
	ctx := context.Background()
	dir, db, c, apiOf := serveStore(t)
	for _, dir := range []string{"maximize", "minimize"} {
		sign := 1.0
		if dir == "minimize" {
			sign = -1
		}
		if _, err := c.CreateStudy(ctx, client.StudySpec{Name: dir, Space: json.RawMessage(fmt.Sprintf(surfacesSpace, dir)),
			Optimizer: json.RawMessage(`{"strategy":"ei","seed":5,"initial_size":10,"candidates":300}`)}); err != nil {
			t.Fatal(err)
		}
		if err := c.Optimize(ctx, dir, 24, func(_ context.Context, tr *client.Trial) (float64, error) { return surfacesObjective(tr, sign) }); err != nil {
			t.Fatal(err)
		}
	}
	best, err := c.Best(ctx, "maximize")
	if err != nil {
		t.Fatal(err)
	}
	api := func(study, kind, query string) string {
		t.Helper()
		return apiOf(study)(kind, query)
	}
	cli := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("CLI %v: exit %d: %s", args, code, errOut)
		}
		return normalizeJSON(t, "CLI "+args[1], []byte(out))
	}
	trial := fmt.Sprint(best.Number)
	cases := []struct {
		kind, query string
		cli         []string
	}{
		{"pdp", "param=lr", []string{"explain", "pdp", "--param", "lr"}},
		{"pdp", "param=momentum&band=exact", []string{"explain", "pdp", "--param", "momentum", "--exact"}},
		{"pdp", "param=lr&param=opt&grid=10&samples=200", []string{"explain", "pdp", "--param", "lr", "--param2", "opt", "--grid", "10", "--mc", "200"}},
		{"pdp", "param=layers&surrogate=forest&ice=true&samples=100", []string{"explain", "pdp", "--param", "layers", "--surrogate", "forest", "--ice", "--mc", "100"}},
		{"slice", "param=lr", []string{"explain", "pdp", "--param", "lr", "--slice"}},
		{"regional", "param=lr&samples=400", []string{"explain", "regional", "--param", "lr", "--mc", "400"}},
		{"importance", "", []string{"explain", "importance"}},
		{"importance", "cap_quantile=0.5&pairs=false", []string{"explain", "importance", "--cap-quantile", "0.5", "--pairs=false"}},
		{"shapley", "trial=" + trial + "&background=300", []string{"explain", "shapley", "--trial", trial, "--background", "300"}},
		{"shapley", "point=last&target=ei&background=200", []string{"explain", "shapley", "--point", "last", "--target", "ei", "--background", "200"}},
		{"paths", "samples=50&proposals=5", []string{"explain", "paths", "--k", "50", "--proposals", "5"}},
		{"ablation", "", []string{"explain", "ablation"}},
		{"lpi", "hstat=true&hpoints=20", []string{"explain", "lpi", "--hstat", "--hpoints", "20"}},
		{"bias", "", []string{"explain", "bias"}},
	}
	for _, study := range []string{"maximize", "minimize"} {
		for _, c := range cases {
			fromAPI := api(study, c.kind, c.query)
			fromCLI := cli(append(c.cli, "--study", study, "--db", db, "--json")...)
			if fromAPI != fromCLI {
				t.Errorf("%s %s?%s: the API and the CLI differ:\nAPI %.400s\nCLI %.400s", study, c.kind, c.query, fromAPI, fromCLI)
			}
			var head struct {
				Direction string `json:"direction"`
				Trials    int    `json:"trials"`
			}
			if err := json.Unmarshal([]byte(fromAPI), &head); err != nil || head.Direction != study || head.Trials != 24 {
				t.Errorf("%s %s: header %+v", study, c.kind, head)
			}
		}
	}

	// The report's parts are the API's documents for the same requests.
	out := filepath.Join(dir, "r.html")
	jsonOut := filepath.Join(dir, "r.json")
	if code, _, errOut := runCLI(t, "explain", "report", "--study", "maximize", "--db", db, "--out", out, "--json", jsonOut); code != 0 {
		t.Fatalf("report: %s", errOut)
	}
	raw, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Importance json.RawMessage   `json:"importance"`
		PDPs       []json.RawMessage `json:"pdps"`
		Bias       json.RawMessage   `json:"sampling_bias"`
		Shapley    json.RawMessage   `json:"shapley"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	same := func(what, fromReport, fromAPI string) {
		t.Helper()
		if got := normalizeJSON(t, what, []byte(fromReport)); got != fromAPI {
			t.Errorf("report %s differs from the API's:\nreport %.400s\nAPI    %.400s", what, got, fromAPI)
		}
	}
	same("importance", string(rep.Importance), api("maximize", "importance", ""))
	same("sampling bias", string(rep.Bias), api("maximize", "bias", ""))
	same("Shapley of the best trial", string(rep.Shapley), api("maximize", "shapley", "trial="+trial))
	for i, name := range []string{"lr", "layers", "opt", "momentum"} {
		same("regional PDP of "+name, string(rep.PDPs[i]), api("maximize", "regional", "param="+name))
	}

	// The convention: both studies rank every configuration alike, so a
	// maximize study's mean-based numbers are the minimize study's with the
	// sign changed, and the uncertainty's are equal.
	type pdpDoc struct {
		Mean, SD []float64
	}
	var pMax, pMin pdpDoc
	json.Unmarshal([]byte(api("maximize", "pdp", "param=lr")), &pMax)
	json.Unmarshal([]byte(api("minimize", "pdp", "param=lr")), &pMin)
	neg := make([]float64, len(pMin.Mean))
	for i, v := range pMin.Mean {
		neg[i] = -v
	}
	if !closeAll(pMax.Mean, neg, 1e-6) || !closeAll(pMax.SD, pMin.SD, 1e-6) {
		t.Errorf("the PDPs of lr are not mirror images:\nmax %v\nmin %v", pMax.Mean, pMin.Mean)
	}
	if !strings.Contains(api("maximize", "shapley", "trial="+trial), `"formula":"cb = m + τ·s"`) {
		t.Error("the maximize study's Shapley values do not explain the upper bound")
	}
}

// closeAll compares two slices to a relative tolerance.
func closeAll(a, b []float64, tol float64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*math.Max(1, math.Abs(a[i])) {
			return false
		}
	}
	return true
}
