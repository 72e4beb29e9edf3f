package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"

	"xbo/client"
	"xbo/opt"
	"xbo/space"
)

// xbo ask and xbo tell drive a study from a shell script: ask prints a
// trial's number and configuration as JSON, the script evaluates it, tell
// records the outcome. Both reach the study the way xbo run does
// (openRunService): the embedded store, or a running xbo serve.

func init() {
	register(command{name: "ask", summary: "get a trial to evaluate: its number and parameters as JSON on standard output",
		synopsis: "xbo ask --study NAME [--space space.json] [--db xbo.db | --url URL [--token T]] [--retry-for 60s] [--worker W]",
		about: `Prints {"number": N, "params": {...}} for a shell pipeline, e.g.
  trial=$(xbo ask --study s); n=$(echo "$trial" | jq .number)
With --space the study is created when it does not exist (and checked
against the space when it does). Tell the outcome with xbo tell --trial N.`,
		run: runAsk})
	register(command{name: "tell", summary: "record a trial's outcome: its value, or that it failed or was pruned",
		synopsis: `xbo tell --study NAME --trial N --value V [--constraints C1,C2] [--db xbo.db | --url URL [--token T]] [--retry-for 60s]
xbo tell --study NAME --trial N --state failed [--reason TEXT]
xbo tell --study NAME --trial N --state pruned [--value V]`,
		about: `Records the outcome of a trial xbo ask handed out. --value takes one
number per objective, comma-separated (0.12,4.5 for two). Telling the same
outcome twice is accepted; another outcome for a told trial is refused.`,
		run: runTell})
}

// serviceFlags adds the flags that say where a study lives (--db, or --url
// and --token) and how long an outage is waited out (--retry-for) to fs;
// open, once fs is parsed, opens the service they name with the rest of rs
// (openRunService).
func serviceFlags(fs *flag.FlagSet) (open func(ctx context.Context, rs runService) (*openedService, error)) {
	db := fs.String("db", "xbo.db", "SQLite file, or postgres://... for PostgreSQL (the service runs inside this command)")
	remote := fs.String("url", "", "use the xbo serve at this URL instead of --db")
	token := fs.String("token", os.Getenv("XBO_TOKEN"), "bearer token for --url (default $XBO_TOKEN)")
	retryFor := fs.Duration("retry-for", client.DefaultRetryFor, "how long a request is repeated while the server or its database is unreachable (0: once)")
	return func(ctx context.Context, rs runService) (*openedService, error) {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if *remote != "" && set["db"] {
			return nil, usagef("give --db or --url, not both")
		}
		if *retryFor < 0 {
			return nil, usagef("--retry-for must not be negative")
		}
		rs.db, rs.url, rs.token, rs.retryFor = *db, *remote, *token, retryFor
		return openRunService(ctx, rs)
	}
}

// askedTrial is what xbo ask prints.
type askedTrial struct {
	Number int64          `json:"number"`
	Params map[string]any `json:"params"`
}

func runAsk(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("ask", flag.ContinueOnError)
	name := fs.String("study", "", "study name (required)")
	spacePath := fs.String("space", "", "search space file, JSON or YAML: creates the study when it does not exist")
	host, _ := os.Hostname()
	worker := fs.String("worker", "xbo-ask/"+host, "worker name recorded with the trial")
	open := serviceFlags(fs)
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *name == "" {
		return usagef("--study NAME is required")
	}
	if strings.TrimSpace(*worker) == "" {
		return usagef("--worker must not be empty")
	}
	var sp *space.Space
	if *spacePath != "" {
		var err error
		if sp, err = space.Load(*spacePath); err != nil {
			return usageError{err}
		}
	}
	svc, err := open(ctx, runService{existing: sp == nil, worker: *worker})
	if err != nil {
		return err
	}
	defer svc.close()
	noSettings := func() opt.Settings { return opt.Settings{} }
	if err := ensureStudy(ctx, svc.c, *name, sp, noSettings, nil, env); err != nil {
		return err
	}
	t, err := svc.c.Ask(ctx, *name)
	if err != nil {
		return err
	}
	line, err := json.Marshal(askedTrial{Number: t.Number, Params: t.Params})
	if err != nil {
		return fmt.Errorf("trial %d: %w", t.Number, err)
	}
	_, err = fmt.Fprintf(env.stdout, "%s\n", line)
	return err
}

func runTell(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("tell", flag.ContinueOnError)
	name := fs.String("study", "", "study name (required)")
	number := fs.Int64("trial", -1, "the trial's number, as xbo ask printed it (required)")
	value := fs.String("value", "", "the trial's value, or one per objective, comma-separated (required for complete; optional for pruned)")
	constraints := fs.String("constraints", "", "the constraint values, comma-separated, for a study with constraints")
	state := fs.String("state", "complete", "complete, failed or pruned")
	reason := fs.String("reason", "", "why the trial failed (--state failed)")
	open := serviceFlags(fs)
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	switch {
	case *name == "":
		return usagef("--study NAME is required")
	case *number < 0:
		return usagef("--trial N (the number xbo ask printed) is required")
	}
	values, err := parseNumbers("--value", *value)
	if err != nil {
		return err
	}
	cons, err := parseNumbers("--constraints", *constraints)
	if err != nil {
		return err
	}
	switch *state {
	case "complete":
		if len(values) == 0 {
			return usagef("--value is required for a complete trial (or give --state failed or pruned)")
		}
	case "failed":
		if len(values) > 0 || len(cons) > 0 {
			return usagef("a failed trial has no --value or --constraints")
		}
	case "pruned":
		if len(values) > 1 || len(cons) > 0 {
			return usagef("a pruned trial takes at most one --value (its last intermediate one) and no --constraints")
		}
	default:
		states := []string{"complete", "failed", "pruned"}
		if s := suggest(*state, states); s != "" {
			return usagef("--state %q; did you mean %q?", *state, s)
		}
		return usagef("--state %q: want complete, failed or pruned", *state)
	}
	if *reason != "" && *state != "failed" {
		return usagef("--reason goes with --state failed")
	}
	svc, err := open(ctx, runService{existing: true})
	if err != nil {
		return err
	}
	defer svc.close()
	switch {
	case *state == "failed":
		err = svc.c.Fail(ctx, *name, *number, *reason)
	case *state == "pruned" && len(values) == 1:
		err = svc.c.PruneWithValue(ctx, *name, *number, values[0])
	case *state == "pruned":
		err = svc.c.Prune(ctx, *name, *number)
	case len(values) == 1 && len(cons) == 0:
		err = svc.c.Tell(ctx, *name, *number, values[0])
	default:
		err = svc.c.TellOutcome(ctx, *name, *number, client.Outcome{Values: values, Constraints: cons})
	}
	if client.IsStatus(err, http.StatusBadRequest) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "trial %d of study %q: %s\n", *number, *name, *state)
	return nil
}

// parseNumbers reads a flag's comma-separated finite numbers ("" gives
// none): a NaN or infinite value is refused here, since a run that
// produced one failed and should be told so.
func parseNumbers(flagName, text string) ([]float64, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	parts := strings.Split(text, ",")
	out := make([]float64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, usagef("%s: %q is not a number", flagName, strings.TrimSpace(p))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, usageError{errors.New(flagName + ": " + strings.TrimSpace(p) + " is not a finite number (tell a run that diverged with --state failed)")}
		}
		out[i] = v
	}
	return out, nil
}
