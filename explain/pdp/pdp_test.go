package pdp_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"xbo/explain/pdp"
	"xbo/space"
)

func unitSpace(t testing.TB, d int) *space.Space {
	t.Helper()
	var ps []space.Param
	for j := range d {
		ps = append(ps, space.Param{Name: "x" + string(rune('0'+j)), Type: space.Float, Low: 0, High: 1})
	}
	sp, err := space.New(space.Minimize, ps)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// Eq. 4 computed through AverageVariance must equal the brute-force
// 1ᵀK̂1/n² from the full posterior covariance, and never exceed eq. 5.
func TestExactBandEqualsBruteForceAndIsBelowApprox(t *testing.T) {
	sp := unitSpace(t, 3)
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := uniformData(rng, 30, 3, 0.3, quadratic)
	model, err := fitBLR(x, y, 0.3, 3)
	if err != nil {
		t.Fatal(err)
	}
	opts := pdp.Options{GridSize: 7, Samples: 150, Seed: 3, Band: pdp.BandExact}
	ice, err := pdp.NewICE(context.Background(), model, sp, []int{0}, opts)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := ice.PDP(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Band = pdp.BandApprox
	approx, err := pdp.Compute(context.Background(), model, sp, []string{"x0"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if exact.Band != pdp.BandExact || approx.Band != pdp.BandApprox {
		t.Fatalf("band labels %q, %q", exact.Band, approx.Band)
	}
	n := float64(ice.Len())
	for g := range ice.GridLen() {
		pts := ice.PointsAt(g, nil)
		k, err := model.Covariance(pts, pts)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		r, c := k.Dims()
		for i := range r {
			for j := range c {
				sum += k.At(i, j)
			}
		}
		brute := sum / (n * n)
		if !near(exact.SD[g]*exact.SD[g], brute, 1e-9) {
			t.Errorf("grid %d: eq. 4 %.12g, brute force %.12g", g, exact.SD[g]*exact.SD[g], brute)
		}
		if exact.SD[g] > approx.SD[g]*(1+1e-12) {
			t.Errorf("grid %d: exact sd %g exceeds approx sd %g", g, exact.SD[g], approx.SD[g])
		}
		// Eq. 5 is the mean of the pointwise variances (diagonal of K̂).
		diag := 0.0
		for i := range r {
			diag += k.At(i, i)
		}
		if !near(approx.SD[g]*approx.SD[g], diag/n, 1e-9) {
			t.Errorf("grid %d: eq. 5 %.12g, mean diagonal %.12g", g, approx.SD[g]*approx.SD[g], diag/n)
		}
		if exact.Mean[g] != approx.Mean[g] {
			t.Errorf("grid %d: means differ between bands: %g vs %g", g, exact.Mean[g], approx.Mean[g])
		}
	}
}

// The PDP is the mean of ICE curves of m̂, each the model at (grid, λ_C^i),
// and the band is mean ± q·sd.
func TestPDPIsMeanOfICEAndBandIsSymmetric(t *testing.T) {
	sp := unitSpace(t, 3)
	m := funcModel{dim: 3,
		mean: func(x []float64) float64 { return math.Sin(3*x[0]) + x[1]*x[2] },
		vari: func(x []float64) float64 { return 0.1 + x[1] },
	}
	res, err := pdp.Compute(context.Background(), m, sp, []string{"x0"}, pdp.Options{Samples: 2000, KeepICE: true, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Grid) != pdp.DefaultGridSize || len(res.ICE) != 2000 {
		t.Fatalf("grid %d, ice %d", len(res.Grid), len(res.ICE))
	}
	q := pdp.Quantile(0.05)
	if math.Abs(q-1.959963984540054) > 1e-12 {
		t.Fatalf("quantile %v", q)
	}
	for g, v := range res.Grid {
		// E[x1·x2] = 1/4 and E[0.1 + x1] = 0.6: Monte Carlo error of n = 2000
		// is below 0.02 with overwhelming probability.
		if math.Abs(res.Mean[g]-(math.Sin(3*v)+0.25)) > 0.02 {
			t.Errorf("grid %d: mean %g, want %g", g, res.Mean[g], math.Sin(3*v)+0.25)
		}
		if math.Abs(res.SD[g]*res.SD[g]-0.6) > 0.02 {
			t.Errorf("grid %d: variance %g, want 0.6", g, res.SD[g]*res.SD[g])
		}
		s := 0.0
		for _, c := range res.ICE {
			s += c[g]
		}
		if !near(res.Mean[g], s/2000, 1e-12) {
			t.Errorf("grid %d: PDP %g is not the ICE mean %g", g, res.Mean[g], s/2000)
		}
		if !near(res.Upper[g]-res.Mean[g], q*res.SD[g], 1e-12) || !near(res.Mean[g]-res.Lower[g], q*res.SD[g], 1e-12) {
			t.Errorf("grid %d: band [%g, %g] around %g is not ±q·sd", g, res.Lower[g], res.Upper[g], res.Mean[g])
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"param":"x0"`, `"grid":`, `"mean":`, `"sd":`, `"lower":`, `"upper":`, `"ice":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

// On uniform data from a function with a closed-form PD, the 95% band covers
// the truth at most grid points, and the L1 error falls as data grows.
func TestBandCoversTruthAndErrorFallsWithData(t *testing.T) {
	sp := unitSpace(t, 3)
	const reps = 20
	sizes := []int{15, 60, 240}
	l1 := make([]float64, len(sizes))
	covered, total := 0, 0
	for k, size := range sizes {
		for rep := range reps {
			rng := rand.New(rand.NewPCG(uint64(100*k+rep), 7))
			x, y := uniformData(rng, size, 3, 0.5, quadratic)
			model, err := fitBLR(x, y, 0.5, 5)
			if err != nil {
				t.Fatal(err)
			}
			res, err := pdp.Compute(context.Background(), model, sp, []string{"x0"}, pdp.Options{Samples: 300, Band: pdp.BandExact, Seed: uint64(rep)})
			if err != nil {
				t.Fatal(err)
			}
			for g, v := range res.Grid {
				truth := quadraticPD0(v)
				l1[k] += math.Abs(res.Mean[g]-truth) / float64(len(res.Grid)*reps)
				if k == 0 {
					total++
					if truth >= res.Lower[g] && truth <= res.Upper[g] {
						covered++
					}
				}
			}
		}
	}
	if frac := float64(covered) / float64(total); frac < 0.8 {
		t.Errorf("95%% bands cover the true PD at %.0f%% of grid points, want at least 80%%", 100*frac)
	}
	for k := 1; k < len(sizes); k++ {
		if !(l1[k] < l1[k-1]) {
			t.Errorf("L1 error does not fall with data: %v for sizes %v", l1, sizes)
		}
	}
	if l1[len(l1)-1] > 0.5*l1[0] {
		t.Errorf("L1 error falls too little: %v", l1)
	}
}

func TestPairGridIsRowMajor(t *testing.T) {
	sp := unitSpace(t, 3)
	m := funcModel{dim: 3,
		mean: func(x []float64) float64 { return x[0] + 10*x[1] + x[2] },
		vari: func(x []float64) float64 { return 1 },
	}
	res, err := pdp.Compute(context.Background(), m, sp, []string{"x0", "x1"}, pdp.Options{GridSize: 5, Samples: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.Param2 != "x1" || len(res.Mean) != 25 {
		t.Fatalf("param2 %q, %d means", res.Param2, len(res.Mean))
	}
	// The x2 average is the same for every grid point; differences isolate
	// the grid values.
	base := res.Mean[0]
	for a, va := range res.Grid {
		for b, vb := range res.Grid2 {
			got := res.Mean[a*len(res.Grid2)+b] - base
			if math.Abs(got-(va+10*vb)) > 1e-12 {
				t.Errorf("(%g, %g): %g, want %g", va, vb, got, va+10*vb)
			}
		}
	}
}

// A conditional parameter's PD averages only over configurations in which it
// is active; categorical grids hold every level.
func TestConditionalAndCategorical(t *testing.T) {
	sp, err := space.Parse([]byte(`{"params":[
		{"name":"opt","type":"categorical","choices":["sgd","adam","rms"]},
		{"name":"momentum","type":"float","low":0,"high":1,"condition":{"parent":"opt","values":["sgd"]}},
		{"name":"layers","type":"int","low":1,"high":4}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// The mean reports the encoded optimizer level, so its average tells
	// which levels the sample held.
	m := funcModel{dim: 3, mean: func(x []float64) float64 { return x[0] }, vari: func(x []float64) float64 { return 1 }}
	res, err := pdp.Compute(context.Background(), m, sp, []string{"momentum"}, pdp.Options{Samples: 200})
	if err != nil {
		t.Fatal(err)
	}
	sgd := sp.Params[0].ToUnit(0)
	for g := range res.Mean {
		if math.Abs(res.Mean[g]-sgd) > 1e-12 {
			t.Fatalf("momentum PD averaged over configurations where it is inactive: %g, want %g", res.Mean[g], sgd)
		}
	}
	res, err = pdp.Compute(context.Background(), m, sp, []string{"opt"}, pdp.Options{Samples: 20})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Grid, []float64{0, 1, 2}) || !slices.Equal(res.Labels, []any{"sgd", "adam", "rms"}) {
		t.Fatalf("categorical grid %v %v", res.Grid, res.Labels)
	}
	// The momentum child must be switched on exactly at the sgd grid point.
	ice, err := pdp.NewICE(context.Background(), m, sp, []int{0}, pdp.Options{Samples: 30})
	if err != nil {
		t.Fatal(err)
	}
	for g := range ice.GridLen() {
		for _, p := range ice.PointsAt(g, nil) {
			if (p[1] == space.Inactive) != (g != 0) {
				t.Fatalf("grid %d: momentum coordinate %g", g, p[1])
			}
		}
	}
	res, err = pdp.Compute(context.Background(), m, sp, []string{"layers"}, pdp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Grid, []float64{1, 2, 3, 4}) {
		t.Fatalf("int grid %v", res.Grid)
	}
}

func TestSliceThroughBest(t *testing.T) {
	sp := unitSpace(t, 3)
	m := funcModel{dim: 3,
		mean: func(x []float64) float64 { return x[0]*x[0] + 2*x[1] + 3*x[2] },
		vari: func(x []float64) float64 { return x[0] + 0.01 },
	}
	s, err := pdp.SliceThrough(m, sp, "x0", []float64{0.2, 0.5, 0.1}, 11, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != "slice" || !strings.Contains(s.Note, "not a partial dependence") {
		t.Fatalf("slice is not labelled as one: %q %q", s.Kind, s.Note)
	}
	q := pdp.Quantile(0.1)
	for g, v := range s.Grid {
		want := v*v + 1 + 0.3
		if math.Abs(s.Mean[g]-want) > 1e-12 || math.Abs(s.SD[g]-math.Sqrt(v+0.01)) > 1e-12 {
			t.Errorf("slice at %g: %g ± %g", v, s.Mean[g], s.SD[g])
		}
		if math.Abs(s.Upper[g]-s.Mean[g]-q*s.SD[g]) > 1e-12 {
			t.Errorf("slice band at %g", v)
		}
	}
	if _, err := pdp.SliceThrough(m, sp, "nope", []float64{0.2, 0.5, 0.1}, 0, 0); err == nil {
		t.Error("unknown parameter accepted")
	}
}

func TestInputErrors(t *testing.T) {
	sp := unitSpace(t, 3)
	m := funcModel{dim: 3, mean: func(x []float64) float64 { return 0 }, vari: func(x []float64) float64 { return 1 }}
	cases := []struct {
		name   string
		params []string
		opts   pdp.Options
	}{
		{"unknown", []string{"zz"}, pdp.Options{}},
		{"three", []string{"x0", "x1", "x2"}, pdp.Options{}},
		{"twice", []string{"x0", "x0"}, pdp.Options{}},
		{"alpha", []string{"x0"}, pdp.Options{Alpha: 1.5}},
		{"grid", []string{"x0"}, pdp.Options{GridSize: 1}},
		{"exact without AverageVariancer", []string{"x0"}, pdp.Options{Band: pdp.BandExact}},
		{"background shape", []string{"x0"}, pdp.Options{Background: [][]float64{{0.1}}}},
	}
	for _, c := range cases {
		if _, err := pdp.Compute(context.Background(), m, sp, c.params, c.opts); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := pdp.Compute(context.Background(), funcModel{dim: 2}, sp, []string{"x0"}, pdp.Options{}); err == nil {
		t.Error("dimension mismatch accepted")
	}
}

// countingModel counts the points it predicts, to show that a cancelled
// computation stops evaluating the model.
type countingModel struct {
	dim    int
	points int
	cancel func()
}

func (m *countingModel) Dim() int { return m.dim }

func (m *countingModel) Predict(x [][]float64, mean, variance []float64) error {
	m.points += len(x)
	for i := range x {
		mean[i], variance[i] = x[i][0], 1
	}
	if m.cancel != nil {
		m.cancel() // the caller goes away after the first grid point
	}
	return nil
}

func TestCancelledComputationStops(t *testing.T) {
	sp := unitSpace(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	m := &countingModel{dim: 3, cancel: cancel}
	_, err := pdp.Compute(ctx, m, sp, []string{"x0"}, pdp.Options{GridSize: 20, Samples: 50, Workers: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if m.points != 50 {
		t.Fatalf("the model predicted %d points after cancellation at the first grid point, want 50 (one grid point)", m.points)
	}
	// An uncancelled run evaluates every grid point.
	m = &countingModel{dim: 3}
	if _, err := pdp.Compute(context.Background(), m, sp, []string{"x0"}, pdp.Options{GridSize: 20, Samples: 50, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if m.points != 20*50 {
		t.Fatalf("predicted %d points, want %d", m.points, 20*50)
	}
}
