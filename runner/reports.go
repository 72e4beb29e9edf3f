package runner

import "sync"

// MaxPendingReports bounds the intermediate values a command printed that
// are waiting to be sent (a few bytes each): a command that reports more
// steps than this while the service is unreachable loses its oldest
// unsent ones, which are counted in Summary.ReportErrors.
const MaxPendingReports = 1 << 14

// reportQueue holds a command's intermediate values between the reader of
// its output, which must never wait (a command blocks on a full pipe when
// its output is not read), and the sender, which waits as long as the
// client rides out an outage. It keeps the latest value of every step not
// yet sent, in the order the steps were first printed: the study keeps
// one value per step (a later report of a step replaces the earlier), so
// an earlier value of a pending step would only be overwritten, but every
// step is kept, since other trials are pruned by comparing their values
// at each step.
type reportQueue struct {
	mu      sync.Mutex
	more    *sync.Cond
	pending []Intermediate
	first   int64           // the sequence number of pending[0]
	at      map[int64]int64 // a pending step's sequence number
	closed  bool
	dropped int
	max     int
}

func newReportQueue(max int) *reportQueue {
	q := &reportQueue{at: map[int64]int64{}, max: max}
	q.more = sync.NewCond(&q.mu)
	return q
}

// put queues a value without waiting: a pending value of the same step
// is replaced, and when max steps are pending the oldest is dropped.
func (q *reportQueue) put(iv Intermediate) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if seq, ok := q.at[iv.Step]; ok {
		q.pending[seq-q.first].Value = iv.Value
		return
	}
	if len(q.pending) >= q.max {
		q.popLocked()
		q.dropped++
	}
	q.at[iv.Step] = q.first + int64(len(q.pending))
	q.pending = append(q.pending, iv)
	q.more.Signal()
}

// popLocked removes the oldest pending value.
func (q *reportQueue) popLocked() Intermediate {
	iv := q.pending[0]
	delete(q.at, iv.Step)
	q.pending = q.pending[1:]
	q.first++
	if len(q.pending) == 0 {
		q.pending = q.pending[:0:0] // let the drained array go
	}
	return iv
}

// next waits for the oldest pending value; ok is false once the queue is
// closed and empty.
func (q *reportQueue) next() (iv Intermediate, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pending) == 0 && !q.closed {
		q.more.Wait()
	}
	if len(q.pending) == 0 {
		return Intermediate{}, false
	}
	return q.popLocked(), true
}

// close says no more values come; next still hands out the pending ones.
func (q *reportQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.more.Broadcast()
}

// droppedCount is how many values were dropped because max were pending.
func (q *reportQueue) droppedCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}
