package shapley

import (
	"context"
	"math"
	"testing"
)

// Thesis table 2: ablating u = θ1 + θ2·θ3 from (½,½,½) to (0,0,0) flips θ1
// first (gain ½), then θ2 (¼, the tie with θ3 going to the lower index), and
// leaves θ3 nothing: relative (2/3, 1/3, 0), against Shapley's (2/3, 1/6, 1/6).
func TestAblationToy(t *testing.T) {
	a, err := Ablate(scalar(t, 3, toy), []float64{0.5, 0.5, 0.5}, []float64{0, 0, 0}, AblationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantOrder := []int{0, 1, 2}
	wantContr := []float64{0.5, 0.25, 0}
	for i, s := range a.Steps {
		if s.Index != wantOrder[i] || math.Abs(s.Contribution-wantContr[i]) > 1e-15 {
			t.Errorf("step %d: %+v, want index %d contribution %v", i, s, wantOrder[i], wantContr[i])
		}
	}
	if math.Abs(a.Steps[0].Relative-2.0/3) > 1e-12 || math.Abs(a.SourcePrediction-0.75) > 1e-15 || a.TargetPrediction != 0 {
		t.Errorf("ablation %+v", a)
	}
	// Maximizing reverses the greedy choice: the flip that lowers f least.
	b, err := Ablate(scalar(t, 3, toy), []float64{0.5, 0.5, 0.5}, []float64{0, 0, 0}, AblationOptions{Maximize: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.Steps[0].Index == 0 || b.Steps[0].Contribution != -0.25 {
		t.Errorf("maximize: first step %+v", b.Steps[0])
	}
}

func TestLPIAdditive(t *testing.T) {
	c := []float64{1, 2, 3, 0}
	f := scalar(t, 4, func(x []float64) float64 { return c[0]*x[0] + c[1]*x[1] + c[2]*x[2] + c[3]*x[3] })
	l, err := LPI(f, []float64{0.2, 0.4, 0.6, 0.8}, LPIOptions{Grid: 11})
	if err != nil {
		t.Fatal(err)
	}
	// Variance of 11 equidistant values on [0,1] is (1/10)²·(11²−1)/12 = 0.1.
	for j := range c {
		want := c[j] * c[j] * 0.1
		if math.Abs(l.Outputs[0].Variance[j]-want) > 1e-12 {
			t.Errorf("variance %d: %v, want %v", j, l.Outputs[0].Variance[j], want)
		}
		if math.Abs(l.Outputs[0].Fraction[j]-c[j]*c[j]/14) > 1e-12 {
			t.Errorf("fraction %d: %v", j, l.Outputs[0].Fraction[j])
		}
	}
}

func TestLPIConditional(t *testing.T) {
	s := conditionalSpace(t)
	f, _ := NewFunc("f", 5, func(x [][]float64, out []float64) error {
		for i, p := range x {
			if err := s.Validate(s.Decode(p)); err != nil {
				return err
			}
			out[i] = p[0] + p[1] + p[4]
		}
		return nil
	})
	x, _ := s.Encode([]float64{1, math.NaN(), 3, math.NaN(), 0.5})
	l, err := LPI(f, x, LPIOptions{Space: s})
	if err != nil {
		t.Fatal(err)
	}
	if v := l.Outputs[0].Variance; v[1] != 0 || v[3] != 0 || v[0] == 0 || v[4] == 0 {
		t.Errorf("variances %v", v)
	}
}

// For f = x1·x2 on the uniform square H²_12 = (1/144)/(7/144) = 1/7; an
// additive term adds no interaction with anything.
func TestHStatistic(t *testing.T) {
	f := scalar(t, 3, func(x []float64) float64 { return x[0]*x[1] + math.Sin(3*x[2]) })
	h, err := HStatistic(context.Background(), f, HOptions{Points: 300, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(h.H2[0][1]-1.0/7) > 0.02 {
		t.Errorf("H²_12 = %v, want 1/7", h.H2[0][1])
	}
	if h.H2[0][2] > 1e-20 || h.H2[1][2] > 1e-20 {
		t.Errorf("additive x3 interacts: %v %v", h.H2[0][2], h.H2[1][2])
	}
	if h.H2[1][0] != h.H2[0][1] || math.Abs(h.H[0][1]*h.H[0][1]-h.H2[0][1]) > 1e-15 {
		t.Errorf("matrix not symmetric or H ≠ √H²")
	}
}
