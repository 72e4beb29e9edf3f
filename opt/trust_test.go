package opt

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"xbo/acq"
	"xbo/gp"
)

// The side of the trust region, replayed over the completions after the
// design, follows TuRBO's counters exactly: three improvements in a row
// double it (capped at 1.6), max(4, d) completions without one halve it, an
// improvement below 1e-3·|best| is none, and below 1/128 it starts again.
func TestTrustSide(t *testing.T) {
	design := []float64{5, 4, 3, 2, 1} // best 1 after the design
	run := func(after ...float64) []float64 { return append(append([]float64(nil), design...), after...) }
	repeat := func(v float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	for _, c := range []struct {
		name string
		y    []float64
		dim  int
		want float64
	}{
		{"design only", run(), 2, 0.8},
		{"fewer trials than the design", design[:3], 2, 0.8},
		{"three improvements", run(0.9, 0.8, 0.7), 2, 1.6},
		{"six improvements, capped", run(0.9, 0.8, 0.7, 0.6, 0.5, 0.4), 2, 1.6},
		{"two, a failure, two", run(0.9, 0.8, 2, 0.7, 0.6), 2, 0.8},
		{"four failures (d = 2)", run(repeat(2, 4)...), 2, 0.4},
		{"three failures (d = 2)", run(repeat(2, 3)...), 2, 0.8},
		{"eight failures", run(repeat(2, 8)...), 2, 0.2},
		{"six failures (d = 6: tolerance 6)", run(repeat(2, 6)...), 6, 0.4},
		{"five failures (d = 6)", run(repeat(2, 5)...), 6, 0.8},
		{"too small an improvement", run(repeat(0.9995, 4)...), 2, 0.4},
		{"24 failures", run(repeat(2, 24)...), 2, 0.8 / 64},
		{"28 failures: below 1/128, restarted", run(repeat(2, 28)...), 2, 0.8},
	} {
		if got := trustSide(c.y, len(design), c.dim); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: side %v, want %v", c.name, got, c.want)
		}
	}
}

// A confined proposal lies in the box around the observed point with the
// lowest posterior mean, with sides proportional to the lengthscales and
// the replayed side; unconfined proposals on the same problem leave that
// box, so the walls are what keeps them in.
func TestConfinedProposalsStayInTheBox(t *testing.T) {
	s := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},
		{"name":"b","type":"float","low":0,"high":1},{"name":"c","type":"float","low":0,"high":1}]}`)
	// Two basins: the better one is narrow, so EI keeps looking elsewhere
	// unless it is confined.
	f := func(p []float64) float64 {
		a, b, c := p[0], p[1], p[2]
		return math.Min(20*((a-0.2)*(a-0.2)+(c-0.7)*(c-0.7)), 0.5+2*((a-0.8)*(a-0.8)+(c-0.2)*(c-0.2))) + 0.05*b
	}
	outside := map[string]int{}
	for _, rule := range []string{"always", "none"} {
		for seed := uint64(1); seed <= 3; seed++ {
			o, err := New(Config{Space: s, Seed: seed, TrustRegion: rule, InitialSize: 8})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 35 {
				tr, err := o.Ask()
				if err != nil {
					t.Fatal(err)
				}
				// Confinement starts trustDelay completions after the design.
				confined := tr.Observed >= 8+trustDelay(3)
				if rule == "always" && strings.Contains(tr.Note, "within the trust region of side") != (confined && tr.Acquisition == "ei") {
					t.Errorf("seed %d ask %d (%s, %d observed): note %q", seed, i, tr.Acquisition, tr.Observed, tr.Note)
				}
				if tr.Acquisition == "ei" && confined {
					model, err := o.SurrogateOf(tr.ID)
					if err != nil {
						t.Fatal(err)
					}
					x, y := o.data(tr.Observed)
					box, err := o.trustRegion(model, x, y, tr.Hyper.Lengthscales)
					if err != nil {
						t.Fatal(err)
					}
					if !box.contains(tr.U) {
						outside[rule]++
						if rule == "always" {
							t.Errorf("seed %d ask %d: %v outside the box [%v, %v]", seed, i, tr.U, box.lo, box.hi)
						}
					}
					if want := trustSide(y, 8, 3); box.side != want {
						t.Errorf("side %v, want the replayed %v", box.side, want)
					}
				}
				if err := o.Tell(tr.ID, f(tr.Params)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if outside["none"] == 0 {
		t.Errorf("no unconfined proposal left the box: the test cannot tell the walls from the acquisition")
	}
	t.Logf("proposals outside the box: %v", outside)
}

// The box's centre is the observed point of lowest posterior mean, not the
// lowest observed value: with noise, the lucky draw is not the centre.
func TestTrustRegionCentreIsTheBestMean(t *testing.T) {
	s := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1}]}`)
	rng := rand.New(rand.NewPCG(4, 5))
	f := func(a, b float64) float64 { return (a-0.3)*(a-0.3) + (b-0.6)*(b-0.6) }
	var hist []Trial
	for i := range 6 {
		for j := range 6 {
			a, b := 0.1+0.16*float64(i), 0.1+0.16*float64(j)
			hist = append(hist, Trial{Params: []float64{a, b}, State: Complete, Value: f(a, b) + 0.02*rng.NormFloat64()})
		}
	}
	// (0.42, 0.74) observed twice, 0.034 ± 0.1: its lower draw is the
	// lowest value of all, its mean is not the lowest.
	hist = append(hist, Trial{Params: []float64{0.42, 0.74}, State: Complete, Value: f(0.42, 0.74) - 0.1},
		Trial{Params: []float64{0.42, 0.74}, State: Complete, Value: f(0.42, 0.74) + 0.1})
	o, err := New(Config{Space: s, Seed: 1, TrustRegion: "always", InitialSize: 5, DuplicateTolerance: -1, History: hist})
	if err != nil {
		t.Fatal(err)
	}
	x, y := o.data(o.completed)
	model, hyper, err := o.fit(x, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	box, err := o.trustRegion(model, x, y, hyper.Lengthscales)
	if err != nil {
		t.Fatal(err)
	}
	lucky := len(hist) - 2
	if slices.Min(y) != y[lucky] {
		t.Fatalf("the lucky draw %v is not the lowest value %v", y[lucky], slices.Min(y))
	}
	if box.incumbent == lucky || box.incumbent == lucky+1 {
		t.Fatalf("the box is centred on the lucky draw")
	}
	// The centre is the grid point nearest the optimum (0.3, 0.6).
	if c := x[box.incumbent]; math.Abs(c[0]-0.26) > 0.01 || math.Abs(c[1]-0.58) > 0.01 {
		t.Errorf("centre %v, want the grid point (0.26, 0.58)", c)
	}
}

// Under noise the best value is a lucky draw, and no ask is confined: a
// noisy history's proposal has no trust region, the same history without
// the noise has one.
func TestNoisyStudiesAreNotConfined(t *testing.T) {
	s := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1}]}`)
	for _, noise := range []float64{0, 0.3} {
		rng := rand.New(rand.NewPCG(8, 9))
		var hist []Trial
		for range 40 {
			a, b := rng.Float64(), rng.Float64()
			v := (a-0.3)*(a-0.3) + (b-0.6)*(b-0.6) + noise*rng.NormFloat64()
			hist = append(hist, Trial{Params: []float64{a, b}, State: Complete, Value: v, Acquisition: "ei"})
		}
		o, err := New(Config{Space: s, Seed: 1, TrustRegion: "always", InitialSize: 5, History: hist})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := o.Ask()
		if err != nil {
			t.Fatal(err)
		}
		ratio := tr.Hyper.NoiseVariance / tr.Hyper.SignalVariance
		confined := strings.Contains(tr.Note, "within the trust region")
		if confined != (ratio < trustMaxNoise) {
			t.Errorf("noise sd %v: noise/signal variance %.3g, confined %v (note %q)", noise, ratio, confined, tr.Note)
		}
		if want := noise == 0; confined != want {
			t.Errorf("noise sd %v: confined %v, want %v (noise/signal variance %.3g)", noise, confined, want, ratio)
		}
	}
}

// The exclusion wrapper scores only the admitted points of a pointwise
// acquisition: the scores equal, bit for bit, those of the whole batch
// with the excluded points masked, for Score and ScoreBound, with a box,
// walls around pending points and none admitted.
func TestExcludingScoresOnlyAdmitted(t *testing.T) {
	x, y := syntheticData(11, 60, 3)
	model, err := gp.Fit(x, y, gp.Options{Kernel: gp.Matern32, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cands, _ := syntheticData(12, 400, 3)
	ei := acq.EI{Best: slices.Min(y)}
	box := &trustBox{lo: []float64{0.2, 0.1, 0.3}, hi: []float64{0.6, 0.5, 0.9}}
	for _, e := range []excluding{
		{Acquisition: ei, box: box},
		{Acquisition: ei, points: cands[:50], r2: 0.01},
		{Acquisition: ei, box: &trustBox{lo: []float64{2, 2, 2}, hi: []float64{3, 3, 3}}},
	} {
		want := make([]float64, len(cands))
		if err := ei.Score(model, cands, want); err != nil {
			t.Fatal(err)
		}
		wantBound := make([]float64, len(cands))
		if err := ei.ScoreBound(model, cands, wantBound); err != nil {
			t.Fatal(err)
		}
		excluded := 0
		for i, c := range cands {
			if e.excluded(c) {
				want[i], wantBound[i] = math.Inf(-1), math.Inf(-1)
				excluded++
			}
		}
		if excluded == 0 {
			t.Fatalf("none of %d excluded: the case tests nothing", len(cands))
		}
		got := make([]float64, len(cands))
		if err := e.Score(model, cands, got); err != nil {
			t.Fatal(err)
		}
		gotBound := make([]float64, len(cands))
		if err := e.ScoreBound(model, cands, gotBound); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || !slices.Equal(gotBound, wantBound) {
			t.Errorf("%d excluded: scores differ from the whole batch's", excluded)
		}
	}
}
