package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The report's optimization trace. Its value axis follows the dashboard's
// (web/src/scale.js): outliers on the worse side beyond Tukey's far-out
// fence (3 interquartile ranges from the quartiles) are clipped to the
// axis's edge and counted in the caption, and values that are never
// negative (a loss) get no negative axis.

// traceFence is the fence's width in interquartile ranges.
const traceFence = 3

// scale is the trace's value axis: its extent, and the limit beyond which
// values are clipped (none when clipped is 0).
type scale struct {
	lo, hi    float64
	limit     float64
	clipped   int
	worseHigh bool
}

// beyond says whether v is clipped.
func (s scale) beyond(v float64) bool {
	return s.clipped > 0 && (s.worseHigh && v > s.limit || !s.worseHigh && v < s.limit)
}

// quantile is the q-quantile of sorted values, interpolated linearly.
func quantile(sorted []float64, q float64) float64 {
	i := float64(len(sorted)-1) * q
	lo, hi := int(math.Floor(i)), int(math.Ceil(i))
	return sorted[lo] + (sorted[hi]-sorted[lo])*(i-float64(lo))
}

// traceScale chooses the axis for the values, worse on the high side when
// worseHigh.
func traceScale(values []float64, worseHigh bool) scale {
	s := scale{worseHigh: worseHigh, lo: math.Inf(1), hi: math.Inf(-1)}
	sorted := slices.Sorted(slices.Values(values))
	kept := sorted
	if len(sorted) >= 8 {
		q1, q3 := quantile(sorted, 0.25), quantile(sorted, 0.75)
		if iqr := q3 - q1; iqr > 0 {
			if worseHigh {
				fence := q3 + traceFence*iqr
				k := len(sorted)
				for k > 0 && sorted[k-1] > fence {
					k--
				}
				kept = sorted[:k]
				s.clipped = len(sorted) - k
			} else {
				fence := q1 - traceFence*iqr
				k := 0
				for k < len(sorted) && sorted[k] < fence {
					k++
				}
				kept = sorted[k:]
				s.clipped = k
			}
		}
	}
	for _, v := range kept {
		s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
	}
	if len(kept) == 0 {
		s.lo, s.hi = 0, 1
	}
	if worseHigh {
		s.limit = s.hi
	} else {
		s.limit = s.lo
	}
	if s.hi == s.lo {
		s.lo, s.hi = s.lo-1, s.hi+1
	}
	pad := 0.05 * (s.hi - s.lo)
	nonNegative := s.lo >= 0
	s.lo, s.hi = s.lo-pad, s.hi+pad
	if nonNegative && s.lo < 0 {
		s.lo = 0
	}
	if s.clipped > 0 {
		// The clipped side ends at the last value kept.
		if worseHigh {
			s.hi = s.limit
		} else {
			s.lo = s.limit
		}
	}
	return s
}

// niceTicks are the axis's labelled values: multiples of 1, 2 or 5 times
// a power of ten, four to nine of them, inside [lo, hi] (0.2, 0.4, 0.6
// rather than 0.154, 0.366, 0.578).
func niceTicks(lo, hi float64) []float64 {
	raw := (hi - lo) / 4
	if !(raw > 0) {
		return []float64{lo}
	}
	// The longest step that still leaves at least 3.5 steps on the axis.
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{2, 5, 10} {
		if (hi-lo)/(m*mag) >= 3.5 {
			step = m * mag
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+1e-9*step; v += step {
		// Rounded to the step's digits: 0.1+0.2 is written 0.3.
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// clippedWords says in the caption how many trials the axis clips.
func clippedWords(values []float64, maximize bool) string {
	s := traceScale(values, !maximize)
	if s.clipped == 0 {
		return ""
	}
	side := "above"
	if maximize {
		side = "below"
	}
	return fmt.Sprintf(" %d trial(s) %s %s lie beyond the axis and are drawn at its edge (▲), so that they do not squash the others; the JSON has their values.",
		s.clipped, side, Number(s.limit))
}

// traceSVG draws every usable trial's value and the best value so far.
// Outliers on the worse side (above the axis for a minimized objective)
// are drawn at its edge as triangles, so that one diverged trial does not
// squash the others (traceScale).
func traceSVG(tr []TracePoint, maximize bool) string {
	const w, h, ml, mr, mt, mb = 860, 280, 70, 20, 20, 44
	pw, ph := float64(w-ml-mr), float64(h-mt-mb)
	values := make([]float64, len(tr))
	for i, p := range tr {
		values[i] = p.Value
	}
	sc := traceScale(values, !maximize)
	lo, hi := sc.lo, sc.hi
	n := max(len(tr)-1, 1)
	px := func(i int) float64 { return ml + float64(i)/float64(n)*pw }
	py := func(v float64) float64 { return mt + (hi-v)/(hi-lo)*ph }
	var b strings.Builder
	svgOpen(&b, w, h, 11)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="%s" fill="none" stroke="#999"/>`+"\n", ml, mt, num(pw), num(ph))
	infeasible := false
	for i, p := range tr {
		if sc.beyond(p.Value) {
			// A triangle at the edge, pointing out of the plot.
			y, dy := float64(mt)+1, 6.0
			if maximize {
				y, dy = float64(mt)+ph-1, -6
			}
			fmt.Fprintf(&b, `<path d="M%s %sl-4 %sh8z" fill="#D55E00"><title>trial %d: %s (beyond the axis)</title></path>`+"\n",
				num(px(i)), num(y), num(dy), p.Trial, exactNumber(p.Value))
			continue
		}
		if p.Infeasible {
			// A cross: an infeasible trial is never best.
			infeasible = true
			fmt.Fprintf(&b, `<path d="M%s %sl6 6m0 -6l-6 6" stroke="#D55E00" stroke-width="1.5"><title>trial %d: %s (infeasible)</title></path>`+"\n",
				num(px(i)-3), num(py(p.Value)-3), p.Trial, exactNumber(p.Value))
			continue
		}
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="#636363" fill-opacity="0.6"><title>trial %d: %s</title></circle>`+"\n",
			num(px(i)), num(py(p.Value)), p.Trial, exactNumber(p.Value))
	}
	// The best-so-far line starts at the first feasible trial.
	var pts []string
	// A best value beyond the axis (a first trial that diverged) is drawn
	// on its edge.
	edge := func(v float64) float64 { return math.Max(lo, math.Min(hi, v)) }
	for i, p := range tr {
		if p.BestSoFar == nil {
			continue
		}
		if i > 0 && tr[i-1].BestSoFar != nil {
			pts = append(pts, num(px(i))+","+num(py(edge(*tr[i-1].BestSoFar))))
		}
		pts = append(pts, num(px(i))+","+num(py(edge(*p.BestSoFar))))
	}
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#e6550d" stroke-width="2"/>`+"\n", strings.Join(pts, " "))
	for _, v := range niceTicks(lo, hi) {
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%s" y2="%s" stroke="#eee"/>`+"\n", ml, num(py(v)), num(ml+pw), num(py(v)))
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", ml-4, num(py(v)+4), Number(v))
	}
	for k := range 5 {
		i := int(math.Round(float64(k) * float64(n) / 4))
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%d</text>`+"\n", num(px(i)), h-mb+14, i)
	}
	fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">usable trials in trial order</text>`+"\n", num(ml+pw/2), h-8)
	fmt.Fprintf(&b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">objective value</text>`+"\n", num(mt+ph/2), num(mt+ph/2))
	best := "lowest"
	if maximize {
		best = "highest"
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#e6550d">— %s %svalue so far</text>`+"\n", w-mr-8, mt+14, best, map[bool]string{true: "feasible ", false: ""}[infeasible])
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#636363">● one trial</text>`+"\n", w-mr-8, mt+28)
	legendY := mt + 42
	if infeasible {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#D55E00">× an infeasible trial</text>`+"\n", w-mr-8, legendY)
		legendY += 14
	}
	if sc.clipped > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#D55E00">▲ beyond the axis (%d)</text>`+"\n", w-mr-8, legendY, sc.clipped)
	}
	b.WriteString("</svg>\n")
	return b.String()
}
