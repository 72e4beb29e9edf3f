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

// firstCoordinate predicts mean x₀ with variance 1.
type firstCoordinate struct{}

func (firstCoordinate) Dim() int { return 1 }
func (firstCoordinate) Predict(x [][]float64, mean, variance []float64) error {
	for i, p := range x {
		mean[i], variance[i] = p[0], 1
	}
	return nil
}

// meanTwice has a Mean of its own, 2·x₀, unlike its Predict's, so a test
// can tell which one answered.
type meanTwice struct{ firstCoordinate }

func (meanTwice) Mean(x [][]float64, mean []float64) error {
	for i, p := range x {
		mean[i] = 2 * p[0]
	}
	return nil
}

func TestPredictMeanUsesMeanWhereTheModelHasIt(t *testing.T) {
	x := [][]float64{{0.25}, {0.5}}
	mean := make([]float64, 2)
	if err := PredictMean(firstCoordinate{}, x, mean); err != nil || mean[0] != 0.25 || mean[1] != 0.5 {
		t.Errorf("without Mean: %v %v, want Predict's 0.25 0.5", mean, err)
	}
	if err := PredictMean(meanTwice{}, x, mean); err != nil || mean[0] != 0.5 || mean[1] != 1 {
		t.Errorf("with Mean: %v %v, want Mean's 0.5 1", mean, err)
	}
}
