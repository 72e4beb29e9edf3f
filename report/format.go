package report

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"xbo/explain/fanova"
	"xbo/internal/numfmt"
)

// How the report writes numbers for people, the rules of the
// dashboard's web/src/format.js, so that one quantity reads the same in
// both: three significant digits, whole numbers below 10⁵ in full (counts,
// steps, integer parameters), exponent form beyond 10⁵ and below 10⁻³,
// intervals as [a, b], fractions as percentages with one decimal as the
// CLI's importance table prints them, and signs carried by words rather
// than by a "-" that contradicts them. The JSON keeps every digit.

// Number writes a number for people: three significant digits (the rules
// above, package internal/numfmt, which the PDP figures share).
func Number(v float64) string { return numfmt.Number(v) }

// exactNumber is a number with every digit, as the JSON has it: what a
// figure's hover text (an SVG <title>) shows of a point the axis places.
func exactNumber(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// interval writes [lo, hi] with each end to three significant digits.
func interval(lo, hi float64) string { return "[" + Number(lo) + ", " + Number(hi) + "]" }

// percent writes a fraction as a percentage with one decimal (0.361 →
// 36.1%; 1 → 100%), never as -0.0%.
func percent(f float64) string {
	p := 100 * f
	s := strconv.FormatFloat(p, 'f', 1, 64)
	if math.Abs(p) >= 99.95 {
		s = strconv.FormatFloat(p, 'f', 0, 64)
	}
	if s == "-0.0" || s == "-0" {
		s = s[1:]
	}
	return s + "%"
}

// effectText writes an importance as the CLI does: the fraction with its
// 95% interval [lo, hi] when the method gives one (gp-sobol), else ± one
// standard deviation across trees (forest-fanova).
func effectText(e fanova.Effect) string {
	if len(e.CI95) == 2 {
		return percent(e.Fraction) + " [" + percent(e.CI95[0]) + ", " + percent(e.CI95[1]) + "]"
	}
	return percent(e.Fraction) + " ± " + percent(e.Std)
}

// moreOrLess says a relative change in words that carry its sign: 0.27 →
// "27% more", -0.27 → "27% less" (never "-27% more").
func moreOrLess(rel float64, more, less string) string {
	word := more
	if rel < 0 {
		word = less
	}
	return fmt.Sprintf("%.0f%% %s", math.Abs(100*rel), word)
}

// decimalNumber is a number with a fractional part inside the engine's
// words (a region's path "x2 ≤ 0.8991", a split rule).
var decimalNumber = regexp.MustCompile(`-?\d+\.\d+(?:[eE][-+]?\d+)?`)

// peopleNumbers rewrites the decimal numbers in a text the engine wrote
// with more digits to three significant digits.
func peopleNumbers(s string) string {
	return decimalNumber.ReplaceAllStringFunc(s, func(m string) string {
		v, err := strconv.ParseFloat(m, 64)
		if err != nil {
			return m
		}
		return Number(v)
	})
}
