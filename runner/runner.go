// Package runner tunes any command: it asks the study for a configuration,
// runs the command with it, reads the command's result from its output and
// tells it, with several commands running at once (xbo run; DESIGN.md,
// "Python": the Go binary offers xbo run to tune any command).
//
// The study is reached through package client, whether it lives in a
// remote xbo serve or in the service that xbo run starts in its own process
// on the embedded store: one path for both.
//
// A command sees a configuration two ways: each argument's {name}
// placeholders are replaced by the parameter's value, and the environment
// holds XBO_PARAM_<NAME> for every active parameter (EnvName), XBO_TRIAL
// (the trial's number) and XBO_STUDY. Values are the text forms of the
// trials CSV (space.Space.Format): floats in full precision, integers as
// integers, a categorical's choice as written (16, true, adam). An inactive
// parameter's variable is absent and its placeholder becomes empty.
//
// The command's result is what its standard output says (scanOutput): the
// last {"value": v} JSON line, or else the last number printed; JSON lines
// {"step": s, "value": v} are intermediate values, reported to the study as
// they come. A study with several objectives or with constraints takes the
// last {"values": [v0, v1, ...], "constraints": [c0, ...]} line (or
// {"value": v, "constraints": [...]} for one objective), or else the last
// numbers of the last line that prints numbers: one per objective, then
// one per constraint, in the space's order (outcome checks the counts). A
// command that exits with a non-zero status, prints no result or a result
// that is not finite fails its trial, with the tail of its standard error
// in the reason.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"xbo/client"
	"xbo/opt"
	"xbo/pareto"
	"xbo/space"
)

// Config says what to run and how often.
type Config struct {
	// Client reaches the study's service; its worker id should be
	// WorkerID(), which lets a later run recognize trials this process
	// left running if it was killed.
	Client *client.Client
	// Study must exist.
	Study string
	// Command is the program and its arguments, with {name} placeholders.
	// A {word} that names no parameter is refused (CheckPlaceholders)
	// unless LiteralBraces is set; then it is passed on as written.
	Command       []string
	LiteralBraces bool
	// Trials is the total of finished trials (complete, failed or pruned)
	// the study should have: a run that starts on a study with some
	// finished trials runs only the rest, so the same command resumes.
	// Trials failed as "interrupted" (stopped by Ctrl-C) do not count:
	// they were not evaluations.
	Trials int
	// Workers is how many commands run at once (default 1). With more
	// than one, each slot asks under a worker name of its own, the
	// client's followed by "/1", "/2", …, so that the trials show which
	// slot ran them (the dashboard's timeline has a row per worker).
	Workers int
	// Timeout stops a command that runs longer (0: no limit); its trial
	// fails.
	Timeout time.Duration
	// Grace is how long a command may take to exit after SIGTERM before it
	// gets SIGKILL (default 10 s).
	Grace time.Duration
	// Env is the commands' base environment (nil: this process's).
	Env []string
	// StopAfterFailures stops the run when the first this-many trials it
	// ran all failed, which says the command is broken, not the
	// configurations (default 3; negative: never).
	StopAfterFailures int
	// Events, when set, is called after every trial this run finishes, one
	// call at a time.
	Events func(Event)
	// Echo, when set, gets every line a command prints, cut to MaxLine.
	Echo func(trial int64, stream string, line []byte)
	// Notice, when set, gets a message when a result could not be told
	// and is kept to be sent again (deliver).
	Notice func(msg string)
}

// Event is a trial that ended, with the run's progress.
type Event struct {
	Trial  int64
	Params map[string]any
	// State is "complete", "failed" or "pruned".
	State string
	Value float64 // NaN unless complete; the first objective's
	// Values are every objective's value of a complete trial of a study
	// with several, Constraints its constraint values (nil otherwise);
	// Feasible says whether it keeps every constraint.
	Values, Constraints []float64
	Feasible            bool
	Reason              string // why it failed
	// Finished counts the study's finished trials toward Config.Trials (−1
	// when the study could not be read: then it is unknown, not zero),
	// Running the commands this run has running.
	Finished, Running int
	// Best is the best complete feasible trial of this run so far (nil:
	// none, and always with several objectives); Front counts this run's
	// Pareto-optimal trials (several objectives).
	Best  *client.Trial
	Front int
}

// Summary is what a run did.
type Summary struct {
	// Complete, Failed and Pruned count the trials this run finished;
	// Interrupted those among the failed that it stopped because it was
	// interrupted.
	Complete, Failed, Pruned, Interrupted int
	// Finished is the study's finished trials at the end, as counted
	// toward Config.Trials and read from the study (−1 when it could not
	// be read; FinishedErr says why).
	Finished    int
	FinishedErr error
	// Best is the best complete feasible trial of this run (nil: none,
	// and always with several objectives: client.BestTrials gives the
	// study's Pareto-optimal trials).
	Best *client.Trial
	// Abandoned counts trials that earlier runs on this machine left
	// running when they were killed: they were failed at the start.
	Abandoned int
	// RandomFallbacks counts the trials of this run that the optimizer
	// proposed as random configurations standing in for model-based ones
	// (acquisition "random-fallback"; their notes say why).
	RandomFallbacks int
	// ReportErrors counts intermediate values the service did not take;
	// FirstReportError is the first such error.
	ReportErrors     int
	FirstReportError error
	// Undelivered holds the results the commands produced that the
	// service had not taken when the run ended (Run then returns an error
	// wrapping ErrUndelivered): none is dropped silently.
	Undelivered []Undelivered
}

// ErrInterrupted is returned, wrapped, when the run stopped before the
// study had its trials because its context ended.
var ErrInterrupted = errors.New("interrupted")

// WorkerID names this process in the trials it asks for:
// xbo-run/<host>/<pid> (and /<slot> after it with several workers).
func WorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return "xbo-run/" + host + "/" + strconv.Itoa(os.Getpid())
}

// EnvName is the environment variable that carries a parameter:
// XBO_PARAM_ followed by the name in upper case with every character other
// than an ASCII letter or digit replaced by "_" (batch-size →
// XBO_PARAM_BATCH_SIZE).
func EnvName(param string) string {
	var b strings.Builder
	b.WriteString("XBO_PARAM_")
	for _, r := range strings.ToUpper(param) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// run is one Run's state.
type run struct {
	cfg  Config
	c    *client.Client
	sp   *space.Space
	env  []string // names of the parameters' variables, in space order
	base []string

	claim sync.Mutex // one ask at a time, after a look at the study's counts

	mu        sync.Mutex // guards what follows
	sum       Summary
	stopped   int // trials failed as interrupted before this run
	running   int
	ranFirst  int // trials of this run among its first StopAfterFailures
	failFirst int // failures among them
	fatal     error
	lastFail  string
	// front holds the objective values of this run's complete feasible
	// trials, for Event.Front (several objectives).
	front [][]float64
	// pending holds results whose tell found the service unreachable, to
	// be sent again (deliver.go); lastTellErr is the last such error.
	pending     []result
	lastTellErr error
}

// Run runs commands until the study has cfg.Trials finished trials, ctx
// ends (the running commands are then stopped and their trials failed with
// the reason "interrupted"; the error wraps ErrInterrupted) or the first
// trials all fail. Every outcome is told before Run returns, so stopping
// loses nothing that was told, and the same call resumes the study. A
// result the service does not take (an outage longer than the client's
// retry window) is kept and sent again, and one still not delivered at the
// end is listed in Summary.Undelivered, with an error wrapping
// ErrUndelivered.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	if cfg.Client == nil {
		return Summary{}, errors.New("runner: no client")
	}
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return Summary{}, errors.New("runner: no command")
	}
	if cfg.Trials < 1 {
		return Summary{}, fmt.Errorf("runner: trials %d must be at least 1", cfg.Trials)
	}
	if cfg.Workers == 0 {
		cfg.Workers = 1
	}
	if cfg.Workers < 1 || cfg.Workers > 1024 {
		return Summary{}, fmt.Errorf("runner: workers %d must be between 1 and 1024", cfg.Workers)
	}
	if cfg.Timeout < 0 || cfg.Grace < 0 {
		return Summary{}, errors.New("runner: timeout and grace must not be negative")
	}
	if cfg.Grace == 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.StopAfterFailures == 0 {
		cfg.StopAfterFailures = 3
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if _, err := exec.LookPath(cfg.Command[0]); err != nil {
		return Summary{}, fmt.Errorf("runner: command %q: %w", cfg.Command[0], err)
	}
	st, err := cfg.Client.Study(ctx, cfg.Study)
	if err != nil {
		return Summary{}, fmt.Errorf("runner: study %q: %w", cfg.Study, err)
	}
	sp, err := space.Parse(st.Space)
	if err != nil {
		return Summary{}, fmt.Errorf("runner: space of study %q: %w", cfg.Study, err)
	}
	if !cfg.LiteralBraces {
		if err := CheckPlaceholders(cfg.Command, sp); err != nil {
			return Summary{}, err
		}
	}
	r := &run{cfg: cfg, c: cfg.Client, sp: sp}
	if r.env, err = envNames(sp); err != nil {
		return Summary{}, err
	}
	r.base = withoutXBOParams(cfg.Env)
	if r.sum.Abandoned, err = r.failAbandoned(ctx); err != nil {
		return Summary{}, err
	}
	if r.stopped, err = r.countInterrupted(ctx); err != nil {
		return Summary{}, err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for slot := range cfg.Workers {
		c := r.c
		if cfg.Workers > 1 {
			if c, err = r.c.AsWorker(r.c.Worker() + "/" + strconv.Itoa(slot+1)); err != nil {
				return Summary{}, fmt.Errorf("runner: slot %d: %w", slot+1, err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t, err := r.next(runCtx, c)
				if err != nil {
					r.stop(err, cancel)
					return
				}
				if t == nil {
					return
				}
				if err := r.trial(runCtx, ctx, t); err != nil {
					r.stop(err, cancel)
					return
				}
			}
		}()
	}
	wg.Wait()

	undelivered := r.settle(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	// The study's own count, not this run's: what the store holds is what
	// counts, whatever this run saw of it.
	if r.sum.Finished, r.sum.FinishedErr = Finished(context.WithoutCancel(ctx), r.c, cfg.Study); r.sum.FinishedErr != nil {
		r.sum.Finished = -1
	}
	switch {
	case r.fatal != nil && undelivered != nil:
		return r.sum, fmt.Errorf("%w; %w", r.fatal, undelivered)
	case r.fatal != nil:
		return r.sum, r.fatal
	case undelivered != nil:
		return r.sum, undelivered
	case ctx.Err() != nil && r.sum.Finished < cfg.Trials:
		return r.sum, fmt.Errorf("runner: %w with %d of %d trials finished", ErrInterrupted, r.sum.Finished, cfg.Trials)
	}
	return r.sum, nil
}

// stop ends the run on an error: the running commands are interrupted.
func (r *run) stop(err error, cancel context.CancelFunc) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	cancel()
}

// counted is how many of a study's finished trials count toward
// Config.Trials: complete, failed and pruned ones, but not those failed as
// interrupted. Callers hold r.mu or run before the workers start.
func (r *run) counted(st *client.Study) int {
	return st.Counts["complete"] + st.Counts["failed"] + st.Counts["pruned"] - r.stopped - r.sum.Interrupted
}

// countInterrupted counts the trials earlier runs failed as interrupted.
func (r *run) countInterrupted(ctx context.Context) (int, error) {
	return countInterrupted(ctx, r.c, r.cfg.Study)
}

// reasonInterrupted is the reason of a trial whose command was stopped
// because the run was.
const reasonInterrupted = "interrupted"

// next asks for the next trial through c (its slot's client), or returns
// nil when the study has (or will have, with the trials running now) enough
// finished trials. Trials running in other processes count: several xbo
// run on one study share the total.
func (r *run) next(ctx context.Context, c *client.Client) (*client.Trial, error) {
	r.claim.Lock()
	defer r.claim.Unlock()
	if ctx.Err() != nil {
		return nil, nil
	}
	// Results kept through an outage go first: the service is likely back
	// when a slot is free again, and they count toward the total.
	if err := r.flush(ctx); err != nil {
		return nil, err
	}
	st, err := r.c.Study(ctx, r.cfg.Study)
	if err != nil {
		return nil, fmt.Errorf("runner: study %q: %w", r.cfg.Study, err)
	}
	r.mu.Lock()
	enough := r.counted(st)+st.Counts["running"] >= r.cfg.Trials
	r.mu.Unlock()
	if enough {
		return nil, nil
	}
	t, err := c.Ask(ctx, r.cfg.Study)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("runner: ask %q: %w", r.cfg.Study, err)
	}
	return t, nil
}

// trial runs one trial's command and tells its outcome (deliver). runCtx
// stops the command; the tell runs even after ctx ended, so no outcome is
// lost.
func (r *run) trial(runCtx, ctx context.Context, t *client.Trial) error {
	args, env, err := r.prepare(t)
	r.mu.Lock()
	r.running++
	if t.Acquisition == opt.AcqRandomFallback {
		r.sum.RandomFallbacks++
	}
	r.mu.Unlock()
	var ex execution
	if err != nil {
		ex.startErr = err
	} else {
		var echo func(string, []byte)
		if r.cfg.Echo != nil {
			echo = func(stream string, line []byte) { r.cfg.Echo(t.Number, stream, line) }
		}
		ex = execute(runCtx, args, env, r.cfg.Timeout, r.cfg.Grace,
			func(iv Intermediate) bool { return r.report(runCtx, t.Number, iv) }, echo)
	}
	state, res, reason := r.outcome(ex)
	r.mu.Lock()
	r.running--
	if ex.droppedReports > 0 {
		r.sum.ReportErrors += ex.droppedReports
		if r.sum.FirstReportError == nil {
			r.sum.FirstReportError = fmt.Errorf("trial %d: %d intermediate values were not sent: more than %d waited for the service", t.Number, ex.droppedReports, MaxPendingReports)
		}
	}
	r.mu.Unlock()
	return r.deliver(ctx, result{t: t, state: state, res: res, reason: reason, interrupted: ex.stopped == interrupted})
}

// record counts a told trial, sends its event and stops a run whose first
// trials all failed.
func (r *run) record(ctx context.Context, t *client.Trial, state string, res client.Outcome, reason string, wasInterrupted bool) error {
	st, err := r.c.Study(context.WithoutCancel(ctx), r.cfg.Study)
	r.mu.Lock()
	defer r.mu.Unlock()
	value := math.NaN()
	var values []float64
	feasible := false
	switch {
	case state == "complete":
		r.sum.Complete++
		value, feasible = res.Values[0], isFeasible(res.Constraints)
		if r.sp.MultiObjective() {
			values = res.Values
			if feasible {
				r.front = append(r.front, values)
			}
			break
		}
		// An infeasible trial is never best.
		if feasible && (r.sum.Best == nil || r.better(value, *r.sum.Best.Value)) {
			best := *t
			best.Value, best.State, best.Constraints = &value, state, res.Constraints
			r.sum.Best = &best
		}
	case state == "pruned":
		r.sum.Pruned++
	case wasInterrupted:
		r.sum.Failed++
		r.sum.Interrupted++
	default:
		r.sum.Failed++
	}
	fin := -1
	if err == nil {
		fin = r.counted(st)
	}
	if !wasInterrupted && r.cfg.StopAfterFailures > 0 && r.ranFirst < r.cfg.StopAfterFailures {
		r.ranFirst++
		if state == "failed" {
			r.failFirst++
			r.lastFail = reason
		}
	}
	if r.cfg.Events != nil {
		e := Event{Trial: t.Number, Params: t.Params, State: state, Value: value, Values: values, Feasible: feasible,
			Reason: reason, Finished: fin, Running: r.running, Best: r.sum.Best}
		if state == "complete" {
			e.Constraints = res.Constraints
		}
		if len(r.front) > 0 {
			if front, err := pareto.Front(r.front, r.sp.Directions()); err == nil {
				e.Front = len(front)
			}
		}
		r.cfg.Events(e)
	}
	if r.cfg.StopAfterFailures > 0 && r.failFirst == r.cfg.StopAfterFailures {
		r.failFirst++ // say it once
		return fmt.Errorf("runner: the first %d trials all failed, so the command seems broken; the last one: %s", r.cfg.StopAfterFailures, r.lastFail)
	}
	return nil
}

func (r *run) better(a, b float64) bool {
	if r.sp.Objective == space.Maximize {
		return a > b
	}
	return a < b
}

// report sends an intermediate value and answers whether the study's
// pruner says to stop the trial; the command is then stopped (SIGTERM, then
// SIGKILL after the grace period: execute, stop "pruned") and outcome tells
// the trial pruned. A report the service refuses is counted, and the trial
// goes on.
func (r *run) report(ctx context.Context, number int64, iv Intermediate) bool {
	prune, err := r.c.Report(ctx, r.cfg.Study, number, iv.Step, iv.Value)
	if err != nil && ctx.Err() == nil {
		r.mu.Lock()
		r.sum.ReportErrors++
		if r.sum.FirstReportError == nil {
			r.sum.FirstReportError = fmt.Errorf("trial %d, step %d: %w", number, iv.Step, err)
		}
		r.mu.Unlock()
	}
	return err == nil && prune
}

// outcome turns how a command ended into the trial's state, result (every
// objective's value and the constraint values) and reason.
func (r *run) outcome(ex execution) (state string, res client.Outcome, reason string) {
	fail := func(msg string) (string, client.Outcome, string) {
		return "failed", client.Outcome{}, withStderr(msg, ex.stderr)
	}
	switch {
	case ex.startErr != nil:
		return fail("could not start the command: " + ex.startErr.Error())
	case ex.stopped == interrupted:
		return "failed", client.Outcome{}, reasonInterrupted
	case ex.stopped == timedOut:
		return fail(fmt.Sprintf("timed out after %v", r.cfg.Timeout))
	case ex.stopped == pruned:
		// The service keeps the last intermediate value as its value.
		return "pruned", client.Outcome{}, "pruned by the study's pruner"
	case ex.waitErr != nil:
		return fail(exitText(ex.waitErr))
	case ex.readErr != nil:
		return fail("reading its output: " + ex.readErr.Error())
	case !ex.out.Found:
		return fail(`printed no result (no number on standard output and no {"value": v} line)`)
	}
	res, msg := resultOf(r.sp, ex.out)
	if msg != "" {
		return fail(msg)
	}
	return "complete", res, ""
}

// resultOf reads a command's result for a study: from its JSON result
// line, or from the numbers of its last line with numbers (the last one
// per objective, then per constraint). It says what is wrong when the
// counts do not fit the study or a number is not finite.
func resultOf(sp *space.Space, out Output) (client.Outcome, string) {
	m, n := sp.NumObjectives(), len(sp.Constraints)
	var res client.Outcome
	switch {
	case out.FromJSON:
		if len(out.Values) != m {
			return res, fmt.Sprintf("%s; the command printed %s in its JSON result line", studyShape(sp), count(len(out.Values), "objective value"))
		}
		if len(out.Constraints) != n {
			return res, fmt.Sprintf("%s; the command printed %s in its JSON result line", studyShape(sp), count(len(out.Constraints), "constraint value"))
		}
		res.Values, res.Constraints = out.Values, out.Constraints
	case m+n == 1:
		res.Values = []float64{out.Value}
	case len(out.Numbers) < m+n:
		return res, fmt.Sprintf("%s; the command printed %s on its last line with numbers (give %d on one line, objectives then constraints, or a JSON line {\"values\": [...], \"constraints\": [...]})",
			studyShape(sp), count(len(out.Numbers), "number"), m+n)
	default:
		nums := out.Numbers[len(out.Numbers)-m-n:]
		res.Values = nums[:m]
		if n > 0 {
			res.Constraints = nums[m:]
		}
	}
	for k, v := range res.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if m == 1 {
				return res, fmt.Sprintf("its result %v is not a finite number", v)
			}
			return res, fmt.Sprintf("its value of objective %q, %v, is not a finite number", sp.ObjectiveNames()[k], v)
		}
	}
	for j, c := range res.Constraints {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return res, fmt.Sprintf("its value of constraint %q, %v, is not a finite number", sp.Constraints[j], c)
		}
	}
	return res, ""
}

// studyShape says what a study's result is: "the study has 2 objectives
// (error, size) and 1 constraint (memory)".
func studyShape(sp *space.Space) string {
	text := "the study has " + count(sp.NumObjectives(), "objective")
	if sp.MultiObjective() || len(sp.Objectives) == 1 {
		text += " (" + strings.Join(sp.ObjectiveNames(), ", ") + ")"
	}
	if n := len(sp.Constraints); n > 0 {
		text += " and " + count(n, "constraint") + " (" + strings.Join(sp.Constraints, ", ") + ")"
	}
	return text
}

// count writes "1 number", "2 numbers", "no number".
func count(n int, noun string) string {
	switch n {
	case 0:
		return "no " + noun
	case 1:
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// isFeasible reports whether constraint values keep every constraint (≤ 0;
// none: an unconstrained study).
func isFeasible(cons []float64) bool {
	for _, c := range cons {
		if !(c <= 0) {
			return false
		}
	}
	return true
}

// exitText says how a command ended: its exit status or the signal that
// killed it.
func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error() // "signal: killed"
}

// withStderr appends the tail of standard error to a failure, keeping the
// whole under MaxReason bytes (the end of standard error says most).
func withStderr(msg, stderr string) string {
	if stderr == "" {
		return msg
	}
	msg += "; stderr: "
	if room := MaxReason - len(msg) - len("…"); len(stderr) > room {
		cut := len(stderr) - max(room, 0)
		for cut < len(stderr) && !utf8.RuneStart(stderr[cut]) {
			cut++
		}
		stderr = "…" + stderr[cut:]
	}
	return msg + stderr
}

// envNames gives each parameter its variable and refuses two parameters
// that would share one.
func envNames(sp *space.Space) ([]string, error) {
	names := make([]string, sp.Dim())
	owner := map[string]string{}
	for i, p := range sp.Params {
		names[i] = EnvName(p.Name)
		if other, taken := owner[names[i]]; taken {
			return nil, fmt.Errorf("runner: parameters %q and %q would both be passed as %s; rename one", other, p.Name, names[i])
		}
		owner[names[i]] = p.Name
	}
	return names, nil
}

// withoutXBOParams drops XBO_PARAM_* variables from the base environment:
// a command must not see a value of a parameter that is inactive in its
// trial because the shell that started xbo run had one.
func withoutXBOParams(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "XBO_PARAM_") && !strings.HasPrefix(kv, "XBO_TRIAL=") && !strings.HasPrefix(kv, "XBO_STUDY=") {
			out = append(out, kv)
		}
	}
	return out
}

// prepare makes a trial's argument list and environment.
func (r *run) prepare(t *client.Trial) (args, env []string, err error) {
	vals, err := r.sp.FromMap(t.Params)
	if err != nil {
		return nil, nil, fmt.Errorf("trial %d: %w", t.Number, err)
	}
	text := make(map[string]string, len(vals))
	env = append([]string(nil), r.base...)
	for i, p := range r.sp.Params {
		text[p.Name] = r.sp.Format(i, vals[i])
		if !math.IsNaN(vals[i]) {
			env = append(env, r.env[i]+"="+text[p.Name])
		}
	}
	env = append(env, "XBO_TRIAL="+strconv.FormatInt(t.Number, 10), "XBO_STUDY="+r.cfg.Study)
	args = make([]string, len(r.cfg.Command))
	for i, a := range r.cfg.Command {
		args[i] = substitute(a, text)
	}
	return args, env, nil
}

// substitute replaces every {name} of a known parameter in arg by its
// value; other braces are left as they are.
func substitute(arg string, values map[string]string) string {
	return eachPlaceholder(arg, func(name string, _ bool) (string, bool) {
		v, known := values[name]
		return v, known
	})
}

// failAbandoned fails the trials that an earlier xbo run on this machine
// left running when it was killed (its process is gone): they would
// otherwise stay running, and count, until the service's trial timeout.
func (r *run) failAbandoned(ctx context.Context) (int, error) {
	running, err := r.c.Trials(ctx, r.cfg.Study, "running")
	if err != nil {
		return 0, fmt.Errorf("runner: list running trials of %q: %w", r.cfg.Study, err)
	}
	me := WorkerID()
	prefix := me[:strings.LastIndexByte(me, '/')+1]
	n := 0
	for _, t := range running {
		pidText, ours := strings.CutPrefix(t.Worker, prefix)
		if !ours || t.Worker == me || strings.HasPrefix(t.Worker, me+"/") {
			continue
		}
		pidText, _, _ = strings.Cut(pidText, "/") // a slot's name: pid/slot
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || alive(pid) {
			continue
		}
		reason := fmt.Sprintf("abandoned: xbo run (process %d) stopped without telling its result", pid)
		if err := r.c.Fail(ctx, r.cfg.Study, t.Number, reason); err != nil && !client.IsStatus(err, 409) {
			return n, fmt.Errorf("runner: fail abandoned trial %d: %w", t.Number, err)
		}
		n++
	}
	return n, nil
}
