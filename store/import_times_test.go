package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"xbo/store"
	"xbo/store/storetest"
)

// TestImportKeepsSourceTimes: an imported trial keeps the source's
// creation, start and finish times on both backends; a trial the source
// gives no times gets the import's instant and no start.
func TestImportKeepsSourceTimes(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s, _ := storetest.Open(t, backend)
			ctx := context.Background()
			now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
			start := time.Date(2025, 3, 1, 9, 30, 0, 123456000, time.UTC)
			end := start.Add(90 * time.Second)
			v := 1.5
			ns := store.NewStudy{Name: "times", Direction: "minimize", Space: json.RawMessage(`{"params":[{"name":"x","type":"float","low":0,"high":1}]}`), Now: now}
			if _, err := s.ImportStudy(ctx, ns, []store.ImportedTrial{
				{Params: map[string]any{"x": 0.1}, Value: &v, Started: start, Finished: end},
				{State: store.Failed, Params: map[string]any{"x": 0.2}},
			}); err != nil {
				t.Fatal(err)
			}
			got, _, err := s.Trials(ctx, "times", store.TrialQuery{})
			if err != nil {
				t.Fatal(err)
			}
			a, b := got[0], got[1]
			if !a.CreatedAt.Equal(start) || a.StartedAt == nil || !a.StartedAt.Equal(start) || a.FinishedAt == nil || !a.FinishedAt.Equal(end) {
				t.Errorf("trial 0: created %v started %v finished %v, want %v %v %v", a.CreatedAt, a.StartedAt, a.FinishedAt, start, start, end)
			}
			if !b.CreatedAt.Equal(now) || b.StartedAt != nil || b.FinishedAt == nil || !b.FinishedAt.Equal(now) {
				t.Errorf("trial 1: created %v started %v finished %v, want the import's instant %v and no start", b.CreatedAt, b.StartedAt, b.FinishedAt, now)
			}
		})
	}
}
