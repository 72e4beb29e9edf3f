package report

import (
	"cmp"
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"xbo/history"
	"xbo/space"
)

// The report's trials: a table of every trial (number, state, values,
// parameters, what proposed it) and parallel coordinates of the usable
// ones, as the dashboard's overview has them, so that a reader of the
// report alone can look up a trial the explanations name. Numbers are
// written by Number with every digit in a title attribute (the hover
// text), as on the dashboard.

// cell is one table cell: its text, and for a number every digit on hover.
type cell struct {
	Text  string
	Title string
	Num   bool
	Note  bool // a person's note: its line breaks kept
}

// numberCell writes v for people with every digit on hover; a NaN (no
// value) is a dash.
func numberCell(v float64) cell {
	if math.IsNaN(v) {
		return cell{Text: "—"}
	}
	return cell{Text: Number(v), Title: exactNumber(v), Num: true}
}

// trialsView is the trials section: the parallel coordinates and the table.
type trialsView struct {
	Parallel    template.HTML
	ParallelCap string
	Head        []string
	Rows        []trialRow
	// TableCap says which trials the table lists when it lists not all.
	TableCap string
}

// tableTrials bounds the rows of the trials table: a study of 10,000
// trials would otherwise make a report of megabytes that no one reads row
// by row. Beyond it the table keeps what a reader looks up (see
// tableSelection).
const tableTrials = 1000

// tableSelection returns the indices of h.Trials the table lists, in
// number order, and a caption when some are left out: every trial up to
// tableTrials; beyond, the tableTrials/2 best complete trials by the
// (first) objective, the tableTrials/2 latest, and every trial with a
// note — the best, the newest proposals and what someone wrote about are
// what the explanations and a reader name.
func tableSelection(h *history.History) ([]int, string) {
	n := len(h.Trials)
	keep := make([]bool, n)
	if n <= tableTrials {
		for i := range keep {
			keep[i] = true
		}
	} else {
		half := tableTrials / 2
		sign := 1.0
		if dirs := h.Space.Directions(); len(dirs) > 0 && dirs[0] == space.Maximize {
			sign = -1
		}
		first := func(t *history.Trial) float64 {
			if len(t.Values) > 0 {
				return t.Values[0]
			}
			return t.Value
		}
		var complete []int
		for i := range h.Trials {
			if t := &h.Trials[i]; t.State == history.Complete && !math.IsNaN(first(t)) {
				complete = append(complete, i)
			}
		}
		slices.SortStableFunc(complete, func(a, b int) int {
			return cmp.Compare(sign*first(&h.Trials[a]), sign*first(&h.Trials[b]))
		})
		for _, i := range complete[:min(half, len(complete))] {
			keep[i] = true
		}
		byNumber := make([]int, n)
		for i := range byNumber {
			byNumber[i] = i
		}
		slices.SortStableFunc(byNumber, func(a, b int) int { return cmp.Compare(h.Trials[b].Number, h.Trials[a].Number) })
		for _, i := range byNumber[:half] {
			keep[i] = true
		}
		for i := range h.Trials {
			if h.Trials[i].Note != "" {
				keep[i] = true
			}
		}
	}
	var idx []int
	for i, k := range keep {
		if k {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(h.Trials[a].Number, h.Trials[b].Number) })
	if len(idx) == n {
		return idx, ""
	}
	return idx, fmt.Sprintf("%d of the study's %d trials: the %d best complete ones, the %d latest and every trial with a note, in number order; xbo study export lists them all.",
		len(idx), n, tableTrials/2, tableTrials/2)
}

type trialRow struct {
	Trial int64
	State string
	Cells []cell
}

// paramCell writes parameter i's natural value v of a trial: a float
// through Number (every digit on hover), an integer or a level as it is,
// an inactive parameter as a dash that says so on hover.
func paramCell(sp *space.Space, i int, v float64) cell {
	p := &sp.Params[i]
	if math.IsNaN(v) {
		// Aligned as the column's numbers are.
		return cell{Text: "—", Title: "inactive", Num: p.Type != space.Categorical}
	}
	switch p.Type {
	case space.Float:
		return numberCell(v)
	case space.Int:
		return cell{Text: sp.Format(i, v), Title: sp.Format(i, v), Num: true}
	}
	return cell{Text: sp.Format(i, v)}
}

// trialsTable lists the trials of the history at idx (tableSelection),
// whatever their state: a failed or pruned trial is part of what the run
// spent.
func trialsTable(h *history.History, idx []int) ([]string, []trialRow) {
	sp := h.Space
	multi := sp.MultiObjective()
	head := []string{"trial", "state"}
	if multi {
		head = append(head, sp.ObjectiveNames()...)
	} else {
		head = append(head, "value")
	}
	head = append(head, sp.Constraints...)
	head = append(head, sp.Names()...)
	head = append(head, "proposed by")
	noted := slices.ContainsFunc(h.Trials, func(t history.Trial) bool { return t.Note != "" })
	if noted {
		head = append(head, "note")
	}
	rows := make([]trialRow, len(idx))
	for k, i := range idx {
		t := &h.Trials[i]
		r := trialRow{Trial: t.Number, State: string(t.State)}
		if multi {
			for j := range sp.ObjectiveNames() {
				v := math.NaN()
				if j < len(t.Values) {
					v = t.Values[j]
				}
				r.Cells = append(r.Cells, numberCell(v))
			}
		} else {
			r.Cells = append(r.Cells, numberCell(t.Value))
		}
		for j := range sp.Constraints {
			v := math.NaN()
			if j < len(t.Constraints) {
				v = t.Constraints[j]
			}
			r.Cells = append(r.Cells, numberCell(v))
		}
		for i := range sp.Params {
			v := math.NaN()
			if i < len(t.Params) {
				v = t.Params[i]
			}
			r.Cells = append(r.Cells, paramCell(sp, i, v))
		}
		acq := t.Acquisition
		if acq == "" {
			acq = "—"
		}
		r.Cells = append(r.Cells, cell{Text: acq})
		if noted {
			r.Cells = append(r.Cells, cell{Text: t.Note, Note: true})
		}
		rows[k] = r
	}
	return head, rows
}

// parallelLines bounds the lines drawn, as the dashboard does: more make
// a solid block and a report of megabytes.
const parallelLines = 2000

// bestLast is the colour scale of the lines, pale to dark (worse to
// better), the dashboard's (web/src/overview.js): one hue, so darkness
// alone says how good a line is, whatever the reader's colour vision.
var bestLast = [][3]float64{{0xdb, 0xe9, 0xf6}, {0x9e, 0xca, 0xe1}, {0x42, 0x92, 0xc6}, {0x21, 0x71, 0xb5}, {0x08, 0x30, 0x6b}}

// rankColour is the colour at goodness g in [0, 1] (1 the best).
func rankColour(g float64) string {
	x := g * float64(len(bestLast)-1)
	k := min(int(x), len(bestLast)-2)
	f := x - float64(k)
	var c [3]int
	for j := range c {
		c[j] = int(math.Round(bestLast[k][j] + f*(bestLast[k+1][j]-bestLast[k][j])))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

// pcAxis is one vertical axis: its name, where a value goes on it (a
// fraction from the bottom, false when the trial has none), and its
// labels as (fraction, text).
type pcAxis struct {
	name   string
	pos    func(v float64) (float64, bool)
	labels [][2]string
	ticks  []float64
}

// paramAxis places parameter p's natural values: its range linearly or
// on a log scale, its levels evenly.
func paramAxis(p *space.Param) pcAxis {
	a := pcAxis{name: p.Name}
	if p.Type == space.Categorical {
		n := len(p.Choices)
		at := func(k int) float64 {
			if n == 1 {
				return 0.5
			}
			return float64(k) / float64(n-1)
		}
		a.pos = func(v float64) (float64, bool) {
			if math.IsNaN(v) || v < 0 || int(v) >= n {
				return 0, false
			}
			return at(int(v)), true
		}
		for k := range n {
			a.ticks = append(a.ticks, at(k))
			a.labels = append(a.labels, [2]string{"", p.Label(k)})
		}
		return a
	}
	lo, hi := p.Low, p.High
	tr := func(v float64) float64 { return v }
	if p.Log {
		a.name += " (log)"
		tr = math.Log
	}
	a.pos = func(v float64) (float64, bool) {
		if math.IsNaN(v) || hi == lo {
			return 0.5, !math.IsNaN(v)
		}
		return (tr(v) - tr(lo)) / (tr(hi) - tr(lo)), true
	}
	vals := niceTicks(lo, hi)
	if p.Log {
		// The range's ends and the powers of ten between them.
		vals = []float64{lo}
		for e := math.Ceil(math.Log10(lo)); math.Pow(10, e) < hi; e++ {
			if v := math.Pow(10, e); v > lo {
				vals = append(vals, v)
			}
		}
		vals = append(vals, hi)
	}
	for _, v := range vals {
		f, _ := a.pos(v)
		a.ticks = append(a.ticks, f)
		a.labels = append(a.labels, [2]string{"", Number(v)})
	}
	return a
}

// valueAxis places an objective's values on the trace's scale: outliers on
// the worse side beyond its fence sit at the axis's edge (traceScale).
func valueAxis(name string, values []float64, maximize bool) pcAxis {
	sc := traceScale(values, !maximize)
	a := pcAxis{name: name}
	a.pos = func(v float64) (float64, bool) {
		if math.IsNaN(v) {
			return 0, false
		}
		return math.Max(0, math.Min(1, (v-sc.lo)/(sc.hi-sc.lo))), true
	}
	for _, v := range niceTicks(sc.lo, sc.hi) {
		f, _ := a.pos(v)
		a.ticks = append(a.ticks, f)
		a.labels = append(a.labels, [2]string{"", Number(v)})
	}
	return a
}

// pcLine is one trial's line: its values on every axis and its colour.
type pcLine struct {
	trial   int64
	values  []float64
	colour  string
	width   float64
	opacity float64
	dashed  bool
	hover   string
}

// parallelSVG draws the lines over the axes: the first line is drawn first
// (under the others). A line passes by an axis whose parameter is
// inactive.
func parallelSVG(axes []pcAxis, lines []pcLine, legend string) string {
	const w, h, ml, mr, mt, mb = 860, 340, 60, 60, 56, 28
	pw, ph := float64(w-ml-mr), float64(h-mt-mb)
	x := func(j int) float64 {
		if len(axes) == 1 {
			return ml + pw/2
		}
		return ml + float64(j)/float64(len(axes)-1)*pw
	}
	y := func(f float64) float64 { return mt + (1-f)*ph }
	var b strings.Builder
	svgOpen(&b, w, h, 10)
	for _, l := range lines {
		var d strings.Builder
		pen := false
		for j, a := range axes {
			f, ok := a.pos(l.values[j])
			if !ok {
				// The line passes by the axis of an inactive parameter to
				// the next one: a break would leave the segments after it
				// (the objective's) unseen when they are a single point.
				continue
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%s %s", cmd, num(x(j)), num(y(f)))
			pen = true
		}
		dash := ""
		if l.dashed {
			dash = ` stroke-dasharray="4 3"`
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="%s" stroke-opacity="%s"%s data-trial="%d"><title>%s</title></path>`+"\n",
			d.String(), l.colour, num(l.width), strconv.FormatFloat(l.opacity, 'f', 2, 64), dash, l.trial, html.EscapeString(l.hover))
	}
	for j, a := range axes {
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%s" stroke="#555"/>`+"\n", num(x(j)), mt, num(x(j)), num(mt+ph))
		for k, f := range a.ticks {
			// A white halo keeps a label legible over the lines.
			fmt.Fprintf(&b, `<text x="%s" y="%s" fill="#333" stroke="white" stroke-width="3" paint-order="stroke">%s</text>`+"\n", num(x(j)+4), num(y(f)+3), html.EscapeString(a.labels[k][1]))
		}
		// Names alternate in height so that neighbours do not overlap.
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle" font-weight="bold" font-size="11">%s</text>`+"\n", num(x(j)), mt-12-14*(j%2), html.EscapeString(a.name))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#333">%s</text>`+"\n", w/2, h-8, html.EscapeString(legend))
	b.WriteString("</svg>\n")
	return b.String()
}

// hoverText is a line's hover text: the trial, its configuration as the
// space writes it (every digit, levels by name) and its objective values
// with every digit.
func hoverText(sp *space.Space, n int64, names []string, values []float64) string {
	parts := make([]string, len(values))
	for k, v := range values {
		switch {
		case k >= sp.Dim():
			parts[k] = names[k] + " " + exactNumber(v)
		case math.IsNaN(v):
			parts[k] = names[k] + " inactive"
		default:
			parts[k] = names[k] + " " + sp.Format(k, v)
		}
	}
	return fmt.Sprintf("trial %d: %s", n, strings.Join(parts, ", "))
}

// thin keeps at most parallelLines of the indices, evenly spaced, always
// with those keep marks.
func thin(idx []int, keep func(int) bool) []int {
	if len(idx) <= parallelLines {
		return idx
	}
	step := float64(len(idx)) / parallelLines
	seen := map[int]bool{}
	var out []int
	for k := range parallelLines {
		i := idx[int(float64(k)*step)]
		out, seen[i] = append(out, i), true
	}
	for _, i := range idx {
		if keep(i) && !seen[i] {
			out = append(out, i)
		}
	}
	return out
}

// lineOpacity is a line's opacity among n drawn at goodness g: the worst
// fade as the lines multiply, the best stay nearly opaque, as on the
// dashboard.
func lineOpacity(n int, g float64) float64 {
	faint := math.Max(0.08, math.Min(0.45, 60/math.Max(1, float64(n))))
	return faint + math.Max(0, g)*(0.95-faint)
}

// parallelView draws the usable trials' parallel coordinates: an axis per
// parameter and one per objective. With one objective the lines are
// coloured by rank, the best darkest and drawn last; with several the
// Pareto-optimal trials are dark and drawn last, the dominated pale, the
// infeasible paler still and dashed. It returns the figure and its caption.
func (rep *Report) parallelView() (string, string) {
	h, sp := rep.h, rep.h.Space
	var axes []pcAxis
	for i := range sp.Params {
		axes = append(axes, paramAxis(&sp.Params[i]))
	}
	var idx []int // usable trials, indices into h.Trials
	var objNames []string
	var dirs []space.Direction
	if sp.MultiObjective() {
		objNames, dirs = sp.ObjectiveNames(), sp.Directions()
		for i := range h.Trials {
			if t := &h.Trials[i]; t.State == history.Complete && len(t.Values) == len(objNames) && allFinite(t.Values) {
				idx = append(idx, i)
			}
		}
	} else {
		objNames, dirs = []string{"value"}, []space.Direction{sp.Objective}
		idx = append(idx, rep.data.Index...)
	}
	values := func(i int) []float64 {
		if t := &h.Trials[i]; len(objNames) > 1 {
			return t.Values
		}
		return []float64{h.Trials[i].Value}
	}
	for k, name := range objNames {
		col := make([]float64, len(idx))
		for j, i := range idx {
			col[j] = values(i)[k]
		}
		suffix := " (min)"
		if dirs[k] == space.Maximize {
			suffix = " (max)"
		}
		axes = append(axes, valueAxis(name+suffix, col, dirs[k] == space.Maximize))
	}
	// goodness ranks the lines: 1 the best; infeasible trials are never best.
	goodness := map[int]float64{}
	var legend string
	if len(objNames) > 1 {
		front := map[int64]bool{}
		for _, t := range rep.Pareto.Front {
			front[t.Trial] = true
		}
		infeasible := map[int64]bool{}
		for _, n := range rep.Pareto.Infeasible {
			infeasible[n] = true
		}
		for _, i := range idx {
			switch n := h.Trials[i].Number; {
			case front[n]:
				goodness[i] = 1
			case infeasible[n]:
				goodness[i] = -1
			default:
				goodness[i] = 0.25
			}
		}
		legend = "dark: Pareto-optimal (drawn last); pale: dominated; dashed grey: infeasible"
	} else {
		order := append([]int(nil), idx...)
		maximize := sp.Objective == space.Maximize
		sort.SliceStable(order, func(a, b int) bool {
			ta, tb := &h.Trials[order[a]], &h.Trials[order[b]]
			fa, fb := h.Feasible(ta), h.Feasible(tb)
			if fa != fb {
				return !fa // infeasible first: worst
			}
			if maximize {
				return ta.Value < tb.Value
			}
			return ta.Value > tb.Value
		})
		for r, i := range order {
			goodness[i] = 1
			if len(order) > 1 {
				goodness[i] = float64(r) / float64(len(order)-1)
			}
		}
		legend = "colour by rank: pale the worst, dark the best (drawn last)"
	}
	drawn := thin(idx, func(i int) bool { return goodness[i] == 1 })
	sort.SliceStable(drawn, func(a, b int) bool { return goodness[drawn[a]] < goodness[drawn[b]] })
	names := append(sp.Names(), objNames...)
	var lines []pcLine
	for _, i := range drawn {
		t := &h.Trials[i]
		vs := append(append([]float64(nil), t.Params...), values(i)...)
		g := goodness[i]
		l := pcLine{trial: t.Number, values: vs, width: 1.2, opacity: lineOpacity(len(drawn), g), hover: hoverText(sp, t.Number, names, vs)}
		if g < 0 {
			l.colour, l.dashed = "#969696", true
		} else {
			l.colour = rankColour(g)
		}
		if len(objNames) > 1 && goodness[i] == 1 {
			l.width = 2
		}
		lines = append(lines, l)
	}
	fig := parallelSVG(axes, lines, legend)
	caption := fmt.Sprintf("Each line is one of the %d usable trials: its value of every hyperparameter and its objective value(s), each on its own axis (a log axis where the parameter is searched on a log scale; a line passes by the axis of a parameter that is inactive in its trial). ", len(idx))
	if len(drawn) < len(idx) {
		caption += fmt.Sprintf("%d of them are drawn, evenly spaced in trial order, the best always included. ", len(drawn))
	}
	caption += "Objective values beyond the trace's fence on the worse side are drawn at the axis's edge. Hover over a line for the trial and its exact values."
	return fig, caption
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// trialsView is the trials section of the page.
func (rep *Report) trialsView() *trialsView {
	v := &trialsView{}
	fig, caption := rep.parallelView()
	v.Parallel, v.ParallelCap = template.HTML(fig), caption
	idx, caption := tableSelection(rep.h)
	v.Head, v.Rows = trialsTable(rep.h, idx)
	v.TableCap = caption
	return v
}
