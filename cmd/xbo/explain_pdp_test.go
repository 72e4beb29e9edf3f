package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePDPFixture writes a mixed space (log float, int, categorical with a
// conditional child) and 50 trials of a known function into dir.
func writePDPFixture(t *testing.T) (spacePath, dataPath string) {
	t.Helper()
	dir := t.TempDir()
	spacePath = filepath.Join(dir, "space.json")
	err := os.WriteFile(spacePath, []byte(`{"objective":"minimize","params":[
 {"name":"lr","type":"float","low":0.0001,"high":1,"log":true},
 {"name":"layers","type":"int","low":1,"high":5},
 {"name":"opt","type":"categorical","choices":["sgd","adam"]},
 {"name":"momentum","type":"float","low":0,"high":1,"condition":{"parent":"opt","values":["sgd"]}}]}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	b.WriteString("lr,layers,opt,momentum,value\n")
	for range 50 {
		lr := math.Exp(math.Log(1e-4) * rng.Float64())
		layers := 1 + rng.IntN(5)
		v := math.Pow(math.Log10(lr)+2.5, 2) + 0.3*math.Pow(float64(layers-3), 2)
		if rng.IntN(2) == 0 {
			m := rng.Float64()
			v += 0.5 + (m-0.9)*(m-0.9)
			fmt.Fprintf(&b, "%g,%d,sgd,%g,%g\n", lr, layers, m, v)
		} else {
			fmt.Fprintf(&b, "%g,%d,adam,,%g\n", lr, layers, v)
		}
	}
	dataPath = filepath.Join(dir, "trials.csv")
	if err := os.WriteFile(dataPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return spacePath, dataPath
}

func TestExplainPDPJSONShape(t *testing.T) {
	sp, data := writePDPFixture(t)
	svg := filepath.Join(t.TempDir(), "lr.svg")
	code, out, errOut := runCLI(t, "explain", "pdp", "--data", data, "--space", sp, "--param", "lr",
		"--mc", "200", "--ice", "--json", "--svg", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, key := range []string{"param", "grid", "mean", "sd", "lower", "upper", "ice"} {
		if _, ok := res[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	var grid, mean []float64
	var ice [][]float64
	_ = json.Unmarshal(res["grid"], &grid)
	_ = json.Unmarshal(res["mean"], &mean)
	_ = json.Unmarshal(res["ice"], &ice)
	if len(grid) != 20 || len(mean) != 20 || len(ice) != 200 {
		t.Errorf("grid %d, mean %d, ice %d", len(grid), len(mean), len(ice))
	}
	// The quadratic in log10(lr) has its minimum near 10^−2.5: the PDP must
	// agree on the shape.
	best := 0
	for g := range mean {
		if mean[g] < mean[best] {
			best = g
		}
	}
	if grid[best] < 1e-3 || grid[best] > 1e-2 {
		t.Errorf("PDP minimum at lr = %g, want near 3e-3", grid[best])
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "<polygon", "<polyline", "best configuration"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestExplainPDPVariants(t *testing.T) {
	sp, data := writePDPFixture(t)
	code, out, errOut := runCLI(t, "explain", "pdp", "--data", data, "--space", sp, "--param", "opt", "--param2", "layers", "--mc", "50", "--exact")
	if code != 0 || !strings.Contains(out, "PDP of opt × layers") || !strings.Contains(out, "adam") {
		t.Fatalf("pair: exit %d %s %s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "explain", "pdp", "--data", data, "--space", sp, "--param", "lr", "--slice", "--json", "--surrogate", "forest")
	if code != 0 || !strings.Contains(out, `"kind": "slice"`) || !strings.Contains(out, "not a partial dependence") {
		t.Fatalf("slice: exit %d %s %s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"--data", data, "--space", sp},
		{"--data", data, "--space", sp, "--param", "lr", "--grid", "1"},
		{"--data", data, "--space", sp, "--param", "lr", "--surrogate", "svm"},
		{"--space", sp, "--param", "lr"},
	} {
		if code, _, _ := runCLI(t, append([]string{"explain", "pdp"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, errOut := runCLI(t, "explain", "pdp", "--data", data, "--space", sp, "--param", "nope"); code != 2 || !strings.Contains(errOut, "nope") {
		t.Errorf("unknown parameter: exit %d %s", code, errOut)
	}
}

func TestExplainRegional(t *testing.T) {
	sp, data := writePDPFixture(t)
	svg := filepath.Join(t.TempDir(), "reg.svg")
	code, out, errOut := runCLI(t, "explain", "regional", "--data", data, "--space", sp, "--param", "lr", "--splits", "3", "--mc", "300", "--json", "--svg", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Splits   int
		BestLeaf int `json:"best_leaf"`
		Leaves   []struct {
			Path      []string
			Size      int
			HoldsBest bool `json:"holds_best"`
			PDP       struct{ Mean []float64 }
		}
		Tree struct{ Split *struct{ Param string } }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Splits != 3 || len(res.Leaves) != 4 || res.Tree.Split == nil {
		t.Fatalf("splits %d, leaves %d", res.Splits, len(res.Leaves))
	}
	total, bests := 0, 0
	for _, l := range res.Leaves {
		total += l.Size
		if l.HoldsBest {
			bests++
		}
		if len(l.Path) == 0 || len(l.PDP.Mean) != 20 {
			t.Errorf("leaf %+v", l)
		}
	}
	if total != 300 || bests != 1 || res.BestLeaf < 0 {
		t.Errorf("leaf sizes sum to %d, %d best leaves, best leaf %d", total, bests, res.BestLeaf)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "<polyline"); n != 5 {
		t.Errorf("SVG has %d curves, want global + 4 leaves", n)
	}
	code, out, _ = runCLI(t, "explain", "regional", "--data", data, "--space", sp, "--param", "lr", "--mc", "200")
	if code != 0 || !strings.Contains(out, "★ best trial") || !strings.Contains(out, "Leaf") {
		t.Errorf("text output: exit %d\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "explain", "regional", "--data", data, "--space", sp, "--param", "lr", "--splits", "0"); code != 2 {
		t.Errorf("--splits 0 without --depth: exit %d", code)
	}
}
