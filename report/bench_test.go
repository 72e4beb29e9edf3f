package report

import (
	"context"
	"fmt"
	"testing"

	"xbo/bench"
)

// BenchmarkBuild times a whole report (default settings: G = 20, n = 1000,
// 1000 Shapley background points) on 100 trials of xbo's own optimizer:
// Hartmann3 (d = 3) and Styblinski–Tang (d = 8).
//
//	go test ./report -run '^$' -bench Build -benchtime 3x
func BenchmarkBuild(b *testing.B) {
	for _, c := range []struct {
		name string
		dim  int
	}{{bench.NameHartmann3, 0}, {bench.NameStyblinskiTang, 8}} {
		f, err := bench.Lookup(c.name, c.dim)
		if err != nil {
			b.Fatal(err)
		}
		sp, err := f.Space()
		if err != nil {
			b.Fatal(err)
		}
		in := optimize(b, sp, f.Eval, 100, 1)
		b.Run(fmt.Sprintf("%s/d=%d/T=100", c.name, sp.Dim()), func(b *testing.B) {
			for b.Loop() {
				// A fresh engine each time: a cached report would time nothing.
				if _, err := Build(context.Background(), engine(b), in, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
