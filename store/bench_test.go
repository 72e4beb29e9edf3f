package store_test

import (
	"context"
	"testing"
	"time"

	"xbo/store"
	"xbo/store/storetest"
)

// BenchmarkAskTell measures the store alone: one ask (with a proposer that
// reads the new trials through the view, as the server's does) and one tell
// per iteration, with no HTTP and no optimizer, on each backend.
//
//	go test -run '^$' -bench AskTell -benchtime 2000x ./store
func BenchmarkAskTell(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			ctx := context.Background()
			s, _ := storetest.Open(b, backend)
			name := "bench"
			if _, err := s.CreateStudy(ctx, store.NewStudy{Name: name, Direction: "minimize",
				Space: []byte(spaceJSON), Optimizer: []byte(`{"strategy":"random"}`), Now: t0}); err != nil {
				b.Fatal(err)
			}
			propose := func(ctx context.Context, v store.AskView) (store.Proposal, error) {
				if _, err := v.Watch(ctx, nil, v.Study().NextNumber); err != nil {
					return store.Proposal{}, err
				}
				return store.Proposal{Params: map[string]any{"x": 0.5}, Acquisition: "bench"}, nil
			}
			asks := make([]time.Duration, 0, b.N)
			tells := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				tr, err := s.Ask(ctx, name, store.AskRequest{Worker: "w", Now: t0, Timeout: time.Hour}, propose)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, _, err := s.Tell(ctx, name, tr.Number, store.Result{State: store.Complete, Value: float64(i), Now: t1}); err != nil {
					b.Fatal(err)
				}
				asks, tells = append(asks, t1.Sub(t0)), append(tells, time.Since(t1))
			}
			b.StopTimer()
			b.ReportMetric(storetest.Quantile(asks, 0.5), "ask_p50_ms")
			b.ReportMetric(storetest.Quantile(asks, 0.99), "ask_p99_ms")
			b.ReportMetric(storetest.Quantile(tells, 0.5), "tell_p50_ms")
			b.ReportMetric(storetest.Quantile(tells, 0.99), "tell_p99_ms")
		})
	}
}
