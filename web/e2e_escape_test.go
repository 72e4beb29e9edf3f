package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"xbo/client"
)

// hostile is a name that runs script wherever a view puts it into HTML
// unescaped: it closes a double-quoted attribute and the element, then adds
// an image whose error handler records which name ran. Every name the
// study's author or a worker chooses is one of these in TestDashboardEscapes.
func hostile(kind string) string {
	return `"><img src=x onerror=xssHit('` + kind + `')>` + kind
}

// escapeProbe shows every tooltip of every visible chart (each series at its
// first, middle and last point), and returns the elements that carry an
// onerror attribute (there are none unless a name became markup) and the
// text each chart showed, so the test can check the hostile names were
// rendered at all, as text.
const escapeProbe = `(() => {
	const texts = {};
	for (const [id, c] of Object.entries(xbo.charts)) {
		const el = c.getDom();
		if (!el.offsetParent) continue;
		const series = c.getOption().series || [];
		texts[id] = '';
		series.forEach((s, i) => {
			const n = (s.data || []).length;
			for (const j of new Set([0, n >> 1, n - 1])) {
				if (j < 0) continue;
				c.dispatchAction({ type: 'showTip', seriesIndex: i, dataIndex: j });
				texts[id] += ' | ' + el.textContent;
			}
		});
		c.dispatchAction({ type: 'hideTip' });
	}
	return { markup: [...document.querySelectorAll('[onerror]')].map((e) => e.outerHTML), hits: window.xssHits || [], texts,
		page: document.body.innerText };
})()`

type probe struct {
	Markup []string          `json:"markup"`
	Hits   []string          `json:"hits"`
	Texts  map[string]string `json:"texts"`
	Page   string            `json:"page"`
}

// escapes probes the open view: no hostile name became an element (the
// probe and the page's error listener both see it), and each of want was
// shown as text in the chart or element named by its key.
func (h *harness) escapes(view string, want map[string]string) probe {
	h.t.Helper()
	var p probe
	h.eval(escapeProbe, &p)
	if len(p.Markup) > 0 || len(p.Hits) > 0 {
		h.t.Fatalf("%s: hostile names became markup: %q (ran: %q)", view, p.Markup, p.Hits)
	}
	for where, name := range want {
		text := p.Texts[where]
		if where == "page" {
			text = p.Page
		}
		if !strings.Contains(text, name) {
			h.t.Fatalf("%s: %s does not show %q as text: %q", view, where, name, text)
		}
	}
	h.pageErrors()
	return p
}

// TestDashboardEscapes renders a study whose every author- or worker-chosen
// string is hostile markup (study, parameter and objective names,
// categorical levels, constraint names, user attributes, workers, a failure
// reason, the study's and a trial's notes) in every view, and shows every chart's tooltips: none may run.
func TestDashboardEscapes(t *testing.T) {
	h := startServer(t)
	ctx := context.Background()
	pf, pl, pc := hostile("float"), hostile("log"), hostile("cat")
	levels := []string{hostile("level-a"), hostile("level-b")}
	studyName := hostile("study")
	sp, err := json.Marshal(map[string]any{"objective": "minimize", "params": []map[string]any{
		{"name": pf, "type": "float", "low": 0, "high": 1},
		{"name": pl, "type": "float", "low": 0.01, "high": 10, "log": true},
		{"name": pc, "type": "categorical", "choices": levels},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: studyName, Space: json.RawMessage(sp), Optimizer: map[string]any{"seed": 2, "initial_size": 6, "candidates": 200}}); err != nil {
		t.Fatal(err)
	}
	path := "/api/studies/" + url.PathEscape(studyName) + "/trials/"
	c := client.New(h.base, client.WithWorker(hostile("worker")))
	failed := int64(-1)
	for i := range 14 {
		tr, err := c.Ask(ctx, studyName)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := tr.Float(pf)
		l, _ := tr.Float(pl)
		v := (x-0.3)*(x-0.3) + 0.1*l
		if tr.Params[pc] == levels[1] {
			v += 0.2
		}
		for step := int64(1); step <= 2; step++ {
			if _, err := c.Report(ctx, studyName, tr.Number, step, v+1/float64(step)); err != nil {
				t.Fatal(err)
			}
		}
		if i == 13 {
			if err := c.Fail(ctx, studyName, tr.Number, hostile("reason")); err != nil {
				t.Fatal(err)
			}
			failed = tr.Number
			continue
		}
		h.post(fmt.Sprintf("%s%d/tell", path, tr.Number), map[string]any{"value": v, "user_attrs": map[string]any{hostile("attr-key"): hostile("attr-value")}})
	}
	// Notes are written by people: the study's and the failed trial's.
	if _, err := h.c.SetStudyNote(ctx, studyName, hostile("study-note")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.SetTrialNote(ctx, studyName, failed, hostile("trial-note")); err != nil {
		t.Fatal(err)
	}
	// A second study with hostile objective and constraint names, for the
	// Pareto and trade-off views and the comparison.
	moName := hostile("mo")
	objA, objB, con := hostile("objective-a"), hostile("objective-b"), hostile("constraint")
	mo, err := json.Marshal(map[string]any{
		"objectives":  []map[string]any{{"name": objA, "direction": "minimize"}, {"name": objB, "direction": "maximize"}},
		"constraints": []string{con},
		"params":      []map[string]any{{"name": pf, "type": "float", "low": 0, "high": 1}, {"name": pc, "type": "categorical", "choices": levels}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: moName, Space: json.RawMessage(mo), Optimizer: map[string]any{"seed": 3, "initial_size": 6, "candidates": 200}}); err != nil {
		t.Fatal(err)
	}
	for i := range 14 {
		tr, err := c.Ask(ctx, moName)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := tr.Float(pf)
		if err := c.TellOutcome(ctx, moName, tr.Number, client.Outcome{Values: []float64{x, x * x}, Constraints: []float64{float64(i%4) - 2.5}}); err != nil {
			t.Fatal(err)
		}
	}

	h.openBrowser()
	// Defined before the page's scripts run: an onerror that fires records
	// its name instead of throwing (a throw would be caught too, as a page error).
	h.run("open study", 20*time.Second, chromedp.Navigate(h.base+"/#study="+url.QueryEscape(studyName)))
	h.eval(`window.xssHit = (k) => (window.xssHits = window.xssHits || []).push(k), true`, new(bool))
	h.wait("study rendered", `document.body.dataset.ready === `+jsString(studyName), 20*time.Second)
	h.escapes("overview", map[string]string{"page": studyName})
	if got := h.text("study-note-text"); got != hostile("study-note") {
		t.Fatalf("the study note is shown as %q, want the text %q", got, hostile("study-note"))
	}
	// The note's editor gets the note as its value, not as markup.
	h.click("study-note-edit")
	var edited string
	h.eval(`document.getElementById('study-note-input').value`, &edited)
	if edited != hostile("study-note") {
		t.Fatalf("the note editor holds %q, want %q", edited, hostile("study-note"))
	}
	h.escapes("study note editor", nil)
	h.click("study-note-cancel")
	var options string
	h.eval(`[...document.querySelectorAll('select option')].map((o) => o.textContent).join(' | ')`, &options)
	for _, name := range []string{pf, pc} {
		if !strings.Contains(options, name) {
			t.Fatalf("the selectors do not offer %q as text: %q", name, options)
		}
	}

	h.show("explain")
	h.wait("PDP drawn", `document.querySelectorAll('#pdp-data td[data-v=mean]').length > 0`, 60*time.Second)
	h.wait("importance drawn", `document.querySelectorAll('#importance-data td[data-v=fraction]').length > 0`, 60*time.Second)
	h.wait("Shapley drawn", `document.querySelectorAll('#proposal-data td[data-v=phi]').length > 0`, 60*time.Second)
	h.escapes("explanations", map[string]string{"page": pf})
	// The 2-D PDP of the float and the categorical parameter: its heat-map
	// tooltip names both and the level.
	setControl(h, "pdp-param", pf, "change")
	setControl(h, "pdp-param2", pc, "change")
	h.wait("2-D PDP drawn", `xbo.pdp && xbo.pdp.param2 === `+jsString(pc), 60*time.Second)
	h.escapes("2-D PDP", map[string]string{"pdp-chart": pf + "=", "page": pc})
	p := h.escapes("2-D PDP levels", map[string]string{"pdp-chart": pc + "="})
	if !strings.Contains(p.Texts["pdp-chart"], levels[0]) {
		t.Fatalf("the 2-D PDP tooltip does not name the level %q: %q", levels[0], p.Texts["pdp-chart"])
	}
	setControl(h, "pdp-param2", "", "change")
	h.run("regional", 5*time.Second, chromedp.Click(chromedp.CSS(`input[name="pdp-mode"][value="regional"]`)))
	h.wait("tree drawn", `document.querySelectorAll('#tree button[data-leaf]').length > 0`, 60*time.Second)
	h.escapes("regional PDP", nil)
	h.run("click paths", 5*time.Second, chromedp.Click(chromedp.CSS(`#paths-go`)))
	h.wait("paths drawn", `document.querySelectorAll('#paths-data tbody tr').length > 0`, 60*time.Second)
	h.escapes("paths", nil)

	h.run("open a failed trial", 20*time.Second, chromedp.Navigate(h.base+"/#study="+url.QueryEscape(studyName)+fmt.Sprintf("&trial=%d", failed)))
	h.wait("trial shown", `document.getElementById('trial-facts').textContent.includes('fail reason')`, 20*time.Second)
	h.escapes("failed trial", map[string]string{"page": hostile("reason")})
	if got := h.text("trial-note-text"); got != hostile("trial-note") {
		t.Fatalf("the trial note is shown as %q, want the text %q", got, hostile("trial-note"))
	}
	h.run("open a complete trial", 20*time.Second, chromedp.Navigate(h.base+"/#study="+url.QueryEscape(studyName)+fmt.Sprintf("&trial=%d", failed-1)))
	h.wait("attributes shown", `document.getElementById('trial-attrs').textContent.includes('attr-value')`, 20*time.Second)
	h.escapes("trial", map[string]string{"page": hostile("attr-value")})

	h.show("history")
	h.wait("timeline drawn", `xbo.timeline && xbo.timeline.bars > 0`, 20*time.Second)
	// The timeline's own tip: the pointer over the middle of the first bar.
	var tip string
	h.eval(`(() => {
		const c = xbo.charts['timeline-chart'];
		const d = c.getOption().series.find((s) => s.data.length).data[0];
		const [x, y] = c.convertToPixel({ xAxisIndex: 0, yAxisIndex: 0 }, [(d.coords[0][0] + d.coords[1][0]) / 2, d.coords[0][1]]);
		c.getZr().trigger('mousemove', { offsetX: x, offsetY: y });
		return document.getElementById('timeline-tip').textContent;
	})()`, &tip)
	if !strings.Contains(tip, hostile("worker")) {
		t.Fatalf("the timeline tip does not name the worker as text: %q", tip)
	}
	h.escapes("history", nil)

	h.run("open the multi-objective study", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study="+url.QueryEscape(moName)))
	h.eval(`window.xssHit = (k) => (window.xssHits = window.xssHits || []).push(k), true`, new(bool))
	h.wait("mo rendered", `document.body.dataset.ready === `+jsString(moName), 20*time.Second)
	h.escapes("Pareto front", map[string]string{"pareto-chart": objA, "page": con})
	h.show("explain")
	h.wait("trade-offs drawn", `xbo.tradeoff && xbo.tradeoff.shapley && xbo.tradeoff.shapley.length > 0 && document.getElementById('tradeoff-data').rows.length > 2`, 60*time.Second)
	h.escapes("trade-offs", map[string]string{"tradeoff-chart": objB, "page": pf})
	h.show("compare")
	h.run("tick the other study", 5*time.Second, chromedp.Click(chromedp.CSS(`#compare-studies input[value=`+jsString(studyName)+`]`)))
	h.escapes("compare", map[string]string{"page": studyName})
}

// jsString quotes s for a JavaScript expression or a CSS attribute value
// (both read Go's double-quoted escapes of ASCII text).
func jsString(s string) string { return strconv.Quote(s) }
