// Command xbo tunes hyperparameters with Bayesian optimization and explains
// the result: partial dependence with confidence bands, regional PDPs,
// fANOVA importance and Shapley explanations of proposals.
//
// Every subcommand lives in its own file and registers itself from init, so
// that commands can be added without touching this dispatcher. Run `xbo help`
// for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/term"
)

// cliEnv is what a subcommand may touch of the outside world; tests replace it.
type cliEnv struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	isTerminal     bool // stderr is a terminal: draw progress bars
	// flagSets, when set, gets each command's flag set instead of having
	// it parsed (parseFlags): the completion script is written from the
	// flags the commands really define.
	flagSets func(*flag.FlagSet)
}

type command struct {
	name    string // one or two words, e.g. "optimize" or "explain pdp"
	summary string
	// synopsis replaces "xbo NAME [flags]" in the help (one form a line),
	// about the summary below it, for commands that need more words.
	synopsis, about string
	run             func(ctx context.Context, args []string, env *cliEnv) error
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("xbo: command registered twice: " + c.name) // programming error at init, never user input
	}
	commands[c.name] = c
}

// usageError marks errors caused by how the command was called (exit code 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// lookup finds the command named by the first one or two arguments.
func lookup(args []string) (command, []string, bool) {
	if len(args) >= 2 {
		if c, ok := commands[args[0]+" "+args[1]]; ok {
			return c, args[2:], true
		}
	}
	if len(args) >= 1 {
		if c, ok := commands[args[0]]; ok {
			return c, args[1:], true
		}
	}
	return command{}, nil, false
}

func printHelp(w io.Writer, prefix string) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		if prefix == "" || strings.HasPrefix(n, prefix+" ") || n == prefix {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	fmt.Fprintln(w, "xbo — explainable Bayesian optimization for hyperparameter tuning")
	line := "xbo <command>"
	if prefix != "" {
		line = "xbo " + prefix + " <command>"
	}
	fmt.Fprintf(w, "\nUsage:\n  %s [flags]   (%s -h for its flags)\n", line, line)
	fmt.Fprintln(w, "\nCommands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-22s %s\n", n, commands[n].summary)
	}
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, env *cliEnv) int {
	if len(args) == 0 || len(args) == 1 && args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(env.stdout, "")
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		fmt.Fprintln(env.stdout, versionLine())
		return 0
	}
	if args[0] == "help" {
		// xbo help explain pdp: the command's own help.
		return run(ctx, append(append([]string(nil), args[1:]...), "-h"), env)
	}
	c, rest, ok := lookup(args)
	if !ok {
		if isGroup(args[0]) {
			return runGroup(args[0], args[1:], env)
		}
		if s := suggest(args[0], topLevelNames()); s != "" {
			fmt.Fprintf(env.stderr, "xbo: unknown command %q; did you mean %q?\n", args[0], s)
		} else {
			fmt.Fprintf(env.stderr, "xbo: unknown command %q (run xbo help)\n", args[0])
		}
		return 2
	}
	err := c.run(ctx, rest, env)
	name := c.name
	if _, ok := benchmarks[firstWord(rest)]; ok && c.name == "bench" {
		name += " " + rest[0] // errors name the benchmark: xbo bench peers: ...
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(env.stderr, "xbo %s: %v\n", name, err)
		return 2
	default:
		fmt.Fprintf(env.stderr, "xbo %s: %v\n", name, err)
		return 1
	}
}

// firstWord is args[0], or "" when there is none.
func firstWord(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cliEnv{
		stdout:     os.Stdout,
		stderr:     os.Stderr,
		stdin:      os.Stdin,
		isTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
	os.Exit(run(ctx, os.Args[1:], env))
}
