package explain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"

	"xbo/space"
)

// linearTruth are the Sobol indices of linearStudy's f = 3a + b + 0.1c with
// c uniform over {0, 1, 2}: Var 3a = 9/12, Var b = 1/12, Var 0.1c = 0.01·2/3.
func linearTruth() map[string]float64 {
	va, vb, vc := 9.0/12, 1.0/12, 0.01*2/3
	v := va + vb + vc
	return map[string]float64{"a": va / v, "b": vb / v, "c": vc / v}
}

func TestImportanceGPSobol(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	h := linearStudy(t, space.Maximize, 60)
	res, err := e.Importance(ctx, h, ImportanceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != ImportanceGPSobol || res.Surrogate == nil || res.Surrogate.Kind != SurrogateGP {
		t.Fatalf("method %q, surrogate %+v", res.Method, res.Surrogate)
	}
	truth := linearTruth()
	for name, want := range truth {
		m, tot := res.Main[name], res.Total[name]
		if math.Abs(m.Fraction-want) > 0.03 || math.Abs(tot.Fraction-want) > 0.03 {
			t.Errorf("%s: main %.3f total %.3f, want %.3f", name, m.Fraction, tot.Fraction, want)
		}
		if len(m.CI95) != 2 || !(m.CI95[0] <= want+0.01 && want-0.01 <= m.CI95[1]) {
			t.Errorf("%s: interval %v far from %.3f", name, m.CI95, want)
		}
	}
	if len(res.Pairs) != 3 || res.Pairs["a,b"].Fraction > 0.02 {
		t.Errorf("pairs %+v", res.Pairs)
	}
	if r := res.Ranking[0]; r.Param != "a" || r.Total == nil || len(r.CI95) != 2 {
		t.Errorf("ranking %+v", res.Ranking)
	}
	if !strings.Contains(res.Note, "posterior sample") || !strings.Contains(res.Note, fmt.Sprintf("%d refits of its hyperparameters", DefaultRefits)) {
		t.Errorf("note %q", res.Note)
	}

	// Without the refits the samples come from one GP: other intervals, the
	// same estimates.
	single, err := e.Importance(ctx, h, ImportanceRequest{Refits: -1})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := single.Main["a"], res.Main["a"]; a.Fraction != b.Fraction || (a.CI95[0] == b.CI95[0] && a.CI95[1] == b.CI95[1]) ||
		strings.Contains(single.Note, "refits") {
		t.Errorf("refits=-1: %+v (note %q), with refits %+v", a, single.Note, b)
	}

	// The forest is still there when asked for, with its own JSON.
	fo, err := e.Importance(ctx, h, ImportanceRequest{Method: ImportanceForest})
	if err != nil {
		t.Fatal(err)
	}
	if fo.Method != ImportanceForest || fo.Surrogate.Kind != SurrogateForest || fo.Total != nil || fo.Ranking[0].CI95 != nil {
		t.Errorf("forest result %+v", fo)
	}

	// Good-region importance fits its GP to the capped values.
	capped, err := e.Importance(ctx, h, ImportanceRequest{CapQuantile: 0.25, Refits: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(capped.Cap, "best 25%") || capped.TotalVariance >= res.TotalVariance {
		t.Errorf("capped: %q, variance %g (uncapped %g)", capped.Cap, capped.TotalVariance, res.TotalVariance)
	}
}

// A large study's subset-of-data GP samples too.
func TestImportanceGPSobolSubset(t *testing.T) {
	if testing.Short() {
		t.Skip("600 trials")
	}
	e := newEngine(t, Config{})
	res, err := e.Importance(context.Background(), linearStudy(t, space.Maximize, 600), ImportanceRequest{Samples: 512, Posterior: 100, Refits: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Surrogate.Approximate {
		t.Fatalf("surrogate %+v", res.Surrogate)
	}
	for name, want := range linearTruth() {
		if m := res.Main[name]; math.Abs(m.Fraction-want) > 0.03 || len(m.CI95) != 2 {
			t.Errorf("%s: %+v, want %.3f", name, m, want)
		}
	}
}

func TestImportanceRequestLimits(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	h := linearStudy(t, space.Maximize, 20)
	for _, req := range []ImportanceRequest{
		{Method: "shap"},
		{Trees: 10},                              // trees belong to the forest
		{Method: ImportanceForest, Samples: 100}, // samples belong to gp-sobol
		{Method: ImportanceForest, Surrogate: &Surrogate{}},
		{Samples: MaxImportanceSamples + 1},
		{Samples: 3},
		{Posterior: MaxImportancePosterior + 1},
		{Refits: MaxRefits + 1},
		{Refits: -2},
		{Method: ImportanceForest, Refits: 2},
		{Surrogate: &Surrogate{Kind: SurrogateForest}},
		{Surrogate: &Surrogate{Kernel: "cubic"}},
	} {
		if _, err := e.Importance(ctx, h, req); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", req, err)
		}
	}
	q, err := ParseQuery("importance", h.Space, url.Values{"method": {"gp-sobol"}, "samples": {"256"}, "posterior": {"50"}, "kernel": {"se"}})
	if err != nil {
		t.Fatal(err)
	}
	r := q.(ImportanceRequest)
	if r.Samples != 256 || r.Posterior != 50 || r.Surrogate == nil || r.Surrogate.Kernel != "se" {
		t.Fatalf("parsed %+v", r)
	}
}

// ByTotal reorders the main-effect ranking by total effect, so a
// parameter acting only through an interaction comes first when its total
// is largest; equal totals and rows without one keep their main order.
func TestImportanceByTotal(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &ImportanceResult{Ranking: []RankedEffect{
		{Param: "a", Fraction: 0.5, Total: f(0.55)},
		{Param: "b", Fraction: 0.2, Total: f(0.3)},
		{Param: "c", Fraction: 0, Total: f(0.7)},
		{Param: "d", Fraction: 0, Total: f(0.3)},
	}}
	var got []string
	for _, e := range r.ByTotal() {
		got = append(got, e.Param)
	}
	if want := []string{"c", "a", "b", "d"}; !slices.Equal(got, want) {
		t.Errorf("order by total %v, want %v", got, want)
	}
	if r.Ranking[0].Param != "a" {
		t.Error("ByTotal reordered Ranking itself")
	}
	noTotal := &ImportanceResult{Ranking: []RankedEffect{{Param: "x", Fraction: 0.6}, {Param: "y", Fraction: 0.1}}}
	if got := noTotal.ByTotal(); got[0].Param != "x" || got[1].Param != "y" {
		t.Errorf("without totals the order changed: %v", got)
	}
}
