package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xbo/client"
	"xbo/server"
	"xbo/store"
)

const spaceDoc = `{"params":[{"name":"x","type":"float","low":0,"high":1},{"name":"k","type":"categorical","choices":["a","b"]}]}`

func newServer(t *testing.T, token string) (*httptest.Server, store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "xbo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(server.Config{Store: st, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs, st
}

func TestClientRoundTrip(t *testing.T) {
	hs, _ := newServer(t, "tok")
	ctx := context.Background()
	c := client.New(hs.URL, client.WithToken("tok"), client.WithWorker("me"))
	if _, err := c.CreateStudy(ctx, client.StudySpec{Name: "s", Space: json.RawMessage(spaceDoc), Optimizer: map[string]any{"strategy": "random", "seed": 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateStudy(ctx, client.StudySpec{Name: "s", Space: json.RawMessage(spaceDoc)})
	var ae *client.APIError
	if !client.IsStatus(err, 409) || !errorsAs(err, &ae) || ae.Message == "" {
		t.Fatalf("duplicate: %v", err)
	}
	n := 0
	err = c.Optimize(ctx, "s", 6, func(ctx context.Context, tr *client.Trial) (float64, error) {
		n++
		if tr.Worker != "me" || tr.State != "running" {
			t.Errorf("trial %+v", tr)
		}
		x, err := tr.Float("x")
		if err != nil {
			return 0, err
		}
		if _, err := tr.Float("k"); err == nil {
			t.Error("categorical read as a number")
		}
		if n == 3 {
			return 0, context.DeadlineExceeded // a failing evaluation
		}
		return x * x, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := c.Trials(ctx, "s", "failed")
	if err != nil || len(failed) != 1 || failed[0].FailReason == "" {
		t.Fatalf("failed trials: %+v %v", failed, err)
	}
	best, err := c.Best(ctx, "s")
	if err != nil || best.State != "complete" {
		t.Fatalf("best: %+v %v", best, err)
	}
	if err := c.Tell(ctx, "s", best.Number, *best.Value); err != nil {
		t.Fatalf("repeated tell: %v", err)
	}
	if err := c.Tell(ctx, "s", best.Number, *best.Value+1); !client.IsStatus(err, 409) {
		t.Fatalf("conflicting tell: %v", err)
	}
	if err := client.New(hs.URL).Tell(ctx, "s", 0, 1); !client.IsStatus(err, 401) {
		t.Fatalf("no token: %v", err)
	}
}

func errorsAs(err error, target **client.APIError) bool {
	ae, ok := err.(*client.APIError)
	if ok {
		*target = ae
	}
	return ok
}

// TestTellRetriesUntilServerIsBack: a tell sent while nothing listens is
// retried and lands once the server is up.
func TestTellRetriesUntilServerIsBack(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "xbo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, _ := server.New(server.Config{Store: st})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	ctx := context.Background()
	c := client.New("http://"+addr, client.WithRetries(30, 20*time.Millisecond))
	c.CreateStudy(ctx, client.StudySpec{Name: "s", Space: json.RawMessage(spaceDoc)})
	tr, err := c.Ask(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	hs.Close() // server gone
	go func() {
		time.Sleep(150 * time.Millisecond)
		ln2, err := net.Listen("tcp", addr)
		if err != nil {
			return
		}
		(&http.Server{Handler: srv}).Serve(ln2)
	}()
	if err := c.Tell(ctx, "s", tr.Number, 0.5); err != nil {
		t.Fatalf("tell across a restart: %v", err)
	}
	got, err := st.Trial(ctx, "s", tr.Number)
	if err != nil || got.Value == nil || *got.Value != 0.5 {
		t.Fatalf("stored: %+v %v", got, err)
	}
}

func TestTrialsPages(t *testing.T) {
	hs, st := newServer(t, "")
	ctx := context.Background()
	c := client.New(hs.URL)
	c.CreateStudy(ctx, client.StudySpec{Name: "s", Space: json.RawMessage(spaceDoc)})
	const n = 1003
	for i := 0; i < n; i++ {
		v := float64(i)
		if _, err := st.AddTrial(ctx, "s", store.NewTrial{Params: map[string]any{"x": 0.5, "k": "a"}, Value: &v, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.Trials(ctx, "s")
	if err != nil || len(all) != n || all[n-1].Number != n-1 {
		t.Fatalf("%d trials, %v", len(all), err)
	}
	evs, v, err := c.Events(ctx, "s", 0)
	if err != nil || len(evs) != n || v == 0 {
		t.Fatalf("events: %d %d %v", len(evs), v, err)
	}
}

// A worker of a study with a pruner reports its learning curve through
// Optimize's objective and returns ErrPruned when Report says to stop:
// those trials end pruned (never failed), with their last reported value.
func TestOptimizeWithPruner(t *testing.T) {
	hs, _ := newServer(t, "")
	ctx := context.Background()
	c := client.New(hs.URL)
	st, err := c.CreateStudy(ctx, client.StudySpec{Name: "p", Space: json.RawMessage(spaceDoc),
		Optimizer: map[string]any{"strategy": "random", "seed": 4},
		Pruner:    map[string]any{"type": "asha", "min_resource": 1, "reduction_factor": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(st.Pruner), `"type":"asha"`) {
		t.Fatalf("study pruner %s", st.Pruner)
	}
	stopped := map[int64]float64{}
	err = c.Optimize(ctx, "p", 12, func(ctx context.Context, tr *client.Trial) (float64, error) {
		x, err := tr.Float("x")
		if err != nil {
			return 0, err
		}
		var loss float64
		for step := int64(1); step <= 8; step++ {
			loss = x + 1/float64(step) // a better x is better at every step
			prune, err := c.Report(ctx, "p", tr.Number, step, loss)
			if err != nil {
				return 0, err
			}
			if prune {
				stopped[tr.Number] = loss
				return 0, fmt.Errorf("stopped at step %d: %w", step, client.ErrPruned)
			}
		}
		return loss, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pruned, err := c.Trials(ctx, "p", "pruned")
	if err != nil || len(pruned) == 0 || len(pruned) != len(stopped) {
		t.Fatalf("%d pruned trials, %d stopped by the objective (%v)", len(pruned), len(stopped), err)
	}
	for _, tr := range pruned {
		if tr.Value == nil || *tr.Value != stopped[tr.Number] {
			t.Errorf("trial %d: value %v, last reported %v", tr.Number, tr.Value, stopped[tr.Number])
		}
	}
	sum, err := c.Study(ctx, "p")
	if err != nil || sum.Counts["failed"] != 0 || sum.Counts["complete"]+sum.Counts["pruned"] != 12 {
		t.Fatalf("counts %v %v", sum.Counts, err)
	}
	if err := c.PruneWithValue(ctx, "p", 0, math.NaN()); err == nil {
		t.Error("a NaN value was sent")
	}
}

// The note calls round-trip through a server and refuse what names no
// study or trial before sending anything.
func TestNotes(t *testing.T) {
	hs, _ := newServer(t, "tok")
	c := client.New(hs.URL, client.WithToken("tok"), client.WithRetries(0, 0))
	ctx := context.Background()
	if _, err := c.CreateStudy(ctx, client.StudySpec{Name: "n", Space: json.RawMessage(spaceDoc)}); err != nil {
		t.Fatal(err)
	}
	tr, err := c.Enqueue(ctx, "n", map[string]any{"x": 0.5, "k": "a"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.SetStudyNote(ctx, "n", "study\nnote"); err != nil || st.Note != "study\nnote" || st.Name != "n" {
		t.Fatalf("SetStudyNote: %+v, %v", st, err)
	}
	if got, err := c.SetTrialNote(ctx, "n", tr.Number, "queued by hand"); err != nil || got.Note != "queued by hand" || got.State != "pending" {
		t.Fatalf("SetTrialNote: %+v, %v", got, err)
	}
	if _, err := c.SetTrialNote(ctx, "n", 5, "x"); !client.IsStatus(err, 404) {
		t.Errorf("note of an absent trial: %v, want 404", err)
	}
	if _, err := c.SetTrialNote(ctx, "n", -1, "x"); err == nil || client.IsStatus(err, 404) {
		t.Errorf("note of trial -1: %v, want an error before any request", err)
	}
	if _, err := c.SetStudyNote(ctx, "", "x"); err == nil {
		t.Error("a note for no study accepted")
	}
}
