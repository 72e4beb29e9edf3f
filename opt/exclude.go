package opt

import (
	"fmt"
	"math"

	"xbo/acq"
	"xbo/surrogate"
)

// exclude wraps a with the MinDistance rule around pending and failed
// trials, and with the trust region's walls when box is not nil.
func (o *Optimizer) exclude(a acq.Acquisition, withDone bool, box *trustBox) acq.Acquisition {
	var pts, done [][]float64
	for i := range o.trials {
		switch o.trials[i].State {
		case Pending, Failed, Pruned:
			if o.cfg.MinDistance > 0 {
				pts = append(pts, o.trials[i].U)
			}
		}
		// With withDone every trial (evaluated, pending, failed or pruned)
		// is excluded within the duplicate tolerance too, whatever
		// MinDistance is (see propose: only after a first answer was a
		// copy, because walls around every evaluated point would stop the
		// gradient climb that refines the incumbent in continuous spaces).
		if withDone && o.cfg.DuplicateTolerance > 0 {
			done = append(done, o.trials[i].U)
		}
	}
	if len(pts) == 0 && len(done) == 0 && box == nil {
		return a
	}
	return excluding{Acquisition: a, points: pts, r2: o.cfg.MinDistance * o.cfg.MinDistance,
		done: done, doneR2: o.cfg.DuplicateTolerance * o.cfg.DuplicateTolerance, box: box}
}

// excluding scores −Inf within √r2 of any of points, so a maximizer never
// picks them while anything else is available.
type excluding struct {
	acq.Acquisition
	points [][]float64
	r2     float64
	// done are the evaluated configurations, excluded within √doneR2 (the
	// duplicate tolerance).
	done   [][]float64
	doneR2 float64
	// box, if not nil, is the trust region: everything outside is excluded.
	box *trustBox
}

// Pointwise implements acq.Pointwise: the exclusion depends on the point
// only, so the wrapper is pointwise when the wrapped acquisition is.
func (e excluding) Pointwise() bool {
	p, ok := e.Acquisition.(acq.Pointwise)
	return ok && p.Pointwise()
}

func (e excluding) Score(m surrogate.Model, x [][]float64, out []float64) error {
	return e.scoreAdmitted(x, out, func(x [][]float64, out []float64) error { return e.Acquisition.Score(m, x, out) })
}

// scoreAdmitted writes −Inf for the excluded rows of x and score's values
// for the others. A pointwise acquisition scores only the admitted rows,
// which it scores alike in any batch: a confined ask's random candidates
// outside the trust region, half or more of its candidates, are not
// predicted at all. Any other acquisition scores the whole batch, since a
// row's score may depend on the others.
func (e excluding) scoreAdmitted(x [][]float64, out []float64, score func(x [][]float64, out []float64) error) error {
	if len(out) != len(x) {
		return fmt.Errorf("%d scores for %d points", len(out), len(x))
	}
	excluded := make([]bool, len(x))
	admitted := make([]int, 0, len(x))
	for i, c := range x {
		if excluded[i] = e.excluded(c); !excluded[i] {
			admitted = append(admitted, i)
		}
	}
	if len(admitted) == len(x) || !e.Pointwise() {
		if err := score(x, out); err != nil {
			return err
		}
		for i, ex := range excluded {
			if ex {
				out[i] = math.Inf(-1)
			}
		}
		return nil
	}
	for i := range out {
		out[i] = math.Inf(-1)
	}
	if len(admitted) == 0 {
		return nil
	}
	sub := make([][]float64, len(admitted))
	for k, i := range admitted {
		sub[k] = x[i]
	}
	subOut := make([]float64, len(admitted))
	if err := score(sub, subOut); err != nil {
		return err
	}
	for k, i := range admitted {
		out[i] = subOut[k]
	}
	return nil
}

// Differentiable implements acq.Differentiable: the exclusion is a hard
// wall (−Inf inside), which a climb's line search never crosses, so the
// wrapper is differentiable wherever the wrapped acquisition is.
func (e excluding) Differentiable() bool {
	d, ok := e.Acquisition.(acq.Differentiable)
	return ok && d.Differentiable()
}

// ScoreGradient implements acq.Differentiable.
func (e excluding) ScoreGradient(m surrogate.Gradienter, x, grad []float64) (float64, error) {
	d, ok := e.Acquisition.(acq.Differentiable)
	if !ok || !d.Differentiable() {
		return 0, fmt.Errorf("acquisition %q has no gradient", e.Name())
	}
	if e.excluded(x) {
		clear(grad)
		return math.Inf(-1), nil
	}
	return d.ScoreGradient(m, x, grad)
}

// Bounded implements acq.Bounded: the wrapped bound, −Inf where excluded.
func (e excluding) Bounded() bool {
	b, ok := e.Acquisition.(acq.Bounded)
	return ok && b.Bounded()
}

// ScoreBound implements acq.Bounded.
func (e excluding) ScoreBound(m surrogate.VarianceBounder, x [][]float64, out []float64) error {
	b, ok := e.Acquisition.(acq.Bounded)
	if !ok || !b.Bounded() {
		return fmt.Errorf("acquisition %q has no bound", e.Name())
	}
	return e.scoreAdmitted(x, out, func(x [][]float64, out []float64) error { return b.ScoreBound(m, x, out) })
}

func (e excluding) excluded(c []float64) bool {
	if e.box != nil && !e.box.contains(c) {
		return true
	}
	for _, p := range e.points {
		if squaredDistance(c, p) < e.r2 {
			return true
		}
	}
	for _, p := range e.done {
		if squaredDistance(c, p) <= e.doneR2 {
			return true
		}
	}
	return false
}

// squaredDistance is the squared Euclidean distance of two unit-cube points.
func squaredDistance(a, b []float64) float64 {
	var d2 float64
	for j, v := range a {
		d2 += (v - b[j]) * (v - b[j])
	}
	return d2
}
