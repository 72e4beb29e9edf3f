package shapley

import (
	"bufio"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"

	"xbo/space"
)

// Colours of the thesis' decomposition plots: mean (exploitation) and
// uncertainty (exploration) parts of a parameter's desirability.
const (
	colorMean  = "#1f77b4"
	colorUnc   = "#ff7f0e"
	colorTotal = "#222222"
	colorGrid  = "#dddddd"
)

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, v)
	}
	return ticks
}

func fmtNum(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e4 || a < 1e-3 {
		return strconv.FormatFloat(v, 'e', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

type extent struct{ lo, hi float64 }

func (e *extent) add(vs ...float64) {
	for _, v := range vs {
		e.lo, e.hi = math.Min(e.lo, v), math.Max(e.hi, v)
	}
}

func (e extent) padded() extent {
	if e.hi-e.lo < 1e-300 {
		return extent{e.lo - 1, e.hi + 1}
	}
	pad := 0.06 * (e.hi - e.lo)
	return extent{e.lo - pad, e.hi + pad}
}

// paramLabel renders "name = value" with the natural value when a space is
// given.
func paramLabels(e *Explanation, s *space.Space) []string {
	labels := make([]string, len(e.Params))
	var vals []float64
	if s != nil && s.Dim() == len(e.Point) {
		vals = s.Decode(e.Point)
	}
	for j, name := range e.Params {
		switch {
		case vals == nil:
			labels[j] = name + " = " + fmtNum(e.Point[j])
		case math.IsNaN(vals[j]):
			labels[j] = name + " (inactive)"
		case s.Params[j].Type == space.Float:
			labels[j] = name + " = " + fmtNum(vals[j])
		default:
			labels[j] = name + " = " + s.Format(j, vals[j])
		}
		if r := []rune(labels[j]); len(r) > 28 {
			labels[j] = string(r[:27]) + "…"
		}
	}
	return labels
}

// WriteDecompositionSVG draws the thesis' decomposition bar chart of one
// explanation (figure 10): per parameter, the mean contribution φ(m) and the
// uncertainty contribution −τ·φ(se) stacked (positive parts to the right,
// negative to the left), with φ(cb) as a diamond; whiskers are the
// confidence intervals. An explanation without the LCB outputs is drawn as
// one bar per parameter with its interval. The space is optional and only
// labels the parameter values.
func WriteDecompositionSVG(w io.Writer, e *Explanation, s *space.Space) error {
	if e == nil || len(e.Outputs) == 0 {
		return errors.New("shapley: svg: empty explanation")
	}
	mean, okM := e.Output(OutputMean)
	se, okS := e.Output(OutputSE)
	cb, okC := e.Output(OutputCB)
	lcb := okM && okS && okC && e.Tau != nil
	p := len(e.Params)
	sw := 0.0 // φ(cb) = φ(m) + w·φ(se)
	if lcb {
		sw = seWeight(e)
	}
	ext := extent{}
	for j := 0; j < p; j++ {
		if lcb {
			u := sw * se.Phi[j]
			ext.add(mean.Lower[j], mean.Upper[j], cb.Lower[j], cb.Upper[j], u, sw*se.Lower[j], sw*se.Upper[j])
			if math.Signbit(u) == math.Signbit(mean.Phi[j]) {
				ext.add(mean.Phi[j] + u)
			}
		} else {
			a := e.Outputs[0]
			ext.add(a.Phi[j], a.Lower[j], a.Upper[j])
		}
	}
	ext = ext.padded()
	const (
		width   = 760
		left    = 190
		right   = 30
		top     = 70
		rowH    = 44
		bottomM = 50
	)
	height := top + rowH*p + bottomM
	plotW := float64(width - left - right)
	xOf := func(v float64) float64 { return left + (v-ext.lo)/(ext.hi-ext.lo)*plotW }
	bw := bufio.NewWriter(w)
	pr := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	pr(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	pr(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	var title, sub string
	if lcb {
		title = fmt.Sprintf("Shapley decomposition of cb = m̂ %s %s·ŝ (%s)", signWord(sw), fmtNum(math.Abs(sw)), e.Method)
		sub = fmt.Sprintf("cb: %s vs average %s (payout %s) · m̂: %s vs %s · ŝ: %s vs %s",
			fmtNum(cb.Prediction), fmtNum(cb.Average), fmtNum(cb.Payout), fmtNum(mean.Prediction), fmtNum(mean.Average),
			fmtNum(se.Prediction), fmtNum(se.Average))
	} else {
		a := e.Outputs[0]
		title = fmt.Sprintf("Shapley values of %s (%s)", a.Output, e.Method)
		sub = fmt.Sprintf("%s: %s vs average %s (payout %s)", a.Output, fmtNum(a.Prediction), fmtNum(a.Average), fmtNum(a.Payout))
	}
	pr(`<text x="%d" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", 10, html.EscapeString(title))
	pr(`<text x="%d" y="38" fill="#444">%s</text>`+"\n", 10, html.EscapeString(sub))
	if lcb {
		lx := left
		pr(`<rect x="%d" y="48" width="12" height="12" fill="%s"/><text x="%d" y="58">mean φ(m)</text>`+"\n", lx, colorMean, lx+16)
		pr(`<rect x="%d" y="48" width="12" height="12" fill="%s"/><text x="%d" y="58">uncertainty %sτ·φ(se)</text>`+"\n", lx+110, colorUnc, lx+126, signWord(sw))
		pr(`<path d="M%d 54 l6 -6 l6 6 l-6 6 z" fill="%s"/><text x="%d" y="58">φ(cb) with %.0f%% interval</text>`+"\n", lx+280, colorTotal, lx+296, 100*e.Level)
	}
	// Grid and axis.
	axisY := top + rowH*p
	for _, t := range niceTicks(ext.lo, ext.hi, 6) {
		x := xOf(t)
		pr(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", x, top, x, axisY, colorGrid)
		pr(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, axisY+16, fmtNum(t))
	}
	pr(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888"/>`+"\n", xOf(0), top-4, xOf(0), axisY)
	pr(`<text x="%.1f" y="%d" text-anchor="middle" fill="#444">contribution (%s)</text>`+"\n", left+plotW/2, axisY+36, desirableWord(sw))
	labels := paramLabels(e, s)
	bar := func(a, b float64, y int, color string) {
		x0, x1 := xOf(math.Min(a, b)), xOf(math.Max(a, b))
		pr(`<rect x="%.1f" y="%d" width="%.1f" height="14" fill="%s"/>`+"\n", x0, y, math.Max(x1-x0, 0.5), color)
	}
	whisker := func(lo, hi float64, y int, color string) {
		if hi <= lo {
			return
		}
		pr(`<path d="M%.1f %d v6 M%.1f %d H%.1f M%.1f %d v6" stroke="%s" fill="none"/>`+"\n",
			xOf(lo), y-3, xOf(lo), y, xOf(hi), xOf(hi), y-3, color)
	}
	for j := 0; j < p; j++ {
		y := top + rowH*j
		pr(`<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y+19, html.EscapeString(labels[j]))
		if !lcb {
			a := e.Outputs[0]
			color := colorMean
			if a.Phi[j] > 0 {
				color = colorUnc
			}
			bar(0, a.Phi[j], y+8, color)
			whisker(a.Lower[j], a.Upper[j], y+15, colorTotal)
			continue
		}
		m := mean.Phi[j]
		u := sw * se.Phi[j]
		bar(0, m, y+6, colorMean)
		start := 0.0
		if math.Signbit(u) == math.Signbit(m) {
			start = m
		}
		bar(start, start+u, y+6, colorUnc)
		whisker(mean.Lower[j], mean.Upper[j], y+13, "#0b3c66")
		uLo, uHi := math.Min(sw*se.Lower[j], sw*se.Upper[j]), math.Max(sw*se.Lower[j], sw*se.Upper[j])
		whisker(start+uLo, start+uHi, y+13, "#8a4500")
		c := cb.Phi[j]
		pr(`<path d="M%.1f %d l5 -5 l5 5 l-5 5 z" fill="%s"/>`+"\n", xOf(c)-5, y+31, colorTotal)
		whisker(cb.Lower[j], cb.Upper[j], y+31, colorTotal)
	}
	pr("</svg>\n")
	return bw.Flush()
}

// WritePathSVG draws desirability paths (thesis figure 6 and 12): one panel
// per parameter, the contribution per iteration — φ(cb) in black with its
// interval as whiskers, φ(m) and −τ·φ(se) in the decomposition colours when
// the path explains an LCB; the first output alone otherwise. All panels
// share the vertical scale so parameters compare directly.
func WritePathSVG(w io.Writer, path *Path) error {
	if path == nil || len(path.Steps) == 0 {
		return errors.New("shapley: svg: empty path")
	}
	first := path.Steps[0].Explanation
	_, okM := first.Output(OutputMean)
	_, okC := first.Output(OutputCB)
	lcb := okM && okC && first.Tau != nil
	p := len(path.Params)
	type series struct {
		name, color string
		val         func(e *Explanation, j int) (v, lo, hi float64)
	}
	get := func(name string) func(e *Explanation, j int) (float64, float64, float64) {
		return func(e *Explanation, j int) (float64, float64, float64) {
			a, _ := e.Output(name)
			return a.Phi[j], a.Lower[j], a.Upper[j]
		}
	}
	var ss []series
	if lcb {
		ss = []series{
			{"mean φ(m)", colorMean, get(OutputMean)},
			{"uncertainty " + signWord(seWeight(first)) + "τ·φ(se)", colorUnc, func(e *Explanation, j int) (float64, float64, float64) {
				a, _ := e.Output(OutputSE)
				w := seWeight(e)
				return w * a.Phi[j], math.Min(w*a.Lower[j], w*a.Upper[j]), math.Max(w*a.Lower[j], w*a.Upper[j])
			}},
			{"φ(cb)", colorTotal, get(OutputCB)},
		}
	} else {
		name := first.Outputs[0].Output
		ss = []series{{"φ(" + name + ")", colorTotal, get(name)}}
	}
	ext := extent{}
	itLo, itHi := math.Inf(1), math.Inf(-1)
	for _, st := range path.Steps {
		if st.Explanation == nil || len(st.Explanation.Params) != p {
			return fmt.Errorf("shapley: svg: iteration %d has no explanation of %d parameters", st.Iteration, p)
		}
		itLo, itHi = math.Min(itLo, float64(st.Iteration)), math.Max(itHi, float64(st.Iteration))
		for j := 0; j < p; j++ {
			for _, sr := range ss {
				v, lo, hi := sr.val(st.Explanation, j)
				ext.add(v, lo, hi)
			}
		}
	}
	ext = ext.padded()
	if itHi == itLo {
		itLo, itHi = itLo-1, itHi+1
	}
	const (
		width  = 760
		left   = 70
		right  = 20
		top    = 50
		panelH = 130
		gap    = 22
	)
	height := top + p*(panelH+gap) + 30
	plotW := float64(width - left - right)
	xOf := func(it float64) float64 { return left + (it-itLo)/(itHi-itLo)*plotW }
	bw := bufio.NewWriter(w)
	pr := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	pr(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	pr(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	pr(`<text x="10" y="20" font-size="15" font-weight="bold">Desirability paths (%s)</text>`+"\n", first.Method)
	lx := left
	for _, sr := range ss {
		pr(`<rect x="%d" y="30" width="14" height="4" fill="%s"/><text x="%d" y="36">%s</text>`+"\n", lx, sr.color, lx+18, html.EscapeString(sr.name))
		lx += 34 + 8*len([]rune(sr.name))
	}
	for j := 0; j < p; j++ {
		y0 := float64(top + j*(panelH+gap) + gap)
		yOf := func(v float64) float64 { return y0 + panelH - (v-ext.lo)/(ext.hi-ext.lo)*panelH }
		pr(`<text x="%d" y="%.0f" font-weight="bold">%s</text>`+"\n", left, y0-5, html.EscapeString(path.Params[j]))
		pr(`<rect x="%d" y="%.0f" width="%.0f" height="%d" fill="none" stroke="#aaa"/>`+"\n", left, y0, plotW, panelH)
		for _, t := range niceTicks(ext.lo, ext.hi, 4) {
			pr(`<line x1="%d" y1="%.1f" x2="%.0f" y2="%.1f" stroke="%s"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
				left, yOf(t), float64(left)+plotW, yOf(t), colorGrid, left-4, yOf(t)+4, fmtNum(t))
		}
		pr(`<line x1="%d" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#888"/>`+"\n", left, yOf(0), float64(left)+plotW, yOf(0))
		for si, sr := range ss {
			d := ""
			for k, st := range path.Steps {
				v, lo, hi := sr.val(st.Explanation, j)
				x := xOf(float64(st.Iteration))
				cmd := "L"
				if k == 0 {
					cmd = "M"
				}
				d += fmt.Sprintf("%s%.1f %.1f ", cmd, x, yOf(v))
				if si == len(ss)-1 && hi > lo {
					pr(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999"/>`+"\n", x, yOf(lo), x, yOf(hi))
				}
			}
			pr(`<path d="%s" fill="none" stroke="%s" stroke-width="1.6"/>`+"\n", d, sr.color)
		}
	}
	axisY := float64(top + p*(panelH+gap) + gap)
	for _, t := range niceTicks(itLo, itHi, 8) {
		if t != math.Trunc(t) {
			continue
		}
		pr(`<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", xOf(t), axisY+2, fmtNum(t))
	}
	pr(`<text x="%.0f" y="%.0f" text-anchor="middle" fill="#444">iteration</text>`+"\n", float64(left)+plotW/2, axisY+18)
	pr("</svg>\n")
	return bw.Flush()
}

// seWeight is the coefficient of φ(se) in φ(cb): the explanation's SEWeight,
// or −τ for explanations made before it was recorded.
func seWeight(e *Explanation) float64 {
	if e.SEWeight != nil {
		return *e.SEWeight
	}
	if e.Tau != nil {
		return -*e.Tau
	}
	return 0
}

func signWord(w float64) string {
	if w > 0 {
		return "+"
	}
	return "−"
}

// desirableWord says which direction of a contribution helps the optimizer.
func desirableWord(w float64) string {
	if w > 0 {
		return "positive raises the upper bound; for a maximized objective that is desirable"
	}
	return "negative lowers the value; for a minimized cb that is desirable"
}
