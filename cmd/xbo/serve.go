package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"xbo/opt"
	"xbo/server"
	"xbo/store"
)

func init() {
	register(command{name: "serve", summary: "run the tuning service (HTTP JSON API; SQLite file or PostgreSQL)",
		synopsis: "xbo serve [--addr 127.0.0.1:8080] [--db xbo.db|postgres://...] [--token T] [--trial-timeout 1h]", run: runServe})
}

func runServe(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	db := fs.String("db", "xbo.db", "SQLite file, or postgres://... for PostgreSQL")
	token := fs.String("token", os.Getenv("XBO_TOKEN"), "bearer token required on every write (default $XBO_TOKEN; empty: no auth)")
	tokenReads := fs.Bool("token-reads", false, "require the token on reads too (all but /api/health and /api/openapi.json; the dashboard then cannot load data)")
	readOnly := fs.Bool("read-only", false, "refuse every write (403): serve the API's reads and the dashboard, which then shows no control that writes")
	timeout := fs.Duration("trial-timeout", time.Hour, "a running trial not told or reported within this time expires and its configuration is queued again (0: never)")
	optWorkers := fs.Int("optimizer-workers", 0, "goroutines one proposal may use (0: the optimizer's default, 2; 1 leaves a core to the handlers: other requests are answered faster during a proposal, proposals are slower)")
	allowedHosts := fs.String("allowed-hosts", "", "comma-separated further host names requests may be addressed to, and whose pages may write (* for any); always accepted: the --addr host, localhost, loopback addresses, and any IP address when --addr is 0.0.0.0 or ::")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error (info logs every request: method, path, status, milliseconds)")
	logFormat := fs.String("log-format", "text", "text or json (one JSON object per line)")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *tokenReads && *token == "" {
		return usagef("--token-reads needs --token (or $XBO_TOKEN)")
	}
	if *timeout < 0 {
		return usagef("--trial-timeout %v must not be negative", *timeout)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	var handler slog.Handler
	switch *logFormat {
	case "text":
		handler = slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level})
	case "json":
		handler = slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: level})
	default:
		return usagef("--log-format %q: want text or json", *logFormat)
	}
	log := slog.New(handler)

	if *optWorkers == 0 {
		// Explicit, so that a forest's trees too use only the processors
		// reserved below.
		*optWorkers = opt.DefaultWorkers
	}
	reserveProcessors(*optWorkers)

	// Listen before opening the store: a server that cannot bind must not
	// leave a new database file behind.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	st, err := store.Open(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	var hosts []string
	if *allowedHosts != "" {
		hosts = strings.Split(*allowedHosts, ",")
	}
	srv, err := server.New(server.Config{Store: st, Token: *token, TokenReads: *tokenReads, ReadOnly: *readOnly, TrialTimeout: *timeout, Logger: log, OptimizerWorkers: *optWorkers,
		Addr: *addr, AllowedHosts: hosts})
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if *timeout > 0 {
		go srv.ExpireLoop(ctx, min(max(*timeout/4, 100*time.Millisecond), 10*time.Second))
	}
	where := *db
	if strings.HasPrefix(where, "postgres") {
		where = "PostgreSQL"
	}
	log.Info("xbo serve listening", "url", "http://"+ln.Addr().String(), "db", where, "auth", *token != "", "read_only", *readOnly, "trial_timeout", *timeout)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Explanations and event streams last: end them first, so that only
	// short asks, tells and reads are waited for.
	srv.Drain()
	shut, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := hs.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("xbo serve stopped")
	return nil
}

var reserveOnce sync.Once

// reserveProcessors makes sure one proposal cannot occupy every Go
// processor, unless the user set GOMAXPROCS. A request that arrives while
// every processor runs proposal code waits for the scheduler's 10 ms
// preemption (the network is then polled only by the runtime's monitor
// thread); with one processor to spare it is served at once, and the OS
// shares the cores. One spare processor is enough: a second did not lower
// the probe's latency further (BenchmarkProbeDuringProposals in server;
// docs/api.md, "A spare Go processor for the handlers").
func reserveProcessors(optimizerWorkers int) {
	reserveOnce.Do(func() {
		runtime.GOMAXPROCS(processors(runtime.GOMAXPROCS(0), optimizerWorkers, os.Getenv("GOMAXPROCS")))
	})
}

// processors is the GOMAXPROCS xbo serve runs with: at least one more than
// a proposal's goroutines, or the user's own setting.
func processors(current, optimizerWorkers int, env string) int {
	if env != "" {
		return current
	}
	return max(current, optimizerWorkers+1)
}
