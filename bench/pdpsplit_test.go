package bench

import (
	"context"
	"math"
	"strings"
	"testing"
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
