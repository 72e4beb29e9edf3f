package opt

import (
	"math"
	"slices"
	"sync"
	"testing"

	"xbo/gp"
)

// newBowl is an optimizer on square2 that has completed `told` trials of bowl2.
func newBowl(t *testing.T, told int) *Optimizer {
	t.Helper()
	o, err := New(Config{Space: mustSpace(t, square2), Seed: 7, FullRefitEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	run(t, o, told, bowl2)
	return o
}

// AskBatch(1) is Ask; AskBatch(n) fits once, records n distinct pending
// trials proposed by the same hyperparameters, and is reproducible.
func TestAskBatch(t *testing.T) {
	a, b := newBowl(t, 12), newBowl(t, 12)
	one, err := a.AskBatch(1)
	if err != nil {
		t.Fatal(err)
	}
	single, err := b.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 1 || !slices.Equal(one[0].U, single.U) || one[0].ID != single.ID {
		t.Fatalf("AskBatch(1) = %+v, Ask = %+v", one, single)
	}

	c, d := newBowl(t, 12), newBowl(t, 12)
	batch, err := c.AskBatch(4)
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.AskBatch(4)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != 4 || len(c.Pending()) != 4 {
		t.Fatalf("%d trials returned, %d pending, want 4 and 4", len(batch), len(c.Pending()))
	}
	for i, tr := range batch {
		if tr.State != Pending || tr.Acquisition != "ei" || tr.Observed != 12 || tr.Number != 12+i {
			t.Fatalf("trial %d: %+v", i, tr)
		}
		if !slices.Equal(tr.U, again[i].U) {
			t.Fatalf("trial %d not reproducible: %v then %v", i, tr.U, again[i].U)
		}
		// Two fits: the confined asks' (12, 14) of the values, the others'
		// of the warped values.
		if tr.Warped != (i%2 == 1) {
			t.Fatalf("trial %d warped %v", i, tr.Warped)
		}
		if tr.Hyper == nil || !slices.Equal(tr.Hyper.Lengthscales, batch[i%2].Hyper.Lengthscales) {
			t.Fatalf("trial %d has hyperparameters %+v, want its kind's single fit %+v", i, tr.Hyper, batch[i%2].Hyper)
		}
		for j := range i {
			if dist := math.Hypot(tr.U[0]-batch[j].U[0], tr.U[1]-batch[j].U[1]); dist < 0.01 {
				t.Fatalf("trials %d and %d are %.3g apart: the constant liar failed", j, i, dist)
			}
		}
	}
	// The first proposal of a batch is the proposal of a plain Ask.
	e := newBowl(t, 12)
	first, err := e.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first.U, batch[0].U) {
		t.Fatalf("first batch proposal %v, Ask %v", batch[0].U, first.U)
	}
	// During the initial design a batch hands out the design points in order.
	f, g := newBowl(t, 0), newBowl(t, 0)
	des, err := f.AskBatch(3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range des {
		tr, err := g.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tr.U, des[i].U) || des[i].Acquisition != AcqInitialDesign {
			t.Fatalf("design trial %d: batch %v (%s), Ask %v", i, des[i].U, des[i].Acquisition, tr.U)
		}
	}
	if _, err := f.AskBatch(0); err == nil {
		t.Fatal("AskBatch(0) succeeded")
	}
}

// SurrogateAt fits outside the optimizer lock: concurrent calls (and a
// concurrent Ask) give exactly the models of sequential calls.
func TestSurrogateAtConcurrent(t *testing.T) {
	o := newBowl(t, 14)
	probe := [][]float64{{0.1, 0.2}, {0.5, 0.5}, {0.9, 0.3}}
	predict := func(ts int) []float64 {
		m, err := o.SurrogateAt(ts)
		if err != nil {
			t.Error(err)
			return nil
		}
		mean, variance := make([]float64, 3), make([]float64, 3)
		if err := m.Predict(probe, mean, variance); err != nil {
			t.Error(err)
		}
		if _, ok := m.(*gp.GP); !ok {
			t.Errorf("SurrogateAt(%d) is %T, want *gp.GP", ts, m)
		}
		return append(mean, variance...)
	}
	// Not 14: the concurrent Ask records a trial proposed from 14
	// observations, whose hyperparameters SurrogateAt(14) then uses (as
	// documented), so its answer legitimately depends on the race.
	ts := []int{9, 10, 12, 13}
	want := make([][]float64, len(ts))
	for i, at := range ts {
		want[i] = predict(at)
	}
	got := make([][]float64, len(ts))
	var wg sync.WaitGroup
	for i, at := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = predict(at)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := o.Ask(); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	for i := range ts {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("SurrogateAt(%d): concurrent %v, sequential %v", ts[i], got[i], want[i])
		}
	}
	if _, err := o.SurrogateAt(0); err == nil {
		t.Fatal("SurrogateAt(0) succeeded")
	}
}
