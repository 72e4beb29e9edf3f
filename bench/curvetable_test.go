package bench

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
)

// A small table: every grid point's curve is found where its row put it,
// and tables that are not a whole grid of finite values are refused.
func TestParseCurveTable(t *testing.T) {
	const good = "a,b,loss_1,loss_2\n" +
		"0,5,1,0.5\n0,6,2,0.6\n0,7,3,0.7\n" +
		"1,5,4,0.8\n1,6,5,0.9\n1,7,6,1.0\n"
	tab, err := parseCurveTable(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.params) != 2 || tab.params[0].Low != 0 || tab.params[0].High != 1 || tab.params[1].Low != 5 || tab.params[1].High != 7 {
		t.Errorf("parameters %+v", tab.params)
	}
	for _, c := range []struct {
		x    []float64
		want float64
	}{{[]float64{0, 5}, 1}, {[]float64{0, 7}, 3}, {[]float64{1, 6}, 5}, {[]float64{1, 7}, 6}} {
		if got := tab.curve(c.x); len(got) != 2 || got[0] != c.want {
			t.Errorf("curve of %v: %v, want %v first", c.x, got, c.want)
		}
	}
	for _, x := range [][]float64{{0, 4}, {2, 5}, {0.5, 5}, {0}, {math.NaN(), 5}} {
		if tab.curve(x) != nil {
			t.Errorf("%v found in the table", x)
		}
	}
	for name, text := range map[string]string{
		"a missing row":      strings.Replace(good, "1,6,5,0.9\n", "", 1),
		"a repeated row":     strings.Replace(good, "1,6,5,0.9\n", "1,5,5,0.9\n", 1),
		"a NaN value":        strings.Replace(good, "1,6,5,0.9", "1,6,5,NaN", 1),
		"a fractional key":   strings.Replace(good, "1,6,5,0.9", "1,6.5,5,0.9", 1),
		"a short row":        strings.Replace(good, "1,6,5,0.9", "1,6,5", 1),
		"steps out of order": strings.Replace(good, "loss_1,loss_2", "loss_2,loss_1", 1),
		"one step":           "a,loss_1\n0,1\n",
		"no parameters":      "loss_1,loss_2\n1,2\n",
		"no rows":            "a,loss_1,loss_2\n",
	} {
		if _, err := parseCurveTable(strings.NewReader(text)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// The embedded digits-mlp table: f is the stored loss at epoch T, every
// configuration of the space is a row, and rows read straight from the CSV
// text are the curves the problem gives.
func TestDigitsMLPTable(t *testing.T) {
	p, err := LoadCurveProblem(CurveDigitsMLP, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Steps != 27 || p.Space.Dim() != 5 || p.Budget != (6*5+18)*27 || len(p.table.curves) != 11*5*5*6*3 || !(p.Scale > 0) {
		t.Fatalf("T %d, d %d, budget %d, %d curves, scale %v", p.Steps, p.Space.Dim(), p.Budget, len(p.table.curves), p.Scale)
	}
	lines := strings.Split(strings.TrimSpace(string(digitsMLPCurves)), "\n")
	for _, i := range []int{1, 2, 777, 2500, len(lines) - 1} {
		fields := strings.Split(lines[i], ",")
		x := make([]float64, 5)
		for j := range x {
			x[j], _ = strconv.ParseFloat(fields[j], 64)
		}
		c, err := p.Curve(x, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, f := range fields[5:] {
			if v, _ := strconv.ParseFloat(f, 64); c[k] != v {
				t.Fatalf("line %d, epoch %d: curve %v, the file %v", i+1, k+1, c[k], v)
			}
		}
		if p.Function.Eval(x) != c[26] {
			t.Errorf("line %d: f %v, the curve ends at %v", i+1, p.Function.Eval(x), c[26])
		}
	}
	minimum := math.Inf(1)
	for _, c := range p.table.curves {
		minimum = math.Min(minimum, c[26])
	}
	if p.Function.Optimum != minimum || len(p.Function.Argmin) == 0 || p.Function.Eval(p.Function.Argmin[0]) != minimum {
		t.Errorf("optimum %v at %v, the table's least final value %v", p.Function.Optimum, p.Function.Argmin, minimum)
	}
	if _, err := p.Curve([]float64{-7, 5, 5, -2, 1.5}, nil); err == nil {
		t.Error("a point off the grid has a curve")
	}
	// T = 9: the problem ends at epoch 9.
	short, err := LoadCurveProblem(CurveDigitsMLP, 9, 0)
	if err != nil {
		t.Fatal(err)
	}
	x := p.Function.Argmin[0]
	if c, _ := short.Curve(x, nil); len(c) != 9 || short.Function.Eval(x) != c[8] || !(short.Function.Optimum <= c[8]) {
		t.Errorf("T = 9: curve %v, f %v, optimum %v", c, short.Function.Eval(x), short.Function.Optimum)
	}
	if _, err := LoadCurveProblem(CurveDigitsMLP, 28, 0); err == nil {
		t.Error("T beyond the table's epochs accepted")
	}
}

// The benchmark runs on the table: xbo's runs (and Optuna's, unless -short
// or python3-optuna is missing) spend the resource on its int grid.
func TestMultiFidelityBenchOnATable(t *testing.T) {
	methods := withOptuna(t, []string{MFXBO, MFXBOMultiModel}, MFTPEMedian)
	res, err := MultiFidelity(context.Background(), MFOptions{Problems: []string{CurveDigitsMLP}, Methods: methods, Seeds: 1, Steps: 9, FullTrials: 12, Jobs: 2, Extend: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if r.Spent != 108 || !(r.Regret >= 0) || math.IsInf(r.Regret, 0) {
			t.Errorf("%s: spent %d of 108 epochs, regret %v", r.Method, r.Spent, r.Regret)
		}
		if r.Method == MFXBOMultiModel && r.Trials <= 12 {
			t.Errorf("%s: %d trials, none pruned", r.Method, r.Trials)
		}
	}
}
