package lowprio

import (
	"runtime"

	"golang.org/x/sys/unix"
)

const supported = true

func threadID() (int, bool) { return unix.Gettid(), true }

// lockAndLower locks the calling goroutine to its thread and raises the
// thread's nice value. Raising needs no privilege; should it fail anyway
// (a seccomp filter, say) the work still runs, at normal priority.
func lockAndLower(increment int) int {
	runtime.LockOSThread()
	tid := unix.Gettid()
	if cur, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil {
		// The raw syscall returns 20 − nice.
		_ = unix.Setpriority(unix.PRIO_PROCESS, tid, min(20-cur+increment, 19))
	}
	return tid
}
