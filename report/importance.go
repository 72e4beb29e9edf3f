package report

import (
	"fmt"
	"html"
	"math"
	"strings"

	"xbo/explain"
	"xbo/explain/fanova"
)

// rankedEffect is one hyperparameter's importance as the report draws it:
// its main effect (alone) and, when the method gives it (gp-sobol), its
// total effect (with every interaction it takes part in).
type rankedEffect struct {
	Param string
	Main  fanova.Effect
	Total *fanova.Effect
}

// rankImportance is the report's rows in the engine's order by total
// effect (explain.ImportanceResult.ByTotal), main effect beside it.
func rankImportance(imp *explain.ImportanceResult) []rankedEffect {
	ranked := imp.ByTotal()
	out := make([]rankedEffect, 0, len(ranked))
	for _, r := range ranked {
		e := rankedEffect{Param: r.Param, Main: imp.Main[r.Param]}
		if t, ok := imp.Total[r.Param]; ok {
			e.Total = &t
		}
		out = append(out, e)
	}
	return out
}

// whisker is an effect's interval: the 95% interval when the method gives
// one (gp-sobol), else ±1 std (fANOVA's spread across trees), from 0 up.
func whisker(e fanova.Effect) (lo, hi float64) {
	if len(e.CI95) == 2 {
		return e.CI95[0], e.CI95[1]
	}
	return math.Max(0, e.Fraction-e.Std), e.Fraction + e.Std
}

// importanceSVG draws each hyperparameter's total effect (dark) and main
// effect (light) as bars with whiskers, every bar's value written after
// its whisker, so a whisker over a bar of length 0 is read against "0.0%".
func importanceSVG(rank []rankedEffect) string {
	withTotal := len(rank) > 0 && rank[0].Total != nil
	bars := 1
	if withTotal {
		bars = 2
	}
	const w, barH, gap, ml, mr, mt, mb = 860, 12, 12, 150, 110, 16, 36
	rowH := bars*(barH+3) + gap
	h := mt + mb + rowH*len(rank)
	pw := float64(w - ml - mr)
	top := 0.05
	for _, r := range rank {
		_, hi := whisker(r.Main)
		if r.Total != nil {
			_, t := whisker(*r.Total)
			hi = math.Max(hi, t)
		}
		top = math.Max(top, hi)
	}
	// Gridlines at round percentages: the axis ends at the first multiple
	// of the step above the longest whisker.
	step := 0.01
	for _, s := range []float64{0.02, 0.05, 0.1, 0.2} {
		if top/s > 4 {
			step = s
		}
	}
	top = math.Min(1, math.Ceil(top/step-1e-9)*step)
	px := func(v float64) float64 { return ml + math.Max(0, math.Min(v, top))/top*pw }
	var b strings.Builder
	svgOpen(&b, w, h, 12)
	for k := 0; float64(k)*step <= top+1e-9; k++ {
		v := float64(k) * step
		x := px(v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/>`+"\n", num(x), mt, num(x), h-mb)
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle" font-size="11">%s</text>`+"\n", num(x), h-mb+14, percent(v))
	}
	bar := func(name, what, colour string, e fanova.Effect, y float64) {
		fmt.Fprintf(&b, `<rect x="%d" y="%s" width="%s" height="%d" fill="%s"><title>%s, %s: %s</title></rect>`+"\n",
			ml, num(y), num(px(e.Fraction)-ml), barH, colour, html.EscapeString(name), what, effectText(e))
		lo, hi := whisker(e)
		x0, x1, cy := px(lo), px(hi), y+barH/2
		fmt.Fprintf(&b, `<path d="M%s %sH%sM%s %sv8M%s %sv8" stroke="black" fill="none"/>`, num(x0), num(cy), num(x1), num(x0), num(cy-4), num(x1), num(cy-4))
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11">%s</text>`+"\n", num(math.Max(x1, px(e.Fraction))+6), num(cy+4), percent(e.Fraction))
	}
	for i, r := range rank {
		y := float64(mt + i*rowH)
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", ml-8, num(y+float64(rowH-gap)/2+4), html.EscapeString(r.Param))
		if r.Total != nil {
			bar(r.Param, "total effect", "#08519c", *r.Total, y)
			y += barH + 3
		}
		bar(r.Param, "main effect", "#6baed6", r.Main, y)
	}
	legend := "fraction of variance explained by each hyperparameter alone (main effect); whiskers ±1 std across trees"
	if withTotal {
		legend = "dark: total effect (with its interactions); light: main effect (alone); whiskers: 95% posterior intervals"
	}
	fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle" font-size="11">%s</text>`+"\n", num(ml+pw/2), h-6, legend)
	b.WriteString("</svg>\n")
	return b.String()
}
