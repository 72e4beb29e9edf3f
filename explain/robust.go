package explain

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"xbo/gp"
	"xbo/history"
	"xbo/space"
)

// Outliers: which trials the explanations leave out.
//
// A diverged training run reports a value far worse than any configuration
// near it (a loss of 3.7 among losses of 0.3), and a Gaussian process fitted
// by maximum likelihood explains such a value either as noise, which then
// drowns every effect (the learning rate's importance fell from 32% to 2%
// on the README's study with one such value), or by a spike that distorts
// the curves around it. The engine therefore leaves out a trial when these
// things hold:
//
//   - its value is extreme among all the values: beyond Tukey's far-out
//     fence Q3 + 3·IQR (Q1 − 3·IQR when maximizing; Tukey 1977,
//     "Exploratory Data Analysis"). A model is often overconfident about
//     the worst real configurations (on the README's study the worst trial,
//     0.60 among values from 0.14, was 5 sd above its prediction), and
//     those values are data; only extreme ones are candidates. Values far
//     better than the rest are never candidates: a narrow optimum is what
//     tuning looks for;
//   - no extreme value repeats exactly: a repeated value is a saturated
//     metric (chance-level error, a clipped loss's ceiling), a plateau
//     that configurations reach deterministically, and every trial is kept;
//   - the extreme values do not share a region of the space: if one
//     parameter's values among them differ from the other trials', a box of
//     two parameters' ranges holds them apart, or they are each other's
//     nearest neighbours, beyond chance (permutation tests; regionTest),
//     they are structure (a learning rate at which every run diverges),
//     and every trial is kept;
//   - it does not explain another bad value: a value beyond Tukey's inner
//     fence Q3 + 1.5·IQR (Q1 − 1.5·IQR when maximizing) that is no candidate (an "outside" value, data by
//     the first rule) may be predicted beyond the threshold below by the
//     GP fitted without the candidates, within it by the GP fitted to
//     every trial, and worse by that GP without this candidate alone (its
//     standardized residual up by more than Φ⁻¹(1 − α/(m·k)) for m such
//     values and k candidates; corroborate). Then the candidate is what
//     explains a real bad value near it: a region where runs fail, seen
//     through two trials of which only one is extreme, too few for the
//     permutation tests, and it is kept (a learning rate of 1 with small
//     batches that diverges in one run and nearly in another). A run that
//     failed at random leaves no such trace: the GP that keeps it
//     explains it as noise or as a spike among good neighbours, and
//     predicts the other trials as well without it as with it;
//   - the default GP fitted to the other trials predicts it badly: with
//     z_i = (y_i − μ₋ᵢ)/σ₋ᵢ (the prediction of trial i from the others,
//     noise included; signed so that positive is worse) divided by the
//     robust spread c = max(1, 1.4826·MAD) of the kept trials' z, so that a
//     model overconfident everywhere does not condemn every trial, z_i/c
//     exceeds Φ⁻¹(1 − α/n), α = 0.05 (Bonferroni over the n trials: on data
//     a calibrated model fits, the chance that any trial is left out is at
//     most 5%).
//
// The search starts with every candidate left out and takes back those the
// model of the others predicts (see clean); when more than
// maxOutlierFraction of the values are extreme, none is left out. This is
// trimming by a robust predictive test, in the spirit of Li, Kim and Yoon
// 2021, "Robust Gaussian process regression based on iterative trimming",
// Astron. Comput. 36; a trial left out has weight 0. Every explanation
// lists the trials left out, with their values and what the others
// predicted there, and a request can keep them (Surrogate.Outliers).
const (
	outlierAlpha       = 0.05
	outlierRounds      = 3
	maxOutlierFraction = 0.2
	// maxCorroborations bounds the candidates corroborate examines, those
	// the GP correlates most with the values to explain first: each costs
	// a conditioning of the GP, and the others are tested as before.
	maxCorroborations = 5
)

// Outlier handling of a surrogate (Surrogate.Outliers).
const (
	OutliersExclude = "exclude" // the default: leave out values no model of the others predicts
	OutliersKeep    = "keep"    // fit every usable trial
)

// Outlier is a trial whose value the explanations leave out.
type Outlier struct {
	Trial int64   `json:"trial"`
	Value float64 `json:"value"`
	// Predicted and SD are the mean and standard deviation (noise
	// included) of the trial's value as the other trials predict it.
	Predicted float64 `json:"predicted"`
	SD        float64 `json:"sd"`
	// Z is how many predictive standard deviations worse than predicted the
	// value is, after dividing by the robust spread of all trials' z.
	Z float64 `json:"z"`
}

// heldOut predicts every row of the data it is given from the others: a
// model's leave-one-out mean and variance (noise included).
type heldOut func(d *history.Data) (mean, variance []float64, err error)

// outlierTest is the outcome of one round of the predictive test.
type outlierTest struct {
	flagged   []bool
	z         []float64 // rescaled by the robust spread
	scale     float64
	threshold float64
}

// testOutliers flags the rows whose values are worse than predicted beyond
// the Bonferroni threshold, after rescaling by the robust spread of the z
// of the rows not currently left out (out[i]).
func testOutliers(y, mean, variance []float64, out []bool, maximize bool) (*outlierTest, error) {
	fence := farOutFence(y, maximize)
	n := len(y)
	if len(mean) != n || len(variance) != n || len(out) != n {
		return nil, fmt.Errorf("explain: outlier test: %d values, %d means, %d variances, %d marks", n, len(mean), len(variance), len(out))
	}
	sign := 1.0
	if maximize {
		sign = -1
	}
	z := make([]float64, n)
	var kept []float64
	for i := range n {
		sd := math.Sqrt(variance[i])
		if !(sd > 0) || math.IsNaN(mean[i]) {
			return nil, fmt.Errorf("explain: outlier test: trial row %d predicted %v ± %v", i, mean[i], sd)
		}
		z[i] = sign * (y[i] - mean[i]) / sd
		if !out[i] {
			kept = append(kept, z[i])
		}
	}
	scale := 1.0
	if len(kept) >= 3 {
		med := median(kept)
		dev := make([]float64, len(kept))
		for k, v := range kept {
			dev[k] = math.Abs(v - med)
		}
		scale = math.Max(1, 1.4826*median(dev))
	}
	t := &outlierTest{flagged: make([]bool, n), z: z, scale: scale,
		threshold: distuv.UnitNormal.Quantile(1 - outlierAlpha/float64(n))}
	for i := range z {
		z[i] /= scale
		t.flagged[i] = z[i] > t.threshold && sign*(y[i]-fence) > 0
	}
	return t, nil
}

// farOutFence is Q3 + 3·IQR of the values (Q1 − 3·IQR when maximizing),
// with the standard deviation for the IQR when more than half the values
// are equal (a plateau).
func farOutFence(y []float64, maximize bool) float64 { return tukeyFence(y, maximize, 3) }

// innerFence is Tukey's inner fence, Q3 + 1.5·IQR (Q1 − 1.5·IQR when
// maximizing): the values beyond it are his "outside" values.
func innerFence(y []float64, maximize bool) float64 { return tukeyFence(y, maximize, 1.5) }

// tukeyFence is Q3 + k·IQR of the values (Q1 − k·IQR when maximizing), with
// the standard deviation for the IQR when more than half the values are
// equal.
func tukeyFence(y []float64, maximize bool, k float64) float64 {
	s := sortedCopy(y)
	q1, q3 := quantileSorted(s, 0.25), quantileSorted(s, 0.75)
	spread := q3 - q1
	if !(spread > 0) {
		m := 0.0
		for _, v := range y {
			m += v
		}
		m /= float64(len(y))
		for _, v := range y {
			spread += (v - m) * (v - m)
		}
		spread = math.Sqrt(spread / float64(len(y)))
	}
	if maximize {
		return q1 - k*spread
	}
	return q3 + k*spread
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return 0.5 * (s[m-1] + s[m])
}

// cleaning is the data an explanation's surrogate is fitted to, with the
// trials left out and why.
type cleaning struct {
	data     *history.Data // the rows kept
	outliers []Outlier
	// heavy is set when more than maxOutlierFraction of the values are
	// extreme, region when the extreme ones share a region of the space,
	// so none was left out; flagged counts them.
	heavy  bool
	region *region
	// plateau is set, to the value, when an extreme value repeats exactly.
	plateau *float64
	// corroborated lists the extreme trials kept because leaving one out
	// leaves another bad value unexplained (corroborate).
	corroborated []corroboration
	flagged      int
	threshold    float64
	// model is the default GP fitted to data, reused as the default
	// surrogate.
	model *fitted
}

// keepRows returns the data restricted to the rows not marked out.
func keepRows(d *history.Data, out []bool) *history.Data {
	k := &history.Data{Best: -1}
	for i := range d.Y {
		if out[i] {
			continue
		}
		if i == d.Best {
			k.Best = len(k.Y)
		}
		k.X, k.Y, k.Index = append(k.X, d.X[i]), append(k.Y, d.Y[i]), append(k.Index, d.Index[i])
	}
	return k
}

// clean leaves out the trials that fail the outlier test. Candidates are
// the values beyond the far-out fence; without any, the data are fitted as
// they are. Candidates that share a region of the space are structure (a
// learning rate at which every run diverges), which nothing may hide: when
// some parameter's values among the candidates differ from the others', or
// they are each other's nearest neighbours, beyond chance (regionTest),
// every trial is kept. A candidate that alone explains a bad value that is
// no candidate is kept too (corroborate). Otherwise the search
// starts from every candidate left out and takes back, refitting, those the
// model of the other trials predicts, until the set is stable: starting
// from the full fit instead lets failures mask each other (two diverged
// runs near each other predict each other well). fit fits the default GP to
// some rows; predictAll predicts every row from that model (leave-one-out
// for the rows it was fitted to, a plain prediction with the noise for the
// rows left out).
func clean(p *prepared, fit func(d *history.Data) (*fitted, error), refit func(like *fitted, d *history.Data) (*fitted, error),
	predictAll func(m *fitted, kept, all *history.Data, out []bool) ([]float64, []float64, error)) (*cleaning, error) {
	all := p.data
	n := len(all.Y)
	maximize := p.h.Direction() == space.Maximize
	fence := farOutFence(all.Y, maximize)
	sign := 1.0
	if maximize {
		sign = -1
	}
	out := make([]bool, n)
	count := 0
	for i, v := range all.Y {
		if sign*(v-fence) > 0 {
			out[i] = true
			count++
		}
	}
	keepAll := func(c *cleaning) (*cleaning, error) {
		m, err := fit(all)
		if err != nil {
			return nil, err
		}
		c.data, c.model = all, m
		return c, nil
	}
	if count == 0 {
		return keepAll(&cleaning{})
	}
	if count > int(math.Floor(maxOutlierFraction*float64(n))) || n-count < MinTrials {
		return keepAll(&cleaning{heavy: true, flagged: count})
	}
	if v, ok := repeated(all.Y, out); ok {
		return keepAll(&cleaning{plateau: v, flagged: count})
	}
	// The tests on the coordinates need no model; the neighbour test
	// measures distances with the lengthscales of the GP fitted without the
	// candidates, which they cannot distort.
	if r := regionTest(p.h.Space, all.X, out, nil); r != nil {
		return keepAll(&cleaning{region: r, flagged: count})
	}
	kept := keepRows(all, out)
	m, err := fit(kept)
	if err != nil {
		return nil, err
	}
	if r := regionTest(p.h.Space, all.X, out, lengthscalesOf(m)); r != nil {
		return keepAll(&cleaning{region: r, flagged: count})
	}
	whole, backed, err := corroborate(all, out, m, maximize, fit, refit, predictAll)
	if err != nil {
		return nil, err
	}
	protected := make([]bool, n)
	var corroborated []corroboration
	for _, b := range backed {
		protected[b.row], out[b.row] = true, false
		corroborated = append(corroborated, corroboration{Trial: p.h.Trials[all.Index[b.row]].Number, Value: all.Y[b.row],
			By: p.h.Trials[all.Index[b.by]].Number, ByValue: all.Y[b.by]})
	}
	if len(backed) == count {
		c := &cleaning{data: all, model: whole, corroborated: corroborated, flagged: count}
		return c, nil
	}
	if len(backed) > 0 {
		kept = keepRows(all, out)
		if m, err = fit(kept); err != nil {
			return nil, err
		}
	}
	var test *outlierTest
	var mean, variance []float64
	for round := 0; ; round++ {
		if round > 0 {
			if m, err = fit(kept); err != nil {
				return nil, err
			}
		}
		if mean, variance, err = predictAll(m, kept, all, out); err != nil {
			return nil, err
		}
		if test, err = testOutliers(all.Y, mean, variance, out, maximize); err != nil {
			return nil, err
		}
		for i, keep := range protected {
			test.flagged[i] = test.flagged[i] && !keep
		}
		if slices.Equal(test.flagged, out) || round == outlierRounds {
			break
		}
		copy(out, test.flagged)
		kept = keepRows(all, out)
	}
	c := &cleaning{data: kept, model: m, threshold: test.threshold, corroborated: corroborated}
	for i, o := range out {
		if o {
			c.outliers = append(c.outliers, Outlier{Trial: p.h.Trials[all.Index[i]].Number, Value: all.Y[i],
				Predicted: mean[i], SD: math.Sqrt(variance[i]), Z: test.z[i]})
		}
	}
	c.flagged = len(c.outliers)
	return c, nil
}

// corroboration is an extreme trial kept because without it the model
// cannot explain trial By, whose value is bad but not extreme.
type corroboration struct {
	Trial   int64
	Value   float64
	By      int64
	ByValue float64
}

// backing is a candidate row kept and the row whose value it explains.
type backing struct{ row, by int }

// corroborate asks, for every candidate (marked), whether it is what
// explains another bad value, a trial that is no candidate but lies beyond
// Tukey's inner fence (an "outside" value; Tukey 1977): such a value is
// data, not a failure to leave out. The candidate explains it when
//
//   - the model of the other trials (clean, fitted without the candidates)
//     predicts the outside value worse than the threshold that would leave
//     a candidate out (testOutliers): the leave-out has made it an
//     outlier;
//   - the model fitted to every trial predicts it within that threshold;
//     and
//   - the same model — the same hyperparameters and output scale —
//     conditioned on every trial but the candidate predicts it worse, its
//     standardized held-out residual larger by more than Φ⁻¹(1 − α/(m·k))
//     (Bonferroni over the m outside values and k candidates): the
//     candidate itself, not the noise the full model allows, explains it.
//
// Such a pair is a region where runs fail, seen through two values of
// which only one is extreme, which the coordinates alone cannot show (two
// trials of thirty rarely reach a permutation test's level). A run that
// failed at random leaves no such trace: a model that explains it as
// noise, or as a spike among good neighbours, predicts the other trials as
// well with it as without it. clean is the model fitted to the rows not
// marked; refit conditions a model's like on other rows. It returns the
// model fitted to every trial (nil when no outside value is left to
// explain) and the candidates kept, each with the row it explains.
func corroborate(all *history.Data, marked []bool, clean *fitted, maximize bool, fit func(d *history.Data) (*fitted, error),
	refit func(like *fitted, d *history.Data) (*fitted, error),
	predictAll func(m *fitted, kept, all *history.Data, out []bool) ([]float64, []float64, error)) (*fitted, []backing, error) {
	n := len(all.Y)
	sign := 1.0
	if maximize {
		sign = -1
	}
	inner := innerFence(all.Y, maximize)
	var outside []int
	k := 0
	for i, v := range all.Y {
		if marked[i] {
			k++
		} else if sign*(v-inner) > 0 {
			outside = append(outside, i)
		}
	}
	if len(outside) == 0 || k == 0 {
		return nil, nil, nil
	}
	mean, variance, err := predictAll(clean, keepRows(all, marked), all, marked)
	if err != nil {
		return nil, nil, err
	}
	others, err := testOutliers(all.Y, mean, variance, marked, maximize)
	if err != nil {
		return nil, nil, err
	}
	var unexplained []int
	for _, t := range outside {
		if others.z[t] > others.threshold {
			unexplained = append(unexplained, t)
		}
	}
	if len(unexplained) == 0 {
		return nil, nil, nil
	}
	whole, err := fit(all)
	if err != nil {
		return nil, nil, err
	}
	none := make([]bool, n)
	if mean, variance, err = predictAll(whole, all, all, none); err != nil {
		return nil, nil, err
	}
	with, err := testOutliers(all.Y, mean, variance, none, maximize)
	if err != nil {
		return nil, nil, err
	}
	level := distuv.UnitNormal.Quantile(1 - outlierAlpha/float64(len(outside)*k))
	var order []int
	for c, m := range marked {
		if m {
			order = append(order, c)
		}
	}
	if len(order) > maxCorroborations {
		kern := kernelOf(whole)
		near := make(map[int]float64, len(order))
		for _, c := range order {
			near[c] = math.Inf(-1)
			for _, t := range unexplained {
				near[c] = math.Max(near[c], kern(all.X[c], all.X[t]))
			}
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(near[b], near[a]) })
		order = order[:maxCorroborations]
	}
	var backed []backing
	for _, c := range order {
		without := make([]bool, n)
		without[c] = true
		rest := keepRows(all, without)
		wo, err := refit(whole, rest)
		if err != nil {
			return nil, nil, err
		}
		if mean, variance, err = predictAll(wo, rest, all, without); err != nil {
			return nil, nil, err
		}
		test, err := testOutliers(all.Y, mean, variance, without, maximize)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range unexplained {
			if with.z[t] <= with.threshold && test.z[t]-with.z[t] > level {
				backed = append(backed, backing{row: c, by: t})
				break
			}
		}
	}
	return whole, backed, nil
}

// repeated returns an extreme value that two or more of the marked trials
// share exactly. A run that diverges at random reports a value of its own;
// a value repeated exactly is a saturated metric — chance-level error, the
// ceiling of a clipped loss — that configurations reach deterministically:
// a plateau of the objective, which the explanations must show.
func repeated(y []float64, marked []bool) (*float64, bool) {
	seen := map[float64]bool{}
	for i, m := range marked {
		if !m {
			continue
		}
		if seen[y[i]] {
			v := y[i]
			return &v, true
		}
		seen[y[i]] = true
	}
	return nil, false
}

// region says what sets the candidates for failure apart: a parameter, a
// box of two parameters' ranges, or their being each other's nearest
// neighbours.
type region struct {
	Param  string // empty for the box and the neighbour tests
	Box    bool
	PValue float64
}

// boxSeparation is how well a box of at most two conditions on the
// parameters (a classification tree of depth 2, grown greedily on the
// unit-cube coordinates, a categorical's by level index) separates the
// marked trials from the others: the Gini impurity it removes,
// Σ 2p(m−p)/m over the root minus over the leaves, for p marked among m.
// A learning rate above one value and a batch size below another is such a
// box.
func boxSeparation(x [][]float64, orders [][]int, lab []bool) float64 {
	n := len(x)
	gini := func(p, m int) float64 {
		if m == 0 {
			return 0
		}
		return 2 * float64(p) * float64(m-p) / float64(m)
	}
	// best finds the split of the trials in (nil: all) removing the most
	// impurity, and returns the gain and the side of every trial.
	in := make([]bool, n)
	filtered := make([]int, 0, n)
	best := func(member []bool) (float64, []bool) {
		p, m := 0, 0
		for i := range n {
			if member == nil || member[i] {
				m++
				if lab[i] {
					p++
				}
			}
		}
		if m < 2 {
			return 0, nil
		}
		parent := gini(p, m)
		gain, bj, bcut := 0.0, -1, 0.0
		for j, order := range orders {
			sub := order
			if member != nil {
				sub = filtered[:0]
				for _, i := range order {
					if member[i] {
						sub = append(sub, i)
					}
				}
			}
			lp := 0
			for r, i := range sub[:len(sub)-1] {
				if lab[i] {
					lp++
				}
				// A cut between distinct values only.
				if x[sub[r+1]][j] == x[i][j] {
					continue
				}
				if g := parent - gini(lp, r+1) - gini(p-lp, m-r-1); g > gain {
					gain, bj, bcut = g, j, x[i][j]
				}
			}
		}
		if bj < 0 {
			return 0, nil
		}
		side := make([]bool, n)
		for i := range n {
			side[i] = x[i][bj] <= bcut
		}
		return gain, side
	}
	g0, side := best(nil)
	if side == nil {
		return 0
	}
	total := g0
	for _, left := range []bool{true, false} {
		for i := range n {
			in[i] = side[i] == left
		}
		g, _ := best(in)
		total += g
	}
	return total
}

// Permutations of the region tests, and the most trials the neighbour
// graph is built on (the candidates and a fixed-seed sample of the rest).
const (
	regionPermutations    = 2000
	minRegionPermutations = 500
	regionWork            = 30_000_000 // coordinate visits the box test may spend on relabellings
	regionSeed            = 17
	maxRegionTrials       = 2000 // other trials the tests see on a large study
)

// regionTest asks whether the candidates (marked) are a random subset of
// the trials, as failures unrelated to the configuration are, with d + 2
// permutation tests (regionPermutations random relabellings with the same
// number of candidates, fixed seed, so ties, levels and few candidates need
// no approximation), Bonferroni over them at 0.05:
//
//   - for every parameter, the Kolmogorov–Smirnov distance between the
//     candidates' and the others' values of its unit-cube coordinate (an
//     inactive conditional parameter counts as a value below all others, a
//     categorical by its level index);
//   - how much impurity a box of at most two parameters' ranges removes in
//     telling the candidates from the others (boxSeparation): a region
//     shaped by two parameters, where an optimizer's trials crowd on either
//     side of it (a learning rate that diverges only with small batches);
//   - how many candidates have another candidate as their nearest trial, in
//     the GP's own metric (its lengthscales): a region shaped by several
//     parameters, or next to the optimum where an optimizer's trials crowd
//     (a learning rate just past the best one diverges), shows there.
//
// Without lengthscales it runs the d + 1 tests on the coordinates, with
// them the neighbour test alone, each at the level of all d + 2. It returns
// what set them apart, or nil.
func regionTest(sp *space.Space, x [][]float64, marked []bool, lengthscales []float64) *region {
	rng := rand.New(rand.NewPCG(regionSeed, regionSeed^0x2b992ddfa23249d6))
	// On a large study the tests see the candidates and a fixed-seed
	// random sample of the other trials: under the null the candidates are
	// a random subset of all trials, so they are of the sample too.
	if len(x) > maxRegionTrials {
		var sx [][]float64
		var sm []bool
		rest := 0
		for _, i := range rng.Perm(len(x)) {
			if marked[i] || rest < maxRegionTrials {
				sx, sm = append(sx, x[i]), append(sm, marked[i])
				if !marked[i] {
					rest++
				}
			}
		}
		x, marked = sx, sm
	}
	n := len(x)
	k := 0
	for _, m := range marked {
		if m {
			k++
		}
	}
	if k == 0 || k == n {
		return nil
	}
	d := len(sp.Params)
	level := 0.05 / float64(d+2)
	var best *region
	consider := func(r *region) {
		if best == nil || r.PValue < best.PValue {
			best = r
		}
	}
	// A relabelling is a partial Fisher–Yates shuffle: O(k), no allocation.
	perm := make([]bool, n)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	relabel := func() []bool {
		clear(perm)
		for a := range k {
			b := a + rng.IntN(n-a)
			idx[a], idx[b] = idx[b], idx[a]
			perm[idx[a]] = true
		}
		return perm
	}
	// The box test costs O(d·n) per relabelling: on large studies fewer
	// of them, never so few that the Bonferroni level is out of reach.
	perms := min(regionPermutations, max(minRegionPermutations, regionWork/(3*d*n)))
	pvalue := func(stat func(lab []bool) float64) float64 {
		observed := stat(marked)
		exceed := 0
		for range perms {
			if stat(relabel()) >= observed-1e-12 {
				exceed++
			}
		}
		return float64(exceed+1) / float64(perms+1)
	}
	orders := make([][]int, d)
	// With lengthscales given, the coordinate tests have run already (see
	// clean): only the neighbour test is left, at the same level.
	coordinates := lengthscales == nil
	for j := range d {
		if !coordinates {
			break
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(x[a][j], x[b][j]) })
		orders[j] = order
		ks := func(lab []bool) float64 {
			worst, ca, cb := 0.0, 0, 0
			for r := 0; r < n; {
				e := r
				for e < n && x[order[e]][j] == x[order[r]][j] {
					if lab[order[e]] {
						ca++
					} else {
						cb++
					}
					e++
				}
				worst = math.Max(worst, math.Abs(float64(ca)/float64(k)-float64(cb)/float64(n-k)))
				r = e
			}
			return worst
		}
		if ks(marked) > 0 {
			consider(&region{Param: sp.Params[j].Name, PValue: pvalue(ks)})
		}
	}
	if coordinates && k >= 2 {
		box := func(lab []bool) float64 { return boxSeparation(x, orders, lab) }
		if box(marked) > 0 {
			consider(&region{Box: true, PValue: pvalue(box)})
		}
	}
	if len(lengthscales) == d && k >= 2 {
		nn := nearestNeighbours(sp, x, lengthscales)
		joins := func(lab []bool) float64 {
			c := 0
			for i, j := range nn {
				if j >= 0 && lab[i] && lab[j] {
					c++
				}
			}
			return float64(c)
		}
		if joins(marked) > 0 {
			consider(&region{PValue: pvalue(joins)})
		}
	}
	if best != nil && best.PValue < level {
		return best
	}
	return nil
}

// nearestNeighbours returns, for every trial, its nearest other trial in
// the GP's metric (Σ_j (Δ_j/ℓ_j)², a categorical or an inactive coordinate
// differing by 1).
func nearestNeighbours(sp *space.Space, x [][]float64, lengthscales []float64) []int {
	n := len(x)
	levels := sp.Levels()
	dist := func(a, b []float64) float64 {
		s := 0.0
		for j, l := range lengthscales {
			u, v := a[j], b[j]
			switch {
			case u == v:
			case levels[j] > 0 || u < 0 || v < 0:
				s += 1 / (l * l)
			default:
				s += (u - v) * (u - v) / (l * l)
			}
		}
		return s
	}
	nn := make([]int, n)
	for i := range nn {
		nn[i] = -1
	}
	for i := range n {
		bestD := math.Inf(1)
		for j := range n {
			if j == i {
				continue
			}
			if dd := dist(x[i], x[j]); dd < bestD {
				bestD, nn[i] = dd, j
			}
		}
	}
	return nn
}

// kernelOf returns a GP surrogate's prior covariance of two points (a
// constant for another model).
func kernelOf(m *fitted) func(a, b []float64) float64 {
	switch g := m.model.(type) {
	case *gp.GP:
		return g.KernelValue
	case *gp.Subset:
		mean, _ := g.Parts()
		return mean.KernelValue
	}
	return func(a, b []float64) float64 { return 0 }
}

// lengthscalesOf returns a GP surrogate's lengthscales (nil for another
// model).
func lengthscalesOf(m *fitted) []float64 {
	switch g := m.model.(type) {
	case *gp.GP:
		return g.Hyper().Lengthscales
	case *gp.Subset:
		return g.Hyper().Lengthscales
	}
	return nil
}

// outliersText says in words which trials were left out and why.
func (c *cleaning) outliersText() string {
	if c.heavy {
		return fmt.Sprintf("%d trials have values far beyond the bulk of the others (more than %.0f%% of them): "+
			"too many to be failed runs, so the explanations keep them", c.flagged, 100*maxOutlierFraction)
	}
	if c.plateau != nil {
		return fmt.Sprintf("%d trials have values far beyond the bulk of the others, and %.6g repeats exactly among them: "+
			"a plateau of the objective (a saturated metric), which the explanations keep", c.flagged, *c.plateau)
	}
	if c.region != nil {
		what := "they are each other's nearest trials more often than chance allows"
		switch {
		case c.region.Param != "":
			what = fmt.Sprintf("their %s differs from the other trials'", c.region.Param)
		case c.region.Box:
			what = "a box of at most two parameters' ranges holds them apart from the other trials"
		}
		return fmt.Sprintf("%d trials have values far beyond the bulk of the others, and %s (permutation p = %.2g): "+
			"a region where runs fail, which the explanations keep as part of the objective", c.flagged, what, c.region.PValue)
	}
	var kept string
	if len(c.corroborated) > 0 {
		parts := make([]string, len(c.corroborated))
		for k, b := range c.corroborated {
			parts[k] = fmt.Sprintf("trial %d's value (%.4g) is far beyond the bulk of the others but kept: without it the model "+
				"cannot explain trial %d's %.4g, a bad value that is not extreme (a region where runs fail, which the explanations "+
				"keep as part of the objective)", b.Trial, b.Value, b.By, b.ByValue)
		}
		kept = strings.Join(parts, "; ")
	}
	if len(c.outliers) == 0 {
		return kept
	}
	if kept != "" {
		kept = "; " + kept
	}
	parts := make([]string, len(c.outliers))
	for k, o := range c.outliers {
		parts[k] = fmt.Sprintf("trial %d (%.4g, where the other trials predict %.4g ± %.2g)", o.Trial, o.Value, o.Predicted, o.SD)
	}
	if len(parts) == 1 {
		return fmt.Sprintf("%s is left out as a probable failed or diverged run: its value is far worse than the others predict "+
			"at its configuration and beyond the bulk of all values; keep it with outliers=keep%s", parts[0], kept)
	}
	return fmt.Sprintf("%s are left out as probable failed or diverged runs: their values are far worse than the others predict "+
		"at their configurations and beyond the bulk of all values; keep them with outliers=keep%s", strings.Join(parts, ", "), kept)
}
