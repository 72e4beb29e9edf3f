package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"xbo/pareto"
)

// A run's hypervolume after each evaluation never falls (up to rounding), ends at the
// hypervolume of its feasible evaluations computed afresh, and the rows
// count a seed as a win only for a method strictly above every other.
// Random search replays exactly from its seed; xbo's ParEGO runs too, and Optuna's NSGA-II and TPE
// (Debian's python3-optuna) run when it is installed, on the constrained
// problem with 3 workers.
func TestMultiObjectiveRuns(t *testing.T) {
	methods := withOptuna(t, []string{"random", "xbo"}, "nsga2")
	if len(methods) > 1 {
		methods = append(methods, "tpe")
	}
	res, err := MultiObjective(context.Background(), MOOptions{Problems: []string{"bnh", "zdt1"}, Methods: methods, Workers: []int{3}, Seeds: 2, Budget: 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2*len(methods)*2 || len(res.Rows) != 2*len(methods) {
		t.Fatalf("%d runs and %d rows", len(res.Runs), len(res.Rows))
	}
	for _, r := range res.Runs {
		if len(r.HV) != 30 {
			t.Fatalf("%s %s seed %d: %d hypervolumes for a budget of 30", r.Problem, r.Method, r.Seed, len(r.HV))
		}
		for k := 1; k < len(r.HV); k++ {
			// Adding a vector never removes volume; the sums' order may
			// change the last bits.
			if r.HV[k] < r.HV[k-1]*(1-1e-12) {
				t.Errorf("%s %s seed %d: hypervolume falls at evaluation %d", r.Problem, r.Method, r.Seed, k)
			}
		}
		if r.Method != "random" && len(r.AskSeconds) != 30 { // xbo's and Optuna's asks are timed
			t.Errorf("%s %s: %d ask times", r.Problem, r.Method, len(r.AskSeconds))
		}
	}
	// Replay random search on bnh, seed 1, and recompute its hypervolume.
	p, _ := MOProblemByName("bnh")
	rng := rand.New(rand.NewPCG(1, 1^0x5eed))
	var feasible [][]float64
	for range 30 {
		v, c := p.Eval(p.Space.Decode(p.Space.Sample(rng, 1)[0]))
		if pareto.Violation(c) == 0 {
			feasible = append(feasible, v)
		}
	}
	want, err := pareto.Hypervolume(feasible, p.Reference, p.Directions)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if r.Problem == "bnh" && r.Method == "random" && r.Seed == 1 {
			if math.Abs(r.Final()-want) > 1e-9 || r.Feasible != len(feasible) {
				t.Errorf("random bnh seed 1: final %v with %d feasible, replay %v with %d", r.Final(), r.Feasible, want, len(feasible))
			}
		}
	}
	for _, row := range res.Rows {
		wins := 0
		for s := 1; s <= 2; s++ {
			mine, best := math.NaN(), math.Inf(-1)
			for _, r := range res.Runs {
				if r.Problem != row.Problem || r.Seed != s {
					continue
				}
				if r.Method == row.Method {
					mine = r.Final()
				} else {
					best = math.Max(best, r.Final())
				}
			}
			if mine > best {
				wins++
			}
		}
		if wins != row.Wins || row.TrueHV <= 0 || row.Median > row.TrueHV {
			t.Errorf("row %+v: wins %d recounted", row, wins)
		}
	}
	for _, bad := range []MOOptions{{Problems: []string{"zdt9"}}, {Methods: []string{"cmaes"}}, {Workers: []int{0}}, {Budget: -1}} {
		if _, err := MultiObjective(context.Background(), bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}
