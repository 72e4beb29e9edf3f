package main

import (
	"encoding/json"
	"strings"
	"testing"

	"xbo/bench"
)

// --pruner replaces the settings of the xbo methods of its type: a median
// pruner that waits for 100 complete trials prunes nothing in a run of 8
// full trials; bad pruner flags are usage errors.
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
