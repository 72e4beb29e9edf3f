// Package parallel runs independent jobs on a few goroutines, each with its
// own scratch memory: the pattern the GP fit, the acquisition refinement and
// the EIG scoring share. The standard library has no worker pool, and
// golang.org/x/sync/errgroup would still leave the per-goroutine scratch and
// the bound to every caller.
package parallel

import (
	"runtime"
	"sync"
)

// DefaultWorkers bounds the goroutines of one call by default: the machines
// xbo targets are small, and several models are often queried at once.
const DefaultWorkers = 2

// Workers is the number of goroutines for jobs jobs with at most limit
// goroutines (limit ≤ 0: DefaultWorkers), never more than GOMAXPROCS, and at
// least 1.
func Workers(jobs, limit int) int {
	if limit <= 0 {
		limit = DefaultWorkers
	}
	return max(1, min(jobs, runtime.GOMAXPROCS(0), limit))
}

// Run runs jobs 0..n−1 on Workers(n, limit) goroutines. newWorker is called
// once per goroutine and returns the function that does one job with that
// goroutine's own scratch memory. Jobs are taken in order; which goroutine
// runs a job is not fixed, so results must not depend on it.
func Run(n, limit int, newWorker func() func(job int)) {
	if n <= 0 {
		return
	}
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range Workers(n, limit) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := newWorker()
			for i := range next {
				work(i)
			}
		}()
	}
	wg.Wait()
}
