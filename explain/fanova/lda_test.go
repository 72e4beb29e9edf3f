package fanova

import (
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"xbo/forest"
	"xbo/space"
)

const ldaCSV = "../../../shared/data/lda_on_grid.csv"

// readLDA returns the Online LDA grid encoded in testdata/lda_space.json,
// with the response in column col (3: perplexity, 4: runtime in seconds).
func readLDA(t *testing.T, col int) (*space.Space, [][]float64, []float64) {
	t.Helper()
	s, err := space.Load("testdata/lda_space.json")
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(ldaCSV)
	if err != nil {
		t.Skipf("shared data not available: %v", err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var x [][]float64
	var y []float64
	for line, r := range recs[1:] {
		vals := make([]float64, 5)
		for c := range vals {
			if vals[c], err = strconv.ParseFloat(r[c], 64); err != nil {
				t.Fatalf("line %d column %d: %v", line+2, c+1, err)
			}
		}
		u, err := s.Encode(vals[:3])
		if err != nil {
			t.Fatalf("line %d: %v", line+2, err)
		}
		x = append(x, u)
		y = append(y, vals[col])
	}
	return s, x, y
}

func ldaImportance(t *testing.T, s *space.Space, x [][]float64, y []float64, seed uint64) *Importance {
	t.Helper()
	f, err := forest.Fit(x, y, forest.Options{Seed: seed, Levels: s.Levels()})
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
	im, err := dec.Importance(s.Names())
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// gridANOVA is the exact functional ANOVA of the full grid with equal weight
// on every level (duplicates averaged): the ground truth of the data set.
func gridANOVA(x [][]float64, y []float64) (main [3]float64, pairs map[[2]int]float64) {
	type key [3]float64
	sum := map[key]float64{}
	cnt := map[key]float64{}
	var lv [3][]float64
	seen := [3]map[float64]bool{{}, {}, {}}
	for i, r := range x {
		k := key{r[0], r[1], r[2]}
		sum[k] += y[i]
		cnt[k]++
		for j := range 3 {
			if !seen[j][r[j]] {
				seen[j][r[j]] = true
				lv[j] = append(lv[j], r[j])
			}
		}
	}
	n := float64(len(lv[0]) * len(lv[1]) * len(lv[2]))
	f := func(a, b, c float64) float64 { k := key{a, b, c}; return sum[k] / cnt[k] }
	f0, v := 0.0, 0.0
	for _, a := range lv[0] {
		for _, b := range lv[1] {
			for _, c := range lv[2] {
				f0 += f(a, b, c) / n
			}
		}
	}
	for _, a := range lv[0] {
		for _, b := range lv[1] {
			for _, c := range lv[2] {
				v += (f(a, b, c) - f0) * (f(a, b, c) - f0) / n
			}
		}
	}
	marg := func(fix []int, at []float64) float64 {
		s, m := 0.0, 0.0
		for _, a := range lv[0] {
			for _, b := range lv[1] {
				for _, c := range lv[2] {
					p := [3]float64{a, b, c}
					ok := true
					for q, j := range fix {
						ok = ok && p[j] == at[q]
					}
					if ok {
						s += f(a, b, c)
						m++
					}
				}
			}
		}
		return s / m
	}
	for j := range 3 {
		for _, a := range lv[j] {
			d := marg([]int{j}, []float64{a}) - f0
			main[j] += d * d / float64(len(lv[j]))
		}
	}
	pairs = map[[2]int]float64{}
	for j := range 3 {
		for k := j + 1; k < 3; k++ {
			for _, a := range lv[j] {
				for _, b := range lv[k] {
					d := marg([]int{j, k}, []float64{a, b}) - marg([]int{j}, []float64{a}) - marg([]int{k}, []float64{b}) + f0
					pairs[[2]int{j, k}] += d * d / float64(len(lv[j])*len(lv[k]))
				}
			}
			pairs[[2]int{j, k}] /= v
		}
		main[j] /= v
	}
	return main, pairs
}

// The real case of Hutter et al. 2014, section 4.1: batch size S is the top main
// effect and κ×S the top interaction.
func TestOnlineLDA(t *testing.T) {
	s, x, y := readLDA(t, 3)
	im := ldaImportance(t, s, x, y, 1)
	gm, gp := gridANOVA(x, y)
	t.Logf("Online LDA perplexity, %d rows, forest of 30 trees (seed 1):", len(x))
	t.Logf("%-12s %16s %8s %8s %8s", "effect", "xbo (± tree std)", "paper", "fanova", "grid")
	ref := []struct {
		key        string
		paper, doc string
		grid       float64
	}{
		{"kappa", "", "0.066", gm[0]}, {"tau0", "", "0.035", gm[1]}, {"S", "0.65", "0.619", gm[2]},
		{"kappa,tau0", "", "0.011", gp[[2]int{0, 1}]}, {"kappa,S", "0.18", "0.146", gp[[2]int{0, 2}]},
		{"tau0,S", "", "0.067", gp[[2]int{1, 2}]},
	}
	for _, r := range ref {
		e, ok := im.Main[r.key]
		if !ok {
			e = im.Pairs[r.key]
		}
		t.Logf("%-12s %7.3f ± %6.3f %8s %8s %8.3f", r.key, e.Fraction, e.Std, r.paper, r.doc, r.grid)
	}
	mains, pairs := im.RankedMain(), im.RankedPairs()
	if mains[0].Name != "S" {
		t.Errorf("top main effect %s, want S (ranking %v)", mains[0].Name, mains)
	}
	if pairs[0].Name != "kappa,S" {
		t.Errorf("top interaction %s, want kappa,S (ranking %v)", pairs[0].Name, pairs)
	}
	if f := im.Main["S"].Fraction; f < 0.5 || f > 0.8 {
		t.Errorf("S explains %.3f, want within 0.5..0.8 (paper 0.65, fanova 0.619)", f)
	}

	// The paper's setting: a forest on 100 of the 288 points.
	sub := ldaSubsamples(t, s, x, y)
	sm, kp := sub.Main["S"].Fraction, sub.Pairs["kappa,S"].Fraction
	const reps = 5
	t.Logf("100-point subsamples (mean of %d): S %.3f (paper 0.65), kappa×S %.3f (paper 0.18)", reps, sm, kp)
	if math.IsNaN(sm) || sm < 0.4 {
		t.Errorf("100-point S fraction %.3f, want the largest share", sm)
	}
}

// ldaSubset draws 100 rows without replacement, the paper's subsample.
func ldaSubset(rng *rand.Rand, x [][]float64, y []float64) ([][]float64, []float64) {
	perm := rng.Perm(len(x))[:100]
	xs := make([][]float64, 100)
	ys := make([]float64, 100)
	for i, p := range perm {
		xs[i], ys[i] = x[p], y[p]
	}
	return xs, ys
}

// ldaSubsamples is the mean importance of forests on five random subsets of
// 100 rows, the paper's setting (section 4.1).
func ldaSubsamples(t *testing.T, s *space.Space, x [][]float64, y []float64) *Importance {
	t.Helper()
	rng := newRNG(100)
	const reps = 5
	mean := &Importance{Main: map[string]Effect{}, Pairs: map[string]Effect{}}
	for r := range reps {
		xs, ys := ldaSubset(rng, x, y)
		im := ldaImportance(t, s, xs, ys, uint64(r))
		for k, e := range im.Main {
			m := mean.Main[k]
			m.Fraction += e.Fraction / reps
			mean.Main[k] = m
		}
		for k, e := range im.Pairs {
			m := mean.Pairs[k]
			m.Fraction += e.Fraction / reps
			mean.Pairs[k] = m
		}
	}
	return mean
}

// The runtime analysis of Hutter et al. 2014, section 4.1 (Figure 3): the
// learning rate decay kappa is the top main effect of the runtime, the batch
// size S the second.
func TestOnlineLDARuntime(t *testing.T) {
	s, x, y := readLDA(t, 4)
	im := ldaImportance(t, s, x, y, 1)
	sub := ldaSubsamples(t, s, x, y)
	gm, gp := gridANOVA(x, y)
	t.Logf("Online LDA runtime, %d rows: forest of 30 trees on all rows (seed 1), mean of 5 forests on 100 rows, exact grid ANOVA", len(x))
	t.Logf("%-12s %16s %8s %8s %8s", "effect", "xbo (± tree std)", "100 rows", "paper", "grid")
	ref := []struct {
		key, paper string
		grid       float64
	}{
		{"kappa", "0.54", gm[0]}, {"tau0", "", gm[1]}, {"S", "0.21", gm[2]},
		{"kappa,tau0", "", gp[[2]int{0, 1}]}, {"kappa,S", "", gp[[2]int{0, 2}]}, {"tau0,S", "", gp[[2]int{1, 2}]},
	}
	for _, r := range ref {
		e, ok := im.Main[r.key]
		es := sub.Main[r.key]
		if !ok {
			e, es = im.Pairs[r.key], sub.Pairs[r.key]
		}
		t.Logf("%-12s %7.3f ± %6.3f %8.3f %8s %8.3f", r.key, e.Fraction, e.Std, es.Fraction, r.paper, r.grid)
	}
	for _, c := range []struct {
		name string
		im   *Importance
	}{{"all rows", im}, {"100 rows", sub}} {
		if c.im.Main["kappa"].Fraction <= c.im.Main["S"].Fraction || c.im.Main["S"].Fraction <= c.im.Main["tau0"].Fraction {
			t.Errorf("%s: main effects kappa %.3f, S %.3f, tau0 %.3f; want kappa > S > tau0", c.name,
				c.im.Main["kappa"].Fraction, c.im.Main["S"].Fraction, c.im.Main["tau0"].Fraction)
		}
	}
}

// The paper's fractions come from one forest on one random subset of 100
// rows; this logs how far such a figure moves from subset to subset (50
// subsets, quantiles of the two leading effects of each response).
func TestOnlineLDASubsampleSpread(t *testing.T) {
	for _, c := range []struct {
		col         int
		name        string
		first, pair [2]string // kind ("main" or "pair") and effect
	}{
		{3, "perplexity", [2]string{"main", "S"}, [2]string{"pair", "kappa,S"}},
		{4, "runtime", [2]string{"main", "kappa"}, [2]string{"main", "S"}},
	} {
		s, x, y := readLDA(t, c.col)
		rng := newRNG(7)
		const reps = 50
		var a, b []float64
		get := func(im *Importance, k [2]string) float64 {
			if k[0] == "main" {
				return im.Main[k[1]].Fraction
			}
			return im.Pairs[k[1]].Fraction
		}
		for r := range reps {
			xs, ys := ldaSubset(rng, x, y)
			im := ldaImportance(t, s, xs, ys, uint64(r))
			a, b = append(a, get(im, c.first)), append(b, get(im, c.pair))
		}
		for _, q := range []struct {
			key string
			v   []float64
		}{{c.first[1], a}, {c.pair[1], b}} {
			slices.Sort(q.v)
			t.Logf("%s, %s over %d subsets of 100 rows: min %.3f, 10%% %.3f, median %.3f, 90%% %.3f, max %.3f",
				c.name, q.key, reps, q.v[0], q.v[reps/10], q.v[reps/2], q.v[reps-reps/10-1], q.v[reps-1])
			if q.v[reps/2] <= 0 || q.v[reps/2] >= 1 {
				t.Errorf("%s, %s: median fraction %v outside (0, 1)", c.name, q.key, q.v[reps/2])
			}
		}
	}
}
