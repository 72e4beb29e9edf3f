// Package bench holds the benchmark problems of xbo: synthetic test functions
// with known optima and, in other files, the experiment runners that
// reproduce the papers' tables and the truth catalogue (truth.go): problems
// whose partial dependence and Sobol indices are known, with a held-out
// part, that `xbo bench calibration` and `xbo bench importance` score the
// explanations against; and (moproblems.go) problems with several
// objectives and constraints whose Pareto fronts and hypervolumes are known.
//
// The test functions follow the definitions of the Virtual Library of
// Simulation Experiments by S. Surjanovic and D. Bingham, Simon Fraser
// University (https://www.sfu.ca/~ssurjano/optimization.html): Branin
// (branin.html, standard parameters), six-hump camelback (camel6.html),
// Styblinski–Tang (stybtang.html), Hartmann 3-d and 6-d (hart3.html,
// hart6.html) and the axis-parallel hyper-ellipsoid Σ j·x_j², which the
// library calls the sum squares function (sumsqu.html), on its restricted
// domain [−5.12, 5.12]^d. Styblinski–Tang is ½Σ(x⁴ − 16x² + 5x) on [−5,5]^d as
// in the library and DESIGN.md (Moosbauer et al. 2021, section 6.1, prints
// +16x², which is not the Styblinski–Tang function). The cosine mixture, which
// the library lacks, is the minimization form of problem CM in Ali,
// Khompatraporn and Zabinsky, "A numerical evaluation of several stochastic
// algorithms on selected continuous global optimization test problems", J.
// Global Optim. 31 (2005) 635–672: f(x) = Σ x_i² − 0.1 Σ cos(5π x_i) on
// [−1,1]^d, minimum −0.1·d at 0.
//
// Optima are given to float64 precision, obtained by solving ∇f = 0 from the
// published six-digit minimizers; the tests check them against the
// published values, a local optimizer and random search.
package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"xbo/space"
)

// Function is a test function to minimize over the box [Low, High].
type Function struct {
	Name string
	Dim  int
	// Low and High bound each coordinate, in natural units.
	Low, High []float64
	// Optimum is the global minimum value; Argmin lists every point attaining
	// it (the published ones where there are several).
	Optimum float64
	Argmin  [][]float64
	// Eval returns f(x) for x in natural units. It returns NaN when len(x)
	// differs from Dim; points outside the box are evaluated as they are.
	Eval func(x []float64) float64

	// Params, when set, is the function's own search space (conditional or
	// mixed parameters; Low and High are then unused): Eval takes its
	// natural values, NaN for an inactive parameter.
	Params []space.Param

	// partialDependence is the closed-form partial dependence, for functions
	// that have one (see PartialDependence).
	partialDependence func(j int, xj float64) float64
}

// Function names accepted by Lookup.
const (
	NameBranin         = "branin"
	NameCamelback      = "camelback"
	NameStyblinskiTang = "styblinski-tang"
	NameHartmann3      = "hartmann3"
	NameHartmann6      = "hartmann6"
	NameHyperEllipsoid = "hyper-ellipsoid"
	NameCosineMixture  = "cosine-mixture"
	NameConditional    = "conditional"
)

type functionEntry struct {
	fixedDim int // 0 when the function takes any dimension
	build    func(dim int) *Function
}

var registry = map[string]functionEntry{
	NameBranin:         {2, func(int) *Function { return branin() }},
	NameCamelback:      {2, func(int) *Function { return camelback() }},
	NameStyblinskiTang: {0, styblinskiTang},
	NameHartmann3:      {3, func(int) *Function { return hartmann3() }},
	NameHartmann6:      {6, func(int) *Function { return hartmann6() }},
	NameHyperEllipsoid: {0, hyperEllipsoid},
	NameCosineMixture:  {0, cosineMixture},
	NameConditional:    {4, func(int) *Function { return conditional() }},
	NameCorner:         {3, func(int) *Function { return corner() }},
}

// maxDim bounds the dimension of the any-dimension functions so that a typo
// fails with an error rather than allocating a huge box.
const maxDim = 10000

// Names returns the names Lookup accepts, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the named test function in dim dimensions. Fixed-dimension
// functions (branin, camelback: 2; hartmann3: 3; hartmann6: 6) accept their
// own dimension or 0; the others need 1 ≤ dim ≤ 10000. Each call returns a
// fresh Function that the caller may modify.
func Lookup(name string, dim int) (*Function, error) {
	entry, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("bench: unknown function %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	switch {
	case entry.fixedDim > 0 && dim != 0 && dim != entry.fixedDim:
		return nil, fmt.Errorf("bench: function %q is %d-dimensional, got dim=%d", name, entry.fixedDim, dim)
	case entry.fixedDim == 0 && (dim < 1 || dim > maxDim):
		return nil, fmt.Errorf("bench: function %q needs a dimension in 1..%d, got dim=%d", name, maxDim, dim)
	}
	return entry.build(dim), nil
}

// Space returns a minimization space of float parameters x1..xd with the
// function's bounds, the parameter order matching Eval's argument, or the
// function's own Params.
func (f *Function) Space() (*space.Space, error) {
	if f == nil {
		return nil, errors.New("bench: space of a nil function")
	}
	if f.Params != nil {
		s, err := space.New(space.Minimize, slices.Clone(f.Params))
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", f.Name, err)
		}
		return s, nil
	}
	if len(f.Low) != f.Dim || len(f.High) != f.Dim {
		return nil, fmt.Errorf("bench: %s: bounds of length %d and %d for dimension %d", f.Name, len(f.Low), len(f.High), f.Dim)
	}
	params := make([]space.Param, f.Dim)
	for j := range params {
		params[j] = space.Param{Name: fmt.Sprintf("x%d", j+1), Type: space.Float, Low: f.Low[j], High: f.High[j]}
	}
	s, err := space.New(space.Minimize, params)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", f.Name, err)
	}
	return s, nil
}

// WithNoise returns an objective that adds independent N(0, sd²) noise to
// Eval, drawn from rng. sd = 0 gives Eval itself. The returned function
// shares rng and so is not safe for concurrent use. A negative, NaN or
// infinite sd, or a nil rng with sd > 0, cannot be honoured and yields a
// function that returns NaN for every input, so the mistake shows in the
// results instead of panicking.
func (f *Function) WithNoise(sd float64, rng *rand.Rand) func([]float64) float64 {
	switch {
	case sd == 0:
		return f.Eval
	case !(sd > 0) || math.IsInf(sd, 0) || rng == nil:
		return func([]float64) float64 { return math.NaN() }
	}
	eval := f.Eval
	return func(x []float64) float64 { return eval(x) + sd*rng.NormFloat64() }
}

// PartialDependence returns the partial dependence of f on coordinate j
// (0-based) at x_j = xj: the mean of f over all other coordinates drawn
// uniformly from their ranges (the true partial dependence of Moosbauer et al.
// 2021, eq. 1, under the uniform distribution). It is known in closed form for
// the additive functions (styblinski-tang, hyper-ellipsoid, cosine-mixture); for
// the others, or for j outside 0..Dim−1, ok is false.
func (f *Function) PartialDependence(j int, xj float64) (value float64, ok bool) {
	if f == nil || f.partialDependence == nil || j < 0 || j >= f.Dim {
		return math.NaN(), false
	}
	return f.partialDependence(j, xj), true
}

func box(dim int, low, high float64) ([]float64, []float64) {
	lo, hi := make([]float64, dim), make([]float64, dim)
	for j := range dim {
		lo[j], hi[j] = low, high
	}
	return lo, hi
}

func filled(dim int, v float64) []float64 {
	x := make([]float64, dim)
	for j := range x {
		x[j] = v
	}
	return x
}

// branin: f = a(x2 − b x1² + c x1 − r)² + s(1 − t)cos x1 + s with a = 1,
// b = 5.1/(4π²), c = 5/π, r = 6, s = 10, t = 1/(8π) on [−5,10]×[0,15]. At the
// minimizers the square vanishes and cos x1 = −1, so f* = s·t = 5/(4π).
func branin() *Function {
	const (
		b = 5.1 / (4 * math.Pi * math.Pi)
		c = 5 / math.Pi
		r = 6.0
		s = 10.0
		t = 1 / (8 * math.Pi)
	)
	return &Function{
		Name: NameBranin, Dim: 2,
		Low: []float64{-5, 0}, High: []float64{10, 15},
		Optimum: s * t,
		// x2 = b x1² − c x1 + r at x1 = −π, π, 3π.
		Argmin: [][]float64{{-math.Pi, 12.275}, {math.Pi, 2.275}, {3 * math.Pi, 2.475}},
		Eval: func(x []float64) float64 {
			if len(x) != 2 {
				return math.NaN()
			}
			u := x[1] - b*x[0]*x[0] + c*x[0] - r
			return u*u + s*(1-t)*math.Cos(x[0]) + s
		},
	}
}

// camelback: six-hump camel, f = (4 − 2.1x1² + x1⁴/3)x1² + x1x2 + (−4 + 4x2²)x2²
// on [−3,3]×[−2,2]; two global minima, symmetric through the origin.
func camelback() *Function {
	const x1, x2 = 0.08984201310031807, -0.7126564030207396
	return &Function{
		Name: NameCamelback, Dim: 2,
		Low: []float64{-3, -2}, High: []float64{3, 2},
		Optimum: -1.0316284534898774,
		Argmin:  [][]float64{{x1, x2}, {-x1, -x2}},
		Eval: func(x []float64) float64 {
			if len(x) != 2 {
				return math.NaN()
			}
			a, b := x[0]*x[0], x[1]*x[1]
			return (4-2.1*a+a*a/3)*a + x[0]*x[1] + (-4+4*b)*b
		},
	}
}

// styblinskiTangMin is the minimizer of g(λ) = ½(λ⁴ − 16λ² + 5λ), the
// negative root of g'(λ) = 2λ³ − 16λ + 5/2.
const styblinskiTangMin = -2.9035340277711770

func styblinskiTangTerm(v float64) float64 {
	v2 := v * v
	return 0.5 * (v2*v2 - 16*v2 + 5*v)
}

// styblinskiTang: f = ½ Σ (x_j⁴ − 16x_j² + 5x_j) on [−5,5]^d.
//
// Its partial dependence: for λ ~ U(−5,5), E[λ⁴] = 5⁴/5 = 125,
// E[λ²] = 5²/3 = 25/3 and E[λ] = 0, so each averaged-out coordinate
// contributes ½(125 − 16·25/3) = −25/6 and PD_j(x) = g(x) − (d−1)·25/6.
func styblinskiTang(dim int) *Function {
	lo, hi := box(dim, -5, 5)
	return &Function{
		Name: NameStyblinskiTang, Dim: dim, Low: lo, High: hi,
		Optimum: float64(dim) * styblinskiTangTerm(styblinskiTangMin),
		Argmin:  [][]float64{filled(dim, styblinskiTangMin)},
		Eval: func(x []float64) float64 {
			if len(x) != dim {
				return math.NaN()
			}
			var s float64
			for _, v := range x {
				s += styblinskiTangTerm(v)
			}
			return s
		},
		partialDependence: func(_ int, xj float64) float64 {
			return styblinskiTangTerm(xj) - float64(dim-1)*25.0/6
		},
	}
}

// hartmannAlpha are the weights of the four bumps of both Hartmann functions.
var hartmannAlpha = [4]float64{1.0, 1.2, 3.0, 3.2}

func hartmannEval(a, p [][]float64) func([]float64) float64 {
	dim := len(a[0])
	return func(x []float64) float64 {
		if len(x) != dim {
			return math.NaN()
		}
		var outer float64
		for i, alpha := range hartmannAlpha {
			var inner float64
			for j, v := range x {
				t := v - p[i][j]
				inner += a[i][j] * t * t
			}
			outer += alpha * math.Exp(-inner)
		}
		return -outer
	}
}

func scaled(rows [][]float64, factor float64) [][]float64 {
	out := make([][]float64, len(rows))
	for i, r := range rows {
		out[i] = make([]float64, len(r))
		for j, v := range r {
			out[i][j] = v * factor
		}
	}
	return out
}

// hartmann3A and hartmann3P are the matrices A and P of Hartmann 3-d.
var (
	hartmann3A = [][]float64{{3, 10, 30}, {0.1, 10, 35}, {3, 10, 30}, {0.1, 10, 35}}
	hartmann3P = scaled([][]float64{
		{3689, 1170, 2673}, {4699, 4387, 7470}, {1091, 8732, 5547}, {381, 5743, 8828},
	}, 1e-4)
)

// hartmann3: f = −Σ_i α_i exp(−Σ_j A_ij (x_j − P_ij)²) on [0,1]³.
func hartmann3() *Function {
	lo, hi := box(3, 0, 1)
	return &Function{
		Name: NameHartmann3, Dim: 3, Low: lo, High: hi,
		Optimum: -3.862779787332663,
		Argmin:  [][]float64{{0.11458887665506896, 0.5556488946169301, 0.8525469846866774}},
		Eval:    hartmannEval(hartmann3A, hartmann3P),
	}
}

// hartmann6: the same form with 6-dimensional A and P, on [0,1]⁶.
func hartmann6() *Function {
	a := [][]float64{
		{10, 3, 17, 3.5, 1.7, 8},
		{0.05, 10, 17, 0.1, 8, 14},
		{3, 3.5, 1.7, 10, 17, 8},
		{17, 8, 0.05, 10, 0.1, 14},
	}
	p := scaled([][]float64{
		{1312, 1696, 5569, 124, 8283, 5886},
		{2329, 4135, 8307, 3736, 1004, 9991},
		{2348, 1451, 3522, 2883, 3047, 6650},
		{4047, 8828, 8732, 5743, 1091, 381},
	}, 1e-4)
	lo, hi := box(6, 0, 1)
	return &Function{
		Name: NameHartmann6, Dim: 6, Low: lo, High: hi,
		Optimum: -3.322368011415515,
		Argmin: [][]float64{{0.20168951100670543, 0.15001069182345797, 0.47687397422189703,
			0.2753324304940561, 0.31165161660011326, 0.6573005340656204}},
		Eval: hartmannEval(a, p),
	}
}

// hyperEllipsoid: f = Σ_j j·x_j² (j from 1) on [−5.12,5.12]^d, minimum 0 at 0.
//
// Its partial dependence: E[λ²] = 5.12²/3 for λ ~ U(−5.12,5.12), so
// PD_j(x) = (j+1)·x² + (Σ_{k≠j} (k+1))·5.12²/3 with 0-based j, k.
func hyperEllipsoid(dim int) *Function {
	const half = 5.12
	lo, hi := box(dim, -half, half)
	weightSum := float64(dim*(dim+1)) / 2
	return &Function{
		Name: NameHyperEllipsoid, Dim: dim, Low: lo, High: hi,
		Optimum: 0,
		Argmin:  [][]float64{make([]float64, dim)},
		Eval: func(x []float64) float64 {
			if len(x) != dim {
				return math.NaN()
			}
			var s float64
			for j, v := range x {
				s += float64(j+1) * v * v
			}
			return s
		},
		partialDependence: func(j int, xj float64) float64 {
			w := float64(j + 1)
			return w*xj*xj + (weightSum-w)*half*half/3
		},
	}
}

// cosineMixture: f = Σ x_j² − 0.1 Σ cos(5π x_j) on [−1,1]^d, minimum −0.1·d at
// 0: each term is at least x² − 0.1 > −0.1 away from 0.
//
// Its partial dependence: for λ ~ U(−1,1), E[λ²] = 1/3 and
// E[cos 5πλ] = sin(5π)/(5π) = 0, so PD_j(x) = x² − 0.1 cos(5πx) + (d−1)/3.
func cosineMixture(dim int) *Function {
	lo, hi := box(dim, -1, 1)
	term := func(v float64) float64 { return v*v - 0.1*math.Cos(5*math.Pi*v) }
	return &Function{
		Name: NameCosineMixture, Dim: dim, Low: lo, High: hi,
		Optimum: -0.1 * float64(dim),
		Argmin:  [][]float64{make([]float64, dim)},
		Eval: func(x []float64) float64 {
			if len(x) != dim {
				return math.NaN()
			}
			var s float64
			for _, v := range x {
				s += term(v)
			}
			return s
		},
		partialDependence: func(_ int, xj float64) float64 {
			return term(xj) + float64(dim-1)/3
		},
	}
}

// conditional is a tuning-like function on a conditional mixed space: a
// log-scale learning rate, an optimizer (sgd or adam), a momentum active only
// for sgd, and an integer number of layers,
//
//	f = (log₁₀ lr + 2.5)²/4 + 0.05·(layers − 3)² + (sgd ? 0.6·(momentum − 0.9)² : 0.08),
//
// with its minimum 0 at lr = 10^−2.5, sgd, momentum 0.9, 3 layers (adam's
// best is 0.08). Natural values: the optimizer as its level index.
func conditional() *Function {
	return &Function{
		Name: NameConditional, Dim: 4,
		// The box of the natural values (the optimizer's level indices 0
		// and 1); the space is Params.
		Low: []float64{1e-4, 0, 0, 1}, High: []float64{1, 1, 0.99, 6},
		Params: []space.Param{
			{Name: "lr", Type: space.Float, Low: 1e-4, High: 1, Log: true},
			{Name: "optimizer", Type: space.Categorical, Choices: []any{"sgd", "adam"}},
			{Name: "momentum", Type: space.Float, Low: 0, High: 0.99, Condition: &space.Condition{Parent: "optimizer", Values: []any{"sgd"}}},
			{Name: "layers", Type: space.Int, Low: 1, High: 6},
		},
		Optimum: 0,
		Argmin:  [][]float64{{math.Pow(10, -2.5), 0, 0.9, 3}},
		Eval: func(x []float64) float64 {
			if len(x) != 4 || math.IsNaN(x[0]) || math.IsNaN(x[1]) || math.IsNaN(x[3]) || !(x[0] > 0) {
				return math.NaN()
			}
			l := math.Log10(x[0]) + 2.5
			v := l*l/4 + 0.05*(x[3]-3)*(x[3]-3)
			if x[1] == 0 {
				if math.IsNaN(x[2]) {
					return math.NaN()
				}
				return v + 0.6*(x[2]-0.9)*(x[2]-0.9)
			}
			return v + 0.08
		},
	}
}
