package opt

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"xbo/acq"
	"xbo/gp"
	"xbo/pareto"
	"xbo/space"
	"xbo/surrogate"
)

// EHVI optimizes several objectives by the expected hypervolume
// improvement of one Gaussian process per objective (Emmerich et al. 2006,
// "Single- and multiobjective evolutionary optimization assisted by
// Gaussian random field metamodels", IEEE TEVC 10(4); computed exactly on
// a box decomposition as in Yang et al. 2019, "Efficient computation of
// expected hypervolume improvement using box decomposition algorithms",
// J. Global Optim. 75), weighted by the probability of feasibility of one
// GP per constraint (Gardner et al. 2014, "Bayesian optimization with
// inequality constraints", ICML).
//
// Objectives are sign-aligned (lower is better) and scaled to [0, 1] by
// the range the complete trials span. The reference point is the front's
// nadir (its worst value in each objective; 1 without a feasible trial)
// plus a tenth of that range, as BoTorch's heuristic sets it near the
// nadir: a point beyond the front's extremes still earns volume, in
// proportion to how far the objective varies, but the volume far from the
// front, which early bad trials would otherwise open up, does not draw the
// proposals to the corners. The region the feasible front
// does not dominate is cut into the boxes of the grid its coordinates span
// (up to the reference point); a box is kept when no front point weakly
// dominates its lower corner. For a point with independent Gaussian
// predictions Y_k ~ N(μ_k, σ_k²), the improvement inside box [l, u] is
// Π_k (min(u_k, ·) − max(l_k, Y_k))⁺, and since (u − max(l, y))⁺ =
// (u − y)⁺ − (l − y)⁺ for l ≤ u,
//
//	EHVI = Σ_boxes Π_k [ψ_k(u_k) − ψ_k(l_k)],   ψ_k(c) = E(c − Y_k)⁺ = (c − μ_k)Φ(z) + σ_k φ(z), z = (c − μ_k)/σ_k,
//
// with ψ_k(−∞) = 0. ψ is evaluated once per point at each grid coordinate,
// so a point costs O(boxes·m). Boxes grow as (front size)^(m−1), so EHVI
// serves two and three objectives (MaxEHVIObjectives) and fronts of at
// most MaxEHVIBoxes boxes, and ParEGO the rest. Beyond the configuration's
// ExactPoints trials each model is a gp.Subset, as the single-objective
// optimizer's is, so an ask's cost stops growing with the study.
//
// A resumed EHVI (NewEHVI with a history, as the service rebuilds one)
// fits its models afresh; the warm starts of the running one are all it
// does not carry over.
//
// Pending trials are handled as the single-objective optimizer's believer:
// each GP is conditioned on them at its own mean, and those means join the
// front (when the constraints' means are met), so a batch spreads.
//
// The initial design and any failure of the model-based step fall back to
// ParEGO, which also keeps the trials. So does a best candidate that
// repeats a trial in a space with a float parameter: the models see
// nothing better nearby, and a random scalarization explores (ZDT3's
// disconnected front loses pieces without it). In a finite space the
// trials' configurations are left out of the search instead.
type EHVI struct {
	p      *ParEGO
	levels []int
	fits   map[string]*ehviFit // each model's last fit, by its role
}

// ehviFit is what EHVI remembers of a model's fits. The hyperparameters
// are refitted (warm-started, one L-BFGS run) once the data grew by a
// twentieth since the last fit, and with three starts every twentieth new
// trial (the single-objective optimizer's one model: every tenth); in
// between a new observation only conditions the model (one
// factorization): at a few hundred trials one more hardly moves the
// maximum-likelihood hyperparameters, and m + constraints fits per ask
// would cost m times the single-objective ask.
type ehviFit struct {
	hyper         gp.Hyper
	fitAt, fullAt int
}

// MaxEHVIBoxes bounds the box decomposition a proposal scores every
// candidate on (about (front size)²/2 boxes with three objectives); a
// larger front is proposed for by ParEGO.
const MaxEHVIBoxes = 20000

// MaxEHVIObjectives is the most objectives EHVI proposes for.
const MaxEHVIObjectives = 3

// ehviLocal bounds the perturbations of the front scored beside the random
// candidates.
const ehviLocal = 256

// ehviMargin is the reference point's margin beyond the front's nadir, as
// a share of the range the trials span.
const ehviMargin = 0.1

// NewEHVI builds the EHVI optimizer of the objectives dirs over cfg.Space,
// resuming from cfg.History as NewParEGO does; cfg's surrogate settings
// (kernel, workers, candidates, initial design, seed) configure it.
func NewEHVI(cfg Config, dirs []space.Direction) (*EHVI, error) {
	if len(dirs) > MaxEHVIObjectives {
		return nil, fmt.Errorf("opt: ehvi: %d objectives; EHVI proposes for at most %d (use ParEGO)", len(dirs), MaxEHVIObjectives)
	}
	p, err := NewParEGO(cfg, dirs)
	if err != nil {
		return nil, fmt.Errorf("opt: ehvi: %w", err)
	}
	return &EHVI{p: p, levels: p.cfg.Space.Levels(), fits: map[string]*ehviFit{}}, nil
}

// Tell records a pending trial's objective and constraint values.
func (e *EHVI) Tell(id int64, values, constraints []float64) error {
	return e.p.Tell(id, values, constraints)
}

// TellFailed records that a pending trial produced no values.
func (e *EHVI) TellFailed(id int64) error { return e.p.TellFailed(id) }

// AskBatch proposes n configurations, each with the earlier ones pending.
func (e *EHVI) AskBatch(n int) ([]Trial, error) {
	return askEach(n, "ehvi", e.Ask)
}

// Ask proposes the next configuration and records it as pending.
func (e *EHVI) Ask() (Trial, error) {
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	design := p.cfg.InitialSize
	if design == 0 {
		design = max(4*p.cfg.Space.Dim(), 5)
	}
	if len(p.values) < max(design, 2) {
		return p.ask()
	}
	t, err := e.propose()
	if err != nil {
		// The model-based step failed (e.g. a GP would not factorize):
		// ParEGO's proposal stands in, and says why.
		t, err2 := p.ask()
		if err2 != nil {
			return Trial{}, errors.Join(err, err2)
		}
		t.Note = fmt.Sprintf("EHVI failed (%v); %s", err, t.Note)
		p.trials[len(p.trials)-1].Note = t.Note
		return t, nil
	}
	return t, nil
}

// propose makes one EHVI proposal with p.mu held.
func (e *EHVI) propose() (Trial, error) {
	p := e.p
	sp := p.cfg.Space
	m := len(p.dirs)
	var x, pending [][]float64
	var ids []int64
	units := make([][]float64, len(p.trials)) // every trial's encoding, for the repeat check too
	for i, t := range p.trials {
		u, err := sp.Encode(t.Params)
		if err != nil {
			if t.State == Complete || t.State == Pending {
				return Trial{}, err
			}
			continue // a failed trial the space cannot encode repeats nothing
		}
		units[i] = u
		switch t.State {
		case Complete:
			x, ids = append(x, u), append(ids, t.ID)
		case Pending:
			pending = append(pending, u)
		}
	}
	n := len(ids)
	// Sign-aligned objectives scaled to [0, 1].
	ys := make([][]float64, m)
	for k := range m {
		sign := 1.0
		if p.dirs[k] == space.Maximize {
			sign = -1
		}
		ys[k] = make([]float64, n)
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, id := range ids {
			ys[k][i] = sign * p.values[id][k]
			lo, hi = math.Min(lo, ys[k][i]), math.Max(hi, ys[k][i])
		}
		for i := range ys[k] {
			if hi > lo {
				ys[k][i] = (ys[k][i] - lo) / (hi - lo)
			} else {
				ys[k][i] = 0
			}
		}
	}
	rng := rand.New(rand.NewPCG(p.cfg.Seed^0xe4f1, uint64(len(p.trials))))
	models := make([]surrogate.Model, m)
	for k := range m {
		g, err := e.fit(fmt.Sprintf("objective %d", k), x, ys[k], pending, rng)
		if err != nil {
			return Trial{}, fmt.Errorf("objective %d: %w", k, err)
		}
		models[k] = g
	}
	// Constraint models, when the trials reported constraint values.
	var cmodels []surrogate.Model
	nc := 0
	for _, id := range ids {
		nc = max(nc, len(p.cons[id]))
	}
	feasible := make([]bool, n)
	for i, id := range ids {
		feasible[i] = p.viol[id] == 0
	}
	for j := range nc {
		var cx [][]float64
		var cy []float64
		for i, id := range ids {
			if c := p.cons[id]; len(c) > j {
				cx, cy = append(cx, x[i]), append(cy, c[j])
			}
		}
		g, err := e.fit(fmt.Sprintf("constraint %d", j), cx, cy, pending, rng)
		if err != nil {
			return Trial{}, fmt.Errorf("constraint %d: %w", j, err)
		}
		cmodels = append(cmodels, g)
	}
	var front [][]float64
	var frontU [][]float64
	{
		var fv [][]float64
		var fu [][]float64
		for i := range n {
			if feasible[i] {
				v := make([]float64, m)
				for k := range m {
					v[k] = ys[k][i]
				}
				fv, fu = append(fv, v), append(fu, x[i])
			}
		}
		// The believer: a pending trial counts as observed at the models'
		// means, and so joins the front when its constraints' means are
		// met. Without it the region around a pending trial keeps the
		// improvement its mean promises, and the next proposal of a batch
		// lands next to it.
		if len(pending) > 0 {
			believed, err := believe(models, cmodels, pending)
			if err != nil {
				return Trial{}, err
			}
			for i, v := range believed {
				if v != nil {
					fv, fu = append(fv, v), append(fu, pending[i])
				}
			}
		}
		if len(fv) > 0 {
			dirs := make([]space.Direction, m)
			for k := range dirs {
				dirs[k] = space.Minimize
			}
			idx, err := pareto.Front(fv, dirs)
			if err != nil {
				return Trial{}, err
			}
			for _, i := range idx {
				front, frontU = append(front, fv[i]), append(frontU, fu[i])
			}
		}
	}
	// In a finite space (integers and categoricals only) the configurations
	// already evaluated or pending score 0: there the best candidate is
	// often one of them (a noisy objective's mean beats its observation),
	// and asking it again teaches nothing the trial has not. In a space
	// with a float parameter a best candidate that repeats a trial means
	// the models see nothing better nearby, and the ask explores instead
	// (below).
	var taken [][]float64
	if finiteSpace(sp) {
		taken = slices.Concat(x, pending)
	}
	bx := newBoxes(front, ehviRef(front, m))
	if len(bx.cells) > MaxEHVIBoxes {
		return Trial{}, fmt.Errorf("the front of %d trials cuts into %d boxes, more than %d", len(front), len(bx.cells), MaxEHVIBoxes)
	}
	a := &ehviAcquisition{models: models, constraints: cmodels, boxes: bx, taken: taken}
	// Beside random candidates, small perturbations of the front's
	// configurations, where the front is extended most cheaply: up to 8
	// each, ehviLocal in all (a front of three objectives holds many
	// trials, and every candidate costs a prediction of each model).
	var extra [][]float64
	per := 0
	if len(frontU) > 0 {
		per = min(8, max(1, ehviLocal/len(frontU)))
	}
	for _, u := range frontU {
		for range per {
			v := slices.Clone(u)
			for j := range v {
				if v[j] != space.Inactive {
					v[j] = math.Min(1, math.Max(0, v[j]+0.05*rng.NormFloat64()))
				}
			}
			sp.Repair(v)
			extra = append(extra, v)
		}
	}
	search := acq.RandomSearch{Candidates: p.cfg.Candidates, Extra: extra, Workers: p.cfg.Workers}
	res, err := search.Maximize(a, models[0], sp, rng)
	if err != nil {
		return Trial{}, err
	}
	if !(res.Score > 0) {
		return Trial{}, errors.New("no candidate is expected to improve the front")
	}
	for i, u := range units {
		if u != nil && unitDistance(u, res.U) < 1e-4 {
			return Trial{}, fmt.Errorf("the best candidate repeats trial %d", p.trials[i].Number)
		}
	}
	var next int64
	for _, t := range p.trials {
		next = max(next, t.ID)
	}
	t := Trial{ID: next + 1, Number: len(p.trials), Params: sp.Decode(res.U), U: res.U, Acquisition: "ehvi",
		State: Pending, Value: math.NaN(), Completion: -1, Observed: n,
		Note: fmt.Sprintf("EHVI %.3g of the scaled front (%d Pareto-optimal of %d trials)", res.Score, len(front), n)}
	p.trials = append(p.trials, t.Clone())
	return t, nil
}

// believe returns each pending point's predicted objectives (the models'
// means), nil for a point whose constraints' predicted means are not all
// ≤ 0.
func believe(models, cmodels []surrogate.Model, pending [][]float64) ([][]float64, error) {
	n := len(pending)
	mean, variance := make([]float64, n), make([]float64, n)
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, len(models))
	}
	for k, mod := range models {
		if err := mod.Predict(pending, mean, variance); err != nil {
			return nil, err
		}
		for i := range out {
			out[i][k] = mean[i]
		}
	}
	for _, c := range cmodels {
		if err := c.Predict(pending, mean, variance); err != nil {
			return nil, err
		}
		for i := range out {
			if mean[i] > 0 {
				out[i] = nil
			}
		}
	}
	return out, nil
}

// fit fits one GP on the schedule of ehviFit and conditions it on the
// pending points at its own mean.
func (e *EHVI) fit(role string, x [][]float64, y []float64, pending [][]float64, rng *rand.Rand) (surrogate.Model, error) {
	cfg := e.p.cfg
	kernel, err := gp.ParseKernel(cmp.Or(cfg.Kernel, DefaultKernel))
	if err != nil {
		return nil, err
	}
	// NewParEGO named the prior ("none" unless the study set one).
	prior, err := gp.ParsePrior(cfg.LengthscalePrior)
	if err != nil {
		return nil, err
	}
	n := len(y)
	opts := gp.Options{Kernel: kernel, Prior: prior, Levels: e.levels, Seed: rng.Uint64(), Workers: cfg.Workers, Restarts: 1}
	last := e.fits[role]
	switch {
	case last == nil || n >= last.fullAt+20:
		opts.Restarts = 3
		if last != nil {
			opts.Init = &last.hyper
		}
	case n >= last.fitAt+max(1, n/20):
		opts.Init = &last.hyper
	default:
		opts.Fixed = &last.hyper
	}
	exact, meanPoints := cfg.subsetPoints()
	model, hyper, err := fitScalableGP(x, y, opts, exact, meanPoints, nil)
	if err != nil {
		return nil, err
	}
	switch {
	case opts.Fixed != nil:
	case opts.Restarts == 3:
		e.fits[role] = &ehviFit{hyper: hyper, fitAt: n, fullAt: n}
	default:
		last.hyper, last.fitAt = hyper, n
	}
	if len(pending) == 0 {
		return model, nil
	}
	mean := make([]float64, len(pending))
	variance := make([]float64, len(pending))
	if err := model.Predict(pending, mean, variance); err != nil {
		return nil, err
	}
	return model.ConditionOn(pending, mean)
}

// finiteSpace reports whether every parameter takes a grid of values: an
// integer, a categorical or a stepped float.
func finiteSpace(sp *space.Space) bool {
	for _, p := range sp.Params {
		if p.Continuous() {
			return false
		}
	}
	return true
}

func unitDistance(a, b []float64) float64 {
	d := 0.0
	for j := range a {
		d = math.Max(d, math.Abs(a[j]-b[j]))
	}
	return d
}

// boxes is the box decomposition of the region the front does not
// dominate, below the reference point: per objective the sorted grid
// coordinates (−∞ first, the reference last) and the kept boxes as index
// tuples of their lower corners.
type boxes struct {
	coords [][]float64
	cells  [][]int
}

// ehviRef is the reference point of a front of scaled, sign-aligned
// values (see EHVI).
func ehviRef(front [][]float64, m int) []float64 {
	ref := make([]float64, m)
	for k := range m {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range front {
			lo, hi = math.Min(lo, p[k]), math.Max(hi, p[k])
		}
		if len(front) == 0 {
			hi = 1
		}
		ref[k] = hi + ehviMargin
	}
	return ref
}

func newBoxes(front [][]float64, ref []float64) *boxes {
	m := len(ref)
	b := &boxes{coords: make([][]float64, m)}
	for k := range m {
		c := []float64{math.Inf(-1)}
		for _, p := range front {
			if p[k] < ref[k] {
				c = append(c, p[k])
			}
		}
		slices.Sort(c[1:])
		c = slices.Compact(c)
		b.coords[k] = append(c, ref[k])
	}
	idx := make([]int, m)
	var walk func(k int)
	walk = func(k int) {
		if k == m {
			for _, p := range front {
				dominated := true
				for j := range m {
					if p[j] > b.coords[j][idx[j]] {
						dominated = false
						break
					}
				}
				if dominated {
					return
				}
			}
			b.cells = append(b.cells, slices.Clone(idx))
			return
		}
		for i := 0; i < len(b.coords[k])-1; i++ {
			idx[k] = i
			walk(k + 1)
		}
	}
	walk(0)
	return b
}

// ehviAcquisition scores points by EHVI × probability of feasibility, 0 at
// the configurations in taken.
type ehviAcquisition struct {
	models, constraints []surrogate.Model
	boxes               *boxes
	taken               [][]float64
}

func (a *ehviAcquisition) Name() string { return "ehvi" }

var stdNormal = distuv.UnitNormal

func (a *ehviAcquisition) Score(_ surrogate.Model, x [][]float64, out []float64) error {
	n, m := len(x), len(a.models)
	means := make([][]float64, m)
	sds := make([][]float64, m)
	for k, mod := range a.models {
		means[k], sds[k] = make([]float64, n), make([]float64, n)
		if err := mod.Predict(x, means[k], sds[k]); err != nil {
			return err
		}
	}
	feas := make([]float64, n)
	for i := range feas {
		feas[i] = 1
	}
	mu, v := make([]float64, n), make([]float64, n)
	for _, c := range a.constraints {
		if err := c.Predict(x, mu, v); err != nil {
			return err
		}
		for i := range feas {
			s := math.Sqrt(math.Max(v[i], 1e-18))
			feas[i] *= stdNormal.CDF(-mu[i] / s)
		}
	}
	psi := make([][]float64, m)
	for k := range m {
		psi[k] = make([]float64, len(a.boxes.coords[k]))
	}
	for i := range n {
		for k := range m {
			s := math.Sqrt(math.Max(sds[k][i], 1e-18))
			for c, at := range a.boxes.coords[k] {
				if math.IsInf(at, -1) {
					psi[k][c] = 0
					continue
				}
				z := (at - means[k][i]) / s
				psi[k][c] = (at-means[k][i])*stdNormal.CDF(z) + s*stdNormal.Prob(z)
			}
		}
		total := 0.0
		if len(a.boxes.cells) == 0 {
			total = 1 // no feasible front yet: feasibility alone decides
		}
		for _, cell := range a.boxes.cells {
			prod := 1.0
			for k, c := range cell {
				prod *= psi[k][c+1] - psi[k][c]
				if prod == 0 {
					break
				}
			}
			total += prod
		}
		out[i] = total * feas[i]
		for _, u := range a.taken {
			if unitDistance(u, x[i]) < 1e-4 {
				out[i] = 0
				break
			}
		}
	}
	return nil
}

// MultiObjective is an optimizer of several objectives or constraints as
// the service drives it.
type MultiObjective interface {
	Ask() (Trial, error)
	AskBatch(n int) ([]Trial, error)
	Tell(id int64, values, constraints []float64) error
	TellFailed(id int64) error
}

// NewMultiObjective builds the optimizer of a study with several
// objectives or constraints: EHVI for up to MaxEHVIObjectives objectives,
// ParEGO beyond (docs/research/multiobjective.md measures the choice).
func NewMultiObjective(cfg Config, dirs []space.Direction) (MultiObjective, error) {
	if len(dirs) <= MaxEHVIObjectives {
		return NewEHVI(cfg, dirs)
	}
	return NewParEGO(cfg, dirs)
}

// Pointwise implements acq.Pointwise: a point's score depends on it and
// the models only.
func (a *ehviAcquisition) Pointwise() bool { return true }
