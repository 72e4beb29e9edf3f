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

const importanceSpace = `{"objective": "minimize", "params": [
  {"name": "lr", "type": "float", "low": 0.0001, "high": 1, "log": true},
  {"name": "layers", "type": "int", "low": 1, "high": 4},
  {"name": "opt", "type": "categorical", "choices": ["sgd", "adam"]},
  {"name": "momentum", "type": "float", "low": 0, "high": 0.99, "condition": {"parent": "opt", "values": ["sgd"]}}
]}`

// writeImportanceFiles writes a space and a trials CSV where the learning
// rate matters most, then the optimizer, with a conditional momentum.
func writeImportanceFiles(t *testing.T, rows int, extra string) (dataPath, spacePath string) {
	t.Helper()
	dir := t.TempDir()
	spacePath = filepath.Join(dir, "space.json")
	if err := os.WriteFile(spacePath, []byte(importanceSpace), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("lr,layers,opt,momentum,value\n")
	for range rows {
		lr := math.Exp(math.Log(1e-4) + rng.Float64()*math.Log(1e4))
		layers := 1 + rng.IntN(4)
		opt := []string{"sgd", "adam"}[rng.IntN(2)]
		mom := ""
		v := math.Pow(math.Log10(lr)+2, 2) + 0.1*float64(layers)
		if opt == "sgd" {
			m := rng.Float64() * 0.99
			mom = fmt.Sprintf("%.4f", m)
			v += 1.5 - m
		}
		fmt.Fprintf(&b, "%.6g,%d,%s,%s,%.6g\n", lr, layers, opt, mom, v)
	}
	b.WriteString(extra)
	dataPath = filepath.Join(dir, "trials.csv")
	if err := os.WriteFile(dataPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dataPath, spacePath
}

func TestExplainImportanceJSON(t *testing.T) {
	data, sp := writeImportanceFiles(t, 300, "0.01,2,adam,,\n")
	args := []string{"explain", "importance", "--data", data, "--space", sp, "--pairs", "--json", "--seed", "3"}
	code, out, errOut := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "1 trial(s) without a usable value") {
		t.Errorf("no warning about the skipped row: %q", errOut)
	}
	type effect struct {
		Fraction, Std float64
		CI95          []float64 `json:"ci95"`
	}
	var got struct {
		Method string            `json:"method"`
		Main   map[string]effect `json:"main"`
		Pairs  map[string]effect `json:"pairs"`
		Total  float64           `json:"total_variance"`
		Totals map[string]effect `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Main) != 4 || len(got.Pairs) != 6 || !(got.Total > 0) {
		t.Fatalf("shape: %d main, %d pairs, total %v", len(got.Main), len(got.Pairs), got.Total)
	}
	if got.Method != "gp-sobol" || len(got.Totals) != 4 || len(got.Main["lr"].CI95) != 2 || got.Totals["lr"].Fraction < got.Main["lr"].Fraction-0.01 {
		t.Fatalf("default method %q: totals %v, main %v", got.Method, got.Totals, got.Main)
	}
	if _, ok := got.Pairs["lr,layers"]; !ok {
		t.Fatalf("pair keys %v, want \"a,b\" in parameter order", got.Pairs)
	}
	best := ""
	for n, e := range got.Main {
		if best == "" || e.Fraction > got.Main[best].Fraction {
			best = n
		}
	}
	if best != "lr" {
		t.Errorf("top parameter %s, want lr: %v", best, got.Main)
	}
	if got.Main["layers"].Fraction > got.Main["lr"].Fraction/10 {
		t.Errorf("layers %.3f should matter far less than lr %.3f", got.Main["layers"].Fraction, got.Main["lr"].Fraction)
	}
	// Same data and seed: the same output to the last digit.
	_, again, _ := runCLI(t, args...)
	if again != out {
		t.Error("a second run with the same seed printed different numbers")
	}
}

func TestExplainImportanceTable(t *testing.T) {
	data, sp := writeImportanceFiles(t, 200, "")
	for method, wants := range map[string][]string{
		"gp-sobol":      {"Importance (gp-sobol)", "95% interval", "total", "posterior sample"},
		"forest-fanova": {"Importance (forest-fanova)", "± std", "random forest of 30 trees"},
	} {
		code, out, errOut := runCLI(t, "explain", "importance", "--data", data, "--space", sp, "--pairs", "--cap-quantile", "0.5", "--method", method)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", method, code, errOut)
		}
		for _, want := range append([]string{"rank", "   1  lr ", "all main effects", "lr × layers", "capped at"}, wants...) {
			if !strings.Contains(out, want) {
				t.Errorf("%s: table lacks %q:\n%s", method, want, out)
			}
		}
	}
}

func TestExplainImportanceBadInput(t *testing.T) {
	good, sp := writeImportanceFiles(t, 20, "")
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"no data flag", []string{"--space", sp}, 2, []string{"--data"}},
		{"bad trees", []string{"--data", good, "--space", sp, "--trees", "-1"}, 2, []string{"--trees"}},
		{"too many trees", []string{"--data", good, "--space", sp, "--method", "forest-fanova", "--trees", "5000"}, 2, []string{"trees 5000 must lie in 1..1000"}},
		{"trees without the forest", []string{"--data", good, "--space", sp, "--trees", "50"}, 2, []string{"trees apply to forest-fanova"}},
		{"unknown method", []string{"--data", good, "--space", sp, "--method", "shap"}, 2, []string{`importance method "shap"`}},
		{"too many samples", []string{"--data", good, "--space", sp, "--samples", "100000"}, 2, []string{"samples 100000 must lie in"}},
		{"too many refits", []string{"--data", good, "--space", sp, "--refits", "99"}, 2, []string{"refits 99"}},
		{"bad quantile", []string{"--data", good, "--space", sp, "--cap-quantile", "1.5"}, 2, []string{"cap_quantile 1.5"}},
		{"both caps", []string{"--data", good, "--space", sp, "--cap-quantile", "0.2", "--cap-value", "1"}, 2, []string{"exclude"}},
		{"unknown column kept", []string{"--data", write("a.csv", "lr,layers,opt,momentum,bogus,value\n0.1,1,sgd,0.5,1,2\n0.2,2,adam,,1,3\n0.3,3,adam,,1,1\n"), "--space", sp}, 0, []string{`columns "bogus" are not parameters`, "kept as user attributes"}},
		{"out of space", []string{"--data", write("b.csv", "lr,layers,opt,momentum,value\n0.1,1,sgd,0.5,2\n5,1,sgd,0.5,2\n"), "--space", sp}, 1, []string{"line 3", "lr"}},
		{"not a number", []string{"--data", write("c.csv", "lr,layers,opt,momentum,value\n0.1,1,sgd,0.5,2\n0.1,x,sgd,0.5,2\n"), "--space", sp}, 1, []string{"line 3", "layers"}},
		{"one row", []string{"--data", write("d.csv", "lr,layers,opt,momentum,value\n0.1,1,sgd,0.5,2\n0.2,1,sgd,0.5,\n"), "--space", sp}, 1, []string{"need at least 3", "1 trial(s) without a usable value"}},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, append([]string{"explain", "importance"}, c.args...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (%s)", c.name, code, c.code, errOut)
		}
		for _, w := range c.stderr {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr %q lacks %q", c.name, errOut, w)
			}
		}
	}
}
