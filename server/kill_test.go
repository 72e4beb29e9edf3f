package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"xbo/client"
)

// buildXBO compiles the xbo command into dir.
func buildXBO(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "xbo")
	cmd := exec.Command("go", "build", "-o", bin, "xbo/cmd/xbo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build xbo: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// serveProcess starts `xbo serve` in dir (no --db: it must create ./xbo.db)
// and waits until it answers.
func serveProcess(t *testing.T, bin, dir, addr string, extra ...string) *exec.Cmd {
	t.Helper()
	args := append([]string{"serve", "--addr", addr, "--token", token, "--log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	log, err := os.OpenFile(filepath.Join(dir, "serve.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := client.New("http://"+addr, client.WithRetries(0, 0))
	for deadline := time.Now().Add(15 * time.Second); ; {
		if _, err := c.Studies(context.Background()); err == nil {
			return cmd
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			b, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
			t.Fatalf("xbo serve did not come up:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKill9 kills a real `xbo serve` process with SIGKILL twice while eight
// workers ask and tell, restarts it each time, and checks that every told
// value is stored, no trial was handed to two workers, trials whose workers
// vanished (abandoned on purpose, or lost in a kill) expire and are queued
// again, and their requeued copies get evaluated.
func TestKill9(t *testing.T) {
	dir := t.TempDir()
	bin := buildXBO(t, dir)
	addr := freeAddr(t)
	const timeout = 2 * time.Second
	srv := serveProcess(t, bin, dir, addr, "--trial-timeout", timeout.String())
	defer func() { srv.Process.Kill(); srv.Wait() }()
	if _, err := os.Stat(filepath.Join(dir, "xbo.db")); err != nil {
		t.Fatalf("xbo serve without --db did not create ./xbo.db: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := client.New("http://"+addr, client.WithToken(token), client.WithRetries(40, 50*time.Millisecond))
	if _, err := admin.CreateStudy(ctx, client.StudySpec{Name: "k", Space: json.RawMessage(space2D),
		Optimizer: json.RawMessage(`{"strategy":"random","seed":21}`)}); err != nil {
		t.Fatal(err)
	}

	var (
		mu        sync.Mutex
		handed    = map[int64]string{}  // trial number → worker that received it
		told      = map[int64]float64{} // values whose tell was acknowledged
		abandoned = map[int64]bool{}
		failures  []string
	)
	var completed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			name := fmt.Sprintf("w%d", w)
			c := client.New("http://"+addr, client.WithToken(token), client.WithWorker(name), client.WithRetries(40, 50*time.Millisecond))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tr, err := c.Ask(ctx, "k")
				if err != nil {
					// The server died during the ask: the trial, if it was
					// created, is lost to us and must expire.
					time.Sleep(20 * time.Millisecond)
					continue
				}
				mu.Lock()
				if prev, dup := handed[tr.Number]; dup {
					failures = append(failures, fmt.Sprintf("trial %d handed to %s and %s", tr.Number, prev, name))
				}
				handed[tr.Number] = name
				mu.Unlock()
				if (w+i)%17 == 0 { // a worker that crashes: never tells
					mu.Lock()
					abandoned[tr.Number] = true
					mu.Unlock()
					continue
				}
				v, _ := evalBranin(tr)
				time.Sleep(2 * time.Millisecond) // "training"
				if err := c.Tell(ctx, "k", tr.Number, v); err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("tell %d: %v", tr.Number, err))
					mu.Unlock()
					continue
				}
				mu.Lock()
				told[tr.Number] = v
				mu.Unlock()
				completed.Add(1)
			}
		}(w)
	}
	waitFor := func(n int64) {
		for completed.Load() < n {
			if ctx.Err() != nil {
				t.Fatalf("timed out at %d completed trials", completed.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, at := range []int64{80, 200} {
		waitFor(at)
		if err := srv.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		srv.Wait()
		time.Sleep(200 * time.Millisecond)
		srv = serveProcess(t, bin, dir, addr, "--trial-timeout", timeout.String())
	}
	waitFor(320)
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d failures, first: %s", len(failures), failures[0])
	}

	// Let every abandoned or lost trial expire; the server's expiry loop
	// requeues them. Then evaluate the queue.
	time.Sleep(timeout + time.Second)
	finisher := client.New("http://"+addr, client.WithToken(token), client.WithWorker("finisher"))
	for {
		queued, err := admin.Trials(ctx, "k", "pending")
		if err != nil {
			t.Fatal(err)
		}
		if len(queued) == 0 {
			break
		}
		tr, err := finisher.Ask(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if tr.RequeuedFrom == nil {
			t.Fatalf("finisher got a fresh proposal %d while %d trials were queued", tr.Number, len(queued))
		}
		v, _ := evalBranin(tr)
		if err := finisher.Tell(ctx, "k", tr.Number, v); err != nil {
			t.Fatal(err)
		}
		told[tr.Number] = v
		handed[tr.Number] = "finisher"
	}

	all, err := admin.Trials(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	byNumber := map[int64]client.Trial{}
	requeuedFrom := map[int64]int64{}
	for i, tr := range all {
		if tr.Number != int64(i) {
			t.Fatalf("trial numbers are not dense: position %d holds %d", i, tr.Number)
		}
		states[tr.State]++
		byNumber[tr.Number] = tr
		if tr.RequeuedFrom != nil {
			if prev, dup := requeuedFrom[*tr.RequeuedFrom]; dup {
				t.Fatalf("trial %d requeued twice (as %d and %d)", *tr.RequeuedFrom, prev, tr.Number)
			}
			requeuedFrom[*tr.RequeuedFrom] = tr.Number
		}
	}
	for n, v := range told {
		tr, ok := byNumber[n]
		if !ok || tr.State != "complete" || tr.Value == nil || *tr.Value != v {
			t.Fatalf("told value of trial %d (%v) is not stored: %+v", n, v, tr)
		}
	}
	for n, who := range handed {
		if byNumber[n].Worker != who {
			t.Fatalf("trial %d: stored worker %q, handed to %s", n, byNumber[n].Worker, who)
		}
	}
	for n := range abandoned {
		tr := byNumber[n]
		if tr.State != "expired" {
			t.Fatalf("abandoned trial %d is %s, want expired", n, tr.State)
		}
		copyNum, ok := requeuedFrom[n]
		if !ok || byNumber[copyNum].State != "complete" {
			t.Fatalf("abandoned trial %d was not requeued and evaluated", n)
		}
	}
	lost := 0
	for _, tr := range all {
		if _, ok := handed[tr.Number]; !ok {
			lost++ // created by an ask whose answer died with the server
			if tr.State != "expired" {
				t.Fatalf("trial %d never reached a worker but is %s", tr.Number, tr.State)
			}
		}
	}
	if states["running"] != 0 || states["pending"] != 0 {
		t.Fatalf("unfinished trials left: %v", states)
	}
	if len(abandoned) == 0 {
		t.Fatal("no abandoned trials: the expiry path was not exercised")
	}
	t.Logf("%d trials after 2 kills: %v; %d abandoned and %d lost in kills, all expired and requeued", len(all), states, len(abandoned), lost)
}
