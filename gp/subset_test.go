package gp

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// subsetData is a noisy two-bump function on [0,1]^d with n points.
func subsetData(seed uint64, n, d int) ([][]float64, []float64) {
	rng := newRNG(seed)
	x := uniformPoints(rng, n, d)
	y := make([]float64, n)
	for i, p := range x {
		s := 0.0
		for j, v := range p {
			s += math.Sin(3*v+float64(j)) * (1 + float64(j%2))
		}
		y[i] = s + 0.05*rng.NormFloat64()
	}
	return x, y
}

// TestSubsetNeverUnderstatesUncertainty checks the approximation's promise
// against the exact GP given all observations at the same hyperparameters:
// pointwise variances, the variance of an average and the whole covariance
// matrix of a point set are at least the exact ones.
func TestSubsetNeverUnderstatesUncertainty(t *testing.T) {
	x, y := subsetData(3, 400, 3)
	s, err := FitSubset(context.Background(), x, y, SubsetOptions{Options: Options{Kernel: Matern52, Seed: 1}, MeanPoints: 150, VariancePoints: 50})
	if err != nil {
		t.Fatal(err)
	}
	// The mean part: 150 representative of the first 390 observations (390
	// = 150 + 16 steps of 15) and the 10 after them.
	if m, v := s.Conditioned(); m != 160 || v != 50 || s.Exact() || s.Len() != 400 {
		t.Fatalf("conditioned on %d/%d of %d, exact %v", m, v, s.Len(), s.Exact())
	}
	exact, err := Fit(x, y, s.variance.Options())
	if err != nil {
		t.Fatal(err)
	}
	test := uniformPoints(newRNG(9), 300, 3)
	test = append(test, x[:50]...) // observed points, where the exact variance is smallest
	sm, sv := make([]float64, len(test)), make([]float64, len(test))
	em, ev := make([]float64, len(test)), make([]float64, len(test))
	if err := s.Predict(test, sm, sv); err != nil {
		t.Fatal(err)
	}
	if err := exact.Predict(test, em, ev); err != nil {
		t.Fatal(err)
	}
	strictlyLarger := 0
	for i := range test {
		if sv[i] < ev[i]*(1-1e-9)-1e-12 {
			t.Fatalf("point %d: subset variance %g below the exact %g", i, sv[i], ev[i])
		}
		if sv[i] > 1.01*ev[i] {
			strictlyLarger++
		}
	}
	// Without a gap the test would not tell a subset from the exact model.
	if strictlyLarger < len(test)/2 {
		t.Errorf("only %d of %d variances exceed the exact ones by 1%%", strictlyLarger, len(test))
	}
	set := test[:25]
	sa, _ := s.AverageVariance(set)
	ea, _ := exact.AverageVariance(set)
	if sa < ea*(1-1e-9) {
		t.Errorf("average variance %g below the exact %g", sa, ea)
	}
	sc, err := s.Covariance(set, set)
	if err != nil {
		t.Fatal(err)
	}
	ec, _ := exact.Covariance(set, set)
	diff := mat.NewSymDense(25, nil)
	for i := range 25 {
		for j := i; j < 25; j++ {
			diff.SetSym(i, j, sc.At(i, j)-ec.At(i, j))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(diff, false) {
		t.Fatal("eigen decomposition failed")
	}
	if lo := slices.Min(eig.Values(nil)); lo < -1e-9*mat.Max(ec) {
		t.Errorf("subset covariance minus exact has eigenvalue %g < 0", lo)
	}
}

// TestSubsetParts checks the wiring against independent fits: the mean is
// the fixed-hyperparameter GP on the representative MeanPoints, the variance
// the one on the representative VariancePoints, whose hyperparameters are
// fitted exactly as Fit fits them on those points at the full data's scale.
func TestSubsetParts(t *testing.T) {
	x, y := subsetData(4, 300, 2)
	opt := SubsetOptions{Options: Options{Kernel: Matern32, Seed: 2}, MeanPoints: 120, VariancePoints: 40, Maximize: true}
	s, err := FitSubset(context.Background(), x, y, opt)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := outputScale(y)
	vx, vy := pick(x, y, representative(x, y, 40, true))
	varGP, err := Fit(vx, vy, Options{Kernel: Matern32, Seed: 2, Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	h := varGP.Hyper()
	mx, my := pick(x, y, meanSubset(x, y, 120, true))
	meanGP, err := Fit(mx, my, Options{Kernel: Matern32, Fixed: &h, Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	test := uniformPoints(newRNG(5), 50, 2)
	sm, sv := make([]float64, 50), make([]float64, 50)
	mm, mv := make([]float64, 50), make([]float64, 50)
	vm, vv := make([]float64, 50), make([]float64, 50)
	_ = s.Predict(test, sm, sv)
	_ = meanGP.Predict(test, mm, mv)
	_ = varGP.Predict(test, vm, vv)
	for i := range test {
		if !relClose(sm[i], mm[i], 1e-12) || !relClose(sv[i], vv[i], 1e-12) {
			t.Fatalf("point %d: subset (%g, %g), independent fits (%g, %g)", i, sm[i], sv[i], mm[i], vv[i])
		}
	}
	// The gradients come from the same parts.
	dm, dv := make([]float64, 2), make([]float64, 2)
	dm2, dv2, scratch := make([]float64, 2), make([]float64, 2), make([]float64, 2)
	m, v, err := s.PredictGradient(test[0], dm, dv)
	if err != nil {
		t.Fatal(err)
	}
	m2, _, _ := meanGP.PredictGradient(test[0], dm2, scratch)
	_, v2, _ := varGP.PredictGradient(test[0], scratch, dv2)
	if !relClose(m, m2, 1e-12) || !relClose(v, v2, 1e-12) || !relClose(dm[0], dm2[0], 1e-9) || !relClose(dv[1], dv2[1], 1e-9) {
		t.Errorf("gradient (%g %g %v %v), want (%g %g %v %v)", m, v, dm, dv, m2, v2, dm2, dv2)
	}
	bm, bb := make([]float64, 50), make([]float64, 50)
	if err := s.PredictBound(test, bm, bb); err != nil {
		t.Fatal(err)
	}
	for i := range test {
		if !relClose(bm[i], sm[i], 1e-12) || bb[i] < sv[i]*(1-1e-12) {
			t.Fatalf("bound at %d: mean %g (want %g), bound %g below variance %g", i, bm[i], sm[i], bb[i], sv[i])
		}
	}
}

func TestSubsetExactWhenSmall(t *testing.T) {
	x, y := subsetData(5, 60, 2)
	s, err := FitSubset(context.Background(), x, y, SubsetOptions{Options: Options{Kernel: Matern52, Seed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Fit(x, y, Options{Kernel: Matern52, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Exact() {
		t.Fatal("60 observations should give the exact GP")
	}
	test := uniformPoints(newRNG(6), 20, 2)
	sm, sv := make([]float64, 20), make([]float64, 20)
	gm, gv := make([]float64, 20), make([]float64, 20)
	_ = s.Predict(test, sm, sv)
	_ = g.Predict(test, gm, gv)
	for i := range test {
		if !relClose(sm[i], gm[i], 1e-12) || !relClose(sv[i], gv[i], 1e-12) {
			t.Fatalf("point %d: subset (%g, %g), exact (%g, %g)", i, sm[i], sv[i], gm[i], gv[i])
		}
	}
}

// TestRepresentative checks the two halves of the selection: the best
// quarter is always in, and the farthest-point rest covers the data within
// twice the covering radius of any other choice with the same best quarter
// (the greedy k-center guarantee), here 300 random ones.
func TestRepresentative(t *testing.T) {
	x, y := subsetData(7, 500, 2)
	for _, maximize := range []bool{false, true} {
		idx := representative(x, y, 40, maximize)
		if len(idx) != 40 || !slices.IsSorted(idx) {
			t.Fatalf("%d indices, sorted %v", len(idx), slices.IsSorted(idx))
		}
		order := make([]int, len(y))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			if maximize {
				return -cmpFloat(y[a], y[b])
			}
			return cmpFloat(y[a], y[b])
		})
		for _, b := range order[:10] {
			if !slices.Contains(idx, b) {
				t.Fatalf("maximize %v: observation %d (y %g, among the best 10) left out", maximize, b, y[b])
			}
		}
		radius := func(set []int) float64 {
			r := 0.0
			for i := range x {
				d := math.Inf(1)
				for _, c := range set {
					d = min(d, floats.Distance(x[i], x[c], 2))
				}
				r = max(r, d)
			}
			return r
		}
		got := radius(idx)
		rng := newRNG(8)
		for range 300 {
			other := slices.Clone(order[:10])
			for _, i := range rng.Perm(len(order) - 10)[:30] {
				other = append(other, order[10+i])
			}
			if r := radius(other); got > 2*r {
				t.Fatalf("maximize %v: covering radius %g exceeds twice a random choice's %g", maximize, got, r)
			}
		}
	}
	// The greedy choice written out from its definition: each step adds
	// the point whose Euclidean distance to the chosen ones is largest
	// (the lowest index among equals).
	for _, d := range []int{2, 7} {
		x, y := subsetData(11, 400, d)
		chosen := map[int]bool{}
		order := make([]int, len(y))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(y[a], y[b]) })
		for _, c := range order[:30/4] {
			chosen[c] = true
		}
		for len(chosen) < 30 {
			far, farDist := -1, -1.0
			for i := range x {
				if chosen[i] {
					continue
				}
				dist := math.Inf(1)
				for c := range chosen {
					dist = min(dist, floats.Distance(x[i], x[c], 2))
				}
				if dist > farDist {
					far, farDist = i, dist
				}
			}
			chosen[far] = true
		}
		want := slices.Sorted(maps.Keys(chosen))
		if got := representative(x, y, 30, false); !slices.Equal(got, want) {
			t.Errorf("d = %d: chose %v, the greedy definition %v", d, got, want)
		}
	}
	if all := representative(x[:5], y[:5], 10, false); !slices.Equal(all, []int{0, 1, 2, 3, 4}) {
		t.Errorf("k above n gave %v", all)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// countdown is a context whose Err turns to Canceled after a number of
// calls, so a test can cancel a fit at a deterministic point inside it.
type countdown struct {
	context.Context
	calls, after int
}

func (c *countdown) Err() error {
	c.calls++
	if c.calls > c.after {
		return context.Canceled
	}
	return nil
}

func TestFitContextStopsTheSearch(t *testing.T) {
	x, y := subsetData(9, 80, 3)
	if _, err := FitContext(context.Background(), x, y, Options{Kernel: Matern52, Restarts: 1, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	// The full search records far more than 8 operations; cancelled after
	// 8 it must stop within the next one of each start.
	ctx := &countdown{Context: context.Background(), after: 8}
	_, err := FitContext(ctx, x, y, Options{Kernel: Matern52, Restarts: 1, Workers: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fit returned %v", err)
	}
	if ctx.calls > ctx.after+3 {
		t.Errorf("the search went on for %d checks after cancellation", ctx.calls-ctx.after)
	}
	full := &countdown{Context: context.Background(), after: math.MaxInt}
	if _, err := FitContext(full, x, y, Options{Kernel: Matern52, Restarts: 1, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if full.calls < 3*ctx.after {
		t.Errorf("an uncancelled search checked its context only %d times", full.calls)
	}
	if _, err := FitSubset(ctx, x, y, SubsetOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("subset fit with a cancelled context returned %v", err)
	}
}

func TestSubsetInput(t *testing.T) {
	x, y := subsetData(10, 30, 2)
	bad := []struct {
		name string
		x    [][]float64
		y    []float64
		opt  SubsetOptions
	}{
		{"no points", nil, nil, SubsetOptions{}},
		{"lengths", x, y[:3], SubsetOptions{}},
		{"variance above mean", x, y, SubsetOptions{MeanPoints: 10, VariancePoints: 20}},
		{"too many", x, y, SubsetOptions{MeanPoints: MaxSubsetPoints + 1}},
		{"negative", x, y, SubsetOptions{VariancePoints: -1}},
		{"nan x", [][]float64{{0, math.NaN()}, {1, 1}}, []float64{1, 2}, SubsetOptions{}},
		{"ragged", [][]float64{{0, 1}, {1}}, []float64{1, 2}, SubsetOptions{}},
		{"inf y", x[:2], []float64{1, math.Inf(1)}, SubsetOptions{}},
	}
	for _, c := range bad {
		if _, err := FitSubset(context.Background(), c.x, c.y, c.opt); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	var nilCtx context.Context
	if _, err := FitSubset(nilCtx, x, y, SubsetOptions{}); err == nil {
		t.Error("nil context accepted")
	}
}

// PredictShared equals Predict on the points it stands for, with numeric,
// categorical and inactive coordinates, in one block and in several.
func TestPredictSharedEqualsPredict(t *testing.T) {
	levels := []int{0, 3, 0, 2}
	g, _, _ := fittedModel(t, 31, 70, 4, Matern52, levels)
	rng := newRNG(32)
	base := uniformPoints(rng, 23, 4)
	base[0][0], base[1][3] = -1, -1
	for _, dims := range [][]int{{1}, {0, 3}, {2, 1}} {
		values := uniformPoints(rng, 7, len(dims))
		values[0][0] = -1
		for _, block := range []int{1 << 21, 5 * g.Len()} {
			saved := sharedBlock
			sharedBlock = block
			mean, variance := make([]float64, 7*23), make([]float64, 7*23)
			err := g.PredictShared(base, dims, values, mean, variance)
			sharedBlock = saved
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range values {
				pts := make([][]float64, len(base))
				for i, b := range base {
					pts[i] = slices.Clone(b)
					for s, j := range dims {
						pts[i][j] = v[s]
					}
				}
				m, s2 := make([]float64, len(pts)), make([]float64, len(pts))
				if err := g.Predict(pts, m, s2); err != nil {
					t.Fatal(err)
				}
				for i := range pts {
					if !relClose(mean[k*23+i], m[i], 1e-12) || !relClose(variance[k*23+i], s2[i], 1e-10) {
						t.Fatalf("dims %v block %d point (%d,%d): shared (%g, %g), predict (%g, %g)",
							dims, block, k, i, mean[k*23+i], variance[k*23+i], m[i], s2[i])
					}
				}
			}
		}
	}
	meanOnly := make([]float64, 2*23)
	if err := g.PredictShared(base, []int{1}, [][]float64{{0.1}, {0.9}}, meanOnly, nil); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		dims   []int
		values [][]float64
		out    int
	}{{nil, [][]float64{{0.1}}, 23}, {[]int{4}, [][]float64{{0.1}}, 23}, {[]int{1, 1}, [][]float64{{0.1, 0.2}}, 23},
		{[]int{1}, [][]float64{{0.1, 0.2}}, 23}, {[]int{1}, [][]float64{{0.1}}, 22}, {[]int{1}, [][]float64{{math.NaN()}}, 23}} {
		if err := g.PredictShared(base, bad.dims, bad.values, make([]float64, bad.out), nil); err == nil {
			t.Errorf("dims %v values %v: accepted", bad.dims, bad.values)
		}
	}
}

// TestSubsetConditionAll checks that conditioning an approximation on extra
// points conditions each part: mean and variance equal those of the parts'
// own GPs conditioned on the same points.
func TestSubsetConditionAll(t *testing.T) {
	x, y := subsetData(6, 200, 2)
	s, err := FitSubset(context.Background(), x, y, SubsetOptions{Options: Options{Kernel: Matern52, Seed: 3}, MeanPoints: 90, VariancePoints: 30})
	if err != nil {
		t.Fatal(err)
	}
	px := [][]float64{{0.2, 0.7}, {0.9, 0.1}}
	py := []float64{-3, 4}
	c, err := s.ConditionAll(px, py)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 202 {
		t.Errorf("Len %d, want 202", c.Len())
	}
	wantMean, err := s.mean.ConditionAll(px, py)
	if err != nil {
		t.Fatal(err)
	}
	wantVar, err := s.variance.ConditionAll(px, py)
	if err != nil {
		t.Fatal(err)
	}
	test := append(uniformPoints(newRNG(8), 20, 2), px...)
	cm, cv := make([]float64, len(test)), make([]float64, len(test))
	wm, wv, scratch := make([]float64, len(test)), make([]float64, len(test)), make([]float64, len(test))
	if err := c.Predict(test, cm, cv); err != nil {
		t.Fatal(err)
	}
	_ = wantMean.Predict(test, wm, scratch)
	_ = wantVar.Predict(test, scratch, wv)
	for i := range test {
		if !relClose(cm[i], wm[i], 1e-12) || !relClose(cv[i], wv[i], 1e-12) {
			t.Fatalf("point %d: conditioned subset (%g, %g), parts (%g, %g)", i, cm[i], cv[i], wm[i], wv[i])
		}
	}
	// At a conditioned point the variance collapses to about the noise.
	if n := len(test); cv[n-1] > 0.05*cv[0]+1e-3 {
		t.Errorf("variance at a conditioned point %g, elsewhere %g", cv[n-1], cv[0])
	}
	if same, err := s.ConditionAll(nil, nil); err != nil || same != s {
		t.Errorf("no points: %v %v", same == s, err)
	}
	if _, err := s.ConditionAll(px, py[:1]); err == nil {
		t.Error("mismatched lengths accepted")
	}
}

// TestMeanSubset checks the mean part's observations against their
// definition: all up to k; beyond, the representative k of the first m
// (m = k plus whole steps of k/10) and every later one, so that fits between
// two steps share their first points.
func TestMeanSubset(t *testing.T) {
	x, y := subsetData(6, 260, 2)
	if got := meanSubset(x[:40], y[:40], 40, false); len(got) != 40 || got[39] != 39 {
		t.Fatalf("n = k: %v, want all 40", got)
	}
	for _, n := range []int{41, 49, 50, 51, 59, 60, 140, 259} {
		got := meanSubset(x[:n], y[:n], 40, false)
		m := 40 + (n-40)/4*4
		want := representative(x[:m], y[:m], 40, false)
		for i := m; i < n; i++ {
			want = append(want, i)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("n = %d: %v, want %v", n, got, want)
		}
		if len(got) >= 44 || !slices.IsSorted(got) {
			t.Errorf("n = %d: %d points (want < 44), sorted %v", n, len(got), slices.IsSorted(got))
		}
	}
	// Between two steps the earlier subset is a prefix of the later one.
	a, b := meanSubset(x[:141], y[:141], 40, false), meanSubset(x[:143], y[:143], 40, false)
	if !slices.Equal(a, b[:len(a)]) {
		t.Errorf("n = 141 gives %v, not a prefix of n = 143's %v", a, b)
	}
}

// TestSubsetExtendsPrevious checks that a fit given the previous Subset
// extends its mean part's Cholesky factor when it may and predicts as the
// fit without it does, and that it refactors when the hyperparameters, the
// points or the step of the subset changed.
func TestSubsetExtendsPrevious(t *testing.T) {
	x, y := subsetData(7, 200, 3)
	fixed := Hyper{Lengthscales: []float64{0.4, 0.6, 0.9}, SignalVariance: 1.2, NoiseVariance: 0.01}
	opts := SubsetOptions{Options: Options{Kernel: Matern52, Fixed: &fixed}, MeanPoints: 120, VariancePoints: 40}
	fitN := func(n int, prev *Subset, o SubsetOptions) *Subset {
		t.Helper()
		o.Previous = prev
		s, err := FitSubset(context.Background(), x[:n], y[:n], o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	test := uniformPoints(newRNG(11), 40, 3)
	same := func(a, b *Subset) {
		t.Helper()
		am, av := make([]float64, len(test)), make([]float64, len(test))
		bm, bv := make([]float64, len(test)), make([]float64, len(test))
		_ = a.Predict(test, am, av)
		_ = b.Predict(test, bm, bv)
		for i := range test {
			if !relClose(am[i], bm[i], 1e-9) || !relClose(av[i], bv[i], 1e-9) {
				t.Fatalf("point %d: (%g, %g), want (%g, %g)", i, am[i], av[i], bm[i], bv[i])
			}
		}
	}
	// poisoned returns a copy of s whose mean factor's first entry is
	// moved in its ninth digit: a fit that extends it keeps the change.
	poisoned := func(s *Subset) *Subset {
		p := *s
		m := *s.mean
		m.u = slices.Clone(m.u)
		m.u[0] *= 1 + 1e-9
		p.mean = &m
		return &p
	}
	extended := func(s, prev *Subset) bool { return s.mean.u[0] == prev.mean.u[0] }

	prev := fitN(125, nil, opts)
	// Within one step (m = 120 for n < 132): extended, with other values
	// for the old points too (as an output warp refitted to all gives).
	y2 := slices.Clone(y)
	for i := range y2 {
		y2[i] = math.Exp(y2[i])
	}
	for _, vals := range [][]float64{y, y2} {
		s, err := FitSubset(context.Background(), x[:129], vals[:129], SubsetOptions{Options: opts.Options, MeanPoints: 120, VariancePoints: 40, Previous: prev})
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := FitSubset(context.Background(), x[:129], vals[:129], SubsetOptions{Options: opts.Options, MeanPoints: 120, VariancePoints: 40})
		if err != nil {
			t.Fatal(err)
		}
		same(s, fresh)
		if bad := poisoned(prev); !extended(fitN2(t, x[:129], vals[:129], opts, bad), bad) {
			t.Error("within a step the mean part was refactored, not extended")
		}
	}
	// The same observations: the factor is reused as is.
	if bad := poisoned(prev); !extended(fitN(125, bad, opts), bad) {
		t.Error("the same observations were refactored")
	}
	// Other hyperparameters, other points, the next step: refactored.
	other := fixed.Clone()
	other.Lengthscales[1] *= 1.5
	o2 := opts
	o2.Fixed = &other
	if bad := poisoned(prev); extended(fitN(129, bad, o2), bad) {
		t.Error("extended a factor of other hyperparameters")
	}
	if bad := poisoned(prev); extended(fitN(140, bad, opts), bad) {
		t.Error("extended across a step of the subset")
	}
	moved := slices.Clone(x[:129])
	moved[3] = []float64{0.5, 0.5, 0.5}
	if bad := poisoned(prev); extended(fitN2(t, moved, y[:129], opts, bad), bad) {
		t.Error("extended a factor of other points")
	}
	same(fitN(140, prev, opts), fitN(140, nil, opts))
}

// fitN2 fits a Subset on (x, y) with opts and Previous prev.
func fitN2(t *testing.T, x [][]float64, y []float64, opts SubsetOptions, prev *Subset) *Subset {
	t.Helper()
	opts.Previous = prev
	s, err := FitSubset(context.Background(), x, y, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
