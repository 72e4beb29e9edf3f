package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/space"
)

func TestPDPSplitSmall(t *testing.T) {
	res, err := PDPSplit(context.Background(), PDPSplitOptions{
		Dims: []int{3}, Taus: []float64{5, 0.1}, Seeds: 2, BudgetPerDim: 20, Samples: 200, Workers: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0].Bias != "low" || res.Rows[1].Bias != "high" {
		t.Fatalf("rows %+v", res.Rows)
	}
	for _, row := range res.Rows {
		if len(row.DeltaMC) != 2 || len(row.DeltaNLL) != 2 || row.Paper == nil || row.Seeds != 2 {
			t.Fatalf("row %+v", row)
		}
		for l := range row.DeltaMC {
			// A leaf's mean sd can be larger than the global one, but a
			// relative improvement above 100% would need a negative sd.
			if math.IsNaN(row.DeltaMC[l]) || row.DeltaMC[l] >= 100 || math.IsNaN(row.DeltaNLL[l]) {
				t.Errorf("d=%d τ=%g depth %d: δMC %v δNLL %v", row.Dim, row.Tau, res.Depths[l], row.DeltaMC[l], row.DeltaNLL[l])
			}
		}
		if !(row.MMD > 0 && row.MMD < 1.5) || !(row.GlobalMC > 0) {
			t.Errorf("MMD %v, global MC %v", row.MMD, row.GlobalMC)
		}
	}
	// Exploitation (τ = 0.1) concentrates the design: larger MMD than τ = 5.
	if !(res.Rows[1].MMD > res.Rows[0].MMD) {
		t.Errorf("MMD τ=0.1 %v not above τ=5 %v", res.Rows[1].MMD, res.Rows[0].MMD)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"δMC n_sp=1", "δNLL n_sp=3", "paper MMD", "13.64"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if _, err := PDPSplit(context.Background(), PDPSplitOptions{Dims: []int{1}}); err == nil {
		t.Error("d = 1 accepted")
	}
	if _, err := PDPSplit(context.Background(), PDPSplitOptions{Taus: []float64{-1}}); err == nil {
		t.Error("negative τ accepted")
	}
}

// truthModel is the Styblinski-Tang function as a zero-variance model on the
// unit cube, for Monte Carlo checks of the closed forms.
type truthModel struct {
	f  *Function
	sp *space.Space
}

func (m truthModel) Dim() int { return m.f.Dim }
func (m truthModel) Predict(x [][]float64, mean, variance []float64) error {
	for i, u := range x {
		mean[i], variance[i] = m.f.Eval(m.sp.Decode(u)), 0
	}
	return nil
}

// The closed-form regional PD over a leaf's box must match the Monte Carlo
// average of the true function over the leaf's members, and over the whole
// space must equal PartialDependence.
func TestStyblinskiTangRegionalPD(t *testing.T) {
	f, _ := Lookup(NameStyblinskiTang, 3)
	sp, _ := f.Space()
	truthICE, err := pdp.NewICE(context.Background(), truthModel{f, sp}, sp, []int{0}, pdp.Options{Samples: 20000, GridSize: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Split on a made-up variance so the boxes are arbitrary.
	varModel := funcVarModel{dim: 3, v: func(u []float64) float64 { return u[1]*u[1] + math.Sin(5*u[2]) }}
	ice, err := pdp.NewICE(context.Background(), varModel, sp, []int{0}, pdp.Options{Samples: 20000, GridSize: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	res, err := regional.Explain(context.Background(), ice, nil, regional.Options{MaxDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	global, err := styblinskiTangRegionalPD(sp, 0, res.Global.Grid, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for g, v := range res.Global.Grid {
		if want, _ := f.PartialDependence(0, v); math.Abs(global[g]-want) > 1e-9 {
			t.Errorf("global PD at %g: %g, want %g", v, global[g], want)
		}
	}
	for k := range res.Leaves {
		leaf := &res.Leaves[k]
		closed, err := styblinskiTangRegionalPD(sp, 0, leaf.PDP.Grid, leaf, res.Tree)
		if err != nil {
			t.Fatal(err)
		}
		members := leaf.Members()
		mc, err := truthICE.PDP(context.Background(), members)
		if err != nil {
			t.Fatal(err)
		}
		for g := range closed {
			// Five standard errors of the Monte Carlo mean.
			s, s2 := 0.0, 0.0
			for _, i := range members {
				s += truthICE.Mean[i][g]
				s2 += truthICE.Mean[i][g] * truthICE.Mean[i][g]
			}
			m := float64(len(members))
			se := math.Sqrt((s2/m - (s/m)*(s/m)) / m)
			if math.Abs(closed[g]-mc.Mean[g]) > 5*se+1e-9 {
				t.Errorf("leaf %v grid %d: closed form %g, Monte Carlo %g ± %g", leaf.Path, g, closed[g], mc.Mean[g], se)
			}
		}
	}
}

type funcVarModel struct {
	dim int
	v   func([]float64) float64
}

func (m funcVarModel) Dim() int { return m.dim }
func (m funcVarModel) Predict(x [][]float64, mean, variance []float64) error {
	for i, u := range x {
		mean[i], variance[i] = 0, m.v(u)
	}
	return nil
}
