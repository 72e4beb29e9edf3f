package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"xbo/explain"
	"xbo/history"
	"xbo/space"
)

// sharedParamHistory is the known answer of explain/tradeoff_test.go
// (docs/explanations.md, "Trade-offs between objectives"): on [0,1]⁴,
//
//	error (minimize) = x + 2(a − 0.3)²,    speed (maximize) = x − 2(b − 0.7)²,
//
// so x improves speed exactly as much as it worsens error (it moves a
// configuration along the front), a acts on error only, b on speed only,
// z on nothing.
func sharedParamHistory(t *testing.T, n int, seed uint64) *history.History {
	t.Helper()
	sp, err := space.NewWithObjectives("", []space.Objective{{Name: "error", Direction: space.Minimize}, {Name: "speed", Direction: space.Maximize}},
		nil, []space.Param{
			{Name: "x", Type: space.Float, Low: 0, High: 1},
			{Name: "a", Type: space.Float, Low: 0, High: 1},
			{Name: "b", Type: space.Float, Low: 0, High: 1},
			{Name: "z", Type: space.Float, Low: 0, High: 1},
		})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	h := &history.History{Name: "shared", Source: "test", Space: sp}
	for i := range n {
		x, a, b, z := rng.Float64(), rng.Float64(), rng.Float64(), rng.Float64()
		e := x + 2*(a-0.3)*(a-0.3)
		s := x - 2*(b-0.7)*(b-0.7)
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: []float64{x, a, b, z},
			Value: e, Values: []float64{e, s}, Completion: i})
	}
	return h
}

// The report's trade-off section is the engine's answer (a fresh engine
// asked for the trade-offs with the report's PDP settings and the best
// feasible trial on the first objective gives the same document), its
// table lists the engine's numbers and verdicts with the parameters that
// move along the front first — on the known answer x, then a and b (one
// objective each), then z — and the Shapley table gives that trial's
// values for both objectives.
func TestReportTradeoff(t *testing.T) {
	ctx := context.Background()
	h := sharedParamHistory(t, 80, 1)
	rep, err := Build(ctx, engine(t), h, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Summary.BestTrial
	want, err := engine(t).Tradeoff(ctx, h, explain.TradeoffRequest{Samples: testOpts.PDP.Samples, Trial: &n})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(rep.Tradeoff)
	ref, _ := json.Marshal(want)
	if rep.Tradeoff == nil || !bytes.Equal(got, ref) {
		t.Fatalf("the report's trade-offs differ from the engine's:\n%s\n%s", got, ref)
	}
	if !slices.Contains(want.Front, n) || len(want.Shapley) != 2 || want.Shapley[0].Trial != n {
		t.Fatalf("the Shapley values are of trial %v, want the best feasible trial on error (%d), on the front %v", want.Shapley, n, want.Front)
	}
	verdict := map[string]string{}
	byParam := map[string]explain.TradeoffParam{}
	for _, p := range want.Params {
		verdict[p.Param], byParam[p.Param] = p.Verdict, p
	}
	if verdict["x"] != explain.AlongFront || verdict["a"] != explain.OneObjective || verdict["b"] != explain.OneObjective || verdict["z"] != explain.NoClearEff {
		t.Fatalf("verdicts %v; the known answer is x along the front, a and b one objective, z none", verdict)
	}

	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkWellFormed(t, page)
	table := regexp.MustCompile(`(?s)<table id="tradeoff-table">.*?</table>`).FindString(page)
	head := regexp.MustCompile(`<th>([^<]*)</th>`).FindAllStringSubmatch(strings.SplitN(table, "</tr>", 2)[0], -1)
	var heads []string
	for _, m := range head {
		heads = append(heads, m[1])
	}
	if !slices.Equal(heads, []string{"hyperparameter", "importance for error (min)", "importance for speed (max)", "conflict error × speed", "verdict"}) {
		t.Fatalf("trade-off table heads %q", heads)
	}
	rowRe := regexp.MustCompile(`<tr data-param="(\w+)"><th>\w+</th>(.*?)<td class="verdict \w+">([^<]*)</td></tr>`)
	cellRe := regexp.MustCompile(`<td class="num">([^<]*)(?:<br><small>([^<]*)</small>)?</td>`)
	var order []string
	for _, r := range rowRe.FindAllStringSubmatch(table, -1) {
		p := byParam[r[1]]
		order = append(order, r[1])
		cells := cellRe.FindAllStringSubmatch(r[2], -1)
		if len(cells) != 3 || r[3] != p.Verdict {
			t.Fatalf("%s: %d cells and the verdict %q, the engine's %q", r[1], len(cells), r[3], p.Verdict)
		}
		for k, c := range cells[:2] {
			e := p.Importance[k]
			if c[1] != Number(e.Fraction) || c[2] != "["+Number(e.CI95[0])+", "+Number(e.CI95[1])+"]" {
				t.Fatalf("%s: importance for %s %q %q, the engine's %v %v", r[1], want.Objectives[k].Name, c[1], c[2], e.Fraction, e.CI95)
			}
		}
		q := p.Pairs[0]
		if c := cells[2]; c[1] != Number(q.Conflict) || strings.HasPrefix(c[2], "trades") != q.Opposed || strings.HasSuffix(c[2], "by the bands") != q.BandBacked && q.Opposed {
			t.Fatalf("%s: conflict %q %q, the engine's %+v", r[1], c[1], c[2], q)
		}
	}
	if !slices.Equal(order, []string{"x", "a", "b", "z"}) && !slices.Equal(order, []string{"x", "b", "a", "z"}) {
		t.Fatalf("trade-off rows %v: x (along the front) first, z (no clear effect) last", order)
	}
	if !strings.Contains(page, want.Reading) || !strings.Contains(page, `docs/explanations.md, section &#34;Trade-offs between objectives&#34;`) {
		t.Errorf("the section lacks the reading %q or the pointer to the definitions", want.Reading)
	}

	// The Shapley values of trial n, a column per objective.
	shap := regexp.MustCompile(`(?s)<table id="tradeoff-shapley-table">.*?</table>`).FindString(page)
	srows := regexp.MustCompile(`<tr><th>(\w+)</th><td class="num">[^<]*</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td></tr>`).FindAllStringSubmatch(shap, -1)
	if len(srows) != 4 || !strings.Contains(page, fmt.Sprintf("Shapley values of trial #%d for every objective", n)) {
		t.Fatalf("Shapley table of trial %d: %d rows\n%s", n, len(srows), shap)
	}
	for i, r := range srows {
		if r[1] != order[i] {
			t.Fatalf("Shapley row %d is %s, the table's order is %v", i, r[1], order)
		}
		for k, cell := range r[2:4] {
			if !strings.HasPrefix(cell, Number(want.Shapley[k].Phi[r[1]])) {
				t.Fatalf("trial %d, φ of %s for %s: %q, the engine's %v", n, r[1], want.Shapley[k].Objective, cell, want.Shapley[k].Phi[r[1]])
			}
		}
	}
	js, err := rep.MarshalJSONIndent()
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Tradeoff *explain.TradeoffResult `json:"tradeoff"`
	}
	if err := json.Unmarshal(js, &back); err != nil || back.Tradeoff == nil || len(back.Tradeoff.Params) != 4 || back.Tradeoff.Kind != "tradeoff" {
		t.Fatalf("the JSON report's tradeoff: %+v, %v", back.Tradeoff, err)
	}
}
