package bench

import (
	"context"
	"fmt"
	"sync"
)

// parallelDo runs f(0..n−1) on w goroutines and returns the first error;
// after an error or cancellation no further job starts. Every experiment
// runner shares it so that seeds use both cores the same way; results are
// written by index, so they do not depend on w.
//
// progress, if non-nil, is called after every job that succeeded with the
// number done so far and n, one call at a time.
func parallelDo(ctx context.Context, n, w int, progress func(done, total int), f func(int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		mu       sync.Mutex
		firstErr error
		done     int
		wg       sync.WaitGroup
	)
	for range min(w, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				if ctx.Err() != nil {
					continue // drain: after an error or cancellation no job starts
				}
				err := f(k)
				mu.Lock()
				switch {
				case err != nil && firstErr == nil:
					firstErr = err
					cancel()
				case err == nil:
					done++
					if progress != nil {
						progress(done, n)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for k := range n {
		select {
		case next <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// sweepJob is one run of an optimizer comparison: indices of a problem, a
// worker count and a method, and a seed (1-based).
type sweepJob struct{ problem, workers, method, seed int }

// sweepJobs lists every (problem, worker count, method, seed) of a
// comparison, in that nesting order, so that a method's runs of one
// problem and worker count come in seed order.
func sweepJobs(problems, workers, methods, seeds int) []sweepJob {
	var jobs []sweepJob
	for pi := range problems {
		for wi := range workers {
			for mi := range methods {
				for seed := 1; seed <= seeds; seed++ {
					jobs = append(jobs, sweepJob{pi, wi, mi, seed})
				}
			}
		}
	}
	return jobs
}

// checkWorkers refuses simulated worker counts outside 1..64.
func checkWorkers(workers []int) error {
	for _, w := range workers {
		if w < 1 || w > 64 {
			return fmt.Errorf("workers %d outside 1..64", w)
		}
	}
	return nil
}
