package server_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"xbo/store/storetest"
)

// TestPythonWorker runs two copies of examples/python/worker.py (standard
// library only) against a server and checks their trials.
func TestPythonWorker(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("skipping: python3 is not installed")
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "examples", "python", "worker.py")
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(create bool, name string) *exec.Cmd {
		args := []string{script, "--url", e.http.URL, "--token", token, "--study", "py", "--trials", "6", "--worker", name}
		if create {
			args = append(args, "--create")
		}
		return exec.CommandContext(ctx, py, args...)
	}
	if out, err := run(true, "p0").CombinedOutput(); err != nil {
		t.Fatalf("worker.py: %v\n%s", err, out)
	}
	a, b := run(false, "p1"), run(false, "p2")
	outA, outB := new(limitedBuffer), new(limitedBuffer)
	a.Stdout, a.Stderr, b.Stdout, b.Stderr = outA, outA, outB, outB
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(); err != nil {
		t.Fatalf("worker p1: %v\n%s", err, outA)
	}
	if err := b.Wait(); err != nil {
		t.Fatalf("worker p2: %v\n%s", err, outB)
	}
	all, err := e.c.Trials(ctx, "py")
	if err != nil {
		t.Fatal(err)
	}
	workers := map[string]int{}
	for _, tr := range all {
		workers[tr.Worker]++
		if tr.State == "complete" {
			if len(tr.Intermediate) == 0 || tr.Intermediate[len(tr.Intermediate)-1].Value != *tr.Value {
				t.Fatalf("trial %d: last intermediate value %v, told %v", tr.Number, tr.Intermediate, *tr.Value)
			}
		} else if tr.State != "failed" {
			t.Fatalf("trial %d is %s", tr.Number, tr.State)
		}
	}
	if len(all) != 18 || workers["p0"] != 6 || workers["p1"] != 6 || workers["p2"] != 6 {
		t.Fatalf("%d trials by workers %v", len(all), workers)
	}
}

type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b) < 1<<16 {
		l.b = append(l.b, p...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
