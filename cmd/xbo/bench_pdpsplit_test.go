package main

import (
	"encoding/json"
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
