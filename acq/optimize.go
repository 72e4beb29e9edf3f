package acq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"xbo/space"
	"xbo/surrogate"
)

// Maximizer searches a space for a point of high acquisition utility.
type Maximizer interface {
	Maximize(a Acquisition, m surrogate.Model, s *space.Space, rng *rand.Rand) (Result, error)
}

// Result is the outcome of an acquisition search.
type Result struct {
	// U is the chosen point in unit-cube encoding, already repaired (ints and
	// categoricals on their bin centres, inactive parameters = space.Inactive).
	U []float64
	// Score is its utility.
	Score float64
	// Evaluations counts the points scored.
	Evaluations int
	// Warning says when a step failed and what stood in for it.
	Warning string
}

// Defaults of the acquisition searches.
const (
	// DefaultCandidates is the number of uniform random candidates of paper
	// 002 ("randomly sampling 1500 configurations ... returning the best").
	DefaultCandidates = 1500
	// DefaultRefine is how many of the best random candidates the pattern
	// search polishes. Random sampling alone resolves a 6-d optimum only to
	// about 1500^(−1/6) ≈ 0.3 of the range, so refining a few is cheap and
	// matters late in a run when EI is sharply peaked.
	DefaultRefine = 3
	// Focus search defaults are mlrMBO's as used by Croppi 2021, table 3.
	DefaultFocusRestarts   = 3
	DefaultFocusIterations = 5
	DefaultFocusPoints     = 1000
)

// RandomSearch scores Candidates uniform random points of the space
// (space.Sample: log-uniform on log scales, every integer and level equally
// likely) and polishes the best Refine of them with a bounded pattern search.
// The zero value uses the defaults.
type RandomSearch struct {
	// Candidates is the number of random points (default 1500).
	Candidates int
	// Refine is the number of best candidates refined; 0 means DefaultRefine
	// and a negative value turns refinement off (the plain paper-002 search).
	Refine int
	// Extra candidates (unit-cube, repaired) are scored along with the random
	// ones, e.g. the incumbent, so a good known region is never missed.
	Extra [][]float64
	// Exhaustive scores every candidate exactly. By default, when the
	// acquisition is Bounded and the model a surrogate.VarianceBounder,
	// only the candidates whose bound can reach the best are scored
	// exactly; the proposal is the same.
	Exhaustive bool
	// Workers bounds the goroutines of the refinement [2]; 1 keeps it on
	// the caller's goroutine. The result does not depend on it.
	Workers int
	// Pattern forces the pattern search even when the acquisition and the
	// surrogate are differentiable (see Differentiable), where the default
	// is to climb the gradient on the float parameters.
	Pattern bool
	// Refinement settings; zero means the default in brackets.
	InitialStep float64 // first step on float coordinates [0.05]
	MinStep     float64 // smallest pattern step before stopping [1e-3]
	MaxRounds   int     // rounds of the batched pattern search [60]
}

// FocusSearch is mlrMBO's focus search (Bischl et al., as used by Croppi 2021,
// table 3): in each of Restarts restarts it samples Points points (Latin
// hypercube within the current box) for Iterations iterations; after each
// iteration every numeric box edge moves to within a quarter of the box width
// of the iteration's best point, and every categorical loses one randomly
// chosen level other than the best point's. The best point over all restarts
// wins. The zero value uses the paper's 3 restarts, 5 iterations, 1000 points.
type FocusSearch struct {
	Restarts   int
	Iterations int
	Points     int
	// Refine polishes the best Refine points of the final result with the
	// same refinement as RandomSearch (0 = none, the mlrMBO behaviour).
	Refine int
	// Pattern forces the pattern search for that refinement (see
	// RandomSearch.Pattern).
	Pattern bool
	// Workers bounds the refinement's goroutines (see RandomSearch.Workers).
	Workers int
	// Exhaustive scores every point of every iteration exactly (see
	// RandomSearch.Exhaustive); the search takes the same path either way.
	Exhaustive bool
}

func checkInputs(a Acquisition, m surrogate.Model, s *space.Space, rng *rand.Rand) error {
	switch {
	case a == nil:
		return errors.New("nil acquisition")
	case m == nil:
		return errors.New("nil surrogate")
	case s == nil:
		return errors.New("nil space")
	case rng == nil:
		return errors.New("nil random generator")
	case m.Dim() != s.Dim():
		return fmt.Errorf("surrogate has dimension %d but the space has %d parameters", m.Dim(), s.Dim())
	}
	return nil
}

// Maximize implements Maximizer.
func (r RandomSearch) Maximize(a Acquisition, m surrogate.Model, s *space.Space, rng *rand.Rand) (Result, error) {
	if err := checkInputs(a, m, s, rng); err != nil {
		return Result{}, fmt.Errorf("acq: random search: %w", err)
	}
	n := r.Candidates
	if n == 0 {
		n = DefaultCandidates
	}
	if n < 0 {
		return Result{}, fmt.Errorf("acq: random search: %d candidates", n)
	}
	cands := s.Sample(rng, n)
	for i, e := range r.Extra {
		if len(e) != s.Dim() {
			return Result{}, fmt.Errorf("acq: random search: extra candidate %d has %d coordinates, want %d", i, len(e), s.Dim())
		}
		cands = append(cands, slices.Clone(e))
	}
	if len(cands) == 0 {
		return Result{}, errors.New("acq: random search: no candidates")
	}
	refine := r.Refine
	if refine == 0 {
		refine = DefaultRefine
	}
	scored, scores, err := scoreCandidates(a, m, cands, max(refine, 1), r.Exhaustive)
	if err != nil {
		return Result{}, fmt.Errorf("acq: random search: %w", err)
	}
	res, err := refineTop(a, m, s, scored, scores, refine, refineSettings{r.InitialStep, r.MinStep, r.MaxRounds, r.Pattern, r.Workers})
	if err != nil {
		return Result{}, fmt.Errorf("acq: random search: %w", err)
	}
	res.Evaluations += len(cands)
	return res, nil
}

// Maximize implements Maximizer.
func (f FocusSearch) Maximize(a Acquisition, m surrogate.Model, s *space.Space, rng *rand.Rand) (Result, error) {
	if err := checkInputs(a, m, s, rng); err != nil {
		return Result{}, fmt.Errorf("acq: focus search: %w", err)
	}
	restarts, iters, points := f.Restarts, f.Iterations, f.Points
	if restarts == 0 {
		restarts = DefaultFocusRestarts
	}
	if iters == 0 {
		iters = DefaultFocusIterations
	}
	if points == 0 {
		points = DefaultFocusPoints
	}
	if restarts < 0 || iters < 0 || points < 0 {
		return Result{}, fmt.Errorf("acq: focus search: restarts %d, iterations %d and points %d must be positive", restarts, iters, points)
	}
	d := s.Dim()
	levels := s.Levels()
	best := Result{Score: math.Inf(-1)}
	var finalists [][]float64
	var finalScores []float64
	pts := make([][]float64, points)
	for i := range pts {
		pts[i] = make([]float64, d)
	}
	lo, hi := make([]float64, d), make([]float64, d)
	allowed := make([][]int, d)
	perm := make([]int, points)
	for range restarts {
		for j := range d {
			lo[j], hi[j] = 0, 1
			allowed[j] = allowed[j][:0]
			for k := range levels[j] {
				allowed[j] = append(allowed[j], k)
			}
		}
		for range iters {
			// Latin hypercube in the box: one point per stratum and dimension,
			// as mlrMBO's generateDesign(..., randomLHS).
			for j := range d {
				for i := range perm {
					perm[i] = i
				}
				rng.Shuffle(points, func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
				for i := range pts {
					if levels[j] > 0 {
						k := allowed[j][rng.IntN(len(allowed[j]))]
						pts[i][j] = (float64(k) + 0.5) / float64(levels[j])
						continue
					}
					t := (float64(perm[i]) + rng.Float64()) / float64(points)
					pts[i][j] = lo[j] + t*(hi[j]-lo[j])
				}
			}
			for _, p := range pts {
				s.Repair(p)
			}
			scored, scores, err := scoreCandidates(a, m, pts, 1, f.Exhaustive)
			if err != nil {
				return Result{}, fmt.Errorf("acq: focus search: %w", err)
			}
			best.Evaluations += points
			ib := argmax(scores)
			if ib < 0 {
				return Result{}, errors.New("acq: focus search: every candidate scored NaN")
			}
			centre := scored[ib]
			finalists = append(finalists, slices.Clone(centre))
			finalScores = append(finalScores, scores[ib])
			if scores[ib] > best.Score {
				best.Score, best.U = scores[ib], slices.Clone(centre)
			}
			for j := range d {
				c := centre[j]
				if c == space.Inactive {
					continue
				}
				if levels[j] > 0 {
					if len(allowed[j]) > 1 {
						keep := int(math.Floor(c * float64(levels[j])))
						var others []int
						for _, k := range allowed[j] {
							if k != keep {
								others = append(others, k)
							}
						}
						drop := others[rng.IntN(len(others))]
						allowed[j] = slices.DeleteFunc(allowed[j], func(k int) bool { return k == drop })
					}
					continue
				}
				quarter := (hi[j] - lo[j]) / 4
				lo[j] = math.Max(lo[j], c-quarter)
				hi[j] = math.Min(hi[j], c+quarter)
			}
		}
	}
	if best.U == nil {
		return Result{}, errors.New("acq: focus search: no point was scored")
	}
	if f.Refine > 0 {
		res, err := refineTop(a, m, s, finalists, finalScores, f.Refine, refineSettings{pattern: f.Pattern, workers: f.Workers})
		if err != nil {
			return Result{}, fmt.Errorf("acq: focus search: %w", err)
		}
		res.Evaluations += best.Evaluations
		return res, nil
	}
	return best, nil
}

// scoreCandidates returns the candidates the refinement may start from and
// their exact scores: all of them, or with a bounded acquisition and model
// (and exhaustive false) only those that can be among the keep best.
func scoreCandidates(a Acquisition, m surrogate.Model, cands [][]float64, keep int, exhaustive bool) ([][]float64, []float64, error) {
	if b, ok := bounded(a); ok && !exhaustive {
		if vb, ok := m.(surrogate.VarianceBounder); ok {
			return topExact(b, vb, cands, keep)
		}
	}
	scores := make([]float64, len(cands))
	if err := a.Score(m, cands, scores); err != nil {
		return nil, nil, err
	}
	return cands, scores, nil
}

func argmax(x []float64) int {
	ib := -1
	for i, v := range x {
		if math.IsNaN(v) {
			continue
		}
		if ib < 0 || v > x[ib] {
			ib = i
		}
	}
	return ib
}

// refineSettings configures refineTop: the pattern search's steps and
// rounds (initial is also the climb's first step), and the choice and
// parallelism of the refinement.
type refineSettings struct {
	initial, min float64
	rounds       int
	// pattern: no gradient climb even where one is available.
	pattern bool
	// workers bounds the goroutines of a gradient climb (0: two).
	workers int
}

// refineTop takes the top `count` points by score (count < 0: none) and
// improves them, by a gradient climb where the acquisition and the model are
// differentiable and the space has float parameters, otherwise by a batched
// steepest-ascent pattern search; it returns the best point seen.
func refineTop(a Acquisition, m surrogate.Model, s *space.Space, pts [][]float64, scores []float64, count int, ps refineSettings) (Result, error) {
	top := topDistinct(pts, scores, max(count, 1))
	if len(top) == 0 {
		return Result{}, errors.New("every candidate scored NaN")
	}
	best := Result{U: slices.Clone(pts[top[0]]), Score: scores[top[0]]}
	if count <= 0 {
		return best, nil
	}
	starts := make([][]float64, len(top))
	startScores := make([]float64, len(top))
	for k, i := range top {
		starts[k], startScores[k] = slices.Clone(pts[i]), scores[i]
	}
	var u []float64
	var score float64
	var evals int
	var err error
	if c := climberFor(a, m, s, ps); c != nil {
		u, score, evals, err = climbAll(c, starts, startScores, ps.workers)
	} else {
		u, score, evals, err = patternSearch(a, m, s, starts, startScores, ps)
	}
	if err != nil {
		// The refinement is an improvement on the best candidate, not a
		// condition of a proposal: the candidate stands, with a warning.
		best.Warning = "refinement failed, the best candidate was kept: " + err.Error()
		return best, nil
	}
	best.Evaluations = evals
	if score > best.Score {
		best.U, best.Score = u, score
	}
	return best, nil
}

// patternSearch runs a compass search from every start at once, so each round
// scores all neighbours of all starts in one surrogate call (a GP predicts a
// batch far faster than the same points one by one). Float coordinates move by
// ±step, halved when no neighbour improves; int coordinates move to the next
// integer on either side; categoricals try every other level. Every neighbour
// is repaired, so conditions switch children on and off consistently.
func patternSearch(a Acquisition, m surrogate.Model, s *space.Space, starts [][]float64, startScores []float64, ps refineSettings) ([]float64, float64, int, error) {
	if ps.initial <= 0 {
		ps.initial = 0.05
	}
	if ps.min <= 0 {
		ps.min = 1e-3
	}
	if ps.rounds <= 0 {
		ps.rounds = 60
	}
	type walker struct {
		u     []float64
		score float64
		step  float64
		done  bool
	}
	walkers := make([]walker, len(starts))
	for i := range starts {
		walkers[i] = walker{u: starts[i], score: startScores[i], step: ps.initial}
	}
	hasFloat := false
	for _, p := range s.Params {
		if p.Continuous() {
			hasFloat = true
		}
	}
	var (
		batch  [][]float64
		owner  []int
		scores []float64
		fresh  [][]float64
		slot   []int
		evals  int
	)
	// Scores are remembered by point: a walker that moved would otherwise
	// re-score the point it came from, and walkers that meet would re-score
	// each other's neighbours. A point's score does not depend on the batch
	// it is scored in, so the search takes exactly the same path.
	memo := isPointwise(a)
	seen := map[string]float64{}
	key := make([]byte, 0, 8*len(s.Params))
	pointKey := func(u []float64) string {
		key = key[:0]
		for _, v := range u {
			key = binary.LittleEndian.AppendUint64(key, math.Float64bits(v))
		}
		return string(key)
	}
	for range ps.rounds {
		batch, owner = batch[:0], owner[:0]
		for w := range walkers {
			if walkers[w].done {
				continue
			}
			for _, nb := range neighbours(s, walkers[w].u, walkers[w].step) {
				batch = append(batch, nb)
				owner = append(owner, w)
			}
		}
		if len(batch) == 0 {
			break
		}
		if cap(scores) < len(batch) {
			scores = make([]float64, len(batch))
		}
		scores = scores[:len(batch)]
		fresh, slot = fresh[:0], slot[:0]
		pendingAt := map[string]int{}
		for i, nb := range batch {
			if !memo {
				slot = append(slot, len(fresh))
				fresh = append(fresh, nb)
				continue
			}
			k := pointKey(nb)
			if v, ok := seen[k]; ok {
				scores[i] = v
				slot = append(slot, -1)
				continue
			}
			if j, ok := pendingAt[k]; ok {
				slot = append(slot, j)
				continue
			}
			pendingAt[k] = len(fresh)
			slot = append(slot, len(fresh))
			fresh = append(fresh, nb)
		}
		if len(fresh) > 0 {
			freshScores := make([]float64, len(fresh))
			if err := a.Score(m, fresh, freshScores); err != nil {
				return nil, 0, evals, err
			}
			evals += len(fresh)
			for i, j := range slot {
				if j >= 0 {
					scores[i] = freshScores[j]
				}
			}
			for k, j := range pendingAt {
				seen[k] = freshScores[j]
			}
		}
		bestIdx := make([]int, len(walkers))
		for w := range bestIdx {
			bestIdx[w] = -1
		}
		for i, w := range owner {
			if math.IsNaN(scores[i]) {
				continue
			}
			if bestIdx[w] < 0 || scores[i] > scores[bestIdx[w]] {
				bestIdx[w] = i
			}
		}
		for w := range walkers {
			wk := &walkers[w]
			if wk.done {
				continue
			}
			// A relative margin stops the walk from drifting along plateaus
			// (EI is exactly 0 far from the data) by round-off.
			threshold := wk.score
			if !math.IsInf(threshold, 0) {
				threshold += 1e-12 * math.Abs(threshold)
			}
			if i := bestIdx[w]; i >= 0 && scores[i] > threshold {
				wk.u, wk.score = batch[i], scores[i]
				continue
			}
			if hasFloat && wk.step > ps.min {
				wk.step /= 2
				continue
			}
			wk.done = true
		}
	}
	ib := 0
	for w := range walkers {
		if walkers[w].score > walkers[ib].score {
			ib = w
		}
	}
	return slices.Clone(walkers[ib].u), walkers[ib].score, evals, nil
}

// neighbours lists the repaired compass moves of u that differ from it.
func neighbours(s *space.Space, u []float64, step float64) [][]float64 {
	var out [][]float64
	add := func(j int, v float64) {
		nb := slices.Clone(u)
		nb[j] = v
		s.Repair(nb)
		if !slices.Equal(nb, u) {
			out = append(out, nb)
		}
	}
	for j := range s.Params {
		p := &s.Params[j]
		if u[j] == space.Inactive {
			continue
		}
		switch {
		case p.Continuous():
			add(j, math.Max(0, u[j]-step))
			add(j, math.Min(1, u[j]+step))
		case p.Type != space.Categorical:
			// The neighbouring values of an int or stepped grid: a compass
			// step in u may be narrower than one bin and repair back.
			k := p.GridIndex(p.FromUnit(u[j]))
			if k > 0 {
				add(j, p.ToUnit(p.GridValue(k-1)))
			}
			if k+1 < p.Cardinality() {
				add(j, p.ToUnit(p.GridValue(k+1)))
			}
		default:
			cur := p.FromUnit(u[j])
			for k := range p.Choices {
				if float64(k) != cur {
					add(j, p.ToUnit(float64(k)))
				}
			}
		}
	}
	return out
}
