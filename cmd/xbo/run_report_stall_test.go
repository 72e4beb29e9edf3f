package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A command that prints far more than a pipe holds (64 KiB) while the
// service is down and its intermediate values cannot be sent: its output
// is read on, so it finishes and brings the service back itself (it
// removes the file that keeps the service down), and every intermediate
// value and its result reach the study. Were the reading to wait for the
// report, the command would block on the full pipe, the service would
// stay down, and the report would be given up after --retry-for.
func TestRunReadsOutputWhileReportsWait(t *testing.T) {
	dir := t.TempDir()
	s := newSwitchedServer(t, dir)
	spacePath := writeTestFile(t, dir, "r.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	script := `touch ` + s.downFile + `
echo '{"step": 1, "value": 0.5}'
yes 'a line of the training log, printed while the service is down' | head -c 300000
echo '{"step": 2, "value": 0.25}'
echo '{"step": 2, "value": 0.2}'
rm ` + s.downFile + `
echo 0.125`
	start := time.Now()
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "1", "--url", s.URL, "--retry-for", "15s",
		"--", "/bin/sh", "-c", script)
	took := time.Since(start)
	if code != 0 || strings.Contains(errOut, "not recorded") {
		t.Fatalf("exit %d after %v: %s", code, took, errOut)
	}
	s.mu.Lock()
	refused := s.refused
	s.mu.Unlock()
	if refused == 0 {
		t.Fatal("no report was refused: the service was never down while the command ran")
	}
	if took > 10*time.Second {
		t.Fatalf("the run took %v: the command waited for the report", took)
	}
	tr, err := s.st.Trial(context.Background(), "r", 0)
	if err != nil || tr.Value == nil || *tr.Value != 0.125 {
		t.Fatalf("trial 0: %+v %v", tr, err)
	}
	// Step 2's later value replaced its earlier one, as the study would.
	if len(tr.Intermediate) != 2 || tr.Intermediate[0].Step != 1 || tr.Intermediate[0].Value != 0.5 ||
		tr.Intermediate[1].Step != 2 || tr.Intermediate[1].Value != 0.2 {
		t.Fatalf("intermediate values %+v, want step 1: 0.5 and step 2: 0.2", tr.Intermediate)
	}
}
