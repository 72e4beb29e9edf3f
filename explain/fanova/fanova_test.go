package fanova

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"xbo/forest"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// cells is an independent description of one dimension of one tree for the
// brute-force checks: the midpoint of every cell between the tree's
// thresholds (plus the Inactive point), with its mass.
type cells struct {
	pts, mass []float64
}

func treeCells(tr *forest.Tree, levels []int, inactive []float64) []cells {
	d := len(levels)
	cuts := make([][]float64, d)
	for i := range tr.NumNodes() {
		n, _ := tr.Node(i)
		if n.Feature >= 0 && levels[n.Feature] == 0 && n.Threshold > 0 && n.Threshold < 1 {
			cuts[n.Feature] = append(cuts[n.Feature], n.Threshold)
		}
	}
	out := make([]cells, d)
	for j := range d {
		c := cells{pts: []float64{forest.Inactive}, mass: []float64{inactive[j]}}
		if k := levels[j]; k > 0 {
			for l := range k {
				c.pts = append(c.pts, (float64(l)+0.5)/float64(k))
				c.mass = append(c.mass, (1-inactive[j])/float64(k))
			}
		} else {
			b := append([]float64{0}, cuts[j]...)
			b = append(b, 1)
			sort.Float64s(b)
			for i := 0; i+1 < len(b); i++ {
				if b[i+1] == b[i] {
					continue
				}
				c.pts = append(c.pts, (b[i]+b[i+1])/2)
				c.mass = append(c.mass, (1-inactive[j])*(b[i+1]-b[i]))
			}
		}
		out[j] = c
	}
	return out
}

// bruteTensor evaluates the tree on every combination of cell midpoints.
func bruteTensor(tr *forest.Tree, cs []cells) (vals []float64, shape []int) {
	d := len(cs)
	shape = make([]int, d)
	total := 1
	for j := range cs {
		shape[j] = len(cs[j].pts)
		total *= shape[j]
	}
	vals = make([]float64, total)
	idx := make([]int, d)
	p := make([]float64, d)
	for flat := range total {
		r := flat
		for j := d - 1; j >= 0; j-- {
			idx[j] = r % shape[j]
			r /= shape[j]
			p[j] = cs[j].pts[idx[j]]
		}
		vals[flat] = tr.Predict(p)
	}
	return vals, shape
}

// bruteMarginal sums the tensor over every dimension not in keep, weighted
// by cell masses; the result is indexed by the kept dimensions' cells.
func bruteMarginal(vals []float64, shape []int, cs []cells, keep []int) map[[2]int]float64 {
	out := map[[2]int]float64{}
	d := len(shape)
	idx := make([]int, d)
	for flat := range vals {
		r := flat
		for j := d - 1; j >= 0; j-- {
			idx[j] = r % shape[j]
			r /= shape[j]
		}
		w := 1.0
		var key [2]int
		for j := range d {
			kept := -1
			for q, k := range keep {
				if k == j {
					kept = q
				}
			}
			if kept >= 0 {
				key[kept] = idx[j]
			} else {
				w *= cs[j].mass[idx[j]]
			}
		}
		out[key] += w * vals[flat]
	}
	return out
}

func smallForest(t *testing.T, levels []int, n int, seed uint64, opts forest.Options) (*forest.Forest, [][]float64) {
	t.Helper()
	rng := newRNG(seed)
	d := len(levels)
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j, k := range levels {
			if k > 0 {
				x[i][j] = (float64(rng.IntN(k)) + 0.5) / float64(k)
			} else {
				x[i][j] = rng.Float64()
			}
			if j > 0 && rng.IntN(4) == 0 {
				x[i][j] = forest.Inactive
			}
		}
		y[i] = math.Sin(4*x[i][0]) + x[i][1]*x[i][0] + 0.5*x[i][d-1] + 0.1*rng.NormFloat64()
		if x[i][1] < 0 {
			y[i] += 0.7
		}
	}
	opts.Levels = levels
	opts.Seed = seed
	f, err := forest.Fit(x, y, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f, x
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// Exact marginals, main-effect and interaction variances equal brute-force
// averages over the full grid of cell midpoints (tolerance 1e-9, relative).
func TestExactMarginalsMatchBruteForce(t *testing.T) {
	levels := []int{0, 3, 0, 0}
	inactive := []float64{0, 0.2, 0.3, 0}
	f, _ := smallForest(t, levels, 150, 11, forest.Options{Trees: 3, MaxDepth: 5})
	e, err := New(f, Options{InactiveMass: inactive})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := e.Decompose(true)
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-9
	for ti := range f.NumTrees() {
		tr := f.Tree(ti)
		cs := treeCells(tr, levels, inactive)
		vals, shape := bruteTensor(tr, cs)
		f0 := bruteMarginal(vals, shape, cs, nil)[[2]int{}]
		got, err := e.TreeMarginal(ti, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !near(got, f0, tol) || !near(dec.Mean[ti], f0, tol) {
			t.Fatalf("tree %d: f_∅ %v / %v, brute force %v", ti, got, dec.Mean[ti], f0)
		}
		total := 0.0
		for flat, v := range vals {
			w := 1.0
			r := flat
			for j := len(shape) - 1; j >= 0; j-- {
				w *= cs[j].mass[r%shape[j]]
				r /= shape[j]
			}
			total += w * (v - f0) * (v - f0)
		}
		if !near(dec.Total[ti], total, tol) {
			t.Fatalf("tree %d: V = %v, brute force %v", ti, dec.Total[ti], total)
		}
		mains := make([]map[[2]int]float64, len(levels))
		for j := range levels {
			mains[j] = bruteMarginal(vals, shape, cs, []int{j})
			vj := 0.0
			for a, p := range cs[j].pts {
				want := mains[j][[2]int{a}]
				got, err := e.TreeMarginal(ti, []int{j}, []float64{p})
				if err != nil {
					t.Fatal(err)
				}
				if !near(got, want, tol) {
					t.Fatalf("tree %d: a_%d(%v) = %v, brute force %v", ti, j, p, got, want)
				}
				vj += cs[j].mass[a] * (want - f0) * (want - f0)
			}
			if !near(dec.Main[ti][j], vj, tol) || math.Abs(dec.Main[ti][j]-vj) > tol*total {
				t.Fatalf("tree %d: V_%d = %v, brute force %v", ti, j, dec.Main[ti][j], vj)
			}
		}
		for j := range levels {
			for k := j + 1; k < len(levels); k++ {
				pair := bruteMarginal(vals, shape, cs, []int{j, k})
				vjk := 0.0
				for a, pa := range cs[j].pts {
					for b, pb := range cs[k].pts {
						want := pair[[2]int{a, b}]
						got, err := e.TreeMarginal(ti, []int{j, k}, []float64{pa, pb})
						if err != nil {
							t.Fatal(err)
						}
						if !near(got, want, tol) {
							t.Fatalf("tree %d: a_%d%d(%v,%v) = %v, brute force %v", ti, j, k, pa, pb, got, want)
						}
						fjk := want - mains[j][[2]int{a}] - mains[k][[2]int{b}] + f0
						vjk += cs[j].mass[a] * cs[k].mass[b] * fjk * fjk
					}
				}
				got := dec.Pairs[ti][PairIndex(len(levels), j, k)]
				if math.Abs(got-vjk) > tol*math.Max(total, 1) {
					t.Fatalf("tree %d: V_%d%d = %v, brute force %v", ti, j, k, got, vjk)
				}
			}
		}
	}
}

// Curves and surfaces (from atom tables) agree with the generic marginal,
// including at the Inactive value and at points off the cell midpoints.
func TestCurvesMatchMarginal(t *testing.T) {
	levels := []int{0, 3, 0}
	inactive := []float64{0, 0.25, 0.1}
	f, _ := smallForest(t, levels, 300, 12, forest.Options{Trees: 5})
	e, err := New(f, Options{InactiveMass: inactive})
	if err != nil {
		t.Fatal(err)
	}
	for j := range levels {
		c, err := e.Curve("p", j, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range c.U {
			m, s, err := e.Marginal([]int{j}, []float64{u})
			if err != nil {
				t.Fatal(err)
			}
			if !near(m, c.Mean[i], 1e-9) || !near(s, c.Std[i], 1e-9) {
				t.Fatalf("dim %d at %v: curve %v±%v, marginal %v±%v", j, u, c.Mean[i], c.Std[i], m, s)
			}
		}
		if (c.Inactive != nil) != (inactive[j] > 0) {
			t.Fatalf("dim %d: inactive point presence wrong", j)
		}
		if c.Inactive != nil {
			m, _, _ := e.Marginal([]int{j}, []float64{-1})
			if !near(m, c.Inactive.Mean, 1e-9) {
				t.Fatalf("dim %d inactive: curve %v, marginal %v", j, c.Inactive.Mean, m)
			}
		}
	}
	sf, err := e.Surface("a", "c", 0, 2, []float64{0, 0.33, 0.9, 1}, []float64{-1, 0.1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	for a, ua := range sf.UA {
		for b, ub := range sf.UB {
			m, _, _ := e.Marginal([]int{0, 2}, []float64{ua, ub})
			if !near(m, sf.Mean[a][b], 1e-9) {
				t.Fatalf("surface at (%v,%v): %v, marginal %v", ua, ub, sf.Mean[a][b], m)
			}
		}
	}
}

// Per tree the main effects and pairs never explain more than the total, and
// with two parameters they explain all of it.
func TestFractionsBounded(t *testing.T) {
	for _, levels := range [][]int{{0, 0}, {0, 4}, {0, 3, 0, 5}} {
		f, _ := smallForest(t, levels, 400, 13, forest.Options{Trees: 8})
		e, err := New(f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		dec, err := e.Decompose(true)
		if err != nil {
			t.Fatal(err)
		}
		for ti := range dec.Total {
			sum := 0.0
			for _, v := range dec.Main[ti] {
				sum += v
			}
			for _, v := range dec.Pairs[ti] {
				if v < -1e-12*dec.Total[ti] {
					t.Fatalf("negative interaction variance %v", v)
				}
				sum += v
			}
			frac := sum / dec.Total[ti]
			if frac > 1+1e-9 {
				t.Fatalf("levels %v tree %d: main+pairs = %.15f of the variance", levels, ti, frac)
			}
			if len(levels) == 2 && math.Abs(frac-1) > 1e-9 {
				t.Fatalf("levels %v tree %d: two parameters explain %.15f, want 1", levels, ti, frac)
			}
		}
	}
}

func fitUniform(t *testing.T, d, n int, fn func([]float64) float64, seed uint64) *Importance {
	t.Helper()
	rng := newRNG(seed)
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = rng.Float64()
		}
		y[i] = fn(x[i])
	}
	f, err := forest.Fit(x, y, forest.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := e.Decompose(true)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"x1", "x2", "x3"}[:d]
	im, err := dec.Importance(names)
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// Known Sobol indices, with 3000 uniform samples and a default forest:
// within 0.03 for the additive function, 0.06 for the pure interaction
// (a forest approximates a product with steps, which leaks a little into
// main effects).
func TestKnownSobolIndices(t *testing.T) {
	// y = 2·x1 + x2: V1 = 4/12, V2 = 1/12, so 0.8, 0.2, 0 and no interactions.
	im := fitUniform(t, 3, 3000, func(x []float64) float64 { return 2*x[0] + x[1] }, 21)
	t.Logf("additive: main %v pairs %v", im.Main, im.Pairs)
	want := map[string]float64{"x1": 0.8, "x2": 0.2, "x3": 0}
	for n, w := range want {
		if math.Abs(im.Main[n].Fraction-w) > 0.03 {
			t.Errorf("additive: %s fraction %.4f, want %.2f ± 0.03", n, im.Main[n].Fraction, w)
		}
	}
	for k, p := range im.Pairs {
		if p.Fraction > 0.03 {
			t.Errorf("additive: pair %s fraction %.4f, want 0 ± 0.03", k, p.Fraction)
		}
	}
	// y = (x1−½)(x2−½): no main effects, the interaction is everything.
	im = fitUniform(t, 3, 3000, func(x []float64) float64 { return (x[0] - 0.5) * (x[1] - 0.5) }, 22)
	t.Logf("interaction: main %v pairs %v", im.Main, im.Pairs)
	for n, m := range im.Main {
		if m.Fraction > 0.06 {
			t.Errorf("interaction: %s main fraction %.4f, want 0 ± 0.06", n, m.Fraction)
		}
	}
	if p := im.Pairs["x1,x2"].Fraction; math.Abs(p-1) > 0.06 {
		t.Errorf("interaction: x1×x2 fraction %.4f, want 1 ± 0.06", p)
	}
}

// Same data and seed: the same JSON to the last digit, whatever the number
// of workers.
func TestDeterministic(t *testing.T) {
	run := func(workers int) []byte {
		f, _ := smallForest(t, []int{0, 3, 0}, 500, 31, forest.Options{Workers: workers})
		e, err := New(f, Options{Workers: workers, InactiveMass: []float64{0, 0.1, 0.2}})
		if err != nil {
			t.Fatal(err)
		}
		dec, err := e.Decompose(true)
		if err != nil {
			t.Fatal(err)
		}
		im, err := dec.Importance([]string{"a", "b", "c"})
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(im)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := run(1), run(3)
	if string(a) != string(b) {
		t.Fatalf("results differ:\n%s\n%s", a, b)
	}
}

func TestCapping(t *testing.T) {
	y := []float64{5, 1, 3, 2, 4}
	q, err := Quantile(y, 0.25)
	if err != nil || q != 2 {
		t.Fatalf("0.25-quantile %v (%v), want 2", q, err)
	}
	capped, limit, err := CapQuantile(y, 0.25, false)
	if err != nil || limit != 2 {
		t.Fatalf("minimize cap %v (%v), want 2", limit, err)
	}
	for i, v := range []float64{2, 1, 2, 2, 2} {
		if capped[i] != v {
			t.Fatalf("minimize capped %v", capped)
		}
	}
	capped, limit, err = CapQuantile(y, 0.25, true)
	if err != nil || limit != 4 {
		t.Fatalf("maximize cap %v (%v), want 4", limit, err)
	}
	for i, v := range []float64{5, 4, 4, 4, 4} {
		if capped[i] != v {
			t.Fatalf("maximize capped %v", capped)
		}
	}
	if _, _, err := CapQuantile(y, 0, false); err == nil {
		t.Error("q = 0: no error")
	}
	if _, err := Cap(y, math.NaN(), false); err == nil {
		t.Error("NaN limit: no error")
	}
}

func TestBadInput(t *testing.T) {
	f, _ := smallForest(t, []int{0, 3}, 50, 1, forest.Options{Trees: 2})
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil forest: no error")
	}
	if _, err := New(f, Options{InactiveMass: []float64{0}}); err == nil {
		t.Error("short inactive masses: no error")
	}
	if _, err := New(f, Options{InactiveMass: []float64{0, 1.5}}); err == nil {
		t.Error("inactive mass 1.5: no error")
	}
	e, err := New(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Marginal([]int{2}, []float64{0.5}); err == nil {
		t.Error("dimension out of range: no error")
	}
	if _, _, err := e.Marginal([]int{0}, []float64{1.5}); err == nil {
		t.Error("value out of cube: no error")
	}
	if _, _, err := e.Marginal([]int{0, 0}, []float64{0.5, 0.5}); err == nil {
		t.Error("repeated dimension: no error")
	}
	if _, err := e.TreeMarginal(5, nil, nil); err == nil {
		t.Error("tree out of range: no error")
	}
	dec, _ := e.Decompose(false)
	if _, err := dec.Importance([]string{"a"}); err == nil {
		t.Error("too few names: no error")
	}
	if _, err := dec.Importance([]string{"a", "a"}); err == nil {
		t.Error("duplicate names: no error")
	}
	if _, err := e.Curve("x", 0, []float64{}); err == nil {
		t.Error("empty grid: no error")
	}
}
