// Package server is the HTTP JSON API of the tuning service (DESIGN.md, "The
// service"): studies, ask/tell for any number of workers, trial listings,
// change events for the dashboard and explanations of a study's surrogate.
//
// An ask is one store transaction (package store) during which no other
// trial of the study can be created; inside it the server brings a cached
// optimizer (package opt) up to date with the trials changed since it last
// looked (by the study's version counter, so several server processes on one
// database stay correct), asks it for a proposal (constant liar over the
// pending trials) and inserts the trial. Tells only write the store; the
// optimizer learns about them at the next ask.
//
// Every error is a JSON object {"error": "..."} with a 4xx status for bad
// requests. With a token configured, every request that is not a GET needs
// "Authorization: Bearer <token>". Writes from other sites' pages and
// requests addressed to other host names are refused (origin.go). The API
// is described by the OpenAPI document served at /api/openapi.json
// (openapi.json in this directory).
package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"xbo/explain"
	"xbo/opt"
	"xbo/prune"
	"xbo/space"
	"xbo/store"
	"xbo/web"
)

//go:embed openapi.json
var openapiDoc []byte

// Config configures a Server. Store is required.
type Config struct {
	Store store.Store
	// Token, when not empty, is required as a bearer token on every write.
	Token string
	// TokenReads requires the token on reads too (explanations are
	// expensive); /api/health and /api/openapi.json stay open for probes
	// and client generators, and the dashboard then cannot load its data.
	TokenReads bool
	// TrialTimeout is how long a worker may hold a trial without telling or
	// reporting before it expires and its configuration is queued again;
	// 0 means never.
	TrialTimeout time.Duration
	Logger       *slog.Logger
	// Now is the clock (tests move it); nil means time.Now.
	Now func() time.Time
	// Engine computes the explanations served at
	// /api/studies/{study}/explain/{kind}; nil means a new engine with the
	// Explain settings (its concurrency, queue and cache sizes).
	Engine  *explain.Engine
	Explain explain.Config
	// Addr is the address the server listens on (host:port, as given to
	// net.Listen; empty when it is only called in process). Requests must
	// name it, localhost or a loopback address as their Host; bound to an
	// unspecified address (0.0.0.0, ::, ":8080") any IP address is
	// accepted (origin.go: DNS rebinding).
	Addr string
	// AllowedHosts are further host names (or IP addresses) requests may
	// name, and whose pages may write; "*" accepts any Host.
	AllowedHosts []string
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// BodyTimeout bounds the time a request body takes to arrive once its
	// headers are in (default 30 s); slower clients get 408. The headers'
	// own bound is http.Server.ReadHeaderTimeout (xbo serve: 10 s).
	BodyTimeout time.Duration
	// OptimizerWorkers bounds the goroutines of one proposal
	// (opt.Config.Workers) [0: the optimizer's default, 2]. 1 leaves a core
	// to the handlers: other requests are answered faster while a proposal
	// runs, but proposals are slower and asks that queue for the optimizer
	// wait longer, with no clear gain in the ask overhead since the GP's
	// buffers are pooled; so the default keeps both cores, and xbo serve
	// runs with a spare Go processor instead (GOMAXPROCS one above the
	// workers). Figures: docs/api.md, "Performance".
	OptimizerWorkers int
}

// Server serves the API. Create it with New.
type Server struct {
	cfg       Config
	hosts     hostPolicy
	st        store.Store
	log       *slog.Logger
	now       func() time.Time
	mux       *http.ServeMux
	routes    []string
	engine    *explain.Engine
	histories historyCache

	mu        sync.Mutex
	caches    map[string]*studyCache
	notify    map[string]chan struct{}
	pruners   map[string]studyPruner    // by study name
	decisions map[string]*decisionCache // the model pruner's, by study name

	// draining is closed by Drain: long requests (explanations, event
	// streams) end so that a shutdown waits only for short ones.
	draining  chan struct{}
	drainOnce sync.Once
	metrics   *metrics
	outage    outage
}

// New builds a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: no store")
	}
	if cfg.TrialTimeout < 0 {
		return nil, fmt.Errorf("server: trial timeout %v is negative", cfg.TrialTimeout)
	}
	if cfg.TokenReads && cfg.Token == "" {
		return nil, errors.New("server: token on reads asked for, but no token is set")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.OptimizerWorkers < 0 {
		return nil, fmt.Errorf("server: optimizer workers %d must be ≥ 0", cfg.OptimizerWorkers)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.BodyTimeout < 0 {
		return nil, fmt.Errorf("server: body timeout %v is negative", cfg.BodyTimeout)
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = defaultBodyTimeout
	}
	hosts, err := newHostPolicy(cfg.Addr, cfg.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{
		cfg: cfg, hosts: hosts, st: cfg.Store, log: cfg.Logger, now: cfg.Now,
		mux:       http.NewServeMux(),
		engine:    cfg.Engine,
		caches:    map[string]*studyCache{},
		notify:    map[string]chan struct{}{},
		pruners:   map[string]studyPruner{},
		decisions: map[string]*decisionCache{},
		draining:  make(chan struct{}),
	}
	if s.engine == nil {
		e, err := explain.New(cfg.Explain)
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		s.engine = e
	}
	s.metrics = newMetrics(s)
	// The metrics name studies' states and the request mix: a read like
	// any other, behind the token when reads are.
	metricsHandler := s.metrics.handler()
	s.mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.TokenReads && !s.authorized(r) {
			s.unauthorized(w)
			return
		}
		metricsHandler.ServeHTTP(w, r)
	})
	s.handle("GET /api/openapi.json", s.openapi)
	s.handle("GET /api/health", s.health)
	s.handle("GET /api/studies", s.listStudies)
	s.handle("POST /api/studies", s.createStudy)
	s.handle("GET /api/studies/{study}", s.getStudy)
	s.handle("DELETE /api/studies/{study}", s.deleteStudy)
	s.handle("POST /api/studies/{study}/ask", s.ask)
	s.handle("GET /api/studies/{study}/trials", s.listTrials)
	s.handle("POST /api/studies/{study}/trials", s.addTrial)
	s.handle("GET /api/studies/{study}/trials/{trial}", s.getTrial)
	s.handle("POST /api/studies/{study}/trials/{trial}/tell", s.tell)
	s.handle("POST /api/studies/{study}/trials/{trial}/report", s.report)
	s.handle("GET /api/studies/{study}/best", s.best)
	s.handle("GET /api/studies/{study}/best_trials", s.bestTrials)
	s.handle("GET /api/studies/{study}/events", s.events)
	s.handle("GET /api/studies/{study}/explain/{kind}", s.explain)
	s.handle("GET /api/explain/status", s.explainStatus)
	// Unknown paths get a JSON 404; known paths with another method a JSON
	// 405 (a catch-all pattern would otherwise hide the mux's own 405).
	paths := http.NewServeMux()
	allowed := map[string][]string{}
	for _, route := range s.routes {
		method, path, _ := strings.Cut(route, " ")
		if _, seen := allowed[path]; !seen {
			paths.HandleFunc(path, func(http.ResponseWriter, *http.Request) {})
		}
		allowed[path] = append(allowed[path], method)
	}
	dashboard := web.Handler()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// Everything outside /api/ is the dashboard (package web).
		if !strings.HasPrefix(r.URL.Path, "/api/") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			dashboard.ServeHTTP(w, r)
			return
		}
		if _, pattern := paths.Handler(r); pattern != "" && pattern != "/" {
			w.Header().Set("Allow", strings.Join(allowed[pattern], ", "))
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allowed[pattern], ", ")))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Errorf("no route for %s %s (the API is described at /api/openapi.json)", r.Method, r.URL.Path))
	})
	return s, nil
}

// Routes lists the registered patterns ("METHOD /path").
func (s *Server) Routes() []string { return append([]string(nil), s.routes...) }

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	if s.hosts.allows(r.Host) {
		s.mux.ServeHTTP(sw, r)
	} else {
		s.hosts.refuse(sw, r)
	}
	d := time.Since(start)
	// The access log: one line per request, with the status it got.
	s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
		"ms", float64(d.Microseconds())/1000)
	// The mux set r.Pattern to the route that served the request: API
	// routes are timed by route (the dashboard's files and /metrics not).
	if slices.Contains(s.routes, r.Pattern) {
		s.metrics.observe(r.Pattern, sw.status, d, sw.outage)
	}
}

// statusWriter records the status a handler wrote. Unwrap lets
// http.ResponseController reach the connection (event streams flush).
type statusWriter struct {
	http.ResponseWriter
	status  int
	written bool
	outage  bool // answered 503 because the store is unavailable
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.written {
		w.status, w.written = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.written = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// handle registers a route with authentication and error handling around it.
func (s *Server) handle(pattern string, h func(w http.ResponseWriter, r *http.Request) error) {
	s.routes = append(s.routes, pattern)
	method, _, _ := strings.Cut(pattern, " ")
	open := pattern == "GET /api/health" || pattern == "GET /api/openapi.json"
	guarded := method != http.MethodGet || (s.cfg.TokenReads && !open)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if method != http.MethodGet {
			// Before the token: a page of another site gets the same
			// answer whether or not it guessed the token.
			if err := s.hosts.checkWrite(r); err != nil {
				writeError(w, statusOf(err), err)
				return
			}
		}
		if guarded && !s.authorized(r) {
			s.unauthorized(w)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		if r.ContentLength != 0 {
			if err := s.readBody(w, r); err != nil {
				writeError(w, statusOf(err), err)
				return
			}
		}
		err := h(w, r)
		if errors.Is(err, store.ErrUnavailable) {
			// An outage, not a fault: logged when it starts and ends,
			// counted apart from the request errors (metrics.go).
			s.outage.failed(s.log, time.Now(), r.Method+" "+r.URL.Path, err)
			if sw, ok := w.(*statusWriter); ok {
				sw.outage = true
			}
			unavailable(w)
			return
		}
		if err == nil && pattern != "GET /api/openapi.json" {
			s.outage.reached(s.log, time.Now())
		}
		if err != nil {
			status := statusOf(err)
			if status >= 500 {
				s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeError(w, status, err)
			return
		}
	})
}

func (s *Server) unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="xbo"`)
	writeError(w, http.StatusUnauthorized, errors.New("missing or wrong bearer token (send Authorization: Bearer <token>)"))
}

func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.cfg.Token)) == 1
}

// httpError carries a status for errors found by the handlers themselves.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

func statusOf(err error) int {
	var he *httpError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return he.status
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrExists), errors.Is(err, store.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, store.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, store.ErrStorageFull):
		return http.StatusInsufficientStorage
	case errors.Is(err, store.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("server: encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
	return nil
}

func writeError(w http.ResponseWriter, status int, err error) {
	msg := err.Error()
	if status == http.StatusInternalServerError {
		msg = "internal error: " + msg
	}
	body, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// decode reads a JSON body strictly: unknown fields and trailing data are
// errors. An empty body decodes as {} when allowEmpty.
func decode(r *http.Request, v any, allowEmpty bool) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("reading request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil
		}
		return badRequest("request body is empty; a JSON object is expected")
	}
	if string(bytes.TrimSpace(body)) == "null" {
		return badRequest("request body is null; a JSON object is expected")
	}
	if escapesNUL(body) {
		// PostgreSQL cannot store NUL in text and SQLite can: both refuse
		// it, so the backends agree.
		return badRequest("request body contains a NUL character (\\u0000), which no string may hold")
	}
	if !utf8.Valid(body) {
		// encoding/json would replace the bad bytes with U+FFFD, storing
		// a name the client never sent.
		return badRequest("request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return badRequest("malformed JSON body: %v", err)
	}
	if dec.More() {
		return badRequest("malformed JSON body: data after the JSON object")
	}
	return nil
}

// escapesNUL reports whether a JSON text holds the escape \u0000 (and not
// an escaped backslash followed by the letters u0000).
func escapesNUL(body []byte) bool {
	for i := 0; ; {
		k := bytes.Index(body[i:], []byte(`\u0000`))
		if k < 0 {
			return false
		}
		at := i + k
		backslashes := 0
		for j := at - 1; j >= 0 && body[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return true
		}
		i = at + 1
	}
}

// finite reads a JSON value that must be a finite number. Strings such as
// "NaN" or "Infinity" and numbers too large for float64 are refused by name.
func finite(what string, raw json.RawMessage) (float64, error) {
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		return 0, badRequest("%s is missing", what)
	}
	if strings.HasPrefix(text, `"`) {
		var sv string
		json.Unmarshal(raw, &sv)
		return 0, badRequest("%s must be a finite JSON number, not the string %q", what, sv)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, badRequest("%s %s is not a finite number", what, text)
	}
	if v == 0 && underflows(text) {
		return 0, badRequest("%s %s is too small for a float64 (it would be stored as 0)", what, text)
	}
	return v, nil
}

// outcome reads a complete trial's objective value(s) and constraint
// values: value a number or a list, or values a list (not both); a list of
// one is the value of a single-objective study. The store checks the
// numbers against the study's objectives and constraints.
func outcome(value json.RawMessage, values, constraints []json.RawMessage) (float64, []float64, []float64, error) {
	text := strings.TrimSpace(string(value))
	hasValue := text != "" && text != "null"
	if strings.HasPrefix(text, "[") {
		if len(values) > 0 {
			return 0, nil, nil, badRequest("give value or values, not both")
		}
		if err := json.Unmarshal(value, &values); err != nil {
			return 0, nil, nil, badRequest("value: %v", err)
		}
		if len(values) == 0 {
			return 0, nil, nil, badRequest("value is an empty list")
		}
		hasValue = false
	}
	var vals, cons []float64
	for k, raw := range values {
		v, err := finite(fmt.Sprintf("objective value %d", k), raw)
		if err != nil {
			return 0, nil, nil, err
		}
		vals = append(vals, v)
	}
	for j, raw := range constraints {
		c, err := finite(fmt.Sprintf("constraint value %d", j), raw)
		if err != nil {
			return 0, nil, nil, err
		}
		cons = append(cons, c)
	}
	switch {
	case hasValue && len(vals) > 0:
		return 0, nil, nil, badRequest("give value or values, not both")
	case hasValue:
		v, err := finite("value", value)
		return v, nil, cons, err
	case len(vals) == 1:
		return vals[0], nil, cons, nil
	case len(vals) > 1:
		return vals[0], vals, cons, nil
	}
	return 0, nil, nil, badRequest("value is missing")
}

// underflows reports whether a number that parsed as 0 has a nonzero digit
// in its mantissa, i.e. was rounded to 0.
func underflows(text string) bool {
	mantissa, _, _ := strings.Cut(strings.ToLower(text), "e")
	return strings.ContainsAny(mantissa, "123456789")
}

// normalizeNumbers turns json.Number leaves (from decode's UseNumber) into
// float64 so values can be stored and compared.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
		return x
	}
	return v
}

// notifier wakes event streams when a study changes in this process.
func (s *Server) changed(study string) {
	s.mu.Lock()
	if ch, ok := s.notify[study]; ok {
		close(ch)
		delete(s.notify, study)
	}
	s.mu.Unlock()
}

func (s *Server) waitChange(study string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.notify[study]
	if !ok {
		ch = make(chan struct{})
		s.notify[study] = ch
	}
	return ch
}

// ---- handlers ----

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openapiDoc)
	return nil
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.st.Studies(r.Context()); err != nil {
		return fmt.Errorf("store unreachable: %w", err)
	}
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// StudyRequest is the body of POST /api/studies.
type StudyRequest struct {
	Name      string          `json:"name"`
	Space     json.RawMessage `json:"space"`
	Optimizer json.RawMessage `json:"optimizer,omitempty"`
	Pruner    json.RawMessage `json:"pruner,omitempty"`
}

// NewStudyRecord validates a study request (the space, the optimizer
// configuration by building an optimizer from it, and the pruner
// configuration of package prune), picks a seed when none is given, and
// returns what the store keeps: the pruner with every setting written out.
// Errors wrap store.ErrInvalid.
func NewStudyRecord(name string, spaceDoc, optimizer, pruner json.RawMessage, now time.Time) (store.NewStudy, error) {
	if strings.TrimSpace(name) == "" {
		return store.NewStudy{}, fmt.Errorf("%w: study name is missing", store.ErrInvalid)
	}
	if len(bytes.TrimSpace(spaceDoc)) == 0 {
		return store.NewStudy{}, fmt.Errorf("%w: space is missing", store.ErrInvalid)
	}
	sp, err := space.Parse(spaceDoc)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	cfg, err := opt.ParseSettings(optimizer)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if cfg.Seed == nil {
		seed := rand.Uint64() >> 11 // exact in JSON numbers read as float64
		cfg.Seed = &seed
	}
	if _, err := cfg.New(sp, nil, 0); err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if sp.MultiObjective() || len(sp.Constraints) > 0 {
		if _, err := cfg.NewMultiObjective(sp, nil, 0); err != nil {
			return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
		}
	}
	pr, err := prune.Parse(pruner)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if pr.Type != prune.None && sp.MultiObjective() {
		return store.NewStudy{}, fmt.Errorf("%w: a pruner compares one objective's intermediate values; a study with %d objectives has no single curve to prune on", store.ErrInvalid, sp.NumObjectives())
	}
	if pr.Type == prune.Model && cfg.Resource == nil {
		return store.NewStudy{}, fmt.Errorf("%w: the model pruner asks the optimizer's configuration × budget model: name the resource in the optimizer settings, e.g. \"resource\": {\"name\": \"epochs\", \"min\": 1, \"max\": 81}", store.ErrInvalid)
	}
	prJSON, err := json.Marshal(pr)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("encode pruner: %w", err)
	}
	// Keep the document as written (compacted): it is what the user knows,
	// and it parses back to the same space.
	spaceJSON, err := spaceDocument(spaceDoc)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if _, err := space.Parse(spaceJSON); err != nil {
		return store.NewStudy{}, fmt.Errorf("space does not survive a round trip: %w", err)
	}
	optJSON, err := json.Marshal(cfg)
	if err != nil {
		return store.NewStudy{}, fmt.Errorf("encode optimizer: %w", err)
	}
	return store.NewStudy{Name: name, Direction: string(sp.Objective), Space: spaceJSON, Optimizer: optJSON, Pruner: prJSON, Now: now}, nil
}

// spaceDocument returns a space document as compact JSON, converting YAML.
func spaceDocument(doc []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(doc)
	if !bytes.HasPrefix(trimmed, []byte("{")) {
		var v any
		if err := yaml.Unmarshal(trimmed, &v); err != nil {
			return nil, fmt.Errorf("space: not JSON and not YAML: %w", err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("space: %w", err)
		}
		trimmed = b
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	return buf.Bytes(), nil
}

func (s *Server) createStudy(w http.ResponseWriter, r *http.Request) error {
	var req StudyRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	ns, err := NewStudyRecord(req.Name, req.Space, req.Optimizer, req.Pruner, s.now())
	if err != nil {
		return err
	}
	st, err := s.st.CreateStudy(r.Context(), ns)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, st)
}

func (s *Server) listStudies(w http.ResponseWriter, r *http.Request) error {
	list, err := s.st.Studies(r.Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []store.StudySummary{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"studies": list})
}

func (s *Server) getStudy(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	list, err := s.st.Studies(r.Context())
	if err != nil {
		return err
	}
	for _, st := range list {
		if st.Name == name {
			return writeJSON(w, http.StatusOK, st)
		}
	}
	return fmt.Errorf("study %q: %w", name, store.ErrNotFound)
}

func (s *Server) deleteStudy(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	if err := s.st.DeleteStudy(r.Context(), name); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.caches, name)
	delete(s.pruners, name)
	delete(s.decisions, name)
	s.mu.Unlock()
	s.changed(name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// AskRequest is the optional body of POST /api/studies/{study}/ask.
type AskRequest struct {
	Worker string `json:"worker,omitempty"`
}

// IdempotencyKeyHeader carries an ask's idempotency key: an ask repeated
// with the key of an earlier one (whose answer was lost) gets the trial that
// one handed out instead of a new one.
const IdempotencyKeyHeader = "Idempotency-Key"

// ReplayedHeader is set to "true" on the answer to a repeated ask.
const ReplayedHeader = "Idempotent-Replayed"

func (s *Server) ask(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	var req AskRequest
	if err := decode(r, &req, true); err != nil {
		return err
	}
	if len(req.Worker) > 200 {
		return badRequest("worker id is longer than 200 bytes")
	}
	key := ""
	if values, ok := r.Header[IdempotencyKeyHeader]; ok {
		if len(values) != 1 {
			return badRequest("%s is given %d times", IdempotencyKeyHeader, len(values))
		}
		if err := store.CheckAskKey(values[0]); err != nil {
			return badRequest("%s: %v", IdempotencyKeyHeader, err)
		}
		key = values[0]
	}
	t, timing, replayed, err := s.askTrial(r.Context(), name, req.Worker, key)
	if err != nil {
		return err
	}
	w.Header().Set("Server-Timing", timing.header())
	if replayed {
		w.Header().Set(ReplayedHeader, "true")
		s.metrics.replays.Inc()
	} else {
		s.changed(name)
	}
	return writeJSON(w, http.StatusOK, t)
}

// TellRequest is the body of POST /api/studies/{study}/trials/{trial}/tell:
// a value, state "failed" with an optional reason, or state "pruned" with
// an optional value (by default the trial's last intermediate value).
type TellRequest struct {
	// Value is the objective value; for a study with several objectives a
	// list of them (as Values).
	Value json.RawMessage `json:"value,omitempty"`
	// Values are every objective's value, in the space's order.
	Values []json.RawMessage `json:"values,omitempty"`
	// Constraints are the constraint values, in the space's order
	// (feasible when every one is ≤ 0).
	Constraints []json.RawMessage `json:"constraints,omitempty"`
	State       string            `json:"state,omitempty"` // "complete" (default with a value), "failed" or "pruned"
	Reason      string            `json:"reason,omitempty"`
	UserAttrs   map[string]any    `json:"user_attrs,omitempty"`
}

func trialNumber(r *http.Request) (int64, error) {
	text := r.PathValue("trial")
	n, err := strconv.ParseInt(text, 10, 64)
	// Only the canonical spelling names a trial: "+4" or "04" are not 4.
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != text {
		return 0, &httpError{http.StatusNotFound, fmt.Errorf("trial %q: not found (trial numbers are integers ≥ 0)", text)}
	}
	return n, nil
}

func (s *Server) tell(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	num, err := trialNumber(r)
	if err != nil {
		return err
	}
	var req TellRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	res := store.Result{Reason: req.Reason, Now: s.now()}
	if req.UserAttrs != nil {
		res.UserAttrs = normalizeNumbers(req.UserAttrs).(map[string]any)
	}
	switch req.State {
	case "", string(store.Complete):
		res.State = store.Complete
		if res.Value, res.Values, res.Constraints, err = outcome(req.Value, req.Values, req.Constraints); err != nil {
			return err
		}
		if req.Reason != "" {
			return badRequest("a reason goes with state \"failed\" only")
		}
	case string(store.Failed):
		res.State = store.Failed
		if len(req.Value) > 0 && string(req.Value) != "null" {
			return badRequest("a failed trial has no value")
		}
	case string(store.Pruned):
		res.State, res.Value = store.Pruned, math.NaN() // NaN: the last intermediate value
		if len(req.Value) > 0 && string(req.Value) != "null" {
			if res.Value, err = finite("value", req.Value); err != nil {
				return err
			}
		}
		if req.Reason != "" {
			return badRequest("a reason goes with state \"failed\" only")
		}
	default:
		return badRequest("state %q: a tell sets \"complete\" (with a value), \"failed\" or \"pruned\"", req.State)
	}
	if res.State != store.Complete && (len(req.Values) > 0 || len(req.Constraints) > 0) {
		return badRequest("objective and constraint values go with state \"complete\" only")
	}
	t, changed, err := s.st.Tell(r.Context(), name, num, res)
	if err != nil {
		return err
	}
	if changed {
		s.changed(name)
	}
	return writeJSON(w, http.StatusOK, t)
}

// ReportRequest is the body of POST /api/studies/{study}/trials/{trial}/report.
type ReportRequest struct {
	Step  *int64          `json:"step"`
	Value json.RawMessage `json:"value"`
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	num, err := trialNumber(r)
	if err != nil {
		return err
	}
	var req ReportRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	if req.Step == nil {
		return badRequest("step is missing")
	}
	v, err := finite("value", req.Value)
	if err != nil {
		return err
	}
	t, err := s.st.ReportIntermediate(r.Context(), name, num, store.Report{Step: *req.Step, Value: v, Now: s.now(), Extend: s.cfg.TrialTimeout})
	if err != nil {
		return err
	}
	s.changed(name)
	d, err := s.shouldPrune(r.Context(), name, t)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ReportResponse{Trial: t, Prune: d.Prune, PruneReason: d.Reason})
}

// ReportResponse is the answer to a report: the trial as stored, and
// whether the study's pruner says to stop it now (the worker then tells
// {"state": "pruned"}) and why.
type ReportResponse struct {
	*store.Trial
	Prune       bool   `json:"prune"`
	PruneReason string `json:"prune_reason"`
}

// studyPruner is a study's pruner and direction, which never change: kept
// per study name for the study's id, so that a study deleted and created
// again under the same name (by any server) is read afresh.
type studyPruner struct {
	studyID  int64
	cfg      prune.Config
	maximize bool
}

// maxPruners bounds the cached pruners (one per study name); past it the
// cache starts over.
const maxPruners = 10_000

// pruner returns the pruner of the study that trial t belongs to.
func (s *Server) pruner(ctx context.Context, name string, t *store.Trial) (studyPruner, error) {
	s.mu.Lock()
	p, ok := s.pruners[name]
	s.mu.Unlock()
	if ok && p.studyID == t.StudyID {
		return p, nil
	}
	st, err := s.st.Study(ctx, name)
	if err != nil {
		return studyPruner{}, err
	}
	cfg, err := prune.Parse(st.Pruner)
	if err != nil {
		return studyPruner{}, fmt.Errorf("stored pruner of %q: %w", name, err)
	}
	p = studyPruner{studyID: st.ID, cfg: cfg, maximize: st.Direction == string(space.Maximize)}
	s.mu.Lock()
	if len(s.pruners) >= maxPruners {
		clear(s.pruners)
	}
	s.pruners[name] = p
	s.mu.Unlock()
	return p, nil
}

// shouldPrune asks the study's pruner about a trial that just reported,
// from the intermediate values in the store (package prune).
func (s *Server) shouldPrune(ctx context.Context, name string, t *store.Trial) (prune.Decision, error) {
	p, err := s.pruner(ctx, name, t)
	if err != nil {
		return prune.Decision{}, err
	}
	curve := make([]prune.Point, len(t.Intermediate))
	for i, iv := range t.Intermediate {
		curve[i] = prune.Point{Step: iv.Step, Value: iv.Value}
	}
	trial := prune.Trial{Study: name, Number: t.Number, Curve: curve, Maximize: p.maximize}
	src := storeSource{s.st, name}
	if p.cfg.Type == prune.Model {
		return p.cfg.Decide(ctx, trial, modelSource{src, s})
	}
	return p.cfg.Decide(ctx, trial, src)
}

// modelSource answers the model pruner with the study's optimizer
// (opt.Optimizer.ContinueChance), built from the study's decision cache.
type modelSource struct {
	storeSource
	s *Server
}

func (src modelSource) ContinueChance(ctx context.Context, number int64, minRank float64) (float64, error) {
	return src.s.decisionCache(src.study).continueChance(ctx, src.st, src.study, number, minRank, src.s.cfg.OptimizerWorkers)
}

// storeSource reads what a pruner compares a trial with from the store.
type storeSource struct {
	st    store.Store
	study string
}

func (src storeSource) CompleteAtStep(ctx context.Context, step int64) ([]float64, int, error) {
	return src.st.CompleteAtStep(ctx, src.study, step)
}

func (src storeSource) FirstFromStep(ctx context.Context, step int64) ([]prune.StepValue, error) {
	values, err := src.st.FirstFromStep(ctx, src.study, step)
	if err != nil {
		return nil, err
	}
	out := make([]prune.StepValue, len(values))
	for i, v := range values {
		out[i] = prune.StepValue{Number: v.Number, Step: v.Step, Value: v.Value}
	}
	return out, nil
}

// AddTrialRequest is the body of POST /api/studies/{study}/trials.
type AddTrialRequest struct {
	Params map[string]any  `json:"params"`
	Value  json.RawMessage `json:"value,omitempty"`
	// Values and Constraints as in TellRequest, with a value only.
	Values      []json.RawMessage `json:"values,omitempty"`
	Constraints []json.RawMessage `json:"constraints,omitempty"`
	UserAttrs   map[string]any    `json:"user_attrs,omitempty"`
}

func (s *Server) addTrial(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	var req AddTrialRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	st, err := s.st.Study(r.Context(), name)
	if err != nil {
		return err
	}
	sp, err := space.Parse(st.Space)
	if err != nil {
		return fmt.Errorf("stored space of %q: %w", name, err)
	}
	if req.Params == nil {
		return badRequest("params are missing")
	}
	vals, err := sp.FromMap(normalizeNumbers(req.Params).(map[string]any))
	if err != nil {
		return badRequest("%v", err)
	}
	nt := store.NewTrial{Params: sp.ToMap(vals), Now: s.now()}
	if req.UserAttrs != nil {
		nt.UserAttrs = normalizeNumbers(req.UserAttrs).(map[string]any)
	}
	if len(req.Value) > 0 && string(req.Value) != "null" || len(req.Values) > 0 {
		v, vals, cons, err := outcome(req.Value, req.Values, req.Constraints)
		if err != nil {
			return err
		}
		nt.Value, nt.Values, nt.Constraints = &v, vals, cons
	} else if len(req.Constraints) > 0 {
		return badRequest("constraint values go with a trial's value(s); a trial to evaluate has none yet")
	}
	t, err := s.st.AddTrial(r.Context(), name, nt)
	if err != nil {
		return err
	}
	s.changed(name)
	return writeJSON(w, http.StatusCreated, t)
}

func (s *Server) getTrial(w http.ResponseWriter, r *http.Request) error {
	num, err := trialNumber(r)
	if err != nil {
		return err
	}
	t, err := s.st.Trial(r.Context(), r.PathValue("study"), num)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

func intParam(r *http.Request, name string, def int) (int, error) {
	text := r.URL.Query().Get(name)
	if text == "" {
		return def, nil
	}
	v, err := strconv.Atoi(text)
	if err != nil || v < 0 {
		return 0, badRequest("query parameter %s=%q must be an integer ≥ 0", name, text)
	}
	return v, nil
}

// TrialPage is the response of GET /api/studies/{study}/trials.
type TrialPage struct {
	Trials []store.Trial `json:"trials"`
	Total  int           `json:"total"`
	Offset int           `json:"offset"`
	Limit  int           `json:"limit"`
}

func (s *Server) listTrials(w http.ResponseWriter, r *http.Request) error {
	q := store.TrialQuery{}
	var err error
	if q.Offset, err = intParam(r, "offset", 0); err != nil {
		return err
	}
	if q.Limit, err = intParam(r, "limit", 100); err != nil {
		return err
	}
	if q.Limit > 10000 {
		return badRequest("limit %d is above 10000", q.Limit)
	}
	for _, field := range r.URL.Query()["state"] {
		for _, st := range strings.Split(field, ",") {
			state := store.State(strings.TrimSpace(st))
			if !state.Valid() {
				return badRequest("state %q is not one of %s", st, stateNames())
			}
			q.States = append(q.States, state)
		}
	}
	trials, total, err := s.st.Trials(r.Context(), r.PathValue("study"), q)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, TrialPage{Trials: trials, Total: total, Offset: q.Offset, Limit: q.Limit})
}

// stateNames lists the trial states for messages.
func stateNames() string {
	names := make([]string, len(store.States))
	for i, st := range store.States {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}

func (s *Server) best(w http.ResponseWriter, r *http.Request) error {
	t, err := s.st.Best(r.Context(), r.PathValue("study"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// BestTrials is the response of GET /api/studies/{study}/best_trials: the
// Pareto-optimal trials (history.History.ParetoFront: complete, feasible,
// dominated by no other), in number order, with the study's objectives.
type BestTrials struct {
	Objectives []space.Objective `json:"objectives"`
	Trials     []store.Trial     `json:"trials"`
}

func (s *Server) bestTrials(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	st, err := s.st.Study(r.Context(), name)
	if err != nil {
		return err
	}
	trials, _, err := s.st.Trials(r.Context(), name, store.TrialQuery{States: []store.State{store.Complete}})
	if err != nil {
		return err
	}
	h, err := store.ToHistory(st, trials)
	if err != nil {
		return err
	}
	front, err := h.ParetoFront()
	if err != nil {
		return err
	}
	byNumber := make(map[int64]store.Trial, len(trials))
	for _, t := range trials {
		byNumber[t.Number] = t
	}
	out := BestTrials{Trials: make([]store.Trial, 0, len(front))}
	names, dirs := h.Space.ObjectiveNames(), h.Space.Directions()
	for k := range names {
		out.Objectives = append(out.Objectives, space.Objective{Name: names[k], Direction: dirs[k]})
	}
	for _, i := range front {
		out.Trials = append(out.Trials, byNumber[h.Trials[i].Number])
	}
	return writeJSON(w, http.StatusOK, out)
}

// Events is the response of GET /api/studies/{study}/events: the trials
// changed after version Since, and the version to poll from next. A trial
// may be delivered more than once (see store.Store.Events); clients keep the
// latest copy of each trial number.
type Events struct {
	Since   int64         `json:"since"`
	Version int64         `json:"version"`
	Trials  []store.Trial `json:"trials"`
}

func (s *Server) eventsSince(ctx context.Context, study string, since int64) (Events, error) {
	if since > 0 {
		// A cursor beyond the study's version (a client that outlived a
		// restored or recreated store) would otherwise wait for versions
		// that come late or never: it starts over from 0, and Since says so.
		st, err := s.st.Study(ctx, study)
		if err != nil {
			return Events{}, err
		}
		if since > st.Version {
			since = 0
		}
	}
	trials, next, err := s.st.Events(ctx, study, since, s.now())
	if err != nil {
		return Events{}, err
	}
	if trials == nil {
		trials = []store.Trial{}
	}
	return Events{Since: since, Version: next, Trials: trials}, nil
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("study")
	since := int64(0)
	text := r.URL.Query().Get("since")
	if text == "" {
		text = r.Header.Get("Last-Event-ID")
	}
	if text != "" {
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil || v < 0 {
			return badRequest("since=%q must be a version number ≥ 0", text)
		}
		since = v
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		ev, err := s.eventsSince(r.Context(), name, since)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, ev)
	}
	// Server-sent events: one "trials" event per batch of changes. Changes
	// made by this process wake the stream at once; those of other server
	// processes are picked up by polling every two seconds.
	if _, err := s.st.Study(r.Context(), name); err != nil {
		return err
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming is not supported by this connection")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	for {
		wake := s.waitChange(name)
		ev, err := s.eventsSince(r.Context(), name, since)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				fmt.Fprintf(w, "event: deleted\ndata: {}\n\n")
				flusher.Flush()
			}
			return nil
		}
		if len(ev.Trials) > 0 {
			body, _ := json.Marshal(ev)
			fmt.Fprintf(w, "event: trials\nid: %d\ndata: %s\n\n", ev.Version, body)
			flusher.Flush()
			since = ev.Version
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-s.draining:
			return nil // the client reconnects to another (or the restarted) server
		case <-wake:
		case <-time.After(2 * time.Second):
		}
	}
}

// ExpireLoop expires overdue trials of every study every interval until ctx
// ends, so listings show expired trials even when nobody asks.
func (s *Server) ExpireLoop(ctx context.Context, every time.Duration) {
	if s.cfg.TrialTimeout <= 0 || every <= 0 {
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		list, err := s.st.Studies(ctx)
		if errors.Is(err, store.ErrUnavailable) {
			s.outage.failed(s.log, time.Now(), "expiry", err)
			continue
		}
		if err != nil {
			s.log.Warn("expire: list studies", "err", err)
			continue
		}
		s.outage.reached(s.log, time.Now())
		for _, st := range list {
			if st.Counts[store.Running] == 0 {
				continue
			}
			exp, err := s.st.Expire(ctx, st.Name, s.now())
			if errors.Is(err, store.ErrUnavailable) {
				s.outage.failed(s.log, time.Now(), "expiry", err)
				break
			}
			if err != nil {
				s.log.Warn("expire", "study", st.Name, "err", err)
				continue
			}
			if len(exp) > 0 {
				s.log.Info("trials expired and requeued", "study", st.Name, "count", len(exp))
				s.changed(st.Name)
			}
		}
	}
}
