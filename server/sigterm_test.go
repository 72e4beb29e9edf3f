package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"xbo/client"
)

// TestSIGTERMDuringExplanation stops a real `xbo serve` with SIGTERM while it
// computes a long explanation and an event stream is open: it must exit
// cleanly within a few seconds, not wait for the explanation.
func TestSIGTERMDuringExplanation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the xbo binary")
	}
	dir := t.TempDir()
	bin := buildXBO(t, dir)
	addr := freeAddr(t)
	srv := serveProcess(t, bin, dir, addr)
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer srv.Process.Kill() // a no-op once it has exited
	ctx := context.Background()
	c := client.New("http://"+addr, client.WithToken(token), client.WithRetries(0, 0))
	if _, err := c.CreateStudy(ctx, client.StudySpec{Name: "s", Space: json.RawMessage(space2D),
		Optimizer: json.RawMessage(`{"strategy":"random","seed":4}`)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Optimize(ctx, "s", 300, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
		t.Fatal(err)
	}
	// An open event stream, as a dashboard keeps.
	sreq, _ := http.NewRequest("GET", "http://"+addr+"/api/studies/s/events", nil)
	sreq.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	// Fit the surrogate and its PDP (seconds of work on 300 trials).
	heavy := make(chan int, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/api/studies/s/explain/pdp?param=x&param=y&grid=50&samples=160")
		if err != nil {
			heavy <- 0
			return
		}
		resp.Body.Close()
		heavy <- resp.StatusCode
	}()
	time.Sleep(700 * time.Millisecond)
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case err := <-exited:
		took := time.Since(sent)
		code := -1
		select {
		case code = <-heavy:
		case <-time.After(5 * time.Second):
		}
		t.Logf("exited %v after SIGTERM (the explanation's request ended with status %d)", took, code)
		if err != nil {
			b, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
			t.Fatalf("xbo serve exited with %v:\n%s", err, b)
		}
		if took > 3*time.Second {
			t.Fatalf("xbo serve took %v to stop", took)
		}
	case <-time.After(15 * time.Second):
		b, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
		t.Fatalf("xbo serve still running 15 s after SIGTERM:\n%s", b)
	}
}
