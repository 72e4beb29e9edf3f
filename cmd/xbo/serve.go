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

	"xbo/internal/lowprio"
	"xbo/opt"
	"xbo/server"
	"xbo/store"
)

func init() {
	register(command{name: "serve", summary: "run the tuning service (HTTP JSON API; SQLite file or PostgreSQL)", run: runServe})
}

func runServe(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	db := fs.String("db", "xbo.db", "SQLite file, or postgres://... for PostgreSQL")
	token := fs.String("token", os.Getenv("XBO_TOKEN"), "bearer token required on every write (default $XBO_TOKEN; empty: no auth)")
	timeout := fs.Duration("trial-timeout", time.Hour, "a running trial not told or reported within this time expires and its configuration is queued again (0: never)")
	nice := fs.Int("background-nice", 0, "run proposals and explanations on threads this much nicer (1-19; 0: normal priority) so asks and tells preempt them; best when workers run on other machines, since on a shared one their training then wins over proposals")
	optWorkers := fs.Int("optimizer-workers", 0, "goroutines one proposal may use (0: the optimizer's default, 2; 1 leaves a core to the handlers: lower service overhead, slower proposals)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: xbo serve [--addr 127.0.0.1:8080] [--db xbo.db|postgres://...] [--token T] [--trial-timeout 1h]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *timeout < 0 {
		return usagef("--trial-timeout %v must not be negative", *timeout)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level}))

	if *nice < 0 || *nice > 19 {
		return usagef("--background-nice %d: want 0 to 19", *nice)
	}
	if err := lowprio.SetNice(*nice); err != nil {
		return err
	}
	if *optWorkers == 0 {
		// Explicit, so that a forest's trees too use only the processors
		// reserved below.
		*optWorkers = opt.DefaultWorkers
	}
	reserveProcessors(*optWorkers)

	st, err := store.Open(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := server.New(server.Config{Store: st, Token: *token, TrialTimeout: *timeout, Logger: log, OptimizerWorkers: *optWorkers})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
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
	log.Info("xbo serve listening", "url", "http://"+ln.Addr().String(), "db", where, "auth", *token != "", "trial_timeout", *timeout)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := hs.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("xbo serve stopped")
	return nil
}

var reserveOnce sync.Once

// reserveProcessors raises GOMAXPROCS by the goroutines a proposal runs on
// (server.Config.OptimizerWorkers), unless the user set GOMAXPROCS. Proposals run on background-priority threads (package
// lowprio), but each still holds a Go processor while it computes; without
// spare processors a request would wait for the runtime's 10 ms preemption
// before the OS priority could matter.
func reserveProcessors(optimizerWorkers int) {
	reserveOnce.Do(func() {
		runtime.GOMAXPROCS(processors(runtime.GOMAXPROCS(0), optimizerWorkers, os.Getenv("GOMAXPROCS")))
	})
}

// processors is the GOMAXPROCS xbo serve runs with: the default plus the
// optimizer's workers, or the user's own setting.
func processors(current, optimizerWorkers int, env string) int {
	if env != "" {
		return current
	}
	return current + optimizerWorkers
}
