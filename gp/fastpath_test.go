package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// referencePrediction is R&W Algorithm 2.1 for one point with the plain
// building blocks (metric.r2, Kernel.corrValue, gonum's Trsv on U):
// the per-point computation the batched fast path replaces.
func referencePrediction(g *GP, p []float64) (mean, variance float64) {
	pe := make([]float64, g.dim)
	if err := encodePoint(pe, p, g.levels); err != nil {
		panic(err)
	}
	k := make([]float64, g.n)
	for t := range k {
		k[t] = g.hyper.SignalVariance * g.kernel.corrValue(g.met.r2(pe, g.x[t*g.dim:(t+1)*g.dim]))
	}
	m := blas64.Dot(blas64.Vector{N: g.n, Inc: 1, Data: k}, blas64.Vector{N: g.n, Inc: 1, Data: g.alpha})
	blas64.Trsv(blas.Trans, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: g.n, Stride: g.n, Data: g.u},
		blas64.Vector{N: g.n, Inc: 1, Data: k})
	q := 0.0
	for _, v := range k {
		q += v * v
	}
	s := g.out.Std
	return g.out.Mean + s*m, s * s * math.Max(0, g.hyper.SignalVariance-q)
}

// Batched prediction (chunked, split over workers, fused kernel and
// triangular solve) must agree with point-by-point prediction to 1e-12
// relative — in fact the operations are the same, so it is exact up to the
// order of the final dot products — for every kernel, with and without
// categorical dimensions, for batch sizes around the chunk boundaries.
func TestBatchedPredictionMatchesPerPoint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kernel Kernel
		levels []int
	}{
		{"matern52", Matern52, nil},
		{"matern32", Matern32, nil},
		{"se", SquaredExponential, nil},
		{"matern52-categorical", Matern52, []int{0, 0, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _, _ := fittedModel(t, 11, 103, 3, tc.kernel, tc.levels)
			rng := newRNG(12)
			for _, m := range []int{1, 5, 17, 33, 255, 257, 600} {
				x := uniformPoints(rng, m, 3)
				mean, variance := make([]float64, m), make([]float64, m)
				if err := g.Predict(x, mean, variance); err != nil {
					t.Fatal(err)
				}
				meanOnly := make([]float64, m)
				if err := g.Mean(x, meanOnly); err != nil {
					t.Fatal(err)
				}
				for i, p := range x {
					wantM, wantV := referencePrediction(g, p)
					if math.Abs(mean[i]-wantM) > 1e-12*math.Max(1, math.Abs(wantM)) {
						t.Fatalf("m=%d point %d: batched mean %v, per point %v", m, i, mean[i], wantM)
					}
					if meanOnly[i] != mean[i] {
						t.Fatalf("m=%d point %d: Mean %v, Predict %v", m, i, meanOnly[i], mean[i])
					}
					// The variance is a difference s2 − q, so its tolerance is
					// relative to the prior variance that rounding acts on.
					prior := g.out.Std * g.out.Std * g.hyper.SignalVariance
					if math.Abs(variance[i]-wantV) > 1e-12*prior {
						t.Fatalf("m=%d point %d: batched variance %v, per point %v", m, i, variance[i], wantV)
					}
				}
			}
		})
	}
}

// The fused solve must reproduce gonum's Dtrsm bit for bit, for sizes that
// are and are not multiples of the fusion width.
func TestSolveRightUpperMatchesDtrsm(t *testing.T) {
	rng := newRNG(3)
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 61, 200} {
		u := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				u[i*n+j] = rng.NormFloat64() * 0.3
			}
			u[i*n+i] = 0.5 + rng.Float64()
		}
		const m = 9
		b := make([]float64, m*n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		b[3] = 0 // gonum skips zero pivots; the result must not care
		want := append([]float64(nil), b...)
		blas64.Trsm(blas.Right, blas.NoTrans, 1,
			blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: u},
			blas64.General{Rows: m, Cols: n, Stride: n, Data: want})
		solveRightUpper(u, n, b, m)
		for i := range b {
			if b[i] != want[i] && !(b[i] == 0 && want[i] == 0) {
				t.Fatalf("n=%d element %d: %v, Dtrsm %v", n, i, b[i], want[i])
			}
		}
	}
}

// The specialized cross-kernel must equal the generic one bit for bit.
func TestCrossKernelRowsMatchesGeneric(t *testing.T) {
	for _, c := range []struct {
		k      Kernel
		levels []int
	}{{SquaredExponential, nil}, {Matern32, nil}, {Matern52, nil}, {Matern52, []int{0, 3, 0, 2}}, {SquaredExponential, []int{4, 0, 0, 0}}} {
		k := c.k
		g, _, _ := fittedModel(t, 21, 57, 4, k, c.levels)
		rng := newRNG(22)
		x := uniformPoints(rng, 13, 4)
		x[0][1], x[1][0] = -1, -1 // inactive, a value of its own for a categorical
		pe, err := g.encodeAll(x)
		if err != nil {
			t.Fatal(err)
		}
		fast, slow := make([]float64, 13*g.n), make([]float64, 13*g.n)
		g.crossKernel(fast, pe, 13)
		g.crossKernelGeneric(slow, pe, 13)
		for i := range fast {
			if fast[i] != slow[i] {
				t.Fatalf("%v element %d: %v, generic %v", k, i, fast[i], slow[i])
			}
		}
	}
}
