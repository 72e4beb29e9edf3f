// Package design builds initial designs: n points in the unit cube [0,1]^d
// that a Bayesian optimizer evaluates before its surrogate has data to learn
// from. Coordinates are in the unit-cube encoding of package space, so a design
// is turned into configurations with space.Space.Decode (after Repair).
//
// Four kinds are offered:
//
//   - Random: independent uniform points.
//   - LHS: a Latin hypercube (McKay, Beckman and Conover, Technometrics 21,
//     1979): every one of the n equal-width strata of every dimension holds
//     exactly one point, placed uniformly at random inside its stratum.
//   - MaximinLHS: a Latin hypercube that spreads its points apart (Morris and
//     Mitchell, J. Stat. Plan. Inference 43, 1995, maximin criterion): the best
//     of many random Latin hypercubes by the smallest pairwise distance,
//     improved further by swapping coordinates between points (see
//     MaximinLatinHypercube).
//   - Sobol: the unscrambled Sobol low-discrepancy sequence (I. M. Sobol',
//     USSR Comput. Math. Math. Phys. 7, 1967) with the direction numbers
//     new-joe-kuo-6.21201 of Joe and Kuo (SIAM J. Sci. Comput. 30, 2008), in
//     Gray-code order as in Antonov and Saleev (1979), Joe–Kuo's reference code
//     and scipy.stats.qmc.Sobol(scramble=False).
//
// Every randomized design draws only from the *rand.Rand it is given, so a
// seed reproduces it exactly. Sobol points are deterministic.
package design

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Kind selects a design.
type Kind int

// Design kinds. The zero value is Random.
const (
	Random Kind = iota
	LHS
	MaximinLHS
	Sobol
)

var kindNames = [...]string{Random: "random", LHS: "lhs", MaximinLHS: "maximin", Sobol: "sobol"}

// String returns the name ParseKind accepts.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// KindNames lists the names ParseKind accepts, in Kind order.
func KindNames() []string {
	return append([]string(nil), kindNames[:]...)
}

// ParseKind maps "random", "lhs", "maximin" or "sobol" (case-insensitive,
// surrounding space ignored) to its Kind.
func ParseKind(name string) (Kind, error) {
	want := strings.ToLower(strings.TrimSpace(name))
	for k, n := range kindNames {
		if n == want {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("design: unknown kind %q (valid: %s)", name, strings.Join(kindNames[:], ", "))
}

// Generate returns n points of the given kind in [0,1]^d, as n rows of d
// coordinates. Random designs draw from rng; Sobol ignores rng (it may be nil)
// and returns the first n points of the sequence, the origin included, so that
// a power-of-two n keeps the sequence's balance (see SobolDesign to skip
// points). MaximinLHS uses the default MaximinOptions.
func Generate(kind Kind, n, d int, rng *rand.Rand) ([][]float64, error) {
	var (
		pts [][]float64
		err error
	)
	switch kind {
	case Random:
		pts, err = UniformRandom(n, d, rng)
	case LHS:
		pts, err = LatinHypercube(n, d, rng)
	case MaximinLHS:
		pts, err = MaximinLatinHypercube(n, d, rng, MaximinOptions{})
	case Sobol:
		pts, err = SobolDesign(n, d, 0)
	default:
		return nil, fmt.Errorf("design: generate: unknown kind %d", int(kind))
	}
	if err != nil {
		return nil, fmt.Errorf("design: generate %s: %w", kind, err)
	}
	return pts, nil
}

// UniformRandom returns n independent uniform points in [0,1)^d.
func UniformRandom(n, d int, rng *rand.Rand) ([][]float64, error) {
	if err := checkSize(n, d); err != nil {
		return nil, fmt.Errorf("design: random: %w", err)
	}
	if rng == nil {
		return nil, errors.New("design: random: nil rng")
	}
	pts := newPoints(n, d)
	for _, p := range pts {
		for k := range p {
			p[k] = rng.Float64()
		}
	}
	return pts, nil
}

// maxPoints bounds n·d so that a mistyped size fails with an error instead of
// exhausting memory.
const maxPoints = 1 << 28

func checkSize(n, d int) error {
	if n < 1 {
		return fmt.Errorf("need at least one point, got n=%d", n)
	}
	if d < 1 {
		return fmt.Errorf("need at least one dimension, got d=%d", d)
	}
	if n > maxPoints/d {
		return fmt.Errorf("n·d = %d·%d exceeds the limit of %d coordinates", n, d, maxPoints)
	}
	return nil
}

// newPoints allocates n rows of d coordinates in one backing array.
func newPoints(n, d int) [][]float64 {
	backing := make([]float64, n*d)
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = backing[i*d : (i+1)*d : (i+1)*d]
	}
	return pts
}
