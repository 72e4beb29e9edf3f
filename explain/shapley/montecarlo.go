package shapley

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
)

func defaultWorkers() int { return runtime.GOMAXPROCS(0) }

// mcDraw is one draw of thesis Algorithm 2 for player j: a background row z
// and the players preceding j in a random order.
type mcDraw struct {
	player int
	before uint64
	z      int
}

// mcState keeps the draws of every player so that K can grow (checkSample
// Size) without redrawing: draw k of player j comes from player j's own
// stream, so the first K draws are the same whatever the growth schedule.
type mcState struct {
	pr *prepared
	// bg and at are f over the background and at θ̃: a draw whose θ̃_{−j}
	// is its background row (no predecessors) or whose θ̃_{+j} is θ̃ itself
	// (all others precede j) reuses them instead of calling f again,
	// which saves 2 of every 2p evaluations.
	bg, at  [][]float64
	rngs    []*rand.Rand
	perm    []int
	deltas  [][][]float64 // [output][player][draw]
	samples int
}

func (pr *prepared) newMCState() *mcState {
	p := pr.f.Dim()
	st := &mcState{pr: pr, perm: make([]int, p)}
	for j := 0; j < p; j++ {
		st.rngs = append(st.rngs, newRNG(pr.seed+uint64(j+1)*0x9e3779b97f4a7c15))
	}
	st.deltas = make([][][]float64, len(pr.f.Outputs()))
	for o := range st.deltas {
		st.deltas[o] = make([][]float64, p)
	}
	return st
}

// grow adds draws until every player has k.
func (st *mcState) grow(ctx context.Context, k int) error {
	pr := st.pr
	p := pr.f.Dim()
	add := k - st.samples
	if add <= 0 {
		return nil
	}
	draws := make([]mcDraw, 0, add*p)
	n := len(pr.background)
	for j := 0; j < p; j++ {
		rng := st.rngs[j]
		for range add {
			z := rng.IntN(n)
			for i := range st.perm {
				st.perm[i] = i
			}
			rng.Shuffle(p, func(a, b int) { st.perm[a], st.perm[b] = st.perm[b], st.perm[a] })
			var before uint64
			for _, l := range st.perm {
				if l == j {
					break
				}
				before |= 1 << uint(l)
			}
			draws = append(draws, mcDraw{player: j, before: before, z: z})
		}
	}
	nOut := len(pr.f.Outputs())
	all := uint64(1)<<uint(p) - 1
	// Each draw needs two points, θ̃_{+j} and θ̃_{−j}, evaluated side by side
	// unless one of them is already known.
	perBatch := max(1, pr.batch/2)
	jobs := (len(draws) + perBatch - 1) / perBatch
	delta := make([][]float64, nOut)
	for o := range delta {
		delta[o] = make([]float64, len(draws))
	}
	// slot[i] lists, per draw of a batch, where its two values are: index
	// into the batch's points, or −1 for θ̃ and −2 for the background row.
	workers := pr.workers
	if workers < 1 {
		workers = defaultWorkers()
	}
	bufs := make([]*buffers, workers)
	err := parallel(ctx, workers, jobs, func(w, job int) error {
		if bufs[w] == nil {
			bufs[w] = newBuffers(2*perBatch, p, nOut)
			bufs[w].slots = make([]int, perBatch)
			bufs[w].slots2 = make([]int, perBatch)
		}
		b := bufs[w]
		start := job * perBatch
		end := min(start+perBatch, len(draws))
		plus := b.slots[:end-start]
		minus := b.slots2[:end-start]
		n := 0
		for i, d := range draws[start:end] {
			z := pr.background[d.z]
			with := d.before | 1<<uint(d.player)
			if with == all {
				plus[i] = -1
			} else {
				pr.mix.mix(b.pts[n], pr.x, z, with, b.src)
				plus[i] = n
				n++
			}
			if d.before == 0 {
				minus[i] = -2
			} else {
				pr.mix.mix(b.pts[n], pr.x, z, d.before, b.src)
				minus[i] = n
				n++
			}
		}
		pts, out := b.view(n)
		if n > 0 {
			if err := evalChecked(pr.f, pts, out); err != nil {
				return err
			}
		}
		value := func(o, slot, z int) float64 {
			switch slot {
			case -1:
				return st.at[o][0]
			case -2:
				return st.bg[o][z]
			}
			return out[o][slot]
		}
		for o := range out {
			for i, d := range draws[start:end] {
				delta[o][start+i] = value(o, plus[i], d.z) - value(o, minus[i], d.z)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for o := range delta {
		for j := 0; j < p; j++ {
			st.deltas[o][j] = append(st.deltas[o][j], delta[o][j*add:(j+1)*add]...)
		}
	}
	st.samples = k
	return nil
}

// attributions turns the draws into estimates with standard errors and
// t intervals (thesis section 5.2 and appendix B).
func (st *mcState) attributions(pred, avg []float64) []Attribution {
	pr := st.pr
	p := pr.f.Dim()
	k := st.samples
	t := tQuantile(pr.level, k-1)
	atts := make([]Attribution, len(st.deltas))
	for o, name := range pr.f.Outputs() {
		a := Attribution{Output: name, Prediction: pred[o], Average: avg[o], Payout: pred[o] - avg[o]}
		a.Phi = make([]float64, p)
		a.StdErr = make([]float64, p)
		a.Lower = make([]float64, p)
		a.Upper = make([]float64, p)
		for j := 0; j < p; j++ {
			d := st.deltas[o][j]
			mean := 0.0
			for _, v := range d {
				mean += v
			}
			mean /= float64(k)
			ss := 0.0
			for _, v := range d {
				ss += (v - mean) * (v - mean)
			}
			se := math.Sqrt(ss / float64(k-1) / float64(k))
			a.Phi[j] = mean
			a.StdErr[j] = se
			a.Lower[j] = mean - t*se
			a.Upper[j] = mean + t*se
		}
		finishAttribution(&a, true)
		atts[o] = a
	}
	return atts
}

func (pr *prepared) monteCarlo(ctx context.Context) (*Explanation, error) {
	nOut := len(pr.f.Outputs())
	// The payout compares with the mean over the whole background, as the
	// thesis' appendix B does, not with the draws' mean.
	bg, err := pr.evalPoints(pr.background)
	if err != nil {
		return nil, err
	}
	at, err := pr.evalPoints([][]float64{pr.x})
	if err != nil {
		return nil, err
	}
	pred := make([]float64, nOut)
	avg := make([]float64, nOut)
	for o := range bg {
		pred[o] = at[o][0]
		s := 0.0
		for _, v := range bg[o] {
			s += v
		}
		avg[o] = s / float64(len(bg[o]))
	}
	st := pr.newMCState()
	st.bg, st.at = bg, at
	e := pr.newExplanation()
	k := pr.samples
	for {
		if err := st.grow(ctx, k); err != nil {
			return nil, fmt.Errorf("shapley: monte carlo: %w", err)
		}
		atts := st.attributions(pred, avg)
		step := SampleSizeStep{Samples: k, OK: true}
		for _, a := range atts {
			step.EfficiencyError = append(step.EfficiencyError, a.EfficiencyError)
			gap := math.Inf(1)
			if a.MinGap != nil {
				gap = *a.MinGap
			}
			step.MinGap = append(step.MinGap, gap)
			step.OK = step.OK && a.SampleSizeOK
		}
		if pr.maxSamples > pr.samples {
			if len(atts[0].Phi) == 1 {
				step.MinGap = nil // no pairs to rank
			}
			e.SampleSize = append(e.SampleSize, step)
		}
		e.Outputs = atts
		e.Samples = k
		if step.OK || k >= pr.maxSamples {
			break
		}
		k = min(2*k, pr.maxSamples)
	}
	return e, nil
}
