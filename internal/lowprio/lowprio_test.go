package lowprio

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	if err := SetNice(DefaultNice); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// niceOf reads a thread's nice value from /proc, independently of the
// syscalls the package uses to set it.
func niceOf(t *testing.T, tid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, nice field 19.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(f[19-3])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sample records the thread a function ran on, its nice value and whether
// it saw itself as background. The goroutine is locked while it samples so
// the thread id and the nice value belong to the same thread.
type sample struct {
	tid, nice int
	active    bool
}

func take(t *testing.T) sample {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	return sample{tid: tid, nice: niceOf(t, tid), active: Active()}
}

func requireLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread priorities are applied on Linux only")
	}
}

func TestRunLowersPriority(t *testing.T) {
	requireLinux(t)
	outside := take(t)
	if outside.active {
		t.Fatal("Active outside Run")
	}
	var in sample
	Run(func() { in = take(t) })
	if !in.active {
		t.Fatal("not Active inside Run")
	}
	if want := min(outside.nice+DefaultNice, 19); in.nice != want {
		t.Fatalf("nice inside Run = %d, want %d (outside %d)", in.nice, want, outside.nice)
	}
	if after := take(t); after.active || after.nice != outside.nice {
		t.Fatalf("caller changed by Run: %+v, before %+v", after, outside)
	}
}

func TestGoInheritsBackground(t *testing.T) {
	requireLinux(t)
	base := take(t).nice
	const n = 5
	got := make([]sample, n)
	var inner sample
	Run(func() {
		inner = take(t)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			Go(func() {
				defer wg.Done()
				got[i] = take(t)
			})
		}
		wg.Wait()
	})
	for i, s := range got {
		if !s.active || s.nice != min(base+DefaultNice, 19) {
			t.Fatalf("goroutine %d started by Go in the background: %+v, base nice %d", i, s, base)
		}
		if s.tid == inner.tid {
			t.Fatalf("goroutine %d ran on its parent's thread while the parent waited", i)
		}
	}
	// Outside the background Go is a plain goroutine.
	ch := make(chan sample)
	Go(func() { ch <- take(t) })
	if s := <-ch; s.active || s.nice != base {
		t.Fatalf("Go from a normal goroutine: %+v, base nice %d", s, base)
	}
}

func TestRunNestedRunsInline(t *testing.T) {
	requireLinux(t)
	var outer, inner sample
	Run(func() {
		outer = take(t)
		Run(func() { inner = take(t) })
	})
	if outer.tid != inner.tid || !inner.active {
		t.Fatalf("nested Run: outer %+v, inner %+v", outer, inner)
	}
}

func TestRunReusesIdleThreads(t *testing.T) {
	requireLinux(t)
	Run(func() {}) // at least one idle thread now
	before := started.Load()
	tids := map[int]bool{}
	for range 20 {
		Run(func() { tids[take(t).tid] = true })
	}
	if d := started.Load() - before; d != 0 {
		t.Fatalf("20 sequential Runs started %d new threads, want 0", d)
	}
	if len(tids) > maxIdle {
		t.Fatalf("20 sequential Runs used %d threads", len(tids))
	}
}

func TestSurplusThreadsExit(t *testing.T) {
	requireLinux(t)
	const n = 3 * maxIdle
	release := make(chan struct{})
	var ready, done sync.WaitGroup
	Run(func() {
		for range n {
			ready.Add(1)
			done.Add(1)
			Go(func() {
				defer done.Done()
				ready.Done()
				<-release
			})
		}
		ready.Wait()
		mu.RLock()
		busy := len(background)
		mu.RUnlock()
		if busy < n+1 {
			t.Errorf("%d background threads registered while %d goroutines and Run's own ran", busy, n)
		}
		close(release)
		done.Wait()
	})
	// Threads that found the idle list full have exited and unregistered;
	// Run's own thread and the goroutines' are either idle or gone.
	mu.RLock()
	left := len(background)
	mu.RUnlock()
	if left > maxIdle {
		t.Fatalf("%d background threads registered after the work, at most %d may idle", left, maxIdle)
	}
}

func TestRunPropagatesPanic(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want boom", r)
		}
	}()
	Run(func() { panic("boom") })
	t.Fatal("Run returned after a panic")
}

func TestNilFunctions(t *testing.T) {
	Run(nil)
	Go(nil)
}

func TestSetNice(t *testing.T) {
	requireLinux(t)
	defer SetNice(DefaultNice)
	base := take(t).nice
	Run(func() {}) // leave an idle thread lowered by the default
	if err := SetNice(3); err != nil {
		t.Fatal(err)
	}
	var s sample
	Run(func() { s = take(t) })
	if !s.active || s.nice != min(base+3, 19) {
		t.Fatalf("after SetNice(3): %+v, base nice %d", s, base)
	}
	if err := SetNice(0); err != nil {
		t.Fatal(err)
	}
	Run(func() { s = take(t) })
	if s.active || s.nice != base {
		t.Fatalf("after SetNice(0): %+v, base nice %d", s, base)
	}
	for _, bad := range []int{-1, 20} {
		if err := SetNice(bad); err == nil {
			t.Fatalf("SetNice(%d) accepted", bad)
		}
	}
	if Nice() != 0 {
		t.Fatalf("a refused SetNice changed the increment to %d", Nice())
	}
}
