package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"xbo/client"
	"xbo/runner"
	"xbo/server"
	"xbo/store"
)

// A placeholder that names no parameter is refused before anything is
// created, with the parameters named; --literal-braces passes it on.
func TestRunRefusesUnknownPlaceholder(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "p.json", `{"params":[{"name":"x1","type":"float","low":0,"high":1},{"name":"x2","type":"float","low":0,"high":1}]}`)
	code, stdout, stderr := runCLI(t, "run", "--space", spacePath, "--trials", "2", "--db", db, "--", "echo", "{x1}", "{x3}")
	want := "xbo run: the command's placeholder {x3} names no parameter (the parameters: x1, x2); add --literal-braces to pass it on as written\n"
	if code != 2 || stdout != "" || stderr != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("the refused run left %s (%v)", db, err)
	}
	// The command succeeds only when it gets {x3} as written.
	code, _, stderr = runCLI(t, "run", "--space", spacePath, "--trials", "2", "--db", db, "--literal-braces", "--",
		"/bin/sh", "-c", `test "$1" = "{x3}" && echo "$2"`, "sh", "{x3}", "{x1}")
	if code != 0 {
		t.Fatalf("--literal-braces: exit %d: %s", code, stderr)
	}
	for _, tr := range studyTrials(t, db, "p") {
		if tr.State != store.Complete {
			t.Errorf("trial %d: %s (%s)", tr.Number, tr.State, tr.FailReason)
		}
	}
	// A study resumed by name is checked against its stored space.
	code, _, stderr = runCLI(t, "run", "--name", "p", "--trials", "3", "--db", db, "--", "echo", "{x4}")
	if code != 2 || !strings.Contains(stderr, "placeholder {x4} names no parameter (the parameters: x1, x2)") {
		t.Fatalf("by name: exit %d, stderr %q", code, stderr)
	}
}

// inProcessClient opens the store db and serves it to a client in this
// process that asks as worker; close stops both.
func inProcessClient(t *testing.T, db, worker string) (c *client.Client, close func()) {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return client.New("http://localhost", client.WithHandler(srv), client.WithWorker(worker)), func() {
		srv.Drain()
		st.Close()
	}
}

// studyDB creates the study name over x in [0, 1] in a new SQLite file and
// returns the file.
func studyDB(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, name+".json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	if code, _, stderr := runCLI(t, "study", "create", "--space", spacePath, "--name", name, "--db", db); code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	return db
}

// Trials that a killed xbo run on this machine left running are failed by
// the next run, those of one of its slots (worker name .../PID/SLOT) too;
// a live process's are left alone.
func TestRunFailsTrialsOfKilledSlots(t *testing.T) {
	db := studyDB(t, "k")
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	me := runner.WorkerID()
	host := me[:strings.LastIndexByte(me, '/')+1]
	dead := host + strconv.Itoa(gone.Process.Pid)
	for _, worker := range []string{dead, dead + "/2", me + "/1"} {
		c, close := inProcessClient(t, db, worker)
		if _, err := c.Ask(context.Background(), "k"); err != nil {
			t.Fatal(err)
		}
		close()
	}
	code, _, stderr := runCLI(t, "run", "--name", "k", "--trials", "3", "--db", db, "--", "echo", "{x}")
	if code != 0 || !strings.Contains(stderr, "2 trials left running by an earlier xbo run that was killed were failed") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, tr := range studyTrials(t, db, "k")[:3] {
		abandoned := tr.State == store.Failed && strings.HasPrefix(tr.FailReason, "abandoned: xbo run (process "+strconv.Itoa(gone.Process.Pid)+")")
		if abandoned != (tr.Worker != me+"/1") {
			t.Errorf("trial %d of %s: %s %q", tr.Number, tr.Worker, tr.State, tr.FailReason)
		}
	}
}

// The banner of a resumed run counts finished trials as docs/run.md says:
// complete, pruned and failed, but neither interrupted nor running ones.
func TestRunBannerCountsByTheReadmesRule(t *testing.T) {
	db := studyDB(t, "b")
	ctx := context.Background()
	c, close := inProcessClient(t, db, "elsewhere")
	// 2 complete, 1 pruned, 1 failed, 2 interrupted and 1 running: 4
	// finished.
	outcomes := []func(n int64) error{
		func(n int64) error { return c.Tell(ctx, "b", n, 1) },
		func(n int64) error { return c.Tell(ctx, "b", n, 2) },
		func(n int64) error { return c.PruneWithValue(ctx, "b", n, 3) },
		func(n int64) error { return c.Fail(ctx, "b", n, "boom") },
		func(n int64) error { return c.Fail(ctx, "b", n, "interrupted") },
		func(n int64) error { return c.Fail(ctx, "b", n, "interrupted") },
		func(int64) error { return nil },
	}
	for _, tell := range outcomes {
		tr, err := c.Ask(ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		if err := tell(tr.Number); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := runner.Finished(ctx, c, "b"); n != 4 || err != nil {
		t.Fatalf("runner.Finished: %d, %v; want 4", n, err)
	}
	close()
	// With 4 finished and 1 running the total of 5 is reached: nothing runs.
	code, _, stderr := runCLI(t, "run", "--name", "b", "--trials", "5", "--db", db, "--", "true")
	if code != 0 || !strings.Contains(stderr, `xbo run: study "b" (`+db+`): 4 of 5 trials finished; up to 1 command(s) at once`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// With --workers 2 each slot asks under a name of its own, so the trials
// (and the dashboard's timeline) show two workers.
func TestRunNamesEachSlot(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "w.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	code, _, stderr := runCLI(t, "run", "--space", spacePath, "--trials", "4", "--workers", "2", "--db", db, "--",
		"/bin/sh", "-c", "sleep 0.3; echo {x}")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	workers := map[string]int{}
	for _, tr := range studyTrials(t, db, "w") {
		workers[tr.Worker]++
	}
	me := runner.WorkerID()
	if len(workers) != 2 || workers[me+"/1"] == 0 || workers[me+"/2"] == 0 {
		t.Fatalf("workers %v; want %s/1 and %s/2", workers, me, me)
	}
}
