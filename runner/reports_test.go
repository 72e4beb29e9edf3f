package runner

import (
	"reflect"
	"testing"
	"time"
)

// drain takes every pending value of a closed queue.
func drain(q *reportQueue) []Intermediate {
	q.close()
	var out []Intermediate
	for {
		iv, ok := q.next()
		if !ok {
			return out
		}
		out = append(out, iv)
	}
}

// The queue never makes put wait: it keeps every step's latest value in
// the order the steps came, drops the oldest step beyond its bound (and
// counts it), hands values to a waiting next as they come, and after
// close hands out what is pending, then says it is done.
func TestReportQueue(t *testing.T) {
	q := newReportQueue(3)
	for _, iv := range []Intermediate{{1, 0.5}, {2, 0.4}, {1, 0.45}, {3, 0.3}} {
		q.put(iv)
	}
	if got, want := drain(q), []Intermediate{{1, 0.45}, {2, 0.4}, {3, 0.3}}; !reflect.DeepEqual(got, want) || q.droppedCount() != 0 {
		t.Fatalf("got %v (%d dropped), want %v", got, q.droppedCount(), want)
	}

	q = newReportQueue(3)
	for step := range int64(5) {
		q.put(Intermediate{step, float64(step)})
	}
	q.put(Intermediate{3, 30}) // still pending: replaced in place
	if got, want := drain(q), []Intermediate{{2, 2}, {3, 30}, {4, 4}}; !reflect.DeepEqual(got, want) || q.droppedCount() != 2 {
		t.Fatalf("beyond the bound: got %v (%d dropped), want %v and 2 dropped", got, q.droppedCount(), want)
	}

	// A sent step is sent again when it is printed again.
	q = newReportQueue(3)
	got := make(chan Intermediate, 4)
	go func() {
		for {
			iv, ok := q.next()
			if !ok {
				close(got)
				return
			}
			got <- iv
		}
	}()
	q.put(Intermediate{1, 0.5})
	select {
	case iv := <-got:
		if iv != (Intermediate{1, 0.5}) {
			t.Fatalf("first value %v", iv)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a waiting next was not given the value put")
	}
	q.put(Intermediate{1, 0.4})
	q.close()
	var rest []Intermediate
	for iv := range got {
		rest = append(rest, iv)
	}
	if !reflect.DeepEqual(rest, []Intermediate{{1, 0.4}}) {
		t.Fatalf("after close: %v", rest)
	}
}
