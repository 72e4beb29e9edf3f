package forest

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"xbo/surrogate"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func uniformRows(rng *rand.Rand, n, d int) [][]float64 {
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = rng.Float64()
		}
	}
	return x
}

// Without bootstrap and with one sample per leaf a tree reproduces every
// distinct training point exactly.
func TestInterpolatesTrainingData(t *testing.T) {
	rng := newRNG(1)
	x := uniformRows(rng, 200, 3)
	y := make([]float64, len(x))
	for i, r := range x {
		y[i] = math.Sin(6*r[0]) + r[1]*r[2]
	}
	f, err := Fit(x, y, Options{Trees: 3, NoBootstrap: true, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := f.TreePredictions(x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		for tr, v := range tp[i] {
			if v != y[i] {
				t.Fatalf("row %d, tree %d: predicted %v, want %v exactly", i, tr, v, y[i])
			}
		}
	}
}

// A forest on a smooth function generalises: R² on fresh points above 0.9.
func TestGeneralises(t *testing.T) {
	rng := newRNG(2)
	fn := func(r []float64) float64 { return math.Sin(6*r[0]) + 2*r[1]*r[1] }
	x := uniformRows(rng, 1000, 4)
	y := make([]float64, len(x))
	for i, r := range x {
		y[i] = fn(r)
	}
	f, err := Fit(x, y, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	xt := uniformRows(rng, 500, 4)
	mean := make([]float64, len(xt))
	vr := make([]float64, len(xt))
	if err := f.Predict(xt, mean, vr); err != nil {
		t.Fatal(err)
	}
	var sse, sst, ybar float64
	for _, r := range xt {
		ybar += fn(r)
	}
	ybar /= float64(len(xt))
	for i, r := range xt {
		sse += (mean[i] - fn(r)) * (mean[i] - fn(r))
		sst += (fn(r) - ybar) * (fn(r) - ybar)
		if vr[i] < 0 {
			t.Fatalf("negative variance %v", vr[i])
		}
	}
	if r2 := 1 - sse/sst; r2 < 0.9 {
		t.Fatalf("R² = %.3f, want > 0.9", r2)
	}
}

// Same data and seed give identical bits whatever the number of workers.
func TestDeterministic(t *testing.T) {
	rng := newRNG(3)
	x := uniformRows(rng, 300, 5)
	y := make([]float64, len(x))
	for i, r := range x {
		y[i] = r[0] + r[1]*r[4] + 0.1*rng.NormFloat64()
	}
	preds := func(workers int, seed uint64) []float64 {
		f, err := Fit(x, y, Options{Trees: 16, MTry: 0.5, Seed: seed, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		out, err := f.TreePredictions(x[:50])
		if err != nil {
			t.Fatal(err)
		}
		var flat []float64
		for _, r := range out {
			flat = append(flat, r...)
		}
		return flat
	}
	a, b, c := preds(1, 9), preds(4, 9), preds(2, 10)
	same := true
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("prediction %d differs between 1 and 4 workers: %v vs %v", i, a[i], b[i])
		}
		same = same && a[i] == c[i]
	}
	if same {
		t.Fatal("different seeds gave identical forests")
	}
}

// Inactive (−1) is a value of its own: a step between "off" and "on" is
// found, on numeric and categorical dimensions.
func TestInactiveSplits(t *testing.T) {
	for _, levels := range [][]int{{0, 0}, {3, 0}} {
		rng := newRNG(4)
		var x [][]float64
		var y []float64
		for range 400 {
			r := []float64{rng.Float64(), rng.Float64()}
			v := r[1]
			if rng.IntN(2) == 0 {
				r[0] = Inactive
				v += 10
			}
			x = append(x, r)
			y = append(y, v)
		}
		f, err := Fit(x, y, Options{Trees: 10, Levels: levels, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := f.Tree(0).Node(0)
		if n.Feature != 0 {
			t.Fatalf("levels %v: root splits on %d, want the on/off dimension 0", levels, n.Feature)
		}
		if levels[0] > 0 && !(len(n.LeftLevels) == 1 && n.LeftLevels[0] == -1) && !(len(n.LeftLevels) == 3 && n.LeftLevels[0] == 0) {
			t.Fatalf("categorical root left levels %v, want {inactive} or its complement", n.LeftLevels)
		}
		mean := make([]float64, 2)
		vr := make([]float64, 2)
		if err := f.Predict([][]float64{{Inactive, 0.5}, {0.5, 0.5}}, mean, vr); err != nil {
			t.Fatal(err)
		}
		if math.Abs(mean[0]-10.5) > 0.2 || math.Abs(mean[1]-0.5) > 0.2 {
			t.Fatalf("levels %v: off/on predictions %v, want about 10.5 and 0.5", levels, mean)
		}
	}
}

// Breiman's theorem: for squared error the best cut of the levels ordered by
// mean response is the best subset split, so both searches find the same gain.
func TestCategoricalOrderingMatchesEnumeration(t *testing.T) {
	rng := newRNG(5)
	const k = 9
	for trial := range 50 {
		n := 60
		x := make([][]float64, n)
		y := make([]float64, n)
		effect := make([]float64, k+1)
		for c := range effect {
			effect[c] = rng.NormFloat64()
		}
		for i := range x {
			c := rng.IntN(k+1) - 1
			u := Inactive
			if c >= 0 {
				u = (float64(c) + 0.5) / k
			}
			x[i] = []float64{u}
			y[i] = effect[c+1] + 0.3*rng.NormFloat64()
		}
		minLeaf := 1 + trial%4
		r, err := resolve(Options{MinSamplesLeaf: minLeaf}, 1)
		if err != nil {
			t.Fatal(err)
		}
		b := newBuilder(newDataset(x, y, []int{k}), r, false)
		for i := range b.cnt {
			b.cnt[i] = int32(1 + i%3)
		}
		copy(b.order[0], b.d.order[0])
		w, s := 0.0, 0.0
		for i := range y {
			w += float64(b.cnt[i])
			s += float64(b.cnt[i]) * y[i]
		}
		saved := exhaustiveLimit
		exhaustiveLimit = 100
		gEnum, okEnum := b.bestCategorical(0, 0, n, s/w, w)
		exhaustiveLimit = 0
		gOrd, okOrd := b.bestCategorical(0, 0, n, s/w, w)
		exhaustiveLimit = saved
		if okEnum != okOrd || math.Abs(gEnum-gOrd) > 1e-9*math.Max(1, gEnum) {
			t.Fatalf("trial %d (min leaf %d): enumeration gain %v (%v), ordering %v (%v)", trial, minLeaf, gEnum, okEnum, gOrd, okOrd)
		}
	}
}

// Every point falls in exactly one leaf box, whose value is the prediction.
func TestLeafBoxesPartition(t *testing.T) {
	rng := newRNG(6)
	levels := []int{0, 4, 0}
	x := make([][]float64, 300)
	y := make([]float64, len(x))
	for i := range x {
		x[i] = []float64{rng.Float64(), (float64(rng.IntN(4)) + 0.5) / 4, rng.Float64()}
		if rng.IntN(4) == 0 {
			x[i][2] = Inactive
		}
		if rng.IntN(5) == 0 {
			x[i][1] = Inactive
		}
		y[i] = x[i][0]*3 + x[i][1] + x[i][2]*x[i][0] + rng.NormFloat64()*0.1
	}
	f, err := Fit(x, y, Options{Trees: 4, Levels: levels, MinSamplesLeaf: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for ti := range f.NumTrees() {
		tr := f.Tree(ti)
		leaves := tr.Leaves()
		if len(leaves) != tr.NumLeaves() {
			t.Fatalf("tree %d: %d leaf boxes for %d leaves", ti, len(leaves), tr.NumLeaves())
		}
		for q := range 500 {
			p := []float64{rng.Float64(), (float64(rng.IntN(4)) + 0.5) / 4, rng.Float64()}
			if q%3 == 0 {
				p[2] = Inactive
			}
			if q%5 == 0 {
				p[1] = Inactive
			}
			hits := 0
			for _, l := range leaves {
				in := true
				for j, k := range levels {
					if k > 0 {
						if l.Box.Levels[j] != nil && !l.Box.Levels[j][levelCode(p[j], k)+1] {
							in = false
						}
					} else if !(l.Box.Lower[j] < p[j] && p[j] <= l.Box.Upper[j]) {
						in = false
					}
				}
				if in {
					hits++
					if l.Value != tr.Predict(p) {
						t.Fatalf("tree %d: box value %v, prediction %v", ti, l.Value, tr.Predict(p))
					}
				}
			}
			if hits != 1 {
				t.Fatalf("tree %d: point %v in %d boxes", ti, p, hits)
			}
		}
	}
}

// The variance of the per-tree averages, computed two ways.
func TestAverageVariance(t *testing.T) {
	rng := newRNG(7)
	x := uniformRows(rng, 200, 2)
	y := make([]float64, len(x))
	for i, r := range x {
		y[i] = r[0]*r[0] + rng.NormFloat64()*0.2
	}
	var m surrogate.Model
	m, err := Fit(x, y, Options{Trees: 12, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	av, ok := m.(surrogate.AverageVariancer)
	if !ok {
		t.Fatal("forest is not an AverageVariancer")
	}
	pts := uniformRows(rng, 30, 2)
	got, err := av.AverageVariance(pts)
	if err != nil {
		t.Fatal(err)
	}
	tp, _ := m.(*Forest).TreePredictions(pts)
	avg := make([]float64, 12)
	for _, r := range tp {
		for tr, v := range r {
			avg[tr] += v / float64(len(pts))
		}
	}
	mu := 0.0
	for _, a := range avg {
		mu += a / 12
	}
	want := 0.0
	for _, a := range avg {
		want += (a - mu) * (a - mu) / 12
	}
	if math.Abs(got-want) > 1e-12*math.Max(1, want) || want == 0 {
		t.Fatalf("average variance %v, want %v (> 0)", got, want)
	}
}

func TestBadInput(t *testing.T) {
	good := [][]float64{{0.1}, {0.5}}
	cases := []struct {
		name string
		x    [][]float64
		y    []float64
		o    Options
	}{
		{"no rows", nil, nil, Options{}},
		{"length mismatch", good, []float64{1}, Options{}},
		{"ragged", [][]float64{{0.1}, {0.2, 0.3}}, []float64{1, 2}, Options{}},
		{"out of cube", [][]float64{{0.1}, {1.5}}, []float64{1, 2}, Options{}},
		{"NaN coordinate", [][]float64{{0.1}, {math.NaN()}}, []float64{1, 2}, Options{}},
		{"NaN target", good, []float64{1, math.NaN()}, Options{}},
		{"one level", good, []float64{1, 2}, Options{Levels: []int{1}}},
		{"levels length", good, []float64{1, 2}, Options{Levels: []int{0, 0}}},
		{"negative trees", good, []float64{1, 2}, Options{Trees: -1}},
		{"fractional mtry", good, []float64{1, 2}, Options{MTry: 2.5}},
	}
	for _, c := range cases {
		if _, err := Fit(c.x, c.y, c.o); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	f, err := Fit(good, []float64{1, 2}, Options{Trees: 2})
	if err != nil {
		t.Fatal(err)
	}
	err = f.Predict([][]float64{{0.1, 0.2}}, make([]float64, 1), make([]float64, 1))
	if !errors.Is(err, surrogate.ErrDim) {
		t.Errorf("wrong-dimension point: %v, want ErrDim", err)
	}
	if err := f.Predict([][]float64{{math.NaN()}}, make([]float64, 1), make([]float64, 1)); err == nil {
		t.Error("NaN point: no error")
	}
	if _, err := f.AverageVariance(nil); err == nil {
		t.Error("no points: no error")
	}
}
