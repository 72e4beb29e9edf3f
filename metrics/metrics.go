// Package metrics scores explanations and optimizer runs.
//
// The PDP metrics follow Moosbauer et al. 2021, "Explaining Hyperparameter
// Optimization via Partial Dependence Plots" (section 6): mean confidence MC =
// (1/G)·Σ_g ŝ_S(λ_S^g), optimum confidence OC = ŝ_S at the grid point nearest
// the best configuration, the negative log-likelihood of the true PD under N(φ̂,
// ŝ_S²) averaged over the grid, and the relative improvement δ = (global −
// regional)/|global| of a regional PDP over the global one. The L1 PDP error is
// (1/G)·Σ_g |φ̂(g) − φ(g)| as in Moosbauer et al. 2022 (BOBAX, "Improving
// accuracy of interpretability measures in hyperparameter optimization via
// Bayesian algorithm execution"). Sampling bias is measured by the maximum mean
// discrepancy of Gretton et al. 2012 (the reference of Moosbauer et al. 2021 for
// MMD) with a Gaussian kernel.
package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

func checkFinite(name string, xs []float64) error {
	if len(xs) == 0 {
		return fmt.Errorf("%s is empty", name)
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s[%d] = %v is not finite", name, i, x)
		}
	}
	return nil
}

func checkSameLen(a, b []float64, an, bn string) error {
	if len(a) != len(b) {
		return fmt.Errorf("%s has %d entries, %s has %d", an, len(a), bn, len(b))
	}
	return nil
}

// MC is the mean confidence: the mean of the PD standard deviations over the
// grid.
func MC(sd []float64) (float64, error) {
	if err := checkFinite("sd", sd); err != nil {
		return 0, fmt.Errorf("metrics: MC: %w", err)
	}
	s := 0.0
	for _, v := range sd {
		if v < 0 {
			return 0, fmt.Errorf("metrics: MC: negative standard deviation %v", v)
		}
		s += v
	}
	return s / float64(len(sd)), nil
}

// OC is the optimum confidence: sd at the grid point nearest best. Grid and
// best must be on the same scale (use the unit encoding so that log
// parameters are compared on their own scale).
func OC(grid, sd []float64, best float64) (float64, error) {
	if err := checkSameLen(grid, sd, "grid", "sd"); err != nil {
		return 0, fmt.Errorf("metrics: OC: %w", err)
	}
	if err := checkFinite("grid", grid); err != nil {
		return 0, fmt.Errorf("metrics: OC: %w", err)
	}
	if math.IsNaN(best) {
		return 0, errors.New("metrics: OC: best value is NaN")
	}
	k := 0
	for g := range grid {
		if math.Abs(grid[g]-best) < math.Abs(grid[k]-best) {
			k = g
		}
	}
	return sd[k], nil
}

// NLL is the mean over grid points of −log N(truth_g; mean_g, sd_g²), the
// paper's pointwise reliability of a PD estimate. A zero sd with a
// mismatching truth gives +Inf, which is what that estimate deserves.
func NLL(truth, mean, sd []float64) (float64, error) {
	if err := checkSameLen(truth, mean, "truth", "mean"); err != nil {
		return 0, fmt.Errorf("metrics: NLL: %w", err)
	}
	if err := checkSameLen(truth, sd, "truth", "sd"); err != nil {
		return 0, fmt.Errorf("metrics: NLL: %w", err)
	}
	for _, c := range []struct {
		n string
		v []float64
	}{{"truth", truth}, {"mean", mean}, {"sd", sd}} {
		if err := checkFinite(c.n, c.v); err != nil {
			return 0, fmt.Errorf("metrics: NLL: %w", err)
		}
	}
	s := 0.0
	for g := range truth {
		if sd[g] < 0 {
			return 0, fmt.Errorf("metrics: NLL: negative standard deviation %v", sd[g])
		}
		z := (truth[g] - mean[g]) / sd[g]
		if sd[g] == 0 {
			if truth[g] == mean[g] {
				return math.Inf(-1), nil
			}
			return math.Inf(1), nil
		}
		s += 0.5*math.Log(2*math.Pi) + math.Log(sd[g]) + 0.5*z*z
	}
	return s / float64(len(truth)), nil
}

// L1 is the mean absolute difference between an estimated and a true PD on
// the same grid.
func L1(estimate, truth []float64) (float64, error) {
	if err := checkSameLen(estimate, truth, "estimate", "truth"); err != nil {
		return 0, fmt.Errorf("metrics: L1: %w", err)
	}
	if err := checkFinite("estimate", estimate); err != nil {
		return 0, fmt.Errorf("metrics: L1: %w", err)
	}
	if err := checkFinite("truth", truth); err != nil {
		return 0, fmt.Errorf("metrics: L1: %w", err)
	}
	s := 0.0
	for g := range truth {
		s += math.Abs(estimate[g] - truth[g])
	}
	return s / float64(len(truth)), nil
}

// RelativeImprovement is δ = (global − regional)/|global|: the fraction by
// which a regional metric (MC, OC, NLL; smaller is better) improves on the
// global one. NLL may be negative, hence the absolute value.
func RelativeImprovement(global, regional float64) (float64, error) {
	if math.IsNaN(global) || math.IsNaN(regional) || math.IsInf(global, 0) || math.IsInf(regional, 0) {
		return 0, fmt.Errorf("metrics: relative improvement: values must be finite (global %v, regional %v)", global, regional)
	}
	if global == 0 {
		return 0, errors.New("metrics: relative improvement: global value is zero")
	}
	return (global - regional) / math.Abs(global), nil
}

// Spearman is the rank correlation of x and y, with tied values given their
// average rank. It is NaN-free: constant inputs are an error.
func Spearman(x, y []float64) (float64, error) {
	if err := checkPairs(x, y); err != nil {
		return 0, fmt.Errorf("metrics: Spearman: %w", err)
	}
	rx, ry := ranks(x), ranks(y)
	mx, my := mean(rx), mean(ry)
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, errors.New("metrics: Spearman: an input is constant")
	}
	return sxy / math.Sqrt(sxx*syy), nil
}

// checkPairs checks the pairs (x[i], y[i]) of a correlation: as many of
// each, at least two, all finite.
func checkPairs(x, y []float64) error {
	if err := checkSameLen(x, y, "x", "y"); err != nil {
		return err
	}
	if len(x) < 2 {
		return errors.New("need at least two pairs")
	}
	if err := checkFinite("x", x); err != nil {
		return err
	}
	return checkFinite("y", y)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func ranks(xs []float64) []float64 {
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return xs[order[a]] < xs[order[b]] })
	r := make([]float64, len(xs))
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && xs[order[end]] == xs[order[start]] {
			end++
		}
		avg := float64(start+end-1)/2 + 1
		for k := start; k < end; k++ {
			r[order[k]] = avg
		}
		start = end
	}
	return r
}

// MMD is the maximum mean discrepancy between the samples x and y with the
// Gaussian kernel k(a,b) = exp(−‖a−b‖²/(2σ²)): the square root of the biased
// (V-statistic) estimate MMD²_b of Gretton et al. 2012, eq. 5, which is
// always defined and non-negative. Pass points in the unit-cube encoding so
// every parameter counts on its own scale; bandwidth σ must be positive (see
// MedianBandwidth and UniformBandwidth).
func MMD(x, y [][]float64, bandwidth float64) (float64, error) {
	ref, err := NewMMDReference(y, bandwidth)
	if err != nil {
		return 0, err
	}
	return ref.Distance(x)
}

// MMDReference is one sample y with its kernel self-term computed once, for
// the MMD of many samples against the same reference (a null distribution).
type MMDReference struct {
	y     [][]float64
	gamma float64
	self  float64 // mean k(y, y')
}

// NewMMDReference validates the reference sample and the bandwidth and
// computes the reference's self-term.
func NewMMDReference(y [][]float64, bandwidth float64) (*MMDReference, error) {
	if len(y) == 0 {
		return nil, errors.New("metrics: MMD: both samples must be non-empty")
	}
	if !(bandwidth > 0) || math.IsInf(bandwidth, 0) {
		return nil, fmt.Errorf("metrics: MMD: bandwidth %v must be positive and finite", bandwidth)
	}
	if err := checkSample(y, len(y[0])); err != nil {
		return nil, err
	}
	r := &MMDReference{y: y, gamma: 1 / (2 * bandwidth * bandwidth)}
	r.self = r.selfMean(y)
	return r, nil
}

func checkSample(x [][]float64, d int) error {
	for i, row := range x {
		if len(row) != d {
			return fmt.Errorf("metrics: MMD: point %d has %d coordinates, want %d", i, len(row), d)
		}
		if err := checkFinite("point", row); err != nil {
			return fmt.Errorf("metrics: MMD: %w", err)
		}
	}
	return nil
}

// selfMean is the mean of k over all ordered pairs of a, using symmetry.
func (r *MMDReference) selfMean(a [][]float64) float64 {
	s := float64(len(a)) // the diagonal, k(p, p) = 1
	for i, p := range a {
		for _, q := range a[i+1:] {
			s += 2 * math.Exp(-r.gamma*sqDist(p, q))
		}
	}
	return s / float64(len(a)*len(a))
}

// Distance is the MMD between x and the reference.
func (r *MMDReference) Distance(x [][]float64) (float64, error) {
	m2, err := r.Squared(x)
	if err != nil {
		return 0, err
	}
	return math.Sqrt(m2), nil
}

// Squared is the biased estimate MMD²_b between x and the reference,
// clamped at zero against rounding.
func (r *MMDReference) Squared(x [][]float64) (float64, error) {
	if len(x) == 0 {
		return 0, errors.New("metrics: MMD: both samples must be non-empty")
	}
	if err := checkSample(x, len(r.y[0])); err != nil {
		return 0, err
	}
	cross := 0.0
	for _, p := range x {
		for _, q := range r.y {
			cross += math.Exp(-r.gamma * sqDist(p, q))
		}
	}
	cross /= float64(len(x) * len(r.y))
	return math.Max(r.selfMean(x)+r.self-2*cross, 0), nil
}

// MMD2Median is the sampling-bias measure of the public code of Moosbauer et
// al. 2021 (github.com/slds-lmu/paper_2021_xautoml,
// benchmarks/helper_evaluation.R, mmd2): the biased MMD²_b of Gretton et al.
// 2012 with the Gaussian kernel exp(−‖a−b‖²/(2σ²)), σ the median Euclidean
// distance within the pooled sample (MedianBandwidth; kernlab's rbfdot with
// sigma = 1/(2σ²)), every kernel mean taken over all pairs, the diagonal
// included. The authors compare a run's evaluations with a uniform sample of
// the same size and report the square root's mean over runs. The median
// bandwidth makes the value invariant to a common rescaling of all
// coordinates, so points in the unit cube give the code's value on a box
// whose sides are all equally long.
func MMD2Median(x, y [][]float64) (float64, error) {
	if len(x) == 0 || len(y) == 0 {
		return 0, errors.New("metrics: MMD: both samples must be non-empty")
	}
	sigma, err := MedianBandwidth(x, y)
	if err != nil {
		return 0, err
	}
	ref, err := NewMMDReference(y, sigma)
	if err != nil {
		return 0, err
	}
	return ref.Squared(x)
}

func sqDist(a, b []float64) float64 {
	s := 0.0
	for j := range a {
		d := a[j] - b[j]
		s += d * d
	}
	return s
}

// MedianBandwidth is the median heuristic: the median Euclidean distance
// between the points of the pooled sample.
func MedianBandwidth(x, y [][]float64) (float64, error) {
	pool := append(slices.Clone(x), y...)
	if len(pool) < 2 {
		return 0, errors.New("metrics: median bandwidth: need at least two points")
	}
	var ds []float64
	for i := range pool {
		for j := i + 1; j < len(pool); j++ {
			if len(pool[i]) != len(pool[j]) {
				return 0, errors.New("metrics: median bandwidth: points differ in dimension")
			}
			ds = append(ds, math.Sqrt(sqDist(pool[i], pool[j])))
		}
	}
	slices.Sort(ds)
	m := ds[len(ds)/2]
	if len(ds)%2 == 0 {
		m = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
	}
	if m == 0 {
		return 0, errors.New("metrics: median bandwidth: all points coincide")
	}
	return m, nil
}

// UniformBandwidth is √(d/6), the root mean squared distance between two
// independent uniform points of [0,1]^d. A fixed bandwidth keeps MMD values
// comparable across runs and samplers, which the median heuristic does not.
func UniformBandwidth(d int) float64 { return math.Sqrt(float64(d) / 6) }

// SimpleRegret is best − optimum for minimization (values are minimized).
func SimpleRegret(values []float64, optimum float64) (float64, error) {
	if err := checkFinite("values", values); err != nil {
		return 0, fmt.Errorf("metrics: regret: %w", err)
	}
	return slices.Min(values) - optimum, nil
}
