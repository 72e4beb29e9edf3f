package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"xbo/opt"
	"xbo/store"
)

// studyCache keeps one study's optimizer between asks. It mirrors the
// study's trials; an ask re-reads those that can still change and the new
// ones (store.AskView.Watch) and either applies the changes (tells and
// failures of trials the optimizer holds as pending) or, for changes the
// optimizer cannot apply in place (a trial created by another server process
// or enqueued by a user, a pending trial that expired), rebuilds the
// optimizer from the mirrored history. Proposal
// metadata (the GP hyperparameters) is stored with each trial, so a rebuilt
// optimizer warm-starts where the previous one stopped.
type studyCache struct {
	qmu       sync.Mutex
	queue     []*askWaiter
	draining  bool      // a goroutine is serving the queue; only it touches the fields below
	opt       optClock  // for timing.waitOpt
	expiredAt time.Time // last expiry check by an ask

	mirror
	workers int // Config.OptimizerWorkers
	o       proposer
	optID   map[int64]int64       // store trial number → optimizer trial id
	state   map[int64]store.State // what the optimizer holds: Pending, Complete, Failed or Pruned
}

// timing splits an ask's time for the Server-Timing header: waiting in this
// process's queue of asks for the study, catching the optimizer up with the
// store, the optimizer's own proposal for this ask, all proposals of the
// batch the ask was served in, and the total.
type timing struct {
	// waitOpt is the optimizer time of the batches served while this ask
	// waited: with the ask's own batchPropose, the part of its latency that
	// is the optimizer's, not the service's.
	wait, waitOpt, sync, propose, batchPropose, total time.Duration
	batch                                             int
	rebuilt                                           bool
}

func (t timing) header() string {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	h := fmt.Sprintf("wait;dur=%.3f, waitopt;dur=%.3f, sync;dur=%.3f, opt;dur=%.3f, batchopt;dur=%.3f;desc=\"%d asks\", total;dur=%.3f",
		ms(t.wait), ms(t.waitOpt), ms(t.sync), ms(t.propose), ms(t.batchPropose), t.batch, ms(t.total))
	if t.rebuilt {
		h += `, rebuild;desc="optimizer rebuilt from history"`
	}
	return h
}

// optClock adds up the time a study's optimizer has spent proposing,
// counting a proposal in progress up to the moment asked: an ask that
// arrives in the middle of a proposal waits only for the rest of it.
type optClock struct {
	mu      sync.Mutex
	spent   time.Duration
	running time.Time // start of the proposal in progress; zero if none
}

func (c *optClock) at(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running.IsZero() {
		return c.spent
	}
	return c.spent + max(now.Sub(c.running), 0)
}

func (c *optClock) start() time.Time {
	now := time.Now()
	c.mu.Lock()
	c.running = now
	c.mu.Unlock()
	return now
}

func (c *optClock) stop(started time.Time) time.Duration {
	now := time.Now()
	d := now.Sub(started)
	c.mu.Lock()
	c.spent += d
	c.running = time.Time{}
	c.mu.Unlock()
	return d
}

func (s *Server) cache(study string) *studyCache {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.caches[study]
	if !ok {
		c = &studyCache{workers: s.cfg.OptimizerWorkers}
		s.caches[study] = c
	}
	return c
}

// maxAskAttempts bounds retries after a conflicting concurrent creation of a
// trial (SQLite shared by several processes).
const maxAskAttempts = 8

// maxBatch bounds how many waiting asks one transaction serves.
const maxBatch = 64

type askWaiter struct {
	ctx     context.Context
	worker  string
	key     string // idempotency key; "" for none
	queued  time.Time
	optMark time.Duration // studyCache.opt when queued
	done    chan askResult
}

type askResult struct {
	t        *store.Trial
	tm       timing
	err      error
	replayed bool // t was handed out earlier to an ask with the same key
}

// askTrial hands out a trial of the named study: overdue running trials are
// expired first, then queued trials are claimed, or new ones proposed.
// Asks for one study that arrive while another is being served wait and are
// then served together, in one transaction with one commit: the proposals
// are made one after the other, each conditioned on those before it.
// An ask with the key of an earlier one gets that one's trial (replayed).
func (s *Server) askTrial(ctx context.Context, study, worker, key string) (t *store.Trial, tm timing, replayed bool, err error) {
	c := s.cache(study)
	now := time.Now()
	w := &askWaiter{ctx: ctx, worker: worker, key: key, queued: now, optMark: c.opt.at(now), done: make(chan askResult, 1)}
	c.qmu.Lock()
	c.queue = append(c.queue, w)
	start := !c.draining
	c.draining = true
	c.qmu.Unlock()
	if start {
		go s.drain(study, c)
	}
	// A trial handed out under a key stays with it when the answer cannot
	// reach the client: the client repeats the ask with that key.
	select {
	case r := <-w.done:
		if r.err == nil && ctx.Err() != nil {
			// The client is gone: the answer cannot reach it.
			if key == "" {
				s.release(study, r.t)
			}
			return nil, timing{}, false, ctx.Err()
		}
		return r.t, r.tm, r.replayed, r.err
	case <-ctx.Done():
		// The ask may be in a batch already: a trial made for it after all
		// goes back to the queue rather than waiting for its deadline (or
		// forever, with no trial timeout).
		if key == "" {
			go func() {
				if r := <-w.done; r.err == nil {
					s.release(study, r.t)
				}
			}()
		}
		return nil, timing{}, false, ctx.Err()
	}
}

// replayKeyed answers the waiters whose idempotency key an earlier ask
// stored: with that ask's trial while it is running, or with a 422 when the
// key was used by another study, another worker, or for a trial that has
// finished. Of waiters sharing a key, the first stays and the others go back
// to the study's queue, to be answered with its trial in the next batch. It
// returns the waiters left to serve.
func (s *Server) replayKeyed(ctx context.Context, study string, c *studyCache, waiting []*askWaiter, deliver func(*askWaiter, askResult)) []*askWaiter {
	var keys []string
	first := map[string]bool{}
	rest := waiting[:0:0]
	var later []*askWaiter
	for _, w := range waiting {
		switch {
		case w.key == "":
			rest = append(rest, w)
		case first[w.key]:
			later = append(later, w)
		default:
			first[w.key] = true
			keys = append(keys, w.key)
			rest = append(rest, w)
		}
	}
	if len(later) > 0 {
		c.qmu.Lock()
		c.queue = append(later, c.queue...)
		c.qmu.Unlock()
	}
	if len(keys) == 0 {
		return rest
	}
	asked, err := s.st.AskedWith(ctx, keys)
	out := rest[:0]
	for _, w := range rest {
		k, found := asked[w.key]
		switch {
		case w.key == "":
			out = append(out, w)
		case err != nil:
			deliver(w, askResult{err: err})
		case !found:
			out = append(out, w)
		case k.Study != study:
			deliver(w, askResult{err: &httpError{http.StatusUnprocessableEntity,
				fmt.Errorf("%s %q was sent with an ask of another study: send a new key with each ask", IdempotencyKeyHeader, w.key)}})
		case k.Trial.Worker != w.worker:
			deliver(w, askResult{err: &httpError{http.StatusUnprocessableEntity,
				fmt.Errorf("%s %q was sent with an ask of worker %q, not %q: a repeated ask repeats its request", IdempotencyKeyHeader, w.key, k.Trial.Worker, w.worker)}})
		case k.Trial.State != store.Running:
			deliver(w, askResult{err: &httpError{http.StatusUnprocessableEntity,
				fmt.Errorf("%s %q handed out trial %d, which is %s now: send a new key with each ask", IdempotencyKeyHeader, w.key, k.Trial.Number, k.Trial.State)}})
		default:
			t := k.Trial
			deliver(w, askResult{t: &t, replayed: true})
		}
	}
	return out
}

// release hands a trial made for an ask whose client went away back to the
// queue, so the next ask gets it. The optimizer already holds it as
// pending, so nothing else changes.
func (s *Server) release(study string, t *store.Trial) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, released, err := s.st.Release(ctx, study, t.Number, s.now()); err != nil {
		s.log.Error("release trial of a cancelled ask", "study", study, "trial", t.Number, "err", err)
	} else if released {
		s.log.Debug("released trial of a cancelled ask", "study", study, "trial", t.Number)
		s.changed(study)
	}
}

func (s *Server) drain(study string, c *studyCache) {
	for {
		c.qmu.Lock()
		var batch []*askWaiter
		for len(c.queue) > 0 && len(batch) < maxBatch {
			w := c.queue[0]
			c.queue = c.queue[1:]
			if w.ctx.Err() == nil {
				batch = append(batch, w)
			}
		}
		if len(batch) == 0 {
			c.draining = false
			c.qmu.Unlock()
			return
		}
		c.qmu.Unlock()
		s.serveBatch(study, c, batch)
	}
}

func (s *Server) serveBatch(study string, c *studyCache, batch []*askWaiter) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	begun := time.Now()
	waitedOpt := c.opt.at(begun)
	deliver := func(w *askWaiter, r askResult) {
		r.tm.wait = begun.Sub(w.queued)
		r.tm.waitOpt = waitedOpt - w.optMark
		r.tm.batch = len(batch)
		r.tm.total = time.Since(w.queued)
		w.done <- r
	}
	now := s.now()
	// Overdue trials are expired before asks are served, at most every
	// tenth of the timeout (and at least once a second); the server's
	// expiry loop covers quiet times.
	if s.cfg.TrialTimeout > 0 && now.Sub(c.expiredAt) >= min(s.cfg.TrialTimeout/10, time.Second) {
		c.expiredAt = now
		if _, err := s.st.Expire(ctx, study, now); err != nil {
			for _, w := range batch {
				deliver(w, askResult{err: err})
			}
			return
		}
	}
	waiting := batch
	var lastErr error
	for attempt := 0; attempt < maxAskAttempts && len(waiting) > 0; attempt++ {
		// Every attempt looks the keys up again: an attempt that failed on
		// a key another process stored meanwhile then replays its trial.
		if waiting = s.replayKeyed(ctx, study, c, waiting, deliver); len(waiting) == 0 {
			return
		}
		reqs := make([]store.AskRequest, len(waiting))
		for i, w := range waiting {
			reqs[i] = store.AskRequest{Worker: w.worker, Now: now, Timeout: s.cfg.TrialTimeout, HandOut: s.now, Key: w.key}
		}
		var proposed []opt.Trial
		var own []time.Duration
		var shared timing
		called := false
		trials, err := s.st.AskBatch(ctx, study, reqs, func(ctx context.Context, view store.AskView, n int) ([]store.Proposal, error) {
			if called {
				// The store discarded the first proposals (another process
				// created trials meanwhile): the optimizer must forget them.
				c.o = nil
			}
			called = true
			proposed, own = proposed[:0], own[:0]
			t0 := time.Now()
			rebuilt, err := c.sync(ctx, view)
			shared.sync += time.Since(t0)
			shared.rebuilt = shared.rebuilt || rebuilt
			if err != nil {
				return nil, err
			}
			props := make([]store.Proposal, 0, n)
			if n == 0 {
				return props, nil
			}
			// One AskBatch fits the surrogate once for the whole batch;
			// its time is shared equally by the batch's asks.
			t1 := c.opt.start()
			ots, err := c.o.AskBatch(n)
			d := c.opt.stop(t1)
			shared.batchPropose += d
			if err != nil {
				return nil, err
			}
			d /= time.Duration(n)
			for _, ot := range ots {
				meta, err := json.Marshal(ot.Meta())
				if err != nil {
					return nil, err
				}
				proposed, own = append(proposed, ot), append(own, d)
				props = append(props, store.Proposal{Params: c.sp.ToMap(ot.Params), Acquisition: ot.Acquisition, Meta: meta})
			}
			return props, nil
		})
		if err != nil {
			// The optimizer may hold proposals that were never stored.
			c.o = nil
		} else {
			first := len(trials) - len(proposed)
			for k, ot := range proposed {
				num := trials[first+k].Number
				c.optID[num] = ot.ID
				c.state[num] = store.Pending
				// Counted once stored: proposals the store discarded
				// never reached a worker.
				if ot.Acquisition == opt.AcqRandomFallback {
					s.metrics.fallbacks.Inc()
				}
			}
		}
		for i, t := range trials {
			r := askResult{t: t, tm: shared}
			if err == nil && i >= len(trials)-len(proposed) {
				r.tm.propose = own[i-(len(trials)-len(proposed))]
			}
			deliver(waiting[i], r)
		}
		waiting = waiting[len(trials):]
		if err == nil {
			return
		}
		lastErr = err
		if !errors.Is(err, store.ErrConflict) {
			break
		}
	}
	if len(waiting) > 0 && lastErr != nil && errors.Is(lastErr, store.ErrConflict) {
		lastErr = fmt.Errorf("ask %q: gave up after %d conflicting attempts: %w", study, maxAskAttempts, lastErr)
	}
	for _, w := range waiting {
		deliver(w, askResult{err: lastErr})
	}
}

// sync brings the optimizer up to date with the store and reports whether it
// had to be rebuilt. Only the trials that may have changed since the last
// sync are read; the cache mirrors every trial of the study, so a rebuild
// needs no full reload.
func (c *studyCache) sync(ctx context.Context, view store.AskView) (bool, error) {
	changed, reset, err := c.catchUp(ctx, view)
	if err != nil {
		return reset, err
	}
	if reset {
		c.o = nil
	}
	if c.o == nil || !c.apply(changed) {
		return true, c.rebuild(view.Study())
	}
	return false, nil
}

// apply tells the optimizer about changes it can take in place: the
// intermediate values, completions, failures and prunings of trials it
// holds as pending. It returns false when a change
// needs a rebuild (a trial it does not know, an expiry of a pending trial).
func (c *studyCache) apply(changed []store.Trial) bool {
	// Completions are applied in the order they were stored, which is the
	// order a rebuild gives them too.
	changed = slices.Clone(changed)
	slices.SortStableFunc(changed, func(a, b store.Trial) int { return cmp.Compare(a.Version, b.Version) })
	for _, t := range changed {
		held, known := c.state[t.Number]
		// Reports first: the optimizer learns from the curve when the
		// study names its resource (opt.Config.Resource), whatever the
		// trial's state now.
		if known && held == store.Pending && len(t.Intermediate) > 0 {
			if err := c.o.Report(c.optID[t.Number], t.Curve()); err != nil {
				return false
			}
		}
		switch {
		case !known:
			if t.State == store.Expired {
				continue // never held; its requeued copy stands for it
			}
			return false
		case t.State == store.Pending || t.State == store.Running:
			continue
		case held == t.State:
			continue
		case held != store.Pending:
			return false
		case t.State == store.Complete && t.Value != nil:
			if err := c.o.Complete(c.optID[t.Number], &t); err != nil {
				return false
			}
			c.state[t.Number] = store.Complete
		case t.State == store.Failed:
			if err := c.o.TellFailed(c.optID[t.Number]); err != nil {
				return false
			}
			c.state[t.Number] = t.State
		case t.State == store.Pruned:
			if err := c.o.TellPruned(c.optID[t.Number], nil); err != nil {
				return false
			}
			c.state[t.Number] = t.State
		default:
			// An expired trial cannot be withdrawn from the optimizer's
			// pending set in place.
			return false
		}
	}
	return true
}

// rebuild builds the optimizer from the mirrored trials.
func (c *studyCache) rebuild(st *store.Study) error {
	c.o = nil
	o, optID, state, err := c.proposer(c.workers)
	if err != nil {
		return fmt.Errorf("study %q: %w", st.Name, err)
	}
	c.o, c.optID, c.state = o, optID, state
	return nil
}
