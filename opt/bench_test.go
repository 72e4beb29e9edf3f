package opt

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"xbo/gp"
	"xbo/history"
	"xbo/space"
)

// unitSpace is d float parameters x0..x{d−1} on [0,1], so natural values
// equal unit-cube coordinates and benchmark data can be shared with gp's.
func unitSpace(tb testing.TB, d int) *space.Space {
	tb.Helper()
	params := make([]space.Param, d)
	for j := range params {
		params[j] = space.Param{Name: fmt.Sprintf("x%d", j), Type: space.Float, Low: 0, High: 1}
	}
	s, err := space.New(space.Minimize, params)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// sklearnTrainData is the T = 200, d = 6 training set that
// gp/testdata/sklearn_baseline.py also fits, so Go and scikit-learn time
// the same problem.
const sklearnTrainData = "../gp/testdata/bench_train_T200_d6.csv"

func readTrainCSV(tb testing.TB, path string) ([][]float64, []float64) {
	tb.Helper()
	file, err := os.Open(filepath.FromSlash(path))
	if err != nil {
		tb.Skipf("benchmark data not available: %v", err)
	}
	defer file.Close()
	rows, err := csv.NewReader(file).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	var x [][]float64
	var y []float64
	for i, r := range rows {
		vals := make([]float64, len(r))
		for j, s := range r {
			if vals[j], err = strconv.ParseFloat(s, 64); err != nil {
				tb.Fatalf("%s row %d: %v", path, i, err)
			}
		}
		x = append(x, vals[:len(vals)-1])
		y = append(y, vals[len(vals)-1])
	}
	return x, y
}

// syntheticData draws T uniform points with a smooth d-dimensional response
// plus 1% noise.
func syntheticData(seed uint64, n, d int) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		var v float64
		for j := range x[i] {
			x[i][j] = rng.Float64()
			v += math.Sin(3*x[i][j]+float64(j)) * float64(j+1) / float64(d)
		}
		y[i] = v + 0.01*rng.NormFloat64()
	}
	return x, y
}

// steadyStateHistory turns observations into a completed history whose last
// trial carries the hyperparameters of a full fit on all but the last
// observation, as the optimizer itself would have recorded them; an
// optimizer built from it is in the steady state of a long run and its next
// Ask runs one warm-started L-BFGS start (Config.FullRefitEvery permitting).
func steadyStateHistory(tb testing.TB, x [][]float64, y []float64, restarts int) []Trial {
	tb.Helper()
	prev, err := gp.Fit(x[:len(x)-1], y[:len(y)-1], gp.Options{Kernel: gp.Matern52, Restarts: restarts, Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	h := prev.Hyper()
	hist := make([]Trial, len(x))
	for i := range x {
		hist[i] = Trial{Params: x[i], State: Complete, Value: y[i], Acquisition: "ei"}
	}
	hist[len(hist)-1].Hyper = &h
	hist[len(hist)-1].Observed = len(x) - 1
	return hist
}

// benchmarkAsk times one Ask on a rebuilt optimizer: refit (warm start, one
// L-BFGS start), 1500 random candidates, pattern-search refinement.
func benchmarkAsk(b *testing.B, s *space.Space, hist []Trial, cfg Config) {
	cfg.Space, cfg.History, cfg.Seed = s, hist, 1
	peak := startPeakHeap()
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		o, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0 := processCPU()
		tr, err := o.Ask()
		cpu += processCPU() - cpu0
		if err != nil {
			b.Fatal(err)
		}
		if tr.Acquisition != "ei" {
			b.Fatalf("Ask proposed by %q", tr.Acquisition)
		}
	}
	b.ReportMetric(float64(peak.stop())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// processCPU is the process's user + system CPU time: on the shared machine
// wall time depends on the other jobs, CPU time much less.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAskT200D6 is the speed check: one Ask with T = 200
// observations in d = 6, the GP refit included (warm-started as in a run).
func BenchmarkAskT200D6(b *testing.B) {
	x, y := readTrainCSV(b, sklearnTrainData)
	benchmarkAsk(b, unitSpace(b, 6), steadyStateHistory(b, x, y, 3), Config{})
}

// BenchmarkAskT200D6Full is the same Ask when it falls on a full refit
// (3 L-BFGS starts), which happens every FullRefitEvery observations.
func BenchmarkAskT200D6Full(b *testing.B) {
	x, y := readTrainCSV(b, sklearnTrainData)
	benchmarkAsk(b, unitSpace(b, 6), steadyStateHistory(b, x, y, 3), Config{FullRefitEvery: -1})
}

// BenchmarkAskT1000D10 is the memory check: peak-heap-MB of an Ask at
// T = 1000, d = 10 must stay below 200.
func BenchmarkAskT1000D10(b *testing.B) {
	x, y := syntheticData(3, 1000, 10)
	// One start for the set-up fit: it only provides the warm start.
	benchmarkAsk(b, unitSpace(b, 10), steadyStateHistory(b, x, y, 1), Config{})
}

// peakHeap samples the heap in use (object bytes plus unused bytes of
// in-use spans, i.e. MemStats.HeapInuse) every millisecond in the background
// and keeps the maximum: B/op counts allocations, not the memory held at
// once. runtime/metrics reads without stopping the world, unlike
// runtime.ReadMemStats, so sampling does not slow the benchmark.
type peakHeap struct {
	max  atomic.Uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func startPeakHeap() *peakHeap {
	runtime.GC()
	p := &peakHeap{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		samples := []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/unused:bytes"},
		}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			if inUse := samples[0].Value.Uint64() + samples[1].Value.Uint64(); inUse > p.max.Load() {
				p.max.Store(inUse)
			}
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *peakHeap) stop() uint64 {
	close(p.done)
	p.wg.Wait()
	return p.max.Load()
}

// BenchmarkAskT200D6Pending32 is the same Ask as the tuning service makes it
// with 32 workers busy: 32 trials pending, on which the proposal's GP is
// conditioned with their lies (constant liar) before the acquisition is
// maximized.
func BenchmarkAskT200D6Pending32(b *testing.B) {
	x, y := readTrainCSV(b, sklearnTrainData)
	hist := steadyStateHistory(b, x, y, 3)
	px, _ := syntheticData(5, 32, 6)
	for _, p := range px {
		hist = append(hist, Trial{Params: p, State: Pending, Acquisition: "ei"})
	}
	benchmarkAsk(b, unitSpace(b, 6), hist, Config{})
}

// BenchmarkAskLong times one Ask of a long study in d = 6 at T = 1,000 and
// 5,000: beyond 256 completed trials the GP is a
// gp.Subset. A rebuilt optimizer refits the hyperparameters (warm) at its
// first Ask, so this is the cost of an ask that refits; the asks in between
// keep them fixed (see BenchmarkAskLongFixed).
func BenchmarkAskLong(b *testing.B) {
	for _, c := range []struct {
		T     int
		trust string
	}{{1000, "alternate"}, {1000, "none"}, {5000, "alternate"}, {5000, "none"}} {
		T := c.T
		// Ask number T is even: a confined ask (unwarped, warm-started from
		// the recorded fit) under "alternate"; under "none" a whole-space ask,
		// whose warped model has no recorded fit and is fitted afresh.
		b.Run(fmt.Sprintf("T%d/trust=%s", T, c.trust), func(b *testing.B) {
			x, y := syntheticData(7, T, 6)
			// The recorded hyperparameters come from a fit on 256 trials,
			// as a long run's subset would have them.
			short := steadyStateHistory(b, x[:256], y[:256], 1)
			hist := make([]Trial, T)
			for i := range x {
				hist[i] = Trial{Params: x[i], State: Complete, Value: y[i], Acquisition: "ei"}
			}
			hist[T-1].Hyper, hist[T-1].Observed = short[255].Hyper, T-1
			benchmarkAsk(b, unitSpace(b, 6), hist, Config{TrustRegion: c.trust})
		})
	}
}

// BenchmarkAskPruned times one Ask of a study whose pruner stopped most
// trials: 200 complete trials (sklearnTrainData) and 500 to 5,000 pruned
// ones, with the ordinary proposals (pruned trials conditioned on as
// failures, at most ExactPoints of them: stoppedToCondition) and with the
// multi-fidelity proposals (Config.Resource: pruned trials are the
// configuration × budget model's data).
func BenchmarkAskPruned(b *testing.B) {
	x, y := readTrainCSV(b, sklearnTrainData)
	complete := steadyStateHistory(b, x, y, 1)
	for i := range complete {
		v := complete[i].Value
		complete[i].Curve = []history.Intermediate{{Step: 1, Value: v + 1}, {Step: 9, Value: v + 0.3}, {Step: 27, Value: v}}
	}
	for _, k := range []int{500, 2000, 5000} {
		px, py := syntheticData(9, k, 6)
		hist := slices.Clone(complete)
		for i, p := range px {
			hist = append(hist, Trial{Params: p, State: Pruned, Acquisition: "ei", Curve: []history.Intermediate{{Step: 1, Value: py[i] + 1}}})
		}
		for _, proposals := range []string{"ordinary", "multifidelity"} {
			b.Run(fmt.Sprintf("pruned%d/%s", k, proposals), func(b *testing.B) {
				var cfg Config
				if proposals == "multifidelity" {
					cfg.Resource = &Resource{Name: "epochs", Min: 1, Max: 27}
				}
				benchmarkAsk(b, unitSpace(b, 6), hist, cfg)
			})
		}
	}
}

// BenchmarkParEGOAskT200D6 is one ParEGO ask at the state of
// BenchmarkAskT200D6 with a second objective (the parameters' sum): a new
// scalarization, the single-objective optimizer rebuilt from the
// scalarized history (warm-started from the last proposal's
// hyperparameters) and its Ask. The target is at most twice the
// single-objective ask.
func BenchmarkParEGOAskT200D6(b *testing.B) {
	x, y := readTrainCSV(b, sklearnTrainData)
	hist := steadyStateHistory(b, x, y, 3)
	p, err := NewParEGO(Config{Space: unitSpace(b, 6), Seed: 1}, []space.Direction{space.Minimize, space.Minimize})
	if err != nil {
		b.Fatal(err)
	}
	for i, t := range hist {
		t.ID, t.Completion = int64(i+1), i
		p.trials = append(p.trials, t)
		sum := 0.0
		for _, v := range t.Params {
			sum += v
		}
		p.values[t.ID] = []float64{t.Value, sum}
	}
	n := len(p.trials)
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		cpu0 := processCPU()
		tr, err := p.Ask()
		cpu += processCPU() - cpu0
		if err != nil {
			b.Fatal(err)
		}
		if tr.Acquisition != "ei" {
			b.Fatalf("Ask proposed by %q", tr.Acquisition)
		}
		b.StopTimer()
		p.trials = p.trials[:n]
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkEHVIAskT200D6 is BenchmarkParEGOAskT200D6 for EHVI, with two
// objectives (the value and the parameters' sum) and with three (and the
// sum of squares), as in a study: each ask is followed by the tell of its
// trial (its value the nearest training row's), so the models are
// refitted on their schedule (ehviFit) from T = 200 on, the first ask
// with three starts.
func BenchmarkEHVIAskT200D6(b *testing.B) {
	for _, m := range []int{2, 3} {
		b.Run(fmt.Sprintf("objectives=%d", m), func(b *testing.B) {
			x, y := readTrainCSV(b, sklearnTrainData)
			hist := steadyStateHistory(b, x, y, 3)
			e, err := NewEHVI(Config{Space: unitSpace(b, 6), Seed: 1}, slices.Repeat([]space.Direction{space.Minimize}, m))
			if err != nil {
				b.Fatal(err)
			}
			objectives := func(u []float64, v float64) []float64 {
				sum, sq := 0.0, 0.0
				for _, c := range u {
					sum += c
					sq += c * c
				}
				return []float64{v, sum, sq}[:m]
			}
			p := e.p
			for i, t := range hist {
				t.ID, t.Completion = int64(i+1), i
				p.trials = append(p.trials, t)
				p.values[t.ID] = objectives(t.Params, t.Value)
			}
			b.ReportAllocs()
			var cpu time.Duration
			b.ResetTimer()
			for b.Loop() {
				cpu0 := processCPU()
				tr, err := e.Ask()
				cpu += processCPU() - cpu0
				if err != nil {
					b.Fatal(err)
				}
				if tr.Acquisition != "ehvi" {
					b.Fatalf("Ask proposed by %q (%s)", tr.Acquisition, tr.Note)
				}
				b.StopTimer()
				nearest, best := 0, math.Inf(1)
				for i, row := range x {
					if d := unitDistance(row, tr.U); d < best {
						nearest, best = i, d
					}
				}
				if err := e.Tell(tr.ID, objectives(tr.Params, y[nearest]), nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkAskTellLong times the asks of a running long study in d = 6: an
// optimizer holding T completed trials asks, and the proposal is told a
// value, b.N times. Unlike BenchmarkAskLong, whose every ask is the first of
// a rebuilt optimizer, this is the amortized cost a service pays per ask,
// hyperparameter refits (once the data grew by a tenth) included.
func BenchmarkAskTellLong(b *testing.B) {
	for _, T := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("T%d", T), func(b *testing.B) {
			x, y := syntheticData(7, T+4096, 6)
			short := steadyStateHistory(b, x[:256], y[:256], 1)
			hist := make([]Trial, T)
			for i := range hist {
				hist[i] = Trial{Params: x[i], State: Complete, Value: y[i], Acquisition: "ei"}
			}
			hist[T-1].Hyper, hist[T-1].Observed = short[255].Hyper, T-1
			o, err := New(Config{Space: unitSpace(b, 6), History: hist, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			peak := startPeakHeap()
			var cpu time.Duration
			b.ResetTimer()
			for b.Loop() {
				cpu0 := processCPU()
				tr, err := o.Ask()
				cpu += processCPU() - cpu0
				if err != nil {
					b.Fatal(err)
				}
				v := 0.0
				for j, u := range tr.U {
					v += math.Sin(3*u+float64(j)) * float64(j+1) / 6
				}
				if err := o.Tell(tr.ID, v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak.stop())/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
