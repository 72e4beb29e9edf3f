package gp

import (
	"slices"
	"testing"
)

func TestBufferPoolReusesAndZeroes(t *testing.T) {
	var bp bufferPool
	b := bp.get(100, false)
	for i := range *b {
		(*b)[i] = 7
	}
	bp.put(b)
	c := bp.get(60, true)
	if c != b {
		t.Fatal("a pooled buffer large enough was not reused")
	}
	if len(*c) != 60 {
		t.Fatalf("length %d, want 60", len(*c))
	}
	for i, v := range *c {
		if v != 0 {
			t.Fatalf("zeroed buffer has %v at %d", v, i)
		}
	}
	bp.put(c)
	if d := bp.get(cap(*c)+1, false); d == c || len(*d) != cap(*c)+1 {
		t.Fatal("a buffer too small was handed out")
	}
}

func TestBufferPoolKeepsLargestWithinBounds(t *testing.T) {
	var bp bufferPool
	for i := range maxPooled {
		s := make([]float64, 10+i)
		bp.put(&s)
	}
	big := make([]float64, 1000)
	bp.put(&big)
	if len(bp.free) != maxPooled {
		t.Fatalf("%d buffers pooled, want %d", len(bp.free), maxPooled)
	}
	for _, p := range bp.free {
		if cap(*p) == 10 {
			t.Fatal("the smallest buffer was kept instead of the larger one")
		}
	}
	tiny := make([]float64, 5)
	bp.put(&tiny)
	for _, p := range bp.free {
		if cap(*p) == 5 {
			t.Fatal("a buffer smaller than all pooled ones displaced one")
		}
	}
	if got := bp.get(1000, false); got != &big {
		t.Fatal("the large buffer was not handed out")
	}
	huge := make([]float64, maxPooledFloats+1)
	bp.put(&huge)
	if bp.floats > maxPooledFloats {
		t.Fatalf("pool holds %d floats, bound %d", bp.floats, maxPooledFloats)
	}
	want := 0
	for _, p := range bp.free {
		want += cap(*p)
	}
	if bp.floats != want {
		t.Fatalf("floats %d, pooled buffers hold %d", bp.floats, want)
	}
}

// TestFitUnaffectedByPooledBuffers fits the same data with the pools empty
// and again with them holding the first fit's used buffers: the results
// must be identical to the bit.
func TestFitUnaffectedByPooledBuffers(t *testing.T) {
	x := make([][]float64, 60)
	y := make([]float64, len(x))
	for i := range x {
		a, b := float64(i%7)/6, float64(i*13%11)/10
		x[i] = []float64{a, b}
		y[i] = a*a - 0.5*b + 0.1*float64(i%3)
	}
	fit := func() (Hyper, float64, []float64) {
		g, err := Fit(x, y, Options{Kernel: Matern52, Restarts: 3, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		mean, vr := make([]float64, 2), make([]float64, 2)
		if err := g.Predict([][]float64{{0.3, 0.7}, {0.9, 0.1}}, mean, vr); err != nil {
			t.Fatal(err)
		}
		return g.Hyper(), g.LogMarginalLikelihood(), append(mean, vr...)
	}
	for _, p := range []*bufferPool{&workspacePool, &kernelPool} {
		p.mu.Lock()
		p.free, p.floats = nil, 0
		p.mu.Unlock()
	}
	h1, l1, p1 := fit()
	if len(workspacePool.free) == 0 || len(kernelPool.free) == 0 {
		t.Fatal("the fit left no buffers in the pools")
	}
	h2, l2, p2 := fit()
	if l1 != l2 || !slices.Equal(p1, p2) || !slices.Equal(h1.Lengthscales, h2.Lengthscales) ||
		h1.SignalVariance != h2.SignalVariance || h1.NoiseVariance != h2.NoiseVariance {
		t.Fatalf("fits differ: LML %v vs %v, predictions %v vs %v", l1, l2, p1, p2)
	}
}

func TestBufferPoolHandsOutTheSmallestFit(t *testing.T) {
	var bp bufferPool
	large, small := make([]float64, 1000), make([]float64, 100)
	bp.put(&small)
	bp.put(&large)
	if got := bp.get(50, false); got != &small {
		t.Fatalf("got a buffer of capacity %d for 50 floats, want the one of 100", cap(*got))
	}
	if got := bp.get(500, false); got != &large {
		t.Fatalf("got a buffer of capacity %d for 500 floats, want the one of 1000", cap(*got))
	}
}
