package bench

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
)

// A small calibration run: every requested cell is there, coverages are
// fractions, the calibrated GP band is at least as wide as eq. 4 (so it
// covers at least as often), and the table prints the pooled summary.
func TestCalibrationSmall(t *testing.T) {
	cells, err := Calibration(context.Background(), CalibrationOptions{Functions: []string{NameBranin}, Sizes: []int{8},
		Data: []string{"uniform"}, Surrogates: []string{"gp", "forest"}, Bands: []string{"calibrated", "exact"}, Seeds: 1, Samples: 200, TruthSamples: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 4", len(cells))
	}
	byKey := map[string]CalibrationCell{}
	for _, c := range cells {
		if c.Points != 40 || c.Trials != 16 || c.Coverage95 < 0 || c.Coverage95 > 1 || c.Coverage68 > c.Coverage95 || !(c.MAE > 0) || math.IsNaN(c.WidthRatio) {
			t.Fatalf("cell %+v", c)
		}
		byKey[c.Surrogate+" "+c.Band] = c
	}
	cal, exact := byKey["gp calibrated"], byKey["gp exact"]
	if cal.MAE != exact.MAE || cal.WidthRatio < exact.WidthRatio || cal.Coverage95 < exact.Coverage95 {
		t.Errorf("calibrated %+v against exact %+v", cal, exact)
	}
	var buf bytes.Buffer
	if err := WriteCalibrationTable(&buf, cells); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "gp calibrated") || !strings.Contains(buf.String(), "Pooled over cells") {
		t.Errorf("table:\n%s", buf.String())
	}
	if _, err := Calibration(context.Background(), CalibrationOptions{Data: []string{"sobol"}}); err == nil {
		t.Error("unknown data kind accepted")
	}
}

// The true PD by Monte Carlo agrees with the closed form where one exists.
func TestTruePDMonteCarlo(t *testing.T) {
	f, _ := Lookup(NameStyblinskiTang, 3)
	sp, _ := f.Space()
	tp := newTruePD(f.Eval, f.PartialDependence, sp, 20000, 1)
	mc := newTruePD(f.Eval, nil, sp, 20000, 1)
	for _, v := range []float64{-4, -1, 0.5, 3} {
		exact, mcv := tp.at(1, v), mc.at(1, v)
		// sd of f over the other two coordinates is about 40; MC error ≈ 40/√20000 ≈ 0.3.
		if math.Abs(exact-mcv) > 1.5 {
			t.Errorf("PD at %v: closed form %v, Monte Carlo %v", v, exact, mcv)
		}
	}
}

// On the conditional function the true PD of the momentum averages over
// sgd configurations only, and the optimizer's PD switches the momentum on
// with a uniform value: closed forms by hand, E over lr log-uniform on
// [1e-4, 1] of (log₁₀ lr + 2.5)²/4 = E[(u·4 − 1.5)²]/4 with u uniform
// = (Var + mean²)/4 = (16/12 + 0.25)/4, and E over layers 1..6 of
// 0.05(layers − 3)² = 0.05·(4+1+0+1+4+9)/6.
func TestTruePDConditional(t *testing.T) {
	f, err := Lookup(NameConditional, 0)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := f.Space()
	if err != nil {
		t.Fatal(err)
	}
	tp := newTruePD(f.Eval, f.PartialDependence, sp, 200000, 2)
	base := (16.0/12+0.25)/4 + 0.05*19/6
	mom := 0.3
	want := base + 0.6*(mom-0.9)*(mom-0.9)
	if got := tp.at(2, mom); math.Abs(got-want) > 0.01 {
		t.Errorf("PD of momentum at %v: %v, want %v", mom, got, want)
	}
	// Momentum uniform on [0, 0.99]: E[0.6(m − 0.9)²] = 0.6·((0.99)²/12 + (0.495 − 0.9)²).
	sgd := base + 0.6*(0.99*0.99/12+0.405*0.405)
	if got := tp.at(1, 0); math.Abs(got-sgd) > 0.01 {
		t.Errorf("PD of optimizer=sgd: %v, want %v", got, sgd)
	}
	if got := tp.at(1, 1); math.Abs(got-(base+0.08)) > 0.01 {
		t.Errorf("PD of optimizer=adam: %v, want %v", got, base+0.08)
	}
}
