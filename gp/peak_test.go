package gp

import (
	"runtime"
	"sync"
	"time"
)

// peakSampler polls runtime.MemStats.HeapInuse to estimate the peak heap of
// a benchmark loop (MemStats has no peak field).
type peakSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak uint64
}

func newPeakSampler() *peakSampler {
	p := &peakSampler{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			p.peak = max(p.peak, ms.HeapInuse)
			select {
			case <-p.done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return p
}

func (p *peakSampler) stop() uint64 {
	close(p.done)
	p.wg.Wait()
	return p.peak
}
