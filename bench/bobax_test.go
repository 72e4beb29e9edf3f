package bench

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestAverageRanks(t *testing.T) {
	got := averageRanks([]float64{3, 1, 3, 2, 5})
	want := []float64{3.5, 1, 3.5, 2, 5}
	if !slices.Equal(got, want) {
		t.Errorf("ranks %v, want %v", got, want)
	}
}

func TestBOBAXSmallRun(t *testing.T) {
	res, err := BOBAX(context.Background(), BOBAXOptions{
		Functions: []string{"branin"}, Methods: []string{"rs", "ei", "bobax2", "bax"},
		Seeds: 2, BudgetPerDim: 8, Samples: 100, GridSize: 10, Candidates: 300, InitialSize: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 8 || len(res.Rows) != 4 {
		t.Fatalf("%d runs and %d rows, want 8 and 4", len(res.Runs), len(res.Rows))
	}
	for _, row := range res.Rows {
		for c := range 4 {
			if row.Method == "rs" && row.RelL1[c] != 0 {
				t.Errorf("RS relative to itself: %v", row.RelL1)
			}
			if row.Method == "ei" && row.RelRegret[c] != 0 {
				t.Errorf("EI relative to itself: %v", row.RelRegret)
			}
			// Four methods: combined ranks lie in [1, 4] and average 2.5.
			if row.Rank[c] < 1 || row.Rank[c] > 4 {
				t.Errorf("%s: rank %v outside [1, 4]", row.Method, row.Rank[c])
			}
		}
	}
	for c := range 4 {
		s := 0.0
		for _, row := range res.Rows {
			s += row.Rank[c]
		}
		if math.Abs(s-10) > 1e-9 {
			t.Errorf("ranks at checkpoint %d sum to %v, want 10", c, s)
		}
	}
	for _, r := range res.Runs {
		if r.Budget != 16 {
			t.Errorf("budget %d, want 16", r.Budget)
		}
		for c := range 4 {
			if !(r.L1First[c] >= 0) || !(r.Regret[c] >= 0) {
				t.Errorf("%s seed %d: L1 %v, regret %v", r.Method, r.Seed, r.L1First, r.Regret)
			}
			if c > 0 && r.Regret[c] > r.Regret[c-1] {
				t.Errorf("%s: regret increased %v", r.Method, r.Regret)
			}
		}
		if (r.Method == "bax") != (r.EIGSteps == 12) && r.Method != "bobax2" {
			t.Errorf("%s made %d EIG steps", r.Method, r.EIGSteps)
		}
		if r.Method == "bobax2" && r.EIGSteps != 6 {
			t.Errorf("bobax2 made %d EIG steps, want 6", r.EIGSteps)
		}
	}
	var buf bytes.Buffer
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "bobax2") || !strings.Contains(buf.String(), "[5.04]") {
		t.Errorf("table lacks our rows or the paper's numbers:\n%s", buf.String())
	}
	if _, err := BOBAX(context.Background(), BOBAXOptions{Methods: []string{"ei", "bax"}}); err == nil {
		t.Error("methods without rs accepted")
	}
	if _, err := BOBAX(context.Background(), BOBAXOptions{Methods: []string{"rs", "ei", "bobaxx"}}); err == nil {
		t.Error("unknown method accepted")
	}
}

// a-BOBAX runs in the benchmark: with a tolerance no band reaches it
// interleaves EIG_PDP as bobax2 does (6 EIG steps of 12 model-based
// proposals), with one every band meets it is EI from the start (0).
func TestBOBAXAdaptive(t *testing.T) {
	res, err := BOBAX(context.Background(), BOBAXOptions{
		Functions: []string{"branin"}, Methods: []string{"rs", "ei", "a-bobax1e-9", "a-bobax1e9"},
		Seeds: 1, BudgetPerDim: 8, Samples: 100, GridSize: 10, Candidates: 300, InitialSize: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a-bobax1e-9": 6, "a-bobax1e9": 0}
	for _, r := range res.Runs {
		if w, ok := want[r.Method]; ok && r.EIGSteps != w {
			t.Errorf("%s made %d EIG steps, want %d", r.Method, r.EIGSteps, w)
		}
	}
	for _, bad := range []string{"a-bobax0", "a-bobax-1", "a-bobaxInf"} {
		if _, err := BOBAX(context.Background(), BOBAXOptions{Methods: []string{"rs", "ei", bad}}); err == nil {
			t.Errorf("method %q accepted", bad)
		}
	}
}

// The evaluations to a band tolerance: one every band meets is met by the
// initial design, one no band meets never, and such a run counts as its
// budget in the row.
func TestBOBAXTolerance(t *testing.T) {
	for _, tc := range []struct {
		tol     float64
		run     int
		row     float64
		reached int
	}{{1e9, 4, 4, 2}, {1e-9, 0, 16, 0}} {
		res, err := BOBAX(context.Background(), BOBAXOptions{
			Functions: []string{"branin"}, Methods: []string{"rs", "ei", "bobax2"}, Tolerance: tc.tol,
			Seeds: 2, BudgetPerDim: 8, Samples: 100, GridSize: 10, Candidates: 300, InitialSize: 4,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Runs {
			if r.ToTolerance != tc.run {
				t.Errorf("tolerance %g, %s seed %d: %d evaluations, want %d", tc.tol, r.Method, r.Seed, r.ToTolerance, tc.run)
			}
		}
		for _, row := range res.Rows {
			if row.ToTolerance != tc.row || row.Reached != tc.reached {
				t.Errorf("tolerance %g, %s: %v evaluations, %d runs reaching it; want %v and %d", tc.tol, row.Method, row.ToTolerance, row.Reached, tc.row, tc.reached)
			}
		}
		var buf bytes.Buffer
		if err := res.WriteTable(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "Table 2's first column") {
			t.Errorf("table lacks the tolerance section:\n%s", buf.String())
		}
	}
	if _, err := BOBAX(context.Background(), BOBAXOptions{Methods: []string{"rs", "ei"}, Tolerance: -1}); err == nil {
		t.Error("negative tolerance accepted")
	}
}
