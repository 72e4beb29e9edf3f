package bench

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"xbo/space"
)

// A curve table is a tabular learning-curve benchmark (as LCBench, Zimmer et
// al. 2021): every configuration of a grid of int parameters with the
// validation values of one real training run after each epoch. Every
// proposal of an int-valued space is a row, so optimizers need no rounding
// or nearest-neighbour lookup, and the final value of every configuration
// is known exactly.

// CurveDigitsMLP is the table of scikit-learn MLPs trained on the digits
// data (bench/scripts/mlp_curves.py, which documents the grid).
const CurveDigitsMLP = "digits-mlp"

//go:embed curves/digits_mlp.csv
var digitsMLPCurves []byte

// curveTable holds one curve per grid point, indexed in mixed radix over
// the parameters (the first parameter varies slowest).
type curveTable struct {
	params []space.Param // int parameters, Low and High the grid's ends
	points [][]float64   // by grid index: the point's natural values
	curves [][]float64   // by grid index; every curve has the same length
}

// parseCurveTable reads a table: a header naming the int parameters and
// then the columns loss_1 … loss_T, and one row per grid point. Every grid
// point between each parameter's smallest and largest value must appear
// exactly once, with T finite values.
func parseCurveTable(r io.Reader) (*curveTable, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("%d rows, want a header and at least one configuration", len(rows))
	}
	header := rows[0]
	dim := 0
	for dim < len(header) && !strings.HasPrefix(header[dim], "loss_") {
		dim++
	}
	steps := len(header) - dim
	if dim == 0 || steps < 2 {
		return nil, fmt.Errorf("header %q: want parameter columns, then loss_1 … loss_T with T ≥ 2", header)
	}
	for t := range steps {
		if want := fmt.Sprintf("loss_%d", t+1); header[dim+t] != want {
			return nil, fmt.Errorf("column %d is %q, want %q", dim+t+1, header[dim+t], want)
		}
	}
	points := make([][]float64, len(rows)-1)
	tab := &curveTable{params: make([]space.Param, dim)}
	for j := range dim {
		tab.params[j] = space.Param{Name: header[j], Type: space.Int, Low: math.Inf(1), High: math.Inf(-1)}
	}
	values := make([][]float64, len(rows)-1)
	for i, row := range rows[1:] {
		if len(row) != len(header) {
			return nil, fmt.Errorf("row %d: %d fields, want %d", i+2, len(row), len(header))
		}
		points[i] = make([]float64, dim)
		for j := range dim {
			k, err := strconv.ParseInt(row[j], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("row %d, %s: %w", i+2, header[j], err)
			}
			points[i][j] = float64(k)
			p := &tab.params[j]
			p.Low, p.High = math.Min(p.Low, float64(k)), math.Max(p.High, float64(k))
		}
		values[i] = make([]float64, steps)
		for t := range steps {
			v, err := strconv.ParseFloat(row[dim+t], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("row %d, %s: %q is not a finite number", i+2, header[dim+t], row[dim+t])
			}
			values[i][t] = v
		}
	}
	size := 1.0
	for _, p := range tab.params {
		if size *= p.High - p.Low + 1; size > float64(len(values)) {
			return nil, fmt.Errorf("%d rows for a grid of at least %.0f points", len(values), size)
		}
	}
	if int(size) != len(values) {
		return nil, fmt.Errorf("%d rows for a grid of %.0f points", len(values), size)
	}
	tab.points, tab.curves = make([][]float64, len(values)), make([][]float64, len(values))
	for i, x := range points {
		idx, _ := tab.index(x)
		if tab.curves[idx] != nil {
			return nil, fmt.Errorf("row %d repeats the configuration %v", i+2, x)
		}
		tab.points[idx], tab.curves[idx] = x, values[i]
	}
	return tab, nil
}

// index is the grid index of natural values x (false: x is not a grid
// point).
func (tab *curveTable) index(x []float64) (int, bool) {
	if len(x) != len(tab.params) {
		return 0, false
	}
	idx := 0
	for j, p := range tab.params {
		if x[j] != math.Trunc(x[j]) || x[j] < p.Low || x[j] > p.High {
			return 0, false
		}
		idx = idx*(int(p.High-p.Low)+1) + int(x[j]-p.Low)
	}
	return idx, true
}

// curve is the stored curve of x (nil: not a grid point).
func (tab *curveTable) curve(x []float64) []float64 {
	idx, ok := tab.index(x)
	if !ok {
		return nil
	}
	return tab.curves[idx]
}

// loadTableProblem sets up a table's problem: T = steps epochs of the
// table, f(x) the value at epoch T.
func loadTableProblem(p *CurveProblem, data []byte, steps int64) (*Function, error) {
	tab, err := parseCurveTable(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	have := int64(len(tab.curves[0]))
	if steps < 2 || steps > have {
		return nil, fmt.Errorf("steps %d: the table's curves have %d epochs (T may be 2..%d)", steps, have, have)
	}
	p.Steps, p.table = steps, tab
	f := &Function{Name: p.Name, Dim: len(tab.params), Params: tab.params, Optimum: math.Inf(1)}
	f.Eval = func(x []float64) float64 {
		c := tab.curve(x)
		if c == nil {
			return math.NaN()
		}
		return c[steps-1]
	}
	for idx, c := range tab.curves {
		switch v := c[steps-1]; {
		case v < f.Optimum:
			f.Optimum, f.Argmin = v, [][]float64{slices.Clone(tab.points[idx])}
		case v == f.Optimum:
			f.Argmin = append(f.Argmin, slices.Clone(tab.points[idx]))
		}
	}
	return f, nil
}
