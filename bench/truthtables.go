package bench

import (
	"bufio"
	"embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"xbo/space"
)

// gridTable is a full grid of results: one value for every combination of
// the levels of its parameters. Parameter j is an integer 0..L_j−1 indexing
// its L_j sorted distinct values, so a search over the table and its
// explanations see the levels and nothing between them. Under the reference
// measure of the explanations (ints uniform over their levels) a full grid
// is its own ground truth: the exact PD of level k of parameter j is the
// mean of the table over the other parameters with uniform weights, and the
// exact functional ANOVA follows by enumeration.
type gridTable struct {
	params  []string
	levels  [][]float64 // sorted distinct natural values per parameter
	values  []float64   // row-major over level indices, the last parameter fastest
	strides []int
	// duplicates counts configurations that appear more than once (their
	// values are averaged); firstDuplicate is the first one, in natural
	// values.
	duplicates     int
	firstDuplicate []float64
}

// readGridTable reads a full-grid CSV (columns params and value, others
// ignored) from r; name labels errors. Repeated configurations are averaged
// and counted.
func readGridTable(r io.Reader, name string, params []string, value string) (*gridTable, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	cols := make([]int, len(params)+1)
	for i, col := range append(slices.Clone(params), value) {
		cols[i] = slices.Index(header, col)
		if cols[i] < 0 {
			return nil, fmt.Errorf("%s: no column %q", name, col)
		}
	}
	var rows [][]float64
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		row := make([]float64, len(cols))
		for i, c := range cols {
			if row[i], err = strconv.ParseFloat(strings.TrimSpace(rec[c]), 64); err != nil || math.IsNaN(row[i]) || math.IsInf(row[i], 0) {
				return nil, fmt.Errorf("%s line %d: column %q: %q is not a finite number", name, line, header[c], rec[c])
			}
		}
		rows = append(rows, row)
	}
	t := &gridTable{params: params, levels: make([][]float64, len(params)), strides: make([]int, len(params))}
	size := 1
	for j := len(params) - 1; j >= 0; j-- {
		for _, row := range rows {
			t.levels[j] = append(t.levels[j], row[j])
		}
		slices.Sort(t.levels[j])
		t.levels[j] = slices.Compact(t.levels[j])
		if len(t.levels[j]) < 2 {
			return nil, fmt.Errorf("%s: column %q has fewer than 2 distinct values", name, params[j])
		}
		t.strides[j] = size
		size *= len(t.levels[j])
	}
	sum, count := make([]float64, size), make([]int, size)
	for _, row := range rows {
		c := 0
		for j := range params {
			k, _ := slices.BinarySearch(t.levels[j], row[j])
			c += k * t.strides[j]
		}
		if count[c] == 1 {
			t.duplicates++
			if t.firstDuplicate == nil {
				t.firstDuplicate = row[:len(params)]
			}
		}
		sum[c] += row[len(params)]
		count[c]++
	}
	filled := 0
	t.values = make([]float64, size)
	for c := range sum {
		if count[c] > 0 {
			filled++
			t.values[c] = sum[c] / float64(count[c])
		}
	}
	if filled != size {
		return nil, fmt.Errorf("%s: %d configurations where the full grid has %d", name, filled, size)
	}
	return t, nil
}

// readGridFile is readGridTable on a file.
func readGridFile(path string, params []string, value string) (*gridTable, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return readGridTable(fh, path, params, value)
}

// cell is the index into values of level indices x (natural values of the
// Int parameters), or false when x is off the grid.
func (t *gridTable) cell(x []float64) (int, bool) {
	if len(x) != len(t.params) {
		return 0, false
	}
	c := 0
	for j, v := range x {
		if v != math.Round(v) || v < 0 || int(v) >= len(t.levels[j]) {
			return 0, false
		}
		c += int(v) * t.strides[j]
	}
	return c, true
}

func (t *gridTable) eval(x []float64) float64 {
	c, ok := t.cell(x)
	if !ok {
		return math.NaN()
	}
	return t.values[c]
}

// level is the level index of cell c for parameter j.
func (t *gridTable) level(c, j int) int { return c / t.strides[j] % len(t.levels[j]) }

// spaceParams are the parameters of the level indices: Int, or Categorical
// (choices the level values) for the columns named categorical. Either way
// level k is the natural value k and the reference measure is uniform over
// the levels.
func (t *gridTable) spaceParams(categorical []string) []space.Param {
	ps := make([]space.Param, len(t.params))
	for j, name := range t.params {
		ps[j] = space.Param{Name: name, Type: space.Int, Low: 0, High: float64(len(t.levels[j]) - 1)}
		if slices.Contains(categorical, name) {
			choices := make([]any, len(t.levels[j]))
			for k, v := range t.levels[j] {
				choices[k] = v
			}
			ps[j] = space.Param{Name: name, Type: space.Categorical, Choices: choices}
		}
	}
	return ps
}

// pdLevels is, per parameter, the exact PD of each level: the mean of the
// table over the other parameters, uniform weights.
func (t *gridTable) pdLevels() [][]float64 {
	pd := make([][]float64, len(t.params))
	for j := range t.params {
		pd[j] = make([]float64, len(t.levels[j]))
		for c, v := range t.values {
			pd[j][t.level(c, j)] += v
		}
		per := float64(len(t.values) / len(t.levels[j]))
		for k := range pd[j] {
			pd[j][k] /= per
		}
	}
	return pd
}

// indices are the exact main and total Sobol indices of the table under
// uniform weights: V_j is the variance of the PD of j over its levels and
// T_j·V the mean over the other parameters' combinations of the variance
// along j.
func (t *gridTable) indices() (main, total []float64, err error) {
	n := float64(len(t.values))
	mean := 0.0
	for _, v := range t.values {
		mean += v
	}
	mean /= n
	variance := 0.0
	for _, v := range t.values {
		variance += (v - mean) * (v - mean)
	}
	variance /= n
	if !(variance > 0) {
		return nil, nil, errors.New("the table is constant")
	}
	pd := t.pdLevels()
	main, total = make([]float64, len(t.params)), make([]float64, len(t.params))
	lineMean := make([]float64, len(t.values))
	for j := range t.params {
		for _, m := range pd[j] {
			main[j] += (m - mean) * (m - mean)
		}
		main[j] /= float64(len(pd[j])) * variance
		// lineMean[base] is the mean along j of the line through base (the
		// cell with level 0 of j).
		clear(lineMean)
		for c, v := range t.values {
			lineMean[c-t.level(c, j)*t.strides[j]] += v
		}
		within := 0.0
		for c, v := range t.values {
			m := lineMean[c-t.level(c, j)*t.strides[j]] / float64(len(t.levels[j]))
			within += (v - m) * (v - m)
		}
		total[j] = within / n / variance
	}
	return main, total, nil
}

// function is the table as a test function of the level indices.
func (t *gridTable) function(name string) *Function {
	best := slices.Index(t.values, slices.Min(t.values))
	argmin := make([]float64, len(t.params))
	for j := range argmin {
		argmin[j] = float64(t.level(best, j))
	}
	return &Function{Name: name, Dim: len(t.params), Params: t.spaceParams(nil), Optimum: t.values[best],
		Argmin: [][]float64{argmin}, Eval: t.eval}
}

// tableSpec is a table of the catalogue.
type tableSpec struct {
	name   string
	file   string
	shared bool // in CatalogueOptions.DataDir, else built in (repoTables)
	params []string
	value  string
	// categorical columns are choices, not ordered levels.
	categorical []string
	heldOut     bool
	tags        []string
	source      string
}

// truthTableSpecs are the catalogue's tables. Sources: lda, svm and logreg
// from automl/HPOlib (benchmarks lda_on_grid, svm_on_grid, logreg_on_grid;
// ../shared/data/README.md), read from CatalogueOptions.DataDir; the
// scikit-learn tables are written by bench/scripts/sklearn_grids.py
// (bench/testdata/README.md) and built in. All minimize.
var truthTableSpecs = []tableSpec{
	{name: "lda-grid", file: "lda_on_grid.csv", shared: true, params: []string{"kappa", "tau0", "S"}, value: "perplexity",
		source: "online LDA (Hoffman et al., via HPOlib)"},
	{name: "svm-grid", file: "svm_on_grid.csv", shared: true, params: []string{"C", "alpha", "epsilon"}, value: "error",
		source: "SVM grid (HPOlib)"},
	{name: "logreg-grid", file: "logreg_on_grid.csv", shared: true, params: []string{"lrate_idx", "l2_reg", "batchsize", "n_epochs"},
		value: "val_error", heldOut: true, source: "logistic regression grid (HPOlib)"},
	{name: "sklearn-sgd-grid", file: "sklearn_sgd_grid.csv", params: []string{"learning_rate_init", "alpha", "batch_size", "momentum", "hidden_units"},
		value: "val_loss", categorical: []string{"momentum"}, tags: []string{TagSteps, TagHeavyTailed, TagCategorical},
		source: "MLP by SGD on digits (scikit-learn; diverged runs at the metric's ceiling; momentum 0 plain, 1 heavy-ball, 2 Nesterov)"},
	{name: "sklearn-boosting-grid", file: "sklearn_boosting_grid.csv", params: []string{"learning_rate", "max_leaf_nodes", "min_samples_leaf", "l2_regularization", "max_iter"},
		value: "val_loss", heldOut: true, source: "histogram gradient boosting on breast cancer (scikit-learn)"},
}

// repoTables are the catalogue's tables that live in the repository,
// compiled into the binary so that every copy of xbo runs them; a table
// added under this name is picked up by the next build.
//
//go:embed testdata/sklearn_*_grid.csv
var repoTables embed.FS

// truthTables loads the tables that are present and lists the absent ones.
func truthTables(o CatalogueOptions) ([]*TruthProblem, []SkippedTable, error) {
	var out []*TruthProblem
	var skipped []SkippedTable
	for _, s := range truthTableSpecs {
		var t *gridTable
		var err error
		where := filepath.Join(o.DataDir, s.file)
		if s.shared {
			t, err = readGridFile(where, s.params, s.value)
		} else {
			where = "bench/testdata/" + s.file + " (built into the binary)"
			var fh fs.File
			if fh, err = repoTables.Open("testdata/" + s.file); err == nil {
				t, err = readGridTable(fh, s.file, s.params, s.value)
				fh.Close()
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			skipped = append(skipped, SkippedTable{Name: s.name, HeldOut: s.heldOut, Reason: where + " not found"})
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("bench: table %s: %w", s.name, err)
		}
		p, err := t.problem(s)
		if err != nil {
			return nil, nil, fmt.Errorf("bench: table %s: %w", s.name, err)
		}
		out = append(out, p)
	}
	return out, skipped, nil
}

// problem is the table as a truth problem with its exact truths.
func (t *gridTable) problem(s tableSpec) (*TruthProblem, error) {
	sp, err := space.New(space.Minimize, t.spaceParams(s.categorical))
	if err != nil {
		return nil, err
	}
	main, total, err := t.indices()
	if err != nil {
		return nil, err
	}
	pd := t.pdLevels()
	p := &TruthProblem{Name: s.name, HeldOut: s.heldOut, Tags: append([]string{TagTable, TagReal}, s.tags...), Space: sp,
		Eval: t.eval, Main: main, Total: total, Note: s.source}
	p.PD = func(j int, v float64) (float64, bool) {
		if j < 0 || j >= len(pd) || v != math.Round(v) || v < 0 || int(v) >= len(pd[j]) {
			return math.NaN(), false
		}
		return pd[j][int(v)], true
	}
	if t.duplicates > 0 {
		p.Note += fmt.Sprintf("; %d configuration(s) appear more than once, e.g. %v, and are averaged", t.duplicates, t.firstDuplicate)
	}
	return p, nil
}
