package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"xbo/history"
	"xbo/pareto"
	"xbo/space"
)

// moHistory is a study with the given objectives and constraints over two
// parameters: n trials at a low-discrepancy sequence of configurations
// (outcome gives each one's values and constraint values), then a failed
// trial, which no figure may draw.
func moHistory(t *testing.T, doc string, n int, outcome func(x []float64) (vals, cons []float64)) *history.History {
	t.Helper()
	sp, err := space.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	h := &history.History{Space: sp, Source: "test", Name: "mo"}
	for i := range n {
		x := []float64{math.Mod(0.5+float64(i)*0.6180339887, 1), math.Mod(0.3+float64(i)*0.7548776662, 1)}
		vals, cons := outcome(x)
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: x, Value: vals[0], Values: vals,
			Constraints: cons, Completion: i})
	}
	h.Trials = append(h.Trials, history.Trial{Number: int64(n), State: history.Failed, Params: []float64{0.5, 0.5}, Completion: -1})
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	return h
}

const twoObjectives = `{"objectives": [{"name": "err", "direction": "minimize"}, {"name": "speed", "direction": "maximize"}],
	"constraints": ["budget"],
	"params": [{"name": "x1", "type": "float", "low": 0, "high": 1}, {"name": "x2", "type": "float", "low": 0, "high": 1}]}`

// tradeoff: err wants x1 near 0.2, speed wants x1 high; x2 only costs
// err; a configuration with x1 + x2 > 1.3 breaks the budget.
func tradeoff(x []float64) ([]float64, []float64) {
	return []float64{(x[0]-0.2)*(x[0]-0.2) + 0.1*x[1], x[0] + 0.3*x[1]*x[1]}, []float64{x[0] + x[1] - 1.3}
}

// refByRule is the reference rule written out again, independently of
// pareto.ReferencePoint: the worst feasible value, 10% of the range further.
func refByRule(vals [][]float64, dirs []space.Direction) []float64 {
	out := make([]float64, len(dirs))
	for k, d := range dirs {
		col := make([]float64, len(vals))
		for i, v := range vals {
			col[i] = v[k]
		}
		lo, hi := slices.Min(col), slices.Max(col)
		if d == space.Maximize {
			out[k] = lo - 0.1*(hi-lo)
		} else {
			out[k] = hi + 0.1*(hi-lo)
		}
	}
	return out
}

// A study with two objectives and a constraint: the report leads with its
// Pareto front — the trials of history.ParetoFront in the section, the
// table and the figure, the dominated and infeasible trials by the
// definitions, the hypervolume after each trial as package pareto gives
// it against the stated reference point — has no best-so-far trace, and
// explains each objective with its own surrogate.
func TestReportParetoSection(t *testing.T) {
	h := moHistory(t, twoObjectives, 40, tradeoff)
	rep, err := Build(context.Background(), engine(t), h, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	sec := rep.Pareto
	if sec == nil || rep.Trace != nil {
		t.Fatalf("a study with two objectives: Pareto section %v, trace of %d points", sec != nil, len(rep.Trace))
	}
	dirs := h.Directions()
	front, err := h.ParetoFront()
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, i := range front {
		want = append(want, h.Trials[i].Number)
	}
	var got []int64
	for _, f := range sec.Front {
		got = append(got, f.Trial)
		tr := h.Trials[f.Trial]
		if !slices.Equal(f.Values, tr.Values) || !slices.Equal(f.Constraints, tr.Constraints) {
			t.Fatalf("front trial %d: %v %v, the history's %v %v", f.Trial, f.Values, f.Constraints, tr.Values, tr.Constraints)
		}
	}
	if !slices.Equal(got, want) || len(want) < 3 {
		t.Fatalf("Pareto section's front %v, history.ParetoFront %v", got, want)
	}
	// Every other usable trial: infeasible (budget > 0) or dominated by a
	// front member; none is left out.
	var feasible [][]float64
	var wantInf, wantDom []int64
	for _, tr := range h.Trials[:40] {
		if tr.Constraints[0] > 0 {
			wantInf = append(wantInf, tr.Number)
			continue
		}
		feasible = append(feasible, tr.Values)
		if slices.Contains(want, tr.Number) {
			continue
		}
		dominated := false
		for _, n := range want {
			if d, _ := pareto.Dominates(h.Trials[n].Values, tr.Values, dirs); d {
				dominated = true
			}
		}
		if !dominated {
			t.Fatalf("trial %d is off the front, but no front trial dominates it", tr.Number)
		}
		wantDom = append(wantDom, tr.Number)
	}
	if !slices.Equal(sec.Infeasible, wantInf) || !slices.Equal(sec.Dominated, wantDom) || len(wantInf) == 0 {
		t.Fatalf("infeasible %v (want %v), dominated %v (want %v)", sec.Infeasible, wantInf, sec.Dominated, wantDom)
	}
	ref := refByRule(feasible, dirs)
	if !slices.Equal(sec.Reference, ref) {
		t.Fatalf("reference point %v, by the rule %v", sec.Reference, ref)
	}
	if len(sec.Hypervolume) != 40 {
		t.Fatalf("hypervolume after %d trials, 40 usable", len(sec.Hypervolume))
	}
	var prefix [][]float64
	for k, p := range sec.Hypervolume {
		tr := h.Trials[k]
		if tr.Constraints[0] <= 0 {
			prefix = append(prefix, tr.Values)
		}
		hv := 0.0
		if len(prefix) > 0 {
			hv, _ = pareto.Hypervolume(prefix, ref, dirs)
		}
		if p.Trial != tr.Number || math.Abs(p.Hypervolume-hv) > 1e-12*math.Max(1, hv) {
			t.Fatalf("hypervolume after trial %d: %v, pareto.Hypervolume %v", p.Trial, p.Hypervolume, hv)
		}
	}
	if s := rep.Summary; s.ParetoFront != len(want) || s.Feasible != len(feasible) || len(s.Objectives) != 2 {
		t.Fatalf("summary: front %d, feasible %d, objectives %v", s.ParetoFront, s.Feasible, s.Objectives)
	}

	// Each objective explained with its own surrogate: the first at the
	// top level, speed in Objectives, its Shapley decomposition at the
	// best feasible trial on speed.
	if len(rep.Objectives) != 1 || rep.Importance.Objective != "err" || rep.Objectives[0].Importance.Objective != "speed" ||
		rep.Objectives[0].PDPs[0].Objective != "speed" || rep.Objectives[0].Direction != space.Maximize {
		t.Fatalf("per-objective explanations: %d more, first about %q", len(rep.Objectives), rep.Importance.Objective)
	}
	hs, _ := h.ForObjective(1)
	bi, _ := hs.Best()
	if s := rep.Objectives[0]; s.BestTrial != h.Trials[bi].Number || *s.Shapley.Trial != s.BestTrial || s.BestValue != h.Trials[bi].Values[1] {
		t.Fatalf("speed's best trial %d (%v), Shapley of %d; want %d", s.BestTrial, s.BestValue, *s.Shapley.Trial, h.Trials[bi].Number)
	}

	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkWellFormed(t, page)
	checkParetoPage(t, page, sec, 1)
	// The table: one row per front trial with every objective and the constraint.
	table := regexp.MustCompile(`(?s)<table id="pareto-table">.*?</table>`).FindString(page)
	rows := regexp.MustCompile(`<tr data-trial="(\d+)"><th>#\d+</th><td class="num">([^<]*)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td><td>([^<]*)</td></tr>`).FindAllStringSubmatch(table, -1)
	if len(rows) != len(want) {
		t.Fatalf("Pareto table has %d rows, the front %d trials:\n%s", len(rows), len(want), table)
	}
	for k, r := range rows {
		tr := h.Trials[want[k]]
		if r[1] != fmt.Sprint(tr.Number) || r[2] != Number(tr.Values[0]) || r[3] != Number(tr.Values[1]) || r[4] != Number(tr.Constraints[0]) ||
			!strings.HasPrefix(r[5], "x1 = "+Number(tr.Params[0])) {
			t.Fatalf("Pareto table row %d: %v; trial %d has %v, %v, %v", k, r[1:], tr.Number, tr.Values, tr.Constraints, tr.Params)
		}
	}
	for _, s := range []string{`id="pareto"`, `id="importance-0"`, `id="importance-1"`, `id="shapley-1"`, `id="bias"`,
		"Objective err (minimize): hyperparameter importance", "Objective speed (maximize): partial dependence",
		fmt.Sprintf("reference point: err = %s, speed = %s", Number(ref[0]), Number(ref[1])), "<th>Pareto front</th>"} {
		if !strings.Contains(page, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	for _, s := range []string{`id="trace"`, "<th>best value</th>", "Best configuration"} {
		if strings.Contains(page, s) {
			t.Errorf("a report of two objectives has %q", s)
		}
	}
	js, err := rep.MarshalJSONIndent()
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]json.RawMessage
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"pareto", "objectives", "importance"} {
		if _, ok := back[k]; !ok {
			t.Errorf("json lacks %q", k)
		}
	}
}

// checkParetoPage counts the figure's marks of each class in each of its
// panels: a filled circle per Pareto-optimal trial, a dimmed one per
// dominated trial, a cross per infeasible trial; with two objectives a
// boundary through the front (a corner between neighbours).
func checkParetoPage(t *testing.T, page string, sec *ParetoSection, panels int) {
	t.Helper()
	fig := regexp.MustCompile(`(?s)<svg [^>]*aria-label="Pareto front[^"]*">.*?</svg>`).FindString(page)
	count := func(class string) []int64 {
		var out []int64
		for _, m := range regexp.MustCompile(`class="`+class+`" data-trial="(\d+)"`).FindAllStringSubmatch(fig, -1) {
			var n int64
			fmt.Sscan(m[1], &n)
			out = append(out, n)
		}
		return out
	}
	var front []int64
	for _, f := range sec.Front {
		front = append(front, f.Trial)
	}
	repeat := func(v []int64) []int64 {
		var out []int64
		for range panels {
			out = append(out, v...)
		}
		return out
	}
	for class, want := range map[string][]int64{"front": front, "dominated": sec.Dominated, "infeasible": sec.Infeasible} {
		if got := count(class); !slices.Equal(got, repeat(want)) {
			t.Fatalf("the figure's %s marks are trials %v, want %v in each of %d panels", class, got, want, panels)
		}
	}
	if panels == 1 {
		line := regexp.MustCompile(`class="boundary" points="([^"]*)"`).FindStringSubmatch(fig)
		if line == nil || len(strings.Fields(line[1])) != 2*len(front)-1 {
			t.Fatalf("the front's boundary: %v", line)
		}
	}
}

// Three objectives: a scatter of every pair, each drawing every usable
// trial in its class; the hypervolume after each trial (added up as
// trials join the front) as package pareto gives it for the trials so far.
func TestReportParetoThreeObjectives(t *testing.T) {
	doc := `{"objectives": [{"name": "a", "direction": "minimize"}, {"name": "b", "direction": "minimize"}, {"name": "c", "direction": "maximize"}],
		"constraints": ["limit"],
		"params": [{"name": "x1", "type": "float", "low": 0, "high": 1}, {"name": "x2", "type": "float", "low": 0, "high": 1}]}`
	h := moHistory(t, doc, 18, func(x []float64) ([]float64, []float64) {
		return []float64{x[0] + 0.3*x[1], (1 - x[0]) * (1 + x[1]), 1 - x[1] - 0.2*x[0]}, []float64{x[1] - 0.85}
	})
	opts := testOpts
	opts.PDP.Samples = 100
	rep, err := Build(context.Background(), engine(t), h, opts)
	if err != nil {
		t.Fatal(err)
	}
	sec := rep.Pareto
	front, _ := h.ParetoFront()
	if len(sec.Front) != len(front) || len(sec.Infeasible) == 0 || len(sec.Dominated) == 0 || len(rep.Objectives) != 2 {
		t.Fatalf("three objectives: front %d (want %d), infeasible %v, dominated %v, %d more objectives",
			len(sec.Front), len(front), sec.Infeasible, sec.Dominated, len(rep.Objectives))
	}
	// After each trial: what the section adds up trial by trial is the
	// volume of the feasible trials so far, measured whole.
	var feasible [][]float64
	for k, tr := range h.Trials[:18] {
		if tr.Constraints[0] <= 0 {
			feasible = append(feasible, tr.Values)
		}
		hv, _ := pareto.Hypervolume(feasible, sec.Reference, h.Directions())
		if got := sec.Hypervolume[k].Hypervolume; math.Abs(got-hv) > 1e-12*math.Max(1, hv) {
			t.Fatalf("hypervolume after trial %d: %v, pareto.Hypervolume %v", tr.Number, got, hv)
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkWellFormed(t, page)
	if n := strings.Count(page, `<g class="pair"`); n != 3 {
		t.Fatalf("%d panels of pairs, want 3", n)
	}
	checkParetoPage(t, page, sec, 3)
}

// One objective with a constraint: the best value and the trace's
// best-so-far line are the feasible trials' (an infeasible trial is never
// best), and the infeasible trials are crossed in the trace.
func TestReportConstrainedSingleObjective(t *testing.T) {
	sp, err := space.Parse([]byte(`{"objective": "minimize", "constraints": ["memory"], "params": [
		{"name": "x1", "type": "float", "low": 0, "high": 1}, {"name": "x2", "type": "float", "low": 0, "high": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := &history.History{Space: sp, Source: "test"}
	for i := range 20 {
		x := []float64{math.Mod(0.5+float64(i)*0.6180339887, 1), math.Mod(0.3+float64(i)*0.7548776662, 1)}
		// The lowest values (x1 < 0.3) break the constraint.
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: x, Value: x[0] + 0.1*x[1],
			Constraints: []float64{0.3 - x[0]}, Completion: i})
	}
	rep, err := Build(context.Background(), engine(t), h, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	best, run, crossed := math.Inf(1), math.Inf(1), 0
	for k, tr := range h.Trials {
		if tr.Constraints[0] <= 0 {
			best = math.Min(best, tr.Value)
			run = math.Min(run, tr.Value)
		} else {
			crossed++
		}
		p := rep.Trace[k]
		if p.Infeasible != (tr.Constraints[0] > 0) || (math.IsInf(run, 1) != (p.BestSoFar == nil)) || p.BestSoFar != nil && *p.BestSoFar != run {
			t.Fatalf("trace point %d: %+v, best feasible so far %v", k, p, run)
		}
	}
	if rep.Summary.BestValue != best || rep.Pareto != nil || rep.Summary.Feasible != 20-crossed || crossed == 0 {
		t.Fatalf("summary best %v (want %v), feasible %d of 20 (%d crossed)", rep.Summary.BestValue, best, rep.Summary.Feasible, crossed)
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkWellFormed(t, page)
	if n := strings.Count(page, "(infeasible)</title>"); n != crossed || !strings.Contains(page, "<th>constraints</th><td>memory") {
		t.Fatalf("trace crosses %d infeasible trials, want %d; constraints named: %v", n, crossed, strings.Contains(page, "<th>constraints</th>"))
	}
}
