package explain

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"xbo/history"
	"xbo/space"
)

// linearStudy is f = 3a + b (plus a small wiggle in c) on [0,1]³ at n
// random points, in the given direction; for minimize the values are −f, so
// both studies describe the same preferences.
func linearStudy(t testing.TB, dir space.Direction, n int) *history.History {
	t.Helper()
	sp, err := space.New(dir, []space.Param{
		{Name: "a", Type: space.Float, Low: 0, High: 1},
		{Name: "b", Type: space.Float, Low: 0, High: 1},
		{Name: "c", Type: space.Categorical, Choices: []any{"x", "y", "z"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	h := &history.History{Name: "lin-" + string(dir), Space: sp}
	for i := range n {
		a, b, c := rng.Float64(), rng.Float64(), float64(rng.IntN(3))
		f := 3*a + b + 0.1*c
		if dir == space.Minimize {
			f = -f
		}
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: []float64{a, b, c},
			Value: f, Completion: i})
	}
	return h
}

func newEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The same preferences stated as a maximize study of f and a minimize study
// of −f give explanations that are mirror images in objective units: the
// PDP and φ(m) change sign, φ(se) does not, and the confidence bound is the
// upper bound m + τ·s for the maximize study (φ(cb) = φ(m) + τ·φ(se)).
func TestDirectionsMirrorEachOther(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	maxi, mini := linearStudy(t, space.Maximize, 40), linearStudy(t, space.Minimize, 40)

	pMax, err := e.PDP(ctx, maxi, PDPRequest{Params: []string{"a"}, Samples: 200})
	if err != nil {
		t.Fatal(err)
	}
	pMin, err := e.PDP(ctx, mini, PDPRequest{Params: []string{"a"}, Samples: 200})
	if err != nil {
		t.Fatal(err)
	}
	if pMax.Direction != space.Maximize || pMin.Direction != space.Minimize || !strings.Contains(pMax.Units, "higher is better") {
		t.Fatalf("directions %q %q, units %q", pMax.Direction, pMin.Direction, pMax.Units)
	}
	// f rises by 3 over a: the maximize study's PDP rises, the other falls.
	rise := pMax.Mean[len(pMax.Mean)-1] - pMax.Mean[0]
	if rise < 2.5 || rise > 3.5 {
		t.Fatalf("PDP of a rises by %v, want about 3", rise)
	}
	for g := range pMax.Mean {
		if math.Abs(pMax.Mean[g]+pMin.Mean[g]) > 1e-6*math.Max(1, math.Abs(pMax.Mean[g])) || math.Abs(pMax.SD[g]-pMin.SD[g]) > 1e-6 {
			t.Fatalf("grid %d: max %v±%v, min %v±%v are not mirror images", g, pMax.Mean[g], pMax.SD[g], pMin.Mean[g], pMin.SD[g])
		}
	}

	sMax, err := e.Shapley(ctx, maxi, ShapleyRequest{Point: PointBest, Background: 200})
	if err != nil {
		t.Fatal(err)
	}
	sMin, err := e.Shapley(ctx, mini, ShapleyRequest{Point: PointBest, Background: 200})
	if err != nil {
		t.Fatal(err)
	}
	mMax, _ := sMax.Explanation.Output("mean")
	seMax, _ := sMax.Explanation.Output("se")
	cbMax, _ := sMax.Explanation.Output("cb")
	mMin, _ := sMin.Explanation.Output("mean")
	seMin, _ := sMin.Explanation.Output("se")
	cbMin, _ := sMin.Explanation.Output("cb")
	if mMax.Phi[0] < 1 {
		t.Fatalf("φ_a(m) of the best trial of a maximize study is %v; a high a raises f, so it must be clearly positive", mMax.Phi[0])
	}
	if *sMax.Explanation.SEWeight != 1 || *sMin.Explanation.SEWeight != -1 || sMax.Explanation.Formula != "cb = m + τ·s" {
		t.Fatalf("se weights %v %v, formula %q", *sMax.Explanation.SEWeight, *sMin.Explanation.SEWeight, sMax.Explanation.Formula)
	}
	for j := range mMax.Phi {
		tol := 1e-6 * math.Max(1, math.Abs(mMax.Phi[j]))
		if math.Abs(mMax.Phi[j]+mMin.Phi[j]) > tol || math.Abs(seMax.Phi[j]-seMin.Phi[j]) > tol || math.Abs(cbMax.Phi[j]+cbMin.Phi[j]) > tol {
			t.Fatalf("parameter %d: φ(m) %v / %v, φ(se) %v / %v, φ(cb) %v / %v", j, mMax.Phi[j], mMin.Phi[j], seMax.Phi[j], seMin.Phi[j], cbMax.Phi[j], cbMin.Phi[j])
		}
		if d := cbMax.Phi[j] - (mMax.Phi[j] + seMax.Phi[j]); math.Abs(d) > tol {
			t.Fatalf("φ(cb) ≠ φ(m) + τ·φ(se) by %v", d)
		}
	}
	if sMax.Trial == nil || sMax.Point["a"].(float64) < 0.8 {
		t.Fatalf("best trial %v at %v", sMax.Trial, sMax.Point)
	}
}

// A second request for the same data and settings is served from the cache,
// and every kind shares one fitted surrogate.
func TestCachesResultsAndModels(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	h := linearStudy(t, space.Minimize, 30)
	first, err := e.PDP(ctx, h, PDPRequest{Params: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.PDP(ctx, h, PDPRequest{Params: []string{"b"}, Grid: 20, Samples: 1000, Band: BandCalibrated})
	if err != nil {
		t.Fatal(err)
	}
	if first != again {
		t.Fatal("the same request (defaults spelt out) was computed twice")
	}
	reg, err := e.Regional(ctx, h, RegionalRequest{Param: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Surrogate != first.Surrogate {
		t.Fatal("the regional PDP fitted its own surrogate")
	}
	// New data: a new fingerprint and a new fit.
	h2 := linearStudy(t, space.Minimize, 31)
	third, err := e.PDP(ctx, h2, PDPRequest{Params: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if third.Fingerprint == first.Fingerprint || third.Surrogate == first.Surrogate || third.Trials != 31 {
		t.Fatal("new data served from the old cache")
	}
	// A trial that fails does not change what the usable trials say.
	h2.Trials = append(h2.Trials, history.Trial{Number: 99, State: history.Failed, Params: []float64{0.5, 0.5, 0}, Value: math.NaN(), Completion: -1})
	fourth, err := e.PDP(ctx, h2, PDPRequest{Params: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if fourth != third {
		t.Fatal("a failed trial invalidated the explanation")
	}
}

// blockingRun starts a computation that holds its slot until its context is
// cancelled, and reports when it started and when it stopped.
func blockingRun(e *Engine, ctx context.Context, key string, started, stopped chan<- struct{}) error {
	_, err := e.run(ctx, key, "test", "", func(t *task) (any, error) {
		started <- struct{}{}
		<-t.ctx.Done()
		stopped <- struct{}{}
		return nil, t.ctx.Err()
	})
	return err
}

// A caller that goes away cancels the computation it alone waited for.
func TestCancelStopsComputation(t *testing.T) {
	e := newEngine(t, Config{Concurrency: 1})
	ctx, cancel := context.WithCancel(context.Background())
	started, stopped := make(chan struct{}, 1), make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() { errc <- blockingRun(e, ctx, "k", started, stopped) }()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("caller got %v", err)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the computation kept running after its only caller left")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(e.InFlight()) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := len(e.InFlight()); n != 0 {
		t.Fatalf("%d computations still in flight", n)
	}
}

// A computation shared by two callers survives the first one leaving.
func TestSharedComputationOutlivesOneCaller(t *testing.T) {
	e := newEngine(t, Config{Concurrency: 1})
	release := make(chan struct{})
	var runs atomic.Int32
	compute := func(t *task) (any, error) {
		runs.Add(1)
		select {
		case <-release:
			return map[string]int{"x": 1}, nil
		case <-t.ctx.Done():
			return nil, t.ctx.Err()
		}
	}
	ctx1, cancel1 := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var err1, err2 error
	var got2 *cached
	wg.Add(2)
	go func() { defer wg.Done(); _, err1 = e.run(ctx1, "k", "test", "", compute) }()
	for len(e.InFlight()) == 0 {
		time.Sleep(time.Millisecond)
	}
	go func() { defer wg.Done(); got2, err2 = e.run(context.Background(), "k", "test", "", compute) }()
	for e.InFlight()[0].Callers < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel1()
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if !errors.Is(err1, context.Canceled) || err2 != nil || got2 == nil || runs.Load() != 1 {
		t.Fatalf("err1 %v, err2 %v, result %v, runs %d", err1, err2, got2, runs.Load())
	}
}

// Beyond the slots and the queue, requests are refused at once with ErrBusy.
func TestBusyBeyondQueue(t *testing.T) {
	e := newEngine(t, Config{Concurrency: 1, Queue: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{}, 4)
	stopped := make(chan struct{}, 4)
	go blockingRun(e, ctx, "a", started, stopped)
	<-started
	go blockingRun(e, ctx, "b", started, stopped) // waits for the slot
	for len(e.InFlight()) < 2 {
		time.Sleep(time.Millisecond)
	}
	_, err := e.run(context.Background(), "c", "test", "", func(*task) (any, error) { return 1, nil })
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("third computation: %v, want ErrBusy", err)
	}
	// The same key as a running computation joins it instead.
	joined := make(chan error, 1)
	jctx, jcancel := context.WithCancel(context.Background())
	go func() { _, err := e.run(jctx, "a", "test", "", nil); joined <- err }()
	jcancel()
	if err := <-joined; !errors.Is(err, context.Canceled) {
		t.Fatalf("joining a running computation: %v", err)
	}
}

// Requests beyond the documented limits are refused before any work.
func TestLimitsRefuseBeforeWork(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	h := linearStudy(t, space.Minimize, 20)
	cases := []struct {
		kind  string
		query string
		want  string
	}{
		{"pdp", "param=a&param=b&grid=200&samples=20000", "grid 200 must lie in 2..50"},
		{"pdp", "param=a&param=b&grid=50&samples=20000", "exceeds the limit"},
		{"pdp", "param=a&grid=1", "grid 1"},
		{"pdp", "param=a&ice=true&grid=200&samples=2000", "ICE curves"},
		{"pdp", "param=nope", `unknown parameter "nope"`},
		{"pdp", "param=a&colour=red", `unknown query parameter(s) "colour"`},
		{"shapley", "tau=1e308", "tau 1e+308 must lie in [0, 1e6]"},
		{"shapley", "tau=NaN", "tau=\"NaN\" is not a finite number"},
		{"shapley", "trial=%2B4", "trial=\"+4\" is not an integer"},
		{"shapley", "trial=4%20", "trial=\"4 \" is not an integer"},
		{"shapley", "trial=4&trial=5", "trial is given 2 times"},
		{"shapley", "background=20000", "background 20000 must lie in 1..10000"},
		{"paths", "tau=NaN", "is not a finite number"},
		{"regional", "param=a&max_splits=500", "max_splits 500"},
		{"importance", "cap_quantile=2", "cap_quantile 2"},
		{"nope", "", "unknown explanation kind"},
	}
	for _, c := range cases {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		req, err := ParseQuery(c.kind, h.Space, q)
		if err == nil {
			_, err = e.Explain(ctx, h, req)
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s?%s: %v, want ErrInvalid containing %q", c.kind, c.query, err, c.want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s?%s took %v to refuse", c.kind, c.query, d)
		}
	}
}

// Too few usable trials is a usage error naming the counts.
func TestTooFewTrials(t *testing.T) {
	h := linearStudy(t, space.Minimize, 2)
	_, err := newEngine(t, Config{}).PDP(context.Background(), h, PDPRequest{Params: []string{"a"}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "2 usable") {
		t.Fatalf("%v", err)
	}
}

// The sampling-bias measure reads uniform data as unbiased and data packed
// into a corner as strongly biased, with a warning.
func TestSamplingBiasLevels(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	uniform := linearStudy(t, space.Minimize, 60)
	b, err := e.SamplingBias(ctx, uniform)
	if err != nil {
		t.Fatal(err)
	}
	if b.Bias.Level != BiasNone || b.Bias.Warning != "" {
		t.Fatalf("uniform data read as %+v", b.Bias)
	}
	corner := linearStudy(t, space.Minimize, 60)
	for i := range corner.Trials {
		corner.Trials[i].Params[0] *= 0.1
		corner.Trials[i].Params[1] *= 0.1
	}
	b, err = e.SamplingBias(ctx, corner)
	if err != nil {
		t.Fatal(err)
	}
	if b.Bias.Level != BiasStrong || b.Bias.Ratio < 3 || !strings.Contains(b.Bias.Warning, "regional") {
		t.Fatalf("corner data read as %+v", b.Bias)
	}
}

func TestShapleyCostLimit(t *testing.T) {
	if err := shapleyCost("exact", 12, 0, 0, 1000); !errors.Is(err, ErrInvalid) {
		t.Fatalf("2^12 × 1000 evaluations allowed: %v", err)
	}
	if err := shapleyCost("", 10, 0, 0, 1000); err != nil {
		t.Fatalf("the default at 10 parameters refused: %v", err)
	}
	if err := shapleyCost("", 20, 1000, 0, 1000); err != nil { // mc beyond 12 parameters
		t.Fatalf("Monte Carlo at 20 parameters refused: %v", err)
	}
	if err := shapleyCost("mc", 21, 100000, 0, 1000); !errors.Is(err, ErrInvalid) {
		t.Fatal("4.2M Monte Carlo evaluations allowed")
	}
}

// Every result marshals its header and its payload side by side: a JSON name
// that two embedded structs share would silently vanish from the document.
func TestResultJSONKeepsHeaderAndPayload(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	h := linearStudy(t, space.Maximize, 25)
	tau := 1.0
	cases := []struct {
		req  any
		keys []string
	}{
		{PDPRequest{Params: []string{"a"}, Samples: 50}, []string{"param", "grid", "mean", "band", "samples"}},
		{SliceRequest{Param: "a"}, []string{"param", "through", "note", "mean"}},
		{RegionalRequest{Param: "a", Samples: 100}, []string{"param", "global", "tree", "leaves", "delta", "mc_global"}},
		{ImportanceRequest{}, []string{"method", "main", "pairs", "total_variance", "ranking"}},
		{ShapleyRequest{Point: PointBest, Background: 50}, []string{"trial", "point", "explanation"}},
		{AblationRequest{Source: PointLast, Tau: &tau}, []string{"output", "steps", "source_point", "target_point"}},
		{LPIRequest{}, []string{"point", "grid", "outputs", "params"}},
		{PathsRequest{}, []string{"params", "steps", "proposals"}},
		{BiasRequest{}, nil},
	}
	for _, c := range cases {
		v, err := e.Explain(ctx, h, c.req)
		if err != nil {
			t.Fatalf("%T: %v", c.req, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range append([]string{"kind", "direction", "units", "trials", "fingerprint", "sampling_bias"}, c.keys...) {
			if _, ok := m[k]; !ok {
				t.Errorf("%T: JSON lacks %q: %.300s", c.req, k, b)
			}
		}
		if _, ok := m["seconds"]; ok {
			t.Errorf("%T: timing in the JSON", c.req)
		}
	}
}

// A study larger than the GP's variance subset gets the subset-of-data GP:
// the header says so and on how many trials each part is conditioned, the
// PDP still finds f's rise of 3 over a, and the directions still mirror.
func TestLargeStudyUsesTheSubsetGP(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	maxi, mini := linearStudy(t, space.Maximize, 600), linearStudy(t, space.Minimize, 600)
	pMax, err := e.PDP(ctx, maxi, PDPRequest{Params: []string{"a"}, Samples: 200})
	if err != nil {
		t.Fatal(err)
	}
	s := pMax.Surrogate
	if !s.Approximate || s.Trials != 600 || s.ConditionedOn != 600 || s.VarianceConditionedOn != 256 || !strings.Contains(s.Note, "256") {
		t.Fatalf("surrogate %+v", *s)
	}
	if rise := pMax.Mean[len(pMax.Mean)-1] - pMax.Mean[0]; rise < 2.8 || rise > 3.2 {
		t.Fatalf("PDP of a rises by %v, want about 3", rise)
	}
	pMin, err := e.PDP(ctx, mini, PDPRequest{Params: []string{"a"}, Samples: 200})
	if err != nil {
		t.Fatal(err)
	}
	for g := range pMax.Mean {
		if math.Abs(pMax.Mean[g]+pMin.Mean[g]) > 1e-6*math.Max(1, math.Abs(pMax.Mean[g])) || math.Abs(pMax.SD[g]-pMin.SD[g]) > 1e-6 {
			t.Fatalf("grid %d: max %v±%v, min %v±%v are not mirror images", g, pMax.Mean[g], pMax.SD[g], pMin.Mean[g], pMin.SD[g])
		}
	}
	small, err := e.PDP(ctx, linearStudy(t, space.Maximize, 100), PDPRequest{Params: []string{"a"}, Samples: 200})
	if err != nil {
		t.Fatal(err)
	}
	if small.Surrogate.Approximate || small.Surrogate.ConditionedOn != 100 || small.Surrogate.Note != "" {
		t.Fatalf("100 trials: surrogate %+v", *small.Surrogate)
	}
}
