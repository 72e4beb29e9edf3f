package shapley

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// parallel runs work(w, job) for job = 0..jobs−1 on up to workers goroutines,
// w being the worker's index (for its scratch buffers). The first error, or
// the context's, stops the remaining jobs.
func parallel(ctx context.Context, workers, jobs int, work func(w, job int) error) error {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, jobs)
	if workers <= 1 {
		for j := 0; j < jobs; j++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := work(0, j); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next     atomic.Int64
		stop     atomic.Bool
		firstErr error
		once     sync.Once
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() { firstErr = err })
		stop.Store(true)
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for !stop.Load() {
				j := int(next.Add(1) - 1)
				if j >= jobs {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if err := work(w, j); err != nil {
					fail(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return firstErr
}

// buffers is one worker's scratch: a batch of points and the outputs.
type buffers struct {
	pts [][]float64
	out [][]float64
	src []bool
	// slots index the points of Monte Carlo draws within the batch.
	slots, slots2 []int
}

func newBuffers(batch, dim, outputs int) *buffers {
	flat := make([]float64, batch*dim)
	b := &buffers{pts: make([][]float64, batch), out: make([][]float64, outputs), src: make([]bool, dim)}
	for i := range b.pts {
		b.pts[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	for o := range b.out {
		b.out[o] = make([]float64, batch)
	}
	return b
}

// view returns the first n points and output slices.
func (b *buffers) view(n int) ([][]float64, [][]float64) {
	out := make([][]float64, len(b.out))
	for o := range out {
		out[o] = b.out[o][:n]
	}
	return b.pts[:n], out
}
