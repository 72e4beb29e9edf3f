package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"xbo/server"
	"xbo/store/storetest"
)

// TestNotes: notes are set and cleared through the API (the Go client),
// come back in the study and trial JSON, leave the trial's version, and
// are refused like any other write: without the token, from another
// site's page, not as JSON, without the field, too long or with NUL.
func TestNotes(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, 0)
		ctx := context.Background()
		createStudy(t, e, "s", `{"strategy":"random","seed":1}`)
		tr, err := e.c.Ask(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		study, err := e.c.SetStudyNote(ctx, "s", "baseline <script>alert(1)</script>\nsecond line")
		if err != nil {
			t.Fatal(err)
		}
		if study.Note != "baseline <script>alert(1)</script>\nsecond line" || study.Name != "s" {
			t.Errorf("PUT note answered %+v", study)
		}
		if got, _ := e.c.Study(ctx, "s"); got.Note != study.Note {
			t.Errorf("GET study: note %q, want %q", got.Note, study.Note)
		}
		if list, _ := e.c.Studies(ctx); len(list) != 1 || list[0].Note != study.Note {
			t.Errorf("GET studies: %+v", list)
		}
		noted, err := e.c.SetTrialNote(ctx, "s", tr.Number, "OOM on node 3")
		if err != nil {
			t.Fatal(err)
		}
		if noted.Note != "OOM on node 3" || noted.Version != tr.Version || noted.State != "running" {
			t.Errorf("PUT trial note answered note %q version %d state %s; want the note, version %d, running", noted.Note, noted.Version, noted.State, tr.Version)
		}
		if got, _ := e.c.Trial(ctx, "s", tr.Number); got.Note != "OOM on node 3" {
			t.Errorf("GET trial: note %q", got.Note)
		}
		if list, _ := e.c.Trials(ctx, "s"); len(list) != 1 || list[0].Note != "OOM on node 3" {
			t.Errorf("GET trials: %+v", list)
		}
		// Marking the running trial failed, as the dashboard does, keeps its note.
		if err := e.c.Fail(ctx, "s", tr.Number, "stuck"); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.c.Trial(ctx, "s", tr.Number); got.State != "failed" || got.FailReason != "stuck" || got.Note != "OOM on node 3" {
			t.Errorf("after failing: %+v", got)
		}

		before := dump(t, st)
		long := `{"note":"` + strings.Repeat("a", 10001) + `"}`
		for _, c := range []struct {
			name, path, body, contentType, origin string
			auth                                  bool
			status                                int
			msg                                   string
		}{
			{"no token", "/api/studies/s/note", `{"note":"x"}`, "application/json", "", false, 401, "bearer token"},
			{"foreign page", "/api/studies/s/note", `{"note":"x"}`, "application/json", "http://evil.example", true, 403, "origin"},
			{"not JSON", "/api/studies/s/note", `{"note":"x"}`, "text/plain", "", true, 415, "application/json"},
			{"no note field", "/api/studies/s/note", `{}`, "application/json", "", true, 400, "note is missing"},
			{"unknown field", "/api/studies/s/note", `{"note":"x","text":"y"}`, "application/json", "", true, 400, "unknown field"},
			{"NUL", "/api/studies/s/note", `{"note":"a\u0000b"}`, "application/json", "", true, 400, "NUL"},
			{"too long", "/api/studies/s/note", long, "application/json", "", true, 400, "at most 10000 characters"},
			{"too long, trial", "/api/studies/s/trials/0/note", long, "application/json", "", true, 400, "at most 10000 characters"},
			{"unknown study", "/api/studies/nope/note", `{"note":"x"}`, "application/json", "", true, 404, "not found"},
			{"unknown trial", "/api/studies/s/trials/7/note", `{"note":"x"}`, "application/json", "", true, 404, "not found"},
			{"padded trial number", "/api/studies/s/trials/00/note", `{"note":"x"}`, "application/json", "", true, 404, "not found"},
		} {
			req, _ := http.NewRequest("PUT", e.http.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", c.contentType)
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			if c.auth {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct{ Error string }
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(strings.ToLower(body.Error), strings.ToLower(c.msg)) {
				t.Errorf("%s: %d %q, want %d and %q", c.name, resp.StatusCode, body.Error, c.status, c.msg)
			}
		}
		if after := dump(t, st); after != before {
			t.Errorf("refused notes changed the store:\n%s\nwas\n%s", after, before)
		}

		if _, err := e.c.SetStudyNote(ctx, "s", ""); err != nil {
			t.Fatal(err)
		}
		code, body := raw(t, e, "GET", "/api/studies/s", "", false)
		if code != 200 || strings.Contains(body, `"note"`) {
			t.Errorf("a cleared note is still in the study's JSON: %d %s", code, body)
		}
	})
}

// TestReadOnly: a read-only server refuses every write, token or not,
// serves reads, and says so in its health answer, which the dashboard
// reads to show or hide its controls; a writable server says whether
// writes need the token.
func TestReadOnly(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	createStudy(t, e, "s", `{"strategy":"random","seed":1}`)
	health := func(url string) server.Health {
		resp, err := http.Get(url + "/api/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h server.Health
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := health(e.http.URL); h != (server.Health{Status: "ok", Writes: true, Token: true}) {
		t.Errorf("health with a token: %+v", h)
	}
	open, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	hsOpen := httptest.NewServer(open)
	defer hsOpen.Close()
	if h := health(hsOpen.URL); h != (server.Health{Status: "ok", Writes: true, Token: false}) {
		t.Errorf("health without a token: %+v", h)
	}

	ro, err := server.New(server.Config{Store: st, Token: token, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(ro)
	defer hs.Close()
	if h := health(hs.URL); h != (server.Health{Status: "ok", Writes: false, Token: false}) {
		t.Errorf("health of a read-only server: %+v", h)
	}
	before := dump(t, st)
	for _, w := range []struct{ method, path, body string }{
		{"PUT", "/api/studies/s/note", `{"note":"x"}`},
		{"PUT", "/api/studies/s/trials/0/note", `{"note":"x"}`},
		{"DELETE", "/api/studies/s", ""},
		{"POST", "/api/studies/s/ask", ""},
		{"POST", "/api/studies/s/trials/0/tell", `{"state":"failed"}`},
	} {
		req, _ := http.NewRequest(w.method, hs.URL+w.path, strings.NewReader(w.body))
		if w.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s %s on a read-only server: %d, want 403", w.method, w.path, resp.StatusCode)
		}
	}
	if after := dump(t, st); after != before {
		t.Errorf("a read-only server changed the store")
	}
	resp, err := http.Get(hs.URL + "/api/studies/s")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET on a read-only server: %d", resp.StatusCode)
	}
}
