package fanova

import (
	"fmt"
	"math"
	"testing"

	"xbo/forest"
)

// benchFunction is the test function of bench/scripts/optuna_fanova.py:
// the first six dimensions matter in a clear order (weights 1/(j+1)), x0 and
// x1 interact, the rest are irrelevant.
func benchFunction(x []float64) float64 {
	y := 0.0
	for j := range min(len(x), 6) {
		y += math.Sin(2*math.Pi*x[j]) / float64(j+1)
	}
	return y + 0.5*(x[0]-0.5)*(x[1]-0.5)
}

func benchData(n, d int) ([][]float64, []float64) {
	rng := newRNG(42)
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = rng.Float64()
		}
		y[i] = benchFunction(x[i])
	}
	return x, y
}

// benchmarkFitDecompose: fit a 30-tree forest, then every main effect and
// every pairwise interaction.
func benchmarkFitDecompose(b *testing.B, n, d int) {
	x, y := benchData(n, d)
	names := make([]string, d)
	for j := range names {
		names[j] = fmt.Sprintf("x%d", j)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f, err := forest.Fit(x, y, forest.Options{Trees: 30, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		e, err := New(f, Options{})
		if err != nil {
			b.Fatal(err)
		}
		dec, err := e.Decompose(true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := dec.Importance(names); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFanova2000x8(b *testing.B)   { benchmarkFitDecompose(b, 2000, 8) }
func BenchmarkFanova10000x32(b *testing.B) { benchmarkFitDecompose(b, 10000, 32) }

// benchmarkDecompose times fANOVA alone (main effects and all pairs) on a
// forest fitted outside the timer.
func benchmarkDecompose(b *testing.B, n, d int) {
	x, y := benchData(n, d)
	f, err := forest.Fit(x, y, forest.Options{Trees: 30, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e, err := New(f, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Decompose(true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecompose2000x8(b *testing.B)   { benchmarkDecompose(b, 2000, 8) }
func BenchmarkDecompose10000x32(b *testing.B) { benchmarkDecompose(b, 10000, 32) }
