package bench

import "math"

// NameCorner is the 3-d function whose minimum lies on a corner of its box.
const NameCorner = "corner"

// corner: f = x₁ + x₂ + x₃ on [0,1]³, minimum 0 at the corner 0. Tuning often
// puts the optimum on a bound (the most epochs, the weakest regularization);
// there the incumbent sits on the boundary and EI's argmax is a copy of it,
// which once made the optimizer replace most proposals by random
// configurations (docs/research/peers.md, Boundary optima).
func corner() *Function {
	const dim = 3
	lo, hi := box(dim, 0, 1)
	return &Function{
		Name: NameCorner, Dim: dim, Low: lo, High: hi,
		Optimum: 0,
		Argmin:  [][]float64{make([]float64, dim)},
		Eval: func(x []float64) float64 {
			if len(x) != dim {
				return math.NaN()
			}
			var s float64
			for _, v := range x {
				s += v
			}
			return s
		},
	}
}
