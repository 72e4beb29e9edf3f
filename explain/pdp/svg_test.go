package pdp_test

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"xbo/explain/pdp"
	"xbo/internal/numfmt"
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

// The axes' labels are written as every page xbo draws writes numbers
// (internal/numfmt: three significant digits), not with four digits or
// Go's %g exponents.
func TestWriteSVGTicksThreeDigits(t *testing.T) {
	p := pdp.Panel{Title: "x", X: []float64{0.000123456, 0.0456789, 0.0912345}, Mean: []float64{0.123456, 0.98765, 0.4321},
		Lower: []float64{0.1, 0.9, 0.4}, Upper: []float64{0.2, 1.1, 0.5}}
	var b strings.Builder
	if err := pdp.WriteSVG(&b, []pdp.Panel{p}, 1); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	labels := regexp.MustCompile(`<text x="[^"]*" y="[^"]*" text-anchor="(?:end|middle)">([-+0-9.e]+)</text>`).FindAllStringSubmatch(out, -1)
	if len(labels) != 8 {
		t.Fatalf("%d numeric tick labels, want 3 on x and 5 on y:\n%s", len(labels), out)
	}
	for _, l := range labels {
		v, err := strconv.ParseFloat(l[1], 64)
		if err != nil || l[1] != numfmt.Number(v) || significant(l[1]) > 3 {
			t.Errorf("tick label %q is not three significant digits (numfmt.Number writes %q)", l[1], numfmt.Number(v))
		}
	}
	if !strings.Contains(out, ">1.23e-4</text>") {
		t.Errorf("the x axis does not label 0.000123456 as 1.23e-4:\n%s", out)
	}
}

// significant counts a decimal's significant digits (its mantissa's).
func significant(s string) int {
	m, _, _ := strings.Cut(strings.TrimLeft(s, "-+"), "e")
	m = strings.TrimLeft(strings.ReplaceAll(m, ".", ""), "0")
	return len(m)
}
