package server

import (
	"testing"

	"xbo/opt"
	"xbo/space"
	"xbo/store"
)

// The optimizer is given a pruned trial as pruned, with its curve: its
// value (the last intermediate one) is not at the full budget, so it must
// not be fitted as a complete observation.
func TestOptHistoryPruned(t *testing.T) {
	v, pv := 0.5, 0.1
	all := []store.Trial{
		{Number: 0, State: store.Complete, Value: &v, Version: 1},
		{Number: 1, State: store.Pruned, Value: &pv, Intermediate: []store.Intermediate{{Step: 3, Value: pv}}, Version: 2},
		{Number: 2, State: store.Failed, Version: 3},
		{Number: 3, State: store.Running, Version: 4},
	}
	vals := map[int64][]float64{0: {0.1}, 1: {0.2}, 2: {0.3}, 3: {0.4}}
	hist, _, state, err := optHistory(all, vals)
	if err != nil {
		t.Fatal(err)
	}
	want := []opt.State{opt.Complete, opt.Pruned, opt.Failed, opt.Pending}
	for i, h := range hist {
		if h.State != want[i] {
			t.Errorf("trial %d: optimizer state %s, want %s", i, h.State, want[i])
		}
	}
	if hist[1].Value == pv || state[1] != store.Pruned || len(hist[1].Curve) != 1 || hist[1].Curve[0].Step != 3 {
		t.Errorf("pruned trial: value %v given to the optimizer, curve %v, mirrored state %s", hist[1].Value, hist[1].Curve, state[1])
	}
	sp, err := space.New(space.Minimize, []space.Param{{Name: "x", Type: space.Float, Low: 0, High: 1}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := (opt.Settings{Strategy: "random"}).New(sp, hist, 1)
	if err != nil {
		t.Fatal(err)
	}
	// One observation: the pruned trial's 0.1 would otherwise be the best.
	if best, ok := o.Best(); o.Completed() != 1 || !ok || best.Value != 0.5 {
		t.Errorf("optimizer: %d completed, best %v", o.Completed(), best.Value)
	}
}
