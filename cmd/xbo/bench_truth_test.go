package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xbo/bench"
)

// The catalogue benchmarks refuse a held-out problem under --suite tune, an
// unknown suite, and flags of the other suite, before any work; their help
// cites no issue numbers.
func TestBenchTruthFlags(t *testing.T) {
	for _, args := range [][]string{
		{"calibration", "--problems", "michalewicz-3"},
		{"importance", "--suite", "tune", "--problems", "bumps-10"},
		{"calibration", "--suite", "bogus"},
		{"calibration", "--suite", "legacy", "--points", "x.jsonl"},
		{"importance", "--suite", "legacy", "--cache", "dir"},
		{"calibration", "--functions", "branin"},
		{"importance", "--bo-seeds", "2"},
		{"calibration", "--sizes", "ten"},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench"}, args...)...)
		if code != 2 || stderr == "" {
			t.Errorf("%s: exit %d stderr %q", strings.Join(args, " "), code, stderr)
		}
		if args[1] == "--problems" && !strings.Contains(stderr, "held-out") {
			t.Errorf("%s: %q does not say the problem is held out", strings.Join(args, " "), stderr)
		}
	}
	_, out, _ := runCLI(t, "bench", "help")
	for _, line := range strings.Split(out, "\n") {
		if (strings.Contains(line, "calibration") || strings.Contains(line, "importance")) && strings.Contains(line, "issue") {
			t.Errorf("help cites an issue: %q", line)
		}
	}
}

// A tiny run of each catalogue benchmark through the CLI writes JSON and
// the raw points file.
func TestBenchTruthTiny(t *testing.T) {
	dir := t.TempDir()
	points := filepath.Join(dir, "points.jsonl")
	code, stdout, stderr := runCLI(t, "bench", "calibration", "--problems", "hartmann3-inert", "--data", "uniform", "--sizes", "3",
		"--seeds", "1", "--samples", "100", "--truth-samples", "200", "--workers", "1", "--cache", filepath.Join(dir, "cache"),
		"--points", points, "--json")
	if code != 0 {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	var cal bench.TruthCalibrationResult
	if err := json.Unmarshal([]byte(stdout), &cal); err != nil {
		t.Fatal(err)
	}
	if len(cal.Cells) != 1 || cal.Cells[0].Trials != 15 || cal.Cells[0].Points != 100 || cal.Suite != "tune" {
		t.Fatalf("result %s", stdout)
	}
	b, err := os.ReadFile(points)
	if err != nil || strings.Count(string(b), "\n") != 100 || !strings.Contains(string(b), `"sampling_bias"`) {
		t.Fatalf("points file: %v, %d lines", err, strings.Count(string(b), "\n"))
	}
	if _, err := os.Stat(filepath.Join(dir, "cache", "hartmann3-inert.uniform.1.json")); err != nil {
		t.Errorf("cache: %v", err)
	}
	code, stdout, stderr = runCLI(t, "bench", "importance", "--problems", "hartmann3-inert", "--data", "uniform", "--sizes", "4",
		"--large", "0", "--seeds", "1", "--methods", "forest-fanova", "--workers", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	var imp bench.TruthImportanceResult
	if err := json.Unmarshal([]byte(stdout), &imp); err != nil {
		t.Fatal(err)
	}
	if len(imp.Rows) != 1 || imp.Rows[0].N != 20 || imp.Rows[0].MainIntervals != 5 || imp.Rows[0].MaxTotalError != nil {
		t.Fatalf("result %s", stdout)
	}
}
