package explain

import (
	"slices"
	"testing"

	"xbo/explain/pdp"
	"xbo/history"
)

// A calibrated band that excludes the one value every trial nearest a grid
// point reported is widened to hold it; a group with a differing value, or
// of two trials, is not a plateau, and an inactive coordinate is no trial
// of the curve.
func TestHoldPlateaus(t *testing.T) {
	r := &pdp.Result{Mean: []float64{0.2, 0.2, 0.2}, SD: []float64{0.01, 0.01, 0.01}, Lower: []float64{0.18, 0.18, 0.18},
		Upper: []float64{0.22, 0.22, 0.22}, Level: 0.95, Band: pdp.BandCalibrated}
	ice := &pdp.ICE{Params: []int{0}, GridU: [][]float64{{0}, {0.5}, {1}}}
	d := &history.Data{
		X: [][]float64{{0.02, 0.3}, {0.1, 0.9}, {0.2, 0.5}, {0.5, 0.1}, {0.45, 0.2}, {0.55, 0.3}, {0.95, 0.4}, {0.9, 0.5}, {-1, 0.6}},
		Y: []float64{0.32, 0.32, 0.32, 0.5, 0.5, 0.4, 0.7, 0.7, 0.7},
	}
	got := holdPlateaus(r, ice, d)
	if !slices.Equal(got, []int{0}) || r.Upper[0] != 0.32 || r.Lower[0] != 0.18 || r.Upper[1] != 0.22 || r.Upper[2] != 0.22 {
		t.Errorf("widened %v, band [%v, %v]", got, r.Lower, r.Upper)
	}
	if q := pdp.Quantile(0.05); r.SD[0] != (0.32-0.18)/(2*q) {
		t.Errorf("sd %v", r.SD[0])
	}
	r.Band = pdp.BandExact
	if holdPlateaus(r, ice, d) != nil {
		t.Error("the paper's exact band widened")
	}
}
