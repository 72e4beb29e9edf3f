package gp

import (
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// The benchmark data live in testdata so that testdata/sklearn_baseline.py
// times scikit-learn on exactly the same problem. Regenerate with
//
//	go test ./gp -run TestWriteBenchData -gen
var genBenchData = flag.Bool("gen", false, "rewrite testdata/bench_*.csv")

// hartmann6 is the six-dimensional Hartmann function on [0,1]^6.
func hartmann6(x []float64) float64 {
	alpha := [4]float64{1.0, 1.2, 3.0, 3.2}
	a := [4][6]float64{
		{10, 3, 17, 3.5, 1.7, 8},
		{0.05, 10, 17, 0.1, 8, 14},
		{3, 3.5, 1.7, 10, 17, 8},
		{17, 8, 0.05, 10, 0.1, 14},
	}
	p := [4][6]float64{
		{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
		{0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
		{0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
		{0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381},
	}
	s := 0.0
	for i := range 4 {
		e := 0.0
		for j := range 6 {
			d := x[j] - p[i][j]
			e += a[i][j] * d * d
		}
		s -= alpha[i] * math.Exp(-e)
	}
	return s
}

// benchProblem draws T uniform training points with y = f(x) + N(0, noise²)
// for a d-dimensional function (Hartmann6 when d = 6, otherwise a smooth
// anisotropic sum) and m uniform candidates.
func benchProblem(seed uint64, t, d, m int, noise float64) (x [][]float64, y []float64, cand [][]float64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	f := func(u []float64) float64 {
		if d == 6 {
			return hartmann6(u)
		}
		s := 0.0
		for j, v := range u {
			s += math.Sin(3*v*float64(j+1)) / float64(j+1)
		}
		return s
	}
	x = make([][]float64, t)
	y = make([]float64, t)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = rng.Float64()
		}
		y[i] = f(x[i]) + noise*rng.NormFloat64()
	}
	cand = make([][]float64, m)
	for i := range cand {
		cand[i] = make([]float64, d)
		for j := range cand[i] {
			cand[i][j] = rng.Float64()
		}
	}
	return x, y, cand
}

func writeCSV(path string, rows [][]float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	for _, r := range rows {
		rec := make([]string, len(r))
		for j, v := range r {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if err := w.Write(rec); err != nil {
			f.Close()
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readCSV(path string) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	rows := make([][]float64, len(recs))
	for i, r := range recs {
		rows[i] = make([]float64, len(r))
		for j, s := range r {
			if rows[i][j], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("%s row %d: %w", path, i, err)
			}
		}
	}
	return rows, nil
}

const (
	benchTrain = "testdata/bench_train_T200_d6.csv" // x0..x5, y
	benchCand  = "testdata/bench_cand_1500_d6.csv"
)

func TestWriteBenchData(t *testing.T) {
	if !*genBenchData {
		t.Skip("run with -gen to rewrite the benchmark data")
	}
	x, y, cand := benchProblem(20261101, 200, 6, 1500, 0.01)
	rows := make([][]float64, len(x))
	for i := range x {
		rows[i] = append(append([]float64{}, x[i]...), y[i])
	}
	if err := writeCSV(filepath.FromSlash(benchTrain), rows); err != nil {
		t.Fatal(err)
	}
	if err := writeCSV(filepath.FromSlash(benchCand), cand); err != nil {
		t.Fatal(err)
	}
}

func loadBench(b *testing.B) (x [][]float64, y []float64, cand [][]float64) {
	b.Helper()
	rows, err := readCSV(filepath.FromSlash(benchTrain))
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range rows {
		x = append(x, r[:len(r)-1])
		y = append(y, r[len(r)-1])
	}
	if cand, err = readCSV(filepath.FromSlash(benchCand)); err != nil {
		b.Fatal(err)
	}
	return x, y, cand
}

// BenchmarkAskCold is the optimizer's Ask without a warm start: a fit with
// 3 L-BFGS restarts, then mean and variance at 1500 candidates.
func BenchmarkAskCold(b *testing.B) {
	x, y, cand := loadBench(b)
	mean, vr := make([]float64, len(cand)), make([]float64, len(cand))
	b.ReportAllocs()
	var g *GP
	for b.Loop() {
		var err error
		g, err = Fit(x, y, Options{Kernel: Matern52, Restarts: 3, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Predict(cand, mean, vr); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(g.LogMarginalLikelihood(), "LML")
}

// BenchmarkAskWarm is the optimizer's Ask in steady state: one L-BFGS run
// started from the previous iteration's hyperparameters (here the cold fit's
// optimum on the data without its last observation), then 1500 predictions.
func BenchmarkAskWarm(b *testing.B) {
	x, y, cand := loadBench(b)
	prev, err := Fit(x[:len(x)-1], y[:len(y)-1], Options{Kernel: Matern52, Restarts: 3, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	init := prev.Hyper()
	mean, vr := make([]float64, len(cand)), make([]float64, len(cand))
	b.ReportAllocs()
	var g *GP
	for b.Loop() {
		var err error
		g, err = Fit(x, y, Options{Kernel: Matern52, Restarts: 1, Init: &init})
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Predict(cand, mean, vr); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(g.LogMarginalLikelihood(), "LML")
}

func BenchmarkPredict1500(b *testing.B) {
	x, y, cand := loadBench(b)
	g, err := Fit(x, y, Options{Kernel: Matern52, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	mean, vr := make([]float64, len(cand)), make([]float64, len(cand))
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Predict(cand, mean, vr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAverageVariance is one PDP grid point's exact band: n = 1000
// points against T = 200 observations.
func BenchmarkAverageVariance(b *testing.B) {
	x, y, _ := loadBench(b)
	g, err := Fit(x, y, Options{Kernel: Matern52, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	_, _, pts := benchProblem(7, 0, 6, 1000, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.AverageVariance(pts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAskLarge measures time and peak heap of an Ask at T = 1000, d = 10
// (1500 candidates), warm-started with one restart as in the optimizer's
// steady state and cold with three restarts. peak-heap-MB is the largest
// HeapInuse seen by a sampler goroutine during the loop (it includes the
// benchmark's own data, about 1 MB).
func BenchmarkAskLarge(b *testing.B) {
	x, y, cand := benchProblem(3, 1000, 10, 1500, 0.01)
	prev, err := Fit(x[:990], y[:990], Options{Kernel: Matern52, Restarts: 1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	init := prev.Hyper()
	for _, bc := range []struct {
		name string
		opt  Options
	}{
		{"warm", Options{Kernel: Matern52, Restarts: 1, Init: &init}},
		{"cold3", Options{Kernel: Matern52, Restarts: 3, Seed: 1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			mean, vr := make([]float64, len(cand)), make([]float64, len(cand))
			runtime.GC()
			peak := newPeakSampler()
			b.ReportAllocs()
			for b.Loop() {
				g, err := Fit(x, y, bc.opt)
				if err != nil {
					b.Fatal(err)
				}
				if err := g.Predict(cand, mean, vr); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak.stop())/(1<<20), "peak-heap-MB")
		})
	}
}

// BenchmarkLML is one evaluation of the log marginal likelihood and its
// gradient at T = 200, d = 6 (the benchmark data), the unit of every
// hyperparameter fit, on one goroutine (as when restarts run in parallel)
// and on two.
func BenchmarkLML(b *testing.B) {
	x, y, _ := loadBench(b)
	g, err := Fit(x, y, Options{Kernel: Matern52, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ystd := make([]float64, len(y))
	for i, v := range y {
		ystd[i] = (v - g.out.Mean) / g.out.Std
	}
	p := &problem{kernel: Matern52, n: g.n, d: g.dim, x: g.x, y: ystd, cat: g.cat, minNoise: DefaultMinNoise}
	theta := p.toTheta(g.Hyper())
	grad := make([]float64, len(theta))
	for _, parallel := range []bool{false, true} {
		name := "serial"
		if parallel {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			w := p.newWorkspace()
			w.parallel = parallel
			for b.Loop() {
				if _, err := w.lml(theta, grad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
