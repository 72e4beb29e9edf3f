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
	"context"
	"crypto/subtle"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"xbo/explain"
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
	// ReadOnly refuses every write (403): a server that shows studies,
	// to the dashboard among others, and changes nothing.
	ReadOnly bool
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
	s.handle("PUT /api/studies/{study}/note", s.setStudyNote)
	s.handle("POST /api/studies/{study}/ask", s.ask)
	s.handle("GET /api/studies/{study}/trials", s.listTrials)
	s.handle("POST /api/studies/{study}/trials", s.addTrial)
	s.handle("GET /api/studies/{study}/trials/{trial}", s.getTrial)
	s.handle("POST /api/studies/{study}/trials/{trial}/tell", s.tell)
	s.handle("POST /api/studies/{study}/trials/{trial}/report", s.report)
	s.handle("PUT /api/studies/{study}/trials/{trial}/note", s.setTrialNote)
	s.handle("GET /api/studies/{study}/best", s.best)
	s.handle("GET /api/studies/{study}/best_trials", s.bestTrials)
	s.handle("GET /api/studies/{study}/events", s.events)
	s.handle("GET /api/studies/{study}/explain/{kind}", s.explain)
	// More specific than {kind}, so the mux sends it here.
	s.handle("GET /api/studies/{study}/explain/footprint", s.footprint)
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
			if s.cfg.ReadOnly {
				writeError(w, http.StatusForbidden, errors.New("the server is read-only (xbo serve --read-only): it accepts no writes"))
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

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openapiDoc)
	return nil
}

// Health is the answer of GET /api/health. Writes and Token tell a page
// (the dashboard) whether to offer its controls that write, and whether
// to ask for the token first.
type Health struct {
	Status string `json:"status"`
	// Writes is false on a read-only server.
	Writes bool `json:"writes"`
	// Token is true when writes need the bearer token.
	Token bool `json:"token"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.st.Studies(r.Context()); err != nil {
		return fmt.Errorf("store unreachable: %w", err)
	}
	return writeJSON(w, http.StatusOK, Health{Status: "ok", Writes: !s.cfg.ReadOnly, Token: s.cfg.Token != "" && !s.cfg.ReadOnly})
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
