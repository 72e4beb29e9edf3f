package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"xbo/server"
	"xbo/store"
)

// switchedServer is a real server on SQLite that answers every request 503
// with Retry-After: 1 (as during a store outage) while it is down: until a
// time, or while a file exists.
type switchedServer struct {
	*httptest.Server
	st       store.Store
	downFile string

	mu        sync.Mutex
	downUntil time.Time
	refused   int
}

func newSwitchedServer(t *testing.T, dir string) *switchedServer {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, "remote.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	s := &switchedServer{st: st, downFile: filepath.Join(dir, "down")}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := os.Stat(s.downFile)
		s.mu.Lock()
		down := err == nil || time.Now().Before(s.downUntil)
		if down {
			s.refused++
		}
		s.mu.Unlock()
		if down {
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":"store unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// producedResults reads the lines "trial value" the commands appended to
// a file.
func producedResults(t *testing.T, path string) map[int64]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int64]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		n, err1 := strconv.ParseInt(fields[0], 10, 64)
		v, err2 := strconv.ParseFloat(fields[1], 64)
		if len(fields) != 2 || err1 != nil || err2 != nil {
			t.Fatalf("produced line %q", sc.Text())
		}
		out[n] = v
	}
	return out
}

// completeTrials counts a study's complete trials (0 while it does not
// exist).
func completeTrials(ctx context.Context, st store.Store, study string) int {
	list, _, err := st.Trials(ctx, study, store.TrialQuery{})
	n := 0
	for _, tr := range list {
		if err == nil && tr.State == store.Complete {
			n++
		}
	}
	return n
}

// checkStored fails unless every result a command produced is stored, as
// its trial's value.
func checkStored(t *testing.T, st store.Store, study string, produced map[int64]float64) {
	t.Helper()
	for n, v := range produced {
		tr, err := st.Trial(context.Background(), study, n)
		if err != nil || tr.State != store.Complete || tr.Value == nil || *tr.Value != v {
			t.Fatalf("trial %d produced %v; stored: %+v %v", n, v, tr, err)
		}
	}
}

// xbo run --url rides out a 5 s outage of the service (every request
// answered 503, Retry-After: 1; the former budget of 5 retries gave up
// after at most 4.7 s, aborted the run and dropped the results its
// commands held) with 3 workers: every result the commands produced is in
// the store, the run ends with status 0 and its summary counts the study's
// trials.
func TestRunRidesOutAnOutage(t *testing.T) {
	dir := t.TempDir()
	s := newSwitchedServer(t, dir)
	spacePath := writeTestFile(t, dir, "o.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	produced := filepath.Join(dir, "produced")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The outage starts once a few trials are done, with commands
		// running.
		for ctx.Err() == nil {
			if completeTrials(ctx, s.st, "o") >= 3 {
				s.mu.Lock()
				s.downUntil = time.Now().Add(5 * time.Second)
				s.mu.Unlock()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "14", "--workers", "3", "--url", s.URL, "--retry-for", "20s",
		"--", "/bin/sh", "-c", `sleep 0.3; echo "$XBO_TRIAL {x}" >> `+produced+`; echo {x}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s.mu.Lock()
	refused := s.refused
	s.mu.Unlock()
	if refused == 0 {
		t.Fatal("the outage refused no request: the test tested nothing")
	}
	got := producedResults(t, produced)
	checkStored(t, s.st, "o", got)
	if len(got) != 14 || !strings.Contains(errOut, "the study has 14 finished trials") || strings.Contains(errOut, "-1/") {
		t.Fatalf("%d results produced; stderr:\n%s", len(got), errOut)
	}
}

// An outage longer than --retry-for: the run cannot deliver its result,
// keeps it, and at the end prints it as the xbo tell command that records
// it (exit status 1, never a silent loss); that command records it once
// the service is back.
func TestRunReportsUndeliveredResults(t *testing.T) {
	dir := t.TempDir()
	s := newSwitchedServer(t, dir)
	spacePath := writeTestFile(t, dir, "u.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	produced := filepath.Join(dir, "produced")
	// The command takes the service down as it finishes.
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "3", "--url", s.URL, "--retry-for", "1s",
		"--", "/bin/sh", "-c", `echo "$XBO_TRIAL {x}" >> `+produced+`; touch `+s.downFile+`; echo {x}`)
	if code != 1 || !strings.Contains(errOut, "results not delivered") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := producedResults(t, produced)
	if len(got) != 1 {
		t.Fatalf("%d results produced, want 1: %v", len(got), got)
	}
	var tell []string
	for _, line := range strings.Split(errOut, "\n") {
		if cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "xbo tell "); ok {
			cmd, _, _ = strings.Cut(cmd, "    #")
			tell = append([]string{"tell"}, strings.Fields(cmd)...)
		}
	}
	if tell == nil || !strings.Contains(errOut, "trial 0: its result could not be told") {
		t.Fatalf("no xbo tell command printed for the kept result:\n%s", errOut)
	}
	os.Remove(s.downFile)
	if code, _, errOut := runCLI(t, tell...); code != 0 {
		t.Fatalf("%v: exit %d: %s", tell, code, errOut)
	}
	checkStored(t, s.st, "u", got)
}

// xbo ask and xbo tell wait out an outage for --retry-for (default 60 s):
// a tell sent during a 2 s outage lands, and an unreachable server is
// given up on once the window has passed, not before.
func TestAskTellRetryFor(t *testing.T) {
	dir := t.TempDir()
	s := newSwitchedServer(t, dir)
	spacePath := writeTestFile(t, dir, "a.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	code, out, errOut := runCLI(t, "ask", "--study", "a", "--space", spacePath, "--url", s.URL)
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, errOut)
	}
	var asked askedTrial
	if err := json.Unmarshal([]byte(out), &asked); err != nil {
		t.Fatalf("ask printed %q: %v", out, err)
	}
	s.mu.Lock()
	s.downUntil = time.Now().Add(2 * time.Second)
	s.mu.Unlock()
	if code, _, errOut := runCLI(t, "tell", "--study", "a", "--trial", strconv.FormatInt(asked.Number, 10), "--value", "0.5",
		"--url", s.URL, "--retry-for", "20s"); code != 0 {
		t.Fatalf("tell across a 2 s outage: exit %d: %s", code, errOut)
	}
	checkStored(t, s.st, "a", map[int64]float64{asked.Number: 0.5})

	s.mu.Lock()
	s.downUntil = time.Now().Add(time.Hour)
	s.mu.Unlock()
	start := time.Now()
	code, _, errOut = runCLI(t, "ask", "--study", "a", "--url", s.URL, "--retry-for", "1500ms")
	if took := time.Since(start); code != 1 || took < 1500*time.Millisecond || took > 10*time.Second || !strings.Contains(errOut, "503") {
		t.Fatalf("ask during a long outage with --retry-for 1500ms: exit %d after %v: %s", code, took, errOut)
	}
	if code, _, errOut := runCLI(t, "ask", "--study", "a", "--url", s.URL, "--retry-for", "-1s"); code != 2 || !strings.Contains(errOut, "--retry-for") {
		t.Fatalf("a negative --retry-for: exit %d: %s", code, errOut)
	}
}
