package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"xbo/history"
	"xbo/space"
)

// testCatalogue is a problem of the catalogue, a copy of it whose truths
// are deliberately wrong, and a held-out tripwire that counts every
// evaluation: a tune run must never evaluate it.
func testCatalogue(t *testing.T, name string) (right, wrong *TruthProblem, all []*TruthProblem, trips *atomic.Int64) {
	t.Helper()
	right = problemNamed(t, name)
	w := *right
	w.Name = name + "-wrong"
	// The PD shifted by twice its largest variation, the indices reversed.
	shift := 2 * flatSpan(right)
	pd := right.PD
	w.PD = func(p int, v float64) (float64, bool) {
		x, ok := pd(p, v)
		return x + shift, ok
	}
	w.Main, w.Total = slices.Clone(right.Main), slices.Clone(right.Total)
	slices.Reverse(w.Main)
	slices.Reverse(w.Total)
	trips = &atomic.Int64{}
	trip := *problemNamed(t, "levy-4")
	trip.Name, trip.HeldOut = "tripwire", true
	eval := trip.Eval
	trip.Eval = func(x []float64) float64 { trips.Add(1); return eval(x) }
	trip.PD, trip.Main, trip.Total = nil, nil, nil
	return right, &w, []*TruthProblem{right, &w, &trip}, trips
}

// flatSpan is the largest range of a problem's exact PDs over the grid.
func flatSpan(p *TruthProblem) float64 {
	span := 0.0
	for j := range p.Space.Params {
		grid, _ := p.Space.Grid(j, 20)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range grid {
			pd, _ := p.PD(j, v)
			lo, hi = math.Min(lo, pd), math.Max(hi, pd)
		}
		span = math.Max(span, hi-lo)
	}
	return span
}

// readPoints decodes a JSON-lines dump.
func readPoints(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// A tiny calibration run: one cell per problem with coverages in [0, 1];
// the wrong truth's coverage is lower and its error larger; the dump holds
// one line per compared point with the explanation's header; and the
// held-out tripwire is never evaluated.
func TestTruthCalibrationSmall(t *testing.T) {
	_, _, all, trips := testCatalogue(t, "hartmann3-inert")
	var dump bytes.Buffer
	res, err := TruthCalibration(context.Background(), TruthCalibrationOptions{TruthSuiteOptions: TruthSuiteOptions{
		Catalogue: all, Data: []string{DataUniform}, Sizes: []int{6}, Seeds: 1, Workers: 1, Points: &dump},
		Samples: 200, TruthSamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	if trips.Load() != 0 {
		t.Fatalf("the tune suite evaluated the held-out tripwire %d times", trips.Load())
	}
	if len(res.Cells) != 2 || res.HeldOutSeeds != nil || !slices.Equal(res.TuneSeeds, []uint64{1}) {
		t.Fatalf("cells %+v, seeds %v / %v", res.Cells, res.TuneSeeds, res.HeldOutSeeds)
	}
	right, wrong := res.Cells[0], res.Cells[1]
	t.Logf("right truth: cover95 %.2f MAE %.3g; wrong truth: cover95 %.2f MAE %.3g", right.Coverage95, right.MAE, wrong.Coverage95, wrong.MAE)
	for _, c := range res.Cells {
		if c.Trials != 30 || c.Points != 100 || c.Coverage95 < 0 || c.Coverage95 > 1 || c.Coverage68 > c.Coverage95 ||
			c.EndPoints != 10 || c.InsidePoints != 90 || c.FlatPoints != 40 || c.Band == "" || c.TruthMaxStdErr != 0 {
			t.Errorf("cell %+v", c)
		}
	}
	if !(wrong.Coverage95 < right.Coverage95) || !(wrong.MAE > right.MAE) || wrong.Coverage95 > 0.2 {
		t.Errorf("a wrong truth did not lower coverage: right %+v, wrong %+v", right, wrong)
	}
	lines := readPoints(t, dump.Bytes())
	if len(lines) != right.Points+wrong.Points {
		t.Fatalf("%d dump lines for %d points", len(lines), right.Points+wrong.Points)
	}
	for _, l := range lines {
		about, _ := l["about"].(map[string]any)
		if l["problem"] == "tripwire" || l["seed"].(float64) != 1 || about["sampling_bias"] == nil || l["truth"] == nil {
			t.Fatalf("dump line %v", l)
		}
	}
	if len(res.Summaries) != 1 || res.Summaries[0].Part != "tune" || res.Summaries[0].Cells != 2 {
		t.Errorf("summaries %+v", res.Summaries)
	}
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "Tune part (seeds 1..1)") || strings.Contains(table.String(), "Held-out") {
		t.Errorf("table:\n%s", table.String())
	}
}

// A tiny importance run of gp-sobol at 12 and 100 uniform trials: rows with
// coverages in [0, 1]; reversed true indices are farther from the estimates
// and covered less often; the held-out tripwire is never evaluated.
func TestTruthImportanceSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("fits GPs")
	}
	_, _, all, trips := testCatalogue(t, "rastrigin-4")
	var dump bytes.Buffer
	res, err := TruthImportance(context.Background(), TruthImportanceOptions{TruthSuiteOptions: TruthSuiteOptions{
		Catalogue: all, Data: []string{DataUniform}, Sizes: []int{3}, Seeds: 1, Workers: 1, Points: &dump},
		Large: 100, Methods: []string{"gp-sobol"}})
	if err != nil {
		t.Fatal(err)
	}
	if trips.Load() != 0 {
		t.Fatalf("the tune suite evaluated the held-out tripwire %d times", trips.Load())
	}
	if len(res.Rows) != 4 {
		t.Fatalf("rows %+v", res.Rows)
	}
	byKey := map[string]TruthImportanceRow{}
	for _, r := range res.Rows {
		if r.Seeds != 1 || r.MainIntervals != 4 || r.TotalIntervals != 4 || r.MainCovered > 4 || r.MaxTotalError == nil || r.HeldOut {
			t.Errorf("row %+v", r)
		}
		byKey[r.Problem+" "+r.Size] = r
	}
	right, wrong := byKey["rastrigin-4 n=100"], byKey["rastrigin-4-wrong n=100"]
	t.Logf("right truth: max |ΔS| %.3f, %d/4 covered; wrong: %.3f, %d/4", right.MaxMainError, right.MainCovered, wrong.MaxMainError, wrong.MainCovered)
	if !(wrong.MaxMainError > right.MaxMainError) || !(wrong.MainCovered < right.MainCovered) {
		t.Errorf("reversed indices scored as well: right %+v, wrong %+v", right, wrong)
	}
	if lines := readPoints(t, dump.Bytes()); len(lines) != 16 {
		t.Errorf("%d dump lines, want 16", len(lines))
	}
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "rastrigin-4-wrong") || !strings.Contains(table.String(), "targets") {
		t.Errorf("table:\n%s", table.String())
	}
}

// A grid point's nearest trials that all share one value are a plateau;
// one differing value, or fewer than three trials, is none.
func TestObservedPlateaus(t *testing.T) {
	sp, err := space.New(space.Minimize, []space.Param{{Name: "a", Type: space.Float, Low: 0, High: 1}, {Name: "b", Type: space.Float, Low: 0, High: 1}})
	if err != nil {
		t.Fatal(err)
	}
	h := &history.History{Space: sp}
	add := func(a, v float64) {
		h.Trials = append(h.Trials, history.Trial{Number: int64(len(h.Trials)), State: history.Complete, Params: []float64{a, 0.5}, Value: v})
	}
	add(0.02, 0.32)
	add(0.1, 0.32)
	add(0.2, 0.32)
	add(0.5, 0.1)
	add(0.45, 0.1)
	add(0.55, 0.2)
	add(0.9, 0.05)
	add(0.95, 0.05)
	got := observedPlateaus(h, 0, []float64{0, 0.5, 1})
	if len(got) != 1 || got[0] != 0.32 {
		t.Errorf("plateaus %v, want {0: 0.32}", got)
	}
}
