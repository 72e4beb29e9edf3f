package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"xbo/bench"
)

// --preset moosbauer2021 runs the authors' settings, --reps and the list
// flags given override it, and a per-dimension budget flag conflicts with
// it; its earlier name (bench's presetAliases) is still accepted. The alias
// is not run through the whole benchmark a second time: bench's
// TestPDPSplitPresetMoosbauer2021 checks that it gives the same options,
// and here the preset's own dimension check shows the CLI resolved it.
func TestBenchPDPSplitPreset(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "pdp-split", "--preset", "moosbauer2021", "--dims", "3", "--taus", "5", "--reps", "1", "--mc", "50", "--json")
	if code != 0 {
		t.Fatalf("--preset moosbauer2021: exit %d stderr %q", code, stderr)
	}
	checkPDPSplitPresetResult(t, stdout)
	code, _, stderr = runCLI(t, "bench", "pdp-split", "--preset", "paper000", "--dims", "4")
	if code != 2 || !strings.Contains(stderr, "has budgets for d = 3, 5, 8 only") {
		t.Errorf("--preset paper000 --dims 4: exit %d stderr %q, want the preset's dimension check", code, stderr)
	}
	for _, args := range [][]string{
		{"--preset", "moosbauer2021", "--budget-per-dim", "20"},
		{"--preset", "paper001"},
		{"--preset", "moosbauer2021", "--dims", "4"},
		{"--preset", "moosbauer2021", "--reps", "0"},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench", "pdp-split"}, args...)...)
		if code != 2 || stderr == "" {
			t.Errorf("%s: exit %d stderr %q", strings.Join(args, " "), code, stderr)
		}
	}
}

// checkPDPSplitPresetResult checks the JSON of a one-cell run of the
// moosbauer2021 preset.
func checkPDPSplitPresetResult(t *testing.T, stdout string) {
	t.Helper()
	var res bench.PDPSplitResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Preset != "moosbauer2021" || res.Budgets[3] != 80 || len(res.Budgets) != 1 || res.Design != "lhs" || res.AcqOptimizer != "focus" ||
		res.MinNoise != 1e-8 || res.Samples != 50 || res.GridSize != 20 || len(res.Rows) != 1 || res.Rows[0].Seeds != 1 ||
		res.Rows[0].Tau != 5 || len(res.Depths) != 2 || res.Rows[0].Paper == nil || res.MinNodeSize != 2 {
		t.Fatalf("result %s", stdout)
	}
}

// --criterion and --mmd reach the options, with or without a preset, and
// unknown values are usage errors; pdp-split-lcbench's --preset gives the
// authors' code settings, its flags given override them.
func TestBenchPDPSplitCriterionMMDAndLCBenchPreset(t *testing.T) {
	for _, args := range [][]string{
		{"pdp-split", "--criterion", "l3"},
		{"pdp-split", "--preset", "moosbauer2021-code", "--mmd", "mean"},
		{"pdp-split-lcbench", "--preset", "paper001"},
		{"pdp-split-lcbench", "--criterion", "sd"},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench"}, args...)...)
		if code != 2 || stderr == "" {
			t.Errorf("%s: exit %d stderr %q", strings.Join(args, " "), code, stderr)
		}
	}
	code, stdout, stderr := runCLI(t, "bench", "pdp-split", "--dims", "3", "--taus", "5", "--reps", "1", "--budget-per-dim", "7",
		"--mc", "50", "--criterion", "area", "--mmd", "median", "--json")
	if code != 0 {
		t.Fatalf("pdp-split --criterion area --mmd median: exit %d stderr %q", code, stderr)
	}
	var res bench.PDPSplitResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Criterion != "area" || res.MMD != "median" || res.Design != "maximin" {
		t.Errorf("result %s", stdout)
	}
	const data = "../../../shared/data/lcbench2000_phoneme.csv"
	if _, err := os.Stat(data); err != nil {
		t.Skip("no LCBench data:", err)
	}
	code, stdout, stderr = runCLI(t, "bench", "pdp-split-lcbench", "--data", data, "--preset", "moosbauer2021-code",
		"--budget", "30", "--mc", "50", "--grid", "5", "--depth", "2", "--criterion", "point", "--json")
	if code != 0 {
		t.Fatalf("pdp-split-lcbench --preset moosbauer2021-code: exit %d stderr %q", code, stderr)
	}
	var lc bench.LCBenchResult
	if err := json.Unmarshal([]byte(stdout), &lc); err != nil {
		t.Fatal(err)
	}
	if lc.Preset != "moosbauer2021-code" || lc.Tau != 0.5 || lc.Seeds != 1 || lc.Budget != 30 || lc.Depth != 2 || lc.InitialSize != 14 ||
		lc.Design != "lhs" || lc.MinNodeSize != 2 || !lc.SplitOnSD || lc.Criterion != "point" || lc.MMDEstimator != "median" || len(lc.Rows) != 7 {
		t.Errorf("result %s", stdout)
	}
}
