package bench

import "math"

// Multimodal functions of any dimension for the peers comparison, from the
// same Virtual Library of Simulation Experiments (see the package doc):
// Levy (levy.html), Ackley (ackley.html) and Rosenbrock (rosen.html).
// Levy's many basins are where a trust region that restarts around the same
// incumbent stays stuck; Ackley's optimum is moved off the centre of the
// box, where a method biased to the middle would find it by accident.

// Names of the multimodal functions.
const (
	NameLevy       = "levy"
	NameAckley     = "ackley"
	NameRosenbrock = "rosenbrock"
)

func init() {
	registry[NameLevy] = functionEntry{0, levy}
	registry[NameAckley] = functionEntry{0, shiftedAckley}
	registry[NameRosenbrock] = functionEntry{0, rosenbrock}
}

// levy is Levy's function on [−10, 10]^d: with w = 1 + (x − 1)/4,
// sin²(πw₁) + Σ_{i<d} (w_i − 1)²(1 + 10 sin²(πw_i + 1)) + (w_d − 1)²(1 +
// sin²(2πw_d)), minimum 0 at x = 1.
func levy(dim int) *Function {
	lo, hi := box(dim, -10, 10)
	argmin := make([]float64, dim)
	for j := range argmin {
		argmin[j] = 1
	}
	sq := func(v float64) float64 { return v * v }
	return &Function{
		Name: NameLevy, Dim: dim, Low: lo, High: hi, Optimum: 0, Argmin: [][]float64{argmin},
		Eval: func(x []float64) float64 {
			if len(x) != dim {
				return math.NaN()
			}
			w := func(j int) float64 { return 1 + (x[j]-1)/4 }
			s := sq(math.Sin(math.Pi * w(0)))
			for j := 0; j < dim-1; j++ {
				s += sq(w(j)-1) * (1 + 10*sq(math.Sin(math.Pi*w(j)+1)))
			}
			return s + sq(w(dim-1)-1)*(1+sq(math.Sin(2*math.Pi*w(dim-1))))
		},
	}
}

// shiftedAckley is Ackley's function (a = 20, b = 0.2, c = 2π) on
// [−5, 5]^d with its minimum 0 moved from the centre to x*_j = 2.5·sin(j + 1).
func shiftedAckley(dim int) *Function {
	lo, hi := box(dim, -5, 5)
	shift := make([]float64, dim)
	for j := range shift {
		shift[j] = 2.5 * math.Sin(float64(j+1))
	}
	return &Function{
		Name: NameAckley, Dim: dim, Low: lo, High: hi, Optimum: 0, Argmin: [][]float64{shift},
		Eval: func(x []float64) float64 {
			if len(x) != dim {
				return math.NaN()
			}
			return max(0, ackley(x, shift))
		},
	}
}

// rosenbrock is Σ_{i<d} 100(x_{i+1} − x_i²)² + (x_i − 1)² on [−5, 10]^d
// ((x₁ − 1)² for d = 1, where the sum is empty), minimum 0 at x = 1.
func rosenbrock(dim int) *Function {
	lo, hi := box(dim, -5, 10)
	argmin := make([]float64, dim)
	for j := range argmin {
		argmin[j] = 1
	}
	return &Function{
		Name: NameRosenbrock, Dim: dim, Low: lo, High: hi, Optimum: 0, Argmin: [][]float64{argmin},
		Eval: func(x []float64) float64 {
			if len(x) != dim {
				return math.NaN()
			}
			if dim == 1 {
				return (x[0] - 1) * (x[0] - 1)
			}
			var s float64
			for j := 0; j < dim-1; j++ {
				s += 100*(x[j+1]-x[j]*x[j])*(x[j+1]-x[j]*x[j]) + (x[j]-1)*(x[j]-1)
			}
			return s
		},
	}
}
