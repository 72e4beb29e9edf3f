// Package heappeak measures how much heap a piece of code takes at its
// peak, for the tests that hold an operation to a stated memory bound
// (one ask at the limits, a table import per row): the live heap is
// sampled while the code runs, as an allocation count would miss what is
// freed along the way and a timing says nothing about memory.
package heappeak

import (
	"errors"
	"runtime"
	"sync/atomic"
	"time"
)

// Usage is the live heap around a call, in bytes: Before it (after a
// collection), its Peak while it ran (sampled every millisecond, so a
// spike shorter than that may be missed), and After it once collected
// again: what the call kept.
type Usage struct {
	Before, Peak, After uint64
}

// Grew is how far the peak rose above the heap before the call.
func (u Usage) Grew() uint64 { return u.Peak - min(u.Peak, u.Before) }

// Kept is how much more heap there is after the call than before it.
func (u Usage) Kept() uint64 { return u.After - min(u.After, u.Before) }

// Measure runs f and returns the heap around it.
func Measure(f func()) (Usage, error) {
	if f == nil {
		return Usage{}, errors.New("heappeak: no function to measure")
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	u := Usage{Before: ms.HeapAlloc, Peak: ms.HeapAlloc}
	var top atomic.Uint64
	top.Store(ms.HeapAlloc)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			top.Store(max(top.Load(), m.HeapAlloc))
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	u.Peak = top.Load()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	u.After = ms.HeapAlloc
	return u, nil
}
