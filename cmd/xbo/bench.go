package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"strings"

	"xbo/bench"
)

// benchmark is one `xbo bench <name>` experiment. Other files add theirs from
// an init function with registerBenchmark (e.g. pdp-split, bobax).
type benchmark struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, env *cliEnv) error
}

var benchmarks = map[string]benchmark{}

func registerBenchmark(b benchmark) {
	if _, dup := benchmarks[b.name]; dup {
		panic("xbo: benchmark registered twice: " + b.name) // programming error at init, never user input
	}
	benchmarks[b.name] = b
}

func init() {
	register(command{
		name:    "bench",
		summary: "reproduce the papers' experiments (xbo bench <name>; xbo bench lists them)",
		run:     runBench,
	})
	registerBenchmark(benchmark{
		name:    "compare",
		summary: "median simple regret of BO-EI vs random search at budget 30·d over seeds",
		run:     runBenchCompare,
	})
}

func runBench(ctx context.Context, args []string, env *cliEnv) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		w := env.stdout
		if len(args) == 0 {
			w = env.stderr
		}
		names := make([]string, 0, len(benchmarks))
		for n := range benchmarks {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintln(w, "Usage:\n  xbo bench <name> [flags]   (xbo bench <name> -h for its flags)")
		fmt.Fprintln(w, "\nBenchmarks:")
		for _, n := range names {
			fmt.Fprintf(w, "  %-14s %s\n", n, benchmarks[n].summary)
		}
		if len(args) == 0 {
			return usagef("which benchmark? (one of %s)", strings.Join(names, ", "))
		}
		return nil
	}
	b, ok := benchmarks[args[0]]
	if !ok {
		names := make([]string, 0, len(benchmarks))
		for n := range benchmarks {
			names = append(names, n)
		}
		sort.Strings(names)
		if s := suggest(args[0], names); s != "" {
			return usagef("unknown benchmark %q; did you mean %q?", args[0], s)
		}
		return usagef("unknown benchmark %q (one of %s)", args[0], strings.Join(names, ", "))
	}
	return b.run(ctx, args[1:], env)
}

func runBenchCompare(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench compare", flag.ContinueOnError)
	functions := fs.String("functions", "branin,hartmann3,hartmann6", `comma-separated test functions ("name" or "name:dim")`)
	strategies := fs.String("strategies", "ei,random", "comma-separated strategies; the first is compared against the second")
	seeds := fs.Int("seeds", 10, "repetitions (seeds 1..N)")
	perDim := fs.Int("budget-per-dim", 30, "evaluations per dimension")
	noise := fs.Float64("noise", 0, "standard deviation of Gaussian evaluation noise")
	workers := fs.Int("workers", 0, "parallel optimizations (0: one per CPU)")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of a table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if *seeds < 1 || *perDim < 1 || *workers < 0 {
		return usagef("--seeds and --budget-per-dim must be at least 1, --workers at least 0")
	}
	opts := bench.CompareOptions{
		Functions:    splitList(*functions),
		Strategies:   splitList(*strategies),
		Seeds:        *seeds,
		BudgetPerDim: *perDim,
		Noise:        *noise,
		Workers:      *workers,
	}
	for _, spec := range opts.Functions {
		name, dim, err := bench.ParseFunctionSpec(spec)
		if err != nil {
			return usageError{err}
		}
		if _, err := bench.Lookup(name, dim); err != nil {
			return usageError{err}
		}
	}
	for _, st := range opts.Strategies {
		switch st {
		case "ei", "lcb", "pi", "pvar", "random":
		default:
			return usagef("strategy %q: want ei, lcb, pi, pvar or random", st)
		}
	}
	bar := newProgress(env, "bench compare")
	opts.Progress = bar.set
	defer bar.finish()
	res, err := bench.Compare(ctx, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.WriteTable(env.stdout)
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}
