package bench

import (
	"context"
	"errors"
	"testing"
)

func TestParallelDoProgressAndFirstError(t *testing.T) {
	var seen []int
	out := make([]int, 50)
	err := parallelDo(context.Background(), 50, 3, func(done, total int) {
		if total != 50 {
			t.Errorf("total %d", total)
		}
		seen = append(seen, done)
	}, func(k int) error {
		out[k] = k * k
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range seen {
		if d != i+1 {
			t.Fatalf("progress %v: want 1, 2, ..., 50 in order", seen)
		}
	}
	if len(seen) != 50 || out[49] != 49*49 {
		t.Fatalf("%d progress calls, out[49] = %d", len(seen), out[49])
	}

	boom := errors.New("boom")
	calls := 0
	err = parallelDo(context.Background(), 1000, 1, func(int, int) { calls++ }, func(k int) error {
		if k == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if calls != 3 {
		t.Fatalf("progress counted %d jobs; only the 3 before the failure succeeded", calls)
	}
}
