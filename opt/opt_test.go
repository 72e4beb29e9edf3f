package opt

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"xbo/acq"
	"xbo/gp"
	"xbo/space"
	"xbo/surrogate"
)

func mustSpace(t testing.TB, js string) *space.Space {
	t.Helper()
	s, err := space.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const square2 = `{"params":[
	{"name":"x","type":"float","low":-5,"high":10},
	{"name":"y","type":"float","low":0,"high":15}]}`

// bowl2 has its minimum 1 at (2.5, 7.5) and is smooth, so a GP learns it fast.
func bowl2(p []float64) float64 {
	return 1 + math.Pow((p[0]-2.5)/15, 2) + 2*math.Pow((p[1]-7.5)/15, 2)
}

// run asks and tells n trials sequentially.
func run(t testing.TB, o *Optimizer, n int, f func([]float64) float64) {
	t.Helper()
	for range n {
		tr, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Tell(tr.ID, f(tr.Params)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestInitialDesignThenModel(t *testing.T) {
	s := mustSpace(t, square2)
	o, err := New(Config{Space: s, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Config().InitialSize; got != 8 {
		t.Fatalf("default initial size for d = 2 is %d, want max(4·2, 5) = 8", got)
	}
	run(t, o, 20, bowl2)
	h := o.History()
	if len(h) != 20 {
		t.Fatalf("history has %d trials", len(h))
	}
	// The design is a Latin hypercube: its 8 points occupy 8 distinct strata
	// of each coordinate.
	for j := range 2 {
		seen := map[int]bool{}
		for _, tr := range h[:8] {
			seen[int(tr.U[j]*8)] = true
		}
		if len(seen) != 8 {
			t.Errorf("coordinate %d of the design covers %d of 8 strata", j, len(seen))
		}
	}
	for i, tr := range h {
		want := AcqInitialDesign
		if i >= 8 {
			want = "ei"
		}
		if tr.Acquisition != want || tr.Number != i || tr.State != Complete || tr.Completion != i {
			t.Errorf("trial %d: acquisition %q number %d state %s completion %d", i, tr.Acquisition, tr.Number, tr.State, tr.Completion)
		}
		if err := s.Validate(tr.Params); err != nil {
			t.Errorf("trial %d: %v", i, err)
		}
		if i >= 8 && (tr.Hyper == nil || tr.Observed != i) {
			t.Errorf("trial %d: model trial without hyperparameters or with %d observations", i, tr.Observed)
		}
	}
	best, ok := o.Best()
	if !ok {
		t.Fatal("no best trial")
	}
	// 12 EI steps on a smooth bowl: within 1e-3 of the minimum value 1.
	if best.Value-1 > 1e-3 {
		t.Errorf("best value %v after 20 trials, want within 1e-3 of 1", best.Value)
	}
}

func TestReproducible(t *testing.T) {
	s := mustSpace(t, square2)
	var hists [2][]Trial
	for k := range hists {
		o, err := New(Config{Space: s, Seed: 42})
		if err != nil {
			t.Fatal(err)
		}
		run(t, o, 12, bowl2)
		hists[k] = o.History()
	}
	for i := range hists[0] {
		if !slices.Equal(hists[0][i].U, hists[1][i].U) {
			t.Fatalf("trial %d differs between identical runs: %v vs %v", i, hists[0][i].U, hists[1][i].U)
		}
	}
	o, err := New(Config{Space: s, Seed: 43})
	if err != nil {
		t.Fatal(err)
	}
	run(t, o, 1, bowl2)
	if slices.Equal(o.History()[0].U, hists[0][0].U) {
		t.Error("another seed gave the same first point")
	}
}

func TestMaximize(t *testing.T) {
	s := mustSpace(t, strings.Replace(square2, "{", `{"objective":"maximize",`, 1))
	o, err := New(Config{Space: s, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	neg := func(p []float64) float64 { return -bowl2(p) }
	run(t, o, 20, neg)
	best, _ := o.Best()
	if best.Value < -1-1e-3 {
		t.Errorf("maximizing −bowl: best %v, want within 1e-3 of −1", best.Value)
	}
	// SurrogateAt is in the proposal model's units: sign·value = bowl,
	// warped; it predicts the warped value of the best point there.
	m, err := o.SurrogateAt(20)
	if err != nil {
		t.Fatal(err)
	}
	_, y := o.data(20)
	warped, err := o.warp(y)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Min(warped)
	if slices.Min(y) != -best.Value {
		t.Fatalf("minimization units: best %v, data minimum %v", best.Value, slices.Min(y))
	}
	mean, variance := make([]float64, 1), make([]float64, 1)
	if err := m.Predict([][]float64{best.U}, mean, variance); err != nil {
		t.Fatal(err)
	}
	if math.Abs(mean[0]-want) > 1e-3 {
		t.Errorf("surrogate mean at the best point %v, want ≈ %v (the warp of %v)", mean[0], want, -best.Value)
	}
}

func TestParallelAsksAreDistinct(t *testing.T) {
	s := mustSpace(t, square2)
	for _, liar := range []string{"best", "mean", "worst", "believer"} {
		o, err := New(Config{Space: s, Seed: 5, Liar: liar})
		if err != nil {
			t.Fatal(err)
		}
		run(t, o, 10, bowl2)
		var batch []Trial
		for range 4 {
			tr, err := o.Ask()
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, tr)
		}
		if got := len(o.Pending()); got != 4 {
			t.Errorf("%s: %d pending trials, want 4", liar, got)
		}
		for i := range batch {
			for j := range i {
				dist := math.Hypot(batch[i].U[0]-batch[j].U[0], batch[i].U[1]-batch[j].U[1])
				if dist < o.Config().MinDistance {
					t.Errorf("%s: pending trials %d and %d are %v apart, closer than MinDistance: %v %v", liar, i, j, dist, batch[i].U, batch[j].U)
				}
			}
		}
		for _, tr := range batch {
			if err := o.Tell(tr.ID, bowl2(tr.Params)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestTellErrorsAndFailures(t *testing.T) {
	s := mustSpace(t, square2)
	o, err := New(Config{Space: s, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := o.Ask()
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := o.Tell(a.ID, v); err == nil {
			t.Errorf("Tell(%v) accepted", v)
		}
	}
	if err := o.Tell(999, 1); err == nil {
		t.Error("unknown id accepted")
	}
	if err := o.TellFailed(a.ID); err != nil {
		t.Fatal(err)
	}
	if err := o.Tell(a.ID, 1); err == nil {
		t.Error("told a failed trial")
	}
	if err := o.TellFailed(a.ID); err == nil {
		t.Error("failed a failed trial twice")
	}
	if _, ok := o.Best(); ok {
		t.Error("a failed trial counts as best")
	}
	run(t, o, 11, bowl2)
	h := o.History()
	if h[0].State != Failed || !math.IsNaN(h[0].Value) {
		t.Errorf("failed trial recorded as %+v", h[0])
	}
	if o.Completed() != 11 {
		t.Errorf("%d completed, want 11", o.Completed())
	}
	// The failed design point is never proposed again: conditioning on it
	// with the worst value makes it unattractive.
	for _, tr := range h[1:] {
		if slices.Equal(tr.U, h[0].U) {
			t.Errorf("trial %d repeats the failed configuration", tr.Number)
		}
	}
	if _, err := o.SurrogateAt(12); err == nil {
		t.Error("SurrogateAt beyond the completed trials accepted")
	}
}

func TestResume(t *testing.T) {
	s := mustSpace(t, square2)
	full, err := New(Config{Space: s, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	run(t, full, 14, bowl2)
	pend, _ := full.Ask()
	hist := full.History()

	resumed, err := New(Config{Space: s, Seed: 9, History: hist})
	if err != nil {
		t.Fatal(err)
	}
	if got := resumed.Pending(); len(got) != 1 || got[0].ID != pend.ID {
		t.Fatalf("resumed pending = %+v, want trial %d", got, pend.ID)
	}
	// Both continue alike: same streams, warm start from the recorded
	// hyperparameters, the same pending trial. The resumed optimizer does
	// not know when the last full refit was, so its hyperparameters may
	// differ in the ninth digit, and the gradient climb ends where the
	// acquisition is flat to round-off: the proposals agree to 1e-4, where
	// different random streams would put them far apart.
	for _, o := range []*Optimizer{full, resumed} {
		if err := o.Tell(pend.ID, bowl2(pend.Params)); err != nil {
			t.Fatal(err)
		}
	}
	a, err := full.Ask()
	if err != nil {
		t.Fatal(err)
	}
	b, err := resumed.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != b.ID || a.Number != b.Number {
		t.Errorf("ids/numbers differ: %d/%d vs %d/%d", a.ID, a.Number, b.ID, b.Number)
	}
	for j := range a.U {
		if math.Abs(a.U[j]-b.U[j]) > 1e-4 {
			t.Errorf("resumed proposal %v differs from the uninterrupted %v", b.U, a.U)
			break
		}
	}

	bad := slices.Clone(hist)
	bad[2].Params = []float64{100, 1}
	if _, err := New(Config{Space: s, History: bad}); err == nil {
		t.Error("history with a value outside the space accepted")
	}
	bad = slices.Clone(hist)
	bad[3].ID = bad[2].ID
	if _, err := New(Config{Space: s, History: bad}); err == nil {
		t.Error("duplicate ids accepted")
	}
}

func TestSurrogateAtReproducesTheProposalModel(t *testing.T) {
	s := mustSpace(t, square2)
	o, err := New(Config{Space: s, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	run(t, o, 20, bowl2)
	h := o.History()
	tr := h[18] // proposed by EI from the first 18 observations
	m, err := o.SurrogateOf(tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([][]float64, 18), make([]float64, 18)
	for i := range 18 {
		x[i], y[i] = h[i].U, h[i].Value
	}
	// With the recorded hyperparameters, EI maximized over the same random
	// stream must land on the recorded proposal again.
	rng := o.stream(streamAsk, tr.Number)
	// Ask 18 is confined to the trust region (the default "alternate"
	// confines even asks once 8 design points and trustDelay(2) = 4 more
	// are complete): the same box, its candidates and its walls, and a
	// model of the values unwarped; ask 19's model is warped.
	if !o.confine(tr.Number) || !strings.Contains(tr.Note, "trust region") {
		t.Fatalf("ask %d is not confined", tr.Number)
	}
	if tr.Warped || !h[19].Warped {
		t.Fatalf("asks 18 and 19 warped: %v and %v, want false and true", tr.Warped, h[19].Warped)
	}
	box, err := o.trustRegion(m, x, y, tr.Hyper.Lengthscales)
	if err != nil {
		t.Fatal(err)
	}
	search := o.searchAround(x, y, tr.Number).(acq.RandomSearch)
	search.Extra = append(search.Extra, box.candidates(s, trustCandidates, o.stream(streamTrust, tr.Number))...)
	res, err := search.Maximize(o.exclude(acq.EI{Best: slices.Min(y)}, false, box), m, s, rng)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.U, tr.U) {
		t.Errorf("re-maximizing EI on SurrogateOf gives %v, the recorded proposal is %v", res.U, tr.U)
	}
	if _, err := o.SurrogateOf(h[0].ID); err == nil {
		t.Error("a design trial claims a surrogate")
	}
}

func TestStrategiesAndSurrogates(t *testing.T) {
	s := mustSpace(t, `{"params":[
		{"name":"opt","type":"categorical","choices":["sgd","adam"]},
		{"name":"layers","type":"int","low":1,"high":5},
		{"name":"lr","type":"float","low":1e-4,"high":0.1,"log":true},
		{"name":"momentum","type":"float","low":0.1,"high":0.99,"condition":{"parent":"opt","values":["sgd"]}}]}`)
	f := func(p []float64) float64 {
		v := math.Pow(math.Log10(p[2])+2, 2) + math.Abs(p[1]-3)
		if p[0] == 0 {
			v += math.Pow(p[3]-0.9, 2)
		} else {
			v += 0.3
		}
		return v
	}
	cases := []Config{
		{Strategy: "random"},
		{Strategy: "ei"},
		{Strategy: "lcb", Tau: 2},
		{Strategy: "pi"},
		{Strategy: "pvar"},
		{Strategy: "ei", Surrogate: "forest"},
		{Strategy: "lcb", AcqOptimizer: "focus", FocusPoints: 200},
	}
	for _, cfg := range cases {
		cfg.Space, cfg.Seed = s, 2
		o, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		run(t, o, 20, f)
		for _, tr := range o.History() {
			if err := s.Validate(tr.Params); err != nil {
				t.Fatalf("%+v: %v", cfg, err)
			}
			want := cfg.Strategy
			if tr.Number < 16 && cfg.Strategy != "random" {
				want = AcqInitialDesign
			}
			if tr.Acquisition != want {
				t.Fatalf("%s/%s: trial %d chosen by %q, want %q", cfg.Strategy, cfg.Surrogate, tr.Number, tr.Acquisition, want)
			}
		}
	}
}

func TestAcquireHook(t *testing.T) {
	s := mustSpace(t, square2)
	calls := 0
	o, err := New(Config{Space: s, Seed: 1, InitialSize: 5, Acquire: func(it Iteration) (acq.Acquisition, error) {
		calls++
		if len(it.X) != it.Number || it.Model == nil || it.Best != slices.Min(it.Y) {
			t.Errorf("iteration %d: %d observations, best %v", it.Number, len(it.X), it.Best)
		}
		if it.Number%2 == 0 {
			return acq.PVAR{}, nil
		}
		return acq.EI{Best: it.Best}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, o, 9, bowl2)
	h := o.History()
	if calls != 4 || h[5].Acquisition != "ei" || h[6].Acquisition != "pvar" {
		t.Errorf("%d calls, acquisitions %q %q", calls, h[5].Acquisition, h[6].Acquisition)
	}
}

func TestConfigErrors(t *testing.T) {
	s := mustSpace(t, square2)
	for _, cfg := range []Config{
		{},
		{Space: s, Strategy: "ucb"},
		{Space: s, Surrogate: "svm"},
		{Space: s, Kernel: "cubic"},
		{Space: s, Tau: -1},
		{Space: s, Xi: math.NaN()},
		{Space: s, InitialDesign: "grid"},
		{Space: s, Liar: "optimist"},
		{Space: s, AcqOptimizer: "cmaes"},
		{Space: s, Candidates: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}

// towards scores a configuration by its closeness to target, so a search
// proposes target itself when it can reach it.
type towards struct{ target []float64 }

func (towards) Name() string { return "towards" }

func (a towards) Score(_ surrogate.Model, x [][]float64, out []float64) error {
	for i, u := range x {
		var d2 float64
		for j, v := range u {
			d2 += (v - a.target[j]) * (v - a.target[j])
		}
		out[i] = -d2
	}
	return nil
}

// TestDuplicateProposalReplaced: an evaluated configuration is not proposed
// again while another exists (the acquisition's best unevaluated one is);
// on an exhausted grid the duplicate is replaced by a random configuration
// with a note naming the trial; the filter can be turned off.
func TestDuplicateProposalReplaced(t *testing.T) {
	s := mustSpace(t, `{"params":[
		{"name":"a","type":"categorical","choices":["x","y","z"]},
		{"name":"b","type":"int","low":1,"high":4}]}`)
	for _, tol := range []float64{0, -1} {
		var first []float64
		o, err := New(Config{Space: s, Seed: 3, DuplicateTolerance: tol, Acquire: func(it Iteration) (acq.Acquisition, error) {
			return towards{target: first}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		for range 8 {
			tr, err := o.Ask()
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = tr.U
			}
			if err := o.Tell(tr.ID, float64(tr.Number)); err != nil {
				t.Fatal(err)
			}
		}
		tr, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if tol < 0 {
			if tr.Acquisition != "towards" || !slices.Equal(tr.U, first) {
				t.Errorf("filter off: got %v by %q, want trial 0's %v by towards", tr.U, tr.Acquisition, first)
			}
			continue
		}
		// The acquisition's favourite is evaluated already: the best
		// configuration not evaluated yet wins, by the acquisition itself.
		if tr.Acquisition != "towards" || slices.Equal(tr.U, first) {
			t.Errorf("duplicate not avoided: %v by %q (%s)", tr.U, tr.Acquisition, tr.Note)
		}
		for _, h := range o.History() {
			if h.ID != tr.ID && slices.Equal(h.U, tr.U) {
				t.Errorf("proposal %v repeats trial %d", tr.U, h.Number)
			}
		}
	}
	// Only when every configuration has been evaluated is a duplicate
	// replaced by a random configuration, with a note naming the trial.
	o, err := New(Config{Space: s, Seed: 3, Acquire: func(it Iteration) (acq.Acquisition, error) {
		return towards{target: []float64{0.5, 0.5}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for range 12 { // the 3 × 4 grid
		tr, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Tell(tr.ID, float64(tr.Number)); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := o.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if tr.Acquisition != AcqRandomFallback || !strings.Contains(tr.Note, "from trial") {
		t.Errorf("exhausted grid: %v by %q (%s)", tr.U, tr.Acquisition, tr.Note)
	}
	if _, err := New(Config{Space: s, DuplicateTolerance: math.NaN()}); err == nil {
		t.Error("NaN duplicate tolerance accepted")
	}
}

// TestWorkersDoNotChangeProposals: a proposal on one goroutine is the
// proposal on two, to the last bit (xbo serve --optimizer-workers 1 runs
// proposals on one).
func TestWorkersDoNotChangeProposals(t *testing.T) {
	s := mustSpace(t, square2)
	var runs [2][]Trial
	for k, workers := range []int{1, 0} {
		o, err := New(Config{Space: s, Seed: 4, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			tr, err := o.Ask()
			if err != nil {
				t.Fatal(err)
			}
			runs[k] = append(runs[k], tr)
			if err := o.Tell(tr.ID, bowl2(tr.Params)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range runs[0] {
		if !slices.Equal(runs[0][i].U, runs[1][i].U) {
			t.Fatalf("trial %d: %v with one worker, %v with two", i, runs[0][i].U, runs[1][i].U)
		}
	}
	if _, err := New(Config{Space: s, Workers: -1}); err == nil {
		t.Error("negative workers accepted")
	}
}

// Config.MinNoise reaches the GP fit: on a noiseless objective the fitted
// noise sinks to its lower bound, which is the default 1e-6 unless MinNoise
// lowers it (the nugget 1e-8 of mlrMBO's DiceKriging learner).
func TestMinNoiseReachesGP(t *testing.T) {
	s := mustSpace(t, square2)
	noises := func(minNoise float64) []float64 {
		o, err := New(Config{Space: s, Seed: 5, MinNoise: minNoise, FullRefitEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		run(t, o, 16, bowl2)
		var out []float64
		for _, tr := range o.History() {
			if tr.Hyper != nil {
				out = append(out, tr.Hyper.NoiseVariance)
			}
		}
		if len(out) == 0 {
			t.Fatal("no model-based trial")
		}
		return out
	}
	def, low := noises(0), noises(1e-8)
	if m := slices.Min(def); m < 1e-6*(1-1e-9) {
		t.Errorf("default fit has noise %g below gp's bound 1e-6", m)
	}
	if m := slices.Min(low); m < 1e-8*(1-1e-9) {
		t.Errorf("MinNoise 1e-8: fitted noise %g below the bound", m)
	}
	if m := slices.Min(low); m >= 1e-6 {
		t.Errorf("MinNoise 1e-8: smallest fitted noise %g, want below the default bound 1e-6", m)
	}
	for _, bad := range []float64{-1e-8, math.NaN(), math.Inf(1)} {
		if _, err := New(Config{Space: s, MinNoise: bad}); err == nil {
			t.Errorf("MinNoise %v accepted", bad)
		}
	}
}

// TestLongStudiesUseASubset runs past ExactPoints completed trials: the
// proposals then come from a gp.Subset whose hyperparameters stay fixed
// until the data grew by a tenth, SurrogateOf rebuilds exactly the model
// that proposed a trial, and the search still converges.
func TestLongStudiesUseASubset(t *testing.T) {
	s := mustSpace(t, square2)
	o, err := New(Config{Space: s, Seed: 5, ExactPoints: 15, MeanPoints: 25})
	if err != nil {
		t.Fatal(err)
	}
	run(t, o, 40, bowl2)
	h := o.History()
	byObserved := map[int]Trial{}
	for _, tr := range h {
		if tr.Observed > 0 {
			byObserved[tr.Observed] = tr
		}
	}
	// Beyond 15 observations the hyperparameters of each kind of model
	// (confined asks' unwarped, the others' warped) are refitted each time
	// the data grew by a tenth since that kind's last fit: of the 12
	// proposals of each kind from 16..40 observations, 7 or 8 have a fit of
	// their own, not 12.
	fits := map[bool]map[string]bool{false: {}, true: {}}
	proposals := map[bool]int{}
	var b Trial
	for n, tr := range byObserved {
		if n > 15 {
			fits[tr.Warped][fmt.Sprint(tr.Hyper)] = true
			proposals[tr.Warped]++
			if n > b.Observed {
				b = tr
			}
		}
	}
	for _, warped := range []bool{false, true} {
		if n := len(fits[warped]); n < 4 || n > proposals[warped]-3 {
			t.Errorf("warped %v: %d distinct hyperparameter fits among %d proposals from 16–40 observations, want about 7", warped, n, proposals[warped])
		}
	}
	// Each kind keeps its last gp.Subset for the next fit to extend; its
	// mean part holds MeanPoints representative observations and the
	// newest since the last step of two (a tenth of 25).
	for k, ws := range o.warm {
		if ws.subset == nil {
			t.Fatalf("model kind %d kept no subset to extend", k)
		}
		if m, v := ws.subset.Conditioned(); m < 25 || m > 26 || v != 15 {
			t.Errorf("model kind %d: kept subset conditioned on %d/%d, want 25 or 26/15", k, m, v)
		}
	}
	m, err := o.SurrogateOf(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*gp.Subset); !ok {
		t.Fatalf("surrogate of a trial proposed from 32 observations is %T, want *gp.Subset", m)
	}
	x, y := o.data(b.Observed)
	// The proposal model's EI is on the warped values.
	if y, err = o.warp(y); err != nil {
		t.Fatal(err)
	}
	res, err := o.searchAround(x, y, b.Number).Maximize(acq.EI{Best: slices.Min(y)}, m, s, o.stream(streamAsk, b.Number))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.U, b.U) {
		t.Errorf("re-maximizing EI on SurrogateOf gives %v, the recorded proposal is %v", res.U, b.U)
	}
	best, _ := o.Best()
	if best.Value > 1.001 {
		t.Errorf("best value %v after 40 trials, minimum 1", best.Value)
	}
	if _, err := New(Config{Space: s, ExactPoints: 30, MeanPoints: 20}); err == nil {
		t.Error("mean points below exact points accepted")
	}
}

// Beyond ExactPoints failed and pruned trials, a proposal is conditioned on
// the nearest half to the incumbent and the latest of the rest, in trial
// order; up to ExactPoints, on all of them.
func TestConditionsOnAtMostExactPointsStoppedTrials(t *testing.T) {
	s := mustSpace(t, unit2)
	var hist []Trial
	// Complete trials on the diagonal; the incumbent (least value) is at
	// (0.5, 0.5).
	for i, v := range []float64{0.1, 0.3, 0.5, 0.7, 0.9} {
		hist = append(hist, Trial{Params: []float64{v, v}, State: Complete, Value: math.Abs(v-0.5) + float64(i)*1e-3})
	}
	// Stopped trials k = 0…19 on a line away from the incumbent, alternately
	// failed and pruned, at distance 0.02·(k+1) from it, in an order that is
	// not the distance order: the trial list holds k = 19, 17, …, 1, then
	// 0, 2, …, 18.
	var order []int
	for k := 19; k >= 1; k -= 2 {
		order = append(order, k)
	}
	for k := 0; k <= 18; k += 2 {
		order = append(order, k)
	}
	for j, k := range order {
		state := Pruned
		if j%2 == 1 {
			state = Failed
		}
		hist = append(hist, Trial{Params: []float64{0.5 + 0.02*float64(k+1), 0.5}, State: state})
	}
	stopped := make([]int, len(order))
	for j := range stopped {
		stopped[j] = 5 + j
	}
	for _, c := range []struct {
		exact int
		want  []int // the k of the trials conditioned on, in trial order
	}{
		// The 4 nearest (k = 0…3: trials 1, 3 of the first run and 0, 2 of
		// the second) and the 4 latest of the rest (k = 18, 16, 14, 12).
		{8, []int{3, 1, 0, 2, 12, 14, 16, 18}},
		{20, order},
		{64, order},
	} {
		o, err := New(Config{Space: s, Seed: 1, ExactPoints: c.exact, History: hist})
		if err != nil {
			t.Fatal(err)
		}
		x, y := o.data(o.completed)
		var got []int
		for _, i := range o.stoppedToCondition(stopped, x, y) {
			got = append(got, order[i-5])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ExactPoints %d: conditioned on k = %v, want %v", c.exact, got, c.want)
		}
		if _, err := o.Ask(); err != nil {
			t.Errorf("ExactPoints %d: %v", c.exact, err)
		}
		if c.exact < len(order) {
			// Without complete trials, the latest.
			got = got[:0]
			for _, i := range o.stoppedToCondition(stopped, nil, nil) {
				got = append(got, order[i-5])
			}
			if want := order[len(order)-c.exact:]; !slices.Equal(got, want) {
				t.Errorf("ExactPoints %d, no complete trials: conditioned on k = %v, want %v", c.exact, got, want)
			}
		}
	}
}
