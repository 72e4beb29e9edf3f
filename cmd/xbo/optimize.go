package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"xbo/acq"

	"xbo/bench"
	"xbo/opt"
	"xbo/trials"
)

func init() {
	register(command{
		name:    "optimize",
		summary: "run a whole Bayesian optimization of a test function, writing every trial to CSV",
		run:     runOptimize,
	})
}

func runOptimize(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("optimize", flag.ContinueOnError)
	function := fs.String("function", "", "test function: "+strings.Join(bench.Names(), ", "))
	dims := fs.Int("dims", 0, "dimension, for the functions that take any (styblinski-tang, hyper-ellipsoid, cosine-mixture)")
	budget := fs.Int("budget", 0, "number of evaluations")
	seed := fs.Uint64("seed", 1, "random seed")
	strategy := fs.String("strategy", "ei", "ei, lcb, pi, pvar, random (random search), or a BOBAX strategy: bax, bobax, bobax-prob, eibax, bo-rs, a-bobax")
	k := fs.Int("k", 2, "bobax, bo-rs, a-bobax: EIG_PDP (or random) every k-th model-based proposal")
	pi := fs.Float64("pi", 0.5, "bobax-prob: probability of an EIG_PDP proposal")
	beta := fs.Float64("beta", 100, "eibax: exponent numerator β in EI·minmax(EIG)^(β/T)")
	pdTolerance := fs.Float64("pd-tolerance", 0, "a-bobax: interleave until the mean 95% PD band half-width is at most this (objective units), then EI only")
	pdParams := fs.String("pd-params", "", "BOBAX strategies: comma-separated parameters whose PDPs should be accurate (default all)")
	tau := fs.Float64("tau", 1, "LCB exploration weight τ in m − τ·s")
	noise := fs.Float64("noise", 0, "standard deviation of Gaussian noise added to every evaluation")
	surrogate := fs.String("surrogate", "gp", "surrogate model: gp or forest")
	acqOpt := fs.String("acq-optimizer", "random", "acquisition optimizer: random (best of --candidates plus local refinement) or focus (mlrMBO focus search)")
	candidates := fs.Int("candidates", 1500, "random candidates per proposal")
	out := fs.String("out", "", "trials CSV to write (one column per parameter, then value, acquisition)")
	asJSON := fs.Bool("json", false, `print {"best": {"params": {...}, "value": v}, "trials": N} to stdout`)
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	switch {
	case *function == "":
		return usagef("--function is required (one of %s)", strings.Join(bench.Names(), ", "))
	case *budget < 1:
		return usagef("--budget must be at least 1 (got %d)", *budget)
	case !(*tau > 0) || math.IsInf(*tau, 0):
		return usagef("--tau must be positive and finite (got %v)", *tau)
	case *noise < 0 || math.IsNaN(*noise) || math.IsInf(*noise, 0):
		return usagef("--noise must be finite and ≥ 0 (got %v)", *noise)
	case *candidates < 1:
		return usagef("--candidates must be at least 1 (got %d)", *candidates)
	}
	switch *strategy {
	case "ei", "lcb", "pi", "pvar", "random", "bax", "bobax", "bobax-prob", "eibax", "bo-rs":
	case "a-bobax":
		if !(*pdTolerance > 0) || math.IsInf(*pdTolerance, 0) {
			return usagef("--strategy a-bobax needs --pd-tolerance W > 0 (the target mean PD band half-width, in objective units)")
		}
	default:
		return usagef("--strategy %q: want ei, lcb, pi, pvar, random, bax, bobax, bobax-prob, eibax, bo-rs or a-bobax", *strategy)
	}
	if *k < 1 {
		return usagef("--k must be at least 1 (got %d)", *k)
	}
	if !(*pi >= 0 && *pi <= 1) {
		return usagef("--pi must be in [0, 1] (got %v)", *pi)
	}
	var bobaxParams []string
	if *pdParams != "" {
		for _, name := range strings.Split(*pdParams, ",") {
			bobaxParams = append(bobaxParams, strings.TrimSpace(name))
		}
	}
	f, err := bench.Lookup(*function, *dims)
	if err != nil {
		return usageError{err}
	}
	s, err := f.Space()
	if err != nil {
		return err
	}

	// The CSV is streamed into a temporary file next to --out and renamed
	// over it only when the run has finished: a killed or failed run never
	// leaves a truncated file that looks complete.
	var res *bench.RunResult
	optimize := func(w io.Writer) error {
		var csvOut *trials.Writer
		if w != nil {
			var err error
			if csvOut, err = trials.NewWriter(w, s); err != nil {
				return err
			}
		}
		bar := newProgress(env, fmt.Sprintf("%s %s", *strategy, f.Name))
		done := 0
		var err error
		res, err = bench.Run(ctx, bench.RunOptions{
			Function: *function,
			Dim:      *dims,
			Budget:   *budget,
			Seed:     *seed,
			Strategy: *strategy,
			Tau:      *tau,
			Noise:    *noise,
			Config: &opt.Config{Surrogate: *surrogate, AcqOptimizer: *acqOpt, Candidates: *candidates,
				BOBAX: opt.BOBAXConfig{Params: bobaxParams, K: *k, Pi: *pi, Beta: *beta, Tolerance: *pdTolerance}},
			OnTrial: func(t opt.Trial) error {
				if csvOut != nil {
					if err := csvOut.Write(trials.Record{Params: t.Params, Value: t.Value, Acquisition: t.Acquisition}); err != nil {
						return err
					}
				}
				done++
				bar.set(done, *budget)
				return nil
			},
		})
		bar.finish()
		return err
	}
	if *out != "" {
		err = writeFile(*out, optimize)
	} else {
		err = optimize(nil)
	}
	if err != nil {
		return err
	}
	return reportOptimize(env.stdout, res, *asJSON)
}

func reportOptimize(w io.Writer, res *bench.RunResult, asJSON bool) error {
	s, err := res.Function.Space()
	if err != nil {
		return err
	}
	params := s.ToMap(res.Best.Params)
	// Random fallbacks stand in for model-based proposals that could not be
	// made (a duplicate with nothing else left, a failed step): say how many.
	fallbacks := 0
	for _, t := range res.History {
		if t.Acquisition == opt.AcqRandomFallback {
			fallbacks++
		}
	}
	if asJSON {
		type best struct {
			Params map[string]any `json:"params"`
			Value  float64        `json:"value"`
		}
		type bandLog struct {
			SwitchedAt int              `json:"switched_at"` // evaluations at the switch, −1: never
			Log        []acq.BandRecord `json:"log"`
		}
		out := struct {
			Best      best     `json:"best"`
			Trials    int      `json:"trials"`
			Fallbacks int      `json:"random_fallbacks"`
			ABOBAX    *bandLog `json:"a_bobax,omitempty"`
		}{Best: best{params, res.Best.Value}, Trials: len(res.History), Fallbacks: fallbacks}
		if res.BandLog != nil {
			out.ABOBAX = &bandLog{SwitchedAt: res.SwitchedAt, Log: res.BandLog}
		}
		return json.NewEncoder(w).Encode(out)
	}
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%v", n, params[n])
	}
	_, err = fmt.Fprintf(w, "best value %.6g at %s after %d trials (trial %d, chosen by %s); simple regret %.3g (optimum %.6g); %d random fallback(s)\n",
		res.Best.Value, strings.Join(parts, " "), len(res.History), res.Best.Number, res.Best.Acquisition, res.Regret, res.Function.Optimum, fallbacks)
	return err
}
