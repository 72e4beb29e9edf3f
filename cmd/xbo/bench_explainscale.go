package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"xbo/bench"
)

func init() {
	registerBenchmark(benchmark{
		name:    "explain-scale",
		summary: "time of the first and of every further explanation, and peak memory, at T = 200, 1,500 and 10,000 trials (d = 10)",
		run:     runBenchExplainScale,
	})
}

func runBenchExplainScale(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("bench explain-scale", flag.ContinueOnError)
	sizes := fs.String("trials", "200,1500,10000", "comma-separated study sizes T")
	seed := fs.Uint64("seed", 1, "seed of the synthetic studies")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	child := fs.Bool("child", false, "internal: measure one size in this process and print its row as JSON")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	ts, err := parseInts(*sizes)
	if err != nil {
		return usagef("--trials: %v", err)
	}
	for _, t := range ts {
		if t < 3 || t > 100_000 {
			return usagef("--trials: %d must lie in 3..100000", t)
		}
	}
	if *child {
		if len(ts) != 1 {
			return usagef("--child measures one size")
		}
		row, err := bench.ExplainScale(ctx, ts[0], *seed, nil)
		if err != nil {
			return err
		}
		row.PeakRSS = peakRSS()
		return json.NewEncoder(env.stdout).Encode(row)
	}
	// Each size in its own process, so its peak memory is its own.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var rows []*bench.ScaleRow
	for _, t := range ts {
		fmt.Fprintf(env.stderr, "xbo bench explain-scale: T = %d…\n", t)
		cmd := exec.CommandContext(ctx, self, "bench", "explain-scale", "--child", "--trials", strconv.Itoa(t), "--seed", strconv.FormatUint(*seed, 10))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("T = %d: %v: %s", t, err, strings.TrimSpace(errOut.String()))
		}
		var row bench.ScaleRow
		if err := json.Unmarshal(out.Bytes(), &row); err != nil {
			return fmt.Errorf("T = %d: %w", t, err)
		}
		rows = append(rows, &row)
	}
	if *asJSON {
		return printJSON(env.stdout, rows)
	}
	fmt.Fprintln(env.stdout, "Explanation engine at scale (synthetic BO-like study, d = 10 mixed; seconds; each size in a fresh process):")
	return bench.WriteScaleTable(env.stdout, rows)
}

// peakRSS is the process's peak resident set (VmHWM), 0 when unknown.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) >= 1 {
				kb, err := strconv.ParseInt(fields[0], 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}
