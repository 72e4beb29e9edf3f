package pdp_test

import (
	"math"
	"strings"
	"testing"

	"xbo/explain/pdp"
)

func TestWriteSVG(t *testing.T) {
	best := 0.01
	p := pdp.Panel{Title: "lr <&>", X: []float64{0.001, 0.01, 0.1}, Mean: []float64{1, 0, 1},
		Lower: []float64{0.5, -0.5, 0.5}, Upper: []float64{1.5, 0.5, 1.5}, Rug: []float64{0.002, math.NaN()}, Best: &best,
		Scale: func(v float64) float64 { return (math.Log10(v) + 3) / 2 }}
	var b strings.Builder
	if err := pdp.WriteSVG(&b, []pdp.Panel{p, p}, 2); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "<polygon") != 2 || !strings.Contains(out, "lr &lt;&amp;&gt;") || strings.Contains(out, "lr <&>") {
		t.Errorf("SVG panels or escaping wrong:\n%s", out)
	}
	// On the log scale the middle grid value sits halfway across the panel:
	// x = 62 + 0.5·(420 − 62 − 14) = 234.
	if !strings.Contains(out, "234.0,") {
		t.Errorf("log-scaled x positions wrong:\n%s", out)
	}
	bad := p
	bad.Mean = []float64{1}
	if err := pdp.WriteSVG(&b, []pdp.Panel{bad}, 1); err == nil {
		t.Error("mismatched panel accepted")
	}
	if err := pdp.WriteSVG(&b, nil, 1); err == nil {
		t.Error("no panels accepted")
	}
}

// A shared YRange widens the vertical axis to the common scale (padded 5%),
// so that panels of several parameters compare by eye.
func TestSVGSharedYRange(t *testing.T) {
	p := pdp.Panel{Title: "t", X: []float64{0, 1}, Mean: []float64{0.4, 0.6}, Lower: []float64{0.3, 0.5}, Upper: []float64{0.5, 0.7}}
	var own, shared strings.Builder
	if err := pdp.WriteSVG(&own, []pdp.Panel{p}, 1); err != nil {
		t.Fatal(err)
	}
	p.YRange = &[2]float64{-10, 10}
	if err := pdp.WriteSVG(&shared, []pdp.Panel{p}, 1); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(own.String(), ">-11<") || !strings.Contains(shared.String(), ">-11<") || !strings.Contains(shared.String(), ">11<") {
		t.Fatalf("axis labels do not follow YRange:\n%s", shared.String())
	}
}
