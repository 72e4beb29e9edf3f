package regional_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"xbo/bench"
	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/gp"
)

// BenchmarkRegionalTree grows a 6-split confidence-splitting tree with leaf
// PDPs (eq. 5 bands) for one parameter of an 8-dimensional GP fitted to
// T = 200 points, n = 1000, G = 20, from precomputed ICE curves. Target:
// under 1 s per op.
func BenchmarkRegionalTree(b *testing.B) {
	ice, x := benchICE(b)
	b.ResetTimer()
	for b.Loop() {
		res, err := regional.Explain(context.Background(), ice, x[0], regional.Options{MaxSplits: 6})
		if err != nil {
			b.Fatal(err)
		}
		if res.Splits != 6 {
			b.Fatalf("%d splits", res.Splits)
		}
	}
}

// BenchmarkRegionalTreeWithICE includes computing the ICE curves of mean and
// variance (20 000 GP predictions) for the parameter.
func BenchmarkRegionalTreeWithICE(b *testing.B) {
	ice, x := benchICE(b)
	model := ice.Model()
	b.ResetTimer()
	for b.Loop() {
		fresh, err := pdp.NewICE(context.Background(), model, ice.Space, []int{0}, pdp.Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := regional.Explain(context.Background(), fresh, x[0], regional.Options{MaxSplits: 6}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchICE(b *testing.B) (*pdp.ICE, [][]float64) {
	f, err := bench.Lookup(bench.NameStyblinskiTang, 8)
	if err != nil {
		b.Fatal(err)
	}
	sp, err := f.Space()
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := sp.Sample(rng, 200)
	y := make([]float64, len(x))
	for i, u := range x {
		y[i] = f.Eval(sp.Decode(u))
	}
	model, err := gp.Fit(x, y, gp.Options{Kernel: gp.Matern32, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ice, err := pdp.NewICE(context.Background(), model, sp, []int{0}, pdp.Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	return ice, x
}
