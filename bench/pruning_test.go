package bench

import (
	"context"
	"testing"
)

// The pruning comparison on a few seeds: the unpruned runs spend every
// step, ASHA's a fraction with most trials pruned, and ASHA whose trials
// teach the model ends within 0.01 of the unpruned run's regret (the
// target of the comparison).
func TestPruningComparison(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 9 optimizations")
	}
	res, err := Pruning(context.Background(), PruningOptions{Seeds: 3, Trials: 40, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 9 || len(res.Rows) != 3 {
		t.Fatalf("%d runs, %d rows", len(res.Runs), len(res.Rows))
	}
	none, asha, failed := res.Rows[0], res.Rows[1], res.Rows[2]
	if none.Spent != 1 || none.Pruned != 0 {
		t.Errorf("no pruner: spent %v of the steps, %v pruned", none.Spent, none.Pruned)
	}
	for _, r := range []PruningSummary{asha, failed} {
		if !(r.Spent < 0.6) || !(r.Pruned > 20) {
			t.Errorf("%s: spent %v of the steps, %v pruned of 40", r.Method, r.Spent, r.Pruned)
		}
	}
	if asha.Gap > 0.01 {
		t.Errorf("ASHA ends %v above the unpruned regret (median over seeds), want ≤ 0.01", asha.Gap)
	}
	t.Logf("gap to no pruner: asha %.3g, as failed %.3g", asha.Gap, failed.Gap)
}
