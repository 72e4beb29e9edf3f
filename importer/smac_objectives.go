package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"xbo/history"
	"xbo/space"
)

// smacObjectives declares the objectives of a multi-objective run (one
// whose successful runs' costs are lists): as many as the costs have,
// every one minimized (SMAC minimizes costs), named after the scenario's
// objectives (scenario.json beside the run history, SMAC 2) when it lists
// that many, else objective_0, objective_1, ...
func smacObjectives(b *builder, runDir string, trialsOf []rawTrial) error {
	m, first := 1, -1
	for i, rt := range trialsOf {
		if rt.state != history.Complete {
			continue
		}
		k := max(1, len(rt.objValues))
		if first >= 0 && k != m {
			return fmt.Errorf("data entry %d has %d costs but data entry %d has %d; a run's costs have one value per objective", i+1, k, first+1, m)
		}
		m, first = k, i
	}
	if m == 1 {
		return nil
	}
	names := smacScenarioObjectives(filepath.Join(runDir, "scenario.json"))
	if names != nil && len(names) != m {
		b.warnf("scenario.json names %d objectives (%s) for costs of %d values; the objectives are named objective_0, objective_1, ...", len(names), strings.Join(names, ", "), m)
		names = nil
	}
	for k := range m {
		o := space.Objective{Direction: space.Minimize}
		if names != nil {
			o.Name = names[k]
		}
		b.objectives = append(b.objectives, o)
	}
	b.warnf("the run has %d objectives, all minimized (SMAC minimizes costs)", m)
	return nil
}

// smacScenarioObjectives reads the objectives' names from SMAC 2's
// scenario.json ("objectives": a name or a list of names); nil when the
// file or the list is not there.
func smacScenarioObjectives(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	doc, err := decodeJSON(data)
	if err != nil {
		return nil
	}
	top, _ := doc.(map[string]any)
	list, ok := top["objectives"].([]any)
	if !ok {
		return nil
	}
	names := make([]string, len(list))
	for k, v := range list {
		if names[k], ok = v.(string); !ok {
			return nil
		}
	}
	return names
}
