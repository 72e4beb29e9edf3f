package report

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"xbo/explain/regional"
)

// The figures below are the report's own (trace, importance bars, tree); the
// PDP panels and the Shapley bars are drawn by their explainer packages.

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// svgOpen starts one of the report's figures: w × h pixels on white, in
// a sans-serif font of the size given.
func svgOpen(b *strings.Builder, w, h, fontSize int) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`+"\n", w, h, w, h, fontSize)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
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
	svgOpen(&b, w, h, 11)
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
				num((x1+x2)/2+dx), num((y1+y2)/2+4), anchor, html.EscapeString(peopleNumbers(p.n.Split.Describe(side == 0))))
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
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">n = %d, R = %s</text>`+"\n", num(ox+p.x+boxW/2), num(oy+p.y+33), p.n.Size, Number(p.n.Impurity))
	}
	b.WriteString("</svg>\n")
	return b.String()
}
