// Package lowprio runs long numeric work (proposals, explanations) on OS
// threads of lowered scheduling priority, so that request handling in the
// same process preempts it rather than queueing behind it.
//
// Why it exists: the service's proposals fill both cores of a small machine
// for tens of milliseconds at a time. Go has no goroutine priorities, and a
// goroutine that needs a processor while all of them run long numeric loops
// waits for the runtime's 10 ms preemption; even with a spare processor
// (GOMAXPROCS above the number of cores), the OS shares the cores equally
// among the runnable threads. The OS does have thread priorities: a thread
// whose nice value is raised by 10 gets about a tenth of the share of a
// normal thread that competes for the same core (Linux CFS weights 110 and
// 1024), so a request handler wakes up and runs at once. No library offers
// this for Go, so this package does it with setpriority(2) on the thread
// id, which Linux applies per thread.
//
// Work enters with Run, which runs a function on a background thread and
// waits for it. Code that fans out (gp, acq) starts its goroutines with Go:
// called from a background thread, the new goroutine runs on one too, so a
// whole computation stays below normal priority; called from anywhere else
// it is a plain goroutine. Background threads are goroutines locked to their
// thread (runtime.LockOSThread); idle ones are kept for reuse, and the rest
// exit, taking their thread with them. On systems other than Linux, Run and
// Go run at normal priority.
//
// A background computation holds a Go processor (P) while it runs, so a
// service that wants its handlers never to wait for one sets GOMAXPROCS to
// the number of cores plus the number of background threads it runs at once
// (xbo serve does).
package lowprio

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// DefaultNice is the increment xbo serve applies when asked to run its
// heavy work in the background (--background-nice).
const DefaultNice = 10

// maxIdle bounds the background threads kept waiting for work.
const maxIdle = 8

// thread is an idle background thread's mailbox; a nil job tells it to exit.
type thread struct {
	jobs chan func()
	nice int // the increment its priority was lowered by
}

var (
	idle = make(chan *thread, maxIdle)

	// background holds the ids of the threads that run at background
	// priority. Only their locked goroutines run on them, so a goroutine's
	// current thread id tells whether it runs in the background.
	mu         sync.RWMutex
	background = map[int]bool{}

	// nice is the increment new background threads get; 0, the initial
	// value, turns the package off.
	nice atomic.Int64

	// started counts background threads created (not reused): tests use it
	// to check that idle threads are reused.
	started atomic.Int64
)

// SetNice sets the nice value added to background threads from now on
// (0–19). 0 turns background priority off: Run and Go then run at normal
// priority, as on systems other than Linux. Idle threads lowered by another
// increment exit rather than take work.
func SetNice(n int) error {
	if n < 0 || n > 19 {
		return fmt.Errorf("lowprio: nice increment %d outside 0–19", n)
	}
	nice.Store(int64(n))
	return nil
}

// Nice returns the nice value added to background threads (see SetNice).
func Nice() int { return int(nice.Load()) }

func enabled() bool { return supported && nice.Load() > 0 }

// Active reports whether the calling goroutine runs on a background thread.
func Active() bool {
	tid, ok := threadID()
	if !ok {
		return false
	}
	mu.RLock()
	defer mu.RUnlock()
	return background[tid]
}

// Run calls f on a background thread and returns when it has returned. From
// a background thread it simply calls f. A panic in f is re-raised in the
// caller, as if f had been called directly.
func Run(f func()) {
	if f == nil {
		return
	}
	if !enabled() || Active() {
		f()
		return
	}
	done := make(chan any, 1)
	dispatch(func() {
		defer func() { done <- recover() }()
		f()
	})
	if p := <-done; p != nil {
		panic(p)
	}
}

// Go starts f on a new goroutine, which runs on a background thread if the
// caller does.
func Go(f func()) {
	if f == nil {
		return
	}
	if !enabled() || !Active() {
		go f()
		return
	}
	dispatch(f)
}

// dispatch hands f to an idle background thread or starts a new one.
func dispatch(f func()) {
	want := Nice()
	for {
		select {
		case t := <-idle:
			if t.nice != want {
				t.jobs <- nil
				continue
			}
			t.jobs <- f
		default:
			started.Add(1)
			go serve(f, want)
		}
		return
	}
}

// serve is a background thread's goroutine: it runs f, then waits for more
// work while the idle list has room, and otherwise exits. It never unlocks,
// so on exit the runtime terminates the thread and its raised nice value
// cannot leak to other goroutines.
func serve(f func(), increment int) {
	tid := lockAndLower(increment)
	mu.Lock()
	background[tid] = true
	mu.Unlock()
	defer func() {
		mu.Lock()
		delete(background, tid)
		mu.Unlock()
	}()
	t := &thread{jobs: make(chan func()), nice: increment}
	for f != nil {
		f()
		select {
		case idle <- t:
			f = <-t.jobs
		default:
			f = nil
		}
	}
}
