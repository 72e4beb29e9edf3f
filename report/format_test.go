package report

import (
	"regexp"
	"strings"
	"testing"

	"xbo/explain/fanova"
)

// The report's intervals write each end by Number (its cases:
// internal/numfmt).
func TestInterval(t *testing.T) {
	if got := interval(0.21353, 0.77261); got != "[0.214, 0.773]" {
		t.Errorf("interval = %q", got)
	}
}

func TestPercentAndEffect(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{{0.361, "36.1%"}, {0.46, "46.0%"}, {0, "0.0%"}, {-0.0001, "0.0%"}, {1, "100%"}, {0.9996, "100%"}, {0.0049, "0.5%"}} {
		if got := percent(c.f); got != c.want {
			t.Errorf("percent(%v) = %q, want %q", c.f, got, c.want)
		}
	}
	// The "36.1% ± 78.2%" of a gp-sobol pair becomes its interval,
	// as the CLI prints it; fANOVA's spread across trees keeps its ±.
	if got := effectText(fanova.Effect{Fraction: 0.361, Std: 0.782, CI95: []float64{0, 0.46}}); got != "36.1% [0.0%, 46.0%]" {
		t.Errorf("gp-sobol effect: %q", got)
	}
	if got := effectText(fanova.Effect{Fraction: 0.361, Std: 0.0782}); got != "36.1% ± 7.8%" {
		t.Errorf("forest effect: %q", got)
	}
	for _, c := range []struct {
		rel  float64
		want string
	}{{0.27, "27% more"}, {-0.27, "27% less"}, {0, "0% more"}} {
		if got := moreOrLess(c.rel, "more", "less"); got != c.want {
			t.Errorf("moreOrLess(%v) = %q, want %q", c.rel, got, c.want)
		}
	}
}

// TestTraceScale: one diverged trial (3.68 among values near 0.3) is
// clipped to the axis's edge on the worse side only, and a loss gets no
// negative axis.
func TestTraceScale(t *testing.T) {
	values := []float64{0.284, 0.288, 0.292, 0.296, 0.3, 0.304, 3.68, 0.312, 0.316, 0.32, 0.324, 0.328}
	s := traceScale(values, true)
	if s.clipped != 1 || s.hi != 0.328 || !s.beyond(3.68) || s.beyond(0.328) || s.lo < 0 || s.lo >= 0.284 {
		t.Errorf("minimized with a diverged trial: %+v", s)
	}
	if got := clippedWords(values, false); !strings.Contains(got, "1 trial(s) above 0.328 lie beyond the axis") {
		t.Errorf("caption: %q", got)
	}
	// Maximized: the diverged trial is the best and is never clipped.
	if s := traceScale(values, false); s.clipped != 0 || s.hi < 3.68 {
		t.Errorf("maximized: the best value is clipped: %+v", s)
	}
	// A loss from 0.01 to 3: the 5% padding would reach below 0.
	if s := traceScale([]float64{0.01, 3, 1, 2}, true); s.lo != 0 || s.clipped != 0 {
		t.Errorf("loss from 0.01: axis from %v (%+v)", s.lo, s)
	}
	if s := traceScale([]float64{-1, 2, 0.5}, true); s.lo >= -1 {
		t.Errorf("negative values: axis from %v", s.lo)
	}
}

// signContradiction finds a negative number before words that assert
// more of something ("-27% more confident").
var signContradiction = regexp.MustCompile(`-\d+(\.\d+)?% (more|narrower)`)

// longNumber finds a decimal number with more than three significant digits.
var longNumber = regexp.MustCompile(`\b0\.0*[1-9]\d{3,}|\b[1-9]\d*\.\d{3,}|\b[1-9]\d{3,}\.\d+`)

// checkPeopleNumbers fails when the report's text (outside the SVG
// figures' coordinates and the JSON) writes a number with more than three
// significant digits or a sign its words contradict.
func checkPeopleNumbers(t *testing.T, page string) {
	t.Helper()
	text := regexp.MustCompile(`(?s)<svg.*?</svg>`).ReplaceAllString(page, "")
	text = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(text, " ")
	if m := signContradiction.FindString(text); m != "" {
		t.Errorf("report writes %q", m)
	}
	for _, m := range longNumber.FindAllStringIndex(text, -1) {
		t.Errorf("report writes %q with more than three significant digits: …%s…", text[m[0]:m[1]], text[max(0, m[0]-60):min(len(text), m[1]+20)])
	}
}

func TestPeopleNumbers(t *testing.T) {
	if got := peopleNumbers("x1 ≤ 0.9079 and x1 > 0.08175 and lr ≤ 1.2345e-05 and n ≤ 12"); got != "x1 ≤ 0.908 and x1 > 0.0818 and lr ≤ 1.23e-5 and n ≤ 12" {
		t.Errorf("peopleNumbers: %q", got)
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{{0.154, 1.01, "[0.2 0.4 0.6 0.8 1]"}, {0, 118, "[0 20 40 60 80 100]"}, {-2220, 3650, "[-2000 -1000 0 1000 2000 3000]"}, {0.282, 0.328, "[0.29 0.3 0.31 0.32]"}} {
		var got []string
		for _, v := range niceTicks(c.lo, c.hi) {
			got = append(got, Number(v))
		}
		if s := "[" + strings.Join(got, " ") + "]"; s != c.want {
			t.Errorf("niceTicks(%v, %v) = %s, want %s", c.lo, c.hi, s, c.want)
		}
	}
}

// A trace point's hover text has every digit; its axis is labelled with
// three.
func TestTraceHoverHasEveryDigit(t *testing.T) {
	best := 0.29415123
	svg := traceSVG([]TracePoint{{Trial: 0, Value: 0.29415123, BestSoFar: &best}, {Trial: 1, Value: 0.5123456, BestSoFar: &best}}, false)
	if !strings.Contains(svg, "<title>trial 0: 0.29415123</title>") || !strings.Contains(svg, "<title>trial 1: 0.5123456</title>") {
		t.Errorf("trace hover text lacks the exact values: %s", svg)
	}
}
