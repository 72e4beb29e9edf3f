package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, c := range []struct{ jobs, limit, want int }{
		{10, 0, min(DefaultWorkers, procs)},
		{10, 1, 1},
		{1, 5, 1},
		{0, 3, 1},
		{10, procs + 5, procs},
	} {
		if got := Workers(c.jobs, c.limit); got != c.want {
			t.Errorf("Workers(%d, %d) = %d, want %d", c.jobs, c.limit, got, c.want)
		}
	}
}

func TestRunDoesEveryJobOnceWithScratchPerGoroutine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 1000
	var done [n]atomic.Int32
	var mu sync.Mutex
	scratches := 0
	Run(n, 3, func() func(int) {
		mu.Lock()
		scratches++
		mu.Unlock()
		own := new(int) // the goroutine's scratch: never shared
		return func(job int) {
			*own++
			done[job].Add(1)
		}
	})
	for i := range done {
		if c := done[i].Load(); c != 1 {
			t.Fatalf("job %d ran %d times", i, c)
		}
	}
	if scratches != 3 {
		t.Fatalf("%d workers made scratch, want 3", scratches)
	}
	Run(0, 2, func() func(int) { t.Fatal("a worker started for no jobs"); return nil })
}
