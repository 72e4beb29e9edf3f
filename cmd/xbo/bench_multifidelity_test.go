package main

import (
	"encoding/json"
	"strings"
	"testing"

	"xbo/bench"
)

// --pruner replaces the settings of the xbo methods of its type: a median
// pruner that waits for 100 complete trials prunes nothing in a run of 8
// full trials; bad pruner flags are usage errors. --perfect shows every
// curve's final value at every step.
func TestBenchMultiFidelityPrunerFlag(t *testing.T) {
	args := []string{"bench", "multifidelity", "--problems", "branin-curves", "--methods", "xbo+median", "--seeds", "1", "--steps", "9", "--full-trials", "8", "--extend", "1", "--json"}
	code, stdout, stderr := runCLI(t, append(args, "--pruner", `{"type":"median","n_startup_trials":100}`)...)
	if code != 0 {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	var res bench.MFResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Pruned != 0 || res.Runs[0].Trials != 8 {
		t.Fatalf("runs %+v, want one run of 8 trials, none pruned", res.Runs)
	}
	// --perfect reaches the benchmark: every step ranks as the final one.
	code, stdout, stderr = runCLI(t, append(args, "--perfect")...)
	if err := json.Unmarshal([]byte(stdout), &res); code != 0 || err != nil {
		t.Fatalf("--perfect: exit %d, %v, stderr %q", code, err, stderr)
	}
	if !res.Perfect || res.Rows[0].Correlation[0] < 0.999 {
		t.Errorf("--perfect: perfect %v, rank correlation at step 1 %v", res.Perfect, res.Rows[0].Correlation[0])
	}
	for _, bad := range [][]string{
		{"--pruner", `{"type":"none"}`},
		{"--pruner", `{"type":"median","percentile":20}`},
		{"--pruner", `{"type":"median"}`, "--pruner", `{"type":"median","n_warmup_steps":2}`},
		{"--pruner", `{"type":"hyperband","max_resource":27}`},
	} {
		code, _, stderr := runCLI(t, append(args, bad...)...)
		if code == 0 || stderr == "" {
			t.Errorf("%s: exit %d stderr %q", strings.Join(bad, " "), code, stderr)
		}
	}
}
