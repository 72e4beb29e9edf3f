package shapley

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"xbo/design"
	"xbo/space"
)

// DefaultBackgroundPerDim is the thesis' background size per parameter
// (Algorithm 3: 1000·p points).
const DefaultBackgroundPerDim = 1000

func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// UniformBackground draws n Latin-hypercube points over the space (thesis
// Algorithm 3, line 2), repaired onto the space's representable set: ints
// and categoricals at their bin centres, inactive parameters switched off.
// A nil space means the continuous unit cube of dimension dim.
func UniformBackground(s *space.Space, dim, n int, seed uint64) ([][]float64, error) {
	if s != nil {
		dim = s.Dim()
	}
	if dim < 1 || n < 1 {
		return nil, fmt.Errorf("shapley: background of %d points in dimension %d", n, dim)
	}
	pts, err := design.LatinHypercube(n, dim, newRNG(seed))
	if err != nil {
		return nil, fmt.Errorf("shapley: background: %w", err)
	}
	if s != nil {
		for _, p := range pts {
			s.Repair(p)
		}
	}
	return pts, nil
}

// LocalBackground draws n points uniformly in the box of half-width radius
// around x in the unit cube, cut to [0,1] (thesis section 8: local sampling
// around the proposal). Coordinates that are inactive in x are drawn over
// the whole range, so that a parent moved by the box can switch its child on
// with a spread of values. Points are repaired onto the space when s is set.
func LocalBackground(s *space.Space, x []float64, radius float64, n int, seed uint64) ([][]float64, error) {
	if !(radius > 0) || math.IsInf(radius, 0) {
		return nil, fmt.Errorf("shapley: local background: radius %v must be positive and finite", radius)
	}
	if n < 1 {
		return nil, fmt.Errorf("shapley: local background: %d points", n)
	}
	if len(x) == 0 || (s != nil && len(x) != s.Dim()) {
		return nil, errors.New("shapley: local background: point has the wrong dimension")
	}
	rng := newRNG(seed)
	pts := make([][]float64, n)
	for i := range pts {
		p := make([]float64, len(x))
		for j, c := range x {
			lo, hi := 0.0, 1.0
			if c >= 0 {
				lo, hi = math.Max(0, c-radius), math.Min(1, c+radius)
			}
			p[j] = lo + (hi-lo)*rng.Float64()
		}
		if s != nil {
			s.Repair(p)
		}
		pts[i] = p
	}
	return pts, nil
}
