package explain

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"xbo/gp"
	"xbo/history"
)

// Corroboration: whether a far-out candidate alone explains another bad
// value (see "Outliers" in robust.go).

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
