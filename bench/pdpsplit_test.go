package bench

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/gp"
	"xbo/opt"
	"xbo/space"
)

func TestPDPSplitSmall(t *testing.T) {
	res, err := PDPSplit(context.Background(), PDPSplitOptions{
		Dims: []int{3}, Taus: []float64{5, 0.1}, Seeds: 2, BudgetPerDim: 20, Samples: 200, Workers: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0].Bias != "low" || res.Rows[1].Bias != "high" {
		t.Fatalf("rows %+v", res.Rows)
	}
	for _, row := range res.Rows {
		if len(row.DeltaMC) != 2 || len(row.DeltaNLL) != 2 || row.Paper == nil || row.Seeds != 2 {
			t.Fatalf("row %+v", row)
		}
		for l := range row.DeltaMC {
			// A leaf's mean sd can be larger than the global one, but a
			// relative improvement above 100% would need a negative sd.
			if math.IsNaN(row.DeltaMC[l]) || row.DeltaMC[l] >= 100 || math.IsNaN(row.DeltaNLL[l]) {
				t.Errorf("d=%d τ=%g depth %d: δMC %v δNLL %v", row.Dim, row.Tau, res.Depths[l], row.DeltaMC[l], row.DeltaNLL[l])
			}
		}
		if !(row.MMD > 0 && row.MMD < 1.5) || !(row.GlobalMC > 0) {
			t.Errorf("MMD %v, global MC %v", row.MMD, row.GlobalMC)
		}
	}
	// Exploitation (τ = 0.1) concentrates the design: larger MMD than τ = 5.
	if !(res.Rows[1].MMD > res.Rows[0].MMD) {
		t.Errorf("MMD τ=0.1 %v not above τ=5 %v", res.Rows[1].MMD, res.Rows[0].MMD)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"δMC n_sp=1", "δNLL n_sp=3", "paper MMD", "13.64"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if _, err := PDPSplit(context.Background(), PDPSplitOptions{Dims: []int{1}}); err == nil {
		t.Error("d = 1 accepted")
	}
	if _, err := PDPSplit(context.Background(), PDPSplitOptions{Taus: []float64{-1}}); err == nil {
		t.Error("negative τ accepted")
	}
}

// truthModel is the Styblinski-Tang function as a zero-variance model on the
// unit cube, for Monte Carlo checks of the closed forms.
type truthModel struct {
	f  *Function
	sp *space.Space
}

func (m truthModel) Dim() int { return m.f.Dim }
func (m truthModel) Predict(x [][]float64, mean, variance []float64) error {
	for i, u := range x {
		mean[i], variance[i] = m.f.Eval(m.sp.Decode(u)), 0
	}
	return nil
}

// The closed-form regional PD over a leaf's box must match the Monte Carlo
// average of the true function over the leaf's members, and over the whole
// space must equal PartialDependence.
func TestStyblinskiTangRegionalPD(t *testing.T) {
	f, _ := Lookup(NameStyblinskiTang, 3)
	sp, _ := f.Space()
	truthICE, err := pdp.NewICE(context.Background(), truthModel{f, sp}, sp, []int{0}, pdp.Options{Samples: 20000, GridSize: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Split on a made-up variance so the boxes are arbitrary.
	varModel := funcVarModel{dim: 3, v: func(u []float64) float64 { return u[1]*u[1] + math.Sin(5*u[2]) }}
	ice, err := pdp.NewICE(context.Background(), varModel, sp, []int{0}, pdp.Options{Samples: 20000, GridSize: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	res, err := regional.Explain(context.Background(), ice, nil, regional.Options{MaxDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	global, err := styblinskiTangRegionalPD(sp, 0, res.Global.Grid, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for g, v := range res.Global.Grid {
		if want, _ := f.PartialDependence(0, v); math.Abs(global[g]-want) > 1e-9 {
			t.Errorf("global PD at %g: %g, want %g", v, global[g], want)
		}
	}
	for k := range res.Leaves {
		leaf := &res.Leaves[k]
		closed, err := styblinskiTangRegionalPD(sp, 0, leaf.PDP.Grid, leaf, res.Tree)
		if err != nil {
			t.Fatal(err)
		}
		members := leaf.Members()
		mc, err := truthICE.PDP(context.Background(), members)
		if err != nil {
			t.Fatal(err)
		}
		for g := range closed {
			// Five standard errors of the Monte Carlo mean.
			s, s2 := 0.0, 0.0
			for _, i := range members {
				s += truthICE.Mean[i][g]
				s2 += truthICE.Mean[i][g] * truthICE.Mean[i][g]
			}
			m := float64(len(members))
			se := math.Sqrt((s2/m - (s/m)*(s/m)) / m)
			if math.Abs(closed[g]-mc.Mean[g]) > 5*se+1e-9 {
				t.Errorf("leaf %v grid %d: closed form %g, Monte Carlo %g ± %g", leaf.Path, g, closed[g], mc.Mean[g], se)
			}
		}
	}
}

type funcVarModel struct {
	dim int
	v   func([]float64) float64
}

func (m funcVarModel) Dim() int { return m.dim }
func (m funcVarModel) Predict(x [][]float64, mean, variance []float64) error {
	for i, u := range x {
		mean[i], variance[i] = 0, m.v(u)
	}
	return nil
}

// The moosbauer2021 preset (also accepted by its earlier name, presetAliases)
// holds the settings of the authors' code: budgets 80, 150, 250 for d = 3,
// 5, 8, a 4·d random LHS, a Matérn-3/2 GP with nugget 1e-8 refitted every
// iteration, LCB with λ ∈ {0.1, 1, 5} by focus search, G = 20, n = 1,000,
// depths 1 and 3, 30 replications; and the optimizer it builds applies them.
func TestPDPSplitPresetMoosbauer2021(t *testing.T) {
	p, err := PDPSplitPreset(PresetMoosbauer2021)
	if err != nil {
		t.Fatal(err)
	}
	if old, err := PDPSplitPreset("paper000"); err != nil || !reflect.DeepEqual(old, p) {
		t.Fatalf("the earlier name paper000: %+v, %v; want %+v", old, err, p)
	}
	taus := slices.Sorted(slices.Values(p.Taus))
	if !slices.Equal(p.Dims, []int{3, 5, 8}) || !slices.Equal(taus, []float64{0.1, 1, 5}) ||
		!slices.Equal(p.Depths, []int{1, 3}) || p.Seeds != 30 || p.GridSize != 20 || p.Samples != 1000 ||
		p.Preset != "moosbauer2021" || p.MinNodeSize != 2 || !p.SplitOnSD {
		t.Fatalf("preset %+v", p)
	}
	budgets := map[int]int{3: 80, 5: 150, 8: 250}
	for _, d := range p.Dims {
		for _, tau := range p.Taus {
			ro := p.runOptions(d, tau, 7)
			c := ro.Config
			if ro.Function != NameStyblinskiTang || ro.Dim != d || ro.Budget != budgets[d] || ro.Strategy != "lcb" || ro.Tau != tau || ro.Seed != 7 {
				t.Errorf("d=%d τ=%g: run %+v", d, tau, ro)
			}
			if c.Kernel != "matern32" || c.MinNoise != 1e-8 || c.InitialDesign != "lhs" || c.InitialSize != 4*d ||
				c.AcqOptimizer != "focus" || c.FullRefitEvery >= 0 {
				t.Errorf("d=%d τ=%g: optimizer %+v", d, tau, c)
			}
			// The optimizer built from it keeps those settings.
			f, _ := Lookup(NameStyblinskiTang, d)
			sp, _ := f.Space()
			cfg := *c
			cfg.Space, cfg.Strategy, cfg.Tau = sp, ro.Strategy, ro.Tau
			o, err := opt.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := o.Config()
			if got.Kernel != "matern32" || got.MinNoise != 1e-8 || got.InitialSize != 4*d || got.Tau != tau ||
				got.InitialDesign != "lhs" || got.AcqOptimizer != "focus" || got.FullRefitEvery >= 0 {
				t.Errorf("d=%d τ=%g: built optimizer %+v", d, tau, got)
			}
		}
	}
	g := p.finalGPOptions(3)
	if g.Kernel != gp.Matern32 || g.MinNoise != 1e-8 {
		t.Errorf("final GP options %+v", g)
	}
	if _, err := PDPSplitPreset("paper001"); err == nil {
		t.Error("unknown preset accepted")
	}
	// A run with these settings starts with a 4·d-point Latin hypercube and
	// then asks LCB.
	ro := p.runOptions(3, 1, 2)
	ro.Budget = 14
	run, err := Run(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 3 {
		strata := map[int]bool{}
		for _, tr := range run.History[:12] {
			strata[int(tr.U[j]*12)] = true
		}
		if len(strata) != 12 {
			t.Errorf("coordinate %d: the 12 design points cover %d of 12 strata", j, len(strata))
		}
	}
	for i, tr := range run.History {
		want := opt.AcqInitialDesign
		if i >= 12 {
			want = "lcb"
		}
		if tr.Acquisition != want {
			t.Errorf("trial %d: acquisition %q, want %q", i, tr.Acquisition, want)
		}
		if tr.Hyper != nil && tr.Hyper.NoiseVariance < 1e-8*(1-1e-9) {
			t.Errorf("trial %d: fitted noise %g below the nugget 1e-8", i, tr.Hyper.NoiseVariance)
		}
	}
}

// A small run of the preset (d = 3, τ = 5, 2 replications, a 20-evaluation
// budget) prints our columns beside the paper's Table 1 row for d = 3, low
// bias, and says which settings it ran.
func TestPDPSplitPresetTable(t *testing.T) {
	p, err := PDPSplitPreset(PresetMoosbauer2021)
	if err != nil {
		t.Fatal(err)
	}
	p.Dims, p.Taus, p.Seeds, p.Samples, p.Workers = []int{3}, []float64{5}, 2, 200, 2
	p.Budgets = map[int]int{3: 20}
	res, err := PDPSplit(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Seeds != 2 || res.Budgets[3] != 20 || res.MinNoise != 1e-8 || res.Design != "lhs" {
		t.Fatalf("result %+v", res)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	header, row := lines[0], lines[1]
	for _, want := range []string{"δMC n_sp=1", "δMC n_sp=3", "δNLL n_sp=1", "δNLL n_sp=3", "paper MMD", "δMC 1", "δMC 3", "δNLL 1", "δNLL 3"} {
		if !strings.Contains(header, want) {
			t.Errorf("header lacks %q: %s", want, header)
		}
	}
	// Table 1, d = 3, low bias: MMD 0.18, δMC 7.65 / 13.64, δNLL 5.89 / 10.92.
	paper := strings.Fields(row[strings.Index(row, "|")+1:])
	if !slices.Equal(paper, []string{"0.18", "7.65", "13.64", "5.89", "10.92"}) {
		t.Errorf("paper columns %q", paper)
	}
	for _, want := range []string{"preset moosbauer2021", "over 2 seeds", "budgets 20 (d = 3)", "4·d-point lhs design", "noise floor 1e-08", "focus acquisition search", "n = 200, G = 20", "leaves of ≥ 2 ICE curves"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	p.Dims = []int{4}
	if _, err := PDPSplit(context.Background(), p); err == nil {
		t.Error("a dimension without a budget accepted")
	}
}

// scoreRegional passes the smallest leaf to the tree: with leaves of at
// least 400 of 1,000 ICE curves only the root can split, so depth 3 scores
// the same leaf as depth 1; with leaves of 2 the deeper tree goes further.
func TestScoreRegionalMinNodeSize(t *testing.T) {
	f, _ := Lookup(NameStyblinskiTang, 3)
	sp, _ := f.Space()
	// A design crowded into one corner, as exploitation leaves it.
	var x [][]float64
	var y []float64
	for i := range 15 {
		u := []float64{float64(i%5) / 4, 0.1 * float64(i%3) / 2, 0.1 * float64(i/5) / 2}
		x = append(x, u)
		y = append(y, f.Eval(sp.Decode(u)))
	}
	model, err := gp.Fit(x, y, gp.Options{Kernel: gp.Matern32, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	truth := func(grid []float64, leaf *regional.Leaf, tree *regional.Node) ([]float64, error) {
		return styblinskiTangRegionalPD(sp, 0, grid, leaf, tree)
	}
	score := func(minNode int) pdpSplitRun {
		r, err := scoreRegional(model, sp, x[0], 0, truth, 1000, 10, []int{1, 3}, regional.Options{MinNodeSize: minNode}, 4)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	big, small := score(400), score(2)
	if big.deltaMC[1] != big.deltaMC[0] {
		t.Errorf("leaves ≥ 400: depth 3 δMC %v differs from depth 1 %v", big.deltaMC[1], big.deltaMC[0])
	}
	if small.deltaMC[1] == small.deltaMC[0] {
		t.Errorf("leaves ≥ 2: depth 3 δMC %v equals depth 1", small.deltaMC[1])
	}
}
