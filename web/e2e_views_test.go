package web_test

// Checks of the Overview's plots of the trials (src/slices.js): slice
// plots and two parameters against each other, coloured by value or rank.
// They run inside TestDashboardEndToEnd, on its browser and server, with
// the Overview shown.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"xbo/client"
	"xbo/explain"
)

// panelShot saves a screenshot of one element (a panel), to be looked at
// at a size where its details can be read.
func (h *harness) panelShot(id, name string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.browser, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#"+id)))
	if err != nil {
		h.fail("screenshot "+id, err)
	}
	if err := os.WriteFile(filepath.Join(h.shots, name+".png"), png, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// demoPoint is where a trial of the demo study sits on a parameter's axis:
// its value, or for opt the index of its level.
func demoPoint(tr client.Trial, name string) float64 {
	if name == "opt" {
		return float64(slices.Index([]any{"sgd", "adam"}, tr.Params["opt"]))
	}
	v, _ := tr.Params[name].(float64)
	return v
}

// checkSlicesAndPairs: every slice plot has one point per complete trial
// at the trial's parameter value and objective value; the pair plot's axes
// are the parameters chosen, its points the complete trials, the best drawn
// last and, coloured by rank, the colours run evenly from 0 (the worst) to
// 1 (the best).
func checkSlicesAndPairs(t *testing.T, h *harness, d demo) {
	complete := map[int64]client.Trial{}
	for _, tr := range d.trials {
		if tr.State == "complete" && tr.Value != nil {
			complete[tr.Number] = tr
		}
	}
	h.wait("plots of the trials drawn", `!!window.xbo.slices`, 15*time.Second)
	var sl struct {
		Params []string
		Series [][][]float64 // per slice: [x, y, trial, value] of each point
	}
	h.eval(`(() => { const o = xbo.charts['slice-chart'].getOption();
		return {params: xbo.slices.params, series: o.series.map((s) => s.data.map((p) => p.value.slice(0, 4)))}; })()`, &sl)
	if !slices.Equal(sl.Params, []string{"lr", "mom", "opt"}) || len(sl.Series) != 3 {
		t.Fatalf("slice plots of %v (%d charts), want one per parameter lr, mom, opt", sl.Params, len(sl.Series))
	}
	for k, name := range sl.Params {
		if len(sl.Series[k]) != len(complete) {
			t.Fatalf("slice plot of %s: %d points, want one per complete trial (%d)", name, len(sl.Series[k]), len(complete))
		}
		for _, p := range sl.Series[k] {
			tr, ok := complete[int64(p[2])]
			if !ok || p[0] != demoPoint(tr, name) || p[3] != *tr.Value {
				t.Fatalf("slice plot of %s: point %v is not a complete trial at its %s and value", name, p, name)
			}
		}
	}
	h.panelShot("slice-panel", "slices")

	type pairs struct {
		X, Y, Colour string
		Trials       []int64
		Colours      []float64
		XAxis, YAxis struct{ Name, Type string }
	}
	read := func() pairs {
		var p pairs
		h.eval(`(() => { const o = xbo.charts['pair-chart'].getOption();
			return {...xbo.pairs, xAxis: {name: o.xAxis[0].name, type: o.xAxis[0].type}, yAxis: {name: o.yAxis[0].name, type: o.yAxis[0].type}}; })()`, &p)
		return p
	}
	p := read()
	if p.X != "lr" || p.Y != "mom" || p.XAxis.Name != "lr (log)" || p.XAxis.Type != "log" || p.YAxis.Name != "mom" || p.Colour != "value" {
		t.Fatalf("pair plot by default: %+v, want lr (log) across and mom up, coloured by value", p)
	}
	if len(p.Trials) != len(complete) || p.Trials[len(p.Trials)-1] != d.best.Number {
		t.Fatalf("pair plot: %d points ending with trial %v, want %d ending with the best (%d)", len(p.Trials), p.Trials[len(p.Trials)-1:], len(complete), d.best.Number)
	}
	// Coloured by value, better is darker: the colour grows as the value falls.
	for i := 1; i < len(p.Colours); i++ {
		if p.Colours[i] < p.Colours[i-1] {
			t.Fatalf("pair plot coloured by value: colours %v do not grow towards the best", p.Colours)
		}
	}
	setControl(h, "pair-x", "opt", "change")
	setControl(h, "pair-y", "lr", "change")
	setControl(h, "pair-colour", "rank", "change")
	p = read()
	if p.X != "opt" || p.Y != "lr" || p.XAxis.Name != "opt" || p.XAxis.Type != "category" || p.YAxis.Name != "lr (log)" || p.YAxis.Type != "log" || p.Colour != "rank" {
		t.Fatalf("pair plot of opt and lr by rank: %+v", p)
	}
	n := len(p.Colours)
	for i, c := range p.Colours {
		if math.Abs(c-float64(i)/float64(n-1)) > 1e-12 {
			t.Fatalf("pair plot by rank: colour %d of %d is %v, want %v", i, n, c, float64(i)/float64(n-1))
		}
	}
	var note string
	h.eval(`document.getElementById('pair-note').textContent`, &note)
	if !strings.Contains(note, "not a model") {
		t.Fatalf("pair plot's note %q does not say it shows the trials, not a model", note)
	}
	h.panelShot("pair-panel", "pairs")
	checkFootprint(t, h, d, complete)
	h.audit("overview, pair plot by rank and footprint")
	setControl(h, "pair-x", "lr", "change")
	setControl(h, "pair-y", "mom", "change")
	setControl(h, "pair-colour", "value", "change")
}

// checkFootprint: the footprint draws every complete trial at the place
// the API gives it (GET …/explain/footprint), the best last, with the
// uniform configurations beside them, and names each axis with the share
// of the spread the API says it carries.
func checkFootprint(t *testing.T, h *harness, d demo, complete map[int64]client.Trial) {
	h.wait("footprint drawn", `!!(window.xbo.footprint && xbo.footprint.trials.length > 0)`, 15*time.Second)
	resp, err := http.Get(h.base + "/api/studies/demo/explain/footprint")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var api explain.FootprintResult
	if err := json.NewDecoder(resp.Body).Decode(&api); err != nil {
		t.Fatal(err)
	}
	var page struct {
		Trials       []int64
		Points       [][2]float64
		Uniform      int
		XName, YName string
	}
	h.eval(`(() => { const o = xbo.charts['footprint-chart'].getOption();
		return {trials: xbo.footprint.trials, points: xbo.footprint.points, uniform: o.series[0].data.length, xName: o.xAxis[0].name, yName: o.yAxis[0].name}; })()`, &page)
	want := map[int64][2]float64{}
	for _, p := range api.Trials {
		want[p.Trial] = [2]float64{p.X, p.Y}
	}
	if len(page.Trials) != len(complete) || len(api.Trials) != len(complete) || page.Uniform != len(api.Uniform) || page.Uniform == 0 {
		t.Fatalf("footprint: %d trials drawn, API %d, complete %d; %d uniform drawn, API %d", len(page.Trials), len(api.Trials), len(complete), page.Uniform, len(api.Uniform))
	}
	for i, n := range page.Trials {
		if _, ok := complete[n]; !ok || page.Points[i] != want[n] {
			t.Fatalf("footprint: trial %d drawn at %v, the API places it at %v", n, page.Points[i], want[n])
		}
	}
	if last := page.Trials[len(page.Trials)-1]; last != d.best.Number {
		t.Fatalf("footprint: trial %d drawn last, want the best (%d)", last, d.best.Number)
	}
	for k, name := range []string{page.XName, page.YName} {
		if w := fmt.Sprintf("component %d (%.1f%%)", k+1, 100*api.Explained[k]); !strings.HasPrefix(name, w) {
			t.Fatalf("footprint axis %d is named %q, want it to start %q", k+1, name, w)
		}
	}
	h.panelShot("footprint-panel", "footprint")
}

// checkLPI: on the trial view of the best trial, the local importance
// button asks the API for the LPI at that trial's configuration, and the
// page's shares per parameter (its table, largest first) are the API's for
// the same point.
func checkLPI(t *testing.T, h *harness, d demo) {
	h.run("open the best trial", 20*time.Second, chromedp.Navigate(h.base+fmt.Sprintf("/#study=demo&trial=%d", d.best.Number)))
	h.wait("trial view", fmt.Sprintf(`document.body.dataset.view === 'trial' && document.getElementById('trial-h').textContent === 'Trial %d'`, d.best.Number), 15*time.Second)
	h.run("compute local importance", 5*time.Second, chromedp.Click(chromedp.CSS(`#trial-lpi-go`)))
	h.wait("LPI drawn", fmt.Sprintf(`!!(window.xbo.lpi && xbo.lpi.trial === %d && document.querySelectorAll('#trial-lpi-data tr[data-param]').length === 3)`, d.best.Number), 60*time.Second)
	point, _ := json.Marshal(d.best.Params)
	resp, err := http.Get(h.base + "/api/studies/demo/explain/lpi?point=" + url.QueryEscape(string(point)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var api struct {
		Params  []string `json:"params"`
		Outputs []struct {
			Output   string    `json:"output"`
			Fraction []float64 `json:"fraction"`
		} `json:"outputs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&api); err != nil || resp.StatusCode != http.StatusOK || len(api.Outputs) == 0 {
		t.Fatalf("GET lpi: %s, %v, %d outputs", resp.Status, err, len(api.Outputs))
	}
	var rows []struct {
		Param string
		X     []float64
	}
	h.eval(`[...document.querySelectorAll('#trial-lpi-data tr[data-param]')].map((r) => ({param: r.dataset.param, x: [...r.querySelectorAll('td')].map((td) => Number(td.dataset.x))}))`, &rows)
	prev := math.Inf(1)
	for _, r := range rows {
		j := slices.Index(api.Params, r.Param)
		if j < 0 || len(r.X) != len(api.Outputs) {
			t.Fatalf("LPI row %s: %d outputs, API %d (params %v)", r.Param, len(r.X), len(api.Outputs), api.Params)
		}
		for k, o := range api.Outputs {
			if r.X[k] != o.Fraction[j] {
				t.Fatalf("LPI of %s for %s: page %v, API %v", r.Param, o.Output, r.X[k], o.Fraction[j])
			}
		}
		if r.X[0] > prev {
			t.Fatalf("LPI rows not ranked, largest first: %+v", rows)
		}
		prev = r.X[0]
	}
	h.panelShot("trial-lpi-panel", "lpi")
	h.audit("trial view with local importance")
}

// checkBigPlots: on the 10,000-trial study the plots of the trials are
// drawn after the first render, each with at most 2,000 evenly spaced
// trials and the best 50, and say how many they draw.
func checkBigPlots(t *testing.T, h *harness) {
	h.wait("big plots drawn", `!!(window.xbo.slices && document.getElementById('slice-note').textContent.startsWith('10000 complete trials'))`, 30*time.Second)
	var big struct {
		Drawn []int
		Note  string
		MS    float64
	}
	h.eval(`({drawn: xbo.slices.trials.map((s) => s.length), note: document.getElementById('slice-note').textContent, ms: xbo.timings['overview:plots']})`, &big)
	for _, n := range big.Drawn {
		if n < 2000 || n > 2050 || !strings.Contains(big.Note, fmt.Sprintf("(%d of them drawn", n)) {
			t.Fatalf("big slice plots: %v points drawn, note %q: want 2,000 to 2,050, said", big.Drawn, big.Note)
		}
	}
	t.Logf("10000 trials: the slice, pair and footprint plots drawn in %.0f ms after the first render", big.MS)
}

// checkAblation: on the trial view of the worst trial, the ablation button
// asks the API for the path from that trial's configuration to the best
// trial's, and the page's steps (parameters in order, predicted mean after
// each) are the API's.
func checkAblation(t *testing.T, h *harness, d demo) {
	h.run("open the worst trial", 20*time.Second, chromedp.Navigate(h.base+fmt.Sprintf("/#study=demo&trial=%d", d.worst.Number)))
	h.wait("trial view", fmt.Sprintf(`document.body.dataset.view === 'trial' && document.getElementById('trial-h').textContent === 'Trial %d'`, d.worst.Number), 15*time.Second)
	h.run("compute the ablation path", 5*time.Second, chromedp.Click(chromedp.CSS(`#trial-ablation-go`)))
	h.wait("ablation drawn", fmt.Sprintf(`!!(window.xbo.ablation && xbo.ablation.trial === %d)`, d.worst.Number), 60*time.Second)
	source, _ := json.Marshal(d.worst.Params)
	resp, err := http.Get(h.base + "/api/studies/demo/explain/ablation?target=best&source=" + url.QueryEscape(string(source)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var api struct {
		Steps []struct {
			Param      string  `json:"param"`
			Prediction float64 `json:"prediction"`
		} `json:"steps"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&api); err != nil || resp.StatusCode != http.StatusOK || len(api.Steps) == 0 {
		t.Fatalf("GET ablation: %s, %v, %d steps (the worst trial differs from the best)", resp.Status, err, len(api.Steps))
	}
	var rows []struct {
		Param string
		X     float64
	}
	h.eval(`[...document.querySelectorAll('#trial-ablation-data tr[data-param]')].map((r) => ({param: r.dataset.param, x: Number(r.querySelectorAll('td[data-x]')[0].dataset.x)}))`, &rows)
	if len(rows) != len(api.Steps) {
		t.Fatalf("ablation: %d steps on the page, API %d", len(rows), len(api.Steps))
	}
	for k, s := range api.Steps {
		if rows[k].Param != s.Param || rows[k].X != s.Prediction {
			t.Fatalf("ablation step %d: page %s → %v, API %s → %v", k+1, rows[k].Param, rows[k].X, s.Param, s.Prediction)
		}
	}
	h.panelShot("trial-ablation-panel", "ablation")
	h.audit("trial view with the ablation path")
}
