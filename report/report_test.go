package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"xbo/explain"
	"xbo/history"
	"xbo/importer"
	"xbo/importer/optunatest"
	"xbo/metrics"
	"xbo/opt"
	"xbo/space"
)

// known3 has one strong, one moderate and one irrelevant parameter:
// f = 5(x1 − 0.3)² + 2(x2 − 0.6)² (x3 does not enter). Its partial
// dependence on x1 is 5(x1 − 0.3)² plus a constant.
func known3(x []float64) float64 { return 5*(x[0]-0.3)*(x[0]-0.3) + 2*(x[1]-0.6)*(x[1]-0.6) }

func space3(t testing.TB) *space.Space {
	t.Helper()
	sp, err := space.Parse([]byte(`{"objective": "minimize", "params": [
		{"name": "x1", "type": "float", "low": 0, "high": 1},
		{"name": "x2", "type": "float", "low": 0, "high": 1},
		{"name": "x3", "type": "float", "low": 0, "high": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// optimize runs xbo's own optimizer (EI after a maximin design of 20) on f.
// With the default design of 12 the quadratic's optimum is hit at once and
// the rest of the budget repeats it, which leaves x2's effect unlearnable.
func optimize(t testing.TB, sp *space.Space, f func([]float64) float64, budget int, seed uint64) *history.History {
	t.Helper()
	// No near-copy replacement: late in a run on these smooth noiseless
	// functions half of EI's proposals land within 1e-4 of the incumbent,
	// and uniform random replacements would hide the concentration the
	// bias test below looks for.
	o, err := opt.New(opt.Config{Space: sp, Seed: seed, Candidates: 500, InitialSize: min(20, budget), DuplicateTolerance: -1})
	if err != nil {
		t.Fatal(err)
	}
	h := &history.History{Space: sp, Source: "test run"}
	for i := range budget {
		tr, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		v := f(tr.Params)
		if err := o.Tell(tr.ID, v); err != nil {
			t.Fatal(err)
		}
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: tr.Params, Value: v,
			Acquisition: tr.Acquisition, Completion: i})
	}
	return h
}

var testOpts = Options{PDP: explain.RegionalRequest{Samples: 300}, Shapley: explain.ShapleyRequest{Background: 300}}

func engine(t testing.TB) *explain.Engine {
	t.Helper()
	e, err := explain.New(explain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func pdpOf(t *testing.T, rep *Report, name string) *explain.RegionalResult {
	t.Helper()
	for _, p := range rep.PDPs {
		if p.Param == name {
			return p
		}
	}
	t.Fatalf("no PDP for %s", name)
	return nil
}

func argmin(v []float64) int {
	best := 0
	for i := range v {
		if v[i] < v[best] {
			best = i
		}
	}
	return best
}

// checkWellFormed parses every inline SVG as XML and checks that the HTML's
// non-void elements are balanced.
func checkWellFormed(t *testing.T, page string) {
	t.Helper()
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1)
	if len(svgs) == 0 {
		t.Fatal("no inline SVG")
	}
	for k, s := range svgs {
		dec := xml.NewDecoder(strings.NewReader(s))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("svg %d is not well-formed XML: %v", k, err)
			}
		}
	}
	void := map[string]bool{"meta": true, "br": true, "img": true, "hr": true, "link": true, "input": true}
	tag := regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>`)
	var stack []string
	body := regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(page, "")
	for _, m := range tag.FindAllStringSubmatch(body, -1) {
		closing, name, self := m[1] == "/", strings.ToLower(m[2]), m[3] == "/"
		switch {
		case void[name] || self:
		case closing:
			if len(stack) == 0 || stack[len(stack)-1] != name {
				t.Fatalf("unbalanced </%s> (open: %v)", name, stack)
			}
			stack = stack[:len(stack)-1]
		default:
			stack = append(stack, name)
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unclosed elements %v", stack)
	}
	if strings.Contains(page, "<script") {
		t.Fatal("the report must not need scripts")
	}
}

func TestReportOnOptimizerRun(t *testing.T) {
	sp := space3(t)
	in := optimize(t, sp, known3, 50, 11)
	rep, err := Build(context.Background(), engine(t), in, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	// Importance: x1 > x2 > x3, and x3 explains almost nothing.
	ranking := rep.Importance.Ranking
	if len(ranking) != 3 || ranking[0].Param != "x1" || ranking[2].Param != "x3" {
		t.Fatalf("ranking %+v, want x1 first and x3 last", ranking)
	}
	if ranking[2].Fraction > 0.05 {
		t.Errorf("irrelevant x3 explains %.3f of the variance", ranking[2].Fraction)
	}
	// PDP shapes: x3 flat relative to the others; x1's minimum near 0.3 and
	// its curve ordered like the true PD 5(x1 − 0.3)².
	p1, p2, p3 := pdpOf(t, rep, "x1"), pdpOf(t, rep, "x2"), pdpOf(t, rep, "x3")
	if p3.Range > 0.2*math.Min(p1.Range, p2.Range) {
		t.Errorf("x3 PDP spans %.3g, not flat next to x1 %.3g and x2 %.3g", p3.Range, p1.Range, p2.Range)
	}
	g := p1.Global
	if x := g.Grid[argmin(g.Mean)]; math.Abs(x-0.3) > 0.1 {
		t.Errorf("x1 PDP minimum at %.3f, want 0.3 ± 0.1", x)
	}
	truth := make([]float64, len(g.Grid))
	for i, x := range g.Grid {
		truth[i] = 5 * (x - 0.3) * (x - 0.3)
	}
	if rho, err := metrics.Spearman(g.Mean, truth); err != nil || rho < 0.9 {
		t.Errorf("x1 PDP vs true PD: Spearman %.3f (%v)", rho, err)
	}
	g2 := p2.Global
	if x := g2.Grid[argmin(g2.Mean)]; math.Abs(x-0.6) > 0.15 {
		t.Errorf("x2 PDP minimum at %.3f, want 0.6 ± 0.15", x)
	}
	// Summary and trace agree with the data.
	bestV := math.Inf(1)
	for _, tr := range in.Trials {
		bestV = math.Min(bestV, tr.Value)
	}
	if rep.Summary.BestValue != bestV || *rep.Trace[len(rep.Trace)-1].BestSoFar != bestV || len(rep.Trace) != 50 {
		t.Errorf("summary best %v, trace end %v, want %v", rep.Summary.BestValue, *rep.Trace[len(rep.Trace)-1].BestSoFar, bestV)
	}
	// An optimizer concentrates its trials: the MMD must exceed what uniform
	// samples of the same size show.
	if b := rep.Bias.Bias; b.Ratio <= b.Null95Ratio || b.Level == explain.BiasNone {
		t.Errorf("MMD ratio %.3g not above the uniform null 95%% ratio %.3g for an EI run (%s)", b.Ratio, b.Null95Ratio, b.Level)
	}
	// Shapley: efficiency holds for the exact estimator.
	for _, a := range rep.Shapley.Explanation.Outputs {
		sum := 0.0
		for _, v := range a.Phi {
			sum += v
		}
		if math.Abs(sum-a.Payout) > 1e-8*math.Max(1, math.Abs(a.Payout)) {
			t.Errorf("Shapley %s: Σφ = %v, payout %v", a.Output, sum, a.Payout)
		}
	}

	dir := t.TempDir()
	htmlPath, jsonPath := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.json")
	if err := WriteFiles(rep, htmlPath, jsonPath); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="summary"`, `id="trace"`, `id="importance"`, `id="pdp"`, `id="bias"`, `id="shapley"`,
		"<h3>x1</h3>", "<h3>x2</h3>", "<h3>x3</h3>", "global PDP of x1", "Shapley decomposition", "MMD", "95% band"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	checkWellFormed(t, string(page))
	checkPeopleNumbers(t, string(page))
	var back map[string]any
	data, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("json: %v", err)
	}
	for _, k := range []string{"summary", "trace", "importance", "pdps", "sampling_bias", "shapley", "requests"} {
		if _, ok := back[k]; !ok {
			t.Errorf("json lacks %q", k)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("output directory holds %d files, want the 2 outputs only", len(entries))
	}
}

// optunaStudyFile writes the study with the real Optuna (Debian
// python3-optuna) into a temporary directory when it is installed — CI sets
// XBO_REQUIRE_OPTUNA=1 and installs it — and otherwise falls back to the
// copy the same script wrote into importer/testdata.
func optunaStudyFile(t *testing.T) string {
	t.Helper()
	if dir := optunatest.FreshStudy(t); dir != "" {
		return filepath.Join(dir, "optuna_rdb.sqlite3")
	}
	return filepath.Join(optunatest.Fixtures(), "optuna_rdb.sqlite3")
}

// TestReportOnOptunaStudy reads the TPE study that Debian's python3-optuna
// wrote (importer/testdata/make_optuna.py), through the importer, and checks
// the report against the known function
// f = (log10 lr + 2)² + 0.1(layers − 3)² + c[optimizer] + (momentum − 0.9)²·[sgd].
func TestReportOnOptunaStudy(t *testing.T) {
	run, err := importer.ImportOptuna(optunaStudyFile(t), "tpe-known")
	if err != nil {
		t.Fatal(err)
	}
	in := run.History
	c := in.Counts()
	if len(in.Usable()) != 38 || c[history.Failed] != 1 || c[history.Pruned] != 1 {
		t.Fatalf("imported %d usable, states %v; want 38 usable, 1 failed, 1 pruned", len(in.Usable()), c)
	}
	rep, err := Build(context.Background(), engine(t), in, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	// lr's term spans 0..6 over its (widened) range, layers' 0..2.5, the
	// optimizer's and momentum's below 1: lr first, layers second.
	if r := rep.Importance.Ranking; r[0].Param != "lr" || r[1].Param != "layers" {
		t.Fatalf("ranking %+v, want lr then layers", r)
	}
	lr := pdpOf(t, rep, "lr").Global
	if x := lr.Grid[argmin(lr.Mean)]; math.Abs(math.Log10(x)+2) > 0.6 {
		t.Errorf("lr PDP minimum at %.3g, want 1e-2 within 0.6 decades", x)
	}
	truth := make([]float64, len(lr.Grid))
	for i, x := range lr.Grid {
		truth[i] = (math.Log10(x) + 2) * (math.Log10(x) + 2)
	}
	if rho, err := metrics.Spearman(lr.Mean, truth); err != nil || rho < 0.8 {
		t.Errorf("lr PDP vs true PD: Spearman %.3f (%v)", rho, err)
	}
	layers := pdpOf(t, rep, "layers").Global
	if x := layers.Grid[argmin(layers.Mean)]; math.Abs(x-3) > 1 {
		t.Errorf("layers PDP minimum at %v, want 3 ± 1", x)
	}
	opt := pdpOf(t, rep, "optimizer").Global
	if l := opt.Labels[argmin(opt.Mean)]; l != "adam" {
		t.Errorf("optimizer PDP lowest at %s (%v), want adam (c = 0)", l, opt.Mean)
	}
	mom := pdpOf(t, rep, "momentum").Global
	if first, near := mom.Mean[0], mom.Mean[argNearest(mom.Grid, 0.9)]; !(near < first) {
		t.Errorf("momentum PDP at 0.9 (%.3g) not below its value at 0 (%.3g)", near, first)
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	checkWellFormed(t, buf.String())
	if !strings.Contains(buf.String(), "tpe-known") || !strings.Contains(buf.String(), `<tr><th>failed</th><td class="num">1</td></tr>`) ||
		!strings.Contains(buf.String(), `<tr><th>pruned</th><td class="num">1</td></tr>`) {
		t.Error("summary does not name the source, or does not count the failed and the pruned trial apart")
	}
}

func argNearest(grid []float64, v float64) int {
	best := 0
	for i := range grid {
		if math.Abs(grid[i]-v) < math.Abs(grid[best]-v) {
			best = i
		}
	}
	return best
}

func TestFailureLeavesNoFile(t *testing.T) {
	sp := space3(t)
	in := optimize(t, sp, known3, 12, 5)
	opts := testOpts
	opts.PDP.Samples = 50
	e := engine(t)

	// Cancelled midway: Build stops with the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	o := opts
	o.Progress = func(done, total int, step string) {
		if done == 3 {
			cancel()
		}
	}
	if _, err := Build(ctx, e, in, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}

	rep, err := Build(context.Background(), e, in, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	htmlPath := filepath.Join(dir, "r.html")
	// The JSON target cannot be created: neither file may appear.
	if err := WriteFiles(rep, htmlPath, filepath.Join(dir, "missing", "r.json")); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("failed write left %v", entries)
	}
	// Rendering fails midway (a non-finite PDP cannot be drawn): an
	// existing report stays as it was.
	os.WriteFile(htmlPath, []byte("old"), 0o644)
	bad := *rep
	bad.PDPs = append([]*explain.RegionalResult(nil), rep.PDPs...)
	g := *bad.PDPs[1].Global
	g.Mean = append([]float64(nil), g.Mean...)
	g.Mean[2] = math.NaN()
	reg := *bad.PDPs[1].Result
	reg.Global = &g
	part := *bad.PDPs[1]
	part.Result = &reg
	bad.PDPs[1] = &part
	if err := WriteFiles(&bad, htmlPath, ""); err == nil {
		t.Fatal("rendering a NaN PDP succeeded")
	}
	if b, _ := os.ReadFile(htmlPath); string(b) != "old" {
		t.Fatalf("failed render changed the existing report to %d bytes", len(b))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("failed render left temporary files: %v", entries)
	}
}

func TestBadInput(t *testing.T) {
	sp := space3(t)
	trial := func(n int64, x []float64, v float64) history.Trial {
		return history.Trial{Number: n, State: history.Complete, Params: x, Value: v}
	}
	ok := []history.Trial{trial(0, []float64{0, 0, 0}, 1), trial(1, []float64{1, 1, 1}, 2), trial(2, []float64{0.5, 0.5, 0.5}, 3)}
	cases := map[string]*history.History{
		"no space":        {Trials: ok},
		"too few trials":  {Space: sp, Trials: ok[:2]},
		"wrong dimension": {Space: sp, Trials: append([]history.Trial{trial(0, []float64{0, 0}, 1)}, ok[1:]...)},
		"out of range":    {Space: sp, Trials: append([]history.Trial{trial(0, []float64{0, 0, 7}, 1)}, ok[1:]...)},
	}
	for name, in := range cases {
		if _, err := Build(context.Background(), engine(t), in, testOpts); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.HasPrefix(err.Error(), "report: ") {
			t.Errorf("%s: error %q does not say where it came from", name, err)
		}
	}
	if _, err := Build(context.Background(), engine(t), &history.History{Space: sp, Trials: ok},
		Options{PDP: explain.RegionalRequest{Grid: 1}}); err == nil || !strings.Contains(err.Error(), "grid 1") {
		t.Errorf("grid size 1: %v", err)
	}
	var rep Report
	if err := rep.WriteHTML(io.Discard); err == nil {
		t.Error("an unbuilt report rendered")
	}
}

// A study with numeric and boolean choices: the report's JSON keeps the
// best configuration's types, and the HTML shows the choices' text forms in
// the best configuration and as the PDP's level ticks.
func TestReportTypedChoices(t *testing.T) {
	sp, err := space.Parse([]byte(`{"objective": "minimize", "params": [
		{"name": "units", "type": "categorical", "choices": [16, 32, 64]},
		{"name": "flag", "type": "categorical", "choices": [true, false]},
		{"name": "x", "type": "float", "low": 0, "high": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// Best at units 32, flag false, x 0.4.
	f := func(v []float64) float64 {
		return math.Abs(v[0]-1) + 2*(1-v[1]) + (v[2]-0.4)*(v[2]-0.4)
	}
	in := optimize(t, sp, f, 24, 3)
	opts := testOpts
	opts.PDP.Samples = 100
	opts.Shapley.Background = 100
	rep, err := Build(context.Background(), engine(t), in, opts)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(rep.Summary.BestConfig)
	if err != nil {
		t.Fatal(err)
	}
	var best map[string]any
	json.Unmarshal(js, &best)
	if best["units"] != 32.0 || best["flag"] != false {
		t.Fatalf("best configuration %s, want units 32 (a number) and flag false (a boolean)", js)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{"<th>units</th><td>32</td>", "<th>flag</th><td>false</td>", ">16</text>", ">64</text>", ">true</text>"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	// A categorical PDP is a point and an interval bar per level: no line
	// or band joins the levels; the best level is named and every trial
	// counted under its level.
	_, units, _ := strings.Cut(html, "<h3>units</h3>")
	units, _, _ = strings.Cut(units, "</section>")
	counts := regexp.MustCompile(`>(\d+) trials</text>`).FindAllStringSubmatch(units, -1)
	total := 0
	for _, c := range counts {
		n, _ := strconv.Atoi(c[1])
		total += n
	}
	if strings.Contains(units, "<polyline") || strings.Contains(units, "<polygon") || strings.Count(units, "<circle") != 3 ||
		!strings.Contains(units, ">32 (best)</text>") || len(counts) != 3 || total != 24 || !strings.Contains(units, "Each point is the partial dependence") {
		t.Errorf("categorical PDP of units: %d circles, level counts %v (sum %d), polyline %v; figure %s", strings.Count(units, "<circle"), counts, total,
			strings.Contains(units, "<polyline"), units)
	}
}

// A study without intermediate values has no section on budgets; one whose
// budgets too few trials reached gets the section with the engine's reading
// instead of correlations.
func TestReportBudgetSection(t *testing.T) {
	sp := space3(t)
	in := optimize(t, sp, known3, 12, 11)
	rep, err := Build(context.Background(), engine(t), in, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if rep.Budgets != nil || strings.Contains(page.String(), `id="budgets"`) {
		t.Fatalf("a study without intermediate values has a section on budgets: %+v", rep.Budgets)
	}
	for i := range 4 {
		in.Trials[i].Intermediate = []history.Intermediate{{Step: 1, Value: in.Trials[i].Value + 1}, {Step: 2, Value: in.Trials[i].Value}}
	}
	if rep, err = Build(context.Background(), engine(t), in, testOpts); err != nil {
		t.Fatal(err)
	}
	b := rep.Budgets
	if b == nil || b.Correlation == nil || len(b.Correlation.Pairs) != 0 || len(b.Importance) != 0 || len(b.Correlation.Steps) != 2 ||
		!strings.Contains(b.Correlation.Reading, "No budget has values of 5 trials, the fewest a rank correlation needs (the most: 4 trials at step 1)") {
		t.Fatalf("budgets of four curves: %+v", b)
	}
	page.Reset()
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<h2 id="budgets">`) || !strings.Contains(page.String(), "No budget has values of 5 trials") ||
		strings.Contains(page.String(), "<th>Spearman</th>") {
		t.Error("the HTML lacks the section on budgets and its reading, or shows an empty table")
	}
	checkWellFormed(t, page.String())

	// With every trial's curve the table shows the engine's correlations,
	// the better half's among them.
	for i := range in.Trials {
		in.Trials[i].Intermediate = []history.Intermediate{{Step: 1, Value: in.Trials[i].Value + float64(i%4)}, {Step: 2, Value: in.Trials[i].Value}}
	}
	if rep, err = Build(context.Background(), engine(t), in, testOpts); err != nil {
		t.Fatal(err)
	}
	c := rep.Budgets.Correlation
	bv := budgetText(rep.Budgets, rep.Importance)
	if len(c.Pairs) != 3 || len(bv.Pairs) != 3 || bv.PairHead[6] != "better half: trials" {
		t.Fatalf("pairs %+v, rows %v", c.Pairs, bv.Pairs)
	}
	for k, p := range c.Pairs {
		b := p.BetterHalf
		if b == nil || b.Spearman == nil {
			t.Fatalf("%s: better half %+v", p.Label, b)
		}
		row := bv.Pairs[k]
		if row[6] != fmt.Sprint(b.Trials) || row[7] != Number(b.Spearman.Value) || row[8] != interval(b.Spearman.Lower, b.Spearman.Upper) {
			t.Errorf("%s: row %v, better half %d trials %+v", p.Label, row, b.Trials, *b.Spearman)
		}
	}
}
