package bench

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func hasSharedData() bool {
	_, err := os.Stat(filepath.Join(sharedData, "lda_on_grid.csv"))
	return err == nil
}

// A table's truths against a direct enumeration on a tiny grid: 3 levels
// of a × 2 of b × 2 of c with an interaction, and one configuration listed
// twice (averaged). The enumeration takes PDs as means over explicit loops
// and the total effect as 1 − Var E[f | x_−j]/V, a formula the
// implementation does not use (it averages the variance along j).
func TestGridTableTruth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grid.csv")
	// f = a + 10·b + a·c·5, levels a ∈ {1, 2, 4}, b ∈ {0, 1}, c ∈ {0, 1};
	// the row (4, 1, 1) appears twice, once with 100 more: the mean is 50
	// above the formula.
	f := func(a, b, c float64) float64 { return a + 10*b + 5*a*c }
	levels := [][]float64{{1, 2, 4}, {0, 1}, {0, 1}}
	var sb strings.Builder
	sb.WriteString("b,a,c,y,ignored\n")
	for _, a := range levels[0] {
		for _, b := range levels[1] {
			for _, c := range levels[2] {
				sb.WriteString(strings.Join([]string{fmtG(b), fmtG(a), fmtG(c), fmtG(f(a, b, c)), "x"}, ",") + "\n")
			}
		}
	}
	sb.WriteString("1,4,1," + fmtG(f(4, 1, 1)+100) + ",x\n")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := readGridFile(path, []string{"a", "b", "c"}, "y")
	if err != nil {
		t.Fatal(err)
	}
	if tab.duplicates != 1 {
		t.Fatalf("%d duplicates, want 1", tab.duplicates)
	}
	if _, err := LoadGrid(path, []string{"a", "b", "c"}, "y"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("LoadGrid accepted a duplicate: %v", err)
	}
	p, err := tab.problem(tableSpec{name: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	value := func(i, j, k int) float64 {
		v := f(levels[0][i], levels[1][j], levels[2][k])
		if i == 2 && j == 1 && k == 1 {
			v += 50
		}
		return v
	}
	if got := p.Eval([]float64{2, 1, 1}); got != value(2, 1, 1) {
		t.Errorf("averaged duplicate: %v, want %v", got, value(2, 1, 1))
	}
	// Enumerate: cube[i][j][k].
	var all []float64
	for i := range 3 {
		for j := range 2 {
			for k := range 2 {
				all = append(all, value(i, j, k))
			}
		}
	}
	_, variance := meanVar(all)
	dims := []int{3, 2, 2}
	at := func(idx [3]int) float64 { return value(idx[0], idx[1], idx[2]) }
	for d := range 3 {
		// PD of each level of d and the variance of E[f | x_−d].
		var pds, rest []float64
		for l := range dims[d] {
			var s []float64
			forEach(dims, func(idx [3]int) {
				if idx[d] == l {
					s = append(s, at(idx))
				}
			})
			m, _ := meanVar(s)
			pds = append(pds, m)
			got, ok := p.PD(d, float64(l))
			if !ok || math.Abs(got-m) > 1e-12 {
				t.Errorf("PD of %d at level %d: %v, enumeration %v", d, l, got, m)
			}
		}
		forEach(dims, func(idx [3]int) {
			if idx[d] != 0 {
				return
			}
			var s []float64
			for l := range dims[d] {
				idx[d] = l
				s = append(s, at(idx))
			}
			m, _ := meanVar(s)
			rest = append(rest, m)
		})
		_, vd := meanVar(pds)
		_, vr := meanVar(rest)
		if math.Abs(p.Main[d]-vd/variance) > 1e-12 || math.Abs(p.Total[d]-(1-vr/variance)) > 1e-12 {
			t.Errorf("indices of %d: S %v T %v, enumeration %v %v", d, p.Main[d], p.Total[d], vd/variance, 1-vr/variance)
		}
	}
	if _, ok := p.PD(0, 0.5); ok {
		t.Error("PD off the grid accepted")
	}
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// forEach calls f for every index of a 3-d grid.
func forEach(dims []int, f func(idx [3]int)) {
	for i := range dims[0] {
		for j := range dims[1] {
			for k := range dims[2] {
				f([3]int{i, j, k})
			}
		}
	}
}

// meanVar is the mean and population variance.
func meanVar(x []float64) (float64, float64) {
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	v := 0.0
	for _, u := range x {
		v += (u - m) * (u - m)
	}
	return m, v / float64(len(x))
}

// The shared tables load with the sizes ../shared/data/README.md states,
// LDA's duplicated configuration averaged; skipped without the directory.
func TestTruthTablesShared(t *testing.T) {
	if !hasSharedData() {
		t.Skip("no shared data directory")
	}
	byName := map[string]*TruthProblem{}
	for _, p := range catalogue(t) {
		byName[p.Name] = p
	}
	for name, size := range map[string]int{"lda-grid": 288, "svm-grid": 1400, "logreg-grid": 9680} {
		p := byName[name]
		if p == nil {
			t.Fatalf("%s missing", name)
		}
		cells := 1
		for _, param := range p.Space.Params {
			cells *= param.Cardinality()
		}
		if cells != size {
			t.Errorf("%s: %d cells, want %d", name, cells, size)
		}
	}
	if !strings.Contains(byName["lda-grid"].Note, "averaged") || strings.Contains(byName["svm-grid"].Note, "averaged") {
		t.Errorf("notes: %q, %q", byName["lda-grid"].Note, byName["svm-grid"].Note)
	}
}

// The built-in tables' exact indices agree with the fractions that
// bench/testdata/README.md states, computed independently with numpy by
// bench/scripts/sklearn_grids.py (printed to three decimals, four for the
// smallest: tolerance 0.0006).
func TestTruthTablesBuiltIn(t *testing.T) {
	stated := map[string]map[string][2]float64{
		"sklearn-sgd-grid": {"learning_rate_init": {0.576, 0.942}, "batch_size": {0.025, 0.279}, "momentum": {0.013, 0.221},
			"alpha": {0.003, 0.156}, "hidden_units": {0.0000, 0.018}},
		"sklearn-boosting-grid": {"learning_rate": {0.424, 0.702}, "max_iter": {0.266, 0.517}, "l2_regularization": {0.005, 0.059},
			"max_leaf_nodes": {0.004, 0.045}, "min_samples_leaf": {0.0009, 0.040}},
	}
	byName := map[string]*TruthProblem{}
	for _, p := range catalogue(t) {
		byName[p.Name] = p
	}
	for name, fractions := range stated {
		p := byName[name]
		if p == nil {
			t.Skipf("%s is not built in", name)
		}
		for param, st := range fractions {
			j, ok := p.Space.Index(param)
			if !ok {
				t.Fatalf("%s: no parameter %s", name, param)
			}
			if math.Abs(p.Main[j]-st[0]) > 6e-4 || math.Abs(p.Total[j]-st[1]) > 6e-4 {
				t.Errorf("%s %s: S %.4f T %.4f, README %.4f %.4f", name, param, p.Main[j], p.Total[j], st[0], st[1])
			}
		}
	}
}
