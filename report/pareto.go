package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strings"

	"xbo/history"
	"xbo/pareto"
	"xbo/space"
)

// ParetoSection is what the report says about a study with several
// objectives, which has no single best value: its feasible Pareto front
// (history.History.ParetoFront), the usable trials it dominates and the
// infeasible ones, and the hypervolume of the feasible front after each
// usable trial against a stated reference point.
type ParetoSection struct {
	Objectives  []space.Objective `json:"objectives"`
	Constraints []string          `json:"constraints,omitempty"`
	// Front holds the Pareto-optimal trials in number order.
	Front []ParetoTrial `json:"front"`
	// Dominated and Infeasible are the other usable trials' numbers.
	Dominated  []int64 `json:"dominated"`
	Infeasible []int64 `json:"infeasible"`
	// Reference is the hypervolume's reference point (nil when no usable
	// trial is feasible), chosen by ReferenceRule.
	Reference     []float64          `json:"reference,omitempty"`
	ReferenceRule string             `json:"reference_rule"`
	Hypervolume   []HypervolumePoint `json:"hypervolume"`
}

// ParetoTrial is one Pareto-optimal trial: every objective's value, every
// constraint's, and its configuration.
type ParetoTrial struct {
	Trial       int64          `json:"trial"`
	Values      []float64      `json:"values"`
	Constraints []float64      `json:"constraints,omitempty"`
	Config      map[string]any `json:"config"`
}

// HypervolumePoint is the hypervolume of the feasible front of the usable
// trials numbered up to Trial, and the size of that front.
type HypervolumePoint struct {
	Trial       int64   `json:"trial"`
	Hypervolume float64 `json:"hypervolume"`
	FrontSize   int     `json:"front_size"`
}

// ReferenceRule is pareto.ReferenceRule; the dashboard follows the same
// one (web/src/pareto.js), so both show the same hypervolume for the same
// trials.
const ReferenceRule = pareto.ReferenceRule

// paretoSection classifies the usable trials and measures the front as it
// grew. A trial some front member is at least as good as leaves the
// hypervolume unchanged; one that joins the front adds its box (between
// it and the reference point) less the part of the box the front already
// covers: the front clipped to the box, whose non-dominated part is small.
// Measuring the whole front again at every change would cost seconds with
// four objectives and a few hundred trials on the front.
func paretoSection(h *history.History) (*ParetoSection, error) {
	sp := h.Space
	dirs := h.Directions()
	names := sp.ObjectiveNames()
	sec := &ParetoSection{Constraints: sp.Constraints, ReferenceRule: ReferenceRule, Dominated: []int64{}, Infeasible: []int64{}, Front: []ParetoTrial{}}
	for k := range names {
		sec.Objectives = append(sec.Objectives, space.Objective{Name: names[k], Direction: dirs[k]})
	}
	front, err := h.ParetoFront()
	if err != nil {
		return nil, err
	}
	onFront := map[int]bool{}
	for _, i := range front {
		onFront[i] = true
		t := &h.Trials[i]
		sec.Front = append(sec.Front, ParetoTrial{Trial: t.Number, Values: h.ObjectiveValues(t), Constraints: slices.Clone(t.Constraints), Config: sp.ToMap(t.Params)})
	}
	var feasible [][]float64
	for _, i := range h.Usable() {
		t := &h.Trials[i]
		switch {
		case !h.Feasible(t):
			sec.Infeasible = append(sec.Infeasible, t.Number)
		case !onFront[i]:
			sec.Dominated = append(sec.Dominated, t.Number)
		}
		if h.Feasible(t) {
			feasible = append(feasible, h.ObjectiveValues(t))
		}
	}
	sec.Reference = pareto.ReferencePoint(feasible, dirs)
	if sec.Reference == nil {
		return sec, nil
	}
	var cur [][]float64
	hv := 0.0
	for _, i := range h.Usable() {
		t := &h.Trials[i]
		if h.Feasible(t) {
			v := h.ObjectiveValues(t)
			if !slices.ContainsFunc(cur, func(f []float64) bool { return atLeastAsGood(f, v, dirs) }) {
				add, err := addedVolume(cur, v, sec.Reference, dirs)
				if err != nil {
					return nil, err
				}
				hv += add
				cur = slices.DeleteFunc(cur, func(f []float64) bool { return atLeastAsGood(v, f, dirs) })
				cur = append(cur, v)
			}
		}
		sec.Hypervolume = append(sec.Hypervolume, HypervolumePoint{Trial: t.Number, Hypervolume: hv, FrontSize: len(cur)})
	}
	return sec, nil
}

// addedVolume is the hypervolume v adds to the front: the volume of its
// box up to ref less the front's hypervolume within that box (each member
// moved to v wherever it is better than v).
func addedVolume(front [][]float64, v, ref []float64, dirs []space.Direction) (float64, error) {
	box := 1.0
	for k := range v {
		box *= math.Abs(ref[k] - v[k])
	}
	clipped := make([][]float64, len(front))
	for i, f := range front {
		c := make([]float64, len(f))
		for k, d := range dirs {
			if d == space.Maximize {
				c[k] = math.Min(f[k], v[k])
			} else {
				c[k] = math.Max(f[k], v[k])
			}
		}
		clipped[i] = c
	}
	if len(clipped) == 0 {
		return box, nil
	}
	// Only the clipped members no other is at least as good as count; they
	// are few, so one pass that keeps them is cheaper than a sort.
	var inner [][]float64
	for _, c := range clipped {
		if slices.ContainsFunc(inner, func(q []float64) bool { return atLeastAsGood(q, c, dirs) }) {
			continue
		}
		inner = slices.DeleteFunc(inner, func(q []float64) bool { return atLeastAsGood(c, q, dirs) })
		inner = append(inner, c)
	}
	covered, err := pareto.Hypervolume(inner, ref, dirs)
	if err != nil {
		return 0, err
	}
	return box - covered, nil
}

// atLeastAsGood: a is no worse than b in every objective.
func atLeastAsGood(a, b []float64, dirs []space.Direction) bool {
	for k, d := range dirs {
		if d == space.Maximize && a[k] < b[k] || d != space.Maximize && a[k] > b[k] {
			return false
		}
	}
	return true
}

// ------------------------------------------------------------- figures

// paretoPoint is one usable trial as the figures draw it.
type paretoPoint struct {
	trial  int64
	values []float64
	kind   string // "front", "dominated" or "infeasible"
}

func (rep *Report) paretoPoints() []paretoPoint {
	h, sec := rep.h, rep.Pareto
	kind := map[int64]string{}
	for _, f := range sec.Front {
		kind[f.Trial] = "front"
	}
	for _, n := range sec.Dominated {
		kind[n] = "dominated"
	}
	for _, n := range sec.Infeasible {
		kind[n] = "infeasible"
	}
	var pts []paretoPoint
	for _, i := range h.Usable() {
		t := &h.Trials[i]
		pts = append(pts, paretoPoint{trial: t.Number, values: h.ObjectiveValues(t), kind: kind[t.Number]})
	}
	return pts
}

var kindWords = map[string]string{"front": "Pareto-optimal", "dominated": "dominated", "infeasible": "infeasible"}

func dirShort(d space.Direction) string {
	if d == space.Maximize {
		return "max"
	}
	return "min"
}

// scatterPanel draws objectives i (x) and j (y) of every usable trial into
// a panel at (x0, y0) of size w × hgt: Pareto-optimal trials as filled
// circles, dominated ones dimmed, infeasible ones as crosses (a shape of
// their own, readable in grey print), and with two objectives the front's
// boundary and the reference point.
func scatterPanel(b *strings.Builder, pts []paretoPoint, sec *ParetoSection, i, j int, x0, y0, w, hgt float64, full bool) {
	const ml, mr, mt, mb = 58, 12, 8, 40
	pw, ph := w-ml-mr, hgt-mt-mb
	lo := [2]float64{math.Inf(1), math.Inf(1)}
	hi := [2]float64{math.Inf(-1), math.Inf(-1)}
	extend := func(v []float64) {
		for a, k := range [2]int{i, j} {
			lo[a], hi[a] = math.Min(lo[a], v[k]), math.Max(hi[a], v[k])
		}
	}
	for _, p := range pts {
		extend(p.values)
	}
	if full && sec.Reference != nil {
		extend(sec.Reference)
	}
	for a := range 2 {
		if hi[a] == lo[a] {
			lo[a], hi[a] = lo[a]-1, hi[a]+1
		}
		pad := 0.04 * (hi[a] - lo[a])
		lo[a], hi[a] = lo[a]-pad, hi[a]+pad
	}
	px := func(v float64) float64 { return x0 + ml + (v-lo[0])/(hi[0]-lo[0])*pw }
	py := func(v float64) float64 { return y0 + mt + (hi[1]-v)/(hi[1]-lo[1])*ph }
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999"/>`+"\n", num(x0+ml), num(y0+mt), num(pw), num(ph))
	// Five ticks per axis on the full figure, three in a panel of a pair.
	ticks := 3
	if full {
		ticks = 5
	}
	for k := range ticks {
		f := 0.04 + 0.92*float64(k)/float64(ticks-1)
		vx, vy := lo[0]+(hi[0]-lo[0])*f, lo[1]+(hi[1]-lo[1])*f
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(px(vx)), num(y0+mt+ph+14), Number(vx))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end">%s</text>`+"\n", num(x0+ml-4), num(py(vy)+4), Number(vy))
	}
	oi, oj := sec.Objectives[i], sec.Objectives[j]
	xname, yname := fmt.Sprintf("%s (%s)", oi.Name, dirShort(oi.Direction)), fmt.Sprintf("%s (%s)", oj.Name, dirShort(oj.Direction))
	if full {
		xname, yname = fmt.Sprintf("%s (%s)", oi.Name, directionWords(oi.Direction)), fmt.Sprintf("%s (%s)", oj.Name, directionWords(oj.Direction))
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(x0+ml+pw/2), num(y0+hgt-8), html.EscapeString(xname))
	cy := y0 + mt + ph/2
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">%s</text>`+"\n", num(x0+14), num(cy), num(x0+14), num(cy), html.EscapeString(yname))
	label := func(p paretoPoint) string {
		parts := make([]string, len(p.values))
		for k, v := range p.values {
			parts[k] = sec.Objectives[k].Name + " " + Number(v)
		}
		return fmt.Sprintf("trial %d: %s (%s)", p.trial, strings.Join(parts, ", "), kindWords[p.kind])
	}
	// Dominated first, then infeasible, then the front on top.
	for _, kind := range []string{"dominated", "infeasible", "front"} {
		for _, p := range pts {
			if p.kind != kind {
				continue
			}
			x, y := px(p.values[i]), py(p.values[j])
			t := html.EscapeString(label(p))
			switch kind {
			case "dominated":
				fmt.Fprintf(b, `<circle class="dominated" data-trial="%d" cx="%s" cy="%s" r="3.5" fill="#0072B2" fill-opacity="0.45"><title>%s</title></circle>`+"\n", p.trial, num(x), num(y), t)
			case "infeasible":
				fmt.Fprintf(b, `<path class="infeasible" data-trial="%d" d="M%s %sl8 8m0 -8l-8 8" stroke="#D55E00" stroke-width="2" fill="none"><title>%s</title></path>`+"\n", p.trial, num(x-4), num(y-4), t)
			default:
				fmt.Fprintf(b, `<circle class="front" data-trial="%d" cx="%s" cy="%s" r="5" fill="#E69F00" stroke="black"><title>%s</title></circle>`+"\n", p.trial, num(x), num(y), t)
			}
		}
	}
	if !full {
		return
	}
	// The front's boundary: between neighbours (in order of the first
	// objective) the corner lies where the dominated region begins.
	var fr [][2]float64
	for _, p := range pts {
		if p.kind == "front" {
			fr = append(fr, [2]float64{p.values[i], p.values[j]})
		}
	}
	slices.SortFunc(fr, func(a, c [2]float64) int {
		if a[0] != c[0] {
			return map[bool]int{true: -1, false: 1}[a[0] < c[0]]
		}
		return map[bool]int{true: -1, false: 1}[a[1] < c[1]]
	})
	var line []string
	for k, p := range fr {
		if k > 0 {
			c := [2]float64{p[0], fr[k-1][1]}
			if oi.Direction == space.Maximize {
				c = [2]float64{fr[k-1][0], p[1]}
			}
			line = append(line, num(px(c[0]))+","+num(py(c[1])))
		}
		line = append(line, num(px(p[0]))+","+num(py(p[1])))
	}
	if len(line) > 1 {
		fmt.Fprintf(b, `<polyline class="boundary" points="%s" fill="none" stroke="#E69F00" stroke-width="2"/>`+"\n", strings.Join(line, " "))
	}
	if r := sec.Reference; r != nil {
		x, y := px(r[i]), py(r[j])
		fmt.Fprintf(b, `<path class="reference" d="M%s %sh12m-6 -6v12" stroke="black" stroke-width="2"><title>reference point: %s %s, %s %s</title></path>`+"\n",
			num(x-6), num(y), html.EscapeString(oi.Name), Number(r[i]), html.EscapeString(oj.Name), Number(r[j]))
	}
}

func directionWords(d space.Direction) string {
	if d == space.Maximize {
		return "maximized: higher is better"
	}
	return "minimized: lower is better"
}

// paretoSVG draws the front: one scatter of the two objectives, or with
// three or four a scatter of every pair, three to a row.
func (rep *Report) paretoSVG() string {
	sec := rep.Pareto
	pts := rep.paretoPoints()
	m := len(sec.Objectives)
	var b strings.Builder
	legend := func(w int) {
		y := 14
		x := w - 330
		fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="5" fill="#E69F00" stroke="black"/><text x="%d" y="%d">Pareto-optimal</text>`+"\n", x, y-4, x+9, y)
		fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="3.5" fill="#0072B2" fill-opacity="0.45"/><text x="%d" y="%d">dominated</text>`+"\n", x+110, y-4, x+119, y)
		if len(sec.Constraints) > 0 {
			fmt.Fprintf(&b, `<path d="M%d %dl8 8m0 -8l-8 8" stroke="#D55E00" stroke-width="2"/><text x="%d" y="%d">infeasible</text>`+"\n", x+196, y-8, x+208, y)
		}
		if m == 2 {
			fmt.Fprintf(&b, `<path d="M%d %dh12m-6 -6v12" stroke="black" stroke-width="2"/><text x="%d" y="%d">reference</text>`+"\n", x+266, y-4, x+281, y)
		}
	}
	if m == 2 {
		const w, hgt = 860, 440
		fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11" role="img" aria-label="Pareto front">`+"\n", w, hgt, w, hgt)
		b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
		legend(w)
		scatterPanel(&b, pts, sec, 0, 1, 0, 20, w, hgt-20, true)
		b.WriteString("</svg>\n")
		return b.String()
	}
	var pairs [][2]int
	for i := range m {
		for j := i + 1; j < m; j++ {
			pairs = append(pairs, [2]int{i, j})
		}
	}
	const w, cellW, cellH = 860, 860.0 / 3, 260.0
	rows := (len(pairs) + 2) / 3
	hgt := 20 + int(cellH)*rows
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11" role="img" aria-label="Pareto front, every pair of objectives">`+"\n", w, hgt, w, hgt)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	legend(w)
	for p, ij := range pairs {
		fmt.Fprintf(&b, `<g class="pair" data-pair="%s × %s">`+"\n", html.EscapeString(sec.Objectives[ij[0]].Name), html.EscapeString(sec.Objectives[ij[1]].Name))
		scatterPanel(&b, pts, sec, ij[0], ij[1], float64(p%3)*cellW, 20+float64(p/3)*cellH, cellW, cellH, false)
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// hypervolumeSVG draws the hypervolume after each usable trial as a step
// line, the reference point written on the figure.
func (rep *Report) hypervolumeSVG() string {
	sec := rep.Pareto
	hv := sec.Hypervolume
	const w, hgt, ml, mr, mt, mb = 860, 260, 70, 20, 30, 44
	pw, ph := float64(w-ml-mr), float64(hgt-mt-mb)
	top := 0.0
	for _, p := range hv {
		top = math.Max(top, p.Hypervolume)
	}
	if top == 0 {
		top = 1
	}
	first, last := hv[0].Trial, hv[len(hv)-1].Trial
	span := math.Max(1, float64(last-first))
	px := func(n int64) float64 { return ml + float64(n-first)/span*pw }
	py := func(v float64) float64 { return mt + (1-v/(1.05*top))*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11" role="img" aria-label="Hypervolume over trials">`+"\n", w, hgt, w, hgt)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="%s" fill="none" stroke="#999"/>`+"\n", ml, mt, num(pw), num(ph))
	parts := make([]string, len(sec.Objectives))
	for k, o := range sec.Objectives {
		parts[k] = o.Name + " = " + Number(sec.Reference[k])
	}
	fmt.Fprintf(&b, `<text x="%s" y="16" text-anchor="middle" class="reference">reference point: %s</text>`+"\n", num(ml+pw/2), html.EscapeString(strings.Join(parts, ", ")))
	var pts []string
	for k, p := range hv {
		if k > 0 {
			pts = append(pts, num(px(p.Trial))+","+num(py(hv[k-1].Hypervolume)))
		}
		pts = append(pts, num(px(p.Trial))+","+num(py(p.Hypervolume)))
	}
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#009E73" stroke-width="2"/>`+"\n", strings.Join(pts, " "))
	for k := range 5 {
		v := 1.05 * top * float64(k) / 4
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", ml-4, num(py(v)+4), Number(v))
		n := first + int64(math.Round(float64(k)*span/4))
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%d</text>`+"\n", num(px(n)), hgt-mb+14, n)
	}
	fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">trial number</text>`+"\n", num(ml+pw/2), hgt-8)
	fmt.Fprintf(&b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">hypervolume (higher is better)</text>`+"\n", num(mt+ph/2), num(mt+ph/2))
	b.WriteString("</svg>\n")
	return b.String()
}

// paretoView lays out the Pareto section: the figures with their
// captions and the table of Pareto-optimal trials (every objective, every
// constraint, the configuration).
func (rep *Report) paretoView() *paretoView {
	sec := rep.Pareto
	m := len(sec.Objectives)
	usable := len(sec.Front) + len(sec.Dominated) + len(sec.Infeasible)
	pv := &paretoView{Figure: template.HTML(rep.paretoSVG())}
	var c strings.Builder
	fmt.Fprintf(&c, "Each mark is one of the %d usable trials at its objective values: the %d Pareto-optimal trials (orange; feasible, and no other "+
		"feasible trial is at least as good in every objective and better in one), the %d feasible trials they dominate (blue, dimmed)",
		usable, len(sec.Front), len(sec.Dominated))
	if len(sec.Constraints) > 0 {
		fmt.Fprintf(&c, " and the %d infeasible trials (crosses: a constraint value above 0; never on the front)", len(sec.Infeasible))
	}
	c.WriteString(". ")
	if m == 2 {
		c.WriteString("The orange steps are the front's boundary: everything beyond it is dominated; the + is the hypervolume's reference point. ")
	} else {
		fmt.Fprintf(&c, "Every pair of the %d objectives is drawn: a trial on the front of all %d may look dominated in one pair. ", m, m)
	}
	c.WriteString("The front is data, not a model: a noisy evaluation can put a trial on it.")
	pv.Caption = c.String()
	if sec.Reference != nil {
		pv.HV = template.HTML(rep.hypervolumeSVG())
		last := sec.Hypervolume[len(sec.Hypervolume)-1]
		parts := make([]string, m)
		for k, o := range sec.Objectives {
			parts[k] = o.Name + " = " + Number(sec.Reference[k])
		}
		pv.HVCap = fmt.Sprintf("The hypervolume is the volume of objective space the feasible front dominates up to the reference point (%s), "+
			"in the product of the objectives' units; it grows whenever a trial joins the front and never falls. The reference point is %s. "+
			"After the last usable trial (#%d) it is %s, with %d trials on the front. A study compared with another must use one reference point for both.",
			strings.Join(parts, ", "), ReferenceRule, last.Trial, Number(last.Hypervolume), last.FrontSize)
	}
	pv.Head = []string{"trial"}
	for _, o := range sec.Objectives {
		pv.Head = append(pv.Head, fmt.Sprintf("%s (%s)", o.Name, dirShort(o.Direction)))
	}
	for _, name := range sec.Constraints {
		pv.Head = append(pv.Head, name+" (≤ 0)")
	}
	pv.Head = append(pv.Head, "configuration")
	sp := rep.h.Space
	for _, f := range sec.Front {
		row := paretoRow{Trial: f.Trial}
		for _, v := range f.Values {
			row.Cells = append(row.Cells, Number(v))
		}
		for _, v := range f.Constraints {
			row.Cells = append(row.Cells, Number(v))
		}
		i, _ := rep.h.Index(f.Trial)
		var cfg []string
		for j, p := range sp.Params {
			val := sp.Format(j, rep.h.Trials[i].Params[j])
			switch {
			case val == "":
				val = "inactive"
			case len(p.Choices) == 0 && p.Type != "int":
				val = Number(rep.h.Trials[i].Params[j])
			}
			cfg = append(cfg, p.Name+" = "+val)
		}
		row.Config = strings.Join(cfg, ", ")
		pv.Rows = append(pv.Rows, row)
	}
	pv.TableIntro = fmt.Sprintf("The %d Pareto-optimal trials in number order, each with every objective's and constraint's value "+
		"(the JSON keeps every digit): none is better than another in every objective, so the choice among them is a trade-off.", len(sec.Front))
	return pv
}
