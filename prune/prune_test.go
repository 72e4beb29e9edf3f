package prune

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os/exec"
	"strings"
	"testing"

	"xbo/importer/optunatest"
)

func mustParse(t *testing.T, doc string) Config {
	t.Helper()
	c, err := Parse(json.RawMessage(doc))
	if err != nil {
		t.Fatalf("Parse(%s): %v", doc, err)
	}
	return c
}

func pts(steps []int64, values ...float64) []Point {
	out := make([]Point, len(values))
	for i, v := range values {
		out[i] = Point{steps[i], v}
	}
	return out
}

func decide(t *testing.T, c Config, tr Trial, src Source) Decision {
	t.Helper()
	d, err := c.Decide(context.Background(), tr, src)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// completeAt3 is five complete trials whose values at step 3 are 0.1 … 0.5
// (median 0.3), and a running one.
var completeAt3 = Curves{
	{Number: 0, Complete: true, Points: pts([]int64{1, 3}, 0.9, 0.1)},
	{Number: 1, Complete: true, Points: pts([]int64{3}, 0.2)},
	{Number: 2, Complete: true, Points: pts([]int64{2, 3, 4}, 0.8, 0.3, 0.25)},
	{Number: 3, Complete: true, Points: pts([]int64{3}, 0.4)},
	{Number: 4, Complete: true, Points: pts([]int64{1, 2, 3}, 0.6, 0.55, 0.5)},
	{Number: 5, Points: pts([]int64{3}, 0.05)}, // running: never compared with
}

func TestMedianHandComputed(t *testing.T) {
	median := mustParse(t, `{"type":"median"}`)
	s := []int64{0, 1, 2, 3}
	for _, tc := range []struct {
		name  string
		c     Config
		curve []Point
		prune bool
		why   string
	}{
		{"best 0.35 worse than the median 0.3", median, pts(s, 0.9, 0.5, 0.45, 0.35), true, "worse than the 50th percentile 0.3 "},
		{"best so far 0.25 (step 1) beats it", median, pts(s, 0.9, 0.25, 0.45, 0.6), false, "best value so far 0.25 is not worse"},
		{"equal to the median is kept", median, pts(s, 0.9, 0.5, 0.45, 0.3), false, "not worse"},
		{"too few complete trials", mustParse(t, `{"type":"median","n_startup_trials":6}`), pts(s, 9, 9, 9, 9), false, "5 complete trials, pruning starts at 6"},
		{"in the warm-up", mustParse(t, `{"type":"median","n_warmup_steps":4}`), pts(s, 9, 9, 9, 9), false, "warm-up"},
		{"too few at the step", mustParse(t, `{"type":"median","n_min_trials":6}`), pts(s, 9, 9, 9, 9), false, "5 complete trials reported step 3, 6 needed"},
		// Interval 2 after warm-up 1: checks at 1, 3, 5; step 3 follows 2 < 3: checked.
		{"first report of its interval", mustParse(t, `{"type":"median","n_warmup_steps":1,"interval_steps":2}`), pts(s, 9, 9, 9, 9), true, "worse"},
		// Interval 3 after warm-up 1: checks at 1, 4, 7; step 3 follows 2 ≥ 1.
		{"inside an interval", mustParse(t, `{"type":"median","n_warmup_steps":1,"interval_steps":3}`), pts(s, 9, 9, 9, 9), false, "checked at step 2 already"},
		// A check postponed to the first report after the checkpoint: steps 0, 3 with checkpoints 2, 4.
		{"postponed check", mustParse(t, `{"type":"median","n_warmup_steps":2,"interval_steps":2}`), pts([]int64{0, 3}, 9, 9), true, "worse"},
		// Percentile 25 of 0.1 … 0.5: rank 1 → 0.2; percentile 10: rank 0.4 → 0.14.
		{"percentile 25", mustParse(t, `{"type":"percentile","percentile":25}`), pts([]int64{3}, 0.21), true, "the 25th percentile 0.2 "},
		{"percentile 10 interpolated", mustParse(t, `{"type":"percentile","percentile":10}`), pts([]int64{3}, 0.139), false, "percentile 0.14 "},
		{"percentile 10 interpolated, worse", mustParse(t, `{"type":"percentile","percentile":10}`), pts([]int64{3}, 0.141), true, "percentile 0.14 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, tc.c, Trial{Number: 9, Curve: tc.curve}, completeAt3)
			if d.Prune != tc.prune || !strings.Contains(d.Reason, tc.why) {
				t.Errorf("prune %v (%s), want %v and a reason with %q", d.Prune, d.Reason, tc.prune, tc.why)
			}
		})
	}
	// Maximizing, the percentile is counted from the top: the 25th
	// percentile to beat is the 75th from the bottom, 0.4.
	p25 := mustParse(t, `{"type":"percentile","percentile":25}`)
	if d := decide(t, p25, Trial{Curve: pts([]int64{3}, 0.39), Maximize: true}, completeAt3); !d.Prune {
		t.Errorf("maximize, 0.39 below 0.4: %s", d.Reason)
	}
	if d := decide(t, p25, Trial{Curve: pts([]int64{1, 3}, 0.41, 0.1), Maximize: true}, completeAt3); d.Prune {
		t.Errorf("maximize, best 0.41 above 0.4: %s", d.Reason)
	}
	// The median of an even count interpolates: 0.1, 0.2, 0.3, 0.4 → 0.25.
	four := completeAt3[:4]
	if d := decide(t, mustParse(t, `{"type":"median","n_startup_trials":4}`), Trial{Curve: pts([]int64{3}, 0.26)}, Curves(four)); !d.Prune || !strings.Contains(d.Reason, "percentile 0.25 ") {
		t.Errorf("even count: %v %s", d.Prune, d.Reason)
	}
}

// rungs: min_resource 1, η 2 → rungs at steps 1, 2, 4, 8.
var rungs = Curves{
	{Number: 0, Points: pts([]int64{1, 2}, 0.5, 0.4)},
	{Number: 1, Complete: true, Points: pts([]int64{1, 2, 4}, 0.3, 0.35, 0.2)},
	{Number: 2, Points: pts([]int64{1}, 0.7)},
	{Number: 3, Points: pts([]int64{1, 3, 5}, 0.8, 0.6, 0.5)}, // first value from 2 is at 3, from 4 at 5
}

func TestSuccessiveHalvingHandComputed(t *testing.T) {
	asha := mustParse(t, `{"type":"asha","min_resource":1,"reduction_factor":2}`)
	for _, tc := range []struct {
		name     string
		c        Config
		curve    []Point
		maximize bool
		prune    bool
		why      string
	}{
		// Rung 1: 0.5, 0.3, 0.7, 0.8 and the trial's 0.6: keep ⌊5/2⌋ = 2, the 2nd best is 0.5.
		{"not in the best half at rung 1", asha, pts([]int64{1}, 0.6), false, true, "not among the best 2 of the 5 trials there (it needs 0.5 or better)"},
		{"in the best half at rung 1", asha, pts([]int64{1}, 0.45), false, false, "among the best 2 of the 5"},
		// Rung 2: 0.4, 0.35, 0.6 (trial 3 at step 3) and the trial's: keep 2.
		{"rung 2", asha, pts([]int64{1, 2}, 0.45, 0.38), false, false, "rung at step 2 is among the best 2 of the 4"},
		{"rung 2, worse", asha, pts([]int64{1, 2}, 0.45, 0.41), false, true, "not among the best 2 of the 4 trials there (it needs 0.4 or better)"},
		// Between rungs nothing is checked, whatever the value.
		{"no new rung", asha, pts([]int64{1, 2, 3}, 0.45, 0.38, 9), false, false, "reaches no new rung"},
		// A jump from 1 to 5 checks rungs 2 and 4: at 4 the others are 0.2 and 0.5; keep 1 of 3.
		{"jump over two rungs", asha, pts([]int64{1, 5}, 0.45, 0.3), false, true, "rung at step 4 is not among the best 1 of the 3"},
		{"jump over two rungs, best", asha, pts([]int64{1, 5}, 0.45, 0.1), false, false, "rung at step 4 is among the best 1 of the 3"},
		// Maximizing at rung 1: 0.8, 0.7 are the best 2 of 5.
		{"maximize", asha, pts([]int64{1}, 0.75), true, false, "among the best 2"},
		{"maximize, worse", asha, pts([]int64{1}, 0.65), true, true, "it needs 0.7 or better"},
		// min_early_stopping_rate 1: the first rung is at 2.
		{"rate 1: no rung at step 1", mustParse(t, `{"type":"asha","min_resource":1,"reduction_factor":2,"min_early_stopping_rate":1}`), pts([]int64{1}, 9), false, false, "no new rung"},
		// bootstrap_count 5: 5 trials at rung 1 (with this one) are not more than 5: pruned.
		{"bootstrap", mustParse(t, `{"type":"asha","min_resource":1,"reduction_factor":2,"bootstrap_count":5}`), pts([]int64{1}, 0.1), false, true, "5 trials reached the rung at step 1; 6 must"},
		{"bootstrap reached", mustParse(t, `{"type":"asha","min_resource":1,"reduction_factor":2,"bootstrap_count":4}`), pts([]int64{1}, 0.1), false, false, "among the best"},
		// η = 4 with 5 trials: keep ⌊5/4⌋ = 1.
		{"η 4", mustParse(t, `{"type":"asha","min_resource":1,"reduction_factor":4}`), pts([]int64{1}, 0.31), false, true, "best 1 of the 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, tc.c, Trial{Number: 9, Curve: tc.curve, Maximize: tc.maximize}, rungs)
			if d.Prune != tc.prune || !strings.Contains(d.Reason, tc.why) {
				t.Errorf("prune %v (%s), want %v and a reason with %q", d.Prune, d.Reason, tc.prune, tc.why)
			}
		})
	}
	// The trial's own stored values are not counted twice: as trial 2 it
	// competes with 0.5, 0.3, 0.8 and its own 0.6 at rung 1 (keep 2, bar 0.5).
	self := append(Curves{}, rungs...)
	self[2].Points = pts([]int64{1}, 0.6)
	if d := decide(t, asha, Trial{Number: 2, Curve: pts([]int64{1}, 0.6)}, self); !d.Prune || !strings.Contains(d.Reason, "of the 4 trials") {
		t.Errorf("own value counted twice: %s", d.Reason)
	}
	// Alone at a rung, a trial goes on (Optuna promotes the best of fewer than η).
	if d := decide(t, asha, Trial{Number: 0, Curve: pts([]int64{1}, 5)}, Curves{}); d.Prune {
		t.Errorf("alone: %s", d.Reason)
	}
}

func TestHyperbandBrackets(t *testing.T) {
	hb := mustParse(t, `{"type":"hyperband","min_resource":1,"max_resource":27,"reduction_factor":3}`)
	// 4 brackets (1, 3, 9, 27 ≤ 27): budgets ⌈4·27/4⌉, ⌈4·9/3⌉, ⌈4·3/2⌉, ⌈4·1/1⌉.
	if got := hb.Brackets(); len(got) != 4 || got[0] != 27 || got[1] != 12 || got[2] != 6 || got[3] != 4 {
		t.Errorf("brackets %v, want [27 12 6 4]", got)
	}
	// Exact powers: 243 = 3^5 gives 6 brackets (Optuna's floating log gives 5).
	if got := mustParse(t, `{"type":"hyperband","max_resource":243}`).Brackets(); len(got) != 6 {
		t.Errorf("243/1, η 3: %d brackets, want 6", len(got))
	}
	if got := mustParse(t, `{"type":"hyperband","min_resource":5,"max_resource":5}`).Brackets(); len(got) != 1 || got[0] != 1 {
		t.Errorf("min = max: %v, want one bracket", got)
	}
	if mustParse(t, `{"type":"median"}`).Brackets() != nil {
		t.Error("a median pruner has brackets")
	}
	if _, err := mustParse(t, `{"type":"asha"}`).Bracket("s", 1); err == nil {
		t.Error("Bracket of an asha pruner")
	}
	// Brackets are drawn in proportion to their budgets.
	counts := make([]int, 4)
	for n := range int64(4900) {
		s, err := hb.Bracket("study", n)
		if err != nil {
			t.Fatal(err)
		}
		counts[s]++
	}
	for s, want := range []float64{27, 12, 6, 4} {
		if got := float64(counts[s]) / 100; math.Abs(got-want) > 0.2*want {
			t.Errorf("bracket %d drawn %d times in 4900, want about %v", s, counts[s], 100*want)
		}
	}
	// A trial competes only within its bracket: trial numbers 0..60 of
	// study "hb" all at rung 1 (bracket 0's first rung) with value 1,
	// except trial 60 at 0.5; only bracket-0 trials count.
	var cs Curves
	inBracket0 := 0
	for n := range int64(60) {
		cs = append(cs, Curve{Number: n, Points: pts([]int64{1}, 1)})
		if s, _ := hb.Bracket("hb", n); s == 0 {
			inBracket0++
		}
	}
	var trial int64 = 60
	for ; ; trial++ {
		if s, _ := hb.Bracket("hb", trial); s == 0 {
			break
		}
	}
	d := decide(t, hb, Trial{Study: "hb", Number: trial, Curve: pts([]int64{1}, 0.5)}, cs)
	if d.Prune || !strings.Contains(d.Reason, "bracket 0 of 4") || !strings.Contains(d.Reason, "of the "+itoa(inBracket0+1)+" trials") {
		t.Errorf("bracket 0 with %d others: %s", inBracket0, d.Reason)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestNoneAndBadInputs(t *testing.T) {
	none := mustParse(t, `{}`)
	if none.Type != None {
		t.Fatalf("{} is %q", none.Type)
	}
	if d := decide(t, none, Trial{Curve: pts([]int64{1}, 1)}, nil); d.Prune {
		t.Error("none prunes")
	}
	median := mustParse(t, `{"type":"median"}`)
	if d := decide(t, median, Trial{}, nil); d.Prune || d.Reason != "no intermediate value yet" {
		t.Errorf("no curve: %+v", d)
	}
	for _, curve := range [][]Point{
		pts([]int64{2, 1}, 1, 1), pts([]int64{1, 1}, 1, 1), pts([]int64{-1}, 1), pts([]int64{1}, math.NaN()), pts([]int64{1}, math.Inf(-1)),
	} {
		if _, err := median.Decide(context.Background(), Trial{Curve: curve}, completeAt3); err == nil {
			t.Errorf("curve %v accepted", curve)
		}
	}
	if _, err := median.Decide(context.Background(), Trial{Curve: pts([]int64{1}, 1)}, nil); err == nil {
		t.Error("no source accepted")
	}
	if _, err := (Config{Type: "nope"}).Decide(context.Background(), Trial{}, completeAt3); !errors.Is(err, ErrInvalid) {
		t.Errorf("invalid config: %v", err)
	}
	failing := failingSource{errors.New("database down")}
	if _, err := median.Decide(context.Background(), Trial{Curve: pts([]int64{3}, 1)}, failing); err == nil || !strings.Contains(err.Error(), "database down") {
		t.Errorf("source error: %v", err)
	}
	if _, err := mustParse(t, `{"type":"asha"}`).Decide(context.Background(), Trial{Curve: pts([]int64{3}, 1)}, failing); err == nil {
		t.Error("asha: source error swallowed")
	}
	// A step beyond every rung's limit ends the search for rungs.
	huge := pts([]int64{math.MaxInt64 - 1, math.MaxInt64}, 1, 1)
	if d := decide(t, mustParse(t, `{"type":"asha","min_resource":1,"reduction_factor":2}`), Trial{Curve: huge}, Curves{}); d.Prune {
		t.Errorf("huge steps: %+v", d)
	}
}

type failingSource struct{ err error }

func (f failingSource) CompleteAtStep(context.Context, int64) ([]float64, int, error) {
	return nil, 0, f.err
}
func (f failingSource) FirstFromStep(context.Context, int64) ([]StepValue, error) { return nil, f.err }

// TestAgainstOptuna replays the reports of simulated studies through
// Optuna's own pruners (Debian's python3-optuna, testdata/optuna_replay.py:
// median, percentile, successive halving and Hyperband, both directions)
// and checks that every decision here is Optuna's, and that Hyperband puts
// trials in Optuna's brackets.
func TestAgainstOptuna(t *testing.T) {
	if !optunatest.Available(t) {
		t.Skip("python3-optuna is not installed")
	}
	out, err := exec.Command(optunatest.Python, "testdata/optuna_replay.py", "1").Output()
	if err != nil {
		t.Fatalf("optuna_replay.py: %v", err)
	}
	var replay struct {
		Optuna string
		Cases  []struct {
			Name, Study, Direction string
			Pruner                 json.RawMessage
			BracketOf              []int `json:"bracket_of"`
			Events                 []struct {
				Trial int64
				Step  *int64
				Value float64
				Prune bool
				Tell  string
			}
		}
	}
	if err := json.Unmarshal(out, &replay); err != nil {
		t.Fatal(err)
	}
	if len(replay.Cases) != 7 {
		t.Fatalf("%d cases", len(replay.Cases))
	}
	for _, c := range replay.Cases {
		t.Run(c.Name, func(t *testing.T) {
			cfg := mustParse(t, string(c.Pruner))
			for n, want := range c.BracketOf {
				if got, err := cfg.Bracket(c.Study, int64(n)); err != nil || got != want {
					t.Fatalf("trial %d: bracket %d, Optuna %d (%v)", n, got, want, err)
				}
			}
			curves := map[int64]*Curve{}
			var order []int64
			src := func() Curves {
				cs := make(Curves, 0, len(order))
				for _, n := range order {
					cs = append(cs, *curves[n])
				}
				return cs
			}
			reports, prunes := 0, 0
			for i, e := range c.Events {
				cv, ok := curves[e.Trial]
				if !ok {
					cv = &Curve{Number: e.Trial}
					curves[e.Trial] = cv
					order = append(order, e.Trial)
				}
				if e.Step == nil {
					cv.Complete = e.Tell == "complete"
					continue
				}
				cv.Points = append(cv.Points, Point{*e.Step, e.Value})
				d := decide(t, cfg, Trial{Study: c.Study, Number: e.Trial, Curve: cv.Points, Maximize: c.Direction == "maximize"}, src())
				if d.Prune != e.Prune {
					t.Fatalf("event %d, trial %d step %d: prune %v (%s), Optuna %s says %v", i, e.Trial, *e.Step, d.Prune, d.Reason, replay.Optuna, e.Prune)
				}
				reports++
				if d.Prune {
					prunes++
				}
			}
			if prunes == 0 || prunes == reports {
				t.Fatalf("%d prunes in %d reports: the replay does not discriminate", prunes, reports)
			}
			t.Logf("%d reports, %d pruned, all as Optuna %s decided", reports, prunes, replay.Optuna)
		})
	}
}

// chances answers ContinueChance from a table and records who was asked.
type chances struct {
	Curves
	p       map[int64]float64
	asked   []int64
	minRank float64
}

func (c *chances) ContinueChance(_ context.Context, number int64, minRank float64) (float64, error) {
	c.asked, c.minRank = append(c.asked, number), minRank
	return c.p[number], nil
}

// The model pruner asks at the first report at or past each rung (1, 3, 9
// with the defaults), prunes below min_chance, and refuses a source that
// cannot say.
func TestModelPruner(t *testing.T) {
	c, err := Parse([]byte(`{"type":"model","min_chance":0.1,"min_rank_correlation":-0.25}`))
	if err != nil {
		t.Fatal(err)
	}
	src := &chances{p: map[int64]float64{1: 0.5, 2: 0.09}}
	defer func() {
		if src.minRank != -0.25 {
			t.Errorf("the source was asked with min_rank_correlation %v, want -0.25", src.minRank)
		}
	}()
	steps := func(s ...int64) []Point {
		var out []Point
		for _, v := range s {
			out = append(out, Point{Step: v, Value: 1})
		}
		return out
	}
	for _, tc := range []struct {
		number int64
		curve  []Point
		asked  bool
		prune  bool
	}{
		{1, steps(1), true, false},
		{2, steps(1), true, true},
		{2, steps(1, 2), false, false},  // step 2 is no rung
		{2, steps(1, 2, 4), true, true}, // jumped past the rung at 3
		{2, steps(1, 2, 3, 4, 5), false, false},
		{1, steps(9), true, false},
	} {
		src.asked = nil
		d, err := c.Decide(context.Background(), Trial{Number: tc.number, Curve: tc.curve}, src)
		if err != nil {
			t.Fatal(err)
		}
		if (len(src.asked) > 0) != tc.asked || d.Prune != tc.prune {
			t.Errorf("trial %d at steps %v: asked %v, prune %v (%s); want asked %v, prune %v", tc.number, tc.curve, src.asked, d.Prune, d.Reason, tc.asked, tc.prune)
		}
	}
	if _, err := c.Decide(context.Background(), Trial{Number: 1, Curve: steps(1)}, Curves{}); err == nil || !strings.Contains(err.Error(), "needs the study's optimizer") {
		t.Errorf("a source without chances: error %v", err)
	}
}
