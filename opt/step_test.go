package opt

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// steppedStudy has a float on a step-0.5 grid and an int on 3, 5, 7, 9.
const steppedStudy = `{"params":[
	{"name":"x","type":"float","low":-10,"high":10,"step":0.5},
	{"name":"k","type":"int","low":3,"high":9,"step":2}]}`

// TestSteppedProposalsLieOnTheGrid: every proposal of a stepped space, from
// the initial design, the model and the trust region alike, is a grid value;
// no configuration is proposed twice while the grid (164 points) has
// unevaluated ones; and the model finds the grid point nearest the optimum.
func TestSteppedProposalsLieOnTheGrid(t *testing.T) {
	s := mustSpace(t, steppedStudy)
	for _, seed := range []uint64{1, 2} {
		o, err := New(Config{Space: s, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		best := math.Inf(1)
		for i := range 40 {
			tr, err := o.Ask()
			if err != nil {
				t.Fatal(err)
			}
			x, k := tr.Params[0], tr.Params[1]
			if x*2 != math.Trunc(x*2) || x < -10 || x > 10 {
				t.Fatalf("seed %d, trial %d (%s): x = %v is off the step-0.5 grid", seed, i, tr.Acquisition, x)
			}
			if !slices.Contains([]float64{3, 5, 7, 9}, k) {
				t.Fatalf("seed %d, trial %d (%s): k = %v is not 3, 5, 7 or 9", seed, i, tr.Acquisition, k)
			}
			key := fmt.Sprint(x, k)
			if j, dup := seen[key]; dup {
				t.Errorf("seed %d: trial %d (%s) repeats trial %d: x = %v, k = %v", seed, i, tr.Acquisition, j, x, k)
			}
			seen[key] = i
			y := (x-1.3)*(x-1.3) + (k-6)*(k-6)
			best = min(best, y)
			if err := o.Tell(tr.ID, y); err != nil {
				t.Fatal(err)
			}
		}
		// The grid's best: x = 1.5, k = 5 or 7, (0.2)² + 1.
		if want := 0.04 + 1; math.Abs(best-want) > 1e-9 {
			t.Errorf("seed %d: best %v after 40 trials, want the grid optimum %v", seed, best, want)
		}
	}
}

// A stepped float takes a grid of values: a space of such parameters is
// finite for EHVI's repeat rule and discrete for the duplicate rule, one
// plain float makes it neither.
func TestSteppedFloatsAreFinite(t *testing.T) {
	stepped := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1,"step":0.25},{"name":"b","type":"int","low":0,"high":3}]}`)
	mixed := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1,"step":0.25},{"name":"c","type":"float","low":0,"high":1}]}`)
	if !finiteSpace(stepped) || finiteSpace(mixed) {
		t.Errorf("finite: stepped %v (want true), with a plain float %v (want false)", finiteSpace(stepped), finiteSpace(mixed))
	}
	for _, c := range []struct {
		s    string
		want bool
	}{{`{"params":[{"name":"a","type":"float","low":0,"high":1,"step":0.25}]}`, true}, {`{"params":[{"name":"c","type":"float","low":0,"high":1}]}`, false}} {
		o, err := New(Config{Space: mustSpace(t, c.s), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if o.discrete() != c.want {
			t.Errorf("%s: discrete %v, want %v", c.s, o.discrete(), c.want)
		}
	}
}
