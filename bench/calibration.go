package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"text/tabwriter"

	"xbo/explain"
	"xbo/history"
	"xbo/opt"
	"xbo/space"
)

// CalibrationOptions configures Calibration: how well the PDP bands of the
// explanation engine cover the true partial dependence.
type CalibrationOptions struct {
	// Functions are "name" or "name:dim" specs (default CalibrationFunctions).
	Functions []string
	// Sizes are evaluations per dimension (default 10 and 25): each data
	// kind is evaluated at both, the smaller one a prefix of the larger.
	Sizes []int
	// Data kinds among "uniform", "ei" and "lcb" (LCB with τ = 0.1); default
	// all three.
	Data []string
	// Surrogates among "gp" and "forest" (default both); Bands the band
	// estimators compared (default calibrated, approx and exact).
	Surrogates []string
	Bands      []string
	// Seeds per cell (default 3); Samples the PDPs' Monte Carlo points
	// (default 1000); TruthSamples the Monte Carlo points of the true PD per
	// grid value (default 20,000).
	Seeds, Samples, TruthSamples int
	// Workers run cells in parallel (default GOMAXPROCS).
	Workers  int
	Progress func(done, total int)
}

// CalibrationFunctions is the default suite: known functions with d from 2
// to 8, smooth and rugged, and a conditional mixed space.
var CalibrationFunctions = []string{NameBranin, NameHartmann3, NameStyblinskiTang + ":3", NameCosineMixture + ":4",
	NameConditional, NameHartmann6, NameHyperEllipsoid + ":8"}

// CalibrationCell is one (function, data, size, surrogate, band) cell,
// pooled over seeds, parameters and grid points.
type CalibrationCell struct {
	Function  string `json:"function"`
	Data      string `json:"data"`
	Trials    int    `json:"trials"`
	Surrogate string `json:"surrogate"`
	Band      string `json:"band"`
	BandCoverage
}

// BandCoverage is how well PDP bands covered the true PD over a set of
// points.
type BandCoverage struct {
	// Points is the number of (seed, parameter, grid value) triples.
	Points int `json:"points"`
	// Coverage95 and Coverage68 are the fractions of points whose nominal
	// 95% and 68% bands contain the true PD.
	Coverage95 float64 `json:"coverage95"`
	Coverage68 float64 `json:"coverage68"`
	// WidthRatio is the mean 95% half-width divided by the mean absolute
	// error (about 2.5 for a calibrated Gaussian band).
	WidthRatio float64 `json:"width_ratio"`
	MAE        float64 `json:"mae"`
}

// bandCoverage turns counts and sums into a BandCoverage.
func bandCoverage(points, c95, c68 int, hw, ae float64) BandCoverage {
	n := float64(points)
	return BandCoverage{Points: points, Coverage95: float64(c95) / n, Coverage68: float64(c68) / n,
		WidthRatio: hw / math.Max(ae, 1e-300), MAE: ae / n}
}

// Calibration runs the suite and returns one cell per combination.
func Calibration(ctx context.Context, o CalibrationOptions) ([]CalibrationCell, error) {
	if len(o.Functions) == 0 {
		o.Functions = CalibrationFunctions
	}
	if len(o.Sizes) == 0 {
		o.Sizes = []int{10, 25}
	}
	if len(o.Data) == 0 {
		o.Data = []string{"uniform", "ei", "lcb"}
	}
	if len(o.Surrogates) == 0 {
		o.Surrogates = []string{explain.SurrogateGP, explain.SurrogateForest}
	}
	if len(o.Bands) == 0 {
		o.Bands = []string{explain.BandCalibrated, explain.BandApprox, explain.BandExact}
	}
	if o.Seeds == 0 {
		o.Seeds = 3
	}
	if o.Samples == 0 {
		o.Samples = 1000
	}
	if o.TruthSamples == 0 {
		o.TruthSamples = 20000
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Seeds < 1 || o.Samples < 10 || o.TruthSamples < 100 || o.Workers < 1 {
		return nil, fmt.Errorf("bench: calibration: seeds %d, samples %d, truth samples %d and workers %d out of range", o.Seeds, o.Samples, o.TruthSamples, o.Workers)
	}
	for _, d := range o.Data {
		if d != "uniform" && d != "ei" && d != "lcb" {
			return nil, fmt.Errorf("bench: calibration: data %q: want uniform, ei or lcb", d)
		}
	}
	for _, s := range o.Sizes {
		if s < 2 || s > 200 {
			return nil, fmt.Errorf("bench: calibration: size %d per dimension out of 2..200", s)
		}
	}
	maxSize := slices.Max(o.Sizes)

	type job struct {
		fn   string
		data string
		seed int
	}
	var jobs []job
	for _, fn := range o.Functions {
		for _, d := range o.Data {
			for seed := 1; seed <= o.Seeds; seed++ {
				jobs = append(jobs, job{fn, d, seed})
			}
		}
	}
	// One job draws a data set of the largest size, then explains every
	// prefix size with every surrogate and band.
	type tally struct {
		points, c95, c68 int
		hw, ae           float64
	}
	key := func(fn, data string, trials int, sur, band string) string {
		return fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s", fn, data, trials, sur, band)
	}
	results := make([]map[string]*tally, len(jobs))
	err := parallelDo(ctx, len(jobs), o.Workers, o.Progress, func(k int) error {
		j := jobs[k]
		name, dim, err := ParseFunctionSpec(j.fn)
		if err != nil {
			return err
		}
		f, err := Lookup(name, dim)
		if err != nil {
			return err
		}
		sp, err := f.Space()
		if err != nil {
			return err
		}
		u, y, err := calibrationData(ctx, f, j.data, maxSize*f.Dim, uint64(j.seed))
		if err != nil {
			return fmt.Errorf("%s %s seed %d: %w", j.fn, j.data, j.seed, err)
		}
		truth := newTruePD(f.Eval, f.PartialDependence, sp, o.TruthSamples, uint64(1000+j.seed))
		engine, err := explain.New(explain.Config{Concurrency: 1, Workers: 1})
		if err != nil {
			return err
		}
		defer engine.Close()
		out := map[string]*tally{}
		for _, size := range o.Sizes {
			n := size * f.Dim
			h := calibrationHistory(sp, u[:n], y[:n])
			for _, sur := range o.Surrogates {
				for _, band := range o.Bands {
					t := &tally{}
					for p := range sp.Params {
						res, err := engine.PDP(ctx, h, explain.PDPRequest{Params: []string{sp.Params[p].Name}, Samples: o.Samples,
							Band: band, Surrogate: explain.Surrogate{Kind: sur}})
						if err != nil {
							return fmt.Errorf("%s %s n=%d %s %s: %w", j.fn, j.data, n, sur, band, err)
						}
						for g, v := range res.Grid {
							tv := truth.at(p, v)
							e := math.Abs(res.Mean[g] - tv)
							t.points++
							t.ae += e
							t.hw += (res.Upper[g] - res.Lower[g]) / 2
							if covers(res.Mean[g], res.Lower[g], res.Upper[g], tv, 1) {
								t.c95++
							}
							if covers(res.Mean[g], res.Lower[g], res.Upper[g], tv, z68/z95) {
								t.c68++
							}
						}
					}
					out[key(j.fn, j.data, n, sur, band)] = t
				}
			}
		}
		results[k] = out
		return nil
	})
	if err != nil {
		return nil, err
	}
	var cells []CalibrationCell
	for _, fn := range o.Functions {
		name, dim, _ := ParseFunctionSpec(fn)
		f, _ := Lookup(name, dim)
		for _, d := range o.Data {
			for _, size := range o.Sizes {
				for _, sur := range o.Surrogates {
					for _, band := range o.Bands {
						sum := tally{}
						kk := key(fn, d, size*f.Dim, sur, band)
						for _, r := range results {
							if t, ok := r[kk]; ok {
								sum.points += t.points
								sum.c95 += t.c95
								sum.c68 += t.c68
								sum.hw += t.hw
								sum.ae += t.ae
							}
						}
						if sum.points == 0 {
							continue
						}
						cells = append(cells, CalibrationCell{Function: fn, Data: d, Trials: size * f.Dim, Surrogate: sur, Band: band,
							BandCoverage: bandCoverage(sum.points, sum.c95, sum.c68, sum.hw, sum.ae)})
					}
				}
			}
		}
	}
	return cells, nil
}

// calibrationData evaluates f at n configurations: uniform, or proposed by
// xbo's optimizer with EI or LCB (τ = 0.1). It returns unit-cube rows and
// values.
func calibrationData(ctx context.Context, f *Function, kind string, n int, seed uint64) ([][]float64, []float64, error) {
	sp, err := f.Space()
	if err != nil {
		return nil, nil, err
	}
	if kind == "uniform" {
		rng := rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909))
		u := sp.Sample(rng, n)
		y := make([]float64, n)
		for i, row := range u {
			y[i] = f.Eval(sp.Decode(row))
		}
		return u, y, nil
	}
	strategy, tau := "ei", 0.0
	if kind == "lcb" {
		strategy, tau = "lcb", 0.1
	}
	// The BO data are those of Moosbauer et al. 2021: the acquisition over the
	// whole space, without the optimizer's trust region, output warp or
	// lengthscale prior, as when the bands were measured.
	r, err := Run(ctx, RunOptions{Function: f.Name, Dim: f.Dim, Budget: n, Seed: seed, Strategy: strategy, Tau: tau,
		Config: &opt.Config{TrustRegion: "none", OutputWarp: "none", LengthscalePrior: "none"}})
	if err != nil {
		return nil, nil, err
	}
	var u [][]float64
	var y []float64
	for _, t := range r.History {
		if t.State == opt.Complete {
			u = append(u, t.U)
			y = append(y, t.Value)
		}
	}
	if len(y) < n {
		return nil, nil, fmt.Errorf("the run completed %d of %d evaluations", len(y), n)
	}
	return u, y, nil
}

func calibrationHistory(sp *space.Space, u [][]float64, y []float64) *history.History {
	h := &history.History{Name: "calibration", Space: sp}
	for i := range u {
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: sp.Decode(u[i]),
			Value: y[i], Completion: i})
	}
	return h
}

// truePD is the true partial dependence of a function by Monte Carlo with a
// fixed sample (or the exact one where the function has it), memoized, under
// the reference measure of explain/pdp: uniform unit-cube rows with the
// parameter set to the grid value and then repaired onto the space, so a
// conditional child takes a uniform value when its parent switches it on; a
// child's PD averages over the rows where it is active. It is safe for
// concurrent use.
type truePD struct {
	eval  func([]float64) float64
	exact func(p int, v float64) (float64, bool) // nil: none
	sp    *space.Space
	raw   [][]float64
	mu    sync.Mutex
	memo  map[[2]float64][2]float64 // (p, v) → (PD, standard error)
}

func newTruePD(eval func([]float64) float64, exact func(int, float64) (float64, bool), sp *space.Space, n int, seed uint64) *truePD {
	rng := rand.New(rand.NewPCG(seed, seed^0xbb67ae8584caa73b))
	raw := make([][]float64, n)
	for i := range raw {
		raw[i] = make([]float64, sp.Dim())
		for j := range raw[i] {
			raw[i][j] = rng.Float64()
		}
	}
	return &truePD{eval: eval, exact: exact, sp: sp, raw: raw, memo: map[[2]float64][2]float64{}}
}

// at is the PD of parameter p at its natural value v (NaN when p is never
// active in the sample).
func (t *truePD) at(p int, v float64) float64 {
	pd, _ := t.withError(p, v)
	return pd
}

// withError is the PD and the standard error of its Monte Carlo estimate
// (0 when exact).
func (t *truePD) withError(p int, v float64) (pd, se float64) {
	k := [2]float64{float64(p), v}
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.memo[k]; ok {
		return r[0], r[1]
	}
	if t.exact != nil {
		if pd, ok := t.exact(p, v); ok {
			t.memo[k] = [2]float64{pd, 0}
			return pd, 0
		}
	}
	var sum, sum2 float64
	count := 0
	u := make([]float64, t.sp.Dim())
	target := t.sp.Params[p].ToUnit(v)
	for _, row := range t.raw {
		copy(u, row)
		u[p] = target
		t.sp.Repair(u)
		x := t.sp.Decode(u)
		if math.IsNaN(x[p]) {
			continue
		}
		y := t.eval(x)
		sum += y
		sum2 += y * y
		count++
	}
	pd, se = math.NaN(), math.NaN()
	if count > 0 {
		n := float64(count)
		pd = sum / n
		se = math.Sqrt(math.Max(0, sum2/n-pd*pd) / n)
	}
	t.memo[k] = [2]float64{pd, se}
	return pd, se
}

// WriteCalibrationTable prints the cells and, per surrogate and band, the
// pooled coverage, the range of the cells' coverages and the pooled width
// ratio.
func WriteCalibrationTable(w io.Writer, cells []CalibrationCell) error {
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "function\tdata\tT\tsurrogate\tband\tpoints\tcover95\tcover68\thw/MAE\tMAE\t")
	for _, c := range cells {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.3g\t\n", c.Function, c.Data, c.Trials, c.Surrogate, c.Band,
			c.Points, c.Coverage95, c.Coverage68, c.WidthRatio, c.MAE)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	type pool struct {
		points, c95, c68 float64
		lo, hi           float64
		hw, ae           float64
	}
	pools := map[string]*pool{}
	var order []string
	for _, c := range cells {
		k := c.Surrogate + " " + c.Band
		p, ok := pools[k]
		if !ok {
			p = &pool{lo: 1, hi: 0}
			pools[k] = p
			order = append(order, k)
		}
		n := float64(c.Points)
		p.points += n
		p.c95 += c.Coverage95 * n
		p.c68 += c.Coverage68 * n
		p.lo, p.hi = math.Min(p.lo, c.Coverage95), math.Max(p.hi, c.Coverage95)
		p.hw += c.WidthRatio * c.MAE * n
		p.ae += c.MAE * n
	}
	fmt.Fprintln(w, "\nPooled over cells (targets for the default band: 95% coverage in [0.90, 0.98], every cell in [0.80, 0.99], hw/MAE ≤ 4):")
	tw = tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "surrogate band\tcover95\tcells' cover95\tcover68\thw/MAE\t")
	for _, k := range order {
		p := pools[k]
		fmt.Fprintf(tw, "%s\t%.3f\t%.2f–%.2f\t%.3f\t%.2f\t\n", k, p.c95/p.points, p.lo, p.hi, p.c68/p.points, p.hw/p.ae)
	}
	return tw.Flush()
}
