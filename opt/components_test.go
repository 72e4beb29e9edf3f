package opt

import (
	"strings"
	"testing"
)

// Every name of every component map builds an optimizer that proposes past
// its initial design, and the settings keep the normalized name; an unknown
// name is refused with the known ones listed.
func TestEveryComponentWires(t *testing.T) {
	s := mustSpace(t, unit2)
	build := func(cfg Config) *Optimizer {
		t.Helper()
		cfg.Space, cfg.Seed, cfg.InitialSize, cfg.Candidates = s, 1, 3, 200
		o, err := New(cfg)
		if err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		for i := range 5 {
			tr, err := o.Ask()
			if err != nil {
				t.Fatalf("%+v: ask %d: %v", cfg, i, err)
			}
			if i < 4 { // the last one stays pending, so the liar is used
				if err := o.Tell(tr.ID, tr.U[0]*tr.U[0]+tr.U[1]); err != nil {
					t.Fatal(err)
				}
			}
		}
		return o
	}
	for name := range strategyComponents {
		bobax := BOBAXConfig{GridSize: 8, Samples: 100, Tolerance: 0.1}
		if o := build(Config{Strategy: " " + strings.ToUpper(name), BOBAX: bobax}); o.Config().Strategy != name {
			t.Errorf("strategy %q kept as %q", name, o.Config().Strategy)
		}
	}
	for name := range surrogateComponents {
		if o := build(Config{Surrogate: name}); o.Config().Surrogate != name {
			t.Errorf("surrogate %q kept as %q", name, o.Config().Surrogate)
		}
	}
	for name := range liarComponents {
		if o := build(Config{Liar: name}); o.Config().Liar != name {
			t.Errorf("liar %q kept as %q", name, o.Config().Liar)
		}
	}
	for name := range trustRules {
		if o := build(Config{TrustRegion: name}); o.Config().TrustRegion != name {
			t.Errorf("trust region %q kept as %q", name, o.Config().TrustRegion)
		}
	}
	for name := range maximizerComponents {
		if o := build(Config{AcqOptimizer: name}); o.Config().AcqOptimizer != name {
			t.Errorf("acquisition optimizer %q kept as %q", name, o.Config().AcqOptimizer)
		}
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Strategy: "magic"}, `unknown strategy "magic" (want a-bobax, bax, bo-rs, bobax, bobax-prob, ei, eibax, lcb, pi, pvar, random)`},
		{Config{Surrogate: "svm"}, `unknown surrogate "svm" (want forest, gp)`},
		{Config{Liar: "truth"}, `unknown liar "truth" (want believer, best, mean, worst)`},
		{Config{AcqOptimizer: "cmaes"}, `unknown acquisition optimizer "cmaes" (want focus, random)`},
		{Config{TrustRegion: "sometimes"}, `unknown trust region "sometimes" (want alternate, always, none)`},
		{Config{TrustRegion: "always", Surrogate: "forest"}, `trust region "always" needs a plain acquisition`},
		{Config{TrustRegion: "alternate", Strategy: "bobax"}, `trust region "alternate" needs a plain acquisition`},
	} {
		c.cfg.Space = s
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.cfg, err, c.want)
		}
	}
}

// The liars' values: the best, worst and mean observed values, or the
// model's own mean at the pending points (kriging believer).
func TestLiarValues(t *testing.T) {
	y := []float64{3, 1, 2}
	for name, want := range map[string]float64{"best": 1, "worst": 3, "mean": 2} {
		lies, err := liarComponents[name](nil, [][]float64{{0.5}, {0.1}}, y, 1)
		if err != nil || len(lies) != 2 || lies[0] != want || lies[1] != want {
			t.Errorf("%s: %v, %v; want two lies of %v", name, lies, err, want)
		}
	}
	model := constantModel{dim: 1, value: 7}
	lies, err := liarComponents["believer"](model, [][]float64{{0.5}, {0.1}}, y, 1)
	if err != nil || lies[0] != 7 || lies[1] != 7 {
		t.Errorf("believer: %v, %v; want the model's mean 7", lies, err)
	}
}

type constantModel struct {
	dim   int
	value float64
}

func (m constantModel) Dim() int { return m.dim }
func (m constantModel) Predict(x [][]float64, mean, variance []float64) error {
	for i := range x {
		mean[i], variance[i] = m.value, 1
	}
	return nil
}
