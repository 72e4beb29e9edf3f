package opt

import (
	"math"
	"slices"
	"strings"
	"testing"

	"xbo/space"
	"xbo/warp"
)

func TestOutputWarpSettings(t *testing.T) {
	sp, err := space.Parse([]byte(`{"params":[{"name":"x","type":"float","low":0,"high":1},{"name":"y","type":"float","low":0,"high":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg     Config
		want    string
		wantErr string
	}{
		{Config{}, DefaultOutputWarp, ""},
		{Config{Strategy: "lcb"}, DefaultOutputWarp, ""},
		{Config{Strategy: AcqRandom}, "none", ""},
		{Config{OutputWarp: "yeo-johnson"}, "yeo-johnson", ""},
		{Config{Strategy: "lcb", OutputWarp: "yeo-johnson"}, "yeo-johnson", ""},
		{Config{Surrogate: "forest"}, "none", ""},
		{Config{Surrogate: "forest", OutputWarp: "Yeo-Johnson"}, "yeo-johnson", ""},
		{Config{Strategy: "bobax"}, "none", ""},
		{Config{Xi: 0.1}, "none", ""},
		{Config{OutputWarp: "none"}, "none", ""},
		{Config{OutputWarp: "log"}, "", `unknown output warp "log" (want none, yeo-johnson)`},
		{Config{Strategy: "bobax", OutputWarp: "yeo-johnson"}, "", "cannot be combined with the strategy's acquisition"},
		{Config{Xi: 0.1, OutputWarp: "yeo-johnson"}, "", "cannot be combined with xi"},
	} {
		c.cfg.Space = sp
		o, err := New(c.cfg)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%+v: error %v, want one containing %q", c.cfg, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", c.cfg, err)
		}
		if o.cfg.OutputWarp != c.want {
			t.Errorf("strategy %q surrogate %q xi %v warp %q: got %q, want %q", c.cfg.Strategy, c.cfg.Surrogate, c.cfg.Xi, c.cfg.OutputWarp, o.cfg.OutputWarp, c.want)
		}
	}
}

// The proposal model is fitted to the warped values: on a heavy-tailed
// objective SurrogateAt interpolates warp.Fit's transform of the data, and
// with "none" the raw values.
func TestOutputWarpFitsTheProposalModel(t *testing.T) {
	sp, err := space.Parse([]byte(`{"params":[{"name":"x","type":"float","low":0,"high":1},{"name":"y","type":"float","low":0,"high":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	heavy := func(p []float64) float64 { return math.Exp(12 * ((p[0]-0.3)*(p[0]-0.3) + (p[1]-0.6)*(p[1]-0.6))) }
	for _, name := range []string{"yeo-johnson", "none"} {
		o, err := New(Config{Space: sp, Seed: 3, OutputWarp: name})
		if err != nil {
			t.Fatal(err)
		}
		run(t, o, 15, heavy)
		x, y := o.data(15)
		want := y
		if name == "yeo-johnson" {
			tr, err := warp.Fit(y)
			if err != nil {
				t.Fatal(err)
			}
			if !(tr.Lambda < 0.9) {
				t.Errorf("a heavy upper tail should be compressed: λ = %v", tr.Lambda)
			}
			want = tr.Apply(y)
		}
		m, err := o.SurrogateAt(15)
		if err != nil {
			t.Fatal(err)
		}
		mean, variance := make([]float64, len(x)), make([]float64, len(x))
		if err := m.Predict(x, mean, variance); err != nil {
			t.Fatal(err)
		}
		spread := slices.Max(want) - slices.Min(want)
		for i := range x {
			if math.Abs(mean[i]-want[i]) > 0.02*spread {
				t.Fatalf("%s: model mean %v at trial %d, want ≈ %v (value %v)", name, mean[i], i, want[i], y[i])
			}
		}
	}
}
