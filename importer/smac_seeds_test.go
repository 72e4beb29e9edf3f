package importer

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"xbo/history"
)

// A configuration evaluated on several seeds is one trial whose value is
// the mean over its seeds, with every seed and its value in user
// attributes; a configuration with a crashed seed is failed; with
// SeedsApart every run is a trial.
func TestImportSMACGroupsSeeds(t *testing.T) {
	dir := t.TempDir()
	cs, err := os.ReadFile("testdata/smac_v2/configspace.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "configspace.json"), cs, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := `{"alpha": 0.1, "batch_size": 8, "activation": "relu", "depth": 1}`
	history_ := `{"data": [
		{"config_id": 1, "instance": null, "seed": 0, "budget": 0, "cost": 0.5, "status": 1},
		{"config_id": 1, "instance": null, "seed": 1, "budget": 0, "cost": 0.7, "status": 1},
		{"config_id": 2, "instance": null, "seed": 0, "budget": 0, "cost": 0.2, "status": 1},
		{"config_id": 1, "instance": null, "seed": 2, "budget": 0, "cost": 0.9, "status": 1},
		{"config_id": 3, "instance": null, "seed": 0, "budget": 0, "cost": 0.4, "status": 1},
		{"config_id": 3, "instance": null, "seed": 1, "budget": 0, "cost": 2147483647.0, "status": 2}],
		"configs": {"1": ` + cfg + `, "2": ` + cfg + `, "3": ` + cfg + `}}`
	if err := os.WriteFile(filepath.Join(dir, "runhistory.json"), []byte(history_), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := ImportSMAC(dir, SMACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Trials) != 3 {
		t.Fatalf("%d trials, want 3 (one per configuration)", len(run.Trials))
	}
	one, two, three := run.Trials[0], run.Trials[1], run.Trials[2]
	if one.State != history.Complete || math.Abs(one.Value-0.7) > 1e-12 {
		t.Errorf("config 1: %s %v, want complete with the mean 0.7", one.State, one.Value)
	}
	if fmt.Sprint(one.UserAttrs["seeds"]) != "[0 1 2]" || !reflect.DeepEqual(one.UserAttrs["seed_values"], []any{0.5, 0.7, 0.9}) {
		t.Errorf("config 1: attributes %v", one.UserAttrs)
	}
	if two.State != history.Complete || two.Value != 0.2 || two.UserAttrs["seeds"] != nil {
		t.Errorf("config 2 (one seed): %s %v %v", two.State, two.Value, two.UserAttrs)
	}
	if three.State != history.Failed || !reflect.DeepEqual(three.UserAttrs["seed_values"], []any{0.4, nil}) {
		t.Errorf("config 3 (a crashed seed): %s %v", three.State, three.UserAttrs)
	}
	if all := strings.Join(run.Warnings, "\n"); !strings.Contains(all, "the runs use 3 seeds") || !strings.Contains(all, "--seeds-apart") {
		t.Errorf("warnings %q", run.Warnings)
	}
	apart, err := ImportSMAC(dir, SMACOptions{SeedsApart: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(apart.Trials) != 6 {
		t.Errorf("seeds apart: %d trials, want 6", len(apart.Trials))
	}
}
