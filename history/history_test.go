package history

import (
	"errors"
	"math"
	"testing"

	"xbo/space"
)

func testHistory(t *testing.T, dir space.Direction) *History {
	t.Helper()
	sp, err := space.New(dir, []space.Param{
		{Name: "x", Type: space.Float, Low: 0, High: 10},
		{Name: "opt", Type: space.Categorical, Choices: []any{"sgd", "adam"}},
		{Name: "mom", Type: space.Float, Low: 0, High: 1, Condition: &space.Condition{Parent: "opt", Values: []any{"sgd"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	return &History{Space: sp, Trials: []Trial{
		{Number: 0, State: Complete, Params: []float64{1, 0, 0.5}, Value: 3, Completion: 1},
		{Number: 1, State: Failed, Params: []float64{2, 1, nan}, Value: nan, Completion: -1},
		{Number: 2, State: Complete, Params: []float64{5, 1, nan}, Value: 7, Completion: 0},
		{Number: 3, State: Running, Params: []float64{6, 1, nan}, Value: nan, Completion: -1},
		{Number: 4, State: Complete, Params: []float64{9, 1, nan}, Value: 3, Completion: 2},
		{Number: 5, State: Complete, Params: []float64{9, 1, nan}, Value: math.Inf(1), Completion: 3},
	}}
}

func TestBestAndUsable(t *testing.T) {
	h := testHistory(t, space.Minimize)
	if u := h.Usable(); len(u) != 3 || u[0] != 0 || u[1] != 2 || u[2] != 4 {
		t.Fatalf("usable %v (an infinite value is not usable)", u)
	}
	if b, ok := h.Best(); !ok || b != 0 { // 3 ties 3: the earliest wins
		t.Fatalf("minimize best %d", b)
	}
	h = testHistory(t, space.Maximize)
	if b, _ := h.Best(); b != 2 {
		t.Fatalf("maximize best %d", b)
	}
	d, err := h.Encode(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.X) != 3 || d.Best != 1 || d.Index[1] != 2 || d.X[1][2] != space.Inactive || d.X[0][0] != 0.1 {
		t.Fatalf("encoded %+v", d)
	}
	if _, err := h.Encode(4); !errors.Is(err, ErrTooFew) {
		t.Fatalf("4 needed of 3: %v", err)
	}
	if i, ok := h.Index(4); !ok || i != 4 {
		t.Fatalf("index of 4: %d %v", i, ok)
	}
	if _, ok := h.Index(7); ok {
		t.Fatal("found trial 7")
	}
}

// The fingerprint follows the usable data only, unless every trial counts.
func TestFingerprint(t *testing.T) {
	h := testHistory(t, space.Minimize)
	a, _ := h.Fingerprint(false)
	all, _ := h.Fingerprint(true)
	h.Trials[3].State = Failed // a running trial fails
	b, _ := h.Fingerprint(false)
	all2, _ := h.Fingerprint(true)
	if a != b || all == all2 {
		t.Fatalf("usable %s → %s (want equal), all %s → %s (want different)", a, b, all, all2)
	}
	h.Trials[2].Value = 7.000001
	if c, _ := h.Fingerprint(false); c == a {
		t.Fatal("a changed value kept the fingerprint")
	}
	h2 := testHistory(t, space.Maximize)
	if d, _ := h2.Fingerprint(false); d == a {
		t.Fatal("the direction does not enter the fingerprint")
	}
}

func TestValidate(t *testing.T) {
	h := testHistory(t, space.Minimize)
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(h *History){
		func(h *History) { h.Trials[1].Number = 0 },
		func(h *History) { h.Trials[0].Params = h.Trials[0].Params[:2] },
		func(h *History) { h.Trials[0].Params[0] = 11 },
		func(h *History) { h.Trials[2].Params[2] = 0.5 }, // mom given for adam
		func(h *History) { h.Trials[0].State = "done" },
		func(h *History) { h.Space = nil },
	}
	for i, f := range bad {
		h := testHistory(t, space.Minimize)
		f(h)
		if err := h.Validate(); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
}

func TestCompletionOrder(t *testing.T) {
	h := testHistory(t, space.Minimize)
	finished := map[int64]int64{0: 30, 2: 10, 4: 20, 5: 40}
	h.CompletionOrder(func(t *Trial) int64 { return finished[t.Number] })
	want := []int{2, -1, 0, -1, 1, 3}
	for i, w := range want {
		if h.Trials[i].Completion != w {
			t.Fatalf("trial %d completion %d, want %d", h.Trials[i].Number, h.Trials[i].Completion, w)
		}
	}
}
