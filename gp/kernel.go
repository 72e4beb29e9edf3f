package gp

import (
	"fmt"
	"math"
	"strings"
)

// Kernel selects the stationary correlation function g(r) of the GP prior
// k(a, b) = σ_f² · g(r(a, b)), with r the ARD-scaled distance (see package doc).
type Kernel int

const (
	// SquaredExponential is g(r) = exp(−r²/2) (R&W eq. 4.9): infinitely smooth.
	SquaredExponential Kernel = iota
	// Matern32 is g(r) = (1 + √3 r) exp(−√3 r) (R&W eq. 4.17): once differentiable.
	Matern32
	// Matern52 is g(r) = (1 + √5 r + 5r²/3) exp(−√5 r) (R&W eq. 4.17): twice
	// differentiable; the usual default for hyperparameter optimization.
	Matern52
)

// ParseKernel accepts "se" or "rbf" (squared exponential), "matern32" and
// "matern52", case-insensitively.
func ParseKernel(s string) (Kernel, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "se", "rbf":
		return SquaredExponential, nil
	case "matern32":
		return Matern32, nil
	case "matern52":
		return Matern52, nil
	}
	return 0, fmt.Errorf("gp: unknown kernel %q (want se, rbf, matern32 or matern52)", s)
}

// String returns the name ParseKernel accepts.
func (k Kernel) String() string {
	switch k {
	case SquaredExponential:
		return "se"
	case Matern32:
		return "matern32"
	case Matern52:
		return "matern52"
	}
	return fmt.Sprintf("Kernel(%d)", int(k))
}

// MarshalText lets a Kernel appear by name in JSON and YAML configurations.
func (k Kernel) MarshalText() ([]byte, error) {
	if !k.valid() {
		return nil, fmt.Errorf("gp: invalid kernel %d", int(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText parses a kernel name (see ParseKernel).
func (k *Kernel) UnmarshalText(b []byte) error {
	parsed, err := ParseKernel(string(b))
	if err != nil {
		return err
	}
	*k = parsed
	return nil
}

func (k Kernel) valid() bool { return k >= SquaredExponential && k <= Matern52 }

// corr returns the correlation g at squared scaled distance r2 together with
// h = −2·dg/d(r²). Because r² = Σ_j r_j² with r_j² ∝ ℓ_j⁻², the derivative of
// g with respect to log ℓ_j is h·r_j²; writing it in terms of r² keeps the
// Matérn derivatives finite at r = 0 (no 1/r factor).
func (k Kernel) corr(r2 float64) (g, h float64) {
	switch k {
	case Matern32:
		r := math.Sqrt(3 * r2)
		e := math.Exp(-r)
		return (1 + r) * e, 3 * e
	case Matern52:
		r := math.Sqrt(5 * r2)
		e := math.Exp(-r)
		return (1 + r + r*r/3) * e, (5.0 / 3.0) * (1 + r) * e
	default:
		e := math.Exp(-0.5 * r2)
		return e, e
	}
}

// corrValue is corr without the derivative, for prediction.
func (k Kernel) corrValue(r2 float64) float64 {
	switch k {
	case Matern32:
		r := math.Sqrt(3 * r2)
		return (1 + r) * math.Exp(-r)
	case Matern52:
		r := math.Sqrt(5 * r2)
		return (1 + r + r*r/3) * math.Exp(-r)
	default:
		return math.Exp(-0.5 * r2)
	}
}

// metric is the ARD distance: r² = Σ_numeric ((a_j−b_j)/ℓ_j)² + Σ_categorical
// 1{a_j≠b_j}/ℓ_j². Points must already be encoded (encodePoint): categorical
// coordinates hold the level index, or −1 when inactive.
//
// The categorical term equals the squared Euclidean distance between the
// one-hot vectors of the two levels scaled by 1/(√2·ℓ_j), so the kernel is an
// SE/Matérn kernel on an embedding of the inputs into a Euclidean space and
// therefore stays positive definite.
type metric struct {
	invL2  []float64 // 1/ℓ_j²
	cat    []bool
	anyCat bool
}

func newMetric(lengthscales []float64, cat []bool) metric {
	m := metric{invL2: make([]float64, len(lengthscales)), cat: cat}
	for j, l := range lengthscales {
		m.invL2[j] = 1 / (l * l)
		if cat[j] {
			m.anyCat = true
		}
	}
	return m
}

func (m *metric) r2(a, b []float64) float64 {
	b = b[:len(a)]
	inv := m.invL2[:len(a)]
	s := 0.0
	if !m.anyCat {
		for j, aj := range a {
			d := aj - b[j]
			s += d * d * inv[j]
		}
		return s
	}
	for j, aj := range a {
		d := aj - b[j]
		if m.cat[j] {
			if d != 0 {
				s += inv[j]
			}
		} else {
			s += d * d * inv[j]
		}
	}
	return s
}

// Correlation is g(r), the prior correlation of f at two points a scaled
// distance r apart (NaN for a negative or NaN r or an invalid kernel).
func (k Kernel) Correlation(r float64) float64 {
	if !(r >= 0) || !k.valid() {
		return math.NaN()
	}
	return k.corrValue(r * r)
}
