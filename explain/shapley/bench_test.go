package shapley_test

import (
	"context"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"xbo/bench"
	"xbo/explain/shapley"
	"xbo/gp"
	"xbo/opt"
)

// mlpLikeGP is a GP on 123 observations in 7 dimensions, the size of the
// thesis' MLP surrogate at iteration 95 (4p design + 95 proposals).
func mlpLikeGP(b *testing.B) *gp.GP {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, p = 123, 7
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, p)
		for j := range x[i] {
			x[i][j] = rng.Float64()
		}
		v := x[i]
		y[i] = math.Sin(6*v[0])*v[1] + (v[2]-0.3)*(v[2]-0.3) + 0.5*v[3]*v[4] + 0.1*v[5] + 0.05*v[6] + 0.01*rng.NormFloat64()
	}
	g, err := gp.Fit(x, y, gp.Options{Kernel: gp.Matern32, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// cpuClock reports the process CPU time (user + system), so benchmarks can
// state the work done as well as the wall time, which on the shared 2-core
// machine depends on what everybody else runs.
func cpuClock() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric((cpuClock()-start).Seconds()/float64(b.N), "cpu-s/op")
}

var mlpPoint = []float64{0.31, 0.77, 0.28, 0.12, 0.9, 0.45, 0.6}

// One ShapleyMBO explanation with p = 7 and K = 20000 draws per parameter
// for cb, m and se (the thesis: 243 s in R, section 7.2).
func BenchmarkMonteCarloP7K20000(b *testing.B) {
	g := mlpLikeGP(b)
	f, err := shapley.LCB(g, 1)
	if err != nil {
		b.Fatal(err)
	}
	bg, err := shapley.UniformBackground(nil, 7, 7000, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuClock()
	defer reportCPU(b, cpu0)
	for b.Loop() {
		if _, err := shapley.Explain(context.Background(), f, mlpPoint, shapley.Options{Method: shapley.MonteCarlo, Samples: 20000, Background: bg}); err != nil {
			b.Fatal(err)
		}
	}
}

// Exact Shapley values at p = 7 over a 7000-point background: 127 coalitions
// × 7000 points through the GP.
func BenchmarkExactP7Background7000(b *testing.B) {
	g := mlpLikeGP(b)
	f, err := shapley.LCB(g, 1)
	if err != nil {
		b.Fatal(err)
	}
	bg, err := shapley.UniformBackground(nil, 7, 7000, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuClock()
	defer reportCPU(b, cpu0)
	for b.Loop() {
		if _, err := shapley.Explain(context.Background(), f, mlpPoint, shapley.Options{Method: shapley.Exact, Background: bg}); err != nil {
			b.Fatal(err)
		}
	}
}

// Desirability paths of a 100-iteration LCB run on the 4-d hyper-ellipsoid:
// every proposal explained (K = 1000, 4000-point background) with the
// surrogate of its own iteration rebuilt by opt.SurrogateAt, on all cores.
func BenchmarkPath100(b *testing.B) {
	f, _ := bench.Lookup(bench.NameHyperEllipsoid, 4)
	s, _ := f.Space()
	o, err := opt.New(opt.Config{Space: s, Strategy: "lcb", Tau: 1, Kernel: "matern32", InitialSize: 16, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	for range 116 {
		tr, err := o.Ask()
		if err != nil {
			b.Fatal(err)
		}
		if err := o.Tell(tr.ID, f.Eval(tr.Params)); err != nil {
			b.Fatal(err)
		}
	}
	hist := o.History()
	var iters []int
	for _, tr := range hist {
		if tr.Observed > 0 {
			iters = append(iters, tr.Number)
		}
	}
	if len(iters) != 100 {
		b.Fatalf("%d proposals", len(iters))
	}
	step := func(_ context.Context, it int) (shapley.Function, []float64, error) {
		m, err := o.SurrogateAt(hist[it].Observed)
		if err != nil {
			return nil, nil, err
		}
		fn, err := shapley.LCB(m, 1)
		return fn, hist[it].U, err
	}
	b.ResetTimer()
	cpu0 := cpuClock()
	defer reportCPU(b, cpu0)
	for b.Loop() {
		if _, err := shapley.ExplainPath(context.Background(), iters, step, shapley.Options{Method: shapley.MonteCarlo, Samples: 1000, Space: s}); err != nil {
			b.Fatal(err)
		}
	}
}
