package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"xbo/client"
)

// A result a command produced is never dropped because the service could
// not take it: a tell that fails even after the client's retries (a store
// or server outage longer than the client's window, or an answer that
// says the trial cannot take it) does not stop the run. The result is
// kept, sent again before the next ask and once more at the end, and what
// still cannot be delivered then is in Summary.Undelivered, for the user
// to tell by hand (xbo tell).

// result is a trial's outcome as a command produced it, waiting to be
// told.
type result struct {
	t           *client.Trial
	state       string
	res         client.Outcome
	reason      string
	interrupted bool
}

// Undelivered is a result the service did not take by the end of the run.
type Undelivered struct {
	Trial int64
	// State is "complete", "failed" or "pruned"; Values and Constraints
	// are a complete trial's, Reason a failed one's.
	State               string
	Values, Constraints []float64
	Reason              string
	// Err is the last error of telling it.
	Err error
}

// ErrUndelivered is returned, wrapped, when results the commands produced
// could not be told by the end of the run (Summary.Undelivered lists them).
var ErrUndelivered = errors.New("results not delivered")

// tell sends a result once (with the client's own retries).
func (r *run) tell(ctx context.Context, o result) error {
	// The tell runs after ctx ended too, so that stopping loses nothing;
	// the client's retry window bounds it, and the timeout only guards
	// against a server that accepts a request and never answers.
	tellCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.c.RetryFor()+time.Minute)
	defer cancel()
	n := o.t.Number
	switch {
	case o.state == "complete" && r.sp.NumObjectives() == 1 && len(r.sp.Constraints) == 0:
		return r.c.Tell(tellCtx, r.cfg.Study, n, o.res.Values[0])
	case o.state == "complete":
		return r.c.TellOutcome(tellCtx, r.cfg.Study, n, o.res)
	case o.state == "pruned":
		return r.c.Prune(tellCtx, r.cfg.Study, n)
	default:
		return r.c.Fail(tellCtx, r.cfg.Study, n, o.reason)
	}
}

// deliver tells a result and records it; a result the service did not
// take is kept for later (an outage) or for the final report (an answer
// that refuses it), and the run goes on.
func (r *run) deliver(ctx context.Context, o result) error {
	if err := r.tell(ctx, o); err != nil {
		r.keep(o, err)
		return nil
	}
	return r.record(ctx, o.t, o.state, o.res, o.reason, o.interrupted)
}

// keep holds a result the service did not take: for a later attempt when
// the service was unreachable, else (a 4xx answer, which repeating will
// not change) for the final report.
func (r *run) keep(o result, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if client.IsOutage(err) {
		r.pending = append(r.pending, o)
	} else {
		r.sum.Undelivered = append(r.sum.Undelivered, undelivered(o, err))
	}
	r.lastTellErr = err
	if r.cfg.Notice != nil {
		r.cfg.Notice(fmt.Sprintf("trial %d: its result could not be told (%v); it is kept and sent again", o.t.Number, err))
	}
}

func undelivered(o result, err error) Undelivered {
	return Undelivered{Trial: o.t.Number, State: o.state, Values: o.res.Values, Constraints: o.res.Constraints, Reason: o.reason, Err: err}
}

// flush sends the kept results again, oldest first. It stops at the first
// one that still finds the service unreachable (the rest would only wait
// out the same outage, one retry window each) and keeps the rest.
func (r *run) flush(ctx context.Context) error {
	r.mu.Lock()
	todo := r.pending
	r.pending = nil
	r.mu.Unlock()
	for i, o := range todo {
		err := r.tell(ctx, o)
		if err == nil {
			if err := r.record(ctx, o.t, o.state, o.res, o.reason, o.interrupted); err != nil {
				r.requeue(todo[i+1:])
				return err
			}
			continue
		}
		if client.IsOutage(err) {
			r.mu.Lock()
			r.lastTellErr = err
			r.mu.Unlock()
			r.requeue(todo[i:])
			return nil
		}
		r.mu.Lock()
		r.sum.Undelivered = append(r.sum.Undelivered, undelivered(o, err))
		r.mu.Unlock()
	}
	return nil
}

// requeue puts results back in front of those kept meanwhile.
func (r *run) requeue(rest []result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(append([]result(nil), rest...), r.pending...)
}

// settle makes a last attempt at every kept result when the run ends and
// moves what is still not delivered to Summary.Undelivered. It returns an
// error naming them, or nil when every result was told.
func (r *run) settle(ctx context.Context) error {
	for {
		r.mu.Lock()
		n := len(r.pending)
		r.mu.Unlock()
		if n == 0 {
			break
		}
		if err := r.flush(ctx); err != nil {
			r.stop(err, func() {})
		}
		r.mu.Lock()
		stuck := len(r.pending) == n
		if stuck {
			for _, o := range r.pending {
				r.sum.Undelivered = append(r.sum.Undelivered, undelivered(o, r.lastTellErr))
			}
			r.pending = nil
		}
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sum.Undelivered) == 0 {
		return nil
	}
	trials := make([]string, len(r.sum.Undelivered))
	for i, u := range r.sum.Undelivered {
		trials[i] = fmt.Sprint(u.Trial)
	}
	return fmt.Errorf("runner: %w: trials %s (the last error: %v)", ErrUndelivered, strings.Join(trials, ", "), r.sum.Undelivered[len(r.sum.Undelivered)-1].Err)
}
