package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"xbo/explain"
	"xbo/explain/sobol"
)

// The closed-form indices of the benchmark's cases agree with a large
// quasi-Monte Carlo pick-freeze estimate on the functions themselves (design
// error below 0.004 at 2^14 base points), which checks the derivations.
func TestImportanceCasesTruth(t *testing.T) {
	cases, err := analyticCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		f := func(x [][]float64, out []float64) error {
			for i, u := range x {
				out[i] = c.eval(c.sp.Decode(u))
			}
			return nil
		}
		res, err := sobol.Estimate(context.Background(), f, c.sp, sobol.Options{Samples: 1 << 14})
		if err != nil {
			t.Fatal(err)
		}
		for j := range c.main {
			if d := math.Abs(res.Main[j].Estimate - c.main[j]); d > 0.012 {
				t.Errorf("%s: S_%d %.4f, closed form %.4f", c.name, j+1, res.Main[j].Estimate, c.main[j])
			}
			if d := math.Abs(res.Total[j].Estimate - c.total[j]); d > 0.012 {
				t.Errorf("%s: T_%d %.4f, closed form %.4f", c.name, j+1, res.Total[j].Estimate, c.total[j])
			}
		}
	}
}

func TestImportanceBenchSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("fits GPs")
	}
	res, err := Importance(context.Background(), ImportanceOptions{Sizes: []int{60}, BOSeeds: -1, Methods: []string{explain.ImportanceGPSobol}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 5 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for _, r := range res.Rows[:5] {
		// 60 uniform points of a smooth low-dimensional function: the GP's
		// indices are within 0.1 of the truth.
		if r.Seeds != 1 || !(r.MaxMainError < 0.1) || r.Params == 0 {
			t.Errorf("%+v", r)
		}
	}
	var b bytes.Buffer
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ishigami") || !strings.Contains(b.String(), "95% interval covers") {
		t.Errorf("table:\n%s", b.String())
	}
	if _, err := Importance(context.Background(), ImportanceOptions{Sizes: []int{2}}); err == nil {
		t.Error("a size of 2 accepted")
	}
}

// A row of a method without total effects is valid JSON: its NaN total
// error is null.
func TestImportanceRowJSON(t *testing.T) {
	b, err := json.Marshal(ImportanceRow{Case: "c", Method: explain.ImportanceForest, MaxTotalError: math.NaN(), MaxMainError: 0.5})
	if err != nil || !strings.Contains(string(b), `"max_total_error":null`) || !strings.Contains(string(b), `"max_main_error":0.5`) {
		t.Fatalf("%s, %v", b, err)
	}
	b, err = json.Marshal(ImportanceRow{MaxTotalError: 0.25})
	if err != nil || !strings.Contains(string(b), `"max_total_error":0.25`) {
		t.Fatalf("%s, %v", b, err)
	}
}
