package explain

import (
	"fmt"
	"math"
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
