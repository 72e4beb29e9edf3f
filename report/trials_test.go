package report

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"xbo/history"
	"xbo/space"
)

// trialsHistory has a log-scaled float, an integer, a level and a
// parameter active only under one level, 24 complete trials and a failed
// one; trial 3's value has more digits than the page writes.
func trialsHistory(t *testing.T) *history.History {
	t.Helper()
	sp, err := space.Parse([]byte(`{"objective": "minimize", "params": [
		{"name": "lr", "type": "float", "low": 0.0001, "high": 1, "log": true},
		{"name": "layers", "type": "int", "low": 1, "high": 8},
		{"name": "opt", "type": "categorical", "choices": ["sgd", "adam"]},
		{"name": "momentum", "type": "float", "low": 0, "high": 1, "condition": {"parent": "opt", "values": ["sgd"]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := &history.History{Space: sp, Source: "trials test"}
	for i := range 24 {
		u := math.Mod(0.37+float64(i)*0.6180339887, 1)
		lr := math.Pow(10, -4+4*u)
		level := float64(i % 2)
		mom := math.Mod(0.2+float64(i)*0.7548776662, 1)
		if level == 1 {
			mom = math.NaN()
		}
		v := (math.Log10(lr)+2)*(math.Log10(lr)+2) + 0.1*float64(1+i%8) + 0.3*level
		if i == 3 {
			v = 0.29415123
		}
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: []float64{lr, float64(1 + i%8), level, mom},
			Value: v, Acquisition: map[bool]string{true: "initial-design", false: "ei"}[i < 10], Completion: i})
	}
	h.Trials = append(h.Trials, history.Trial{Number: 24, State: history.Failed, Params: []float64{0.01, 2, 1, math.NaN()}, Value: math.NaN(),
		Acquisition: "ei", Completion: -1})
	return h
}

// renderReport builds the report of h and writes its page, which it
// also saves under $XBO_REPORT_DIR when set, to be looked at in a browser.
func renderReport(t *testing.T, h *history.History) (*Report, string) {
	t.Helper()
	rep, err := Build(context.Background(), engine(t), h, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("XBO_REPORT_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, t.Name()+".html"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page := buf.String()
	checkWellFormed(t, page)
	return rep, page
}

// The report lists every trial with its values written by Number and
// every digit on hover, and draws one line per usable trial in parallel
// coordinates, the best last and darkest.
func TestReportTrials(t *testing.T) {
	h := trialsHistory(t)
	rep, page := renderReport(t, h)
	table := regexp.MustCompile(`(?s)<table id="trials-table">.*?</table>`).FindString(page)
	if table == "" {
		t.Fatal("no trials table")
	}
	if got, want := strings.Count(table, "<tr data-trial="), len(h.Trials); got != want {
		t.Errorf("%d rows in the trials table, want %d (every trial, whatever its state)", got, want)
	}
	for _, want := range []string{
		`<tr><th>trial</th><th>state</th><th>value</th><th>lr</th><th>layers</th><th>opt</th><th>momentum</th><th>proposed by</th></tr>`,
		// Trial 3: its value to three digits with all of them on hover;
		// lr = 10^(−4 + 4·frac(0.37 + 3·0.618…)) = 10^−3.1036… = 0.000788
		// (below 10⁻³: exponent form); adam leaves momentum inactive.
		`<tr data-trial="3"><th>#3</th><td>complete</td><td class="num" title="0.29415123">0.294</td><td class="num" title="0.0007877852850271242">7.88e-4</td><td class="num" title="4">4</td><td>adam</td><td class="num" title="inactive">—</td><td>initial-design</td></tr>`,
		// The failed trial has no value.
		`<tr data-trial="24"><th>#24</th><td>failed</td><td>—</td><td class="num" title="0.01">0.01</td><td class="num" title="2">2</td><td>adam</td><td class="num" title="inactive">—</td><td>ei</td></tr>`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("trials table lacks\n%s\nin\n%.1500s", want, table)
		}
	}

	svg := regexp.MustCompile(`(?s)<h2 id="parallel">.*?</svg>`).FindString(page)
	lines := regexp.MustCompile(`<path d="([^"]*)" fill="none" stroke="(#[0-9a-f]{6})"[^>]*data-trial="(\d+)"><title>([^<]*)</title>`).FindAllStringSubmatch(svg, -1)
	if len(lines) != rep.Summary.Usable || rep.Summary.Usable != 24 {
		t.Fatalf("%d lines in parallel coordinates, want one per usable trial (%d)", len(lines), rep.Summary.Usable)
	}
	best, worst := lines[len(lines)-1], lines[0]
	if best[3] != "3" || best[2] != "#08306b" {
		t.Errorf("last line is trial %s in %s, want the best (3) in the darkest blue", best[3], best[2])
	}
	worstTrial, worstValue := int64(-1), math.Inf(-1)
	for _, tr := range h.Trials[:24] {
		if tr.Value > worstValue {
			worstTrial, worstValue = tr.Number, tr.Value
		}
	}
	if worst[3] != strconv.FormatInt(worstTrial, 10) || worst[2] != "#dbe9f6" {
		t.Errorf("first line is trial %s in %s, want the worst (%d) in the palest", worst[3], worst[2], worstTrial)
	}
	if want := "trial 3: lr 0.0007877852850271242, layers 4, opt adam, momentum inactive, value 0.29415123"; best[4] != want {
		t.Errorf("best line's hover text %q, want %q", best[4], want)
	}
	// The line passes by the axis of the inactive momentum to the value's:
	// one stroke through four points, the last on the value axis (x = 800).
	if !strings.HasPrefix(best[1], "M") || strings.Count(best[1], "M") != 1 || strings.Count(best[1], "L") != 3 || !strings.Contains(best[1], "L800.0 ") {
		t.Errorf("trial 3's line (momentum inactive) should be one stroke through lr, layers, opt and value: %s", best[1])
	}
	// The log axis of lr is labelled at its ends and the powers of ten between.
	for _, want := range []string{">1e-4</text>", ">0.001</text>", ">0.01</text>", ">0.1</text>", ">1</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("parallel coordinates lack the label %s", want)
		}
	}
}

// With several objectives the parallel coordinates have an axis per
// objective, and the Pareto-optimal trials are drawn last, dark and
// wide; the infeasible ones dashed; the trials table a column per
// objective and constraint.
func TestReportTrialsSeveralObjectives(t *testing.T) {
	h := moHistory(t, twoObjectives, 40, tradeoff)
	rep, page := renderReport(t, h)
	if !strings.Contains(page, `<tr><th>trial</th><th>state</th><th>err</th><th>speed</th><th>budget</th><th>x1</th><th>x2</th><th>proposed by</th></tr>`) {
		t.Error("the trials table lacks a column per objective and constraint")
	}
	svg := regexp.MustCompile(`(?s)<h2 id="parallel">.*?</svg>`).FindString(page)
	for _, want := range []string{">err (min)</text>", ">speed (max)</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no axis %s", want)
		}
	}
	lines := regexp.MustCompile(`stroke="(#[0-9a-f]{6})" stroke-width="([0-9.]+)"[^>]*?( stroke-dasharray="4 3")? data-trial="(\d+)"`).FindAllStringSubmatch(svg, -1)
	if len(lines) != 40 {
		t.Fatalf("%d lines, want one per complete trial (40)", len(lines))
	}
	front := map[string]bool{}
	for _, p := range rep.Pareto.Front {
		front[strconv.FormatInt(p.Trial, 10)] = true
	}
	infeasible := map[string]bool{}
	for _, n := range rep.Pareto.Infeasible {
		infeasible[strconv.FormatInt(n, 10)] = true
	}
	if len(front) == 0 || len(infeasible) == 0 {
		t.Fatalf("the study should have a front (%d) and infeasible trials (%d)", len(front), len(infeasible))
	}
	for k, l := range lines {
		onFront := k >= len(lines)-len(front)
		if front[l[4]] != onFront || onFront != (l[1] == "#08306b" && l[2] == "2.0") || infeasible[l[4]] != (l[3] != "") {
			t.Errorf("line %d (trial %s): colour %s width %s dashed %v; on the front %v, infeasible %v (the front last, dark and wide)",
				k, l[4], l[1], l[2], l[3] != "", front[l[4]], infeasible[l[4]])
		}
	}
}

// Beyond tableTrials the table lists the best complete trials by the
// objective (in its direction), the latest, and every trial with a note,
// in number order, and says so; up to it, every trial.
func TestTableSelection(t *testing.T) {
	for _, dir := range []string{"minimize", "maximize"} {
		sp, err := space.Parse([]byte(`{"objective": "` + dir + `", "params": [{"name": "x", "type": "float", "low": 0, "high": 1}]}`))
		if err != nil {
			t.Fatal(err)
		}
		h := &history.History{Space: sp}
		const n = 2500
		for i := range n {
			v := math.Mod(float64(i)*0.6180339887, 1) // distinct values in no order
			st := history.Complete
			if i%7 == 0 {
				st, v = history.Failed, math.NaN()
			}
			h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: st, Params: []float64{0.5}, Value: v})
		}
		h.Trials[700].Note = "looked odd"
		idx, caption := tableSelection(h)
		want := map[int]bool{700: true}
		var complete []int
		for i := range n {
			if i >= n-tableTrials/2 {
				want[i] = true
			}
			if h.Trials[i].State == history.Complete {
				complete = append(complete, i)
			}
		}
		better := func(a, b float64) bool { return a < b }
		if dir == "maximize" {
			better = func(a, b float64) bool { return a > b }
		}
		// The best half-table of complete trials, by brute force: a trial
		// is among them when fewer than tableTrials/2 complete trials beat it.
		for _, i := range complete {
			beaten := 0
			for _, j := range complete {
				if better(h.Trials[j].Value, h.Trials[i].Value) {
					beaten++
				}
			}
			if beaten < tableTrials/2 {
				want[i] = true
			}
		}
		if len(idx) != len(want) {
			t.Fatalf("%s: %d rows, want %d", dir, len(idx), len(want))
		}
		for k, i := range idx {
			if !want[i] || (k > 0 && idx[k-1] >= i) {
				t.Fatalf("%s: row %d is trial %d (wanted: %v, after %d)", dir, k, i, want[i], idx[max(k-1, 0)])
			}
		}
		if !strings.Contains(caption, strconv.Itoa(len(idx))+" of the study's 2500 trials") {
			t.Errorf("%s: caption %q", dir, caption)
		}
	}
	small := trialsHistory(t)
	if idx, caption := tableSelection(small); len(idx) != len(small.Trials) || caption != "" {
		t.Errorf("a study of %d trials lists %d rows, caption %q", len(small.Trials), len(idx), caption)
	}
}
