package web_test

// Checks that the Explanations view leads with the
// answers, numbers are written for people, and charts read at a glance
// when one trial diverged. They run inside TestDashboardEndToEnd, on its
// browser and server.

import (
	"context"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"xbo/client"
)

// checkLeadsWithAnswers: on the demo study (Explanations shown, PDP and
// importance drawn) the first panel is the importance, ranked by total
// effect; the PDP shows its first parameter; budgets come after the
// explanations with their reading first and the table folded; the header
// carries no debug timing.
func checkLeadsWithAnswers(t *testing.T, h *harness) {
	var order []string
	h.eval(`[...document.querySelectorAll('#view-explain > section.panel')].filter(s => !s.hidden).map(s => s.id)`, &order)
	if len(order) < 3 || order[0] != "importance-panel" || order[1] != "pdp-panel" {
		t.Fatalf("Explanations view panels in order %v: want importance, then the PDP", order)
	}
	budgets := -1
	for i, id := range order {
		if id == "budget-panel" {
			budgets = i
		}
	}
	if budgets < 2 {
		t.Fatalf("Explanations view panels in order %v: want the budgets after the explanations", order)
	}
	var lead struct {
		Reading, Summary string
		Open             bool
		Totals           []float64
		First, PDP       string
	}
	h.eval(`(() => ({
		reading: document.getElementById('budgets-reading').textContent,
		summary: document.getElementById('budgets-table-summary').textContent,
		open: document.getElementById('budgets-details').open,
		totals: [...document.querySelectorAll('#importance-data tr[data-param] td[data-v=total]')].map(td => Number(td.dataset.x)),
		first: document.querySelector('#importance-data tr[data-param]').dataset.param,
		pdp: document.getElementById('pdp-param').value,
	}))()`, &lead)
	if lead.Reading == "" || lead.Open || !strings.Contains(lead.Summary, "pairs of budgets") {
		t.Fatalf("budgets: reading %q, table open %v, summary %q: want the reading shown and the table folded", lead.Reading, lead.Open, lead.Summary)
	}
	if len(lead.Totals) != 3 {
		t.Fatalf("importance: %d total effects, want one per parameter", len(lead.Totals))
	}
	for i := 1; i < len(lead.Totals); i++ {
		if lead.Totals[i] > lead.Totals[i-1] {
			t.Fatalf("importance rows not ranked by total effect: %v", lead.Totals)
		}
	}
	if lead.PDP != lead.First {
		t.Fatalf("the PDP shows %s, the most important parameter is %s", lead.PDP, lead.First)
	}
	// Every bar's value is written above its whisker: a bar of height 0
	// still says 0.0%.
	var labels []string
	h.eval(`xbo.charts['importance-chart'].getOption().series.find(s => s.type === 'custom').data.map(d => d[4])`, &labels)
	if len(labels) != 6 || !regexp.MustCompile(`^\d+\.\d%$|^\d+%$`).MatchString(labels[0]) {
		t.Fatalf("importance bar labels %v: want a percentage for each of 3 totals and 3 main effects", labels)
	}
	var status string
	h.eval(`document.getElementById('status').textContent`, &status)
	if strings.Contains(status, "render") || strings.Contains(status, " ms") {
		t.Fatalf("header %q shows a debug timing", status)
	}
	var ms string
	h.eval(`document.body.dataset.firstRenderMs`, &ms)
	if ms == "" {
		t.Fatal("the first render's time is not kept in data-first-render-ms")
	}
}

// decimal is a number with a fractional part in a page's text; whole
// numbers (counts, trial numbers, steps) are written in full by design.
var decimal = regexp.MustCompile(`\d+\.\d+(?:e[-+]?\d+)?`)

// checkSignificant fails when the visible text of the element with the id
// holds a number written with more than three significant digits.
func checkSignificant(t *testing.T, h *harness, id string) {
	t.Helper()
	// A panel fills in after its data arrive: under a loaded machine the
	// check once read a panel before its numbers were drawn. Wait for a
	// number first; a panel that never shows one still fails, here.
	h.wait(id+" shows a decimal number", `(() => { const e = document.getElementById('`+id+`'); return !!e && /\d+\.\d+/.test(e.innerText); })()`, 20*time.Second)
	checkDigits(t, h, id)
}

// checkSignificantWhen is checkSignificant for a panel whose decimal
// numbers depend on the data: once ready (a JavaScript expression) is
// true, numbers are required only when want (another expression) is, and
// every number shown is checked.
func checkSignificantWhen(t *testing.T, h *harness, id, ready, want string) {
	t.Helper()
	h.wait(id+" drawn", ready, 20*time.Second)
	var required bool
	h.eval(want, &required)
	if required {
		checkSignificant(t, h, id)
		return
	}
	checkDigitsOf(t, h, id)
}

// checkDigits fails when a decimal number in the element has more than
// three significant digits, or when it shows none.
func checkDigits(t *testing.T, h *harness, id string) {
	t.Helper()
	if n := checkDigitsOf(t, h, id); n == 0 {
		t.Fatalf("%s shows no decimal number to check", id)
	} else {
		t.Logf("%s: %d decimal numbers, none beyond three significant digits", id, n)
	}
}

// checkDigitsOf fails when a decimal number in the element has more than
// three significant digits, and returns how many it shows.
func checkDigitsOf(t *testing.T, h *harness, id string) int {
	t.Helper()
	var text string
	h.eval(`document.getElementById('`+id+`').innerText`, &text)
	n := 0
	for _, m := range decimal.FindAllString(text, -1) {
		mant, _, _ := strings.Cut(m, "e")
		digits := strings.TrimLeft(strings.Replace(mant, ".", "", 1), "0")
		n++
		if len(digits) > 3 {
			i := strings.Index(text, m)
			t.Fatalf("%s shows %q with %d significant digits (in %q)", id, m, len(digits), text[max(0, i-60):min(len(text), i+40)])
		}
	}
	return n
}

// runDiverged creates a study of 12 trials whose values lie near 0.3 but
// for one that diverged at 3.68, each reporting three intermediate values.
func runDiverged(t *testing.T, h *harness) {
	ctx := context.Background()
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "diverged", Space: json.RawMessage(`{"objective":"minimize","params":[{"name":"lr","type":"float","low":0.001,"high":1,"log":true}]}`),
		Optimizer: map[string]any{"strategy": "random", "seed": 4}}); err != nil {
		t.Fatal(err)
	}
	k := 0
	if err := h.c.Optimize(ctx, "diverged", 12, func(ctx context.Context, tr *client.Trial) (float64, error) {
		k++
		v := 0.28 + 0.004*float64(k)
		if k == 7 {
			v = 3.68
		}
		for step := int64(1); step <= 3; step++ {
			if _, err := h.c.Report(ctx, "diverged", tr.Number, step, v+0.1/float64(step)); err != nil {
				return 0, err
			}
		}
		return v, nil
	}); err != nil {
		t.Fatal(err)
	}
}

type scaleState struct {
	Clipped int     `json:"clipped"`
	Axis    string  `json:"axis"`
	Max     float64 `json:"max"`
	Note    string  `json:"note"`
}

// checkDiverged: the trace and the intermediate values clip the diverged
// trial (and say so), show it again unclipped, and switch to a log axis.
func checkDiverged(t *testing.T, h *harness) {
	runDiverged(t, h)
	h.run("open diverged", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=diverged"))
	h.wait("diverged rendered", `document.body.dataset.ready === 'diverged'`, 15*time.Second)
	read := func(chartID, key string) scaleState {
		var s scaleState
		h.eval(`(() => ({clipped: xbo.`+key+`.clipped, axis: xbo.charts['`+chartID+`'].getOption().yAxis[0].type,
			max: xbo.charts['`+chartID+`'].getOption().yAxis[0].max, note: document.getElementById('`+strings.TrimSuffix(chartID, "-chart")+`-note').textContent}))()`, &s)
		return s
	}
	checkPanel := func(panel, key, what string, want int) {
		t.Helper()
		s := read(panel+"-chart", key)
		if s.Clipped != want || s.Axis != "value" || !(s.Max < 1) || !strings.Contains(s.Note, what+" above") || !strings.Contains(s.Note, "clipped") {
			t.Fatalf("%s with a diverged trial: %+v; want %d clipped, a linear axis below 1 and the count in the note", panel, s, want)
		}
		h.shoot("diverged-" + panel)
		h.run(panel+": no clipping", 5*time.Second, chromedp.Click(chromedp.CSS(`#`+panel+`-clip`)))
		if s := read(panel+"-chart", key); s.Clipped != 0 || !(s.Max >= 3.68) || strings.Contains(s.Note, "clipped") {
			t.Fatalf("%s unclipped: %+v; want the diverged trial on the axis", panel, s)
		}
		h.run(panel+": log scale", 5*time.Second, chromedp.Click(chromedp.CSS(`#`+panel+`-log`)))
		if s := read(panel+"-chart", key); s.Axis != "log" {
			t.Fatalf("%s after the log toggle: axis %q, want log", panel, s.Axis)
		}
		h.shoot("diverged-" + panel + "-log")
		// Back as a user found it, for the audit.
		h.run(panel+": back", 5*time.Second, chromedp.Click(chromedp.CSS(`#`+panel+`-log`)), chromedp.Click(chromedp.CSS(`#`+panel+`-clip`)))
	}
	checkPanel("trace", "trace", "1 point", 1)
	h.audit("overview of a study with a diverged trial")
	h.show("history")
	// The diverged trial's three values are above the fence.
	checkPanel("curves", "curves", "3 values", 3)
	h.audit("history of a study with a diverged trial")
	// The report's rule, no negative axis for values that are all
	// positive, holds for the trace's linear axis too.
	h.show("overview")
	var lo float64
	h.eval(`xbo.charts['trace-chart'].getOption().yAxis[0].min`, &lo)
	if lo < 0 || math.IsNaN(lo) {
		t.Fatalf("trace of positive values: axis from %v", lo)
	}
}

// lightness is a #rrggbb colour's mean channel, 0 (black) to 255 (white).
func lightness(hex string) float64 {
	v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil || len(hex) != 7 {
		return math.NaN()
	}
	return float64(v>>16+v>>8&0xff+v&0xff) / 3
}

// checkProposingModel: the trial view explains a trial a
// model chose with that model, the surrogate the desirability paths rebuild
// for its iteration (its φ equal the API's paths step), and says so; a
// trial of the initial design is explained with today's surrogate, and the
// note says that this is how the model sees it now.
func checkProposingModel(t *testing.T, h *harness, d demo) {
	var chosen, design *client.Trial
	for i, tr := range d.trials {
		switch {
		case tr.Acquisition == "initial-design" && design == nil:
			design = &d.trials[i]
		case tr.Acquisition == "ei" && tr.State == "complete":
			chosen = &d.trials[i] // the last: the paths' default window holds it
		}
	}
	if chosen == nil || design == nil {
		t.Fatalf("demo has no complete EI trial (%v) or no design trial (%v)", chosen, design)
	}
	var paths pathsAnswer
	if err := h.c.Explain(context.Background(), "demo", "paths", nil, &paths); err != nil {
		t.Fatal(err)
	}
	var want []float64
	observed := -1
	for _, st := range paths.Steps {
		if st.Trial == chosen.Number {
			observed = st.Observed
			for _, o := range st.Explanation.Outputs {
				want = append(want, o.Phi...)
			}
		}
	}
	if observed < 0 {
		t.Fatalf("the API's paths have no step for EI trial %d", chosen.Number)
	}
	n := strconv.FormatInt(chosen.Number, 10)
	h.run("open trial "+n, 10*time.Second, chromedp.Navigate(h.base+"/#study=demo&trial="+n))
	openedTrial(t, h, chosen.Number)
	h.wait("trial "+n+" explained by its proposing model", `xbo.trialShapley && xbo.trialShapley.trial === `+n+` && xbo.trialShapley.proposer && document.querySelectorAll('#trial-shapley-data td[data-v=phi]').length > 0`, 60*time.Second)
	var page struct {
		Phi  []string `json:"phi"`
		Note string   `json:"note"`
		Axis string   `json:"axis"`
	}
	h.eval(`({phi: [...document.querySelectorAll('#trial-shapley-data td[data-v=phi]')].map(td => td.dataset.x), note: document.getElementById('trial-shapley-note').textContent,
		axis: xbo.charts['trial-shapley-chart'].getOption().yAxis[0].name})`, &page)
	sameFloats(t, "trial "+n+": φ of its proposing model", numbers(t, "proposal", page.Phi), want)
	if !strings.Contains(page.Note, "explained with the model that proposed it: the surrogate fitted on the "+strconv.Itoa(observed)+" trials complete when trial "+n+" was asked") {
		t.Fatalf("trial %s's note %q does not say which model explains it", n, page.Note)
	}
	h.shoot("trial-proposing-model")
	n = strconv.FormatInt(design.Number, 10)
	h.run("open trial "+n, 10*time.Second, chromedp.Navigate(h.base+"/#study=demo&trial="+n))
	openedTrial(t, h, design.Number)
	h.wait("design trial "+n+" explained", `xbo.trialShapley && xbo.trialShapley.trial === `+n+` && !xbo.trialShapley.proposer && document.getElementById('trial-shapley-note').textContent.startsWith('trial `+n+` (')`, 60*time.Second)
	h.eval(`document.getElementById('trial-shapley-note').textContent`, &page.Note)
	if !strings.Contains(page.Note, "(no model chose it: initial-design), explained with today's surrogate") || !strings.Contains(page.Note, "not why it was proposed") {
		t.Fatalf("design trial %s's note %q does not say what it shows instead", n, page.Note)
	}
	checkShapley(t, h, "demo", design.Number, "xbo.trialShapley", "trial-shapley-data")
	h.audit("trial view, proposing model")
}
