package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"xbo/client"
	"xbo/explain"
	"xbo/pareto"
	"xbo/space"
)

// moSpace: two objectives (both minimized) and a memory constraint, over a
// float, an int and a categorical parameter.
const moSpace = `{"objectives":[{"name":"error","direction":"minimize"},{"name":"size_mb","direction":"minimize"}],
	"constraints":["memory"],
	"params":[
	{"name":"x","type":"float","low":0,"high":1},
	{"name":"width","type":"int","low":1,"high":8},
	{"name":"act","type":"categorical","choices":["relu","tanh"]}]}`

// moObjective trades error against size (a small x is accurate but large);
// a wide model breaks the memory limit.
func moObjective(t *client.Trial) (client.Outcome, error) {
	x, err := t.Float("x")
	if err != nil {
		return client.Outcome{}, err
	}
	w, err := t.Float("width")
	if err != nil {
		return client.Outcome{}, err
	}
	e := x
	if t.Params["act"] == "tanh" {
		e += 0.1
	}
	return client.Outcome{Values: []float64{e, w * (1.2 - math.Sqrt(x))}, Constraints: []float64{0.5*w + x - 3}}, nil
}

// front is what the API says a study's trials are: the Pareto front
// (GET best_trials), the feasible trials it dominates, the infeasible ones
// (a constraint value above 0), all in number order.
type front struct {
	all                          []client.Trial
	front, dominated, infeasible []int64
	values                       map[int64][]float64
	dirs                         []space.Direction
	names                        []string
	ref                          []float64
	hypervolume                  [][2]float64 // after each complete trial
}

func readFront(t *testing.T, h *harness, study string, names []string, dirs []space.Direction) front {
	t.Helper()
	ctx := context.Background()
	all, err := h.c.Trials(ctx, study)
	if err != nil {
		t.Fatal(err)
	}
	best, err := h.c.BestTrials(ctx, study)
	if err != nil {
		t.Fatal(err)
	}
	f := front{all: all, values: map[int64][]float64{}, dirs: dirs, names: names}
	onFront := map[int64]bool{}
	for _, tr := range best {
		f.front = append(f.front, tr.Number)
		onFront[tr.Number] = true
	}
	var feasible [][]float64
	for _, tr := range all {
		if tr.State != "complete" {
			continue
		}
		f.values[tr.Number] = tr.Values
		switch {
		case slices.ContainsFunc(tr.Constraints, func(c float64) bool { return c > 0 }):
			f.infeasible = append(f.infeasible, tr.Number)
		case onFront[tr.Number]:
		default:
			f.dominated = append(f.dominated, tr.Number)
		}
		if !slices.ContainsFunc(tr.Constraints, func(c float64) bool { return c > 0 }) {
			feasible = append(feasible, tr.Values)
		}
	}
	f.ref = pareto.ReferencePoint(feasible, dirs)
	// The hypervolume after each complete trial, by Go's package pareto.
	var sofar [][]float64
	for _, tr := range all {
		if tr.State != "complete" {
			continue
		}
		if !slices.ContainsFunc(tr.Constraints, func(c float64) bool { return c > 0 }) {
			sofar = append(sofar, tr.Values)
		}
		hv := 0.0
		if len(sofar) > 0 {
			if hv, err = pareto.Hypervolume(sofar, f.ref, dirs); err != nil {
				t.Fatal(err)
			}
		}
		f.hypervolume = append(f.hypervolume, [2]float64{float64(tr.Number), hv})
	}
	return f
}

func closeTo(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// checkMultiObjective: a study with two objectives and a constraint,
// optimized over HTTP (EHVI), with one dominated and one infeasible
// trial added: the overview leads with the front (the right trials in each
// class, the boundary, the hypervolume after each trial against the stated
// reference point, all as the API and Go's package pareto give them), the
// table has a column per objective and feasibility, the trial view the
// constraint values and the trial's place on the front, the explanations
// an objective selector that reaches the API; a second study with the
// same objectives is compared by hypervolume, and a study with three
// objectives is drawn as a scatter matrix.
func checkMultiObjective(t *testing.T, h *harness) {
	ctx := context.Background()
	start := time.Now()
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "mo", Space: json.RawMessage(moSpace),
		Optimizer: map[string]any{"seed": 4, "initial_size": 6, "candidates": 200}}); err != nil {
		t.Fatal(err)
	}
	c := client.New(h.base, client.WithWorker("mo-0"))
	for range 14 {
		tr, err := c.Ask(ctx, "mo")
		if err != nil {
			t.Fatal(err)
		}
		o, err := moObjective(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.TellOutcome(ctx, "mo", tr.Number, o); err != nil {
			t.Fatal(err)
		}
	}
	names, dirs := []string{"error", "size_mb"}, []space.Direction{space.Minimize, space.Minimize}
	f := readFront(t, h, "mo", names, dirs)
	// A trial dominated by construction (worse than the first of the
	// front in both objectives), and one that breaks the constraint.
	src := f.values[f.front[0]]
	params := map[string]any{"x": 0.5, "width": 2, "act": "relu"}
	if _, err := c.AddOutcome(ctx, "mo", params, client.Outcome{Values: []float64{src[0] + 0.05, src[1] + 0.5}, Constraints: []float64{-1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddOutcome(ctx, "mo", map[string]any{"x": 0.9, "width": 8, "act": "relu"}, client.Outcome{Values: []float64{0.9, 2.1}, Constraints: []float64{1.9}}); err != nil {
		t.Fatal(err)
	}
	f = readFront(t, h, "mo", names, dirs)
	if len(f.front) < 2 || len(f.dominated) == 0 || len(f.infeasible) == 0 {
		t.Fatalf("the study should have a front of 2 or more, dominated and infeasible trials: %v, %v, %v", f.front, f.dominated, f.infeasible)
	}
	t.Logf("multi-objective study: %d trials in %v; front %v, dominated %v, infeasible %v", len(f.all), time.Since(start), f.front, f.dominated, f.infeasible)

	h.run("open mo", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=mo"))
	h.wait("mo rendered", `document.body.dataset.ready === 'mo'`, 15*time.Second)

	// The front leads the overview; there is no best-so-far trace.
	var shown struct {
		Trace, Pareto, HV bool
		Summary, Study    string
	}
	h.eval(`({trace: !document.getElementById('trace-panel').hidden, pareto: !document.getElementById('pareto-panel').hidden, hv: !document.getElementById('hv-panel').hidden,
		summary: document.querySelector('#summary p').textContent, study: document.querySelector('#studies button[data-study="mo"]').textContent})`, &shown)
	wantSummary := fmt.Sprintf("minimize error, minimize size_mb subject to memory ≤ 0 · %d trials (%d complete) · Pareto front: %d trials, %d infeasible",
		len(f.all), len(f.all), len(f.front), len(f.infeasible))
	if shown.Trace || !shown.Pareto || !shown.HV || shown.Summary != wantSummary || strings.Contains(shown.Summary, "best") || !strings.Contains(shown.Study, "2 objectives") {
		t.Fatalf("multi-objective overview: %+v; want the summary %q", shown, wantSummary)
	}
	checkParetoScatter(t, h, f)
	checkHypervolume(t, h, f)

	// The table: a column per objective and one of feasibility.
	var cols []string
	h.eval(`[...document.querySelectorAll('#trials-table th button')].map(b => b.dataset.key)`, &cols)
	if !slices.Equal(cols[:5], []string{"number", "state", "o:0", "o:1", "feasible"}) {
		t.Fatalf("multi-objective table columns %v", cols)
	}
	var rows []struct {
		N        int64  `json:"n"`
		Feasible string `json:"feasible"`
		Text     string `json:"text"`
		E, S     string
	}
	h.eval(`[...document.querySelectorAll('#trials-table tbody tr')].map(tr => ({n: Number(tr.dataset.number), feasible: tr.cells[4].dataset.feasible, text: tr.cells[4].textContent, e: tr.cells[2].textContent, s: tr.cells[3].textContent}))`, &rows)
	if len(rows) != len(f.all) {
		t.Fatalf("table has %d rows, the study %d trials", len(rows), len(f.all))
	}
	for _, r := range rows {
		inf := slices.Contains(f.infeasible, r.N)
		want := map[bool]string{true: "no: memory", false: "yes"}[inf]
		v := f.values[r.N]
		if r.Text != want || r.Feasible != strconv.FormatBool(!inf) || r.E != pageText(v[0]) || r.S != pageText(v[1]) {
			t.Fatalf("table row of trial %d: %+v; want feasible %q and values %v", r.N, r, want, v)
		}
	}
	h.audit("multi-objective overview")
	h.shoot("mo-overview")

	// The trial view: every objective, the constraint, and the trial's
	// place (front, dominated by which trial, infeasible and why).
	added := f.all[len(f.all)-2].Number // the dominated trial added above
	for _, c := range []struct {
		n    int64
		want string
	}{
		{f.front[0], fmt.Sprintf(" — on the Pareto front (one of %d)", len(f.front))},
		{added, fmt.Sprintf(" — dominated by trial %d", f.front[0])},
		{f.infeasible[0], " — infeasible (breaks memory)"},
	} {
		h.run("open trial", 5*time.Second, chromedp.Navigate(h.base+fmt.Sprintf("/#study=mo&trial=%d", c.n)))
		openedTrial(t, h, c.n)
		var tv struct {
			Summary string            `json:"summary"`
			Outcome map[string]string `json:"outcome"`
			Hidden  bool              `json:"hidden"`
		}
		h.eval(`({summary: document.getElementById('trial-summary').textContent, hidden: document.getElementById('trial-outcome').hidden,
			outcome: Object.fromEntries([...document.querySelectorAll('#trial-outcome tr')].map(tr => [tr.dataset.objective || tr.dataset.constraint || tr.dataset.k, tr.cells[1].textContent]))})`, &tv)
		tr := f.byNumber(c.n)
		kept := map[bool]string{true: "kept", false: "violated"}[tr.Constraints[0] <= 0]
		if tv.Hidden || !strings.HasSuffix(tv.Summary, c.want) || !strings.HasPrefix(tv.Outcome["error"], pageText(tr.Values[0])+" (minimized") ||
			!strings.HasPrefix(tv.Outcome["size_mb"], pageText(tr.Values[1])+" (minimized") || tv.Outcome["memory"] != pageText(tr.Constraints[0])+" — "+kept {
			t.Fatalf("trial %d view: %+v; want the summary to end with %q, values %v, constraint %v (%s)", c.n, tv, c.want, tr.Values, tr.Constraints, kept)
		}
	}
	h.audit("multi-objective trial view")
	h.shoot("mo-trial")

	checkObjectiveSelectors(t, h)
	h.show("history")
	h.shoot("mo-history")
	checkCompareFronts(t, h, f)
	checkThreeObjectives(t, h)
	checkConstrainedSingle(t, h)
	t.Logf("multi-objective checks took %v", time.Since(start))
}

func (f front) byNumber(n int64) client.Trial {
	for _, tr := range f.all {
		if tr.Number == n {
			return tr
		}
	}
	return client.Trial{}
}

// checkParetoScatter compares the scatter's three series and the table of
// Pareto-optimal trials with the API.
func checkParetoScatter(t *testing.T, h *harness, f front) {
	var page struct {
		Front, Dominated, Infeasible []int64
		Series                       []struct {
			Name   string       `json:"name"`
			Type   string       `json:"type"`
			Data   [][3]float64 `json:"data"`
			Symbol string       `json:"symbol"`
		}
		Table []struct {
			N      int64      `json:"n"`
			Values [2]float64 `json:"values"`
			C      float64    `json:"c"`
		}
		XName, YName string
	}
	h.eval(`(() => { const o = xbo.charts['pareto-chart'].getOption(); const p = xbo.pareto;
		return {front: p.front, dominated: p.dominated, infeasible: p.infeasible, xName: o.xAxis[0].name, yName: o.yAxis[0].name,
			series: o.series.map(s => ({name: s.name, type: s.type, symbol: s.symbol, data: s.name !== 'reference point' ? s.data.map(d => d.length === 2 ? [...d, -1] : d) : []})),
			table: [...document.querySelectorAll('#pareto-data tbody tr')].map(tr => ({n: Number(tr.dataset.trial),
				values: [Number(tr.querySelector('td[data-v=error]').dataset.x), Number(tr.querySelector('td[data-v=size_mb]').dataset.x)],
				c: Number(tr.querySelector('td[data-c="0"]').dataset.x)}))}; })()`, &page)
	if !slices.Equal(page.Front, f.front) || !slices.Equal(page.Dominated, f.dominated) || !slices.Equal(page.Infeasible, f.infeasible) {
		t.Fatalf("Pareto classes on the page: front %v, dominated %v, infeasible %v; API: %v, %v, %v",
			page.Front, page.Dominated, page.Infeasible, f.front, f.dominated, f.infeasible)
	}
	if page.XName != "error (minimized: lower is better)" || page.YName != "size_mb (minimized: lower is better)" {
		t.Fatalf("Pareto axes named %q and %q", page.XName, page.YName)
	}
	want := map[string][]int64{"Pareto front": f.front, "dominated": f.dominated, "infeasible": f.infeasible}
	seen := map[string]bool{}
	for _, s := range page.Series {
		nums, ok := want[s.Name]
		switch {
		case s.Type == "line" && s.Name == "Pareto front":
			// The boundary: through every front point, a corner between neighbours.
			if len(s.Data) != 2*len(f.front)-1 {
				t.Fatalf("the front's boundary has %d points for %d trials", len(s.Data), len(f.front))
			}
		case s.Type == "scatter" && ok:
			var got []int64
			for _, d := range s.Data {
				n := int64(d[2])
				got = append(got, n)
				if v := f.values[n]; d[0] != v[0] || d[1] != v[1] {
					t.Fatalf("%s: trial %d drawn at %v, its values are %v", s.Name, n, d[:2], v)
				}
			}
			if !slices.Equal(got, nums) {
				t.Fatalf("series %q draws trials %v, want %v", s.Name, got, nums)
			}
			seen[s.Name] = true
		}
	}
	if len(seen) != 3 {
		t.Fatalf("the scatter lacks a class: %v", page.Series)
	}
	if len(page.Table) != len(f.front) {
		t.Fatalf("the table of Pareto-optimal trials has %d rows, the front %d trials", len(page.Table), len(f.front))
	}
	for i, r := range page.Table {
		tr := f.byNumber(f.front[i])
		if r.N != tr.Number || r.Values[0] != tr.Values[0] || r.Values[1] != tr.Values[1] || r.C != tr.Constraints[0] {
			t.Fatalf("Pareto table row %d: %+v; API trial %d: %v, %v", i, r, tr.Number, tr.Values, tr.Constraints)
		}
	}
}

// checkHypervolume compares the hypervolume after every complete trial
// with Go's pareto.Hypervolume against the same reference point, which the
// chart states.
func checkHypervolume(t *testing.T, h *harness, f front) {
	var page struct {
		Ref   []float64    `json:"ref"`
		HV    [][3]float64 `json:"hv"`
		Title string       `json:"title"`
		Rows  int          `json:"rows"`
	}
	h.eval(`({ref: xbo.pareto.ref, hv: xbo.pareto.hypervolume, title: xbo.charts['hv-chart'].getOption().title[0].text,
		rows: document.querySelectorAll('#hv-data tbody tr').length})`, &page)
	if len(page.Ref) != 2 || !closeTo(page.Ref[0], f.ref[0]) || !closeTo(page.Ref[1], f.ref[1]) {
		t.Fatalf("reference point on the page %v, by the rule %v", page.Ref, f.ref)
	}
	if want := fmt.Sprintf("reference point: error = %s, size_mb = %s", pageText(f.ref[0]), pageText(f.ref[1])); page.Title != want {
		t.Fatalf("hypervolume chart titled %q, want %q", page.Title, want)
	}
	if len(page.HV) != len(f.hypervolume) {
		t.Fatalf("hypervolume after %d trials on the page, %d complete trials", len(page.HV), len(f.hypervolume))
	}
	for i, w := range f.hypervolume {
		if got := page.HV[i]; got[0] != w[0] || !closeTo(got[1], w[1]) {
			t.Fatalf("hypervolume after trial %v: page %v, pareto.Hypervolume %v", w[0], got[1], w[1])
		}
	}
	if last := f.hypervolume[len(f.hypervolume)-1][1]; last <= 0 || page.Rows < 2 {
		t.Fatalf("final hypervolume %v, %d table rows", last, page.Rows)
	}
}

// checkObjectiveSelectors: every per-objective explanation panel has an
// objective selector; choosing size_mb asks the API with objective=size_mb
// and draws its answer (the same numbers as the API's, named in the axis
// and the freshness line). Desirability paths, which the API refuses for
// such a study, say so.
func checkObjectiveSelectors(t *testing.T, h *harness) {
	ctx := context.Background()
	h.run("open mo explanations", 20*time.Second, chromedp.Navigate(h.base+"/#study=mo&view=explain"))
	h.wait("mo explain shown", `document.body.dataset.view === 'explain'`, 10*time.Second)
	var sel struct {
		Shown   []string `json:"shown"`
		Options []string `json:"options"`
		Paths   bool     `json:"paths"`
		Note    string   `json:"note"`
	}
	h.eval(`({shown: [...document.querySelectorAll('select.objective-select')].filter(s => s.offsetParent !== null).map(s => s.id),
		options: [...document.getElementById('pdp-objective').options].map(o => o.value),
		paths: document.getElementById('paths-go').disabled, note: document.getElementById('paths-note').textContent})`, &sel)
	if !slices.Equal(sel.Shown, []string{"importance-objective", "pdp-objective", "proposal-objective"}) || !slices.Equal(sel.Options, []string{"error", "size_mb"}) ||
		!sel.Paths || !strings.HasPrefix(sel.Note, "Not available for a study with several objectives") {
		t.Fatalf("objective selectors: %+v", sel)
	}
	h.wait("PDP of the first objective", `xbo.pdp && xbo.pdp.objective === 'error' && xbo.explained.pdp`, 60*time.Second)
	setControl(h, "pdp-objective", "size_mb", "change")
	h.wait("PDP of size_mb", `xbo.pdp && xbo.pdp.objective === 'size_mb' && document.getElementById('pdp-fresh').textContent.includes('objective size_mb')`, 60*time.Second)
	var page struct {
		Mean  []float64 `json:"mean"`
		Param string    `json:"param"`
		Axis  string    `json:"axis"`
	}
	h.eval(`({mean: xbo.pdp.mean, param: xbo.pdp.param, axis: xbo.charts['pdp-chart'].getOption().yAxis[0].name})`, &page)
	var api struct {
		Objective string    `json:"objective"`
		Mean      []float64 `json:"mean"`
	}
	if err := h.c.Explain(ctx, "mo", "pdp", url.Values{"param": {page.Param}, "objective": {"size_mb"}}, &api); err != nil {
		t.Fatal(err)
	}
	if api.Objective != "size_mb" || !slices.Equal(page.Mean, api.Mean) || !strings.Contains(page.Axis, "of size_mb") {
		t.Fatalf("PDP of size_mb: page %v (axis %q), API %v (objective %q)", page.Mean, page.Axis, api.Mean, api.Objective)
	}
	setControl(h, "importance-objective", "size_mb", "change")
	h.wait("importance of size_mb", `xbo.importance && xbo.importance.objective === 'size_mb'`, 60*time.Second)
	setControl(h, "proposal-objective", "size_mb", "change")
	h.wait("Shapley of size_mb", `xbo.shapley && xbo.shapley.objective === 'size_mb' && document.getElementById('proposal-fresh').textContent.includes('objective size_mb')`, 60*time.Second)

	// Trade-offs: the panel's table and the Shapley values of a
	// Pareto-optimal trial are the API's; another front trial chosen in
	// the selector, or opened (as a click on the front does), is explained.
	first := checkTradeoff(t, h, "mo", -1)
	var options []int64
	h.eval(`[...document.getElementById('tradeoff-trial').options].map(o => Number(o.value))`, &options)
	other := options[(slices.Index(options, first)+1)%len(options)]
	setControl(h, "tradeoff-trial", strconv.FormatInt(other, 10), "change")
	checkTradeoff(t, h, "mo", other)
	opened := options[(slices.Index(options, other)+1)%len(options)]
	h.run("open a front trial", 5*time.Second, chromedp.Navigate(h.base+fmt.Sprintf("/#study=mo&trial=%d", opened)))
	openedTrial(t, h, opened)
	h.run("back to the explanations", 5*time.Second, chromedp.Navigate(h.base+"/#study=mo&view=explain"))
	checkTradeoff(t, h, "mo", opened)
	h.audit("multi-objective explanations")
	h.reachable("multi-objective explanations", "pdp-objective", "importance-objective", "proposal-objective", "tradeoff-trial", "tradeoff-refresh")
	h.shoot("mo-explain")
}

// checkCompareFronts: a second study with the same objectives is
// compared by the hypervolume of each front against one reference point.
func checkCompareFronts(t *testing.T, h *harness, f front) {
	ctx := context.Background()
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "mo-b", Space: json.RawMessage(moSpace), Optimizer: map[string]any{"strategy": "random", "seed": 1}}); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		tr := &client.Trial{Params: map[string]any{"x": 0.15 * float64(i+1), "width": float64(1 + i), "act": "relu"}}
		o, err := moObjective(tr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.c.AddOutcome(ctx, "mo-b", tr.Params, o); err != nil {
			t.Fatal(err)
		}
	}
	b := readFront(t, h, "mo-b", f.names, f.dirs)
	// The shared reference point: the rule over both studies' feasible trials.
	var feas [][]float64
	for _, s := range []front{f, b} {
		for n, v := range s.values {
			if !slices.Contains(s.infeasible, n) {
				feas = append(feas, v)
			}
		}
	}
	ref := pareto.ReferencePoint(feas, f.dirs)
	h.run("open the comparison", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=mo&view=compare&with=mo-b"))
	h.wait("mo compared", `document.body.dataset.ready === 'mo' && xbo.compare && xbo.compare.length === 2`, 20*time.Second)
	var page struct {
		Ref  []float64 `json:"ref"`
		Runs []struct {
			Name        string  `json:"name"`
			Hypervolume float64 `json:"hypervolume"`
			Front       int     `json:"front"`
		} `json:"runs"`
	}
	h.eval(`({ref: xbo.compareRef, runs: xbo.compare})`, &page)
	if len(page.Ref) != 2 || !closeTo(page.Ref[0], ref[0]) || !closeTo(page.Ref[1], ref[1]) {
		t.Fatalf("comparison's reference point %v, by the rule %v", page.Ref, ref)
	}
	for i, s := range []front{f, b} {
		var vals [][]float64
		for n, v := range s.values {
			if !slices.Contains(s.infeasible, n) {
				vals = append(vals, v)
			}
		}
		want, err := pareto.Hypervolume(vals, ref, f.dirs)
		if err != nil {
			t.Fatal(err)
		}
		if r := page.Runs[i]; !closeTo(r.Hypervolume, want) || r.Front != len(s.front) {
			t.Fatalf("comparison of %s: %+v; want hypervolume %v, front %d", r.Name, r, want, len(s.front))
		}
	}
	h.audit("multi-objective comparison")
	h.shoot("mo-compare")
}

// mo3Space: three objectives, one maximized, and two constraints.
const mo3Space = `{"objectives":[{"name":"error","direction":"minimize"},{"name":"throughput","direction":"maximize"},{"name":"latency_ms","direction":"minimize"}],
	"constraints":["memory","power"],
	"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1}]}`

// checkThreeObjectives: three objectives are drawn as a scatter matrix of
// every pair, each class in each panel.
func checkThreeObjectives(t *testing.T, h *harness) {
	ctx := context.Background()
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "mo3", Space: json.RawMessage(mo3Space), Optimizer: map[string]any{"strategy": "random", "seed": 1}}); err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		a, b := float64(i%4)/3, float64(i/4)/3
		o := client.Outcome{Values: []float64{a + 0.2*b, 10 * (1 - a + b), 5 + 20*b*b - 3*a}, Constraints: []float64{a + b - 1.5, 0.3 - b - a}}
		if _, err := h.c.AddOutcome(ctx, "mo3", map[string]any{"a": a, "b": b}, o); err != nil {
			t.Fatal(err)
		}
	}
	f := readFront(t, h, "mo3", []string{"error", "throughput", "latency_ms"}, []space.Direction{space.Minimize, space.Maximize, space.Minimize})
	if len(f.front) < 2 || len(f.dominated) == 0 || len(f.infeasible) == 0 {
		t.Fatalf("three objectives: front %v, dominated %v, infeasible %v", f.front, f.dominated, f.infeasible)
	}
	h.run("open mo3", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=mo3"))
	h.wait("mo3 rendered", `document.body.dataset.ready === 'mo3'`, 15*time.Second)
	var page struct {
		Grids  int `json:"grids"`
		Counts map[string][]int
		Front  []int64
		HV     [][3]float64 `json:"hv"`
	}
	h.eval(`(() => { const o = xbo.charts['pareto-chart'].getOption(); const counts = {};
		for (const s of o.series) (counts[s.name] = counts[s.name] || []).push(s.data.length);
		return {grids: o.grid.length, counts, front: xbo.pareto.front, hv: xbo.pareto.hypervolume}; })()`, &page)
	want := map[string][]int{"Pareto front": {len(f.front), len(f.front), len(f.front)}, "dominated": {len(f.dominated), len(f.dominated), len(f.dominated)},
		"infeasible": {len(f.infeasible), len(f.infeasible), len(f.infeasible)}}
	if page.Grids != 3 || !slices.Equal(page.Front, f.front) || fmt.Sprint(page.Counts) != fmt.Sprint(want) {
		t.Fatalf("three objectives: %d panels, front %v, points per series %v; want 3, %v, %v", page.Grids, page.Front, page.Counts, f.front, want)
	}
	for i, w := range f.hypervolume {
		if got := page.HV[i]; got[0] != w[0] || !closeTo(got[1], w[1]) {
			t.Fatalf("three objectives: hypervolume after trial %v: page %v, pareto.Hypervolume %v", w[0], got[1], w[1])
		}
	}
	h.audit("three objectives")
	h.shoot("mo3-overview")

	// Its trade-offs: a column per objective and one per pair (three),
	// throughput maximized (its conflicts are of the sign-aligned curves).
	h.show("explain")
	checkTradeoff(t, h, "mo3", -1)
	h.audit("three objectives' trade-offs")
	h.shoot("mo3-tradeoff")
}

// checkConstrainedSingle: a study with one objective and a constraint
// looks as one without, but for the feasibility column; its best is the
// best feasible trial (GET …/best), also on the trace's best-so-far line.
func checkConstrainedSingle(t *testing.T, h *harness) {
	ctx := context.Background()
	const sp = `{"objective":"minimize","constraints":["memory"],"params":[{"name":"x","type":"float","low":0,"high":1}]}`
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "so-c", Space: json.RawMessage(sp), Optimizer: map[string]any{"strategy": "random", "seed": 1}}); err != nil {
		t.Fatal(err)
	}
	// The lowest value breaks the constraint.
	for i, x := range []float64{0.9, 0.05, 0.5, 0.3, 0.7} {
		h.post("/api/studies/so-c/trials", map[string]any{"params": map[string]any{"x": x}, "value": x, "constraints": []float64{map[bool]float64{true: 1, false: -1}[i == 1]}})
	}
	best, err := h.c.Best(ctx, "so-c")
	if err != nil {
		t.Fatal(err)
	}
	h.run("open so-c", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=so-c"))
	h.wait("so-c rendered", `document.body.dataset.ready === 'so-c'`, 15*time.Second)
	var page struct {
		Pareto, Trace, Tradeoff bool
		Best                    float64
		Cols                    []string
		Feasible                []string
	}
	h.eval(`({pareto: !document.getElementById('pareto-panel').hidden, trace: !document.getElementById('trace-panel').hidden, best: xbo.trace.best,
		tradeoff: !document.getElementById('tradeoff-panel').hidden,
		cols: [...document.querySelectorAll('#trials-table th button')].map(b => b.dataset.key),
		feasible: [...document.querySelectorAll('#trials-table tbody td[data-feasible]')].map(td => td.textContent)})`, &page)
	if page.Pareto || !page.Trace || page.Tradeoff || page.Best != *best.Value || *best.Value != 0.3 || !slices.Equal(page.Cols[:5], []string{"number", "state", "value", "feasible", "duration"}) ||
		!slices.Equal(page.Feasible, []string{"yes", "no: memory", "yes", "yes", "yes"}) {
		t.Fatalf("constrained single-objective study: %+v (API best %v)", page, *best.Value)
	}
}

// tradeoffPage is what the Trade-offs panel shows: the table's rows (exact
// numbers in data-x), its column heads, the reading, the trial selector and
// the Shapley table.
type tradeoffPage struct {
	Hidden  bool   `json:"hidden"`
	Reading string `json:"reading"`
	Rows    []struct {
		Param      string `json:"param"`
		Importance []struct {
			X, Lo, Hi *float64
			Text      string `json:"text"`
		} `json:"importance"`
		Conflict []float64 `json:"conflict"`
		Bands    []string  `json:"bands"`
		Verdict  string    `json:"verdict"`
	} `json:"rows"`
	Objectives []string `json:"objectives"`
	Pairs      []string `json:"pairs"`
	Options    []int64  `json:"options"`
	Selected   int64    `json:"selected"`
	Shapley    []struct {
		Param string    `json:"param"`
		Phi   []float64 `json:"phi"`
	} `json:"shapley"`
	Prediction []float64 `json:"prediction"`
	Heading    string    `json:"heading"`
}

const readTradeoffPage = `(() => { const num = (s) => (s === undefined ? null : Number(s));
	return {hidden: document.getElementById('tradeoff-panel').hidden, reading: document.getElementById('tradeoff-reading').textContent,
	rows: [...document.querySelectorAll('#tradeoff-data tbody tr')].map(tr => ({param: tr.dataset.param,
		importance: [...tr.querySelectorAll('td[data-v=importance]')].map(td => ({x: num(td.dataset.x), lo: num(td.dataset.lo), hi: num(td.dataset.hi), text: td.textContent})),
		conflict: [...tr.querySelectorAll('td[data-v=conflict]')].map(td => Number(td.dataset.x)),
		bands: [...tr.querySelectorAll('td[data-v=conflict]')].map(td => (td.querySelector('.sub') || {}).textContent || ''),
		verdict: tr.querySelector('td[data-v=verdict]').textContent})),
	objectives: [...document.querySelectorAll('#tradeoff-data thead th[data-k]')].map(th => th.textContent),
	pairs: [...document.querySelectorAll('#tradeoff-data thead th[data-pair]')].map(th => th.textContent),
	options: [...document.getElementById('tradeoff-trial').options].map(o => Number(o.value)),
	selected: Number(document.getElementById('tradeoff-trial').value),
	shapley: [...document.querySelectorAll('#tradeoff-shapley-data tbody tr[data-param]')].map(tr => ({param: tr.dataset.param,
		phi: [...tr.querySelectorAll('td[data-v=phi]')].map(td => Number(td.dataset.x))})),
	prediction: [...document.querySelectorAll('#tradeoff-shapley-data tr[data-k=prediction] td')].map(td => Number(td.dataset.x)),
	heading: document.getElementById('tradeoff-shapley-h').textContent}; })()`

// checkTradeoff waits for the Trade-offs panel to explain trial n (any
// Pareto-optimal trial when n < 0) and compares every number it shows with
// the API's answer to the same request (explain/tradeoff?trial=n): the
// verdicts in the documented order, each objective's importance with its
// interval in the objectives' order, the conflict of each pair, the trial
// selector's Pareto-optimal trials and the trial's Shapley values of every
// objective. It returns the trial explained.
func checkTradeoff(t *testing.T, h *harness, study string, n int64) int64 {
	t.Helper()
	cond := `xbo.tradeoff && xbo.tradeoff.shapley && xbo.tradeoff.shapley.length > 0 && xbo.explained.tradeoff && document.getElementById('tradeoff-data').rows.length > 2`
	if n >= 0 {
		cond += fmt.Sprintf(` && xbo.tradeoff.shapley[0].trial === %d`, n)
	}
	h.wait(study+" trade-offs", cond, 60*time.Second)
	var page tradeoffPage
	h.eval(readTradeoffPage, &page)
	n = page.Selected
	var api explain.TradeoffResult
	if err := h.c.Explain(context.Background(), study, "tradeoff", url.Values{"trial": {strconv.FormatInt(n, 10)}}, &api); err != nil {
		t.Fatal(err)
	}
	if page.Hidden || page.Reading != api.Reading || !slices.Equal(page.Options, api.Front) || !slices.Contains(api.Front, n) {
		t.Fatalf("%s trade-offs: hidden %v, reading %q, trials offered %v (selected %d); API: %q, front %v", study, page.Hidden, page.Reading, page.Options, n, api.Reading, api.Front)
	}
	m := len(api.Objectives)
	for k, o := range api.Objectives {
		if want := fmt.Sprintf("%s (%s)", o.Name, map[space.Direction]string{space.Minimize: "min", space.Maximize: "max"}[o.Direction]); page.Objectives[k] != want {
			t.Fatalf("%s trade-offs: objective column %d is %q, want %q", study, k, page.Objectives[k], want)
		}
	}
	byParam := map[string]explain.TradeoffParam{}
	for _, p := range api.Params {
		byParam[p.Param] = p
	}
	var order []string // the engine's reading order (explain.TradeoffResult.Params)
	for _, p := range api.Params {
		order = append(order, p.Param)
	}
	if len(page.Rows) != len(order) {
		t.Fatalf("%s trade-offs: %d rows, the API explains %d parameters", study, len(page.Rows), len(order))
	}
	for i, r := range page.Rows {
		p := byParam[order[i]]
		if r.Param != p.Param || r.Verdict != p.Verdict || len(r.Importance) != m || len(r.Conflict) != len(p.Pairs) {
			t.Fatalf("%s trade-offs: row %d is %s (%q), want %s (%q) in the order %v", study, i, r.Param, r.Verdict, p.Param, p.Verdict, order)
		}
		for k, e := range p.Importance {
			got := r.Importance[k]
			if e.Param != api.Objectives[k].Name || got.X == nil || *got.X != e.Fraction || len(e.CI95) == 2 && (got.Lo == nil || *got.Lo != e.CI95[0] || *got.Hi != e.CI95[1]) ||
				!strings.HasPrefix(got.Text, pageText(e.Fraction)) {
				t.Fatalf("%s trade-offs: %s's importance for %s on the page %+v (%q), API %+v", study, p.Param, api.Objectives[k].Name, got, got.Text, e)
			}
		}
		for i, q := range p.Pairs {
			want := map[bool]string{true: "trades"}[q.Opposed]
			if !q.Opposed && q.Joint {
				want = "improves both"
			}
			if want != "" && q.BandBacked {
				want += " (bands)"
			}
			if r.Conflict[i] != q.Conflict || r.Bands[i] != want || page.Pairs[i] != api.Objectives[q.A].Name+" × "+api.Objectives[q.B].Name {
				t.Fatalf("%s trade-offs: %s's conflict %d (%s) on the page %v %q, API %+v", study, p.Param, i, page.Pairs[i], r.Conflict[i], r.Bands[i], q)
			}
		}
	}
	// The study must tell a wrong column from the right one: some
	// parameter matters more for one objective than for another, and
	// some conflict is not nil.
	distinct, conflict := false, false
	for _, p := range api.Params {
		distinct = distinct || math.Abs(p.Importance[0].Fraction-p.Importance[1].Fraction) > 0.01
		for _, q := range p.Pairs {
			conflict = conflict || math.Abs(q.Conflict) > 0.01
		}
	}
	if !distinct || !conflict {
		t.Fatalf("%s trade-offs: the answer cannot tell columns apart (importance differs: %v, a conflict: %v): %+v", study, distinct, conflict, api.Params)
	}
	// The Shapley values of trial n, a column per objective.
	if len(api.Shapley) != m || len(page.Shapley) != len(order) || page.Heading != fmt.Sprintf("Shapley values of trial %d for every objective", n) {
		t.Fatalf("%s trade-offs: %d Shapley decompositions, %d rows on the page, heading %q", study, len(api.Shapley), len(page.Shapley), page.Heading)
	}
	for i, r := range page.Shapley {
		if r.Param != order[i] || len(r.Phi) != m {
			t.Fatalf("%s trade-offs: Shapley row %d is %s with %d values, want %s with %d", study, i, r.Param, len(r.Phi), order[i], m)
		}
		for k, sh := range api.Shapley {
			if sh.Objective != api.Objectives[k].Name || sh.Trial != n || r.Phi[k] != sh.Phi[r.Param] || page.Prediction[k] != sh.Prediction {
				t.Fatalf("%s trade-offs: trial %d, φ of %s for %s: page %v (prediction %v), API %v (%v)", study, n, r.Param, sh.Objective, r.Phi[k], page.Prediction[k], sh.Phi[r.Param], sh.Prediction)
			}
		}
	}
	return n
}
