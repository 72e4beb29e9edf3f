package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"xbo/client"
	"xbo/server"
	"xbo/store"
	"xbo/store/storetest"
)

// clusterRun has `workers` goroutines, split over `servers` server
// processes sharing one database, ask and tell until `total` trials were
// handed out. It checks that no trial was handed out twice, none was lost,
// and every stored value is the one its worker told for those params.
func clusterRun(t *testing.T, dsn string, servers, workers, total int, optimizer string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var urls []string
	for i := 0; i < servers; i++ {
		st, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		srv, err := server.New(server.Config{Store: st, Token: token, TrialTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		defer hs.Close()
		urls = append(urls, hs.URL)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: workers}
	hc := &http.Client{Transport: transport}
	admin := client.New(urls[0], client.WithToken(token), client.WithHTTPClient(hc))
	if _, err := admin.CreateStudy(ctx, client.StudySpec{Name: "c", Space: json.RawMessage(space2D), Optimizer: json.RawMessage(optimizer)}); err != nil {
		t.Fatal(err)
	}
	var handed sync.Map // number → worker
	var issued atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			name := fmt.Sprintf("w%02d", w)
			c := client.New(urls[w%servers], client.WithToken(token), client.WithWorker(name), client.WithHTTPClient(hc))
			for issued.Add(1) <= int64(total) {
				tr, err := c.Ask(ctx, "c")
				if err != nil {
					errs <- fmt.Errorf("%s: ask: %w", name, err)
					return
				}
				if prev, dup := handed.LoadOrStore(tr.Number, name); dup {
					errs <- fmt.Errorf("trial %d handed to %s and to %s", tr.Number, prev, name)
					return
				}
				v, err := evalBranin(tr)
				if err != nil {
					errs <- err
					return
				}
				if err := c.Tell(ctx, "c", tr.Number, v); err != nil {
					errs <- fmt.Errorf("%s: tell %d: %w", name, tr.Number, err)
					return
				}
				if tr.Number%50 == 0 { // a retried tell is harmless
					if err := c.Tell(ctx, "c", tr.Number, v); err != nil {
						errs <- fmt.Errorf("%s: repeated tell %d: %w", name, tr.Number, err)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := admin.Trials(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != total {
		t.Fatalf("%d trials stored, want %d", len(all), total)
	}
	distinct := map[string]bool{}
	for i, tr := range all {
		if tr.Number != int64(i) || tr.State != "complete" || tr.Value == nil {
			t.Fatalf("trial %d: %+v", i, tr)
		}
		want, _ := evalBranin(&tr)
		if *tr.Value != want {
			t.Fatalf("trial %d: stored %v, told %v", i, *tr.Value, want)
		}
		if who, _ := handed.Load(tr.Number); who != tr.Worker {
			t.Fatalf("trial %d: stored worker %q, handed to %v", i, tr.Worker, who)
		}
		distinct[fmt.Sprint(tr.Params)] = true
	}
	if len(distinct) != total {
		t.Fatalf("%d distinct configurations among %d trials", len(distinct), total)
	}
	best, err := admin.Best(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d trials by %d workers on %d servers; best %.4g (Branin optimum 0.3979)", total, workers, servers, *best.Value)
	if math.IsNaN(*best.Value) {
		t.Fatal("best is NaN")
	}
}

// TestTwoServersPostgres is the fault-tolerance check: two servers
// on one PostgreSQL database, 32 concurrent workers, 2000 trials.
func TestTwoServersPostgres(t *testing.T) {
	dsn := storeDSN(t, "postgres")
	total := 2000
	if testing.Short() {
		total = 400
	}
	clusterRun(t, dsn, 2, 32, total, `{"strategy":"random","seed":11}`)
}

// TestTwoServersPostgresGP is the same with the GP strategy, smaller: every
// proposal conditions on the other workers' pending trials.
func TestTwoServersPostgresGP(t *testing.T) {
	dsn := storeDSN(t, "postgres")
	clusterRun(t, dsn, 2, 16, 80, `{"seed":12,"initial_size":8,"candidates":300}`)
}

// TestTwoServersSQLite: two server processes may also share one SQLite file
// (asks are optimistic there and retried on conflict).
func TestTwoServersSQLite(t *testing.T) {
	dsn := storeDSN(t, "sqlite")
	clusterRun(t, dsn, 2, 16, 300, `{"strategy":"random","seed":13}`)
}

func storeDSN(t *testing.T, backend string) string {
	_, dsn := storetest.Open(t, backend)
	return dsn
}
