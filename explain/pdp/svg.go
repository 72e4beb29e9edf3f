package pdp

import (
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"xbo/internal/numfmt"
)

// Panel is one plot of a figure: a PDP (or slice) line with its shaded
// band, a rug of the evaluated values and a marker at the best
// configuration.
type Panel struct {
	Title string
	// X are the grid values, Mean/Lower/Upper the curve and band.
	X, Mean, Lower, Upper []float64
	// Labels name categorical grid values (drawn as tick labels).
	Labels []string
	// Scale maps a natural value to [0,1] on the parameter's own scale
	// (space.Param.ToUnit), so log parameters are drawn log-spaced. Nil
	// means linear between the grid's ends.
	Scale func(float64) float64
	// Rug lists evaluated values of the parameter; Best marks the best
	// configuration's value (NaN or nil for none).
	Rug  []float64
	Best *float64
	// XLabel and YLabel name the axes.
	XLabel, YLabel string
	// YRange, when set, fixes the vertical axis (low, high) so that panels
	// of several parameters share one scale and their effects compare by
	// eye; nil fits the axis to this panel's band.
	YRange *[2]float64
}

// PanelOf builds a panel from a one-parameter result.
func PanelOf(r *Result, title string) (Panel, error) {
	if r == nil || r.Param2 != "" {
		return Panel{}, errors.New("pdp: svg: a line panel needs a one-parameter result")
	}
	return Panel{Title: title, X: r.Grid, Mean: r.Mean, Lower: r.Lower, Upper: r.Upper, Labels: LabelTexts(r.Labels),
		XLabel: r.Param, YLabel: fmt.Sprintf("partial dependence (%g%% band, %s)", 100*r.Level, r.Band)}, nil
}

const (
	panelW, panelH = 420, 300
	marginL        = 62
	marginR        = 14
	marginT        = 34
	marginB        = 48
)

// WriteSVG draws the panels in a grid of cols columns as one SVG document.
func WriteSVG(w io.Writer, panels []Panel, cols int) error {
	if len(panels) == 0 {
		return errors.New("pdp: svg: no panels")
	}
	if cols < 1 {
		cols = 1
	}
	cols = min(cols, len(panels))
	rows := (len(panels) + cols - 1) / cols
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		cols*panelW, rows*panelH, cols*panelW, rows*panelH)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	for k, p := range panels {
		if err := p.check(); err != nil {
			return fmt.Errorf("pdp: svg: panel %d: %w", k, err)
		}
		ox, oy := float64((k%cols)*panelW), float64((k/cols)*panelH)
		p.draw(&b, ox, oy)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (p *Panel) check() error {
	n := len(p.X)
	if n == 0 || len(p.Mean) != n || len(p.Lower) != n || len(p.Upper) != n {
		return errors.New("grid, mean and band lengths differ or are empty")
	}
	for i := range n {
		for _, v := range []float64{p.X[i], p.Mean[i], p.Lower[i], p.Upper[i]} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errors.New("non-finite value")
			}
		}
	}
	return nil
}

func (p *Panel) draw(b *strings.Builder, ox, oy float64) {
	scale := p.Scale
	if scale == nil {
		lo, hi := p.X[0], p.X[len(p.X)-1]
		if hi == lo {
			hi = lo + 1
		}
		scale = func(v float64) float64 { return (v - lo) / (hi - lo) }
	}
	// The x range spans the grid on the parameter's scale, padded for
	// categorical levels that sit at bin centres.
	u0, u1 := scale(p.X[0]), scale(p.X[len(p.X)-1])
	if p.Labels != nil {
		u0, u1 = 0, 1
	}
	if u1 == u0 {
		u1 = u0 + 1
	}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for i := range p.X {
		ylo, yhi = math.Min(ylo, p.Lower[i]), math.Max(yhi, p.Upper[i])
	}
	if r := p.YRange; r != nil && r[1] > r[0] {
		ylo, yhi = math.Min(ylo, r[0]), math.Max(yhi, r[1])
	}
	if yhi == ylo {
		ylo, yhi = ylo-1, yhi+1
	}
	pad := 0.05 * (yhi - ylo)
	ylo, yhi = ylo-pad, yhi+pad
	pw, ph := float64(panelW-marginL-marginR), float64(panelH-marginT-marginB)
	px := func(v float64) float64 { return ox + marginL + (scale(v)-u0)/(u1-u0)*pw }
	py := func(v float64) float64 { return oy + marginT + (yhi-v)/(yhi-ylo)*ph }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

	fmt.Fprintf(b, `<g><title>%s</title>`+"\n", html.EscapeString(p.Title))
	fmt.Fprintf(b, `<text x="%s" y="%s" font-size="12" font-weight="bold">%s</text>`+"\n", f(ox+8), f(oy+18), html.EscapeString(p.Title))
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999"/>`+"\n", f(ox+marginL), f(oy+marginT), f(pw), f(ph))
	// Band: upper edge left to right, lower edge back.
	var pts []string
	for i := range p.X {
		pts = append(pts, f(px(p.X[i]))+","+f(py(p.Upper[i])))
	}
	for i := len(p.X) - 1; i >= 0; i-- {
		pts = append(pts, f(px(p.X[i]))+","+f(py(p.Lower[i])))
	}
	fmt.Fprintf(b, `<polygon points="%s" fill="#9ecae1" fill-opacity="0.5" stroke="none"/>`+"\n", strings.Join(pts, " "))
	pts = pts[:0]
	for i := range p.X {
		pts = append(pts, f(px(p.X[i]))+","+f(py(p.Mean[i])))
	}
	fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="#08519c" stroke-width="2"/>`+"\n", strings.Join(pts, " "))
	if p.Labels != nil {
		for i := range p.X {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="#08519c"/>`+"\n", f(px(p.X[i])), f(py(p.Mean[i])))
		}
	}
	// Rug of evaluated values along the bottom edge.
	base := oy + marginT + ph
	for _, v := range p.Rug {
		if math.IsNaN(v) {
			continue
		}
		x := px(v)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333" stroke-opacity="0.6"/>`+"\n", f(x), f(base), f(x), f(base-7))
	}
	if p.Best != nil && !math.IsNaN(*p.Best) {
		x := px(*p.Best)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e6550d" stroke-width="2" stroke-dasharray="5,3"><title>best configuration</title></line>`+"\n",
			f(x), f(oy+marginT), f(x), f(base))
	}
	// Axes: ticks at five grid-spread positions, or at every level.
	ticks := tickIndices(len(p.X), p.Labels != nil)
	for _, i := range ticks {
		x := px(p.X[i])
		label := numfmt.Number(p.X[i])
		if p.Labels != nil && i < len(p.Labels) {
			label = p.Labels[i]
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", f(x), f(base+14), html.EscapeString(label))
	}
	for k := range 5 {
		v := ylo + (yhi-ylo)*float64(k)/4
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end">%s</text>`+"\n", f(ox+marginL-4), f(py(v)+4), numfmt.Number(v))
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", f(ox+marginL+pw/2), f(base+32), html.EscapeString(p.XLabel))
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)" font-size="10">%s</text>`+"\n",
		f(ox+12), f(oy+marginT+ph/2), f(ox+12), f(oy+marginT+ph/2), html.EscapeString(p.YLabel))
	b.WriteString("</g>\n")
}

func tickIndices(n int, all bool) []int {
	if all || n <= 5 {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for k := range 5 {
		out = append(out, int(math.Round(float64(k)*float64(n-1)/4)))
	}
	return out
}

// WriteHeatmapSVG draws a two-parameter PDP as a heatmap of the mean, with
// the standard deviation in each cell's tooltip.
func WriteHeatmapSVG(w io.Writer, r *Result, title string) error {
	if r == nil || r.Param2 == "" {
		return errors.New("pdp: svg: a heatmap needs a two-parameter result")
	}
	na, nb := len(r.Grid), len(r.Grid2)
	if na*nb != len(r.Mean) {
		return errors.New("pdp: svg: grid and mean sizes differ")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range r.Mean {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if hi == lo {
		hi = lo + 1
	}
	const size, left, top = 420, 70, 40
	cw, ch := float64(size)/float64(na), float64(size)/float64(nb)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", size+left+20, size+top+50)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="8" y="20" font-size="12" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	for a := range na {
		for c := range nb {
			k := a*nb + c
			t := (r.Mean[k] - lo) / (hi - lo)
			// Dark blue (low) to light yellow (high).
			col := fmt.Sprintf("rgb(%d,%d,%d)", int(8+t*247), int(48+t*189), int(107+t*53))
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s=%g, %s=%g: %.4g ± %.3g</title></rect>`+"\n",
				left+float64(a)*cw, top+float64(nb-1-c)*ch, cw+0.5, ch+0.5, col,
				html.EscapeString(r.Param), r.Grid[a], html.EscapeString(r.Param2), r.Grid2[c], r.Mean[k], r.SD[k])
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s (%g … %g)</text>`+"\n", left+size/2, top+size+20, html.EscapeString(r.Param), r.Grid[0], r.Grid[na-1])
	fmt.Fprintf(&b, `<text x="16" y="%d" text-anchor="middle" transform="rotate(-90 16 %d)">%s (%g … %g)</text>`+"\n", top+size/2, top+size/2, html.EscapeString(r.Param2), r.Grid2[0], r.Grid2[nb-1])
	fmt.Fprintf(&b, `<text x="%d" y="%d">mean from %s (dark) to %s (light)</text>`+"\n", left, top+size+40, numfmt.Number(lo), numfmt.Number(hi))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
