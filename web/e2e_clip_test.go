package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardDivergedAxes: the distribution of values (EDF) and the
// parallel coordinates' value axis treat one diverged trial (3.68 among
// values near 0.3) as the trace does: clipped on the worse side and
// counted in the note, shown again unclipped, and on a log axis on request.
func TestDashboardDivergedAxes(t *testing.T) {
	h := startServer(t)
	runDiverged(t, h)
	h.openBrowser()
	h.run("open diverged", 20*time.Second, chromedp.Navigate(h.base+"/#study=diverged"))
	h.wait("diverged rendered", `document.body.dataset.ready === 'diverged'`, 15*time.Second)

	type axis struct {
		Clipped int       `json:"clipped"`
		Type    string    `json:"type"`
		Max     float64   `json:"max"`
		Note    string    `json:"note"`
		Edge    []float64 `json:"edge"` // the drawn positions of the diverged trial's value
	}
	parallel := func() axis {
		var a axis
		h.eval(`(() => { const o = xbo.charts['parallel-chart'].getOption(); const ax = o.parallelAxis[o.parallelAxis.length - 1];
			const d = o.series[0].data; const last = d[0];
			return {clipped: xbo.parallel.clipped[0], type: ax.type, max: ax.max, note: document.getElementById('parallel-note').textContent,
				edge: [last[last.length - 2]]}; })()`, &a)
		return a
	}
	// The worst trial is drawn first: its value is at the axis's top end.
	a := parallel()
	if a.Clipped != 1 || a.Type != "value" || !(a.Max < 1) || len(a.Edge) != 1 || a.Edge[0] != a.Max ||
		!strings.Contains(a.Note, "1 value above") || !strings.Contains(a.Note, "drawn at the axis's top end") {
		t.Fatalf("parallel coordinates with a diverged trial: %+v; want 1 clipped, drawn at the top end of a linear axis below 1, and the count in the note", a)
	}
	h.shoot("diverged-parallel")
	// Unclipped the diverged value is on the axis; then a log axis; then
	// both back as a user found them, for the audit.
	toggles := func(panel string, read func() axis, unclipped func(axis) bool) {
		t.Helper()
		h.click(panel + "-clip")
		if a := read(); a.Clipped != 0 || !(a.Max >= 3.68) || strings.Contains(a.Note, "clipped") || !unclipped(a) {
			t.Fatalf("%s unclipped: %+v; want the diverged value (3.68) on the axis", panel, a)
		}
		h.click(panel + "-log")
		if a := read(); a.Type != "log" {
			t.Fatalf("%s after the log toggle: %+v, want a log axis", panel, a)
		}
		h.click(panel + "-log")
		h.click(panel + "-clip")
	}
	toggles("parallel", parallel, func(a axis) bool { return a.Edge[0] == 3.68 })
	h.audit("overview, diverged trial clipped")

	h.show("history")
	edf := func() axis {
		var a axis
		h.eval(`(() => { const o = xbo.charts['edf-chart'].getOption(); const ax = o.xAxis[0];
			const s = o.series.find((s) => s.name === 'clipped (beyond the axis)');
			return {clipped: xbo.edf.clipped, type: ax.type, max: ax.max, note: document.getElementById('edf-note').textContent,
				edge: s ? s.data.map((d) => d.value[0]) : []}; })()`, &a)
		return a
	}
	e := edf()
	if e.Clipped != 1 || e.Type != "value" || !(e.Max < 1) || len(e.Edge) != 1 || e.Edge[0] != e.Max || !strings.Contains(e.Note, "1 value above") || !strings.Contains(e.Note, "▶ at the right edge") {
		t.Fatalf("EDF with a diverged trial: %+v; want 1 clipped, a triangle at the right edge of a linear axis below 1, the count in the note", e)
	}
	var curve [][2]float64
	h.eval(`xbo.charts['edf-chart'].getOption().series[0].data`, &curve)
	if len(curve) != 12 || curve[11] != [2]float64{3.68, 1} {
		t.Fatalf("the EDF's curve keeps every value (its fractions stay true): %v", curve)
	}
	h.shoot("diverged-edf")
	toggles("edf", edf, func(a axis) bool { return len(a.Edge) == 0 })
	h.audit("history, diverged trial clipped")
	h.pageErrors()
}
