// Package numfmt writes numbers for people, one way for every page xbo
// draws (the report, the PDP figures of package explain/pdp) and the
// dashboard's web/src/format.js, so that one quantity reads the same in
// each: three significant digits, whole numbers below 10⁵ in full (counts,
// steps, integer parameters), exponent form beyond 10⁵ and below 10⁻³. It
// is a package of its own, below report and explain, so that both can use
// it without importing each other.
package numfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Number writes a number for people: three significant digits (the rules
// above). The dashboard e2e test writes the API's numbers with it to
// compare them with the page's text, so the two cannot drift apart.
func Number(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case v == math.Trunc(v) && a < 1e5:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case a >= 1e5 || a < 1e-3:
		// 'e' keeps trailing zeros and two exponent digits (1.00e+05): the
		// page writes 1e+5.
		m, e, _ := strings.Cut(strconv.FormatFloat(v, 'e', 2, 64), "e")
		mf, _ := strconv.ParseFloat(m, 64)
		n, _ := strconv.Atoi(e)
		return fmt.Sprintf("%se%+d", strconv.FormatFloat(mf, 'f', -1, 64), n)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
