package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"xbo/pareto"
)

// paretoInputs are configurations on each problem's Pareto set, in natural
// units, by the problem's definition (not by its Front function).
func paretoInputs(name string, t float64) []float64 {
	switch name {
	case "dtlz2":
		return []float64{t, 1 - t, 0.5, 0.5, 0.5, 0.5}
	case "dtlz4":
		return []float64{math.Pow(t, 0.01), math.Pow(1-t, 0.01), 0.5, 0.5, 0.5, 0.5}
	case "srn":
		// By the optimality conditions, not by Front's parametrization:
		// the first constraint's boundary from x1 = 1.1 down to −2.5, then
		// x1 = −2.5 up to the circle.
		if t < 0.5 {
			x1 := 1.1 - 3.6*t/0.5
			return []float64{x1, (x1 + 10) / 3}
		}
		return []float64{-2.5, 2.5 + (t-0.5)/0.5*(math.Sqrt(225-6.25)-2.5)}
	case "bnh":
		if t <= 0.6 {
			return []float64{5 * t, 5 * t}
		}
		return []float64{3 + 2*(t-0.6)/0.4, 3}
	}
	x := make([]float64, zdtDim)
	x[0] = t
	return x
}

// Each problem's front is what its definition says: configurations of the
// Pareto set evaluate onto it (feasible; for the table, every configuration
// gives exactly the front's hypervolume), its samples are mutually
// non-dominated, no uniformly random feasible configuration adds
// hypervolume beyond it (2,000 of them), and its hypervolume matches the
// closed form (ZDT1, ZDT2, DTLZ2) or a finer sample of the front (ZDT3,
// BNH) within the stated accuracy.
func TestMOProblemFronts(t *testing.T) {
	for _, p := range slices.Concat(MOProblems(), MOHeldOut()) {
		t.Run(p.Name, func(t *testing.T) {
			hv, err := p.TrueHypervolume()
			if err != nil {
				t.Fatal(err)
			}
			front := p.Front(2000)
			idx, err := pareto.Front(front, p.Directions)
			if err != nil {
				t.Fatal(err)
			}
			if len(idx) != len(front) {
				t.Errorf("%d of %d front samples are non-dominated", len(idx), len(front))
			}
			// On the Pareto set: on the front, up to the front's sampling.
			dense20k := p.Front(20000)
			scale := make([]float64, len(p.Directions))
			for k := range scale {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, f := range dense20k {
					lo, hi = math.Min(lo, f[k]), math.Max(hi, f[k])
				}
				scale[k] = hi - lo
			}
			// near is the distance to the front, relative to its extent.
			near := func(v []float64) float64 {
				best := math.Inf(1)
				for _, f := range dense20k {
					d := 0.0
					for k := range v {
						d = math.Max(d, math.Abs(v[k]-f[k])/scale[k])
					}
					best = math.Min(best, d)
				}
				return best
			}
			ts := []float64{0, 0.13, 0.5, 0.77, 1}
			if p.Name == "zdt3" {
				// Inside the five pieces of ZDT3's front (f1 in [0, 0.083],
				// [0.182, 0.258], [0.409, 0.454], [0.618, 0.653],
				// [0.823, 0.852]; Zitzler et al. 2000).
				ts = []float64{0.05, 0.2, 0.43, 0.63, 0.84}
			}
			if p.Name == "boosting-size" {
				// A table's front is its own: every configuration evaluated
				// gives exactly the true hypervolume.
				ts = nil
				var all [][]float64
				var walk func(x []float64, j int)
				walk = func(x []float64, j int) {
					if j == len(x) {
						v, _ := p.Eval(x)
						all = append(all, v)
						return
					}
					for k := p.Space.Params[j].Low; k <= p.Space.Params[j].High; k++ {
						x[j] = k
						walk(x, j+1)
					}
				}
				walk(make([]float64, p.Space.Dim()), 0)
				if len(all) != 960 {
					t.Fatalf("%d configurations in the grid", len(all))
				}
				got, err := pareto.Hypervolume(all, p.Reference, p.Directions)
				if err != nil || got != hv {
					t.Errorf("every configuration: hypervolume %v (%v), the front's %v", got, err, hv)
				}
			}
			for _, tt := range ts {
				x := paretoInputs(p.Name, tt)
				v, c := p.Eval(x)
				if len(c) != p.Constraints || len(v) != len(p.Directions) {
					t.Fatalf("Eval gives %d values and %d constraints, the problem states %d and %d", len(v), len(c), len(p.Directions), p.Constraints)
				}
				if pareto.Violation(c) > 0 {
					t.Errorf("Pareto-set point %v infeasible: %v", x, c)
				}
				if p.Name == "dtlz2" || p.Name == "dtlz4" {
					// The front is the unit sphere: exact, not sampled.
					if r := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2]); math.Abs(r-1) > 1e-12 {
						t.Errorf("Pareto-set point %v evaluates to %v, norm %v", x, v, r)
					}
				} else if d := near(v); d > 2e-3 {
					t.Errorf("Pareto-set point %v evaluates to %v, %.4f from the front", x, v, d)
				}
			}
			// Random feasible configurations add nothing beyond the front.
			rng := rand.New(rand.NewPCG(7, 8))
			var random [][]float64
			for range 2000 {
				x := p.Space.Decode(p.Space.Sample(rng, 1)[0])
				v, c := p.Eval(x)
				if pareto.Violation(c) == 0 {
					random = append(random, v)
				}
			}
			if len(random) < 300 { // SRN keeps about 17% feasible
				t.Fatalf("only %d of 2,000 random configurations feasible (want 300)", len(random))
			}
			dense := p.Front(frontSamples)
			withRandom, err := pareto.Hypervolume(slices.Concat(dense, random), p.Reference, p.Directions)
			if err != nil {
				t.Fatal(err)
			}
			if withRandom > hv*(1+1e-4) {
				t.Errorf("random configurations raise the hypervolume from %.6f to %.6f: the front is not optimal", hv, withRandom)
			}
			// Accuracy of the true hypervolume.
			finer, err := pareto.Hypervolume(p.Front(4*frontSamples), p.Reference, p.Directions)
			if err != nil {
				t.Fatal(err)
			}
			if p.closedHV > 0 {
				// A sampled front's hypervolume is a lower bound that
				// approaches the closed form.
				if finer > hv || finer < hv*(1-0.01) {
					t.Errorf("closed-form hypervolume %.6f, a sampled front gives %.6f", hv, finer)
				}
			} else if math.Abs(finer-hv) > 1e-4*hv {
				t.Errorf("true hypervolume %.6f, a finer front gives %.6f", hv, finer)
			}
			t.Logf("true hypervolume %.6f (finer sample %.6f); %d random feasible", hv, finer, len(random))
		})
	}
	if _, err := MOProblemByName("zdt4"); err == nil {
		t.Error("an unknown problem found")
	}
}
