package opt

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"xbo/pareto"
	"xbo/space"
	"xbo/surrogate"
)

// fixedNormal is a "model" with given means and variances at every point,
// to test the acquisition's arithmetic alone.
type fixedNormal struct{ mean, variance float64 }

func (f fixedNormal) Dim() int { return 1 }

func (f fixedNormal) Predict(x [][]float64, mean, variance []float64) error {
	for i := range x {
		mean[i], variance[i] = f.mean, f.variance
	}
	return nil
}

// The box-decomposition EHVI equals the Monte Carlo mean of the exact
// hypervolume improvement (pareto.Hypervolume of the front with and
// without the sampled point, up to the reference point) for random fronts
// and predictions in two and three objectives: 200,000 draws, within four
// standard errors. With σ → 0 it is the improvement of the mean itself.
func TestEHVIMatchesMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for rep := range 8 {
		m := 2 + rep%2
		dirs := slices.Repeat([]space.Direction{space.Minimize}, m)
		var pts [][]float64
		for range 6 {
			p := make([]float64, m)
			for k := range p {
				p[k] = rng.Float64()
			}
			pts = append(pts, p)
		}
		idx, err := pareto.Front(pts, dirs)
		if err != nil {
			t.Fatal(err)
		}
		var front [][]float64
		for _, i := range idx {
			front = append(front, pts[i])
		}
		ref := ehviRef(front, m)
		base, err := pareto.Hypervolume(front, ref, dirs)
		if err != nil {
			t.Fatal(err)
		}
		hvi := func(y []float64) float64 {
			hv, err := pareto.Hypervolume(append(slices.Clone(front), y), ref, dirs)
			if err != nil {
				t.Fatal(err)
			}
			return hv - base
		}
		models := make([]fixedNormal, m)
		acqModels := make([]surrogate.Model, m)
		for k := range models {
			models[k] = fixedNormal{mean: 0.2 + 0.6*rng.Float64(), variance: math.Pow(0.05+0.3*rng.Float64(), 2)}
			acqModels[k] = models[k]
		}
		a := &ehviAcquisition{models: acqModels, boxes: newBoxes(front, ref)}
		out := make([]float64, 1)
		if err := a.Score(nil, [][]float64{{0}}, out); err != nil {
			t.Fatal(err)
		}
		const draws = 200000
		var sum, sq float64
		y := make([]float64, m)
		for range draws {
			for k := range y {
				y[k] = models[k].mean + math.Sqrt(models[k].variance)*rng.NormFloat64()
			}
			v := hvi(y)
			sum += v
			sq += v * v
		}
		mc := sum / draws
		se := math.Sqrt((sq/draws - mc*mc) / draws)
		if math.Abs(out[0]-mc) > 4*se+1e-12 {
			t.Errorf("rep %d (%d objectives): EHVI %.6g, Monte Carlo %.6g ± %.2g", rep, m, out[0], mc, se)
		}
		// σ → 0: the improvement of the mean.
		sharp := make([]surrogate.Model, m)
		mean := make([]float64, m)
		for k := range sharp {
			sharp[k] = fixedNormal{mean: models[k].mean, variance: 1e-20}
			mean[k] = models[k].mean
		}
		a.models = sharp
		if err := a.Score(nil, [][]float64{{0}}, out); err != nil {
			t.Fatal(err)
		}
		if want := hvi(mean); math.Abs(out[0]-want) > 1e-9 {
			t.Errorf("rep %d: EHVI with σ → 0 is %.9g, the mean's improvement %.9g", rep, out[0], want)
		}
	}
}

// On the two-objective problem of TestParEGOBeatsRandom, EHVI's 40 trials
// cover more of the front than ParEGO's in each of 3 seeds, and a
// constraint (a ≥ 0.3) keeps its proposals after the design feasible.
func TestEHVIBeatsParEGO(t *testing.T) {
	if testing.Short() {
		t.Skip("six optimizations")
	}
	dirs := []space.Direction{space.Minimize, space.Minimize}
	eval := func(x []float64) ([]float64, []float64) {
		g := 1 + 9*x[1]
		return []float64{x[0], g * (1 - math.Sqrt(x[0]/g))}, []float64{0.3 - x[0]}
	}
	run := func(o interface {
		Ask() (Trial, error)
		Tell(int64, []float64, []float64) error
	}) (float64, int) {
		var feasible [][]float64
		infeasibleLate := 0
		for i := range 40 {
			tr, err := o.Ask()
			if err != nil {
				t.Fatal(err)
			}
			v, c := eval(tr.Params)
			if err := o.Tell(tr.ID, v, c); err != nil {
				t.Fatal(err)
			}
			if c[0] <= 0 {
				feasible = append(feasible, v)
			} else if i >= 10 {
				infeasibleLate++
			}
		}
		hv, err := pareto.Hypervolume(feasible, []float64{1.1, 10}, dirs)
		if err != nil {
			t.Fatal(err)
		}
		return hv, infeasibleLate
	}
	for seed := range uint64(3) {
		cfg := Config{Space: unitSpace(t, 2), Seed: seed, InitialSize: 10}
		e, err := NewEHVI(cfg, dirs)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewParEGO(cfg, dirs)
		if err != nil {
			t.Fatal(err)
		}
		he, lateE := run(e)
		hp, _ := run(p)
		if he <= hp {
			t.Errorf("seed %d: EHVI's hypervolume %.4f, ParEGO's %.4f", seed, he, hp)
		}
		if lateE > 3 {
			t.Errorf("seed %d: %d of EHVI's 30 model-based proposals infeasible", seed, lateE)
		}
	}
}

// EHVI resumed from a history proposes what the live one proposes once
// the live one forgets its models' fits (a resumed EHVI fits them afresh,
// the only state a rebuild loses), and refuses more objectives than it
// serves.
func TestEHVIResumes(t *testing.T) {
	cfg := Config{Space: unitSpace(t, 2), Seed: 5, InitialSize: 4}
	dirs := []space.Direction{space.Minimize, space.Maximize}
	live, err := NewEHVI(cfg, dirs)
	if err != nil {
		t.Fatal(err)
	}
	var hist []Trial
	for range 8 {
		tr, err := live.Ask()
		if err != nil {
			t.Fatal(err)
		}
		v := []float64{tr.Params[0], tr.Params[0] * tr.Params[1]}
		if err := live.Tell(tr.ID, v, nil); err != nil {
			t.Fatal(err)
		}
		rec := tr.Clone()
		rec.State, rec.Values = Complete, v
		hist = append(hist, rec)
	}
	cfg.History = hist
	resumed, err := NewEHVI(cfg, dirs)
	if err != nil {
		t.Fatal(err)
	}
	clear(live.fits)
	a, err := live.Ask()
	if err != nil {
		t.Fatal(err)
	}
	b, err := resumed.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if a.Acquisition != "ehvi" || !slices.Equal(a.Params, b.Params) {
		t.Errorf("live %s %v, resumed %s %v", a.Acquisition, a.Params, b.Acquisition, b.Params)
	}
	if _, err := NewEHVI(Config{Space: unitSpace(t, 2)}, slices.Repeat([]space.Direction{space.Minimize}, 4)); err == nil {
		t.Error("four objectives accepted")
	}
	if o, err := NewMultiObjective(Config{Space: unitSpace(t, 2)}, slices.Repeat([]space.Direction{space.Minimize}, 4)); err != nil {
		t.Error(err)
	} else if _, ok := o.(*ParEGO); !ok {
		t.Errorf("four objectives get %T, want ParEGO", o)
	}
}

// A batch spreads: with the believer, the proposals of one AskBatch after
// the design are at least 0.02 apart in the unit cube (without the
// pending trials' means in the front, the second lands next to the first).
func TestEHVIBatchSpreads(t *testing.T) {
	dirs := []space.Direction{space.Minimize, space.Minimize}
	for seed := range uint64(3) {
		e, err := NewEHVI(Config{Space: unitSpace(t, 3), Seed: seed, InitialSize: 8}, dirs)
		if err != nil {
			t.Fatal(err)
		}
		for range 12 {
			tr, err := e.Ask()
			if err != nil {
				t.Fatal(err)
			}
			x := tr.Params
			if err := e.Tell(tr.ID, []float64{x[0] + 2*(x[1]-0.3)*(x[1]-0.3), 1 - x[0] + 2*(x[2]-0.7)*(x[2]-0.7)}, nil); err != nil {
				t.Fatal(err)
			}
		}
		batch, err := e.AskBatch(4)
		if err != nil {
			t.Fatal(err)
		}
		for i := range batch {
			if batch[i].Acquisition != "ehvi" {
				t.Fatalf("seed %d: proposal %d by %q", seed, i, batch[i].Acquisition)
			}
			for j := range i {
				if d := unitDistance(batch[i].U, batch[j].U); d < 0.02 {
					t.Errorf("seed %d: proposals %d and %d are %.4f apart: %v, %v", seed, j, i, d, batch[j].Params, batch[i].Params)
				}
			}
		}
	}
}

// In a space of integers, where the best candidate is often a
// configuration already evaluated (a noisy objective's mean there beats
// its observation), EHVI proposes new ones: after the design every
// proposal is its own and none repeats a trial.
func TestEHVIDiscreteSpaceProposesNewConfigurations(t *testing.T) {
	sp, err := space.New(space.Minimize, []space.Param{
		{Name: "i", Type: space.Int, Low: 0, High: 5},
		{Name: "j", Type: space.Int, Low: 0, High: 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs := []space.Direction{space.Minimize, space.Minimize}
	rng := rand.New(rand.NewPCG(9, 9))
	for seed := range uint64(3) {
		e, err := NewEHVI(Config{Space: sp, Seed: seed, InitialSize: 6}, dirs)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[[2]float64]bool{}
		for k := range 24 {
			tr, err := e.Ask()
			if err != nil {
				t.Fatal(err)
			}
			key := [2]float64{tr.Params[0], tr.Params[1]}
			if seen[key] {
				t.Errorf("seed %d, ask %d: configuration %v again", seed, k, key)
			}
			seen[key] = true
			if k >= 6 && tr.Acquisition != "ehvi" {
				t.Errorf("seed %d, ask %d: proposed by %q (%s)", seed, k, tr.Acquisition, tr.Note)
			}
			i, j := tr.Params[0], tr.Params[1]
			v := []float64{i + 0.3*rng.NormFloat64(), (5 - i) + (j-2)*(j-2) + 0.3*rng.NormFloat64()}
			if err := e.Tell(tr.ID, v, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A long study stays within bounds: beyond ExactPoints trials the models
// are subset GPs and EHVI still proposes; a three-objective front whose
// box decomposition exceeds MaxEHVIBoxes is proposed for by ParEGO, which
// says why.
func TestEHVILongStudy(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	build := func(m, n int, onFront bool) *EHVI {
		dirs := slices.Repeat([]space.Direction{space.Minimize}, m)
		var hist []Trial
		for i := range n {
			x := []float64{rng.Float64(), rng.Float64(), rng.Float64()}
			var v []float64
			if m == 2 {
				v = []float64{x[0], 1 - math.Sqrt(x[0]) + x[1] + x[2]}
			} else {
				// On the unit sphere's octant, every point Pareto-optimal
				// when onFront.
				a, b := x[0]*math.Pi/2, x[1]*math.Pi/2
				g := 1.0
				if !onFront {
					g += x[2]
				}
				v = []float64{g * math.Cos(a) * math.Cos(b), g * math.Cos(a) * math.Sin(b), g * math.Sin(a)}
			}
			hist = append(hist, Trial{ID: int64(i + 1), Params: x, State: Complete, Values: v, Completion: i})
		}
		e, err := NewEHVI(Config{Space: unitSpace(t, 3), Seed: 1, History: hist, Candidates: 200}, dirs)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	tr, err := build(2, 270, false).Ask()
	if err != nil {
		t.Fatal(err)
	}
	if tr.Acquisition != "ehvi" {
		t.Errorf("270 trials, two objectives: proposed by %q (%s)", tr.Acquisition, tr.Note)
	}
	tr, err = build(3, 230, true).Ask()
	if err != nil {
		t.Fatal(err)
	}
	if tr.Acquisition == "ehvi" || !strings.Contains(tr.Note, "boxes") {
		t.Errorf("a front of 230 trials in three objectives: proposed by %q (%s)", tr.Acquisition, tr.Note)
	}
}
