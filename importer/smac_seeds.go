package importer

import (
	"fmt"
	"math"

	"xbo/history"
)

// groupSeeds makes one trial of a configuration's runs over several seeds
// (per instance, and per budget when byBudget), as SMAC3's intensifier
// evaluates a configuration on several seeds and compares their average
// cost: the trial's value is the mean of the seeds' values (per objective),
// its intermediate values the mean at each step, and its user attributes
// "seeds" and "seed_values" keep every seed and its value. A group with a
// run that did not succeed takes that run's state (failed before pruned
// before running) and no value, since a mean over some seeds is not the
// configuration's value. trials[k] comes from runs[reps[k]]. With one seed
// per configuration the trials are returned as they are.
func groupSeeds(b *builder, runs []smacRun, reps []int, trials []rawTrial, byBudget bool) []rawTrial {
	seeds := map[string]bool{}
	for _, i := range reps {
		seeds[fmt.Sprint(runs[i].seed)] = true
	}
	if len(seeds) <= 1 {
		return trials
	}
	key := func(r smacRun) string {
		k := fmt.Sprintf("%s\x00%v", r.configID, r.instance)
		if byBudget {
			k += fmt.Sprintf("\x00%v", r.budget)
		}
		return k
	}
	var order []string
	groups := map[string][]int{}
	for k, i := range reps {
		g := key(runs[i])
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], k)
	}
	if len(order) == len(trials) {
		return trials // every configuration ran on one seed only
	}
	b.warnf("the runs use %d seeds; a configuration's runs over its seeds are one trial whose value is their mean (user attributes seeds and seed_values hold each seed and its value; a configuration with a run that did not succeed is imported with that run's state and no value); --seeds-apart imports each seed's run as a trial of its own", len(seeds))
	out := make([]rawTrial, 0, len(order))
	for n, g := range order {
		members := groups[g]
		rt := trials[members[0]]
		rt.number = n
		if len(members) > 1 {
			rt = mergeSeeds(rt, runs, reps, trials, members)
		}
		out = append(out, rt)
	}
	return out
}

// stateRank orders the states a group of seeds' runs can take: the
// group's state is the highest among its runs.
var stateRank = map[history.State]int{history.Complete: 0, history.Running: 1, history.Pruned: 2, history.Failed: 3}

// mergeSeeds is the trial of a group of seeds' runs (see groupSeeds).
func mergeSeeds(rt rawTrial, runs []smacRun, reps []int, trials []rawTrial, members []int) rawTrial {
	seedList := make([]any, len(members))
	values := make([]any, len(members))
	sum, objSums := 0.0, make([]float64, len(rt.objValues))
	state := history.Complete
	steps := map[int64][]float64{}
	for j, k := range members {
		t := &trials[k]
		seedList[j] = runs[reps[k]].seed
		values[j] = nil // a failed run's cost is SMAC's crash cost, not a value
		if (t.state == history.Complete || t.state == history.Pruned) && !math.IsNaN(t.value) && !math.IsInf(t.value, 0) {
			values[j] = t.value
		}
		if stateRank[t.state] > stateRank[state] {
			state = t.state
		}
		sum += t.value
		for o := range objSums {
			if o < len(t.objValues) {
				objSums[o] += t.objValues[o]
			}
		}
		for _, iv := range t.intermediate {
			steps[iv.Step] = append(steps[iv.Step], iv.Value)
		}
	}
	n := float64(len(members))
	rt.state = state
	rt.value = math.NaN()
	rt.objValues = nil
	if state == history.Complete {
		rt.value = sum / n
		if len(objSums) > 0 {
			rt.objValues = make([]float64, len(objSums))
			for o, s := range objSums {
				rt.objValues[o] = s / n
			}
		}
	}
	rt.intermediate = nil
	for step, vs := range steps {
		m := 0.0
		for _, v := range vs {
			m += v
		}
		rt.intermediate = withStep(rt.intermediate, step, m/float64(len(vs)))
	}
	attrs := make(map[string]any, len(rt.attrs)+2)
	for k, v := range rt.attrs {
		attrs[k] = v
	}
	attrs["seeds"], attrs["seed_values"] = seedList, values
	rt.attrs = attrs
	return rt
}
