package explain

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"xbo/explain/fanova"
	"xbo/explain/sobol"
	"xbo/gp"
	"xbo/history"
	"xbo/space"
	"xbo/surrogate"
)

// gpPriorStudy draws f from a GP prior (Matérn 5/2, lengthscales 0.3 and
// 0.5, unit signal variance) at n uniform points of [0,1]² and observes it
// with Gaussian noise of sd 0.05: data for which the default surrogate is
// well specified.
func gpPriorStudy(t testing.TB, n int, seed uint64) *history.History {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	x := make([][]float64, n)
	for i := range x {
		x[i] = []float64{rng.Float64(), rng.Float64()}
	}
	k := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			da, db := (x[i][0]-x[j][0])/0.3, (x[i][1]-x[j][1])/0.5
			v := gp.Matern52.Correlation(math.Hypot(da, db))
			if i == j {
				v += 1e-8
			}
			k.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("prior covariance not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	z := mat.NewVecDense(n, nil)
	for i := range n {
		z.SetVec(i, rng.NormFloat64())
	}
	var f mat.VecDense
	f.MulVec(&l, z)
	return pointsStudy(t, x, func(i int) float64 { return f.AtVec(i) + 0.05*rng.NormFloat64() })
}

func pointsStudy(t testing.TB, x [][]float64, value func(i int) float64) *history.History {
	t.Helper()
	sp, err := space.New(space.Minimize, []space.Param{
		{Name: "a", Type: space.Float, Low: 0, High: 1},
		{Name: "b", Type: space.Float, Low: 0, High: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &history.History{Name: "check", Space: sp}
	for i, p := range x {
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: p, Value: value(i), Completion: i})
	}
	return h
}

// The check passes a well-specified model at about its nominal rate and
// flags an overconfident one: over replicates of GP-prior data its
// coverage test warns (p < 0.05) in about 5% of studies or fewer, while
// with noise of sd 0.5 in 30% of the space and 0.001 elsewhere (one noise
// variance fitted to both is too small where the noise is) it warns in
// about half the studies of 150 trials. The test has little power against
// mis-specification a GP's noise absorbs: a step, spikes or a kink leave
// its leave-one-out coverage at 0.92–0.99 (docs/research/calibration.md).
func TestModelCheckRates(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte Carlo replicates")
	}
	ctx := context.Background()
	e := newEngine(t, Config{})
	rate := func(reps int, study func(s uint64) *history.History) (fail, warn int, coverage float64) {
		for s := range uint64(reps) {
			r, err := e.PDP(ctx, study(s), PDPRequest{Params: []string{"a"}, Grid: 2, Samples: 10, Band: BandApprox, Surrogate: Surrogate{Outliers: OutliersKeep}})
			if err != nil {
				t.Fatal(err)
			}
			c := r.ModelCheck
			coverage += c.Coverage95 / float64(reps)
			if c.PValue < checkFailP {
				fail++
			}
			if c.PValue < checkWarnP {
				warn++
			}
		}
		return
	}
	const reps = 60
	fail, warn, cov := rate(reps, func(s uint64) *history.History { return gpPriorStudy(t, 40, s) })
	t.Logf("GP prior data: coverage %.3f, %d of %d fail (p < 0.01), %d warn (p < 0.05)", cov, fail, reps, warn)
	// Binomial(60, 0.05) exceeds 7 with probability 0.03.
	if fail > 3 || warn > 7 || cov < 0.92 {
		t.Errorf("well-specified: coverage %.3f, %d fail, %d warn of %d", cov, fail, warn, reps)
	}
	fail, warn, cov = rate(20, func(s uint64) *history.History {
		rng := rand.New(rand.NewPCG(s, 99))
		x := make([][]float64, 150)
		for i := range x {
			x[i] = []float64{rng.Float64(), rng.Float64()}
		}
		return pointsStudy(t, x, func(i int) float64 {
			if x[i][0] > 0.7 {
				return x[i][1] + 0.5*rng.NormFloat64()
			}
			return x[i][1] + 0.001*rng.NormFloat64()
		})
	})
	t.Logf("heteroscedastic noise: coverage %.3f, %d of 20 fail, %d warn", cov, fail, warn)
	// Measured 11 of 20 (4 failing); at the well-specified rate (1 in 60)
	// 8 or more warnings would have probability below 1e-6.
	if warn < 8 {
		t.Errorf("mis-specified: only %d of 20 studies warned", warn)
	}
}

// A parameter the GP switches off on too few points is named by the check,
// and its PDP band reaches the curve of the GP with that parameter's
// lengthscale at its profile-likelihood limit; a parameter with a clear
// effect is not named.
func TestSwitchedOffParameterWidensBand(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	// b has a small effect that 12 noisy points cannot establish.
	x := make([][]float64, 12)
	for i := range x {
		x[i] = []float64{rng.Float64(), rng.Float64()}
	}
	h := pointsStudy(t, x, func(i int) float64 {
		return 3*math.Sin(3*x[i][0]) + 0.3*math.Cos(6*x[i][1]) + 0.1*rng.NormFloat64()
	})
	e := newEngine(t, Config{})
	rb, err := e.PDP(ctx, h, PDPRequest{Params: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	c := rb.ModelCheck
	t.Logf("check: %s", c.Reading)
	named := map[string]SwitchedOff{}
	for _, s := range c.SwitchedOff {
		named[s.Param] = s
	}
	s, ok := named["b"]
	if !ok {
		t.Fatalf("b not named as switched off: %+v", c.SwitchedOff)
	}
	if _, ok := named["a"]; ok {
		t.Errorf("a, with a clear effect, named as switched off")
	}
	if !(s.Limit < s.Lengthscale/10) || c.Status == CheckOK {
		t.Errorf("b: lengthscale %v, limit %v, status %s", s.Lengthscale, s.Limit, c.Status)
	}
	if rb.DoubtSD == nil {
		t.Fatal("no doubt term in b's band")
	}
	// The band reaches the alternative's curve: recompute it.
	m, err := e.modelFor(ctx, h, defaultSurrogate())
	if err != nil {
		t.Fatal(err)
	}
	alt, err := m.alternative(1)
	if err != nil || alt == nil {
		t.Fatalf("alternative %v, %v", alt, err)
	}
	hw, doubt := 0.0, 0.0
	for g := range rb.Grid {
		hw = math.Max(hw, rb.Upper[g]-rb.Mean[g])
		doubt = math.Max(doubt, 1.96*rb.DoubtSD[g])
		if rb.Upper[g]-rb.Mean[g] < 1.959*rb.DoubtSD[g] {
			t.Errorf("grid point %d: half-width %v below the alternative's distance %v", g, rb.Upper[g]-rb.Mean[g], 1.96*rb.DoubtSD[g])
		}
	}
	if !(doubt > 0.05) {
		t.Errorf("the alternative's curve is only %v from the PD: the test no longer shows the widening", doubt)
	}
	ra, err := e.PDP(ctx, h, PDPRequest{Params: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("b: half-width up to %.3f, the alternative up to %.3f away; a's doubt %v", hw, doubt, ra.DoubtSD)
}

// modelFor returns the engine's fitted surrogate of h for spec, as an
// explanation would get it (from the cache when one did).
func (e *Engine) modelFor(ctx context.Context, h *history.History, spec Surrogate) (*fitted, error) {
	p, err := prepare(h)
	if err != nil {
		return nil, err
	}
	if err := spec.normalize(); err != nil {
		return nil, err
	}
	t := &task{ctx: ctx, engine: e, flight: &flight{}, workers: 1}
	return t.model(p, spec)
}

// The importance intervals of a parameter the GP switches off reach its
// indices under the alternative model, and no interval, pairs included,
// leaves [0, 1].
func TestSwitchedOffParameterWidensImportance(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	x := make([][]float64, 12)
	for i := range x {
		x[i] = []float64{rng.Float64(), rng.Float64()}
	}
	h := pointsStudy(t, x, func(i int) float64 {
		return 3*math.Sin(3*x[i][0]) + 0.3*math.Cos(6*x[i][1]) + 0.1*rng.NormFloat64()
	})
	e := newEngine(t, Config{})
	with, err := e.Importance(ctx, h, ImportanceRequest{Refits: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(with.Note, "profile-likelihood limit") {
		t.Errorf("note %q does not say the intervals reach the alternative", with.Note)
	}
	m, err := e.modelFor(ctx, h, defaultSurrogate())
	if err != nil {
		t.Fatal(err)
	}
	alt, err := m.alternative(1)
	if err != nil || alt == nil {
		t.Fatalf("alternative %v, %v", alt, err)
	}
	est, err := sobol.Estimate(ctx, func(x [][]float64, out []float64) error { return surrogate.PredictMean(alt, x, out) },
		h.Space, sobol.Options{Samples: sobol.DefaultSamples / 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := with.Total["b"]
	if v := est.Total[1].Estimate; !(b.CI95[0] <= v && v <= b.CI95[1]) || !(v > 0.01) {
		t.Errorf("b's total effect interval %v does not reach the alternative's %v (or it is negligible)", b.CI95, v)
	}
	for _, group := range []map[string]fanova.Effect{with.Main, with.Total, with.Pairs} {
		for k, eff := range group {
			if eff.CI95[0] < 0 || eff.CI95[1] > 1 || eff.Fraction < 0 || eff.Fraction > 1 {
				t.Errorf("%s: %v [%v] outside [0, 1]", k, eff.Fraction, eff.CI95)
			}
		}
	}
}
