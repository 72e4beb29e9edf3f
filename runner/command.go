package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// stop says why xbo run stopped a command before it ended by itself.
type stop int

const (
	notStopped  stop = iota
	interrupted      // the run was interrupted (Ctrl-C, SIGTERM) or ended on an error
	timedOut         // the command ran longer than the trial timeout
	pruned           // the study's pruner said to stop the trial
)

// execution is how a command ended.
type execution struct {
	out      Output
	startErr error // the command could not be started
	waitErr  error // its exit status (nil for 0)
	readErr  error // reading its output failed
	stderr   string
	stopped  stop
	// droppedReports counts intermediate values not sent because
	// MaxPendingReports were waiting.
	droppedReports int
}

// drainWait bounds how long the output of a command that has exited is
// still read: processes it left behind that hold its output open are then
// killed, so a trial never waits for them.
const drainWait = time.Second

// stderrTail is how much of a command's standard error is kept.
const stderrTail = 4 << 10

// execute runs one command to its end. Its standard output is read as
// scanOutput says, with each intermediate value passed to report, which
// answers whether to prune the trial, from a goroutine of its own (through
// a reportQueue), so that a report waiting out an outage never stops the
// reading; the values still queued when the command ends are sent before
// execute returns. Its standard error's tail is kept.
// When ctx ends, the timeout passes or report says to prune, the command's
// process group gets SIGTERM, and SIGKILL grace later if it has not exited.
func execute(ctx context.Context, args, env []string, timeout, grace time.Duration,
	report func(Intermediate) bool, echo func(stream string, line []byte)) execution {
	var ex execution
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	ownGroup(cmd)
	outR, outW, err := os.Pipe()
	if err != nil {
		ex.startErr = err
		return ex
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		ex.startErr = err
		return ex
	}
	// *os.File outputs: the command writes into the pipes directly, and
	// Wait does not wait for copies (processes left behind may hold them).
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		ex.startErr = err
		return ex
	}

	prune := make(chan struct{}, 1)
	// The output is read on, whatever the sends of its intermediate
	// values wait for: they go through a queue to a sender of their own.
	reports := newReportQueue(MaxPendingReports)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for {
			iv, ok := reports.next()
			if !ok {
				return
			}
			if report != nil && report(iv) {
				select {
				case prune <- struct{}{}:
				default:
				}
			}
		}
	}()
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		var lineEcho func([]byte)
		if echo != nil {
			lineEcho = func(line []byte) { echo("stdout", line) }
		}
		ex.out, ex.readErr = scanOutput(outR, reports.put, lineEcho)
		io.Copy(io.Discard, outR) // a read error: let the command go on writing
	}()
	errTail := &tail{max: stderrTail}
	go func() {
		defer readers.Done()
		readStderr(errR, errTail, echo)
	}()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	var kill <-chan time.Time
	done := ctx.Done()
	terminate := func(why stop) {
		if ex.stopped != notStopped {
			return
		}
		ex.stopped = why
		signalGroup(cmd, syscall.SIGTERM)
		kill = time.After(grace)
	}
wait:
	for {
		select {
		case ex.waitErr = <-waited:
			break wait
		case <-done:
			done = nil
			terminate(interrupted)
		case <-deadline:
			deadline = nil
			terminate(timedOut)
		case <-prune:
			terminate(pruned)
		case <-kill:
			kill = nil
			signalGroup(cmd, syscall.SIGKILL)
		}
	}
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainWait):
		// Killing them closes the pipes' last writers; closing the read
		// ends is for writers outside the group.
		signalGroup(cmd, syscall.SIGKILL)
		select {
		case <-drained:
		case <-time.After(drainWait):
			outR.Close()
			errR.Close()
			<-drained
			if errors.Is(ex.readErr, os.ErrClosed) {
				ex.readErr = nil
			}
		}
	}
	outR.Close()
	errR.Close()
	// The values still queued are sent before the trial is told: the
	// study takes intermediate values of a running trial only.
	reports.close()
	<-sent
	ex.droppedReports = reports.droppedCount()
	ex.stderr = errTail.String()
	return ex
}

// readStderr keeps the tail of a command's standard error and echoes it
// line by line, holding at most one buffer of it.
func readStderr(r io.Reader, keep *tail, echo func(stream string, line []byte)) {
	br := bufio.NewReaderSize(r, stderrTail)
	for {
		chunk, err := br.ReadSlice('\n')
		keep.Write(chunk)
		if echo != nil && len(chunk) > 0 {
			echo("stderr", bytes.TrimRight(chunk, "\r\n"))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
