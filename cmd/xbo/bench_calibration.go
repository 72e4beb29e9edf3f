package main

import (
	"context"
	"encoding/json"
	"flag"
	"strings"

	"xbo/bench"
)

func init() {
	registerBenchmark(benchmark{
		name:    "calibration",
		summary: "issue 17: how often the PDP bands cover the true partial dependence (6 functions, uniform / BO-EI / LCB data at two sizes, GP and forest)",
		run:     runBenchCalibration,
	})
}

func runBenchCalibration(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench calibration", flag.ContinueOnError)
	funcs := fs.String("functions", "", "comma-separated name[:dim] (default: "+strings.Join(bench.CalibrationFunctions, ",")+")")
	sizes := fs.String("sizes", "10,25", "evaluations per dimension, comma-separated")
	data := fs.String("data", "uniform,ei,lcb", "data kinds: uniform, ei, lcb (τ = 0.1)")
	surrogates := fs.String("surrogates", "gp,forest", "surrogates")
	bands := fs.String("bands", "calibrated,approx,exact", "band estimators")
	seeds := fs.Int("seeds", 3, "seeds per cell")
	samples := fs.Int("samples", 1000, "Monte Carlo points of each PDP")
	workers := fs.Int("workers", 0, "cells computed in parallel (default: all processors)")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	sz, err := parseInts(*sizes)
	if err != nil {
		return usagef("--sizes: %v", err)
	}
	opts := bench.CalibrationOptions{Functions: splitList(*funcs), Sizes: sz, Data: splitList(*data),
		Surrogates: splitList(*surrogates), Bands: splitList(*bands), Seeds: *seeds, Samples: *samples, Workers: *workers}
	bar := newProgress(env, "bench calibration")
	opts.Progress = bar.set
	cells, err := bench.Calibration(ctx, opts)
	bar.finish()
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(env.stdout).Encode(cells)
	}
	return bench.WriteCalibrationTable(env.stdout, cells)
}
