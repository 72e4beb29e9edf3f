package main

import (
	"context"
	"encoding/json"
	"flag"
	"strings"

	"xbo/bench"
	"xbo/opt"
)

func init() {
	registerBenchmark(benchmark{
		name:    "peers",
		summary: "xbo against Optuna's samplers (TPE, multivariate TPE, CMA-ES, random) on nine problems, sequential and with 8 workers",
		run:     runBenchPeers,
	})
}

func runBenchPeers(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench peers", flag.ContinueOnError)
	problems := fs.String("problems", "", "comma-separated problems (default all: "+strings.Join(bench.PeerProblems, ",")+")")
	methods := fs.String("methods", "", "comma-separated methods (default all: "+strings.Join(bench.PeerMethods, ",")+")")
	workers := fs.String("workers", "1,8", "comma-separated numbers of simulated parallel workers (trials kept pending)")
	seeds := fs.Int("seeds", 10, "repetitions (seeds 1..N)")
	budget := fs.Int("budget", 0, "evaluations per run (0: each problem's own, 30·d or 100 for LCBench); e.g. 1000 to measure the ask cost of long studies")
	data := fs.String("data", "../shared/data", "directory of the shared CSVs (grids, LCBench)")
	python := fs.String("python", bench.DefaultPython(), "Python interpreter with Optuna and cmaes (Debian python3-optuna, python3-cmaes)")
	jobs := fs.Int("jobs", 0, "optimizations run at once (0: one per CPU); regrets do not depend on it, ask times do")
	cache := fs.String("cache", "", "directory where runs are kept and reused (xbo's under a digest of the xbo executable and --optimizer)")
	settings := fs.String("optimizer", "", `xbo's optimizer settings as a study's JSON (e.g. '{"liar":"best"}'); default the defaults`)
	asJSON := fs.Bool("json", false, "print JSON (every run included) instead of the tables")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	o := bench.PeersOptions{Problems: splitList(*problems), Methods: splitList(*methods), Seeds: *seeds, Budget: *budget, DataDir: *data, Python: *python, Jobs: *jobs, Cache: *cache}
	var err error
	if o.Workers, err = parseInts(*workers); err != nil {
		return usagef("--workers: %v", err)
	}
	if *seeds < 1 || *jobs < 0 {
		return usagef("need --seeds ≥ 1 and --jobs ≥ 0")
	}
	if *settings != "" {
		st, err := opt.ParseSettings(json.RawMessage(*settings))
		if err != nil {
			return usagef("--optimizer: %v", err)
		}
		cfg := st.Config(nil, nil, 0)
		o.Config = &cfg
	}
	bar := newProgress(env, "bench peers")
	o.Progress = bar.set
	defer bar.finish()
	res, err := bench.Peers(ctx, o)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.stdout, res)
	}
	return res.WriteTable(env.stdout)
}
