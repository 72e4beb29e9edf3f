package opt

import (
	"fmt"
	"slices"

	"xbo/gp"
	"xbo/surrogate"
)

// SurrogateAt rebuilds the surrogate fitted on the first t completed trials
// (in completion order), in the proposal model's units (values ×
// Space.Sign(), warped as Config.OutputWarp says), without pending-trial
// lies: the model behind an unconfined proposal made after t observations
// (a confined one's model is unwarped: SurrogateOf). When a
// recorded proposal of that model was made from exactly those t observations with a GP,
// its recorded hyperparameters are reused, so the model is the one that
// proposed it; otherwise the GP is fitted afresh with GPRestarts starts and
// a seed that depends only on Config.Seed and t.
func (o *Optimizer) SurrogateAt(t int) (surrogate.Model, error) {
	// The trials are copied under the lock and the model is fitted outside
	// it, so parallel explainers (and Ask) do not queue behind each other's
	// fits. The fit reads only the immutable configuration, so the model is
	// the same as with the lock held.
	o.mu.Lock()
	var hyper *gp.Hyper
	warped := o.cfg.OutputWarp != "none"
	for i := range o.trials {
		if tr := &o.trials[i]; tr.Hyper != nil && !tr.Fidelity && tr.Observed == t && tr.Warped == warped {
			h := tr.Hyper.Clone()
			hyper = &h
			break
		}
	}
	x, y, err := o.snapshot(t)
	o.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("opt: surrogate at %d: %w", t, err)
	}
	m, err := o.fitSnapshot(x, y, hyper, warped)
	if err != nil {
		return nil, fmt.Errorf("opt: surrogate at %d: %w", t, err)
	}
	return m, nil
}

// snapshot copies the data of the first t completed trials; o.mu must be held.
func (o *Optimizer) snapshot(t int) ([][]float64, []float64, error) {
	if t < 1 || t > o.completed {
		return nil, nil, fmt.Errorf("want 1 ≤ t ≤ %d completed trials", o.completed)
	}
	x, y := o.data(t)
	for i := range x {
		x[i] = slices.Clone(x[i])
	}
	return x, y, nil
}

// fitSnapshot fits the surrogate of SurrogateAt/SurrogateOf on copied data;
// it touches no mutable optimizer state, so it runs without o.mu.
func (o *Optimizer) fitSnapshot(x [][]float64, y []float64, hyper *gp.Hyper, warped bool) (surrogate.Model, error) {
	if warped {
		var err error
		if y, err = o.warp(y); err != nil {
			return nil, err
		}
	}
	return o.sur.rebuild(o, x, y, hyper)
}

// SurrogateOf returns the surrogate (before pending-trial lies) that proposed
// the trial with the given id, rebuilt from its recorded observations and
// hyperparameters; design and random trials have none.
func (o *Optimizer) SurrogateOf(id int64) (surrogate.Model, error) {
	o.mu.Lock()
	i, ok := o.byID[id]
	if !ok {
		o.mu.Unlock()
		return nil, fmt.Errorf("opt: no trial with id %d", id)
	}
	tr := o.trials[i].Clone()
	if tr.Fidelity {
		o.mu.Unlock()
		return nil, fmt.Errorf("opt: trial %d was proposed by the configuration × budget model, from intermediate values not kept as of then", id)
	}
	if tr.Observed == 0 {
		o.mu.Unlock()
		return nil, fmt.Errorf("opt: trial %d was proposed by %q, not by a surrogate", id, tr.Acquisition)
	}
	x, y, err := o.snapshot(tr.Observed)
	o.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("opt: surrogate of trial %d: %w", id, err)
	}
	m, err := o.fitSnapshot(x, y, tr.Hyper, tr.Warped)
	if err != nil {
		return nil, fmt.Errorf("opt: surrogate of trial %d: %w", id, err)
	}
	return m, nil
}
