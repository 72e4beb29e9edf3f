package bench

import (
	"context"
	"sync"
)

// parallelDo runs f(0..n−1) on w goroutines and returns the first error;
// after an error or cancellation no further job starts. Every experiment
// runner shares it so that seeds use both cores the same way; results are
// written by index, so they do not depend on w.
func parallelDo(ctx context.Context, n, w int, f func(int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(w, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				if err := f(k); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
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
