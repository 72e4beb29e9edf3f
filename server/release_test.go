package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"xbo/client"
	"xbo/server"
	"xbo/store"
	"xbo/store/storetest"
)

// gatedStore holds each AskBatch, after the store has made its trials,
// until the test opens the gate, so that a request can be cancelled between
// the making of its trial and the answer.
type gatedStore struct {
	store.Store
	made chan []*store.Trial
	gate chan struct{}
}

func (g *gatedStore) AskBatch(ctx context.Context, study string, reqs []store.AskRequest, propose store.BatchProposeFunc) ([]*store.Trial, error) {
	out, err := g.Store.AskBatch(ctx, study, reqs, propose)
	select {
	case g.made <- out:
	default:
	}
	<-g.gate
	return out, err
}

// gatedServer is a server on a gatedStore of the backend with one study,
// "r" (random proposals), and a trial timeout of an hour.
func gatedServer(t *testing.T, backend string) (store.Store, *gatedStore, *server.Server) {
	t.Helper()
	st, _ := storetest.Open(t, backend)
	rec, err := server.NewStudyRecord("r", json.RawMessage(space2D), json.RawMessage(`{"strategy":"random","seed":3}`), nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStudy(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Store: st, made: make(chan []*store.Trial, 1), gate: make(chan struct{})}
	srv, err := server.New(server.Config{Store: g, Token: token, TrialTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return st, g, srv
}

// askUntilMade sends an ask in the background and returns the trials the
// gated store made for it, and where the ask's error arrives once it ends.
func askUntilMade(t *testing.T, g *gatedStore, send func() (*http.Response, error)) ([]*store.Trial, <-chan error) {
	t.Helper()
	asked := make(chan error, 1)
	go func() {
		resp, err := send()
		if err == nil {
			resp.Body.Close()
		}
		asked <- err
	}()
	select {
	case made := <-g.made:
		return made, asked
	case <-time.After(10 * time.Second):
		t.Fatal("no trial was made for the ask")
		return nil, nil
	}
}

// TestCancelledAskReleasesTrial disconnects a real HTTP client while its
// ask is being served: the trial made for it must go back to the queue and
// be the next ask's, not stay running until its deadline.
func TestCancelledAskReleasesTrial(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, g, srv := gatedServer(t, backend)
		ctx := context.Background()
		// The ask is the only connection until the gate opens: its close
		// is the server noticing that the client went away.
		closed := make(chan struct{})
		var once sync.Once
		hs := httptest.NewUnstartedServer(srv)
		hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed {
				once.Do(func() { close(closed) })
			}
		}
		hs.Start()
		t.Cleanup(hs.Close)

		askCtx, cancel := context.WithCancel(ctx)
		made, asked := askUntilMade(t, g, func() (*http.Response, error) {
			req, _ := http.NewRequestWithContext(askCtx, "POST", hs.URL+"/api/studies/r/ask", strings.NewReader(`{"worker":"gone"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			return http.DefaultClient.Do(req)
		})
		if len(made) != 1 || made[0].State != store.Running || made[0].Worker != "gone" {
			t.Fatalf("made %+v, want one running trial of worker gone", made)
		}
		cancel()
		if err := <-asked; err == nil {
			t.Fatal("the cancelled ask got an answer")
		}
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not notice the disconnection")
		}
		close(g.gate)

		num := made[0].Number
		deadline := time.Now().Add(10 * time.Second)
		for {
			tr, err := st.Trial(ctx, "r", num)
			if err != nil {
				t.Fatal(err)
			}
			if tr.State == store.Pending {
				if tr.Worker != "" || tr.Deadline != nil || tr.StartedAt != nil {
					t.Fatalf("released trial keeps worker %q, deadline %v, start %v", tr.Worker, tr.Deadline, tr.StartedAt)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("trial %d is still %s after its ask was cancelled", num, tr.State)
			}
			time.Sleep(10 * time.Millisecond)
		}
		c := client.New(hs.URL, client.WithToken(token), client.WithWorker("next"), client.WithRetries(0, 0))
		next, err := c.Ask(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if next.Number != num || next.Worker != "next" || next.State != "running" {
			t.Fatalf("next ask got trial %d (worker %q, %s), want the released trial %d", next.Number, next.Worker, next.State, num)
		}
		if !paramsEqual(next.Params, made[0].Params) {
			t.Fatalf("released trial's params changed: %v, made with %v", next.Params, made[0].Params)
		}
		all, total, err := st.Trials(ctx, "r", store.TrialQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if total != 1 {
			t.Fatalf("%d trials, want the one released and handed out again: %+v", total, all)
		}
	})
}

func paramsEqual(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestCancelledKeyedAskKeepsTrialForItsRepetition: an ask with an
// Idempotency-Key whose client goes away while it is served keeps its trial
// (the client repeats the ask with the key); the repetition gets that trial.
// Releasing it instead would let another ask take it while the repetition
// received it too.
func TestCancelledKeyedAskKeepsTrialForItsRepetition(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, g, srv := gatedServer(t, backend)
		ctx := context.Background()
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		send := func(ctx context.Context) (*http.Response, error) {
			req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/api/studies/r/ask", strings.NewReader(`{"worker":"w"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "cancelled-once")
			return http.DefaultClient.Do(req)
		}
		askCtx, cancel := context.WithCancel(ctx)
		made, asked := askUntilMade(t, g, func() (*http.Response, error) { return send(askCtx) })
		cancel()
		if err := <-asked; err == nil {
			t.Fatal("the cancelled ask got an answer")
		}
		close(g.gate)
		resp, err := send(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got store.Trial
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
			t.Fatalf("repetition: %d %v", resp.StatusCode, err)
		}
		if got.Number != made[0].Number || got.State != store.Running || resp.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("repetition got trial %d (%s, replayed %q), want trial %d replayed", got.Number, got.State, resp.Header.Get("Idempotent-Replayed"), made[0].Number)
		}
		// Nothing was released meanwhile: still the one trial, running.
		time.Sleep(50 * time.Millisecond)
		all, total, err := st.Trials(ctx, "r", store.TrialQuery{})
		if err != nil || total != 1 || all[0].State != store.Running {
			t.Fatalf("trials %+v (%d), %v: want the one trial still running", all, total, err)
		}
	})
}
