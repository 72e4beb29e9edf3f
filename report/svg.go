package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"xbo/explain"

	"xbo/explain/regional"
)

// The figures below are the report's own (trace, importance bars, tree); the
// PDP panels and the Shapley bars are drawn by their explainer packages.

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func short(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// traceSVG draws every usable trial's value and the best value so far.
func traceSVG(tr []TracePoint, maximize bool) string {
	const w, h, ml, mr, mt, mb = 860, 280, 70, 20, 20, 44
	pw, ph := float64(w-ml-mr), float64(h-mt-mb)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range tr {
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
	}
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	pad := 0.05 * (hi - lo)
	lo, hi = lo-pad, hi+pad
	n := max(len(tr)-1, 1)
	px := func(i int) float64 { return ml + float64(i)/float64(n)*pw }
	py := func(v float64) float64 { return mt + (hi-v)/(hi-lo)*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", w, h, w, h)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="%s" fill="none" stroke="#999"/>`+"\n", ml, mt, num(pw), num(ph))
	infeasible := false
	for i, p := range tr {
		if p.Infeasible {
			// A cross: an infeasible trial is never best.
			infeasible = true
			fmt.Fprintf(&b, `<path d="M%s %sl6 6m0 -6l-6 6" stroke="#D55E00" stroke-width="1.5"><title>trial %d: %s (infeasible)</title></path>`+"\n",
				num(px(i)-3), num(py(p.Value)-3), p.Trial, short(p.Value))
			continue
		}
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="#636363" fill-opacity="0.6"><title>trial %d: %s</title></circle>`+"\n",
			num(px(i)), num(py(p.Value)), p.Trial, short(p.Value))
	}
	// The best-so-far line starts at the first feasible trial.
	var pts []string
	for i, p := range tr {
		if p.BestSoFar == nil {
			continue
		}
		if i > 0 && tr[i-1].BestSoFar != nil {
			pts = append(pts, num(px(i))+","+num(py(*tr[i-1].BestSoFar)))
		}
		pts = append(pts, num(px(i))+","+num(py(*p.BestSoFar)))
	}
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#e6550d" stroke-width="2"/>`+"\n", strings.Join(pts, " "))
	for k := range 5 {
		v := lo + (hi-lo)*float64(k)/4
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", ml-4, num(py(v)+4), short(v))
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
	if infeasible {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#D55E00">× an infeasible trial</text>`+"\n", w-mr-8, mt+42)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// importanceSVG draws the main effects as bars with whiskers: the 95%
// interval when the method gives one (gp-sobol), else ±1 std (fANOVA's
// spread across trees).
func importanceSVG(rank []explain.RankedEffect) string {
	whisker := func(r explain.RankedEffect) (lo, hi float64) {
		if len(r.CI95) == 2 {
			return r.CI95[0], r.CI95[1]
		}
		return r.Fraction - r.Std, r.Fraction + r.Std
	}
	legend := "fraction of variance explained (main effect; whiskers ±1 std across trees)"
	if len(rank) > 0 && len(rank[0].CI95) == 2 {
		legend = "fraction of variance explained (main effect; whiskers the 95% posterior interval)"
	}
	const w, rowH, ml, mr, mt, mb = 860, 28, 150, 70, 16, 36
	h := mt + mb + rowH*len(rank)
	pw := float64(w - ml - mr)
	top := 0.0
	for _, r := range rank {
		_, hi := whisker(r)
		top = math.Max(top, hi)
	}
	top = math.Min(1, math.Max(top, 0.05))
	px := func(v float64) float64 { return ml + math.Max(0, math.Min(v, top))/top*pw }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	for k := range 5 {
		v := top * float64(k) / 4
		x := px(v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/>`+"\n", num(x), mt, num(x), h-mb)
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle" font-size="11">%.0f%%</text>`+"\n", num(x), h-mb+14, 100*v)
	}
	for i, r := range rank {
		y := float64(mt + i*rowH)
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", ml-8, num(y+rowH/2+4), html.EscapeString(r.Param))
		fmt.Fprintf(&b, `<rect x="%d" y="%s" width="%s" height="%d" fill="#3182bd"><title>%s: %.1f%% ± %.1f%%</title></rect>`+"\n",
			ml, num(y+5), num(px(r.Fraction)-ml), rowH-10, html.EscapeString(r.Param), 100*r.Fraction, 100*r.Std)
		lo, hi := whisker(r)
		x0, x1 := px(lo), px(hi)
		cy := y + rowH/2
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="black"/>`, num(x0), num(cy), num(x1), num(cy))
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="black"/>`, num(x0), num(cy-5), num(x0), num(cy+5))
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="black"/>`+"\n", num(x1), num(cy-5), num(x1), num(cy+5))
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11">%.1f%%</text>`+"\n", num(x1+6), num(cy+4), 100*r.Fraction)
	}
	fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle" font-size="11">%s</text>`+"\n", num(ml+pw/2), h-6, legend)
	b.WriteString("</svg>\n")
	return b.String()
}

// treeSVG draws a confidence-splitting tree: boxes are nodes (size and
// impurity), edges carry the split rule, the leaf of the best configuration
// is highlighted.
func treeSVG(res *regional.Result) string {
	const boxW, boxH, gapX, gapY = 170, 44, 16, 46
	type placed struct {
		n    *regional.Node
		x, y float64
	}
	var nodes []placed
	leaves := 0
	depth := 0
	var place func(n *regional.Node) float64
	place = func(n *regional.Node) float64 {
		depth = max(depth, n.Depth)
		var x float64
		if n.IsLeaf() {
			x = float64(leaves) * (boxW + gapX)
			leaves++
		} else {
			x = (place(n.Left) + place(n.Right)) / 2
		}
		nodes = append(nodes, placed{n, x, float64(n.Depth) * (boxH + gapY + 14)})
		return x
	}
	place(res.Tree)
	w := leaves*(boxW+gapX) - gapX + 20
	h := (depth+1)*(boxH+gapY+14) - gapY + 6
	pos := map[int]placed{}
	for _, p := range nodes {
		pos[p.n.ID] = p
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", w, h, w, h)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	const ox, oy = 10, 4
	for _, p := range nodes {
		if p.n.IsLeaf() {
			continue
		}
		for side, c := range []*regional.Node{p.n.Left, p.n.Right} {
			q := pos[c.ID]
			x1, y1 := ox+p.x+boxW/2, oy+p.y+boxH
			x2, y2 := ox+q.x+boxW/2, oy+q.y
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#777"/>`+"\n", num(x1), num(y1), num(x2), num(y2))
			anchor := "end"
			dx := -4.0
			if side == 1 {
				anchor, dx = "start", 4
			}
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="%s" font-size="11" fill="#333">%s</text>`+"\n",
				num((x1+x2)/2+dx), num((y1+y2)/2+4), anchor, html.EscapeString(p.n.Split.Describe(side == 0)))
		}
	}
	for _, p := range nodes {
		fill, stroke := "#f7f7f7", "#999"
		label := fmt.Sprintf("node %d", p.n.ID)
		if p.n.IsLeaf() {
			fill = "#deebf7"
			label = fmt.Sprintf("leaf %d", p.n.ID)
			if p.n.ID == res.BestLeaf {
				fill, stroke = "#fdd0a2", "#e6550d"
				label += " ★ best"
			}
		}
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%d" height="%d" rx="4" fill="%s" stroke="%s"/>`+"\n", num(ox+p.x), num(oy+p.y), boxW, boxH, fill, stroke)
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" font-weight="bold">%s</text>`+"\n", num(ox+p.x+boxW/2), num(oy+p.y+16), html.EscapeString(label))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">n = %d, R = %s</text>`+"\n", num(ox+p.x+boxW/2), num(oy+p.y+33), p.n.Size, short(p.n.Impurity))
	}
	b.WriteString("</svg>\n")
	return b.String()
}
