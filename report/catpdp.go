package report

import (
	"fmt"
	"html"
	"math"
	"strings"

	"xbo/explain/pdp"
)

// A categorical hyperparameter's levels are not a continuum: its PDP is
// drawn as one point per level with the band's interval as a bar, never as
// a line and a band between levels (which would invent values between
// them), in panels of the size
// explain/pdp draws the numeric ones, so that the report's figures align.
const catW, catH, catL, catR, catT, catB = 420, 300, 62, 14, 34, 48

// categoricalSVG draws the panels side by side, cols to a row.
func categoricalSVG(panels []pdp.Panel, cols int) string {
	cols = max(1, min(cols, len(panels)))
	rows := (len(panels) + cols - 1) / cols
	var b strings.Builder
	svgOpen(&b, cols*catW, rows*catH, 11)
	for k, p := range panels {
		categoricalPanel(&b, p, float64((k%cols)*catW), float64((k/cols)*catH))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func categoricalPanel(b *strings.Builder, p pdp.Panel, ox, oy float64) {
	n := len(p.X)
	// The report's shared vertical scale holds every PDP's band, this
	// one's included (objectiveView); padded as explain/pdp pads it.
	span := math.Max(p.YRange[1]-p.YRange[0], 1e-12)
	ylo, yhi := p.YRange[0]-0.05*span, p.YRange[1]+0.05*span
	pw, ph := float64(catW-catL-catR), float64(catH-catT-catB)
	px := func(i int) float64 { return ox + catL + (float64(i)+0.5)/float64(n)*pw }
	py := func(v float64) float64 { return oy + catT + (yhi-v)/(yhi-ylo)*ph }
	base := oy + catT + ph
	fmt.Fprintf(b, `<g><title>%s</title>`+"\n", html.EscapeString(p.Title))
	fmt.Fprintf(b, `<text x="%s" y="%s" font-size="12" font-weight="bold">%s</text>`+"\n", num(ox+8), num(oy+18), html.EscapeString(p.Title))
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999"/>`+"\n", num(ox+catL), num(oy+catT), num(pw), num(ph))
	for k := range 5 {
		v := ylo + (yhi-ylo)*float64(k)/4
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end">%s</text>`+"\n", num(ox+catL-4), num(py(v)+4), Number(v))
	}
	// Trials per level stand for the rug of a numeric parameter.
	count := make([]int, n)
	for _, v := range p.Rug {
		for i, x := range p.X {
			if v == x {
				count[i]++
			}
		}
	}
	for i := range n {
		x := px(i)
		label := Number(p.X[i])
		if i < len(p.Labels) {
			label = p.Labels[i]
		}
		best := p.Best != nil && *p.Best == p.X[i]
		colour := "#08519c"
		if best {
			colour = "#e6550d"
		}
		fmt.Fprintf(b, `<path d="M%s %sV%sM%s %sh10M%s %sh10" stroke="%s" stroke-width="1.5" fill="none"/>`+"\n",
			num(x), num(py(p.Lower[i])), num(py(p.Upper[i])), num(x-5), num(py(p.Lower[i])), num(x-5), num(py(p.Upper[i])), colour)
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="4.5" fill="%s"><title>%s: %s %s</title></circle>`+"\n",
			num(x), num(py(p.Mean[i])), colour, html.EscapeString(label), Number(p.Mean[i]), interval(p.Lower[i], p.Upper[i]))
		suffix := ""
		if best {
			suffix = " (best)"
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s%s</text>`+"\n", num(x), num(base+14), html.EscapeString(label), suffix)
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" fill="#555" font-size="10">%d trials</text>`+"\n", num(x), num(base+26), count[i])
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(ox+catL+pw/2), num(base+42), html.EscapeString(p.XLabel))
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)" font-size="10">%s</text>`+"\n",
		num(ox+12), num(oy+catT+ph/2), num(ox+12), num(oy+catT+ph/2), html.EscapeString(p.YLabel))
	b.WriteString("</g>\n")
}
