package web_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"xbo/client"
	"xbo/explain"
	"xbo/explain/fanova"
	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/explain/shapley"
	"xbo/report"
	"xbo/server"
	"xbo/store"
	"xbo/store/storetest"
	"xbo/web"
)

// demoSpace has a log, a linear and a categorical parameter so that every
// axis kind of the dashboard is drawn.
const demoSpace = `{"objective":"minimize","params":[
	{"name":"lr","type":"float","low":0.001,"high":10,"log":true},
	{"name":"mom","type":"float","low":0,"high":1},
	{"name":"opt","type":"categorical","choices":["sgd","adam"]}]}`

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
	return v, nil
}

type harness struct {
	t       *testing.T
	st      store.Store
	base    string
	c       *client.Client
	browser context.Context
	shots   string
	axeJS   string // axe-core's source, injected into the page to audit it

	mu     sync.Mutex
	errors []string // uncaught exceptions and console errors of the page
}

// The widths the screenshots are taken at; the test runs at the first.
var widths = []int64{1440, 800}

func startServer(t *testing.T) *harness {
	t.Helper()
	return startServerWith(t, server.Config{})
}

// startServerWith is startServer with the server's settings (a token, a
// read-only server); its store is set here.
func startServerWith(t *testing.T, cfg server.Config) *harness {
	t.Helper()
	return startServerOn(t, "sqlite", cfg)
}

// startServerOn is startServerWith on a backend: "sqlite" (a file of its
// own) or "postgres" (a schema of its own, storetest.PostgresDSN; the test
// is skipped when PostgreSQL cannot be reached).
func startServerOn(t *testing.T, backend string, cfg server.Config) *harness {
	t.Helper()
	if _, err := web.Assets(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "xbo.db")
	if backend == "postgres" {
		src = storetest.PostgresDSN(t)
	}
	st, err := store.Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.Store = st
	srv, err := server.New(cfg)
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
	if err := chromedp.Do(browser, chromedp.EmulateViewport(widths[0], 1000)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	h.browser = browser
	// Every uncaught exception or console error of the page fails the test.
	messages := chromedp.Console(browser)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || (m.Type == chromedp.ConsoleError && m.Source == "") { // not the network log: 409s are answers
				h.mu.Lock()
				h.errors = append(h.errors, m.String())
				h.mu.Unlock()
			}
		}
	}()
	// axe-core (a devDependency in package.json, installed by npm ci).
	src, err := os.ReadFile(filepath.Join("node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core is not installed (npm ci --prefix web): %v", err)
	}
	h.axeJS = string(src)
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

// evalAsync is eval for an expression whose value is a promise.
func (h *harness) evalAsync(expr string, timeout time.Duration, out any) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.browser, timeout)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		h.fail("evaluate "+expr[:min(len(expr), 200)], err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		h.t.Fatalf("evaluate %s: decode %s: %v", expr, raw, err)
	}
}

// painted waits until the page has laid out and painted twice, after its
// charts were told the window's size.
func (h *harness) painted() {
	h.t.Helper()
	h.evalAsync(`new Promise((ok) => { window.dispatchEvent(new Event('resize')); requestAnimationFrame(() => requestAnimationFrame(() => ok(true))); })`, 10*time.Second, new(bool))
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

// shoot saves a screenshot of the page at every width, and checks that at
// each the page is no wider than the window (panels stack, nothing is cut).
func (h *harness) shoot(name string) {
	h.t.Helper()
	for _, w := range widths {
		h.run("viewport", 5*time.Second, chromedp.EmulateViewport(w, 1000))
		h.painted()
		var wide int64
		h.eval(`document.documentElement.scrollWidth`, &wide)
		if wide > w {
			h.t.Errorf("%s at %d px: the page is %d px wide", name, w, wide)
		}
		h.screenshot(fmt.Sprintf("%s-%d", name, w))
	}
	h.run("viewport", 5*time.Second, chromedp.EmulateViewport(widths[0], 1000))
	h.painted()
}

// audit runs axe-core on the page as it is shown and fails on any serious
// or critical violation.
func (h *harness) audit(what string) {
	h.t.Helper()
	var loaded bool
	h.eval(`!!window.axe`, &loaded)
	if !loaded {
		h.eval(`(() => { `+h.axeJS+`; return true; })()`, &loaded)
	}
	var res struct {
		Passes int      `json:"passes"`
		Minor  []string `json:"minor"`
		Bad    []struct {
			ID, Impact, Help string
			Nodes            []string
		} `json:"bad"`
	}
	h.evalAsync(`axe.run(document, {resultTypes: ['violations']}).then((r) => ({
		passes: r.passes.length,
		minor: r.violations.filter((v) => v.impact !== 'serious' && v.impact !== 'critical').map((v) => v.id + ' (' + v.impact + ')'),
		bad: r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
			.map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ': ' + n.failureSummary)}))}))`, 60*time.Second, &res)
	h.t.Logf("axe, %s: %d rules pass; %d serious or critical violations; minor: %v", what, res.Passes, len(res.Bad), res.Minor)
	if res.Passes == 0 {
		h.t.Fatalf("axe, %s: no rule ran", what)
	}
	bad := res.Bad
	for _, v := range bad {
		h.t.Errorf("axe, %s: %s (%s): %s; %v", what, v.ID, v.Impact, v.Help, v.Nodes)
	}
	if len(bad) > 0 {
		h.t.FailNow()
	}
}

// reachable presses Tab from the skip link until the focus comes back to
// it (or 150 presses) and fails unless every one of want was focused on
// the way: an id, "view:" and a view link's view, "row:" and a table row's
// trial, "sort:" and a column's key, or the tag and text ("summary:Columns").
func (h *harness) reachable(what string, want ...string) {
	h.t.Helper()
	h.eval(`(() => { document.querySelector('.skip').focus(); return true; })()`, new(bool))
	seen := map[string]bool{}
	presses := 0
	for ; presses < 150; presses++ {
		h.run("tab", 5*time.Second, chromedp.KeyEvent("\t"))
		var d string
		h.eval(`(() => { const e = document.activeElement;
			if (!e || e === document.body) return 'body';
			if (e.classList.contains('skip')) return 'skip';
			if (e.dataset.view) return 'view:' + e.dataset.view;
			if (e.dataset.number) return 'row:' + e.dataset.number;
			if (e.dataset.key) return 'sort:' + e.dataset.key;
			if (e.id) return e.id;
			if (e.tagName === 'INPUT') return 'input:' + e.value;
			return e.tagName.toLowerCase() + ':' + e.textContent.trim().slice(0, 40); })()`, &d)
		if d == "skip" {
			break
		}
		seen[d] = true
	}
	var missing []string
	for _, w := range want {
		if !seen[w] && !(strings.HasSuffix(w, ":*") && slices.ContainsFunc(slices.Collect(maps.Keys(seen)), func(k string) bool { return strings.HasPrefix(k, strings.TrimSuffix(w, "*")) })) {
			missing = append(missing, w)
		}
	}
	h.eval(`(() => { document.activeElement.blur(); return true; })()`, new(bool))
	h.t.Logf("keyboard, %s: %d Tab presses reach %d controls", what, presses, len(seen))
	if len(missing) > 0 {
		h.t.Fatalf("keyboard, %s: Tab never reaches %v (it reaches %v)", what, missing, slices.Sorted(maps.Keys(seen)))
	}
}

// pageErrors fails the test if the page threw or logged an error.
func (h *harness) pageErrors() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errors) > 0 {
		h.t.Fatalf("the page reported errors: %q", h.errors)
	}
}

// post sends a JSON body to the API and fails the test unless it is answered with 2xx.
func (h *harness) post(path string, body any) {
	h.t.Helper()
	if code, text := h.postStatus(path, body); code/100 != 2 {
		h.t.Fatalf("POST %s: %d %s", path, code, text)
	}
}

func (h *harness) postStatus(path string, body any) (int, string) {
	h.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := http.Post(h.base+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(text)
}

// show opens a view of the open study by its link, as a user would.
func (h *harness) show(view string) {
	h.t.Helper()
	h.run("show "+view, 5*time.Second, chromedp.Click(chromedp.CSS(`#views a[data-view="`+view+`"]`)))
	h.wait(view+" shown", `document.body.dataset.view === '`+view+`'`, 10*time.Second)
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

// demo is what the API says about the demo study, to compare the page with.
type demo struct {
	trials []client.Trial
	by     map[int64]client.Trial
	best   *client.Trial
	worst  client.Trial // the complete trial with the largest value
	failed client.Trial
}

// The failed trial's reason, as its worker tells it.
const failReason = "CUDA out of memory at step 2"

// runDemo has three workers optimize the demo study over HTTP, eight trials
// each: every trial reports three intermediate values and is told with user
// attributes of three JSON types; then a fourth trial of worker-0 fails
// after one report. 24 complete trials and one failed.
func runDemo(t *testing.T, h *harness) {
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
			for range 8 {
				tr, err := c.Ask(ctx, "demo")
				if err != nil {
					errs <- err
					return
				}
				v, err := demoObjective(tr)
				if err != nil {
					errs <- err
					return
				}
				for step := int64(1); step <= 3; step++ {
					if _, err := c.Report(ctx, "demo", tr.Number, step, v+1/float64(step)); err != nil {
						errs <- err
						return
					}
				}
				body, _ := json.Marshal(map[string]any{"value": v, "user_attrs": map[string]any{"epochs": 3, "gpu": fmt.Sprintf("a100-%d", w), "converged": v < 1}})
				resp, err := http.Post(h.base+fmt.Sprintf("/api/studies/demo/trials/%d/tell", tr.Number), "application/json", strings.NewReader(string(body)))
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("tell trial %d: %s", tr.Number, resp.Status)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c := client.New(h.base, client.WithWorker("worker-0"))
	tr, err := c.Ask(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Report(ctx, "demo", tr.Number, 1, 7.5); err != nil {
		t.Fatal(err)
	}
	if err := c.Fail(ctx, "demo", tr.Number, failReason); err != nil {
		t.Fatal(err)
	}
}

func readStudy(t *testing.T, h *harness, study string) demo {
	ctx := context.Background()
	all, err := h.c.Trials(ctx, study)
	if err != nil {
		t.Fatal(err)
	}
	d := demo{trials: all, by: map[int64]client.Trial{}}
	for _, tr := range all {
		d.by[tr.Number] = tr
		if tr.State == "complete" && (d.worst.Value == nil || *tr.Value > *d.worst.Value) {
			d.worst = tr
		}
		if tr.State == "failed" {
			d.failed = tr
		}
	}
	if d.best, err = h.c.Best(ctx, study); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDashboardEndToEnd drives the dashboard in headless Chromium against a
// real server on a temporary SQLite file: three workers optimize a study
// over HTTP (reporting intermediate values and user attributes; one trial
// fails), a second study runs for the comparison, and every view must show
// the numbers the API gives, pass axe-core's audit without serious or
// critical violations, work by keyboard, and is saved as screenshots at
// 1440 and 800 px.
func TestDashboardEndToEnd(t *testing.T) {
	start := time.Now()
	h := startServer(t)
	ctx := context.Background()
	runDemo(t, h)
	d := readStudy(t, h, "demo")
	acqs := map[string]int{}
	for _, tr := range d.trials {
		acqs[tr.Acquisition]++
	}
	t.Logf("%d trials by 3 workers in %v: %v", len(d.trials), time.Since(start), acqs)
	// The study compared with demo: random search on the same space.
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "demo-random", Space: json.RawMessage(demoSpace), Optimizer: map[string]any{"strategy": "random", "seed": 5}}); err != nil {
		t.Fatal(err)
	}
	if err := client.New(h.base, client.WithWorker("random-0")).Optimize(ctx, "demo-random", 12, func(_ context.Context, tr *client.Trial) (float64, error) { return demoObjective(tr) }); err != nil {
		t.Fatal(err)
	}

	h.openBrowser()
	h.run("open demo", 20*time.Second, chromedp.Navigate(h.base+"/#study=demo"))
	h.wait("demo rendered", `document.body.dataset.ready === 'demo'`, 15*time.Second)

	checkOverview(t, h, d)
	checkSlicesAndPairs(t, h, d)
	checkExplanations(t, h, d)
	checkTrialView(t, h, d)
	checkLPI(t, h, d)
	checkAblation(t, h, d)
	checkProposingModel(t, h, d)
	checkHistory(t, h, d)
	checkCompare(t, h)
	checkOpenedOnView(t, h)
	checkLive(t, h)
	checkStates(t, h)
	h.pageErrors()
	checkWide(t, h)
	h.pageErrors()

	// a-BOBAX: the band half-width the optimizer notes on its proposals.
	addBobaxStudy(t, h)
	h.run("open bobax", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=bobax&view=explain"))
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
	checkNoObjective(t, h)
	checkDiverged(t, h)
	checkMultiObjective(t, h)
	h.pageErrors()

	checkBig(t, h)
	h.pageErrors()
	t.Logf("e2e took %v", time.Since(start))
}

// checkOpenedOnView: a link straight to a view other than the overview
// draws its charts at their elements' size. They are drawn while the view
// is still hidden, at zero width, and must be laid out again when it is
// shown.
func checkOpenedOnView(t *testing.T, h *harness) {
	for _, view := range []string{"history", "explain"} {
		h.run("open demo on "+view, 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=demo&view="+view))
		h.wait("demo rendered", `document.body.dataset.ready === 'demo'`, 15*time.Second)
		// Two frames, without the window's resize event of h.painted,
		// which lays out every chart again and would hide the fault.
		h.evalAsync(`new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok(true))))`, 10*time.Second, new(bool))
		var wrong []string
		h.eval(`Object.entries(xbo.charts).filter(([id, c]) => {
			const dom = document.getElementById(id);
			return document.getElementById('view-`+view+`').contains(dom) && dom.offsetParent !== null &&
				(c.getWidth() !== dom.clientWidth || dom.clientWidth < 300);
		}).map(([id, c]) => id + ': drawn ' + c.getWidth() + ' px wide in ' + document.getElementById(id).clientWidth + ' px')`, &wrong)
		if len(wrong) > 0 {
			h.screenshot("opened-on-" + view)
			t.Fatalf("opened on %s: charts not laid out: %v", view, wrong)
		}
	}
}

// checkNoObjective: a space without "objective" is minimized, and the
// overview's subtitle says so (it once read "undefined").
func checkNoObjective(t *testing.T, h *harness) {
	ctx := context.Background()
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "no-objective",
		Space: json.RawMessage(`{"params":[{"name":"x","type":"float","low":0,"high":1}]}`), Optimizer: map[string]any{"strategy": "random", "seed": 2}}); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Optimize(ctx, "no-objective", 3, func(_ context.Context, tr *client.Trial) (float64, error) { return tr.Float("x") }); err != nil {
		t.Fatal(err)
	}
	h.run("open no-objective", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=no-objective"))
	h.wait("no-objective rendered", `document.body.dataset.ready === 'no-objective'`, 15*time.Second)
	var subtitle string
	h.eval(`document.querySelector('#summary p').textContent`, &subtitle)
	if !strings.HasPrefix(subtitle, "minimize · 3 trials") || strings.Contains(subtitle, "undefined") {
		t.Fatalf("subtitle of a study whose space omits the objective: %q, want it to start with \"minimize · 3 trials\"", subtitle)
	}
}

// rowNumbers is the trial numbers of the table's rows, in number order.
func rowNumbers(h *harness) []int64 {
	var got []int64
	h.eval(`[...document.querySelectorAll('#trials-table tbody tr')].map(tr => Number(tr.dataset.number))`, &got)
	slices.Sort(got)
	return got
}

// setControl sets a form control's value and sends the event a user's edit would.
func setControl(h *harness, id, value, event string) {
	h.eval(fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event(%q)); return true; })()`, id, value, event), new(bool))
}

func numbersWhere(d demo, keep func(client.Trial) bool) []int64 {
	var out []int64
	for _, tr := range d.trials {
		if keep(tr) {
			out = append(out, tr.Number)
		}
	}
	slices.Sort(out)
	return out
}

func checkOverview(t *testing.T, h *harness, d demo) {
	// Trace and summary: every complete trial, the best value.
	var trace struct {
		N    int     `json:"n"`
		Best float64 `json:"best"`
	}
	h.eval(`window.xbo.trace`, &trace)
	if trace.N != 24 || trace.Best != *d.best.Value {
		t.Fatalf("trace: %d trials, best %v; want 24, %v", trace.N, trace.Best, *d.best.Value)
	}
	// The summary writes the best value to three significant digits, with
	// every digit on hover.
	var best struct{ Text, Title string }
	h.eval(`(() => { const e = document.getElementById('best-value'); return {text: e.textContent, title: e.title}; })()`, &best)
	if exact, err := strconv.ParseFloat(cmp.Or(best.Title, best.Text), 64); best.Text != report.Number(*d.best.Value) || err != nil || exact != *d.best.Value {
		t.Fatalf("summary's best value %+v, API %v: want %q with every digit in the title", best, *d.best.Value, report.Number(*d.best.Value))
	}
	// Table: 25 rows; sorted by value (ascending) the best comes first.
	if rows := rowNumbers(h); len(rows) != 25 {
		t.Fatalf("table shows %d rows, want 25", len(rows))
	}
	h.run("sort by value", 5*time.Second, chromedp.Click(chromedp.CSS(`#trials-table th button[data-key="value"]`)))
	var first string
	h.eval(`document.querySelector('#trials-table tbody tr').dataset.number`, &first)
	if first != strconv.FormatInt(d.best.Number, 10) {
		t.Fatalf("sorted by value, first row is trial %s, best is %d", first, d.best.Number)
	}
	// Duration: each row's is the API's finish − start.
	var durs map[string]string
	h.eval(`Object.fromEntries([...document.querySelectorAll('#trials-table tbody tr')].map(tr => [tr.dataset.number, tr.querySelector('td[data-ms]').dataset.ms]))`, &durs)
	for _, tr := range d.trials {
		want := strconv.FormatInt(tr.FinishedAt.UnixMilli()-tr.StartedAt.UnixMilli(), 10)
		if got := durs[strconv.FormatInt(tr.Number, 10)]; got != want {
			t.Fatalf("trial %d: duration %s ms on the page, %s ms from the API's timestamps", tr.Number, got, want)
		}
	}
	// Filters: by state (with the fail reason shown), by value range, by a
	// categorical and by a numeric parameter.
	clear := func() {
		h.run("clear filters", 5*time.Second, chromedp.Click(chromedp.CSS(`#filters-clear`)))
	}
	setControl(h, "state-filter", "failed", "change")
	if got, want := rowNumbers(h), []int64{d.failed.Number}; !slices.Equal(got, want) {
		t.Fatalf("state filter failed: rows %v, want %v", got, want)
	}
	var reason string
	h.eval(`document.querySelector('#trials-table tbody td.reason').textContent`, &reason)
	if reason != d.failed.FailReason || reason != failReason {
		t.Fatalf("fail reason on the page %q, API %q", reason, d.failed.FailReason)
	}
	h.shoot("overview-failed")
	clear()
	setControl(h, "value-min", "0.1", "input")
	setControl(h, "value-max", "1", "input")
	if got, want := rowNumbers(h), numbersWhere(d, func(tr client.Trial) bool { return tr.Value != nil && *tr.Value >= 0.1 && *tr.Value <= 1 }); !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("value in [0.1, 1]: rows %v, want %v", got, want)
	}
	clear()
	setControl(h, "param-filter", "opt", "change")
	setControl(h, "param-choice", "1", "change") // choices ["sgd", "adam"]
	if got, want := rowNumbers(h), numbersWhere(d, func(tr client.Trial) bool { return tr.Params["opt"] == "adam" }); !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("opt = adam: rows %v, want %v", got, want)
	}
	clear()
	setControl(h, "param-filter", "mom", "change")
	setControl(h, "param-min", "0.2", "input")
	setControl(h, "param-max", "0.5", "input")
	if got, want := rowNumbers(h), numbersWhere(d, func(tr client.Trial) bool {
		m, ok := tr.Params["mom"].(float64)
		return ok && m >= 0.2 && m <= 0.5
	}); !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("mom in [0.2, 0.5]: rows %v, want %v", got, want)
	}
	clear()
	// The column chooser hides and shows a column.
	headers := func() []string {
		var keys []string
		h.eval(`[...document.querySelectorAll('#trials-table th button')].map(b => b.dataset.key)`, &keys)
		return keys
	}
	if k := headers(); !slices.Contains(k, "duration") || !slices.Contains(k, "fail_reason") || !slices.Contains(k, "worker") {
		t.Fatalf("table columns %v lack duration, fail reason or worker", k)
	}
	h.run("columns", 5*time.Second, chromedp.Click(chromedp.CSS(`details.chooser summary`)), chromedp.Click(chromedp.CSS(`#column-chooser input[data-col="worker"]`)))
	if k := headers(); slices.Contains(k, "worker") || len(k) != 9 {
		t.Fatalf("worker column switched off, columns %v", k)
	}
	h.run("columns", 5*time.Second, chromedp.Click(chromedp.CSS(`#column-chooser input[data-col="worker"]`)), chromedp.Click(chromedp.CSS(`details.chooser summary`)))

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
	// The best trial's line is drawn last (on top) and darkest, the worst's
	// first and palest: the colour scale runs from worst (0) to best (1).
	var ends struct {
		First, Last int64
		Colours     []string
	}
	h.eval(`(() => { const o = xbo.charts['parallel-chart'].getOption(); return {first: xbo.parallelTrials[0], last: xbo.parallelTrials[xbo.parallelTrials.length - 1], colours: o.visualMap[0].inRange.color}; })()`, &ends)
	if ends.Last != d.best.Number || ends.First != d.worst.Number || len(ends.Colours) == 0 || !(lightness(ends.Colours[0]) > lightness(ends.Colours[len(ends.Colours)-1])) {
		t.Fatalf("parallel coordinates: drawn from trial %d to %d with colours %v (low to high values); want the worst (%d) first, the best (%d) last and darkest",
			ends.First, ends.Last, ends.Colours, d.worst.Number, d.best.Number)
	}
	h.audit("overview")
	h.reachable("overview", "view:explain", "view:history", "view:compare", "trace-log", "trace-clip", "state-filter", "value-min", "value-max", "param-filter",
		"filters-clear", "summary:Columns", "sort:value", "sort:duration", "row:*", "slice-chart", "pair-x", "pair-y", "pair-colour", "footprint-chart")
	h.shoot("overview")
	checkSignificant(t, h, "view-overview")
	checkSignificant(t, h, "summary")
}

func checkExplanations(t *testing.T, h *harness, d demo) {
	ctx := context.Background()
	h.show("explain")
	// The Proposal panel is not empty before a trial is chosen: it explains
	// the best trial, with the API's numbers.
	h.wait("Shapley of the best trial", `document.querySelectorAll('#proposal-data td[data-v=phi]').length > 0`, 30*time.Second)
	checkShapley(t, h, "demo", d.best.Number, "xbo.shapley", "proposal-data")

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
		h.eval(`Object.fromEntries([...document.querySelectorAll('#importance-data tbody tr[data-param]')].map(tr => [tr.dataset.param, Number(tr.querySelector('td[data-v=fraction]').dataset.x)]))`, &shown)
		for name, e := range imp.Main {
			if got, ok := shown[name]; !ok || got != e.Fraction {
				t.Fatalf("importance of %s (%v): page %v, API %v", name, query, got, e.Fraction)
			}
		}
	}
	checkImportance(nil)
	checkLeadsWithAnswers(t, h)

	// Budgets: every trial reported at steps 1, 2, 3; the table holds the
	// API's rank correlations, and the selector explains at a budget.
	h.wait("budgets table", `document.querySelectorAll('#budgets-data td[data-v=spearman]').length > 0`, 30*time.Second)
	var budgets explain.BudgetsResult
	if err := h.c.Explain(ctx, "demo", "budgets", nil, &budgets); err != nil {
		t.Fatal(err)
	}
	var wantRho []float64
	for _, p := range budgets.Pairs {
		wantRho = append(wantRho, p.Spearman.Value)
	}
	h.eval(`[...document.querySelectorAll('#budgets-data td[data-v=spearman]')].map(td => td.dataset.x)`, &cells)
	sameFloats(t, "Spearman between budgets", numbers(t, "budgets", cells), wantRho)
	var wantBetter []float64
	for _, p := range budgets.Pairs {
		if p.BetterHalf != nil && p.BetterHalf.Spearman != nil {
			wantBetter = append(wantBetter, p.BetterHalf.Spearman.Value)
		}
	}
	h.eval(`[...document.querySelectorAll('#budgets-data td[data-v=better-spearman]')].map(td => td.dataset.x)`, &cells)
	if len(wantBetter) == 0 {
		t.Fatal("no pair has the better half's correlation")
	}
	sameFloats(t, "Spearman among the better half", numbers(t, "budgets", cells), wantBetter)
	if len(budgets.Pairs) != 6 || budgets.Pairs[0].Label != "1 → 2" || budgets.Pairs[0].Trials != 24 {
		t.Fatalf("budgets: %+v", budgets.Pairs)
	}
	setControl(h, "explain-budget", "1", "change")
	h.wait("importance at budget 1", `document.getElementById('importance-note').textContent.includes('at budget 1: 24 trials (0 pruned')`, 30*time.Second)
	checkImportance(url.Values{"budget": {"1"}})
	h.wait("PDP at budget 1", `document.getElementById('pdp-note').textContent.includes('at budget 1: 24 trials')`, 30*time.Second)
	var atOne pdp.Result
	if err := h.c.Explain(ctx, "demo", "pdp", url.Values{"param": {"lr"}, "budget": {"1"}}, &atOne); err != nil {
		t.Fatal(err)
	}
	h.eval(`[...document.querySelectorAll('#pdp-data td[data-v=mean]')].map(td => td.dataset.x)`, &cells)
	sameFloats(t, "PDP mean at budget 1", numbers(t, "PDP", cells), atOne.Mean)
	var fresh string
	h.eval(`document.getElementById('pdp-fresh').textContent`, &fresh)
	if !strings.Contains(fresh, "describes the values at budget 1 of 24 trials") {
		t.Fatalf("PDP freshness at budget 1: %q", fresh)
	}
	h.audit("explanations")
	h.reachable("explanations", "explain-budget", "budgets-refresh", "pdp-param", "pdp-param2", "pdp-ice", "pdp-refresh", "good-region", "proposal-trial", "proposal-go", "paths-go", "summary:PDP data", "budgets-table-summary")
	setControl(h, "explain-budget", "", "change")
	h.wait("importance at the final values", `!document.getElementById('importance-note').textContent.includes('at budget')`, 30*time.Second)
	h.wait("PDP at the final values", `!document.getElementById('pdp-note').textContent.includes('at budget') && document.querySelectorAll('#pdp-data td[data-v=mean]').length === 20`, 30*time.Second)
	h.shoot("explain")
	checkSignificant(t, h, "view-explain")
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

	// Desirability paths, on demand: one row per model-chosen proposal, the
	// table and the chart equal to the API's φ of cb, then of the mean; the
	// lines are the parameters contributing most, in that order.
	h.run("click paths", 5*time.Second, chromedp.Click(chromedp.CSS(`#paths-go`)))
	h.wait("paths drawn", `document.querySelectorAll('#paths-data td[data-v=phi]').length > 0`, 60*time.Second)
	var paths pathsAnswer
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
		h.eval(`[...document.querySelectorAll('#paths-data td[data-v=phi]')].map(td => td.dataset.x)`, &cells)
		var lines []struct {
			Name string       `json:"name"`
			Data [][2]float64 `json:"data"`
		}
		h.eval(`xbo.charts['paths-chart'].getOption().series.map(s => ({name: s.name, data: s.data}))`, &lines)
		if len(trials) != len(paths.Steps) {
			t.Fatalf("paths %s: page shows %d trials; API %d proposals", output, len(trials), len(paths.Steps))
		}
		// The lines: parameters by decreasing mean |φ| (all three here).
		var want []float64
		for i, st := range paths.Steps {
			if trials[i] != st.Trial {
				t.Fatalf("paths %s: row %d is trial %d, API %d", output, i, trials[i], st.Trial)
			}
			a, ok := st.Explanation.Output(output)
			if !ok {
				t.Fatalf("paths: trial %d has no %s output", st.Trial, output)
			}
			want = append(want, a.Phi...)
		}
		order := paths.byContribution(output)
		if len(lines) != len(paths.Params) {
			t.Fatalf("paths %s: %d lines for %d parameters", output, len(lines), len(paths.Params))
		}
		for k, j := range order {
			if lines[k].Name != paths.Params[j] {
				t.Fatalf("paths %s: line %d is %s, want %s (order %v of %v)", output, k, lines[k].Name, paths.Params[j], order, paths.Params)
			}
			for i, st := range paths.Steps {
				a, _ := st.Explanation.Output(output)
				if lines[k].Data[i] != [2]float64{float64(st.Trial), a.Phi[j]} {
					t.Fatalf("paths %s: line %s point %d is %v, API trial %d φ %v", output, lines[k].Name, i, lines[k].Data[i], st.Trial, a.Phi[j])
				}
			}
		}
		sameFloats(t, "paths φ("+output+") (table)", numbers(t, "paths", cells), want)
		t.Logf("paths: φ(%s) of %d proposals (%d parameters) on the page equal the API's; first trial %d: %v", output, len(trials), len(paths.Params), trials[0], want[:len(paths.Params)])
	}
	checkPaths(shapley.OutputCB)
	var pathsNote string
	h.eval(`document.getElementById('paths-note').textContent`, &pathsNote)
	// The demo's optimizer warps the values for its whole-space proposals
	// and not for its trust-region ones (from 12 completions on).
	if paths.Units != "mixed" || !strings.Contains(pathsNote, "study units for trust-region proposals, the yeo-johnson-warped model's") {
		t.Fatalf("paths in %q, note %q: want mixed units, named per kind", paths.Units, pathsNote)
	}
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
	setControl(h, "pdp-param2", "mom", "change")
	h.wait("heatmap", `xbo.pdp.param2 === 'mom' && xbo.charts['pdp-chart'].getOption().series[0].type === 'heatmap'`, 30*time.Second)
	h.eval(`xbo.charts['pdp-chart'].getOption().series[0].data.map(d => d[2])`, &drawn)
	sameFloats(t, "PDP heatmap (chart)", drawn, heat.Mean)
	h.screenshot("5-heatmap")

	// A categorical parameter's PDP: points with error bars, not a line
	// with a band between levels.
	setControl(h, "pdp-param2", "", "input")
	setControl(h, "pdp-param", "opt", "change")
	h.wait("categorical PDP", `xbo.pdp.param === 'opt' && !xbo.pdp.param2 && xbo.charts['pdp-chart'].getOption().series[0].type === 'scatter' && xbo.charts['pdp-chart'].getOption().series[1].type === 'custom'`, 30*time.Second)
	h.screenshot("5a-categorical")
	// Importance whiskers stay inside the plot.
	var whisk struct {
		Top, Max float64
	}
	h.eval(`(() => { const o = xbo.charts['importance-chart'].getOption(); const tops = o.series.find(s => s.type === 'custom').data.map(d => d[2]); return {top: Math.max(...tops), max: o.yAxis[0].max}; })()`, &whisk)
	if !(whisk.Top <= whisk.Max) {
		t.Fatalf("an importance whisker (%v) is above the axis (%v)", whisk.Top, whisk.Max)
	}
}

// pathsAnswer is the API's desirability paths.
type pathsAnswer struct {
	Params    []string    `json:"params"`
	Proposals int         `json:"proposals"`
	Units     string      `json:"units"`
	Steps     []pathsStep `json:"steps"`
}

// pathsStep is one proposal's step of the desirability paths.
type pathsStep struct {
	Trial       int64                `json:"trial"`
	Observed    int                  `json:"observed"`
	Explanation *shapley.Explanation `json:"explanation"`
}

// byContribution orders the parameters by decreasing mean |φ| of an
// output over the steps (ties by position): the order of the page's lines.
func (p *pathsAnswer) byContribution(output string) []int {
	weight := make([]float64, len(p.Params))
	for _, st := range p.Steps {
		a, _ := st.Explanation.Output(output)
		for j, v := range a.Phi {
			weight[j] += math.Abs(v)
		}
	}
	order := make([]int, len(p.Params))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(weight[b], weight[a]) })
	return order
}

// checkShapley compares the Shapley values a panel drew for trial n (the
// answer it kept in answer, its table) with the API's, and checks that the
// chart names every parameter with the trial's value.
func checkShapley(t *testing.T, h *harness, study string, n int64, answer, table string) {
	t.Helper()
	var sh struct {
		Trial       int64                `json:"trial"`
		Point       map[string]any       `json:"point"`
		Explanation *shapley.Explanation `json:"explanation"`
	}
	if err := h.c.Explain(context.Background(), study, "shapley", url.Values{"trial": {strconv.FormatInt(n, 10)}}, &sh); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Trial    int64       `json:"trial"`
		Phis     [][]float64 `json:"phis"`
		Proposed bool        `json:"proposed"`
	}
	h.eval(`({trial: `+answer+`.trial, phis: `+answer+`.explanation.outputs.map(o => o.phi), proposed: !!`+answer+`.proposer})`, &got)
	if got.Trial != n {
		t.Fatalf("%s explains trial %d, want %d", table, got.Trial, n)
	}
	if got.Proposed {
		// A trial the model proposed is explained with the model that
		// proposed it: its step of the desirability paths (the study has
		// fewer proposals than the page's default count of steps).
		var paths pathsAnswer
		if err := h.c.Explain(context.Background(), study, "paths", nil, &paths); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(paths.Steps, func(s pathsStep) bool { return s.Trial == n })
		if i < 0 {
			t.Fatalf("%s explains trial %d with its proposing model; the paths API has no step for it", table, n)
		}
		sh.Explanation = paths.Steps[i].Explanation
	}
	var shown []string
	h.eval(`[...document.querySelectorAll('#`+table+` td[data-v=phi]')].map(td => td.dataset.x)`, &shown)
	var flat, want []float64
	for k, o := range sh.Explanation.Outputs {
		want = append(want, o.Phi...)
		flat = append(flat, got.Phis[k]...)
	}
	sameFloats(t, table+": Shapley values (fetched)", flat, want)
	sameFloats(t, table+": Shapley values (table)", numbers(t, "Shapley", shown), want)
	chartID := strings.TrimSuffix(table, "-data") + "-chart"
	var axis []string
	h.eval(`xbo.charts['`+chartID+`'].getOption().xAxis[0].data`, &axis)
	if len(axis) != len(sh.Explanation.Params) {
		t.Fatalf("%s: Shapley axis %v for parameters %v", chartID, axis, sh.Explanation.Params)
	}
	for j, name := range sh.Explanation.Params {
		v, ok := sh.Point[name]
		want := name + " (off)"
		if ok && v != nil {
			want = name + "=" + pageText(v)
		}
		if axis[j] != want {
			t.Fatalf("%s: Shapley axis label %q, want %q (point %v)", chartID, axis[j], want, sh.Point)
		}
	}
}

// checkTrialView opens trials from the trace (a click on its point), the
// parallel coordinates (the click event of a line) and the table (Enter on
// a row), and checks what the trial view shows against the API.
// pageText is how the page writes a value of the API (web/src/format.js):
// numbers as the report's report.Number writes them (three significant
// digits, whole numbers below 1e5 in full), strings as they are, anything
// else as JSON.
func pageText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return report.Number(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func checkTrialView(t *testing.T, h *harness, d demo) {
	h.show("overview")
	// The trace: a real click on the worst trial's point.
	var xy [2]float64
	// Where its point is drawn: at its value, or at the axis's edge when
	// the outlier clipping put it there.
	h.eval(fmt.Sprintf(`(() => { const c = xbo.charts['trace-chart']; c.getDom().scrollIntoView(); const o = c.getOption();
		const clipped = o.series[2].data.find((d) => d.trial === %d);
		const p = c.convertToPixel({seriesIndex: 0}, clipped ? clipped.value : [%d, %v]); const r = c.getDom().getBoundingClientRect(); return [r.left + p[0], r.top + p[1]]; })()`, d.worst.Number, d.worst.Number, *d.worst.Value), &xy)
	h.run("click the trace", 5*time.Second, chromedp.MouseClickXY(xy[0], xy[1]))
	openedTrial(t, h, d.worst.Number)
	checkTrialFacts(t, h, d.worst)
	h.wait("trial's Shapley drawn", fmt.Sprintf(`xbo.trialShapley && xbo.trialShapley.trial === %d && document.querySelectorAll('#trial-shapley-data td[data-v=phi]').length > 0`, d.worst.Number), 30*time.Second)
	checkShapley(t, h, "demo", d.worst.Number, "xbo.trialShapley", "trial-shapley-data")
	// Times are written to the millisecond on purpose; the numbers are not.
	checkSignificant(t, h, "trial-summary")
	// The parameters are on the page (checkTrialFacts); the worst trial may
	// sit on the bounds, with no decimal number to wait for or to require.
	checkDigitsOf(t, h, "trial-params")
	checkSignificant(t, h, "trial-shapley-note")
	h.audit("trial view")
	h.reachable("trial view", "view:overview", "view:trial", "trial-prev", "trial-number", "trial-go", "trial-next", "trial-shapley-go", "summary:Shapley data", "trial-lpi-go", "trial-ablation-go")
	h.shoot("trial")

	// Keyboard: Next trial, then the failed trial by its number and Enter.
	h.run("next by keyboard", 5*time.Second, chromedp.Focus(chromedp.CSS(`#trial-next`)), chromedp.KeyEvent("\r"))
	openedTrial(t, h, d.worst.Number+1)
	h.run("trial by number", 5*time.Second, chromedp.Focus(chromedp.CSS(`#trial-number`)))
	setControl(h, "trial-number", strconv.FormatInt(d.failed.Number, 10), "input")
	h.run("enter", 5*time.Second, chromedp.KeyEvent("\r"))
	openedTrial(t, h, d.failed.Number)
	checkTrialFacts(t, h, d.failed)
	h.screenshot("trial-failed")

	// The parallel coordinates: the click event of line i opens the trial
	// drawn as line i.
	h.show("overview")
	var line struct {
		Trial int64     `json:"trial"`
		Data  []float64 `json:"data"`
	}
	h.eval(`(() => { const c = xbo.charts['parallel-chart']; const data = c.getOption().series[0].data[5]; c.trigger('click', {componentType: 'series', seriesType: 'parallel', seriesIndex: 0, dataIndex: 5, data}); return {trial: Number(new URLSearchParams(location.hash.slice(1)).get('trial')), data}; })()`, &line)
	openedTrial(t, h, line.Trial)
	if tr := d.by[line.Trial]; tr.Value == nil || line.Data[3] != *tr.Value || line.Data[0] != tr.Params["lr"] {
		t.Fatalf("line 5 draws %v, but opened trial %d has lr %v and value %v", line.Data, line.Trial, tr.Params["lr"], tr.Value)
	}
	// The table: Enter on a focused row.
	h.show("overview")
	var rowTrial int64
	h.eval(`Number(document.querySelectorAll('#trials-table tbody tr')[3].dataset.number)`, &rowTrial)
	h.run("row by keyboard", 5*time.Second, chromedp.Focus(chromedp.CSS(`#trials-table tbody tr:nth-child(4)`)), chromedp.KeyEvent("\r"))
	openedTrial(t, h, rowTrial)
}

func openedTrial(t *testing.T, h *harness, n int64) {
	t.Helper()
	h.wait(fmt.Sprintf("trial %d shown", n), fmt.Sprintf(`document.body.dataset.view === 'trial' && document.getElementById('trial-h').textContent === 'Trial %d'`, n), 10*time.Second)
}

// checkTrialFacts compares the trial view with the API's trial.
func checkTrialFacts(t *testing.T, h *harness, tr client.Trial) {
	t.Helper()
	var facts map[string]string
	h.eval(`Object.fromEntries([...document.querySelectorAll('#trial-facts tr')].map(tr => [tr.dataset.k, tr.cells[1].textContent]))`, &facts)
	wantFacts := map[string]string{"state": tr.State, "worker": tr.Worker, "acquisition": tr.Acquisition, "version": strconv.FormatInt(tr.Version, 10)}
	if tr.FailReason != "" {
		wantFacts["fail_reason"] = tr.FailReason
	}
	for k, v := range wantFacts {
		if facts[k] != v {
			t.Fatalf("trial %d: %s is %q on the page, %q in the API (%v)", tr.Number, k, facts[k], v, facts)
		}
	}
	var exact struct {
		Value string `json:"value"`
		Ms    string `json:"ms"`
	}
	h.eval(`({value: document.querySelector('#trial-facts [data-k=value] [data-x]')?.dataset.x ?? '', ms: document.querySelector('#trial-facts [data-k=duration] [data-ms]')?.dataset.ms ?? ''})`, &exact)
	wantValue := ""
	if tr.Value != nil {
		wantValue = strconv.FormatFloat(*tr.Value, 'g', -1, 64)
	}
	if got := exact.Value; got != wantValue {
		if g, err := strconv.ParseFloat(got, 64); err != nil || tr.Value == nil || g != *tr.Value {
			t.Fatalf("trial %d: value %q on the page, API %v", tr.Number, got, wantValue)
		}
	}
	if want := strconv.FormatInt(tr.FinishedAt.UnixMilli()-tr.StartedAt.UnixMilli(), 10); exact.Ms != want {
		t.Fatalf("trial %d: duration %s ms, API %s ms", tr.Number, exact.Ms, want)
	}
	// Parameters and user attributes with their JSON types.
	// An inactive parameter is shown as such, with the JSON value null.
	var ps map[string]json.RawMessage
	h.eval(`Object.fromEntries([...document.querySelectorAll('#trial-params tbody tr')].map(tr => [tr.dataset.param, tr.cells[2].textContent.startsWith('inactive') ? null : JSON.parse(tr.cells[2].dataset.json)]))`, &ps)
	if !sameJSON(ps, tr.Params) {
		t.Fatalf("trial %d: parameters %s on the page, API %v", tr.Number, ps, tr.Params)
	}
	var attrs map[string]json.RawMessage
	h.eval(`Object.fromEntries([...document.querySelectorAll('#trial-attrs tbody tr[data-attr]')].map(tr => [tr.dataset.attr, JSON.parse(tr.cells[1].dataset.json)]))`, &attrs)
	if !sameJSON(attrs, tr.UserAttrs) {
		t.Fatalf("trial %d: user attributes %s on the page, API %v", tr.Number, attrs, tr.UserAttrs)
	}
	// The intermediate-value curve; none is drawn without values.
	var curve [][2]float64
	h.eval(`document.getElementById('trial-curve-chart').hidden ? [] : xbo.charts['trial-curve-chart'].getOption().series[0].data`, &curve)
	want := make([][2]float64, 0, len(tr.Intermediate))
	for _, iv := range tr.Intermediate {
		want = append(want, [2]float64{float64(iv.Step), iv.Value})
	}
	if !slices.Equal(curve, want) {
		t.Fatalf("trial %d: intermediate curve %v, API %v", tr.Number, curve, want)
	}
}

// sameJSON says whether a page's decoded JSON values equal the API's; a
// null on the page stands for a name the API leaves out.
func sameJSON(page map[string]json.RawMessage, api map[string]any) bool {
	got := map[string]any{}
	for k, raw := range page {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return false
		}
		if v != nil {
			got[k] = v
		}
	}
	if len(got) == 0 && len(api) == 0 {
		return true
	}
	return reflect.DeepEqual(got, api)
}

func checkHistory(t *testing.T, h *harness, d demo) {
	h.show("history")
	// Timeline: one bar per trial from its start to its finish, on its
	// worker's row, in its state's series.
	var tl struct {
		Workers []string                `json:"workers"`
		Bars    int                     `json:"bars"`
		ByState map[string][][5]float64 `json:"byState"`
	}
	h.eval(`xbo.timeline`, &tl)
	if tl.Bars != len(d.trials) || !slices.Equal(tl.Workers, []string{"worker-0", "worker-1", "worker-2"}) {
		t.Fatalf("timeline: %d bars on workers %v; want %d on worker-0..2", tl.Bars, tl.Workers, len(d.trials))
	}
	for _, tr := range d.trials {
		found := false
		for _, b := range tl.ByState[tr.State] {
			if int64(b[3]) == tr.Number {
				found = true
				if int64(b[0]) != tr.StartedAt.UnixMilli() || int64(b[1]) != tr.FinishedAt.UnixMilli() || tl.Workers[int(b[2])] != tr.Worker {
					t.Fatalf("timeline bar of trial %d: %v; API %v → %v on %s", tr.Number, b, tr.StartedAt, tr.FinishedAt, tr.Worker)
				}
			}
		}
		if !found {
			t.Fatalf("timeline: no %s bar for trial %d", tr.State, tr.Number)
		}
	}
	// The drawn bars: from the start to the end (at least minSpan long).
	var minSpan float64
	h.eval(`xbo.timeline.minSpan`, &minSpan)
	var drawnBars map[string][][4]float64 // start, row, end, trial
	h.eval(`Object.fromEntries(xbo.charts['timeline-chart'].getOption().series.map(s => [s.name, s.data.map(d => [d.coords[0][0], d.coords[0][1], d.coords[1][0], d.trial])]))`, &drawnBars)
	for _, tr := range d.trials {
		bars := drawnBars[tr.State]
		i := slices.IndexFunc(bars, func(b [4]float64) bool { return int64(b[3]) == tr.Number })
		start, end := float64(tr.StartedAt.UnixMilli()), float64(tr.FinishedAt.UnixMilli())
		if i < 0 || bars[i] != [4]float64{start, float64(slices.Index(tl.Workers, tr.Worker)), max(end, start+minSpan), float64(tr.Number)} {
			t.Fatalf("timeline: trial %d drawn as %v (minimum span %v); API %v → %v on %s", tr.Number, bars[max(0, i)], minSpan, start, end, tr.Worker)
		}
	}
	// Pointing at a bar describes it; a click opens its trial (below, after
	// the other checks of this view).
	pick := d.trials[len(d.trials)/2]
	barXY := func() [2]float64 {
		var xy [2]float64
		h.eval(fmt.Sprintf(`(() => { const c = xbo.charts['timeline-chart']; c.getDom().scrollIntoView(); const p = c.convertToPixel('grid', [%d, xbo.timeline.workers.indexOf(%q)]); const r = c.getDom().getBoundingClientRect(); return [r.left + p[0] + 1, r.top + p[1]]; })()`, pick.StartedAt.UnixMilli(), pick.Worker), &xy)
		return xy
	}
	xy := barXY()
	h.run("point at a bar", 5*time.Second, chromedp.MouseEvent("mouseMoved", xy[0], xy[1]))
	h.wait("tip shown", `!document.getElementById('timeline-tip').hidden`, 5*time.Second)
	var tip string
	h.eval(`document.getElementById('timeline-tip').textContent`, &tip)
	t.Logf("timeline tip at trial %d's start: %q", pick.Number, tip)
	if !strings.HasPrefix(tip, "trial ") || !strings.Contains(tip, " on "+pick.Worker) {
		t.Fatalf("timeline tip %q at trial %d's bar on %s", tip, pick.Number, pick.Worker)
	}
	// EDF: the sorted values against (i+1)/n.
	var values []float64
	for _, tr := range d.trials {
		if tr.State == "complete" {
			values = append(values, *tr.Value)
		}
	}
	slices.Sort(values)
	var edf [][2]float64
	h.eval(`xbo.charts['edf-chart'].getOption().series[0].data`, &edf)
	if len(edf) != len(values) {
		t.Fatalf("EDF: %d points for %d values", len(edf), len(values))
	}
	for i, v := range values {
		if edf[i] != [2]float64{v, float64(i+1) / float64(len(values))} {
			t.Fatalf("EDF point %d: %v, want (%v, %v)", i, edf[i], v, float64(i+1)/float64(len(values)))
		}
	}
	// Intermediate values: every complete trial's curve in number order,
	// and the failed trial's one value in the failed series.
	type point [3]float64
	curves := func(state string) []point {
		var pts []point
		h.eval(`(xbo.charts['curves-chart'].getOption().series.find(s => s.name === '`+state+`') || {data: []}).data.filter(d => d !== '-')`, &pts)
		return pts
	}
	var want []point
	for _, tr := range d.trials {
		if tr.State == "complete" {
			for _, iv := range tr.Intermediate {
				want = append(want, point{float64(iv.Step), iv.Value, float64(tr.Number)})
			}
		}
	}
	if got := curves("complete"); !slices.Equal(got, want) || len(want) != 72 {
		t.Fatalf("intermediate curves of complete trials: %d points, API %d", len(got), len(want))
	}
	if got := curves("failed"); !slices.Equal(got, []point{{1, 7.5, float64(d.failed.Number)}}) {
		t.Fatalf("intermediate curve of the failed trial: %v", got)
	}
	// The timeline's tip writes times to the millisecond on purpose.
	checkSignificant(t, h, "edf-note")
	// The intermediate values' note writes a number only where it clips
	// one, which depends on the run's values (three workers, any order).
	checkSignificantWhen(t, h, "curves-panel", `!!(window.xbo.curves && document.getElementById('curves-note').textContent)`, `window.xbo.curves.clipped > 0`)
	h.audit("history")
	h.reachable("history", "view:overview", "summary:Timeline data")
	h.shoot("history")
	// The trial of the tip opens on a click.
	n, err := strconv.ParseInt(strings.Fields(tip)[1], 10, 64)
	if err != nil {
		t.Fatalf("timeline tip %q: %v", tip, err)
	}
	xy = barXY()
	h.run("click a bar", 5*time.Second, chromedp.MouseClickXY(xy[0], xy[1]))
	openedTrial(t, h, n)
	h.show("history")
}

func checkCompare(t *testing.T, h *harness) {
	ctx := context.Background()
	h.show("compare")
	h.run("tick demo-random", 5*time.Second, chromedp.Click(chromedp.CSS(`#compare-studies input[value="demo-random"]`)))
	h.wait("two studies compared", `xbo.compare && xbo.compare.length === 2 && location.hash.includes('with=demo-random')`, 10*time.Second)
	var cmp []struct {
		Name string  `json:"name"`
		Best float64 `json:"best"`
		N    int     `json:"n"`
	}
	h.eval(`xbo.compare`, &cmp)
	var lines [][][2]float64
	h.eval(`xbo.charts['compare-chart'].getOption().series.map(s => s.data)`, &lines)
	for i, name := range []string{"demo", "demo-random"} {
		best, err := h.c.Best(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		done, err := h.c.Trials(ctx, name, "complete")
		if err != nil {
			t.Fatal(err)
		}
		last := lines[i][len(lines[i])-1]
		if cmp[i].Name != name || cmp[i].Best != *best.Value || cmp[i].N != len(done) || last[1] != *best.Value || last[0] != float64(done[len(done)-1].Number) {
			t.Fatalf("comparison line %d: %+v ending at %v; API %s best %v of %d complete trials", i, cmp[i], last, name, *best.Value, len(done))
		}
		// Best so far: never worse than before, each step a trial's value.
		for k := 1; k < len(lines[i]); k++ {
			if lines[i][k][1] > lines[i][k-1][1] {
				t.Fatalf("comparison line %s rises at %v", name, lines[i][k])
			}
		}
	}
	// A log value axis when every best is positive (both are here).
	h.run("log axis", 5*time.Second, chromedp.Click(chromedp.CSS(`#compare-log`)))
	h.wait("log axis", `xbo.charts['compare-chart'].getOption().yAxis[0].type === 'log'`, 5*time.Second)
	h.audit("compare")
	h.reachable("compare", "input:demo-random", "compare-log", "summary:Comparison data")
	h.shoot("compare")
}

// checkLive: a worker tells one more trial; the page follows without
// reload, the Shapley panel says it is stale and the PDP recomputes.
func checkLive(t *testing.T, h *harness) {
	ctx := context.Background()
	h.show("explain")
	if err := h.c.Optimize(ctx, "demo", 1, func(_ context.Context, tr *client.Trial) (float64, error) { return demoObjective(tr) }); err != nil {
		t.Fatal(err)
	}
	h.wait("live update", `window.xbo.state.trials.size === 26 && document.getElementById('summary').textContent.includes('25 complete')`, 10*time.Second)
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
	// The table of budgets follows too: the new trial is complete (final
	// values of 25 trials) but reported no intermediate value.
	h.wait("budgets follow", `xbo.budgets && xbo.budgets.final === 25 && xbo.budgets.curves === 24`, 40*time.Second)
	h.show("overview")
	h.wait("trace follows", `window.xbo.trace.n === 25`, 10*time.Second)
}

// checkStates: a pruned trial is drawn marked (dashed, a cross where it
// stopped) and a state the page does not know is shown under its own name.
// The pruned trial goes through the API when the store knows the state
// (branch pruners adds it); otherwise, like the unknown state, which no
// server sends today, it is handed to the page in the API's event form.
func checkStates(t *testing.T, h *harness) {
	ctx := context.Background()
	c := client.New(h.base, client.WithWorker("worker-1"))
	tr, err := c.Ask(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	for step, v := range []float64{4, 3.5} {
		if _, err := c.Report(ctx, "demo", tr.Number, int64(step+1), v); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	event := func(number int64, state string, iv []client.Intermediate) map[string]any {
		return map[string]any{"number": number, "state": state, "params": tr.Params, "intermediate": iv, "worker": "worker-1",
			"acquisition": "ei", "created_at": now.Add(-2 * time.Second), "started_at": now.Add(-time.Second), "finished_at": now, "version": 1 << 40}
	}
	var inject []map[string]any
	if code, body := h.postStatus(fmt.Sprintf("/api/studies/demo/trials/%d/tell", tr.Number), map[string]any{"state": "pruned"}); code == http.StatusOK {
		t.Logf("trial %d pruned through the API", tr.Number)
	} else {
		t.Logf("the server does not prune yet (%d %s): the page is given trial %d as pruned", code, strings.TrimSpace(body), tr.Number)
		inject = append(inject, event(tr.Number, "pruned", []client.Intermediate{{Step: 1, Value: 4}, {Step: 2, Value: 3.5}}))
	}
	const unknown = "paused-by-operator"
	inject = append(inject, event(9999, unknown, []client.Intermediate{{Step: 1, Value: 2}}))
	raw, _ := json.Marshal(map[string]any{"trials": inject})
	h.eval(`(() => { xbo.receive(`+string(raw)+`); return true; })()`, new(bool))
	h.show("history")
	h.wait("pruned drawn", fmt.Sprintf(`xbo.curves && xbo.curves.byState.pruned === 1 && xbo.curves.byState[%q] === 1 && xbo.curves.stops === 1`, unknown), 10*time.Second)
	var pruned struct {
		Dashed string       `json:"dashed"`
		Stops  [][3]float64 `json:"stops"`
		Colour string       `json:"colour"`
		Other  string       `json:"other"`
	}
	h.eval(fmt.Sprintf(`(() => { const s = xbo.charts['curves-chart'].getOption().series; const f = (n) => s.find(x => x.name === n);
		return {dashed: f('pruned').lineStyle.type, stops: f('pruned here').data, colour: f('pruned').color, other: f(%q).color}; })()`, unknown), &pruned)
	if pruned.Dashed != "dashed" || !slices.Equal(pruned.Stops, [][3]float64{{2, 3.5, float64(tr.Number)}}) || pruned.Colour == pruned.Other {
		t.Fatalf("pruned trial %d drawn as %+v", tr.Number, pruned)
	}
	var bars map[string]int
	h.eval(`Object.fromEntries(Object.entries(xbo.timeline.byState).map(([k, v]) => [k, v.length]))`, &bars)
	if bars["pruned"] != 1 || bars[unknown] != 1 {
		t.Fatalf("timeline bars by state: %v", bars)
	}
	h.shoot("history-states")
	h.show("overview")
	setControl(h, "state-filter", unknown, "change")
	if got := rowNumbers(h); !slices.Equal(got, []int64{9999}) {
		t.Fatalf("state filter %s: rows %v", unknown, got)
	}
	h.run("clear filters", 5*time.Second, chromedp.Click(chromedp.CSS(`#filters-clear`)))
	h.run("open the unknown-state trial", 5*time.Second, chromedp.Navigate(h.base+"/#study=demo&trial=9999"))
	openedTrial(t, h, 9999)
	var st string
	h.eval(`document.querySelector('#trial-facts [data-k=state] td').textContent`, &st)
	if st != unknown {
		t.Fatalf("trial 9999's state shows %q", st)
	}
}

// wideSpace has a parameter of every kind: a log float, an int,
// categorical choices that are numbers, booleans and strings, and a
// parameter active only under one choice.
const wideSpace = `{"objective":"maximize","params":[
	{"name":"learning_rate","type":"float","low":0.0001,"high":1,"log":true},
	{"name":"layers","type":"int","low":1,"high":8},
	{"name":"batch","type":"categorical","choices":[16,32,64]},
	{"name":"batch_norm","type":"categorical","choices":[true,false]},
	{"name":"optimizer","type":"categorical","choices":["sgd","adam"]},
	{"name":"momentum","type":"float","low":0,"high":0.99,"condition":{"parent":"optimizer","values":["sgd"]}}]}`

// checkWide: a maximize study over wideSpace. The page writes every value
// by its JSON type (as the API sends it), filters and draws categorical
// levels whatever their type, shows an inactive parameter as such, and
// draws the desirability paths of the four parameters contributing most
// with the other two summed.
func checkWide(t *testing.T, h *harness) {
	ctx := context.Background()
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "wide", Space: json.RawMessage(wideSpace),
		Optimizer: map[string]any{"strategy": "ei", "seed": 7, "initial_size": 6, "candidates": 200}}); err != nil {
		t.Fatal(err)
	}
	err := client.New(h.base, client.WithWorker("w")).Optimize(ctx, "wide", 12, func(_ context.Context, tr *client.Trial) (float64, error) {
		lr, err := tr.Float("learning_rate")
		if err != nil {
			return 0, err
		}
		layers, err := tr.Float("layers")
		if err != nil {
			return 0, err
		}
		return -math.Pow(math.Log10(lr)+2, 2) - 0.1*math.Abs(layers-4), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d := readStudy(t, h, "wide")
	st, err := h.c.Study(ctx, "wide")
	if err != nil {
		t.Fatal(err)
	}
	var sp struct {
		Params []struct {
			Name    string `json:"name"`
			Choices []any  `json:"choices"`
		} `json:"params"`
	}
	if err := json.Unmarshal(st.Space, &sp); err != nil {
		t.Fatal(err)
	}
	h.run("open wide", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=wide"))
	h.wait("wide rendered", `document.body.dataset.ready === 'wide'`, 15*time.Second)
	var best struct {
		Best float64 `json:"best"`
	}
	h.eval(`window.xbo.trace`, &best)
	if best.Best != *d.best.Value {
		t.Fatalf("maximize study: trace best %v, API best %v", best.Best, *d.best.Value)
	}
	// The table writes each parameter as the API sends it.
	var cells map[string]map[string]string
	h.eval(`(() => { const keys = [...document.querySelectorAll('#trials-table th button')].map(b => b.dataset.key);
		return Object.fromEntries([...document.querySelectorAll('#trials-table tbody tr')].map(tr => [tr.dataset.number, Object.fromEntries(keys.map((k, i) => [k, tr.cells[i].textContent]))])); })()`, &cells)
	for _, tr := range d.trials {
		for _, p := range sp.Params {
			want := ""
			if v, ok := tr.Params[p.Name]; ok {
				want = pageText(v)
			}
			if got := cells[strconv.FormatInt(tr.Number, 10)]["p:"+p.Name]; got != want {
				t.Fatalf("wide: trial %d's %s shows %q, API %v", tr.Number, p.Name, got, tr.Params[p.Name])
			}
		}
	}
	// Each categorical filters by its level, whatever the level's type;
	// the parallel coordinates place a level at its index.
	// The lines are drawn worst first, best last: par is put back in
	// trial number order.
	var drawn struct {
		Data   [][]any `json:"data"`
		Trials []int64 `json:"trials"`
	}
	h.eval(`({data: xbo.charts['parallel-chart'].getOption().series[0].data, trials: xbo.parallelTrials})`, &drawn)
	par := make([][]any, len(d.trials))
	for i, n := range drawn.Trials {
		par[slices.IndexFunc(d.trials, func(tr client.Trial) bool { return tr.Number == n })] = drawn.Data[i]
	}
	for j, p := range sp.Params {
		if len(p.Choices) == 0 {
			continue
		}
		for i, c := range p.Choices {
			setControl(h, "param-filter", p.Name, "change")
			setControl(h, "param-choice", strconv.Itoa(i), "change")
			if got, want := rowNumbers(h), numbersWhere(d, func(tr client.Trial) bool { return sameLevel(c, tr.Params[p.Name]) }); !slices.Equal(got, want) || len(want) == 0 {
				t.Fatalf("wide: %s = %v: rows %v, want %v", p.Name, c, got, want)
			}
		}
		for k, tr := range d.trials { // every wide trial is complete, in number order
			if par[k][j] != float64(slices.IndexFunc(p.Choices, func(c any) bool { return sameLevel(c, tr.Params[p.Name]) })) {
				t.Fatalf("wide: parallel coordinates put trial %d's %s (%v) at %v", tr.Number, p.Name, tr.Params[p.Name], par[k][j])
			}
		}
	}
	h.run("clear filters", 5*time.Second, chromedp.Click(chromedp.CSS(`#filters-clear`)))
	h.shoot("wide-overview")
	// A trial whose momentum is inactive (optimizer adam).
	inactive := slices.IndexFunc(d.trials, func(tr client.Trial) bool { _, ok := tr.Params["momentum"]; return !ok })
	if inactive < 0 {
		t.Fatal("wide: no trial with momentum inactive")
	}
	tr := d.trials[inactive]
	h.run("open a trial", 5*time.Second, chromedp.Navigate(h.base+fmt.Sprintf("/#study=wide&trial=%d", tr.Number)))
	openedTrial(t, h, tr.Number)
	checkTrialFacts(t, h, tr)
	var off string
	h.eval(`document.querySelector('#trial-params tr[data-param=momentum] td:last-child').textContent`, &off)
	if off != "inactive (active when optimizer is sgd)" {
		t.Fatalf("wide: trial %d's momentum shows %q", tr.Number, off)
	}
	h.wait("wide trial's Shapley", fmt.Sprintf(`xbo.trialShapley && xbo.trialShapley.trial === %d`, tr.Number), 30*time.Second)
	checkShapley(t, h, "wide", tr.Number, "xbo.trialShapley", "trial-shapley-data")
	h.shoot("wide-trial")
	// Desirability paths: four lines in distinct colours, the rest summed.
	h.show("explain")
	h.run("click paths", 5*time.Second, chromedp.Click(chromedp.CSS(`#paths-go`)))
	h.wait("paths drawn", `xbo.paths && xbo.pathsDrawn && document.querySelectorAll('#paths-data td[data-v=phi]').length > 0`, 60*time.Second)
	var paths pathsAnswer
	if err := h.c.Explain(ctx, "wide", "paths", nil, &paths); err != nil {
		t.Fatal(err)
	}
	order := paths.byContribution(shapley.OutputCB)
	var lines []struct {
		Name   string       `json:"name"`
		Colour string       `json:"colour"`
		Data   [][2]float64 `json:"data"`
	}
	h.eval(`xbo.charts['paths-chart'].getOption().series.map(s => ({name: s.name, colour: s.color, data: s.data}))`, &lines)
	if len(paths.Params) != 6 || len(lines) != 5 || lines[4].Name != "other 2 (sum)" {
		t.Fatalf("wide paths: %d lines %v for parameters %v", len(lines), lines, paths.Params)
	}
	colours := map[string]bool{}
	for k, line := range lines {
		colours[line.Colour] = true
		for i, st := range paths.Steps {
			a, _ := st.Explanation.Output(shapley.OutputCB)
			want := 0.0
			if k < 4 {
				want = a.Phi[order[k]]
				if line.Name != paths.Params[order[k]] {
					t.Fatalf("wide paths: line %d is %s, want %s (order %v of %v)", k, line.Name, paths.Params[order[k]], order, paths.Params)
				}
			} else {
				want = a.Phi[order[4]] + a.Phi[order[5]]
			}
			if line.Data[i][0] != float64(st.Trial) || math.Abs(line.Data[i][1]-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("wide paths: line %s at trial %d is %v, API %v", line.Name, st.Trial, line.Data[i], want)
			}
		}
	}
	if len(colours) != 5 {
		t.Fatalf("wide paths: colours %v are not distinct", colours)
	}
	h.audit("wide explanations")
	h.shoot("wide-explain")
}

// sameLevel says whether a trial's value is a categorical choice: the same
// JSON value, or its spelling (a server may send the level 64 as "64").
func sameLevel(choice, v any) bool {
	return reflect.DeepEqual(choice, v) || pageText(choice) == pageText(v)
}

// checkBig opens a study of 10,000 trials: the first render, and each view
// drawn, are timed (logged, not asserted).
func checkBig(t *testing.T, h *harness) {
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
	checkBigPlots(t, h)
	for _, view := range []string{"history", "explain", "compare"} {
		h.show(view)
		var ms float64
		h.eval(`window.xbo.timings['view:`+view+`']`, &ms)
		t.Logf("10000 trials: the %s view drawn in %.0f ms", view, ms)
	}
	var edf struct {
		N     int `json:"n"`
		Drawn int `json:"drawn"`
	}
	h.eval(`xbo.edf`, &edf)
	if edf.N != 10000 || edf.Drawn != 2000 {
		t.Fatalf("big EDF: %+v", edf)
	}
	h.show("history")
	h.screenshot("7-big-history")
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
