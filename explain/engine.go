// Package explain is xbo's explanation engine: the one place that turns a
// study's history (package history) and a request into an explanation, for
// every surface — the CLI, the HTTP API, the report and (through the API)
// the dashboard. The packages below it compute the methods: explain/pdp
// (partial dependence with bands, Moosbauer et al. 2021),
// explain/regional (confidence splitting, the same paper's Algorithm 1),
// explain/fanova (Hutter et al. 2014) and explain/shapley
// (ShapleyMBO, Croppi 2021). The engine owns everything around
// them that must not differ between surfaces:
//
//   - one convention: every number is in the objective's own units and
//     direction. The surrogate is fitted to the values as the user wrote
//     them; for a maximize study a higher partial dependence is better and
//     the confidence bound is the upper bound cb = m + τ·s, so that
//     φ(cb) = φ(m) + τ·φ(se) (for a minimize study cb = m − τ·s and
//     φ(cb) = φ(m) − τ·φ(se)). Every result names its direction (About);
//   - one surrogate per (data, settings): fitted once, cached, shared by
//     every explanation of the same data, whatever surface asked;
//   - results cached by (data fingerprint, request), so a dashboard polling
//     the same views costs nothing while the study does not change; equal
//     requests in flight at once share one computation;
//   - bounded cost: every request is validated against documented limits
//     (Limits) before any work, at most Config.Concurrency computations run
//     at once, at most Config.Queue wait, and the rest are refused with
//     ErrBusy;
//   - cancellation: a computation stops when every caller waiting for it has
//     gone (context cancelled), and reports its progress while it runs;
//   - budgets: every kind but paths and bias explains, on request, the
//     study as it stood at a budget (a step of the intermediate values):
//     each trial's objective is its value at that budget as package history
//     defines it (the value at the largest step ≤ the budget, of the
//     complete and pruned trials that reported at a step ≥ it; the package
//     doc argues the choice). The view takes the same path as the final
//     values — limits, surrogate and result caches (the budget is part of
//     the key), slots — and every result at a budget names it with its
//     trial counts (BudgetInfo). The kind budgets answers whether the
//     low-budget signal can be trusted: the rank correlations (Spearman,
//     Kendall τ_b, with Fisher-z intervals; package metrics) of the trials'
//     values between budgets and with the final values (budgets.go).
package explain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"xbo/history"
)

// Errors the engine returns; test them with errors.Is.
var (
	// ErrInvalid marks a request that cannot be computed as asked: unknown
	// parameters, values outside their range, limits exceeded, too few
	// trials. Surfaces answer it as a usage error (HTTP 400).
	ErrInvalid = errors.New("invalid explanation request")
	// ErrBusy means the engine already runs and queues as many computations
	// as it is configured for; try again later (HTTP 503 with Retry-After).
	ErrBusy = errors.New("explanation engine busy")
)

// invalidf wraps ErrInvalid with a message.
func invalidf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// Config sizes an Engine. The zero value gives the defaults.
type Config struct {
	// Concurrency is the number of computations that run at once
	// (default max(1, GOMAXPROCS/2)); each uses up to Workers goroutines.
	Concurrency int
	// Queue is the number of computations that may wait for a slot
	// (default 16); beyond it requests fail with ErrBusy.
	Queue int
	// Workers bounds the goroutines of one computation (default GOMAXPROCS).
	Workers int
	// CacheBytes bounds the cached results, measured as their JSON size
	// (default 64 MiB); Models bounds the fitted surrogates kept (default 8).
	CacheBytes int
	Models     int
}

// Engine computes and caches explanations. It is safe for concurrent use;
// one Engine serves a whole process.
type Engine struct {
	cfg   Config
	slots chan struct{}

	mu       sync.Mutex
	closed   bool
	waiting  int
	flights  map[string]*flight
	results  *lru
	models   *lru
	biasNull *lru
}

// New returns an engine with the given configuration.
func New(cfg Config) (*Engine, error) {
	if cfg.Concurrency < 0 || cfg.Queue < 0 || cfg.Workers < 0 || cfg.CacheBytes < 0 || cfg.Models < 0 {
		return nil, fmt.Errorf("explain: negative engine setting %+v", cfg)
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if cfg.Queue == 0 {
		cfg.Queue = 16
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.CacheBytes == 0 {
		cfg.CacheBytes = 64 << 20
	}
	if cfg.Models == 0 {
		cfg.Models = 8
	}
	return &Engine{cfg: cfg, slots: make(chan struct{}, cfg.Concurrency), flights: map[string]*flight{},
		results: newLRU(cfg.CacheBytes, 4096), models: newLRU(1<<62, cfg.Models), biasNull: newLRU(1<<62, 64)}, nil
}

// ErrClosed is returned for requests made after Close.
var ErrClosed = errors.New("explanation engine closed")

// Close cancels every computation in flight and refuses new ones, so a
// server that shuts down does not wait for long explanations: their callers
// get the cancellation at once.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	flights := make([]*flight, 0, len(e.flights))
	for _, f := range e.flights {
		flights = append(flights, f)
	}
	e.mu.Unlock()
	for _, f := range flights {
		f.cancel()
	}
}

// Config returns the engine's settings with defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Status describes a computation in progress.
type Status struct {
	Kind    string  `json:"kind"`
	Study   string  `json:"study,omitempty"`
	Step    string  `json:"step"`
	Done    int     `json:"done"`
	Total   int     `json:"total"`
	Seconds float64 `json:"seconds"`
	// Waiting is true while the computation waits for a free slot.
	Waiting bool `json:"waiting"`
	// Callers is the number of requests waiting for this result.
	Callers int `json:"callers"`
}

// ProgressFunc receives a computation's progress; it must return quickly.
type ProgressFunc func(Status)

type progressKey struct{}

// WithProgress returns a context whose explanations report their progress to
// f (the CLI draws its progress bar from it).
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

type cacheHitKey struct{}

// WithCacheHit returns a context through which an explanation reports
// whether it was served from the engine's cache (true) or computed.
func WithCacheHit(ctx context.Context, hit *bool) context.Context {
	return context.WithValue(ctx, cacheHitKey{}, hit)
}

// InFlight lists the computations running or waiting, oldest first, for the
// service's status endpoint and the dashboard's progress display.
func (e *Engine) InFlight() []Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Status, 0, len(e.flights))
	for _, f := range e.flights {
		out = append(out, f.status())
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Seconds > out[j-1].Seconds; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// flight is one computation shared by every caller that asked for the same
// key while it ran. Its context is cancelled when the last caller leaves.
type flight struct {
	kind, study string
	started     time.Time
	cancel      context.CancelFunc
	done        chan struct{}
	value       any
	err         error

	// Guarded by the engine's mutex.
	callers   int
	listeners []ProgressFunc
	step      string
	doneSteps int
	total     int
	waiting   bool
}

func (f *flight) status() Status {
	return Status{Kind: f.kind, Study: f.study, Step: f.step, Done: f.doneSteps, Total: f.total,
		Seconds: time.Since(f.started).Seconds(), Waiting: f.waiting, Callers: f.callers}
}

// task is what a computation gets: its context and a way to report progress.
type task struct {
	ctx     context.Context
	engine  *Engine
	flight  *flight
	workers int
}

// progress records the current step (done of total) and tells the listeners.
func (t *task) progress(step string, done, total int) {
	e := t.engine
	e.mu.Lock()
	f := t.flight
	f.step, f.doneSteps, f.total = step, done, total
	st := f.status()
	listeners := append([]ProgressFunc(nil), f.listeners...)
	e.mu.Unlock()
	for _, l := range listeners {
		l(st)
	}
}

// cached is one result with its JSON encoding (the cache's size measure and
// what the service writes).
type cached struct {
	value any
	json  []byte
}

// run returns the result for key from the cache, from a computation of the
// same key already running, or by running compute in a free slot.
func (e *Engine) run(ctx context.Context, key, kind, study string, compute func(t *task) (any, error)) (*cached, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, ErrClosed
	}
	if v, ok := e.results.get(key); ok {
		e.mu.Unlock()
		if hit, ok := ctx.Value(cacheHitKey{}).(*bool); ok && hit != nil {
			*hit = true
		}
		return v.(*cached), nil
	}
	f, joined := e.flights[key]
	if !joined {
		if e.waiting >= e.cfg.Queue+e.cfg.Concurrency {
			e.mu.Unlock()
			return nil, fmt.Errorf("%w: %d explanations are running or waiting; try again shortly", ErrBusy, e.waiting)
		}
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{kind: kind, study: study, started: time.Now(), cancel: cancel, done: make(chan struct{}), waiting: true, step: "waiting for a free slot"}
		e.flights[key] = f
		e.waiting++
		go e.fly(fctx, key, f, compute)
	}
	f.callers++
	if l, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && l != nil {
		f.listeners = append(f.listeners, l)
	}
	e.mu.Unlock()

	select {
	case <-f.done:
		e.leave(f)
		if f.err != nil {
			return nil, f.err
		}
		return f.value.(*cached), nil
	case <-ctx.Done():
		e.leave(f)
		return nil, ctx.Err()
	}
}

// leave drops a caller; the last one to leave an unfinished flight cancels it.
func (e *Engine) leave(f *flight) {
	e.mu.Lock()
	f.callers--
	last := f.callers == 0
	e.mu.Unlock()
	if last {
		f.cancel()
	}
}

func (e *Engine) fly(ctx context.Context, key string, f *flight, compute func(t *task) (any, error)) {
	defer func() {
		e.mu.Lock()
		e.waiting--
		delete(e.flights, key)
		e.mu.Unlock()
		f.cancel()
		close(f.done)
	}()
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		f.err = ctx.Err()
		return
	}
	defer func() { <-e.slots }()
	e.mu.Lock()
	f.waiting = false
	f.step = "starting"
	e.mu.Unlock()
	t := &task{ctx: ctx, engine: e, flight: f, workers: e.cfg.Workers}
	v, err := safeCompute(t, compute)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		f.err = err
		return
	}
	body, err := json.Marshal(v)
	if err != nil {
		f.err = fmt.Errorf("explain: encode %s: %w", f.kind, err)
		return
	}
	c := &cached{value: v, json: append(body, '\n')}
	f.value = c
	e.mu.Lock()
	e.results.put(key, c, len(c.json))
	e.mu.Unlock()
}

// safeCompute turns a panic deep in a numerical routine into an error, so
// one unlucky request cannot take the server down with it.
func safeCompute(t *task, compute func(t *task) (any, error)) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("explain: internal error in %s: %v", t.flight.kind, r)
		}
	}()
	return compute(t)
}

// prepared is a history made ready for explanations: validated, encoded,
// fingerprinted.
type prepared struct {
	h           *history.History
	data        *history.Data
	fingerprint string
	// budget is set when h is a study's view at a budget.
	budget *BudgetInfo
}

// MinTrials is the fewest usable trials an explanation needs.
const MinTrials = 3

func prepare(h *history.History) (*prepared, error) {
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if h.Space.MultiObjective() {
		// Every explanation is of one objective; unless the caller chose
		// one (Objective), it is the first.
		var err error
		if h, err = Objective(h, ""); err != nil {
			return nil, err
		}
	}
	data, err := h.Encode(MinTrials)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	fp, err := h.Fingerprint(false)
	if err != nil {
		return nil, err
	}
	return &prepared{h: h, data: data, fingerprint: fp}, nil
}
