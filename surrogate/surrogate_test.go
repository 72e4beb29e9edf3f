package surrogate

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckPoints(t *testing.T) {
	x := [][]float64{{0, 1}, {0.5, 0.5}}
	if err := CheckPoints(2, x, make([]float64, 2), make([]float64, 2)); err != nil {
		t.Fatalf("valid batch refused: %v", err)
	}
	err := CheckPoints(2, [][]float64{{0, 1}, {0.5}}, make([]float64, 2))
	var de *DimError
	if !errors.As(err, &de) || de.Row != 1 || de.Got != 1 || !errors.Is(err, ErrDim) {
		t.Fatalf("short point: %v", err)
	}
	if !strings.Contains(err.Error(), "point 1 has 1 coordinates, want 2") {
		t.Fatalf("message %q", err)
	}
	if err := CheckPoints(2, x, make([]float64, 1)); err == nil {
		t.Fatal("short output slice accepted")
	}
}
