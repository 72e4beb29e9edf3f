package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/integrate/quad"

	"xbo/space"
)

// separable is a function of float parameters of the form
//
//	f(x) = c + Σ_i w_i Π_k g_ik(x_k),
//
// a sum of products of one-dimensional factors. It covers additive
// functions (one non-constant factor per term: Levy, Michalewicz,
// Rastrigin), products (one term: Genz's product peak) and sums of Gaussian
// bumps (Hartmann). Under the reference measure of explain/pdp and
// explain/sobol (each x_k uniform on its unit-cube encoding: uniform, or
// log-uniform for a log parameter, and independent) its partial dependence
// and its Sobol indices follow exactly from the one-dimensional moments
// m_ik = E g_ik and M_ilk = E[g_ik g_lk]:
//
//	PD_j(v)   = c + Σ_i w_i g_ij(v) Π_{k≠j} m_ik,
//	E f − c   = Σ_i w_i Π_k m_ik =: μ,
//	V         = Σ_il w_i w_l Π_k M_ilk − μ²,
//	V_j       = Σ_il w_i w_l M_ilj Π_{k≠j} m_ik m_lk − μ²    (Var E[f | x_j]),
//	V − T_j V = Σ_il w_i w_l m_ij m_lj Π_{k≠j} M_ilk − μ²    (Var E[f | x_−j]).
//
// The moments are integrals over the unit interval by composite
// Gauss–Legendre quadrature whose panels end at the factors' jumps and kinks
// (breaks), so step functions are integrated exactly too: the truths are
// exact to rounding, and the tests check them against Monte Carlo.
type separable struct {
	params []space.Param
	c      float64
	terms  []sepTerm
	// breaks[k] are natural values of x_k where some factor jumps or has a
	// kink.
	breaks [][]float64

	m  [][]float64   // m[i][k] = E g_ik
	mm [][][]float64 // mm[i][l][k] = E[g_ik g_lk]
}

// sepTerm is w·Π_k g[k](x_k); a nil factor is the constant 1.
type sepTerm struct {
	w float64
	g []func(float64) float64
}

// Quadrature: sepPanels panels of a sepNodes-point Gauss–Legendre rule
// between consecutive breaks. Michalewicz's sin^20(3x²/π) is the sharpest
// factor in the catalogue; at this resolution its moments agree with a rule
// of twice as many panels to 1e-14.
const (
	sepPanels = 64
	sepNodes  = 16
)

func newSeparable(params []space.Param, c float64, terms []sepTerm, breaks [][]float64) (*separable, error) {
	d := len(params)
	if d == 0 || len(terms) == 0 {
		return nil, errors.New("separable: no parameters or no terms")
	}
	for _, p := range params {
		if p.Type != space.Float || p.Condition != nil {
			return nil, fmt.Errorf("separable: parameter %q must be an unconditional float", p.Name)
		}
	}
	for i, t := range terms {
		if len(t.g) != d {
			return nil, fmt.Errorf("separable: term %d has %d factors for %d parameters", i, len(t.g), d)
		}
	}
	if breaks == nil {
		breaks = make([][]float64, d)
	}
	if len(breaks) != d {
		return nil, fmt.Errorf("separable: %d break lists for %d parameters", len(breaks), d)
	}
	s := &separable{params: params, c: c, terms: terms, breaks: breaks}
	nodes, weights := make([]float64, sepNodes), make([]float64, sepNodes)
	quad.Legendre{}.FixedLocations(nodes, weights, 0, 1)
	s.m = make([][]float64, len(terms))
	s.mm = make([][][]float64, len(terms))
	for i := range terms {
		s.m[i] = make([]float64, d)
		s.mm[i] = make([][]float64, len(terms))
		for l := range terms {
			s.mm[i][l] = make([]float64, d)
		}
	}
	for k := range params {
		u, w := s.rule(k, nodes, weights)
		// Factor values at the nodes, once per term.
		vals := make([][]float64, len(terms))
		for i, t := range terms {
			vals[i] = make([]float64, len(u))
			for q, uq := range u {
				vals[i][q] = 1
				if t.g[k] != nil {
					vals[i][q] = t.g[k](params[k].FromUnit(uq))
				}
			}
		}
		for i := range terms {
			for q := range u {
				s.m[i][k] += w[q] * vals[i][q]
			}
			for l := range terms {
				for q := range u {
					s.mm[i][l][k] += w[q] * vals[i][q] * vals[l][q]
				}
			}
		}
	}
	return s, nil
}

// rule returns the nodes (unit coordinates) and weights of the composite
// rule for parameter k: the unit interval split at the breaks, each piece
// into sepPanels panels.
func (s *separable) rule(k int, nodes, weights []float64) (u, w []float64) {
	edges := []float64{0, 1}
	for _, b := range s.breaks[k] {
		if t := s.params[k].ToUnit(b); t > 0 && t < 1 {
			edges = append(edges, t)
		}
	}
	slices.Sort(edges)
	edges = slices.Compact(edges)
	for e := 1; e < len(edges); e++ {
		width := (edges[e] - edges[e-1]) / sepPanels
		for p := range sepPanels {
			a := edges[e-1] + float64(p)*width
			for q := range nodes {
				u = append(u, a+width*nodes[q])
				w = append(w, width*weights[q])
			}
		}
	}
	return u, w
}

func (s *separable) eval(x []float64) float64 {
	if len(x) != len(s.params) {
		return math.NaN()
	}
	sum := s.c
	for _, t := range s.terms {
		prod := t.w
		for k, g := range t.g {
			if g != nil {
				prod *= g(x[k])
			}
		}
		sum += prod
	}
	return sum
}

// pd is the exact partial dependence of parameter j at natural value v.
func (s *separable) pd(j int, v float64) (float64, bool) {
	if j < 0 || j >= len(s.params) {
		return math.NaN(), false
	}
	sum := s.c
	for i, t := range s.terms {
		prod := t.w
		if t.g[j] != nil {
			prod *= t.g[j](v)
		}
		for k := range s.params {
			if k != j {
				prod *= s.m[i][k]
			}
		}
		sum += prod
	}
	return sum, true
}

// indices are the exact main and total Sobol indices.
func (s *separable) indices() (main, total []float64, err error) {
	d := len(s.params)
	mu := 0.0
	for i, t := range s.terms {
		prod := t.w
		for k := range d {
			prod *= s.m[i][k]
		}
		mu += prod
	}
	// pairSum is Σ_il w_i w_l Π_k h(i, l, k) − μ².
	pairSum := func(h func(i, l, k int) float64) float64 {
		sum := 0.0
		for i, ti := range s.terms {
			for l, tl := range s.terms {
				prod := ti.w * tl.w
				for k := range d {
					prod *= h(i, l, k)
				}
				sum += prod
			}
		}
		return sum - mu*mu
	}
	v := pairSum(func(i, l, k int) float64 { return s.mm[i][l][k] })
	if !(v > 0) {
		return nil, nil, fmt.Errorf("separable: variance %v is not positive", v)
	}
	main, total = make([]float64, d), make([]float64, d)
	for j := range d {
		vj := pairSum(func(i, l, k int) float64 {
			if k == j {
				return s.mm[i][l][k]
			}
			return s.m[i][k] * s.m[l][k]
		})
		rest := pairSum(func(i, l, k int) float64 {
			if k == j {
				return s.m[i][k] * s.m[l][k]
			}
			return s.mm[i][l][k]
		})
		// Rounding can leave −1e-17 where an index is exactly 0 (an inert
		// parameter).
		main[j] = math.Max(0, vj/v)
		total[j] = math.Max(0, (v-rest)/v)
	}
	return main, total, nil
}

// gaussFactor is exp(−a(x − p)²), the factor of a Gaussian bump.
func gaussFactor(a, p float64) func(float64) float64 {
	return func(x float64) float64 { return math.Exp(-a * (x - p) * (x - p)) }
}

// additiveTerms turns one function per coordinate into the terms of an
// additive function Σ_k h_k(x_k) (a nil h_k: the coordinate does nothing).
func additiveTerms(h []func(float64) float64) []sepTerm {
	var terms []sepTerm
	for k, hk := range h {
		if hk == nil {
			continue
		}
		g := make([]func(float64) float64, len(h))
		g[k] = hk
		terms = append(terms, sepTerm{w: 1, g: g})
	}
	return terms
}
