// Package client is a Go client of the xbo tuning service (package server,
// documented in docs/api.md): create studies, ask for trials, tell results.
//
//	c := client.New("http://127.0.0.1:8080", client.WithToken(tok))
//	for {
//		t, err := c.Ask(ctx, "svm")
//		...
//		err = c.Tell(ctx, "svm", t.Number, loss)
//	}
//
// With a pruner in the study (StudySpec.Pruner), a worker reports its
// intermediate values and stops when Report says so:
//
//	for epoch := int64(1); epoch <= 50; epoch++ {
//		loss := train(epoch)
//		if prune, err := c.Report(ctx, "cnn", t.Number, epoch, loss); err == nil && prune {
//			return c.Prune(ctx, "cnn", t.Number)
//		}
//	}
//
// Tell, Fail, Prune and Report are idempotent on the server, so the client retries
// them (and every GET) after network errors and 5xx answers, with a
// doubling, jittered backoff, for up to a minute by default (WithRetryFor,
// WithRetries), waiting at least what a 503's Retry-After asks: a server
// restart or a database outage of that length costs a worker nothing. Ask
// is retried the same way: it
// sends a new random Idempotency-Key with each ask and the same key with
// each repetition, so an ask whose answer was lost gets the trial the
// server handed out for it rather than a second one (docs/api.md,
// "Idempotent asks").
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Client talks to one server. Its zero value is not usable; call New.
type Client struct {
	base   string
	token  string
	worker string
	http   *http.Client
	// retries bounds how often a request is repeated (−1: only the
	// window bounds it); retryFor is the window, from the first attempt,
	// within which it is repeated.
	retries  int
	backoff  time.Duration
	retryFor time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends "Authorization: Bearer token" on every request.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithWorker names this worker in asks (shown in trial listings).
func WithWorker(id string) Option { return func(c *Client) { c.worker = id } }

// WithHTTPClient replaces http.DefaultClient.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithHandler sends every request to h in this process instead of over the
// network: a client of a service that runs inside the same program (xbo run
// on the embedded store) takes the same path as one of a remote server.
func WithHandler(h http.Handler) Option {
	return func(c *Client) { c.http = &http.Client{Transport: handlerTransport{h}} }
}

// handlerTransport answers requests by calling a handler.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The handler gets a copy, as a server would: handlers replace a
	// request's body (with a size-limited reader) and the caller's request
	// must not change.
	in := req.Clone(req.Context())
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, in)
	if req.Body != nil {
		req.Body.Close()
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// WithRetries bounds how often retryable requests are repeated (default:
// no bound but the window of WithRetryFor; 0: never) and sets the first
// backoff (default 100 ms, doubling up to 5 s; each wait is drawn between
// half and one and a half times that, so that many workers do not retry
// in step). Whichever of the count and the window runs out first ends the
// retries.
func WithRetries(n int, backoff time.Duration) Option {
	return func(c *Client) { c.retries, c.backoff = n, backoff }
}

// DefaultRetryFor is how long a retryable request is repeated by default:
// long enough for a PostgreSQL restart or an xbo serve restart under a
// supervisor, so that an outage that short loses no worker's result.
const DefaultRetryFor = time.Minute

// WithRetryFor sets the window, from a request's first attempt, within
// which a retryable request is repeated (default DefaultRetryFor). The
// last attempt is made at the window's end rather than skipped, so an
// outage shorter than d is ridden out whatever the backoff's jitter drew;
// 0 turns retries off.
func WithRetryFor(d time.Duration) Option {
	return func(c *Client) { c.retryFor = d }
}

// RetryFor is the client's retry window (WithRetryFor).
func (c *Client) RetryFor() time.Duration { return c.retryFor }

// New returns a client of the server at baseURL (e.g. http://127.0.0.1:8080).
// A negative retry window counts as 0 (no retries) and a negative count as
// no bound, as New has no error to return.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), http: http.DefaultClient, retries: -1, backoff: 100 * time.Millisecond,
		retryFor: DefaultRetryFor}
	for _, o := range opts {
		o(c)
	}
	c.retryFor = max(c.retryFor, 0)
	c.backoff = max(c.backoff, time.Millisecond)
	return c
}

// APIError is an error answer of the server.
type APIError struct {
	Status  int
	Message string
	// RetryAfter is the answer's Retry-After (0 when it has none): a 503
	// of a store outage says when to try again.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("xbo server: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// IsStatus reports whether err is an APIError with the given HTTP status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// Study is a study as the server describes it.
type Study struct {
	ID         int64           `json:"id"`
	Name       string          `json:"name"`
	Direction  string          `json:"direction"`
	Space      json.RawMessage `json:"space"`
	Optimizer  json.RawMessage `json:"optimizer"`
	Pruner     json.RawMessage `json:"pruner"`
	CreatedAt  time.Time       `json:"created_at"`
	Version    int64           `json:"version"`
	NextNumber int64           `json:"next_number"`
	Counts     map[string]int  `json:"counts,omitempty"`
	Best       *float64        `json:"best,omitempty"`
	Note       string          `json:"note,omitempty"`
}

// Intermediate is a reported intermediate value.
type Intermediate struct {
	Step  int64   `json:"step"`
	Value float64 `json:"value"`
}

// Trial is a trial as the server describes it.
type Trial struct {
	ID           int64           `json:"id"`
	Number       int64           `json:"number"`
	State        string          `json:"state"`
	Params       map[string]any  `json:"params"`
	Value        *float64        `json:"value,omitempty"`
	Values       []float64       `json:"values,omitempty"`
	Constraints  []float64       `json:"constraints,omitempty"`
	Intermediate []Intermediate  `json:"intermediate,omitempty"`
	UserAttrs    map[string]any  `json:"user_attrs,omitempty"`
	Worker       string          `json:"worker,omitempty"`
	Acquisition  string          `json:"acquisition,omitempty"`
	FailReason   string          `json:"fail_reason,omitempty"`
	RequeuedFrom *int64          `json:"requeued_from,omitempty"`
	Meta         json.RawMessage `json:"meta,omitempty"`
	CreatedAt    time.Time       `json:"created_at"`
	StartedAt    *time.Time      `json:"started_at,omitempty"`
	Deadline     *time.Time      `json:"deadline,omitempty"`
	FinishedAt   *time.Time      `json:"finished_at,omitempty"`
	Version      int64           `json:"version"`
	Note         string          `json:"note,omitempty"`
}

// Float returns a numeric parameter, or an error naming it.
func (t *Trial) Float(name string) (float64, error) {
	v, ok := t.Params[name]
	if !ok {
		return 0, fmt.Errorf("trial %d has no parameter %q (inactive or unknown)", t.Number, name)
	}
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("trial %d: parameter %q is %v, not a number", t.Number, name, v)
	}
	return f, nil
}

// StudySpec describes a study to create. Space is the space JSON document
// (or any value that marshals to it, such as *space.Space); Optimizer is
// the optimizer configuration object (nil for defaults); Pruner the pruner
// configuration, e.g. map[string]any{"type": "median"} (nil for none; see
// docs/api.md for the types and settings).
type StudySpec struct {
	Name      string `json:"name"`
	Space     any    `json:"space"`
	Optimizer any    `json:"optimizer,omitempty"`
	Pruner    any    `json:"pruner,omitempty"`
}

// CreateStudy creates a study.
func (c *Client) CreateStudy(ctx context.Context, spec StudySpec) (*Study, error) {
	var st Study
	return &st, c.do(ctx, http.MethodPost, "/api/studies", spec, &st, false)
}

// Studies lists the studies.
func (c *Client) Studies(ctx context.Context) ([]Study, error) {
	var out struct {
		Studies []Study `json:"studies"`
	}
	err := c.do(ctx, http.MethodGet, "/api/studies", nil, &out, true)
	return out.Studies, err
}

// Study returns one study with its counts.
func (c *Client) Study(ctx context.Context, name string) (*Study, error) {
	var st Study
	return &st, c.do(ctx, http.MethodGet, "/api/studies/"+url.PathEscape(name), nil, &st, true)
}

// DeleteStudy deletes a study and its trials.
func (c *Client) DeleteStudy(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/api/studies/"+url.PathEscape(name), nil, nil, false)
}

// Ask returns a trial to evaluate. It is retried like a tell: every
// attempt carries the same idempotency key, new for each call.
func (c *Client) Ask(ctx context.Context, study string) (*Trial, error) {
	key, err := NewAskKey()
	if err != nil {
		return nil, err
	}
	return c.AskWithKey(ctx, study, key)
}

// AskWithKey is Ask with the caller's idempotency key: a worker that
// records the key before asking can, after a crash, ask again with it and
// get the same trial if the server handed one out. The key must be new for
// each ask (1 to 200 printable ASCII characters without spaces).
func (c *Client) AskWithKey(ctx context.Context, study, key string) (*Trial, error) {
	var t Trial
	header := http.Header{"Idempotency-Key": {key}}
	return &t, c.send(ctx, http.MethodPost, studyPath(study, "ask"), header, map[string]string{"worker": c.worker}, &t, true)
}

// NewAskKey returns a random idempotency key (128 bits, hexadecimal).
func NewAskKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("client: idempotency key: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Tell reports a trial's value. Repeating it is harmless.
func (c *Client) Tell(ctx context.Context, study string, number int64, value float64) error {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return fmt.Errorf("client: tell trial %d: value %v is not finite (use Fail)", number, value)
	}
	return c.do(ctx, http.MethodPost, trialPath(study, number, "tell"), map[string]any{"value": value}, nil, true)
}

// Outcome is a complete trial's result in a study with several objectives
// or constraints: every objective's value in the space's order, and the
// constraint values (feasible when every one is ≤ 0; nil for an
// unconstrained study).
type Outcome struct {
	Values      []float64 `json:"values"`
	Constraints []float64 `json:"constraints,omitempty"`
}

func (o Outcome) check(number int64) error {
	if len(o.Values) == 0 {
		return fmt.Errorf("client: trial %d: no objective values", number)
	}
	for k, v := range o.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("client: trial %d: objective value %d is %v, not finite (use Fail)", number, k, v)
		}
	}
	for j, v := range o.Constraints {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("client: trial %d: constraint value %d is %v, not finite", number, j, v)
		}
	}
	return nil
}

// TellOutcome reports a trial's objective values and constraint values
// (several objectives, or a constrained study). Repeating it is harmless.
func (c *Client) TellOutcome(ctx context.Context, study string, number int64, o Outcome) error {
	if err := o.check(number); err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, trialPath(study, number, "tell"), o, nil, true)
}

// Fail reports that a trial's evaluation failed.
func (c *Client) Fail(ctx context.Context, study string, number int64, reason string) error {
	return c.do(ctx, http.MethodPost, trialPath(study, number, "tell"), map[string]any{"state": "failed", "reason": reason}, nil, true)
}

// SetStudyNote replaces the study's note ("" clears it): plain text of at
// most 10,000 characters, which the dashboard and the report show.
func (c *Client) SetStudyNote(ctx context.Context, study, note string) (*Study, error) {
	if study == "" {
		return nil, errors.New("client: set study note: no study named")
	}
	var st Study
	return &st, c.do(ctx, http.MethodPut, studyPath(study, "note"), map[string]string{"note": note}, &st, true)
}

// SetTrialNote replaces a trial's note ("" clears it), in any state; the
// trial's outcome and version stay as they are.
func (c *Client) SetTrialNote(ctx context.Context, study string, number int64, note string) (*Trial, error) {
	if study == "" || number < 0 {
		return nil, fmt.Errorf("client: set trial note: study %q, trial %d: a study and a trial number ≥ 0 are needed", study, number)
	}
	var t Trial
	return &t, c.do(ctx, http.MethodPut, trialPath(study, number, "note"), map[string]string{"note": note}, &t, true)
}

// Report records an intermediate value; it also keeps the trial from
// expiring. It returns whether the study's pruner says to stop the trial
// now (always false without a pruner); the worker then calls Prune.
func (c *Client) Report(ctx context.Context, study string, number, step int64, value float64) (prune bool, err error) {
	var out struct {
		Prune bool `json:"prune"`
	}
	err = c.do(ctx, http.MethodPost, trialPath(study, number, "report"), map[string]any{"step": step, "value": value}, &out, true)
	return out.Prune, err
}

// Prune ends a trial as pruned (stopped early): its value is its last
// intermediate value. Repeating it is harmless.
func (c *Client) Prune(ctx context.Context, study string, number int64) error {
	return c.do(ctx, http.MethodPost, trialPath(study, number, "tell"), map[string]any{"state": "pruned"}, nil, true)
}

// PruneWithValue ends a trial as pruned with the given value instead of its
// last intermediate value.
func (c *Client) PruneWithValue(ctx context.Context, study string, number int64, value float64) error {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return fmt.Errorf("client: prune trial %d: value %v is not finite (use Prune)", number, value)
	}
	return c.do(ctx, http.MethodPost, trialPath(study, number, "tell"), map[string]any{"state": "pruned", "value": value}, nil, true)
}

// ErrPruned, returned (or wrapped) by an objective of Optimize, says that
// the objective stopped its trial because Report said to prune it.
var ErrPruned = errors.New("trial pruned")

// Enqueue queues a configuration; the next ask hands it out.
func (c *Client) Enqueue(ctx context.Context, study string, params map[string]any) (*Trial, error) {
	var t Trial
	return &t, c.do(ctx, http.MethodPost, studyPath(study, "trials"), map[string]any{"params": params}, &t, false)
}

// AddResult records a configuration evaluated elsewhere.
func (c *Client) AddResult(ctx context.Context, study string, params map[string]any, value float64) (*Trial, error) {
	var t Trial
	return &t, c.do(ctx, http.MethodPost, studyPath(study, "trials"), map[string]any{"params": params, "value": value}, &t, false)
}

// AddOutcome records a configuration evaluated elsewhere, with its
// objective and constraint values.
func (c *Client) AddOutcome(ctx context.Context, study string, params map[string]any, o Outcome) (*Trial, error) {
	if err := o.check(-1); err != nil {
		return nil, err
	}
	var t Trial
	return &t, c.do(ctx, http.MethodPost, studyPath(study, "trials"),
		map[string]any{"params": params, "values": o.Values, "constraints": o.Constraints}, &t, false)
}

// Trial returns one trial.
func (c *Client) Trial(ctx context.Context, study string, number int64) (*Trial, error) {
	var t Trial
	return &t, c.do(ctx, http.MethodGet, trialPath(study, number, ""), nil, &t, true)
}

// Trials returns every trial in the given states (all states when none),
// fetching page by page.
func (c *Client) Trials(ctx context.Context, study string, states ...string) ([]Trial, error) {
	var all []Trial
	const page = 1000
	for offset := 0; ; offset += page {
		q := url.Values{"offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(page)}}
		if len(states) > 0 {
			q.Set("state", strings.Join(states, ","))
		}
		var out struct {
			Trials []Trial `json:"trials"`
			Total  int     `json:"total"`
		}
		if err := c.do(ctx, http.MethodGet, studyPath(study, "trials")+"?"+q.Encode(), nil, &out, true); err != nil {
			return nil, err
		}
		all = append(all, out.Trials...)
		if len(out.Trials) < page || len(all) >= out.Total {
			return all, nil
		}
	}
}

// Best returns the best complete trial.
func (c *Client) Best(ctx context.Context, study string) (*Trial, error) {
	var t Trial
	return &t, c.do(ctx, http.MethodGet, studyPath(study, "best"), nil, &t, true)
}

// BestTrials returns the study's Pareto-optimal trials (complete,
// feasible, dominated by no other) in number order; with one objective,
// the best trial and its ties.
func (c *Client) BestTrials(ctx context.Context, study string) ([]Trial, error) {
	var out struct {
		Trials []Trial `json:"trials"`
	}
	return out.Trials, c.do(ctx, http.MethodGet, studyPath(study, "best_trials"), nil, &out, true)
}

// Events returns the trials changed after version since and the version to
// pass next time.
func (c *Client) Events(ctx context.Context, study string, since int64) ([]Trial, int64, error) {
	var out struct {
		Version int64   `json:"version"`
		Trials  []Trial `json:"trials"`
	}
	err := c.do(ctx, http.MethodGet, studyPath(study, "events")+"?since="+strconv.FormatInt(since, 10), nil, &out, true)
	return out.Trials, out.Version, err
}

// Explain fetches an explanation (kind pdp, importance, regional, shapley)
// with query parameters such as {"param": {"lr"}} into out.
func (c *Client) Explain(ctx context.Context, study, kind string, query url.Values, out any) error {
	p := studyPath(study, "explain/"+url.PathEscape(kind))
	if len(query) > 0 {
		p += "?" + query.Encode()
	}
	return c.do(ctx, http.MethodGet, p, nil, out, true)
}

// Optimize runs n evaluations of objective one after the other: ask, call,
// tell (or fail when objective returns an error, or prune when it returns
// ErrPruned). Run it in several goroutines or processes for parallel
// workers.
func (c *Client) Optimize(ctx context.Context, study string, n int, objective func(ctx context.Context, t *Trial) (float64, error)) error {
	for i := 0; i < n; i++ {
		t, err := c.Ask(ctx, study)
		if err != nil {
			return err
		}
		v, err := objective(ctx, t)
		if errors.Is(err, ErrPruned) {
			if perr := c.Prune(ctx, study, t.Number); perr != nil {
				return perr
			}
			continue
		}
		if err != nil {
			if ferr := c.Fail(ctx, study, t.Number, err.Error()); ferr != nil {
				return ferr
			}
			continue
		}
		if err := c.Tell(ctx, study, t.Number, v); err != nil {
			return err
		}
	}
	return nil
}

func studyPath(study, rest string) string {
	return "/api/studies/" + url.PathEscape(study) + "/" + rest
}

func trialPath(study string, number int64, action string) string {
	p := studyPath(study, "trials/"+strconv.FormatInt(number, 10))
	if action != "" {
		p += "/" + action
	}
	return p
}

// do sends one request. retry allows repeating it after network errors and
// 5xx answers; without it only a refused connection (the request cannot have
// reached the server) is retried.
func (c *Client) do(ctx context.Context, method, path string, in, out any, retry bool) error {
	return c.send(ctx, method, path, nil, in, out, retry)
}

// send is do with extra request headers.
func (c *Client) send(ctx context.Context, method, path string, header http.Header, in, out any, retry bool) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("client: encode request: %w", err)
		}
	}
	wait := c.backoff
	end := time.Now().Add(c.retryFor)
	for attempt := 0; ; attempt++ {
		err := c.once(ctx, method, path, header, body, out)
		if err == nil {
			return nil
		}
		retryable := errors.Is(err, syscall.ECONNREFUSED) || (retry && IsOutage(err))
		left := time.Until(end)
		if !retryable || (c.retries >= 0 && attempt >= c.retries) || left <= 0 || ctx.Err() != nil {
			if attempt > 0 {
				return fmt.Errorf("%w (after %d attempts in %v)", err, attempt+1, (c.retryFor - left).Round(time.Millisecond))
			}
			return err
		}
		// The jitter spreads many workers' retries; Retry-After is the
		// server's own estimate of the outage, so it is waited at least.
		// No wait runs past the window's end: the last attempt is made
		// there, so jitter never shortens the window.
		pause := time.Duration(float64(wait) * (0.5 + mrand.Float64()))
		var ae *APIError
		if errors.As(err, &ae) {
			pause = max(pause, ae.RetryAfter)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(min(pause, left)):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// IsOutage reports whether err says the service could not be reached or
// could not answer (a network error, a 5xx answer such as the 503 of a
// store outage): the same request may succeed later. Other errors (a 4xx
// answer) will not change by repeating the request.
func IsOutage(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500
	}
	return isNetErr(err) || errors.Is(err, syscall.ECONNREFUSED)
}

// maxRetryAfter bounds a Retry-After the client honours, so that a
// misconfigured proxy cannot park a worker for hours.
const maxRetryAfter = 5 * time.Minute

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(h); err == nil {
		d = time.Duration(n) * time.Second
	} else if at, err := http.ParseTime(h); err == nil {
		d = time.Until(at)
	}
	return min(max(d, 0), maxRetryAfter)
}

func isNetErr(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

func (c *Client) once(ctx context.Context, method, path string, header http.Header, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("client: %s %s: reading answer: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		return &APIError{Status: resp.StatusCode, Message: e.Error, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("client: %s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}
