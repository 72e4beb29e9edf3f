package opt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"xbo/acq"
	"xbo/gp"
	"xbo/space"
	"xbo/surrogate"
)

// fitted is a surrogate fitted on the first `observed` completed trials,
// shared by the proposals of one AskBatch.
type fitted struct {
	observed int
	fidelity int       // points of a configuration × budget model (0: none)
	readAt   int64     // the budget it is read at
	means    []float64 // its means there at the observed configurations
	model    surrogate.Model
	hyper    *gp.Hyper
}

// propose makes the next proposal. A non-nil reuse caches the surrogate fits,
// one per kind of model (modelKind): if it holds a model of the
// current completed trials that model is used again (only the pending-trial
// lies differ), otherwise the fit is stored in it.
func (o *Optimizer) propose(reuses *[2]fitted) (Trial, error) {
	n := len(o.trials)
	rng := o.stream(streamAsk, n)
	if o.cfg.Strategy == AcqRandom {
		return Trial{U: o.s.Sample(rng, 1)[0], Acquisition: AcqRandom}, nil
	}
	if n < len(o.design) {
		return Trial{U: slices.Clone(o.design[n]), Acquisition: AcqInitialDesign}, nil
	}
	x, y := o.data(o.completed)
	// With a named resource, once a trial stopped early, the model is
	// over configuration × budget (multifidelity.go).
	var xz [][]float64
	var yz []float64
	var readAt int64
	var skip []bool // trials the proposal model is not conditioned on
	resource := o.resource()
	if resource != nil {
		var configs [][]float64
		var ok bool
		if xz, yz, configs, readAt, ok = o.fidelityData(resource); ok {
			x = configs
		} else {
			xz = nil
		}
		skip = o.skipPruned(nil)
	}
	fidelity := xz != nil
	// A confined ask's model sees the values unwarped (see
	// DefaultOutputWarp); the noise rule, which needs the fit, can still
	// leave such an ask unconfined.
	warped := !fidelity && o.cfg.OutputWarp != "none" && !o.confinable(n, len(x))
	var reuse *fitted
	if reuses != nil {
		reuse = &reuses[modelKind(warped)]
	}
	var err error
	if warped {
		if y, err = o.warp(y); err != nil {
			return Trial{U: o.s.Sample(rng, 1)[0], Acquisition: AcqRandomFallback, Note: "output warp failed: " + err.Error()}, nil
		}
	}
	if len(x) < 2 {
		return Trial{
			U:           o.s.Sample(rng, 1)[0],
			Acquisition: AcqRandomFallback,
			Note:        fmt.Sprintf("only %d completed trial(s): too few to fit a surrogate", len(x)),
		}, nil
	}
	var model surrogate.Model
	var hyper *gp.Hyper
	switch {
	case reuse != nil && reuse.model != nil && reuse.observed == len(x) && reuse.fidelity == len(xz) && reuse.readAt == readAt:
		model, hyper = reuse.model, reuse.hyper
		if fidelity {
			y = reuse.means
		}
	case fidelity:
		// The model over budgets is fitted to warped values as the
		// whole-space model is (multifidelity.go).
		if yz, err = o.warp(yz); err != nil {
			err = fmt.Errorf("output warp: %w", err)
			break
		}
		model, y, hyper, err = o.fitFidelity(xz, yz, x, resource, readAt)
	default:
		model, hyper, err = o.fit(x, y, &o.warm[modelKind(warped)])
	}
	if err == nil && reuse != nil {
		*reuse = fitted{observed: len(x), fidelity: len(xz), readAt: readAt, means: y, model: model, hyper: hyper}
	}
	if err != nil {
		return Trial{
			U:           o.s.Sample(rng, 1)[0],
			Acquisition: AcqRandomFallback,
			Note:        "surrogate fit failed: " + err.Error(),
		}, nil
	}
	best := slices.Min(y)
	// Numerics must not stop a study: a step that fails on this history
	// gives a random configuration that says why, and the next ask tries
	// again with the next observation.
	fallback := func(step string, err error) (Trial, error) {
		return Trial{
			U:           o.s.Sample(rng, 1)[0],
			Acquisition: AcqRandomFallback,
			Note:        step + " failed: " + err.Error(),
		}, nil
	}
	proposal, err := o.condition(model, x, y, best, skip)
	if err != nil {
		return fallback("conditioning on the pending trials", err)
	}
	a, err := o.acquisition(proposal, x, y, best, n, rng)
	if err != nil {
		return fallback("building the acquisition", err)
	}
	global := o.searchAround(x, y, n)
	maxim := global
	var box *trustBox
	if !fidelity && o.confines(n, len(x), hyper) {
		if box, err = o.trustRegion(proposal, x, y, hyper.Lengthscales); err != nil {
			return fallback("building the trust region", err)
		}
		if rs, ok := maxim.(acq.RandomSearch); ok {
			rs.Extra = append(rs.Extra, box.candidates(o.s, trustCandidates, o.stream(streamTrust, n))...)
			maxim = rs
		}
	}
	// search maximizes a inside the box, and over the whole space (box
	// cleared) when nothing in the box is admissible: all of it near
	// pending or failed trials or, withDone, every level in it evaluated.
	search := func(withDone bool) (acq.Result, error) {
		res, err := maxim.Maximize(o.exclude(a, withDone, box), proposal, o.s, rng)
		if box != nil && (err != nil || math.IsInf(res.Score, -1)) {
			box = nil
			res, err = global.Maximize(o.exclude(a, withDone, nil), proposal, o.s, rng)
		}
		return res, err
	}
	res, err := search(false)
	if err != nil {
		return fallback("maximizing the acquisition", err)
	}
	if _, _, ok := o.nearCopy(res.U); ok {
		// The favourite repeats a trial: the best configuration away from
		// every trial, by the same acquisition (see duplicate.go).
		if again, err := search(true); err == nil && o.worthProposing(a, again.Score) {
			res = again
		}
	}
	if near, dist, ok := o.nearCopy(res.U); ok {
		return Trial{
			U:           o.freshRandom(rng),
			Acquisition: AcqRandomFallback,
			Note:        fmt.Sprintf("the %s proposal was %.3g from trial %d (duplicate tolerance %g): replaced by a random configuration", a.Name(), dist, near, o.cfg.DuplicateTolerance),
		}, nil
	}
	t := Trial{U: res.U, Acquisition: a.Name(), Observed: len(x), Fidelity: fidelity, Warped: warped, Note: res.Warning}
	if box != nil {
		t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + fmt.Sprintf("within the trust region of side %.3g around complete trial %d", box.side, o.completionNumber(box.incumbent))
	}
	if fidelity {
		t.Observed = 0 // the model's data are not the first complete trials
		t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + fmt.Sprintf("model over configuration × %s fitted on %d values of %d trials, read at %s = %d",
			resource.Name, len(xz), len(x), resource.Name, readAt)
	}
	if n, ok := o.policy.(acq.Noter); ok {
		if note := n.Note(); note != "" {
			t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + note
		}
	}
	if hyper != nil {
		t.Hyper = hyper
	}
	return t, nil
}

func (o *Optimizer) acquisition(model surrogate.Model, x [][]float64, y []float64, best float64, number int, rng *rand.Rand) (acq.Acquisition, error) {
	if o.cfg.Acquire != nil {
		a, err := o.cfg.Acquire(Iteration{Number: number, Space: o.s, Model: model, Best: best, X: x, Y: y, Rng: rng})
		if err != nil {
			return nil, fmt.Errorf("acquisition chooser: %w", err)
		}
		if a == nil {
			return nil, errors.New("acquisition chooser returned nil")
		}
		return a, nil
	}
	tau := o.cfg.Tau
	p := acq.Params{Best: best, Xi: o.cfg.Xi, Tau: &tau}
	if o.cfg.SE == SEPredictive {
		nv, ok := model.(surrogate.NoiseVariancer)
		if !ok {
			return nil, fmt.Errorf("se %q: the %T model has no fitted noise", o.cfg.SE, model)
		}
		p.NoiseVariance = nv.NoiseVariance()
	}
	return acq.New(o.cfg.Strategy, p)
}

// discrete says whether the space has a parameter that takes a grid of
// values: an int, a categorical or a stepped float.
func (o *Optimizer) discrete() bool {
	return slices.ContainsFunc(o.s.Params, func(p space.Param) bool { return !p.Continuous() })
}

// freshRandomTries bounds the random draws freshRandom makes.
const freshRandomTries = 1000

// freshRandom is a random configuration that is not a copy of an earlier
// trial, when one turns up in freshRandomTries draws (on an exhausted grid
// none does, and the last draw is returned).
func (o *Optimizer) freshRandom(rng *rand.Rand) []float64 {
	var u []float64
	for range freshRandomTries {
		u = o.s.Sample(rng, 1)[0]
		if _, _, dup := o.nearCopy(u); !dup {
			return u
		}
	}
	return u
}

// nearCopy reports the earliest trial within DuplicateTolerance of u and its
// distance.
func (o *Optimizer) nearCopy(u []float64) (number int, dist float64, ok bool) {
	tol2 := o.cfg.DuplicateTolerance * o.cfg.DuplicateTolerance
	if tol2 == 0 {
		return 0, 0, false
	}
	for i := range o.trials {
		if d2 := squaredDistance(o.trials[i].U, u); d2 <= tol2 {
			return o.trials[i].Number, math.Sqrt(d2), true
		}
	}
	return 0, 0, false
}
