package importer

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"xbo/space"
)

// SMAC3 writes, per run, runhistory.json and configspace.json into one
// directory (smac3-output/run_<seed>/ for SMAC 1, <output>/<name>/<seed>/ for
// SMAC 2). runhistory.json holds
//
//	"configs":        {"<id>": {name: value, ...}}   (only active parameters)
//	"config_origins": {"<id>": "Sobol" | "Local Search" | ...}   (optional)
//	"data": one entry per run, in one of three shapes:
//	   v1 (SMAC 1.x):  [[config_id, instance, seed, budget], [cost, time, {"__enum__": "StatusType.SUCCESS"}, start, end, info]]
//	   v2 (SMAC 2.0):  [config_id, instance, seed, budget, cost, time, status, start, end, info]
//	   v2 (SMAC 2.1+): {"config_id", "instance", "seed", "budget", "cost", "time", "cpu_time", "status", ...}
//	   with v2 status codes 0 running, 1 success, 2 crashed, 3 timeout, 4 memory out.
//
// Costs of crashed runs are usually Infinity, which Python's json writes as a
// bare literal (handled by decodeJSON). configspace.json is ConfigSpace's JSON
// format (json_format_version 0.4 or ConfigSpace 1.x): hyperparameters
// uniform_float/int, normal_float/int, beta_float/int, categorical, ordinal,
// constant; conditions EQ, NEQ, LT, GT, IN, AND, OR; forbidden clauses.

// SMACOptions tunes the SMAC3 import.
type SMACOptions struct {
	// AllBudgets imports every run of a multi-fidelity run as a trial of
	// its own, mixing values at different budgets. By default a
	// configuration's runs make one trial: its value from its highest
	// budget, its lower budgets as intermediate values, and pruned when it
	// stopped below the run's highest budget (see groupBudgets).
	AllBudgets bool
	// SeedsApart imports each seed's run of a configuration as a trial of
	// its own. By default the runs of one configuration (per instance and
	// budget) over several seeds are one trial: the mean of their values
	// (see groupSeeds).
	SeedsApart bool
}

// FindSMACRun locates the directory holding runhistory.json under dir (dir
// itself, or the only run directory below it).
func FindSMACRun(dir string) (string, error) {
	if st, err := os.Stat(dir); err != nil {
		return "", err
	} else if !st.IsDir() {
		if filepath.Base(dir) == "runhistory.json" {
			return filepath.Dir(dir), nil
		}
		return "", fmt.Errorf("%s is neither a SMAC3 run directory nor a runhistory.json", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "runhistory.json")); err == nil {
		return dir, nil
	}
	var found []string
	root := filepath.Clean(dir)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.Count(strings.TrimPrefix(path, root), string(filepath.Separator)) > 4 {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "runhistory.json" {
			found = append(found, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: no runhistory.json in it or below it", dir)
	case 1:
		return found[0], nil
	}
	sort.Strings(found)
	return "", fmt.Errorf("%s holds %d SMAC3 runs; name one of: %s", dir, len(found), strings.Join(found, ", "))
}

// ImportSMAC reads a SMAC3 run directory (see FindSMACRun).
func ImportSMAC(dir string, opts SMACOptions) (*Run, error) {
	runDir, err := FindSMACRun(dir)
	if err != nil {
		return nil, err
	}
	csPath := filepath.Join(runDir, "configspace.json")
	rhPath := filepath.Join(runDir, "runhistory.json")
	b := newBuilder("smac3", runDir)
	b.objective = space.Minimize // SMAC minimizes cost
	csData, err := os.ReadFile(csPath)
	if err != nil {
		return nil, fmt.Errorf("SMAC3 run %s: %w (xbo needs the configuration space SMAC wrote beside the run history)", runDir, err)
	}
	cs, err := parseConfigSpace(csData, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", csPath, err)
	}
	rhData, err := os.ReadFile(rhPath)
	if err != nil {
		return nil, err
	}
	if err := parseRunHistory(rhData, runDir, cs, b, opts); err != nil {
		return nil, fmt.Errorf("%s: %w", rhPath, err)
	}
	run, err := b.build()
	if err != nil {
		return nil, fmt.Errorf("SMAC3 run %s: %w", runDir, err)
	}
	return run, nil
}
