package importer

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"xbo/history"
)

// sortedBudgets lists the budgets in increasing order.
func sortedBudgets(budgets map[float64]int) []float64 { return slices.Sorted(maps.Keys(budgets)) }

// groupBudgets makes one trial of each configuration's runs at several
// budgets (per instance and seed), as Hyperband or BOHB ran them: the run
// at its highest budget gives the trial's state and value (and its user
// attribute "budget"), its successful runs with a finite cost are its
// intermediate values, and a configuration whose highest run succeeded
// below the study's highest budget was stopped early, so it is pruned. The
// step of a budget is the budget when every budget is a whole number, else
// its rank (0 for the lowest). It counts the failed trials by status into
// failures. With each trial it returns the index of the run that gives it
// its value.
func groupBudgets(b *builder, runs []smacRun, trialsOf []rawTrial, statuses []string, budgets map[float64]int, failures map[string]int) ([]rawTrial, []int) {
	list := sortedBudgets(budgets)
	top := list[len(list)-1]
	whole := true
	for _, bud := range list {
		whole = whole && bud >= 0 && bud <= 1<<53 && bud == math.Trunc(bud)
	}
	step := func(bud float64) int64 {
		if whole {
			return int64(bud)
		}
		k, _ := slices.BinarySearch(list, bud)
		return int64(k)
	}
	how := "the budget"
	if !whole {
		how = "the budget's rank, 0 for the lowest, because the budgets are not whole numbers"
	}
	b.warnf("the runs use %d budgets %v; each configuration (per instance and seed) is one trial: its run at its highest budget gives its value, its runs at lower budgets are its intermediate values (step = %s), and one stopped below the highest budget %v is imported as pruned (--all-budgets imports every run as a trial of its own)",
		len(list), list, how, top)
	if len(b.objectives) > 1 {
		b.warnf("the runs at lower budgets give no intermediate values: an intermediate value is one number, and the run has %d objectives", len(b.objectives))
	}
	type group struct {
		trial   int // index of the run at the highest budget so far
		runs    []int
		highest float64
	}
	var order []string
	groups := map[string]*group{}
	for i, r := range runs {
		key := fmt.Sprintf("%s\x00%v\x00%v", r.configID, r.instance, r.seed)
		g, ok := groups[key]
		if !ok {
			g = &group{trial: i, highest: r.budget}
			groups[key] = g
			order = append(order, key)
		}
		g.runs = append(g.runs, i)
		if r.budget >= g.highest {
			g.trial, g.highest = i, r.budget
		}
	}
	out := make([]rawTrial, 0, len(order))
	reps := make([]int, 0, len(order))
	for n, key := range order {
		g := groups[key]
		reps = append(reps, g.trial)
		rt := trialsOf[g.trial]
		rt.number = n
		rt.attrs = map[string]any{"budget": g.highest}
		for _, i := range g.runs {
			if len(b.objectives) > 1 {
				break // no curve of several objectives (see smacObjectives)
			}
			if v := trialsOf[i].value; trialsOf[i].state == history.Complete && !math.IsNaN(v) && !math.IsInf(v, 0) {
				rt.intermediate = withStep(rt.intermediate, step(runs[i].budget), v)
			}
		}
		switch {
		case rt.state == history.Failed:
			failures[statuses[g.trial]]++
		case rt.state == history.Complete && g.highest < top:
			rt.state = history.Pruned
		}
		out = append(out, rt)
	}
	return out, reps
}
