package numfmt

import (
	"math"
	"testing"
)

// Numbers seen in the report's and dashboard's screenshots, as the report (and
// the dashboard, web/src/format.js, checked by the e2e test's pageText) must
// write them.
func TestNumberThreeSignificantDigits(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0.55239, "0.552"}, {0.21353, "0.214"}, {0.77261, "0.773"}, {6.170e-4, "6.17e-4"}, {0.29415, "0.294"},
		{-0.29353, "-0.294"}, {0, "0"}, {1024, "1024"}, {-3, "-3"}, {12345.6, "12300"}, {123456.7, "1.23e+5"},
		{100000, "1e+5"}, {0.001, "0.001"}, {0.000999, "9.99e-4"}, {-2.5e-7, "-2.5e-7"}, {3.68, "3.68"}, {0.3, "0.3"},
		{math.Inf(1), "+Inf"},
	} {
		if got := Number(c.v); got != c.want {
			t.Errorf("Number(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
