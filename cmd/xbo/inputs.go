package main

import (
	"fmt"

	"xbo/space"
	"xbo/trials"
)

// runData is a trials file read against its space, ready for a surrogate.
type runData struct {
	space *space.Space
	table *trials.Table
	x     [][]float64 // unit-cube encodings of table.Rows
}

// loadRun reads the space and the trials of an explain command. Trials
// without a usable value are never dropped silently: their count goes to
// stderr. Fewer than two usable trials cannot be modelled.
func loadRun(env *cliEnv, command, spacePath, dataPath, model string) (*runData, error) {
	sp, err := space.Load(spacePath)
	if err != nil {
		return nil, err
	}
	table, err := trials.ReadFile(dataPath, sp)
	if err != nil {
		return nil, err
	}
	if table.Skipped > 0 {
		fmt.Fprintf(env.stderr, "xbo %s: warning: skipped %d trial(s) without a usable value (failed, pending or empty)\n", command, table.Skipped)
	}
	if table.Len() < 2 {
		return nil, fmt.Errorf("%s: %d usable trial(s); %s needs at least 2", dataPath, table.Len(), model)
	}
	x, err := table.Encoded()
	if err != nil {
		return nil, err
	}
	return &runData{space: sp, table: table, x: x}, nil
}
