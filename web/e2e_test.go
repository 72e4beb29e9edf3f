package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"xbo/client"
	"xbo/explain/fanova"
	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/explain/shapley"
	"xbo/server"
	"xbo/store"
	"xbo/web"
)

// demoSpace has a log, a linear and a categorical parameter so that every
// axis kind of the dashboard is drawn, and a categorical with numeric
// choices, which the dashboard must not take for category indices.
const demoSpace = `{"objective":"minimize","params":[
	{"name":"lr","type":"float","low":0.001,"high":10,"log":true},
	{"name":"mom","type":"float","low":0,"high":1},
	{"name":"opt","type":"categorical","choices":["sgd","adam"]},
	{"name":"batch","type":"categorical","choices":[16,64]}]}`

func demoObjective(t *client.Trial) (float64, error) {
	lr, err := t.Float("lr")
	if err != nil {
		return 0, err
	}
	mom, err := t.Float("mom")
	if err != nil {
		return 0, err
	}
	v := math.Pow(math.Log10(lr)+1, 2) + 2*(mom-0.3)*(mom-0.3)
	if t.Params["opt"] == "adam" {
		v += 0.4
	}
	batch, ok := t.Params["batch"].(float64)
	if !ok {
		return 0, fmt.Errorf("batch %#v is not a number", t.Params["batch"])
	}
	return v + batch/640, nil
}

type harness struct {
	t       *testing.T
	st      store.Store
	base    string
	c       *client.Client
	browser context.Context
	shots   string
}

func startServer(t *testing.T) *harness {
	t.Helper()
	if _, err := web.Assets(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "xbo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	base := "http://" + ln.Addr().String()
	return &harness{t: t, st: st, base: base, c: client.New(base)}
}

func (h *harness) openBrowser() {
	t := h.t
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (apt-get install -y chromium): %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	h.browser = browser
	h.shots = os.Getenv("XBO_ARTIFACTS")
	if h.shots == "" {
		if h.shots, err = os.MkdirTemp("", "xbo-dashboard-e2e-"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(h.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", h.shots)
}

// run runs browser actions with a deadline.
func (h *harness) run(what string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.browser, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		h.fail(what, err)
	}
}

// fail stops the test with what the page's status line and error notes say.
func (h *harness) fail(what string, err error) {
	h.t.Helper()
	status, _ := chromedp.Run(h.browser, chromedp.Evaluate[string](`document.getElementById('status').textContent + ' | ' + [...document.querySelectorAll('.hint.error')].map(e => e.textContent).join(' | ')`))
	h.t.Fatalf("%s: %v (page says: %s)", what, err, status)
}

// wait polls a JavaScript condition until it is truthy.
func (h *harness) wait(what, expr string, timeout time.Duration) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.browser, timeout)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
		// A poll that starts while a navigation replaces the document loses
		// its execution context: poll again in the new one.
		if err != nil && ctx.Err() == nil && (strings.Contains(err.Error(), "Cannot find context with specified id") ||
			strings.Contains(err.Error(), "Execution context was destroyed")) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			h.fail(what, err)
		}
		return
	}
}

// eval evaluates a JavaScript expression and decodes its JSON value into out.
func (h *harness) eval(expr string, out any) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.browser, 10*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		h.fail("evaluate "+expr, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		h.t.Fatalf("evaluate %s: decode %s: %v", expr, raw, err)
	}
}

func (h *harness) screenshot(name string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.browser, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		h.fail("screenshot "+name, err)
	}
	path := filepath.Join(h.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// numbers parses the texts of the cells the page shows.
func numbers(t *testing.T, what string, texts []string) []float64 {
	t.Helper()
	out := make([]float64, len(texts))
	for i, s := range texts {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			t.Fatalf("%s: cell %d %q is not a number", what, i, s)
		}
		out[i] = v
	}
	return out
}

func sameFloats(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: page shows %d values, API gives %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s[%d]: page %v, API %v", what, i, got[i], want[i])
		}
	}
}

// TestDashboardEndToEnd drives the dashboard in headless Chromium against a
// real server on a temporary SQLite file: three workers optimize a study
// over HTTP, and every panel must show the numbers the API gives.
func TestDashboardEndToEnd(t *testing.T) {
	start := time.Now()
	h := startServer(t)
	ctx := context.Background()
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "demo", Space: json.RawMessage(demoSpace),
		Optimizer: map[string]any{"strategy": "ei", "seed": 3, "initial_size": 8, "candidates": 300}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client.New(h.base, client.WithWorker(fmt.Sprintf("worker-%d", w)))
			errs <- c.Optimize(ctx, "demo", 8, func(_ context.Context, tr *client.Trial) (float64, error) { return demoObjective(tr) })
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	all, err := h.c.Trials(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	acqs := map[string]int{}
	for _, tr := range all {
		acqs[tr.Acquisition]++
	}
	t.Logf("%d trials by 3 workers in %v: %v", len(all), time.Since(start), acqs)
	best, err := h.c.Best(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}

	h.openBrowser()
	h.run("open demo", 20*time.Second, chromedp.Navigate(h.base+"/#study=demo"))
	h.wait("demo rendered", `document.body.dataset.ready === 'demo'`, 15*time.Second)

	// Trace and summary: every complete trial, the best value.
	var trace struct {
		N    int     `json:"n"`
		Best float64 `json:"best"`
	}
	h.eval(`window.xbo.trace`, &trace)
	if trace.N != 24 || trace.Best != *best.Value {
		t.Fatalf("trace: %d trials, best %v; want 24, %v", trace.N, trace.Best, *best.Value)
	}
	// Table: 24 rows; sorted by value (ascending) the best comes first.
	var rows int
	h.eval(`document.querySelectorAll('#trials-table tbody tr').length`, &rows)
	if rows != 24 {
		t.Fatalf("table shows %d rows, want 24", rows)
	}
	h.run("sort by value", 5*time.Second, chromedp.Click(chromedp.CSS(`#trials-table th button[data-key="value"]`)))
	var first string
	h.eval(`document.querySelector('#trials-table tbody tr').dataset.number`, &first)
	if first != strconv.FormatInt(best.Number, 10) {
		t.Fatalf("sorted by value, first row is trial %s, best is %d", first, best.Number)
	}
	// Parallel coordinates: one line per complete trial, a log axis for lr.
	var par struct {
		Lines int    `json:"lines"`
		Axis0 string `json:"axis0"`
		Axis2 string `json:"axis2"`
	}
	h.eval(`(() => { const o = xbo.charts['parallel-chart'].getOption(); return {lines: o.series[0].data.length, axis0: o.parallelAxis[0].type, axis2: o.parallelAxis[2].type}; })()`, &par)
	if par.Lines != 24 || par.Axis0 != "log" || par.Axis2 != "category" {
		t.Fatalf("parallel coordinates: %+v", par)
	}
	// The numeric choices' axis names them as text, and every line meets
	// it at one of them (a number would be read as a category index).
	var batch struct {
		Axis  []any `json:"axis"`
		Lines []any `json:"lines"`
		Table []any `json:"table"`
	}
	h.eval(`(() => { const o = xbo.charts['parallel-chart'].getOption(); return {axis: o.parallelAxis[3].data, lines: o.series[0].data.map((r) => r[3]), table: [...document.querySelectorAll('#trials-table tbody tr')].map((r) => r.cells[6].textContent)}; })()`, &batch)
	if fmt.Sprint(batch.Axis) != "[16 64]" || len(batch.Lines) != 24 || len(batch.Table) != 24 {
		t.Fatalf("batch axis %v, %d lines, %d table cells", batch.Axis, len(batch.Lines), len(batch.Table))
	}
	for i, v := range append(append(batch.Axis, batch.Lines...), batch.Table...) {
		if s, ok := v.(string); !ok || (s != "16" && s != "64") {
			t.Fatalf("batch value %d is %#v, want the text \"16\" or \"64\"", i, v)
		}
	}

	// PDP of lr: the page's numbers are the API's, on a log axis.
	h.wait("PDP drawn", `document.querySelectorAll('#pdp-data td[data-v=mean]').length === 20`, 30*time.Second)
	var want pdp.Result
	if err := h.c.Explain(ctx, "demo", "pdp", url.Values{"param": {"lr"}}, &want); err != nil {
		t.Fatal(err)
	}
	var cells []string
	h.eval(`[...document.querySelectorAll('#pdp-data td[data-v=mean]')].map(td => td.dataset.x)`, &cells)
	sameFloats(t, "PDP mean (table)", numbers(t, "PDP", cells), want.Mean)
	h.eval(`[...document.querySelectorAll('#pdp-data td[data-v=upper]')].map(td => td.dataset.x)`, &cells)
	sameFloats(t, "PDP upper (table)", numbers(t, "PDP", cells), want.Upper)
	var drawn []float64
	h.eval(`xbo.charts['pdp-chart'].getOption().series.find(s => s.name === 'PD mean').data.map(d => d[1])`, &drawn)
	sameFloats(t, "PDP mean (chart)", drawn, want.Mean)
	var xAxis string
	h.eval(`xbo.charts['pdp-chart'].getOption().xAxis[0].type + ' ' + xbo.charts['pdp-chart'].getOption().xAxis[0].name`, &xAxis)
	if !strings.HasPrefix(xAxis, "log lr") || !strings.Contains(xAxis, "log scale") {
		t.Fatalf("PDP x axis %q, want a labelled log axis", xAxis)
	}

	// Importance, whole space and good region.
	h.wait("importance drawn", `document.querySelectorAll('#importance-data td[data-v=fraction]').length > 0`, 30*time.Second)
	checkImportance := func(query url.Values) {
		t.Helper()
		var imp fanova.Importance
		if err := h.c.Explain(ctx, "demo", "importance", query, &imp); err != nil {
			t.Fatal(err)
		}
		var shown map[string]float64
		h.eval(`Object.fromEntries([...document.querySelectorAll('#importance-data tbody tr')].map(tr => [tr.cells[0].textContent, Number(tr.cells[1].textContent)]))`, &shown)
		for name, e := range imp.Main {
			if got, ok := shown[name]; !ok || got != e.Fraction {
				t.Fatalf("importance of %s (%v): page %v, API %v", name, query, got, e.Fraction)
			}
		}
	}
	checkImportance(nil)
	h.screenshot("1-demo")
	h.run("good region", 5*time.Second, chromedp.Click(chromedp.CSS(`#good-region`)))
	h.wait("good-region importance", `document.getElementById('importance-note').textContent.startsWith('good region')`, 30*time.Second)
	checkImportance(url.Values{"cap_quantile": {"0.25"}})

	// Regional PDP: click a leaf, its PDP is the API's.
	h.run("regional", 5*time.Second, chromedp.Click(chromedp.CSS(`input[name="pdp-mode"][value="regional"]`)))
	h.wait("tree drawn", `document.querySelectorAll('#tree button[data-leaf]').length > 0`, 30*time.Second)
	var reg regional.Result
	if err := h.c.Explain(ctx, "demo", "regional", url.Values{"param": {"lr"}}, &reg); err != nil {
		t.Fatal(err)
	}
	var leafID string
	h.eval(`document.querySelector('#tree button[data-leaf]').dataset.leaf`, &leafID)
	h.run("click leaf", 5*time.Second, chromedp.Click(chromedp.CSS(`#tree button[data-leaf="`+leafID+`"]`)))
	h.wait("leaf PDP", `document.getElementById('pdp-note').textContent.startsWith('leaf `+leafID+`')`, 5*time.Second)
	var leafWant []float64
	for _, l := range reg.Leaves {
		if strconv.Itoa(l.ID) == leafID {
			leafWant = l.PDP.Mean
		}
	}
	h.eval(`[...document.querySelectorAll('#pdp-data td[data-v=mean]')].map(td => td.dataset.x)`, &cells)
	sameFloats(t, "leaf "+leafID+" PDP mean", numbers(t, "leaf PDP", cells), leafWant)
	t.Logf("regional: %d leaves, clicked leaf %s", len(reg.Leaves), leafID)
	h.screenshot("2-regional-leaf")

	// A trial: its Shapley values are the API's.
	pick := best.Number
	h.run("click trial", 5*time.Second, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#trials-table tbody tr[data-number="%d"]`, pick))))
	h.wait("Shapley drawn", `document.querySelectorAll('#proposal-data td[data-v=phi]').length > 0`, 30*time.Second)
	var sh struct {
		Trial       int64                `json:"trial"`
		Explanation *shapley.Explanation `json:"explanation"`
	}
	if err := h.c.Explain(ctx, "demo", "shapley", url.Values{"trial": {strconv.FormatInt(pick, 10)}}, &sh); err != nil {
		t.Fatal(err)
	}
	var phis [][]float64
	h.eval(`xbo.shapley.explanation.outputs.map(o => o.phi)`, &phis)
	var shown []string
	h.eval(`[...document.querySelectorAll('#proposal-data td[data-v=phi]')].map(td => td.textContent.split(' ')[0])`, &shown)
	var flat, wantFlat []float64
	for k, o := range sh.Explanation.Outputs {
		wantFlat = append(wantFlat, o.Phi...)
		flat = append(flat, phis[k]...)
	}
	sameFloats(t, "Shapley values (fetched)", flat, wantFlat)
	sameFloats(t, "Shapley values (table)", numbers(t, "Shapley", shown), wantFlat)
	h.screenshot("3-proposal")

	// Desirability paths, on demand: one row per model-chosen proposal, the
	// table and the chart equal to the API's φ of cb, then of the mean.
	h.run("click paths", 5*time.Second, chromedp.Click(chromedp.CSS(`#paths-go`)))
	h.wait("paths drawn", `document.querySelectorAll('#paths-data td[data-v=phi]').length > 0`, 60*time.Second)
	var paths struct {
		Params    []string `json:"params"`
		Proposals int      `json:"proposals"`
		Steps     []struct {
			Trial       int64                `json:"trial"`
			Explanation *shapley.Explanation `json:"explanation"`
		} `json:"steps"`
	}
	if err := h.c.Explain(ctx, "demo", "paths", nil, &paths); err != nil {
		t.Fatal(err)
	}
	if len(paths.Steps) == 0 || len(paths.Steps) != paths.Proposals {
		t.Fatalf("paths API: %d steps of %d proposals", len(paths.Steps), paths.Proposals)
	}
	checkPaths := func(output string) {
		t.Helper()
		var trials []int64
		h.eval(`[...document.querySelectorAll('#paths-data tbody tr')].map(tr => Number(tr.dataset.trial))`, &trials)
		var cells []string
		h.eval(`[...document.querySelectorAll('#paths-data td[data-v=phi]')].map(td => td.textContent)`, &cells)
		var series [][][2]float64
		h.eval(`xbo.charts['paths-chart'].getOption().series.map(s => s.data)`, &series)
		if len(trials) != len(paths.Steps) || len(series) != len(paths.Params) {
			t.Fatalf("paths %s: page shows %d trials and %d lines; API %d proposals of %d parameters", output, len(trials), len(series), len(paths.Steps), len(paths.Params))
		}
		var want, drawn []float64
		for i, st := range paths.Steps {
			if trials[i] != st.Trial {
				t.Fatalf("paths %s: row %d is trial %d, API %d", output, i, trials[i], st.Trial)
			}
			a, ok := st.Explanation.Output(output)
			if !ok {
				t.Fatalf("paths: trial %d has no %s output", st.Trial, output)
			}
			want = append(want, a.Phi...)
			for j := range paths.Params {
				if series[j][i][0] != float64(st.Trial) {
					t.Fatalf("paths %s: line %s point %d at x=%v, want trial %d", output, paths.Params[j], i, series[j][i][0], st.Trial)
				}
				drawn = append(drawn, series[j][i][1])
			}
		}
		sameFloats(t, "paths φ("+output+") (table)", numbers(t, "paths", cells), want)
		sameFloats(t, "paths φ("+output+") (chart)", drawn, want)
		t.Logf("paths: φ(%s) of %d proposals (%d parameters) on the page equal the API's; first trial %d: %v", output, len(trials), len(paths.Params), trials[0], want[:len(paths.Params)])
	}
	checkPaths(shapley.OutputCB)
	h.screenshot("3b-paths-cb")
	h.run("paths: mean", 5*time.Second, chromedp.Click(chromedp.CSS(`input[name="paths-output"][value="mean"]`)))
	checkPaths(shapley.OutputMean)

	// ICE on demand, then a heatmap of two parameters, equal to the API's.
	h.run("global", 5*time.Second, chromedp.Click(chromedp.CSS(`input[name="pdp-mode"][value="global"]`)))
	h.wait("global again", `document.getElementById('tree').innerHTML === '' && xbo.pdp && !xbo.pdp.ice`, 30*time.Second)
	h.run("ICE", 5*time.Second, chromedp.Click(chromedp.CSS(`#pdp-ice`)))
	h.wait("ICE drawn", `xbo.pdp.ice && xbo.charts['pdp-chart'].getOption().series.filter(s => s.name.startsWith('ICE')).length === Math.min(60, xbo.pdp.ice.length)`, 30*time.Second)
	h.screenshot("4-ice")
	var heat pdp.Result
	if err := h.c.Explain(ctx, "demo", "pdp", url.Values{"param": {"lr", "mom"}}, &heat); err != nil {
		t.Fatal(err)
	}
	h.eval(`(() => { const s = document.getElementById('pdp-param2'); s.value = 'mom'; s.dispatchEvent(new Event('change')); return true; })()`, new(bool))
	h.wait("heatmap", `xbo.pdp.param2 === 'mom' && xbo.charts['pdp-chart'].getOption().series[0].type === 'heatmap'`, 30*time.Second)
	h.eval(`xbo.charts['pdp-chart'].getOption().series[0].data.map(d => d[2])`, &drawn)
	sameFloats(t, "PDP heatmap (chart)", drawn, heat.Mean)
	h.screenshot("5-heatmap")

	// A categorical parameter's PDP: points with error bars, not a line
	// with a band between levels.
	h.eval(`(() => { const s2 = document.getElementById('pdp-param2'); s2.value = ''; const s = document.getElementById('pdp-param'); s.value = 'opt'; s.dispatchEvent(new Event('change')); return true; })()`, new(bool))
	h.wait("categorical PDP", `xbo.pdp.param === 'opt' && !xbo.pdp.param2 && xbo.charts['pdp-chart'].getOption().series[0].type === 'scatter' && xbo.charts['pdp-chart'].getOption().series[1].type === 'custom'`, 30*time.Second)
	h.screenshot("5a-categorical")
	// Shapley names every parameter with the explained configuration's value.
	var axis []string
	h.eval(`xbo.charts['proposal-chart'].getOption().xAxis[0].data`, &axis)
	if len(axis) != 4 || !strings.HasPrefix(axis[0], "lr=") || (axis[3] != "batch=16" && axis[3] != "batch=64") {
		t.Fatalf("Shapley axis %v", axis)
	}
	// Importance whiskers stay inside the plot.
	var whisk struct {
		Top, Max float64
	}
	h.eval(`(() => { const o = xbo.charts['importance-chart'].getOption(); const tops = o.series[1].data.map(d => d[2]); return {top: Math.max(...tops), max: o.yAxis[0].max}; })()`, &whisk)
	if !(whisk.Top <= whisk.Max) {
		t.Fatalf("an importance whisker (%v) is above the axis (%v)", whisk.Top, whisk.Max)
	}

	// Live: a worker tells one more trial; the page follows without reload.
	if err := h.c.Optimize(ctx, "demo", 1, func(_ context.Context, tr *client.Trial) (float64, error) { return demoObjective(tr) }); err != nil {
		t.Fatal(err)
	}
	h.wait("live update", `window.xbo.trace.n === 25`, 10*time.Second)

	// Freshness: the Shapley panel, which waits for its button, says it is
	// stale; the PDP, cheap to recompute, recomputes by itself and then
	// describes the 25 trials.
	h.wait("Shapley marked stale", `document.getElementById('proposal-fresh').dataset.stale === 'true'`, 5*time.Second)
	var staleText string
	h.eval(`document.getElementById('proposal-fresh').textContent`, &staleText)
	if !strings.HasPrefix(staleText, "Stale (1 newer trial; press Explain): describes 24 usable trials") || !strings.Contains(staleText, "sampling bias: ") {
		t.Fatalf("stale Shapley panel says %q", staleText)
	}
	h.screenshot("5b-stale")
	h.wait("PDP recomputed by itself", `xbo.explained.pdp.trials === 25 && document.getElementById('pdp-fresh').dataset.stale === 'false'`, 40*time.Second)
	var freshText string
	h.eval(`document.getElementById('pdp-fresh').textContent`, &freshText)
	if !strings.HasPrefix(freshText, "describes 25 usable trials") || !strings.Contains(freshText, "GP (matern52) on 25 trials") {
		t.Fatalf("fresh PDP panel says %q", freshText)
	}

	// a-BOBAX: the band half-width the optimizer notes on its proposals.
	addBobaxStudy(t, h)
	h.run("open bobax", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=bobax"))
	h.wait("bobax rendered", `document.body.dataset.ready === 'bobax'`, 15*time.Second)
	var bob struct {
		Points    int     `json:"points"`
		Tolerance float64 `json:"tolerance"`
	}
	h.eval(`window.xbo.bobax`, &bob)
	var note string
	h.eval(`document.getElementById('bobax-note').textContent`, &note)
	if bob.Points != 6 || bob.Tolerance != 0.2 || !strings.Contains(note, "current half-width 0.15 vs tolerance 0.2 (reached)") {
		t.Fatalf("a-BOBAX panel: %+v %q", bob, note)
	}
	h.screenshot("6-bobax")

	// 10 000 trials: first render time (logged, not asserted).
	insertMany(t, h, 10000)
	var timing struct {
		FirstRender     float64 `json:"firstRender"`
		SinceNavigation float64 `json:"sinceNavigation"`
	}
	h.run("open big", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=big"))
	h.wait("big rendered", `document.body.dataset.ready === 'big'`, 20*time.Second)
	h.eval(`window.xbo.timings`, &timing)
	var bigTrace struct {
		N     int `json:"n"`
		Drawn int `json:"drawn"`
	}
	h.eval(`window.xbo.trace`, &bigTrace)
	if bigTrace.N != 10000 || bigTrace.Drawn > 2000 {
		t.Fatalf("big trace: %+v", bigTrace)
	}
	t.Logf("first render of a study with 10000 trials: %.0f ms from opening the study, %.0f ms from navigation start to the painted page", timing.FirstRender, timing.SinceNavigation)
	h.screenshot("7-big")
	t.Logf("e2e took %v", time.Since(start))
}

// addBobaxStudy records six proposals whose meta carries the note package
// opt writes under a-BOBAX (opt.go: "a-bobax: mean PD band half-width %.6g
// (tolerance %.6g), phase %s"); the service's optimizer configuration does
// not offer a-BOBAX, so the proposals go through the store directly.
func addBobaxStudy(t *testing.T, h *harness) {
	ctx := context.Background()
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "bobax", Space: json.RawMessage(demoSpace), Optimizer: map[string]any{"strategy": "random"}}); err != nil {
		t.Fatal(err)
	}
	widths := []float64{0.9, 0.6, 0.41, 0.3, 0.22, 0.15}
	for i, w := range widths {
		phase := "interleave"
		if w <= 0.2 {
			phase = "ei"
		}
		note := fmt.Sprintf("a-bobax: mean PD band half-width %.6g (tolerance %.6g), phase %s", w, 0.2, phase)
		meta, _ := json.Marshal(map[string]string{"note": note})
		tr, err := h.st.Ask(ctx, "bobax", store.AskRequest{Worker: "w", Now: time.Now()}, func(context.Context, store.AskView) (store.Proposal, error) {
			return store.Proposal{Params: map[string]any{"lr": 0.01 * float64(i+1), "mom": 0.5, "opt": "sgd"}, Acquisition: "a-bobax", Meta: meta}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.st.Tell(ctx, "bobax", tr.Number, store.Result{State: store.Complete, Value: float64(i), Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
}

func insertMany(t *testing.T, h *harness, n int) {
	ctx := context.Background()
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "big", Space: json.RawMessage(demoSpace), Optimizer: map[string]any{"strategy": "random"}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range n {
		lr := math.Pow(10, -3+4*float64(i%997)/997)
		mom := float64(i%101) / 100
		opt := []string{"sgd", "adam"}[i%2]
		v := math.Pow(math.Log10(lr)+1, 2) + 2*(mom-0.3)*(mom-0.3) + math.Sin(float64(i))
		if _, err := h.st.AddTrial(ctx, "big", store.NewTrial{Params: map[string]any{"lr": lr, "mom": mom, "opt": opt}, Value: &v, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("inserted %d trials through the store in %v", n, time.Since(start))
}
