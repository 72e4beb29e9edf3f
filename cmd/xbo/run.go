package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"xbo/client"
	"xbo/explain"
	"xbo/opt"
	"xbo/runner"
	"xbo/server"
	"xbo/space"
	"xbo/store"
)

func init() {
	register(command{name: "run", summary: "tune any command: run it with each proposed configuration and read its result",
		synopsis: runSynopsis, about: runAbout, run: runRun})
}

const runSynopsis = `xbo run --space space.json --trials N [--workers K] [--name S]
        [--db xbo.db | --url URL [--token T]] [--dashboard 127.0.0.1:8080]
        [--trial-timeout D] [--grace 10s] [--retry-for 60s] [--pruner JSON] [--echo] -- CMD ARGS...`

const runAbout = `Runs CMD once per trial with a proposed configuration: {name} in ARGS is
replaced by the parameter's value, and the environment holds
XBO_PARAM_<NAME> (the name upper-cased, other characters than letters and
digits turned into _), XBO_TRIAL and XBO_STUDY. The result is the last
{"value": v} line CMD prints on standard output, or else the last number it
prints; lines {"step": s, "value": v} are intermediate values. A study with
several objectives or constraints (the space's "objectives" and
"constraints") takes the last {"values": [v0, v1], "constraints": [c0]}
line ({"value": v, "constraints": [c0]} for one objective), or else the
last numbers of the last line that prints numbers: one per objective, then
one per constraint, in the space's order. A non-zero exit, no result, a
result of the wrong count or one that is not finite fails the trial with
the tail of standard error as the reason.

--trials is the study's total of finished trials (complete, pruned or
failed; trials failed as "interrupted" do not count): run the same command
again (after Ctrl-C, or with a larger --trials) to resume. Ctrl-C stops the
running commands (SIGTERM, then SIGKILL after --grace) and fails their
trials as "interrupted"; every result already told is kept.

An outage of the server or its database shorter than --retry-for is
ridden out: requests are repeated until it ends. A result the service did
not take is kept and sent again; one still not delivered at the end is
printed as an xbo tell command, and the exit status is 1.`

func runRun(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	spacePath := fs.String("space", "", "search space file, JSON or YAML (needed to create the study; checked against it when it exists)")
	trialsN := fs.Int("trials", 0, "finished trials (complete, pruned or failed; interrupted ones do not count) the study should have in the end (required)")
	workers := fs.Int("workers", 1, "commands running at once")
	name := fs.String("name", "", "study name (default: the space file's name without its extension)")
	db := fs.String("db", "xbo.db", "SQLite file, or postgres://..., for the service xbo run starts in its own process")
	remote := fs.String("url", "", "use the xbo serve at this URL instead of --db")
	token := fs.String("token", os.Getenv("XBO_TOKEN"), "bearer token for --url (default $XBO_TOKEN)")
	dashboard := fs.String("dashboard", "", "also serve the dashboard and the API on this address while the run lasts (embedded store only)")
	timeout := fs.Duration("trial-timeout", 0, "stop a command that runs longer than this and fail its trial (0: no limit)")
	grace := fs.Duration("grace", 10*time.Second, "time a stopped command has between SIGTERM and SIGKILL")
	retryFor := fs.Duration("retry-for", client.DefaultRetryFor, "how long a request to the service is repeated while the server or its database is unreachable")
	literal := fs.Bool("literal-braces", false, "pass a {word} in the command that names no parameter on as written instead of refusing it")
	echo := fs.Bool("echo", false, "copy the commands' output to standard error, each line prefixed with [trial N stdout] or [trial N stderr]")
	settings := optimizerFlags(fs)
	pruner := fs.String("pruner", "", `a new study's pruner as JSON, e.g. '{"type":"median","n_warmup_steps":5}': a command whose intermediate values ({"step": s, "value": v} lines) the pruner stops gets SIGTERM and its trial ends pruned (docs/api.md, "Pruners")`)
	// Everything after "--" is the command, flags of its own included.
	var command []string
	for i, a := range args {
		if a == "--" {
			args, command = args[:i], args[i+1:]
			break
		}
	}
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case len(command) == 0:
		return usagef("no command: give it after --, e.g. xbo run --space s.json --trials 20 -- python3 train.py --lr {lr}")
	case *trialsN < 1:
		return usagef("--trials N (at least 1) is required: the study's total of finished trials")
	case *workers < 1 || *workers > 1024:
		return usagef("--workers %d must be between 1 and 1024", *workers)
	case *timeout < 0 || *grace <= 0:
		return usagef("--trial-timeout must not be negative and --grace must be positive")
	case *retryFor < 0:
		return usagef("--retry-for must not be negative")
	case *remote != "" && set["db"]:
		return usagef("give --db or --url, not both")
	case *remote != "" && *dashboard != "":
		return usagef("--dashboard serves the embedded store; with --url the server's own dashboard shows the run")
	}
	if *name == "" {
		if *spacePath == "" {
			return usagef("--name or --space is required")
		}
		base := filepath.Base(*spacePath)
		*name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	// A mistyped program creates no study.
	if _, err := exec.LookPath(command[0]); err != nil {
		return fmt.Errorf("command %q: %w", command[0], err)
	}
	var sp *space.Space
	if *spacePath != "" {
		var err error
		if sp, err = space.Load(*spacePath); err != nil {
			return usageError{err}
		}
		// A mistyped placeholder creates no study either.
		if err := checkPlaceholders(command, sp, *literal); err != nil {
			return err
		}
	}

	svc, err := openRunService(ctx, runService{db: *db, url: *remote, token: *token, dashboard: *dashboard, timeout: *timeout, grace: *grace,
		retryFor: retryFor})
	if err != nil {
		return err
	}
	defer svc.close()

	if *pruner != "" && !json.Valid([]byte(*pruner)) {
		return usagef("--pruner: not valid JSON: %s", *pruner)
	}
	if err := ensureStudy(ctx, svc.c, *name, sp, settings, json.RawMessage(*pruner), env); err != nil {
		return err
	}
	study, err := svc.c.Study(ctx, *name)
	if err != nil {
		return err
	}
	// The banner counts as the run does (interrupted trials are not
	// finished), so a resumed run says how far it really is.
	finished, err := runner.Finished(ctx, svc.c, *name)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "xbo run: study %q (%s): %d of %d trials finished; up to %d command(s) at once\n",
		*name, svc.where, finished, *trialsN, *workers)
	if svc.dashboard != "" {
		fmt.Fprintf(env.stderr, "dashboard: %s/#study=%s\n", svc.dashboard, url.QueryEscape(*name))
	}

	studySpace, err := space.Parse(study.Space)
	if err != nil {
		return fmt.Errorf("stored space of %q: %w", *name, err)
	}
	if err := checkPlaceholders(command, studySpace, *literal); err != nil {
		return err
	}
	pr := newRunProgress(env, *trialsN)
	cfg := runner.Config{Client: svc.c, Study: *name, Command: command, LiteralBraces: *literal, Trials: *trialsN, Workers: *workers,
		Timeout: *timeout, Grace: *grace, Events: pr.event, Notice: pr.notice}
	if *echo {
		cfg.Echo = pr.echo
	}
	sum, runErr := runner.Run(ctx, cfg)
	pr.finish()
	if runErr != nil && sum.Complete+sum.Failed == 0 && len(sum.Undelivered) == 0 && !errors.Is(runErr, runner.ErrInterrupted) {
		return runErr // it did not start
	}
	printTuningSummary(ctx, env.stderr, env.stdout, sum, *name, studySpace, svc)
	if sum.ReportErrors > 0 {
		fmt.Fprintf(env.stderr, "warning: %d intermediate values were not recorded; the first: %v\n", sum.ReportErrors, sum.FirstReportError)
	}
	printUndelivered(env.stderr, sum.Undelivered, *name, svc)
	if errors.Is(runErr, runner.ErrInterrupted) {
		return fmt.Errorf("%w; run the same command again to resume", runErr)
	}
	return runErr
}

// checkPlaceholders refuses a command with a {word} that names no
// parameter of sp (runner.CheckPlaceholders), as a usage error that names
// the parameters and the flag that allows it, unless literal is set.
func checkPlaceholders(command []string, sp *space.Space, literal bool) error {
	if literal {
		return nil
	}
	var pe *runner.PlaceholderError
	if err := runner.CheckPlaceholders(command, sp); errors.As(err, &pe) {
		return usagef("the command's placeholder %s names no parameter (the parameters: %s); add --literal-braces to pass it on as written",
			pe.Braced(), strings.Join(pe.Known, ", "))
	} else if err != nil {
		return err
	}
	return nil
}

// runService is where xbo run finds its study: a remote xbo serve (url), or
// the service started in this process on the store db.
type runService struct {
	db, url, token, dashboard string
	timeout, grace            time.Duration
	// retryFor is the client's retry window (nil: client.DefaultRetryFor).
	retryFor *time.Duration
	// worker names the asks (default runner.WorkerID(), which lets a later
	// xbo run fail the trials of a killed one: a command that asks and
	// exits, as xbo ask does, must use another name).
	worker string
	// existing: the store must exist already (a command that only reads or
	// changes a study must not leave an empty database behind a typo).
	existing bool
}

// window is the client's retry window.
func (rs runService) window() time.Duration {
	if rs.retryFor == nil {
		return client.DefaultRetryFor
	}
	return *rs.retryFor
}

// openedService is the client and what must be closed after the run.
type openedService struct {
	c         *client.Client
	where     string // the store or URL, for messages
	dashboard string // the dashboard's base URL, when there is one
	explain   string // how to explain the study afterwards ("" when remote)
	close     func()
}

// openRunService connects to the remote server, or opens the store and
// starts the service in this process (and on the dashboard address): the
// run then talks to it through package client either way.
func openRunService(ctx context.Context, rs runService) (*openedService, error) {
	if rs.worker == "" {
		rs.worker = runner.WorkerID()
	}
	if rs.url != "" {
		base := strings.TrimRight(rs.url, "/")
		c := client.New(base, client.WithToken(rs.token), client.WithWorker(rs.worker), client.WithRetryFor(rs.window()))
		return &openedService{c: c, where: base, dashboard: base, close: func() {}}, nil
	}
	var ln net.Listener
	if rs.dashboard != "" {
		// Listen first: a run that cannot serve leaves no new database.
		var err error
		if ln, err = net.Listen("tcp", rs.dashboard); err != nil {
			return nil, fmt.Errorf("dashboard: %w", err)
		}
	}
	open := store.Open
	if rs.existing {
		open = store.OpenExisting
	}
	st, err := open(ctx, rs.db)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, err
	}
	engine, err := explain.New(explain.Config{})
	if err != nil {
		st.Close()
		if ln != nil {
			ln.Close()
		}
		return nil, err
	}
	// A trial held by a run that was killed expires once its command would
	// have been stopped anyway; without a trial timeout, the next run on
	// this machine fails it (runner: abandoned trials).
	expiry := time.Duration(0)
	if rs.timeout > 0 {
		expiry = rs.timeout + rs.grace + time.Minute
	}
	srv, err := server.New(server.Config{Store: st, TrialTimeout: expiry, Engine: engine, Addr: rs.dashboard,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		engine.Close()
		st.Close()
		if ln != nil {
			ln.Close()
		}
		return nil, err
	}
	where := rs.db
	if strings.HasPrefix(where, "postgres") {
		where = "PostgreSQL"
	}
	// The in-process client names localhost, one of the hosts the server
	// accepts (server.Config.Addr).
	out := &openedService{c: client.New("http://localhost", client.WithHandler(srv), client.WithWorker(rs.worker),
		client.WithRetryFor(rs.window())), where: where,
		explain: rs.db}
	var hs *http.Server
	var served sync.WaitGroup
	if ln != nil {
		hs = &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
		served.Add(1)
		go func() {
			defer served.Done()
			hs.Serve(ln)
		}()
		out.dashboard = "http://" + ln.Addr().String()
	}
	out.close = func() {
		if hs != nil {
			srv.Drain()
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			hs.Shutdown(shut)
			cancel()
			served.Wait()
		}
		engine.Close()
		st.Close()
	}
	return out, nil
}

// ensureStudy creates the study when it does not exist, and otherwise
// checks that it has the given space (a run must not add trials of one
// space to a study of another).
func ensureStudy(ctx context.Context, c *client.Client, name string, sp *space.Space, settings func() opt.Settings, pruner json.RawMessage, env *cliEnv) error {
	st, err := c.Study(ctx, name)
	switch {
	case err == nil:
		if sp != nil {
			stored, err := space.Parse(st.Space)
			if err != nil {
				return fmt.Errorf("stored space of %q: %w", name, err)
			}
			a, _ := json.Marshal(stored)
			b, _ := json.Marshal(sp)
			if string(a) != string(b) {
				return usagef("study %q exists with another space (%s); give another --name, or the study's own space", name, a)
			}
		}
		if given, _ := json.Marshal(settings()); string(given) != "{}" || len(pruner) > 0 {
			fmt.Fprintf(env.stderr, "warning: study %q exists: it keeps its optimizer and pruner, the optimizer and pruner flags are ignored\n", name)
		}
		return nil
	case client.IsStatus(err, http.StatusNotFound):
		if sp == nil {
			return usagef("study %q does not exist: give --space to create it", name)
		}
		if _, err := c.CreateStudy(ctx, client.StudySpec{Name: name, Space: sp, Optimizer: settings(), Pruner: prunerSpec(pruner)}); err != nil {
			if client.IsStatus(err, http.StatusBadRequest) {
				return usageError{err}
			}
			return err
		}
		return nil
	default:
		return err
	}
}

// prunerSpec is a StudySpec.Pruner: nil (none) when not given.
func prunerSpec(pruner json.RawMessage) any {
	if len(pruner) == 0 {
		return nil
	}
	return pruner
}

// runProgress shows a run's progress: a bar on a terminal, otherwise one
// line per finished trial; failures are always printed.
type runProgress struct {
	env   *cliEnv
	total int
	bar   *progress
	mu    sync.Mutex // echo lines come from several commands at once
}

func newRunProgress(env *cliEnv, total int) *runProgress {
	return &runProgress{env: env, total: total, bar: newProgress(env, "trials")}
}

// maxShown bounds a failure's reason on the console (the trial keeps it
// whole: xbo study export --json, the dashboard).
const maxShown = 400

func (p *runProgress) event(e runner.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := "none yet"
	switch {
	case e.Best != nil:
		best = fmt.Sprintf("%.6g (trial %d)", *e.Best.Value, e.Best.Number)
	case e.Front > 0:
		best = fmt.Sprintf("%d Pareto-optimal", e.Front)
	}
	if e.State != "complete" {
		reason := strings.Join(strings.Fields(e.Reason), " ")
		if len(reason) > maxShown {
			reason = reason[:maxShown] + "…"
		}
		p.bar.clear()
		// "failed" or "pruned": a pruned trial is no failure.
		fmt.Fprintf(p.env.stderr, "trial %d %s: %s\n", e.Trial, e.State, reason)
	} else if !p.env.isTerminal && e.Finished < 0 {
		// The study could not be read just now: its count is unknown, not
		// zero or negative.
		fmt.Fprintf(p.env.stderr, "trial %d: %s; best %s; %d running\n", e.Trial, outcomeLine(e), best, e.Running)
	} else if !p.env.isTerminal {
		fmt.Fprintf(p.env.stderr, "trial %d: %s; best %s; %d/%d finished, %d running\n", e.Trial, outcomeLine(e), best, e.Finished, p.total, e.Running)
	}
	if e.Finished >= 0 {
		p.bar.describe(fmt.Sprintf("best %s, %d running", best, e.Running))
		p.bar.set(min(e.Finished, p.total), p.total)
	}
}

func (p *runProgress) echo(trial int64, stream string, line []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.clear()
	fmt.Fprintf(p.env.stderr, "[trial %d %s] %s\n", trial, stream, line)
}

// notice prints what the runner says of a result it keeps to send again.
func (p *runProgress) notice(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.clear()
	fmt.Fprintf(p.env.stderr, "warning: %s\n", msg)
}

func (p *runProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.finish()
}

// outcomeLine is a complete trial's result on the console: its value, or
// its objective values (0.12, 4.5), marked when it is infeasible.
func outcomeLine(e runner.Event) string {
	text := fmt.Sprintf("%.6g", e.Value)
	if len(e.Values) > 0 {
		parts := make([]string, len(e.Values))
		for k, v := range e.Values {
			parts[k] = fmt.Sprintf("%.6g", v)
		}
		text = "(" + strings.Join(parts, ", ") + ")"
	}
	if !e.Feasible {
		text += fmt.Sprintf(" infeasible (constraints %v)", e.Constraints)
	}
	return text
}

// printTuningSummary prints what the run did (stderr) and, as JSON
// (stdout), its best feasible trial, or with several objectives the
// study's Pareto-optimal trials; then how to look at the study.
func printTuningSummary(ctx context.Context, stderr, stdout io.Writer, sum runner.Summary, name string, sp *space.Space, svc *openedService) {
	if sum.Abandoned > 0 {
		fmt.Fprintf(stderr, "%d trials left running by an earlier xbo run that was killed were failed\n", sum.Abandoned)
	}
	if sum.Finished >= 0 {
		fmt.Fprintf(stderr, "this run: %d complete, %d pruned, %d failed (%d interrupted); the study has %d finished trials\n",
			sum.Complete, sum.Pruned, sum.Failed, sum.Interrupted, sum.Finished)
	} else {
		fmt.Fprintf(stderr, "this run: %d complete, %d pruned, %d failed (%d interrupted); the study's finished trials could not be read: %v\n",
			sum.Complete, sum.Pruned, sum.Failed, sum.Interrupted, sum.FinishedErr)
	}
	if sum.RandomFallbacks > 0 {
		fmt.Fprintf(stderr, "%d of this run's trials were random configurations standing in for model-based proposals (acquisition random-fallback; their notes say why)\n", sum.RandomFallbacks)
	}
	switch {
	case sp.MultiObjective():
		front, err := svc.c.BestTrials(context.WithoutCancel(ctx), name)
		if err != nil {
			fmt.Fprintf(stderr, "warning: the study's Pareto-optimal trials: %v\n", err)
			break
		}
		names := sp.ObjectiveNames()
		list := make([]map[string]any, 0, len(front))
		for _, t := range front {
			values := map[string]float64{}
			for k, v := range t.Values {
				if k < len(names) {
					values[names[k]] = v
				}
			}
			item := map[string]any{"trial": t.Number, "values": values, "params": t.Params}
			if len(t.Constraints) > 0 {
				item["constraints"] = t.Constraints
			}
			list = append(list, item)
		}
		fmt.Fprintf(stderr, "the study's Pareto-optimal trials (%s): %d, as JSON on standard output\n", objectivesText(sp), len(front))
		line, _ := json.Marshal(map[string]any{"best_trials": list})
		fmt.Fprintf(stdout, "%s\n", line)
	case sum.Best != nil:
		best := map[string]any{"trial": sum.Best.Number, "value": *sum.Best.Value, "params": sum.Best.Params}
		if len(sum.Best.Constraints) > 0 {
			best["constraints"] = sum.Best.Constraints
		}
		line, _ := json.Marshal(map[string]any{"best": best})
		fmt.Fprintf(stdout, "%s\n", line)
	case sum.Complete > 0 && len(sp.Constraints) > 0:
		fmt.Fprintf(stderr, "no trial of this run keeps every constraint (%s ≤ 0), so none is best\n", strings.Join(sp.Constraints, ", "))
	}
	switch {
	case svc.explain != "":
		fmt.Fprintf(stderr, "explain it: xbo explain report --study %s --db %s --out report.html\n", shellQuote(name), shellQuote(svc.explain))
		fmt.Fprintf(stderr, "or watch it: xbo serve --db %s, then open http://127.0.0.1:8080/#study=%s\n", shellQuote(svc.explain), url.QueryEscape(name))
	case svc.dashboard != "":
		fmt.Fprintf(stderr, "dashboard: %s/#study=%s\n", svc.dashboard, url.QueryEscape(name))
	}
}

// printUndelivered lists the results the service did not take, each as
// the xbo tell command that records it, so that none is lost: the user
// runs them once the service is back.
func printUndelivered(w io.Writer, list []runner.Undelivered, study string, svc *openedService) {
	if len(list) == 0 {
		return
	}
	where := "--url " + shellQuote(svc.dashboard)
	if svc.explain != "" {
		where = "--db " + shellQuote(svc.explain)
	}
	fmt.Fprintf(w, "%d results could not be told to the study; record them with:\n", len(list))
	for _, u := range list {
		cmd := fmt.Sprintf("xbo tell --study %s --trial %d %s", shellQuote(study), u.Trial, where)
		switch u.State {
		case "complete":
			cmd += " --value " + numberList(u.Values)
			if len(u.Constraints) > 0 {
				cmd += " --constraints " + numberList(u.Constraints)
			}
		case "pruned":
			cmd += " --state pruned"
		default:
			cmd += " --state failed --reason " + shellQuote(u.Reason)
		}
		fmt.Fprintf(w, "  %s    # %v\n", cmd, u.Err)
	}
}

// numberList writes numbers comma-separated in full precision, as xbo
// tell reads them.
func numberList(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
