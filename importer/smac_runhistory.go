package importer

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"xbo/history"
	"xbo/space"
)

// smacStatus maps a run status to a state and a name for messages.
func smacStatus(v any, v1 bool) (history.State, string, error) {
	name := ""
	switch x := v.(type) {
	case map[string]any:
		s, _ := x["__enum__"].(string)
		name = strings.TrimPrefix(s, "StatusType.")
	case string:
		name = strings.TrimPrefix(x, "StatusType.")
	default:
		code, ok := intOf(v)
		if !ok {
			return "", "", fmt.Errorf("status %v is neither a code nor a name", v)
		}
		if v1 {
			// SMAC 1 StatusType values.
			names := map[int]string{1: "SUCCESS", 2: "TIMEOUT", 3: "CRASHED", 4: "ABORT", 5: "MEMOUT", 6: "CAPPED", 7: "STOP", 8: "DONOTADVANCE", 9: "RUNNING"}
			name = names[code]
		} else {
			names := map[int]string{0: "RUNNING", 1: "SUCCESS", 2: "CRASHED", 3: "TIMEOUT", 4: "MEMORYOUT"}
			name = names[code]
		}
		if name == "" {
			return "", "", fmt.Errorf("unknown status code %d", code)
		}
	}
	switch name {
	case "SUCCESS":
		return history.Complete, name, nil
	case "RUNNING":
		return history.Running, name, nil
	case "":
		return "", "", fmt.Errorf("status %v has no name", v)
	}
	return history.Failed, name, nil
}

type smacRun struct {
	configID string
	instance any
	seed     any
	budget   float64 // 0 when none
	cost     any
	status   any
	v1       bool
}

func parseRunEntry(e any) (smacRun, error) {
	var r smacRun
	switch x := e.(type) {
	case map[string]any:
		r.configID = idString(x["config_id"])
		r.instance, r.seed = x["instance"], x["seed"]
		r.budget, _ = numberOf(x["budget"])
		r.cost, r.status = x["cost"], x["status"]
		if _, ok := x["status"]; !ok {
			return r, errors.New("no status")
		}
	case []any:
		if len(x) == 2 {
			key, ok1 := x[0].([]any)
			val, ok2 := x[1].([]any)
			if !ok1 || !ok2 || len(key) < 3 || len(val) < 3 {
				return r, errors.New("a v1 entry is [[config_id, instance, seed, budget], [cost, time, status, ...]]")
			}
			r.v1 = true
			r.configID = idString(key[0])
			r.instance, r.seed = key[1], key[2]
			if len(key) > 3 {
				r.budget, _ = numberOf(key[3])
			}
			r.cost, r.status = val[0], val[2]
			break
		}
		switch len(x) {
		case 10, 11:
			r.configID = idString(x[0])
			r.instance, r.seed = x[1], x[2]
			r.budget, _ = numberOf(x[3])
			r.cost = x[4]
			r.status = x[6]
			if len(x) == 11 { // with cpu_time after time
				r.status = x[7]
			}
		default:
			return r, fmt.Errorf("a list entry with %d fields matches no known runhistory shape", len(x))
		}
	default:
		return r, errors.New("not a list or object")
	}
	if r.configID == "" {
		return r, errors.New("no config_id")
	}
	if math.IsNaN(r.budget) || math.IsInf(r.budget, 0) {
		r.budget = 0
	}
	return r, nil
}

func idString(v any) string {
	if k, ok := intOf(v); ok {
		return strconv.Itoa(k)
	}
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// smacRunTrial turns one run into a trial numbered i, and names its status.
func smacRunTrial(i int, r smacRun, configs, origins map[string]any, cs *configSpace) (rawTrial, string, error) {
	state, statusName, err := smacStatus(r.status, r.v1)
	if err != nil {
		return rawTrial{}, "", fmt.Errorf("data entry %d: %w", i+1, err)
	}
	value := math.NaN()
	var costs []float64 // every objective's cost of a multi-objective run
	switch c := r.cost.(type) {
	case []any:
		if len(c) > space.MaxObjectives {
			return rawTrial{}, "", fmt.Errorf("data entry %d: cost has %d objectives; xbo takes at most %d", i+1, len(c), space.MaxObjectives)
		}
		if len(c) > 1 {
			costs = make([]float64, len(c))
			for k, x := range c {
				f, ok := numberOf(x)
				if !ok {
					return rawTrial{}, "", fmt.Errorf("data entry %d: cost %v is not a number", i+1, x)
				}
				costs[k] = f
			}
			value = costs[0]
		}
		if len(c) == 1 {
			value, _ = numberOf(c[0])
		}
	case nil:
	default:
		f, ok := numberOf(c)
		if !ok {
			return rawTrial{}, "", fmt.Errorf("data entry %d: cost %v is not a number", i+1, c)
		}
		value = f
	}
	cfg, ok := configs[r.configID].(map[string]any)
	if !ok {
		return rawTrial{}, "", fmt.Errorf("data entry %d: config_id %s is not in \"configs\"", i+1, r.configID)
	}
	rt := rawTrial{number: i, values: map[string]rawValue{}, value: value, state: state}
	if state == history.Complete {
		rt.objValues = costs // a failed run's cost is SMAC's crash cost, not a result
	}
	if o, ok := origins[r.configID].(string); ok {
		rt.origin = o
	}
	for name, v := range cfg {
		p, ok := cs.params[name]
		if !ok {
			return rawTrial{}, "", fmt.Errorf("config %s: %q is not a hyperparameter of configspace.json", r.configID, name)
		}
		if p.raw.typ == space.Categorical {
			c, err := p.raw.nameOf(v)
			if err != nil {
				return rawTrial{}, "", fmt.Errorf("config %s: %q: %w", r.configID, name, err)
			}
			rt.values[name] = catValue(c)
			continue
		}
		f, ok := numberOf(v)
		if !ok {
			return rawTrial{}, "", fmt.Errorf("config %s: %q: %v is not a number", r.configID, name, v)
		}
		rt.values[name] = numValue(f)
	}
	return rt, statusName, nil
}

func parseRunHistory(data []byte, runDir string, cs *configSpace, b *builder, opts SMACOptions) error {
	doc, err := decodeJSON(data)
	if err != nil {
		return err
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return errors.New("not a JSON object")
	}
	entries, ok := top["data"].([]any)
	if !ok {
		return errors.New(`no "data" list (is this a SMAC3 runhistory.json?)`)
	}
	configs, ok := top["configs"].(map[string]any)
	if !ok {
		return errors.New(`no "configs" object`)
	}
	origins, _ := top["config_origins"].(map[string]any)
	runs := make([]smacRun, len(entries))
	budgets := map[float64]int{}
	instances := map[string]bool{}
	v1 := false
	for i, e := range entries {
		r, err := parseRunEntry(e)
		if err != nil {
			return fmt.Errorf("data entry %d: %w", i+1, err)
		}
		runs[i] = r
		budgets[r.budget]++
		instances[fmt.Sprint(r.instance)] = true
		v1 = v1 || r.v1
	}
	if v1 {
		b.format = "smac3-v1"
	} else {
		b.format = "smac3-v2"
	}
	if len(instances) > 1 {
		b.warnf("the runs use %d instances; each run is imported as one trial, so a configuration appears once per instance", len(instances))
	}
	if len(budgets) > 1 && opts.AllBudgets {
		b.warnf("the runs use %d budgets %v; all are imported as trials of their own (--all-budgets), so values at different fidelities are mixed", len(budgets), sortedBudgets(budgets))
	}
	trialsOf := make([]rawTrial, len(runs))
	statuses := make([]string, len(runs))
	for i, r := range runs {
		var err error
		if trialsOf[i], statuses[i], err = smacRunTrial(i, r, configs, origins, cs); err != nil {
			return err
		}
	}
	if err := smacObjectives(b, runDir, trialsOf); err != nil {
		return err
	}
	failures := map[string]int{}
	trials, reps := trialsOf, make([]int, len(trialsOf))
	if len(budgets) <= 1 || opts.AllBudgets {
		for i, rt := range trialsOf {
			reps[i] = i
			if rt.state == history.Failed {
				failures[statuses[i]]++
			}
		}
	} else {
		trials, reps = groupBudgets(b, runs, trialsOf, statuses, budgets, failures)
	}
	if !opts.SeedsApart {
		trials = groupSeeds(b, runs, reps, trials, opts.AllBudgets || len(budgets) <= 1)
	}
	b.trials = append(b.trials, trials...)
	if len(failures) > 0 {
		var parts []string
		for name, n := range failures {
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
		sort.Strings(parts)
		b.warnf("runs that did not succeed are imported as failed trials without a value: %s", strings.Join(parts, ", "))
	}
	return nil
}
