package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"xbo/explain/regional"
	"xbo/metrics"
	"xbo/opt"
	"xbo/space"
)

// The code preset is moosbauer2021 with the latest commit's uniform random
// design, SS_L2 and the authors' MMD estimator; its alias is accepted; and
// a run with it starts with 4·d design points that are not a Latin
// hypercube (a random LHS would put one point in each of the 12 strata of
// every coordinate).
func TestPDPSplitPresetMoosbauer2021Code(t *testing.T) {
	p, err := PDPSplitPreset(PresetMoosbauer2021Code)
	if err != nil {
		t.Fatal(err)
	}
	if alias, err := PDPSplitPreset("paper000-code"); err != nil || !reflect.DeepEqual(alias, p) {
		t.Fatalf("alias: %+v, %v", alias, err)
	}
	base, _ := PDPSplitPreset(PresetMoosbauer2021)
	base.Preset, base.InitialDesign, base.Criterion, base.MMD = PresetMoosbauer2021Code, "random", regional.CriterionL2, MMDMedian
	if !reflect.DeepEqual(base, p) {
		t.Fatalf("code preset %+v, want %+v", p, base)
	}
	if p.Budgets[8] != 250 || p.MinNodeSize != 2 || !p.SplitOnSD {
		t.Fatalf("code preset %+v", p)
	}
	ro := p.runOptions(3, 1, 2)
	ro.Budget = 13
	run, err := Run(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	lhsEverywhere := true
	for j := range 3 {
		strata := map[int]bool{}
		for _, tr := range run.History[:12] {
			if tr.Acquisition != opt.AcqInitialDesign {
				t.Fatalf("trial acquisition %q inside the design", tr.Acquisition)
			}
			strata[int(tr.U[j]*12)] = true
		}
		lhsEverywhere = lhsEverywhere && len(strata) == 12
	}
	if lhsEverywhere || run.History[12].Acquisition != "lcb" {
		t.Errorf("the design is a Latin hypercube (%v) or trial 13 is not LCB (%q)", lhsEverywhere, run.History[12].Acquisition)
	}
}

// designMMD with the authors' estimator is √MMD² against as many uniform
// points as the run has evaluations, drawn from the seed; xbo's is MMD with
// bandwidth √(d/6) against the Monte Carlo sample size.
func TestDesignMMD(t *testing.T) {
	f, _ := Lookup(NameStyblinskiTang, 3)
	sp, _ := f.Space()
	rng := rand.New(rand.NewPCG(9, 9))
	x := make([][]float64, 20)
	for i := range x {
		x[i] = []float64{0.2 * rng.Float64(), rng.Float64(), rng.Float64()}
	}
	const seed = 5
	got, err := designMMD(sp, x, MMDMedian, 1000, seed)
	if err != nil {
		t.Fatal(err)
	}
	ref := rand.New(rand.NewPCG(seed^0x4d4d44, seed^0x9e3779b97f4a7c15))
	m2, _ := metrics.MMD2Median(x, sp.Sample(ref, len(x)))
	if math.Abs(got-math.Sqrt(m2)) > 1e-15 || !(got > 0.2) {
		t.Errorf("median estimator %v, want √%v", got, m2)
	}
	ref = rand.New(rand.NewPCG(seed^0x4d4d44, seed^0x9e3779b97f4a7c15))
	want, _ := metrics.MMD(x, sp.Sample(ref, 1000), metrics.UniformBandwidth(3))
	if got, err := designMMD(sp, x, MMDUniformBandwidth, 1000, seed); err != nil || got != want {
		t.Errorf("uniform-bandwidth estimator %v (%v), want %v", got, err, want)
	}
}

// A small run of the code preset reports the median estimator and the split
// in its footer, and the criterion reaches the tree: the area impurity scores
// other leaves than eq. 6 on the same runs. Unknown criteria and estimators
// are rejected before any run.
func TestPDPSplitCriterionAndMMD(t *testing.T) {
	p, err := PDPSplitPreset(PresetMoosbauer2021Code)
	if err != nil {
		t.Fatal(err)
	}
	p.Dims, p.Taus, p.Seeds, p.Samples, p.Workers = []int{3}, []float64{0.1}, 2, 200, 2
	p.Budgets = map[int]int{3: 20}
	l2, err := PDPSplit(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := l2.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"preset moosbauer2021-code", "random design", "median-heuristic bandwidth", "eq. 6 on the ICE curves of the sd", "leaves of ≥ 2 ICE curves"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if l2.MMD != MMDMedian || l2.Criterion != "l2" || !(l2.Rows[0].MMD > 0) {
		t.Errorf("result %+v", l2)
	}
	// The per-replication values average to the row's means.
	row := l2.Rows[0]
	if len(row.Runs) != 2 || row.Runs[1].Seed != 2 {
		t.Fatalf("runs %+v", row.Runs)
	}
	for l := range row.DeltaMC {
		mc := (row.Runs[0].DeltaMC[l] + row.Runs[1].DeltaMC[l]) / 2
		nll := (row.Runs[0].DeltaNLL[l] + row.Runs[1].DeltaNLL[l]) / 2
		if math.Abs(mc-row.DeltaMC[l]) > 1e-9 || math.Abs(nll-row.DeltaNLL[l]) > 1e-9 || row.Runs[0].DeltaMC[l] == row.Runs[1].DeltaMC[l] {
			t.Errorf("depth %d: runs %+v do not average to δMC %v, δNLL %v", l, row.Runs, row.DeltaMC[l], row.DeltaNLL[l])
		}
	}
	if mmd := (row.Runs[0].MMD + row.Runs[1].MMD) / 2; math.Abs(mmd-row.MMD) > 1e-12 {
		t.Errorf("run MMDs average to %v, row %v", mmd, row.MMD)
	}
	p.Criterion = regional.CriterionArea
	area, err := PDPSplit(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if area.Rows[0].MMD != l2.Rows[0].MMD || reflect.DeepEqual(area.Rows[0].DeltaMC, l2.Rows[0].DeltaMC) {
		t.Errorf("area: MMD %v (l2 %v), δMC %v equal to l2's", area.Rows[0].MMD, l2.Rows[0].MMD, area.Rows[0].DeltaMC)
	}
	for _, bad := range []PDPSplitOptions{{TreeSettings: TreeSettings{Criterion: "l3"}}, {TreeSettings: TreeSettings{MMD: "mean"}}} {
		if _, err := PDPSplit(context.Background(), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// The LCBench presets: the paper's text (τ = 1, 30 replications) and the
// authors' code (λ = 0.5, a 2·d = 14-point random LHS, focus search refitted
// every iteration, SS_L2 on the sd curves with leaves of ≥ 2, their MMD, one
// replication); the optimizer a run builds applies them.
func TestLCBenchPresets(t *testing.T) {
	paper, err := LCBenchPreset(PresetMoosbauer2021)
	if err != nil {
		t.Fatal(err)
	}
	if paper.Tau != 1 || paper.Seeds != 30 || paper.Budget != 200 || paper.Depth != 6 || paper.Samples != 1000 || paper.Grid != 20 {
		t.Errorf("paper preset %+v", paper)
	}
	code, err := LCBenchPreset("paper000-code")
	if err != nil {
		t.Fatal(err)
	}
	if code.Preset != PresetMoosbauer2021Code || code.Tau != 0.5 || code.Seeds != 1 || code.Budget != 200 || code.Depth != 6 ||
		code.InitialDesign != "lhs" || code.InitialSize != 14 || code.AcqOptimizer != "focus" || code.FullRefitEvery >= 0 ||
		code.MinNodeSize != 2 || !code.SplitOnSD || code.Criterion != regional.CriterionL2 || code.MMD != MMDMedian {
		t.Errorf("code preset %+v", code)
	}
	if _, err := LCBenchPreset("paper001"); err == nil {
		t.Error("unknown preset accepted")
	}
	sp, err := space.Parse([]byte(LCBenchSpace))
	if err != nil {
		t.Fatal(err)
	}
	o, err := opt.New(code.optConfig(sp, 3))
	if err != nil {
		t.Fatal(err)
	}
	c := o.Config()
	if c.Tau != 0.5 || c.InitialDesign != "lhs" || c.InitialSize != 14 || c.AcqOptimizer != "focus" || c.FullRefitEvery >= 0 || c.Kernel != "matern32" {
		t.Errorf("optimizer %+v", c)
	}
}

// A short LCBench run with the code preset's settings prints the paper's
// Table 2 beside ours and says which settings ran; skipped without the
// project's shared data.
func TestLCBenchCodePresetSmall(t *testing.T) {
	const data = "../../shared/data/lcbench2000_phoneme.csv"
	if _, err := os.Stat(data); err != nil {
		t.Skip("no LCBench data:", err)
	}
	o, _ := LCBenchPreset(PresetMoosbauer2021Code)
	o.Data, o.Budget, o.Samples, o.Grid, o.Depth, o.FullRefitEvery, o.Workers = data, 30, 60, 5, 2, 0, 1
	res, err := LCBench(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"preset moosbauer2021-code", "over 1 seeds", "τ = 0.5", "14 lhs design points", "leaves of ≥ 2 ICE curves, eq. 6 on the ICE curves of the sd", "median-heuristic", "61.9"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if len(res.Rows) != 7 || !(res.MMD > 0) {
		t.Errorf("result %+v", res)
	}
}

// The authors' MMD estimator has a floor set by the sample size: a design
// drawn uniformly at random, as large as a d = 3 run of the code preset (80
// evaluations), is not at 0 against another uniform sample. The floor is
// what a run without sampling bias scores, so Table 1's low-bias MMD reads
// against it; `go test -run TestUniformDesignMMDLevel -v ./bench` prints it.
func TestUniformDesignMMDLevel(t *testing.T) {
	f, _ := Lookup(NameStyblinskiTang, 3)
	sp, _ := f.Space()
	const draws = 150
	var sum, sum2 float64
	for s := range uint64(draws) {
		x := sp.Sample(rand.New(rand.NewPCG(s, 77)), 80)
		v, err := designMMD(sp, x, MMDMedian, 0, s+1)
		if err != nil {
			t.Fatal(err)
		}
		sum, sum2 = sum+v, sum2+v*v
	}
	mean := sum / draws
	sd := math.Sqrt((sum2 - draws*mean*mean) / (draws - 1))
	t.Logf("√MMD² of 80 uniform points against 80 uniform points, d = 3: %.3f ± %.3f over %d draws", mean, sd, draws)
	// A floor well above 0 and well below a concentrated design's.
	if !(mean > 0.03 && mean < 0.15) {
		t.Errorf("uniform floor %v", mean)
	}
}
