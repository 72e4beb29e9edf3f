package pdp_test

import (
	"context"
	"testing"

	"xbo/explain/pdp"
)

// BenchmarkGlobalPDPsExact computes the PDP of every parameter of an
// 8-dimensional GP fitted to T = 200 points, with n = 1000 Monte Carlo points,
// G = 20 and exact (eq. 4) bands. Target: under 2 s per op on this machine.
func BenchmarkGlobalPDPsExact(b *testing.B) {
	model, sp, _ := fitStyblinskiTang(b, 8, 200, 1)
	b.ResetTimer()
	for b.Loop() {
		for j := range sp.Dim() {
			if _, err := pdp.Compute(context.Background(), model, sp, []string{sp.Params[j].Name}, pdp.Options{Band: pdp.BandExact, Seed: 1}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkGlobalPDPsApprox is the same with the paper's default eq. 5 band.
func BenchmarkGlobalPDPsApprox(b *testing.B) {
	model, sp, _ := fitStyblinskiTang(b, 8, 200, 1)
	b.ResetTimer()
	for b.Loop() {
		for j := range sp.Dim() {
			if _, err := pdp.Compute(context.Background(), model, sp, []string{sp.Params[j].Name}, pdp.Options{Seed: 1}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
