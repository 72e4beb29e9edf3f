package gp

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// The prediction hot path: the cross-kernel and the triangular solve account
// for nearly all of an Ask and of a Shapley explanation. Both routines below
// perform exactly the floating-point operations of the straightforward code
// (metric.r2 + Kernel.corrValue, gonum's Dtrsm) in the same order, so
// predictions are bit-for-bit unchanged; they only remove per-element calls
// and branches and reuse loaded values.

// crossKernel fills ks (m×n) with the standardized prior covariance
// σ_f²·g(r²(p_i, x_t)) between the m encoded points pe and the training
// inputs.
func (g *GP) crossKernel(ks, pe []float64, m int) {
	g.sqDistances(ks, pe, m)
	g.applyKernel(ks)
}

// sqDistances fills ks (m×n) with the scaled squared distances r²(p_i, x_t)
// of metric.r2, hoisting the categorical test out of the inner loop when
// there are no categorical dimensions.
func (g *GP) sqDistances(ks, pe []float64, m int) {
	n, d := g.n, g.dim
	inv := g.met.invL2[:d]
	xs := g.x[:n*d]
	cat := g.met.cat[:d]
	for i := 0; i < m; i++ {
		pi := pe[i*d : (i+1)*d]
		row := ks[i*n : (i+1)*n]
		if g.met.anyCat {
			for t := range row {
				xt := xs[t*d : (t+1)*d]
				xt = xt[:len(pi)]
				r2 := 0.0
				for j, aj := range pi {
					diff := aj - xt[j]
					d2 := diff * diff
					if cat[j] {
						// Encoded levels are integers (or −1), so a
						// difference is 0 or at least 1 in magnitude and
						// min(d², 1) is the indicator 1{a ≠ b}, exactly,
						// without a branch that depends on the data.
						d2 = min(d2, 1)
					}
					r2 += d2 * inv[j]
				}
				row[t] = r2
			}
			continue
		}
		for t := range row {
			xt := xs[t*d : (t+1)*d]
			xt = xt[:len(pi)]
			r2 := 0.0
			for j, aj := range pi {
				diff := aj - xt[j]
				r2 += diff * diff * inv[j]
			}
			row[t] = r2
		}
	}
}

// partialSqDistances fills dst (m×n) with the part of r²(p_i, x_t) summed
// over the dimensions dims only (the m points pe hold len(dims) encoded
// coordinates each), or over all other dimensions when complement is set
// (pe then holds full points).
func (g *GP) partialSqDistances(dst, pe []float64, m int, dims []int, complement bool) {
	n, d := g.n, g.dim
	// js are the dimensions summed over; col[k] is where dimension js[k]
	// sits in a point of pe.
	var js, col []int
	stride := d
	if complement {
		for j := range d {
			if !slices.Contains(dims, j) {
				js, col = append(js, j), append(col, j)
			}
		}
	} else {
		stride = len(dims)
		js = dims
		for k := range dims {
			col = append(col, k)
		}
	}
	for i := 0; i < m; i++ {
		p := pe[i*stride : (i+1)*stride]
		row := dst[i*n : (i+1)*n]
		for t := range row {
			xt := g.x[t*d : (t+1)*d]
			r2 := 0.0
			for k, j := range js {
				diff := p[col[k]] - xt[j]
				d2 := diff * diff
				if g.met.cat[j] {
					d2 = min(d2, 1)
				}
				r2 += d2 * g.met.invL2[j]
			}
			row[t] = r2
		}
	}
}

// applyKernel overwrites squared distances with σ_f²·g(r²).
func (g *GP) applyKernel(row []float64) {
	s2 := g.hyper.SignalVariance
	switch g.kernel {
	case Matern52:
		for t, r2 := range row {
			r := math.Sqrt(5 * r2)
			row[t] = s2 * ((1 + r + r*r/3) * math.Exp(-r))
		}
	case Matern32:
		for t, r2 := range row {
			r := math.Sqrt(3 * r2)
			row[t] = s2 * ((1 + r) * math.Exp(-r))
		}
	default:
		for t, r2 := range row {
			row[t] = s2 * math.Exp(-0.5*r2)
		}
	}
}

// crossKernelGeneric is the reference form crossKernel must equal bit for bit.
func (g *GP) crossKernelGeneric(ks, pe []float64, m int) {
	n, d := g.n, g.dim
	s2 := g.hyper.SignalVariance
	for i := 0; i < m; i++ {
		pi := pe[i*d : (i+1)*d]
		row := ks[i*n : (i+1)*n]
		for t := range row {
			row[t] = s2 * g.kernel.corrValue(g.met.r2(pi, g.x[t*d:(t+1)*d]))
		}
	}
}

// solveRightUpper overwrites each of the m rows b_i of the m×n matrix b with
// b_i·U⁻¹ for the upper-triangular n×n U (row-major), i.e. gonum's
// Dtrsm(Right, Upper, NoTrans, NonUnit, alpha = 1) without its zero skips.
func solveRightUpper(u []float64, n int, b []float64, m int) {
	u = u[:n*n]
	for i := 0; i < m; i++ {
		solveRowUpperFrom(u, n, 0, b[i*n:(i+1)*n])
	}
}

// solveRowUpperFrom overwrites r[from:] with r[from:]·V⁻¹, V the trailing
// block U[from:, from:] of the upper-triangular n×n U (row-major); r[:from]
// is neither read nor written. Four elimination steps are fused into one
// pass over the row, so the row is loaded and stored a quarter as often;
// every element still receives the updates r_j −= r_k·U_kj in increasing k,
// each rounded separately.
func solveRowUpperFrom(u []float64, n, from int, r []float64) {
	r = r[:n]
	k := from
	for ; k+4 <= n; k += 4 {
		u0 := u[k*n : (k+1)*n]
		u1 := u[(k+1)*n : (k+2)*n]
		u2 := u[(k+2)*n : (k+3)*n]
		u3 := u[(k+3)*n : (k+4)*n]
		r[k] /= u0[k]
		a0 := r[k]
		r[k+1] -= a0 * u0[k+1]
		r[k+1] /= u1[k+1]
		a1 := r[k+1]
		r[k+2] = (r[k+2] - a0*u0[k+2]) - a1*u1[k+2]
		r[k+2] /= u2[k+2]
		a2 := r[k+2]
		r[k+3] = ((r[k+3] - a0*u0[k+3]) - a1*u1[k+3]) - a2*u2[k+3]
		r[k+3] /= u3[k+3]
		a3 := r[k+3]
		rest := r[k+4:]
		v0 := u0[k+4:][:len(rest)]
		v1 := u1[k+4:][:len(rest)]
		v2 := u2[k+4:][:len(rest)]
		v3 := u3[k+4:][:len(rest)]
		for j := range rest {
			rest[j] = (((rest[j] - a0*v0[j]) - a1*v1[j]) - a2*v2[j]) - a3*v3[j]
		}
	}
	for ; k < n; k++ {
		uk := u[k*n : (k+1)*n]
		r[k] /= uk[k]
		a := r[k]
		for j := k + 1; j < n; j++ {
			r[j] -= a * uk[j]
		}
	}
}

// inverseFromFactor writes into the upper triangle of inv the inverse
// (UᵀU)⁻¹ = U⁻¹U⁻ᵀ of the matrix whose upper Cholesky factor is u, with v
// (n×n) as scratch for U⁻¹; it is LAPACK's Dpotri (Dtrtri then Dlauum) as
// two passes over rows: row i of U⁻¹ is e_i·U⁻¹, which only touches columns
// i.., and (U⁻¹U⁻ᵀ)_ik = Σ_{j≥k} (U⁻¹)_ij (U⁻¹)_kj for k ≥ i. Rows are
// independent within a pass, so run spreads them over its partitions; a
// row's cost is ∝ (n−i)² in both passes, so interleaved rows balance. The
// first pass alone reads u, so inv may be u's own buffer.
func inverseFromFactor(u, v, inv []float64, n int, run func(func(part, parts int))) {
	run(func(part, parts int) {
		for i := part; i < n; i += parts {
			row := v[i*n : (i+1)*n]
			clear(row[i:])
			row[i] = 1
			solveRowUpperFrom(u, n, i, row)
		}
	})
	run(func(part, parts int) {
		for i := part; i < n; i += parts {
			vi := v[i*n : (i+1)*n]
			out := inv[i*n : (i+1)*n]
			for k := i; k < n; k++ {
				out[k] = floats.Dot(vi[k:], v[k*n+k:(k+1)*n])
			}
		}
	})
}

// solveUpperVector overwrites b with U⁻¹b for the upper-triangular n×n U
// (row-major) by back substitution, each step one contiguous dot product
// of a row of U with the solved tail of b.
func solveUpperVector(u []float64, n int, b []float64) {
	u = u[:n*n]
	b = b[:n]
	for i := n - 1; i >= 0; i-- {
		row := u[i*n : (i+1)*n]
		b[i] = (b[i] - floats.Dot(row[i+1:], b[i+1:])) / row[i]
	}
}
