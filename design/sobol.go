package design

import (
	"fmt"
	"math"
	"math/bits"
)

// joeKuoRow is one line of the Joe–Kuo direction-number file: the degree s
// of a primitive polynomial x^s + a_1 x^(s−1) + … + a_(s−1) x + 1 over GF(2),
// its interior coefficients a packed as bits (a_1 the most significant), and
// the initial direction numbers m_1..m_s (m_k odd and below 2^k).
type joeKuoRow struct {
	s uint
	a uint32
	m []uint32
}

// MaxSobolDim is the largest dimension SobolDesign supports: the first
// dimension plus the Joe–Kuo rows kept in this package.
const MaxSobolDim = len(joeKuoDirections) + 1

// sobolBits is the precision of each coordinate: point i is an integer
// multiple of 2^−52, exact in a float64, and i may go up to 2^52 − 1. The
// values do not depend on the precision chosen, so they equal those of
// implementations that keep fewer bits (scipy keeps 30) wherever both are
// defined.
const sobolBits = 52

// SobolSequence generates the unscrambled Sobol sequence point by point. It
// is not safe for concurrent use.
type SobolSequence struct {
	directions [][sobolBits]uint64 // v_k = m_k·2^(sobolBits−k), one row per dimension
	state      []uint64            // integer coordinates of the next point
	index      uint64              // index of the next point
}

// NewSobolSequence returns the sequence in d dimensions positioned at its
// first point, the origin.
func NewSobolSequence(d int) (*SobolSequence, error) {
	if d < 1 || d > MaxSobolDim {
		return nil, fmt.Errorf("design: sobol: dimension %d outside 1..%d (the Joe–Kuo rows kept in this package)", d, MaxSobolDim)
	}
	seq := &SobolSequence{
		directions: make([][sobolBits]uint64, d),
		state:      make([]uint64, d),
	}
	// The first dimension is the van der Corput sequence: every m_k = 1.
	for k := range sobolBits {
		seq.directions[0][k] = 1 << (sobolBits - 1 - k)
	}
	for j := 1; j < d; j++ {
		row := joeKuoDirections[j-1]
		v := &seq.directions[j]
		s := int(row.s)
		for k := 0; k < s && k < sobolBits; k++ {
			v[k] = uint64(row.m[k]) << (sobolBits - 1 - k)
		}
		// Bratley and Fox (ACM TOMS 14, 1988), eq. for v_k with k > s:
		// v_k = a_1 v_(k−1) ⊕ … ⊕ a_(s−1) v_(k−s+1) ⊕ v_(k−s) ⊕ (v_(k−s) >> s).
		for k := s; k < sobolBits; k++ {
			next := v[k-s] ^ (v[k-s] >> uint(s))
			for i := 1; i < s; i++ {
				if (row.a>>uint(s-1-i))&1 == 1 {
					next ^= v[k-i]
				}
			}
			v[k] = next
		}
	}
	return seq, nil
}

// Dim returns the dimension of the sequence.
func (q *SobolSequence) Dim() int { return len(q.state) }

// Index returns the index of the point Next will return.
func (q *SobolSequence) Index() uint64 { return q.index }

// Seek positions the sequence so that Next returns point index (0-based).
func (q *SobolSequence) Seek(index uint64) error {
	if index >= 1<<sobolBits {
		return fmt.Errorf("design: sobol: index %d beyond 2^%d", index, sobolBits)
	}
	// In Gray-code order point i is the XOR of the direction numbers picked by
	// the bits of gray(i) = i ⊕ (i >> 1).
	gray := index ^ (index >> 1)
	for j := range q.state {
		var x uint64
		for g, k := gray, 0; g != 0; g, k = g>>1, k+1 {
			if g&1 == 1 {
				x ^= q.directions[j][k]
			}
		}
		q.state[j] = x
	}
	q.index = index
	return nil
}

// Next writes the next point into dst, which must have length Dim, and
// advances the sequence.
func (q *SobolSequence) Next(dst []float64) error {
	if len(dst) != len(q.state) {
		return fmt.Errorf("design: sobol: next: destination has length %d, want %d", len(dst), len(q.state))
	}
	if q.index >= 1<<sobolBits-1 {
		return fmt.Errorf("design: sobol: next: sequence exhausted at index %d", q.index)
	}
	const unit = 1.0 / (1 << sobolBits)
	for j, x := range q.state {
		dst[j] = float64(x) * unit
	}
	// gray(i+1) differs from gray(i) in the bit at the position of the lowest
	// set bit of i+1, so one XOR per dimension gives the following point.
	q.index++
	k := bits.TrailingZeros64(q.index)
	for j := range q.state {
		q.state[j] ^= q.directions[j][k]
	}
	return nil
}

// SobolDesign returns points skip, skip+1, …, skip+n−1 of the unscrambled
// Sobol sequence in [0,1)^d (1 ≤ d ≤ MaxSobolDim), which equal
// scipy.stats.qmc.Sobol(d, scramble=False) after fast_forward(skip).
//
// Point 0 is the origin. With skip = 0 and n a power of two 2^m, every
// dyadic interval [c/2^k, (c+1)/2^k), k ≤ m, of every coordinate holds exactly
// n/2^k points; skip = 1 drops the origin (a corner of the search space,
// rarely a useful first evaluation) at the price of that exact balance, while
// skipping a power of two no smaller than n keeps it.
func SobolDesign(n, d, skip int) ([][]float64, error) {
	if err := checkSize(n, d); err != nil {
		return nil, fmt.Errorf("design: sobol: %w", err)
	}
	if skip < 0 {
		return nil, fmt.Errorf("design: sobol: skip %d < 0", skip)
	}
	if uint64(skip) > math.MaxUint64-uint64(n) || uint64(skip)+uint64(n) >= 1<<sobolBits {
		return nil, fmt.Errorf("design: sobol: points %d..%d beyond index 2^%d", skip, skip+n-1, sobolBits)
	}
	seq, err := NewSobolSequence(d)
	if err != nil {
		return nil, err
	}
	if err := seq.Seek(uint64(skip)); err != nil {
		return nil, err
	}
	pts := newPoints(n, d)
	for _, p := range pts {
		if err := seq.Next(p); err != nil {
			return nil, err
		}
	}
	return pts, nil
}
