package bench

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"xbo/pareto"
	"xbo/space"
)

// The problems with several objectives, with their true Pareto fronts:
//
//   - ZDT1, ZDT2, ZDT3 (Zitzler, Deb and Thiele 2000, "Comparison of
//     multiobjective evolutionary algorithms: empirical results", Evol.
//     Comput. 8(2)): x ∈ [0,1]^d, f1 = x1, g = 1 + 9/(d−1)·Σ_{i≥2} x_i,
//     f2 = g·h with h = 1 − √(f1/g) (ZDT1), 1 − (f1/g)² (ZDT2) and
//     1 − √(f1/g) − (f1/g)·sin(10π f1) (ZDT3, a front in five pieces); the
//     front is g = 1 (x_i = 0 for i ≥ 2);
//   - DTLZ2 with three objectives (Deb, Thiele, Laumanns and Zitzler 2002,
//     "Scalable multi-objective optimization test problems"): g = Σ_{i≥3}
//     (x_i − ½)², f = (1+g)·(cos θ1 cos θ2, cos θ1 sin θ2, sin θ1) with
//     θ_k = x_k·π/2; the front is the unit sphere's positive octant;
//   - BNH, the constrained problem of Binh and Korn 1997 ("MOBES: a
//     multiobjective evolution strategy for constrained optimization
//     problems"): f1 = 4x1² + 4x2², f2 = (x1−5)² + (x2−5)² on [0,5]×[0,3],
//     subject to (x1−5)² + x2² ≤ 25 and (x1−8)² + (x2+3)² ≥ 7.7; the front is
//     x1 = x2 ∈ [0,3] followed by x2 = 3, x1 ∈ [3,5] (both constraints hold
//     there).
//
//   - boosting-size, a real trade-off: scikit-learn's histogram gradient
//     boosting on the breast-cancer data, over the full grid of
//     bench/testdata/sklearn_boosting_grid.csv (960 configurations of five
//     hyperparameters, searched as level indices): the 5-fold validation
//     error against log2(max_iter · max_leaf_nodes), the ensemble's leaf
//     budget (an upper bound on its size, computed from the configuration,
//     not measured). Its front is the table's own, exact.
//
// Reference points for the hypervolume are stated per problem: (11, 11) for
// ZDT, where a random configuration's f2 is about 5 (so that a run of a
// hundred evaluations that has not yet reached the front's neighbourhood
// still scores; BoTorch's test problems use the same point), 1.1 in every
// objective for DTLZ2 (just beyond the front's worst values), (140, 50) for
// BNH, (0.5, 13) for boosting-size (an error no classifier of this data
// exceeds; a leaf budget beyond the grid's largest, 2^12.2).

// MOProblem is a benchmark problem with several objectives, all minimized.
type MOProblem struct {
	Name  string
	Space *space.Space
	// Directions has one entry per objective.
	Directions []space.Direction
	// Reference is the hypervolume's reference point.
	Reference []float64
	// Constraints is how many constraint values Eval returns.
	Constraints int
	// Eval returns the objective values at x (natural units) and the
	// Constraints constraint values (feasible when every one is ≤ 0; nil
	// when the problem has none).
	Eval func(x []float64) (values, constraints []float64)
	// Front returns n points spread along the true Pareto front.
	Front func(n int) [][]float64
	// closedHV is the true hypervolume in closed form, or 0 when it is
	// computed from a dense sample of the front.
	closedHV float64

	once sync.Once
	hv   float64
	err  error
}

// frontSamples is the size of the dense front a hypervolume without a
// closed form is computed from; the tests bound the error that leaves.
const frontSamples = 20000

// TrueHypervolume is the hypervolume of the true front with respect to
// Reference: in closed form where one exists, otherwise that of frontSamples
// points along the front (a lower bound within 1e-4 relative, checked in
// the tests against finer samples).
func (p *MOProblem) TrueHypervolume() (float64, error) {
	p.once.Do(func() {
		if p.closedHV > 0 {
			p.hv = p.closedHV
			return
		}
		p.hv, p.err = pareto.Hypervolume(p.Front(frontSamples), p.Reference, p.Directions)
	})
	return p.hv, p.err
}

// MOProblems returns the problems with several objectives, d = 6 for ZDT
// and DTLZ2.
func MOProblems() []*MOProblem {
	return []*MOProblem{zdt(1), zdt(2), zdt(3), dtlz2(), bnh(), boostingSize()}
}

// MOHeldOut returns the held-out problems: never run while xbo's
// optimizer for several objectives was developed, and reported apart.
// ZDT6 (d = 6: a front whose density is biased along f1), DTLZ4 (DTLZ2's
// sphere with the position variables raised to the 100th power, which
// crowds random samples at the front's edges) and SRN (Srinivas and Deb
// 1994: two constraints, part of the front on a constraint's boundary).
func MOHeldOut() []*MOProblem {
	return []*MOProblem{zdt6(), dtlz4(), srn()}
}

// MOProblemByName returns one of MOProblems or MOHeldOut.
func MOProblemByName(name string) (*MOProblem, error) {
	var names []string
	for _, p := range slices.Concat(MOProblems(), MOHeldOut()) {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("bench: no problem %q with several objectives (have %v)", name, names)
}

func unitSpace(d int) *space.Space {
	ps := make([]space.Param, d)
	for j := range ps {
		ps[j] = space.Param{Name: fmt.Sprintf("x%d", j+1), Type: space.Float, Low: 0, High: 1}
	}
	sp, err := space.New(space.Minimize, ps)
	if err != nil {
		panic(err) // static definition
	}
	return sp
}

func minimizeAll(m int) []space.Direction {
	return slices.Repeat([]space.Direction{space.Minimize}, m)
}

const (
	zdtDim = 6
	zdtRef = 11.0
)

func zdtShape(variant int, r, f1 float64) float64 {
	switch variant {
	case 1:
		return 1 - math.Sqrt(r)
	case 2:
		return 1 - r*r
	default:
		return 1 - math.Sqrt(r) - r*math.Sin(10*math.Pi*f1)
	}
}

func zdt(variant int) *MOProblem {
	p := &MOProblem{
		Name:       fmt.Sprintf("zdt%d", variant),
		Space:      unitSpace(zdtDim),
		Directions: minimizeAll(2),
		Reference:  []float64{zdtRef, zdtRef},
		Eval: func(x []float64) ([]float64, []float64) {
			g := 0.0
			for _, v := range x[1:] {
				g += v
			}
			g = 1 + 9*g/float64(len(x)-1)
			f1 := x[0]
			return []float64{f1, g * zdtShape(variant, f1/g, f1)}, nil
		},
	}
	// With r the reference value: beyond f1 = 1 the front's best f2 stays
	// at its value there, 0, so the strip f1 ∈ [1, r] adds (r − 1)·r; below,
	// the area is ∫₀¹ (r − h) = r − ∫₀¹ h, with ∫₀¹ h = 1/3 for ZDT1 and 2/3
	// for ZDT2.
	switch variant {
	case 1:
		p.closedHV = zdtRef - 1.0/3 + (zdtRef-1)*zdtRef
	case 2:
		p.closedHV = zdtRef - 2.0/3 + (zdtRef-1)*zdtRef
	}
	p.Front = func(n int) [][]float64 {
		// g = 1 along f1 ∈ [0,1]; ZDT3's curve is dominated in places, so
		// a dense curve is sampled and filtered to its non-dominated part.
		m := n
		if variant == 3 {
			m = 20 * n
		}
		curve := make([][]float64, m)
		for i := range curve {
			f1 := float64(i) / float64(max(m-1, 1))
			curve[i] = []float64{f1, zdtShape(variant, f1, f1)}
		}
		if variant != 3 {
			return curve
		}
		idx, err := pareto.Front(curve, p.Directions)
		if err != nil {
			panic(err) // finite by construction
		}
		step := max(1, len(idx)/n)
		var out [][]float64
		for k := 0; k < len(idx); k += step {
			out = append(out, curve[idx[k]])
		}
		return out
	}
	return p
}

func dtlz2() *MOProblem {
	return &MOProblem{
		Name:       "dtlz2",
		Space:      unitSpace(6),
		Directions: minimizeAll(3),
		Reference:  []float64{1.1, 1.1, 1.1},
		Eval: func(x []float64) ([]float64, []float64) {
			g := 0.0
			for _, v := range x[2:] {
				g += (v - 0.5) * (v - 0.5)
			}
			t1, t2 := x[0]*math.Pi/2, x[1]*math.Pi/2
			return []float64{(1 + g) * math.Cos(t1) * math.Cos(t2), (1 + g) * math.Cos(t1) * math.Sin(t2), (1 + g) * math.Sin(t1)}, nil
		},
		Front: func(n int) [][]float64 {
			k := max(2, int(math.Ceil(math.Sqrt(float64(n)))))
			var out [][]float64
			for i := range k {
				for j := range k {
					t1, t2 := math.Pi/2*float64(i)/float64(k-1), math.Pi/2*float64(j)/float64(k-1)
					out = append(out, []float64{math.Cos(t1) * math.Cos(t2), math.Cos(t1) * math.Sin(t2), math.Sin(t1)})
				}
			}
			return out
		},
		// The cube up to 1.1 minus the unit ball's octant.
		closedHV: 1.1*1.1*1.1 - math.Pi/6,
	}
}

func zdt6() *MOProblem {
	f1Of := func(x1 float64) float64 { return 1 - math.Exp(-4*x1)*math.Pow(math.Sin(6*math.Pi*x1), 6) }
	// The smallest f1 on the Pareto set (x1 ∈ [0, 1]), found on a fine grid.
	f1Min := 1.0
	for i := 0; i <= 200000; i++ {
		f1Min = math.Min(f1Min, f1Of(float64(i)/200000))
	}
	p := &MOProblem{
		Name:       "zdt6",
		Space:      unitSpace(zdtDim),
		Directions: minimizeAll(2),
		Reference:  []float64{zdtRef, zdtRef},
		Eval: func(x []float64) ([]float64, []float64) {
			g := 0.0
			for _, v := range x[1:] {
				g += v
			}
			g = 1 + 9*math.Pow(g/float64(len(x)-1), 0.25)
			f1 := f1Of(x[0])
			return []float64{f1, g * (1 - (f1/g)*(f1/g))}, nil
		},
	}
	p.Front = func(n int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			f1 := f1Min + (1-f1Min)*float64(i)/float64(max(n-1, 1))
			out[i] = []float64{f1, 1 - f1*f1}
		}
		return out
	}
	// Left of f1Min nothing is attainable; from f1Min to 1 the area above
	// 1 − f1² up to the reference, beyond 1 the strip up to the reference.
	p.closedHV = (1-f1Min)*zdtRef - ((1 - f1Min) - (1-f1Min*f1Min*f1Min)/3) + (zdtRef-1)*zdtRef
	return p
}

func dtlz4() *MOProblem {
	p := dtlz2()
	p.Name = "dtlz4"
	eval := p.Eval
	p.Eval = func(x []float64) ([]float64, []float64) {
		y := slices.Clone(x)
		y[0], y[1] = math.Pow(x[0], 100), math.Pow(x[1], 100)
		return eval(y)
	}
	return p
}

func srnObjectives(x1, x2 float64) []float64 {
	return []float64{2 + (x1-2)*(x1-2) + (x2-1)*(x2-1), 9*x1 - (x2-1)*(x2-1)}
}

// srnTop is the largest x2 on SRN's Pareto set, where x1 = −2.5 meets the
// circle x1² + x2² = 225.
var srnTop = math.Sqrt(225 - 6.25)

// srnParetoSet is a point of SRN's Pareto set, t ∈ [0, 1]. Inside the
// feasible region a point is optimal only where no move of x1 and of
// s = (x2 − 1)² improves both objectives: f1 = 2 + (x1 − 2)² + s and f2 =
// 9x1 − s change by (2(x1 − 2)dx + ds, 9dx − ds), so x1 = −2.5 (the
// segment up to the circle). Along the boundary x2 = (x1 + 10)/3 of the
// second constraint, f1 falls and f2 rises with x1 up to x1 = 1.1, where
// df1/dx1 = 2(x1 − 2) + 2(x1 + 7)/9 = 0: that piece is optimal too. The
// circle beyond x2 = srnTop lies past the reference point's f1 = 200.
func srnParetoSet(t float64) (x1, x2 float64) {
	const split = 0.3 // the boundary piece, then the x1 = −2.5 segment
	if t < split {
		x1 = 1.1 - 3.6*t/split
		return x1, (x1 + 10) / 3
	}
	return -2.5, 2.5 + (srnTop-2.5)*(t-split)/(1-split)
}

// planeSpace is the box [lo1, hi1] × [lo2, hi2] of x1 and x2.
func planeSpace(lo1, hi1, lo2, hi2 float64) *space.Space {
	sp, err := space.New(space.Minimize, []space.Param{
		{Name: "x1", Type: space.Float, Low: lo1, High: hi1},
		{Name: "x2", Type: space.Float, Low: lo2, High: hi2},
	})
	if err != nil {
		panic(err) // static definition
	}
	return sp
}

func srn() *MOProblem {
	return &MOProblem{
		Name:        "srn",
		Space:       planeSpace(-20, 20, -20, 20),
		Directions:  minimizeAll(2),
		Reference:   []float64{200, 0},
		Constraints: 2,
		Eval: func(x []float64) ([]float64, []float64) {
			x1, x2 := x[0], x[1]
			return srnObjectives(x1, x2), []float64{x1*x1 + x2*x2 - 225, x1 - 3*x2 + 10}
		},
		Front: func(n int) [][]float64 {
			out := make([][]float64, n)
			for i := range out {
				out[i] = srnObjectives(srnParetoSet(float64(i) / float64(max(n-1, 1))))
			}
			return out
		},
	}
}

func bnhObjectives(x1, x2 float64) []float64 {
	return []float64{4*x1*x1 + 4*x2*x2, (x1-5)*(x1-5) + (x2-5)*(x2-5)}
}

func bnh() *MOProblem {
	return &MOProblem{
		Name:        "bnh",
		Space:       planeSpace(0, 5, 0, 3),
		Directions:  minimizeAll(2),
		Reference:   []float64{140, 50},
		Constraints: 2,
		Eval: func(x []float64) ([]float64, []float64) {
			x1, x2 := x[0], x[1]
			return bnhObjectives(x1, x2), []float64{
				(x1-5)*(x1-5) + x2*x2 - 25,
				7.7 - (x1-8)*(x1-8) - (x2+3)*(x2+3),
			}
		},
		Front: func(n int) [][]float64 {
			// Split in proportion to the two pieces' lengths in x.
			first := max(2, n*3/5)
			out := make([][]float64, 0, n)
			for i := range first {
				t := 3 * float64(i) / float64(first-1)
				out = append(out, bnhObjectives(t, t))
			}
			for i := 1; i < n-first+1; i++ {
				s := 3 + 2*float64(i)/float64(n-first)
				out = append(out, bnhObjectives(s, 3))
			}
			return out
		},
	}
}

// boostingSize is the validation error of the boosting grid against the
// log2 of its leaf budget.
func boostingSize() *MOProblem {
	params := []string{"learning_rate", "max_leaf_nodes", "min_samples_leaf", "l2_regularization", "max_iter"}
	fh, err := repoTables.Open("testdata/sklearn_boosting_grid.csv")
	if err != nil {
		panic(err) // built into the binary
	}
	t, err := readGridTable(fh, "sklearn_boosting_grid.csv", params, "val_error")
	fh.Close()
	if err != nil {
		panic(err) // checked by the tests
	}
	leaves, iters := slices.Index(params, "max_leaf_nodes"), slices.Index(params, "max_iter")
	objectives := func(c int) []float64 {
		budget := t.levels[leaves][t.level(c, leaves)] * t.levels[iters][t.level(c, iters)]
		return []float64{t.values[c], math.Log2(budget)}
	}
	sp, err := space.New(space.Minimize, t.spaceParams(nil))
	if err != nil {
		panic(err)
	}
	p := &MOProblem{
		Name:       "boosting-size",
		Space:      sp,
		Directions: minimizeAll(2),
		Reference:  []float64{0.5, 13},
		Eval: func(x []float64) ([]float64, []float64) {
			c, ok := t.cell(x)
			if !ok {
				return []float64{math.NaN(), math.NaN()}, nil
			}
			return objectives(c), nil
		},
	}
	all := make([][]float64, len(t.values))
	for c := range all {
		all[c] = objectives(c)
	}
	front, err := pareto.Front(all, p.Directions)
	if err != nil {
		panic(err)
	}
	p.Front = func(int) [][]float64 {
		// The table's front, whatever n: it is exact.
		out := make([][]float64, len(front))
		for k, c := range front {
			out[k] = all[c]
		}
		return out
	}
	return p
}
