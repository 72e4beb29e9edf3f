// Package shapley explains single configurations of a search space, above all
// the proposals of a Bayesian optimizer, by Shapley values (ShapleyMBO,
// Croppi 2021, "Explaining sequential model-based optimization", master's
// thesis, LMU Munich).
//
// Players are the hyperparameters. For an explicand θ̃ the worth of a
// coalition S is the conditional-expectation game under independence
// (eq. 7 of the thesis)
//
//	v(S) = (1/n) Σ_i f(θ̃_S, z⁽ⁱ⁾_{−S}),
//
// with z⁽ⁱ⁾ a background sample (by default 1000·p Latin-hypercube points,
// uniform over the space, as in Algorithm 3 of the thesis), and the Shapley
// value of parameter j is eq. 6,
//
//	φ_j = Σ_{S ⊆ P∖{j}} |S|!(p−1−|S|)!/p! · [v(S ∪ {j}) − v(S)].
//
// Three estimators are offered:
//
//   - Exact: every one of the 2^p coalitions is evaluated over the whole
//     background (default up to p = 12). Efficiency, Σ_j φ_j = f(θ̃) − v(∅),
//     holds to rounding.
//   - MonteCarlo: the permutation estimator of Štrumbelj and Kononenko
//     (thesis Algorithm 2): for each parameter j, K independent draws of a
//     background point z and an order π give f(θ̃_{+j}) − f(θ̃_{−j}); the mean
//     is φ̂_j, the standard error σ̂_j/√K and the interval uses the t quantile
//     with K−1 degrees of freedom (section 5.2). Because every parameter has
//     its own draws, Σ_j φ̂_j differs from the payout, and checkSampleSize
//     (appendix C, Algorithm 4) accepts K once that efficiency error is below
//     the smallest gap between two parameters' values, for every output.
//   - Baseline: Baseline Shapley (Sundararajan and Najmi; thesis section 8),
//     v(S) = f(θ̃_S, θ'_{−S}) with one baseline configuration θ' (a default
//     or the incumbent): the exact estimator over a one-point background.
//
// A local background (points drawn in a box of given radius around θ̃ in the
// unit cube, thesis section 8) replaces the global sample when asked.
//
// ShapleyMBO (Algorithm 3): for the lower confidence bound cb = m̂ − τ·ŝ the
// function LCB evaluates m̂, ŝ and cb at the same points, so every estimator
// gives φ(m), φ(se) and φ(cb) from shared samples and the linearity axiom
// φ(cb) = φ(m) − τ·φ(se) (eq. 8) holds up to rounding; the payouts are
// P(v) = v̂(θ̃) − v̄ (eq. 9). Other acquisitions (EI, PI, information gain) are
// explained as the acquisition value itself (function Acquisition).
//
// Conditional parameters. A coalition mixes θ̃ and z coordinate by
// coordinate, which can produce configurations no valid point has: a parent
// taken from z may switch on a child that θ̃ has switched off (its coordinate
// is space.Inactive), or the reverse. We resolve the hybrid in topological
// order: a parameter whose parent (as resolved) switches it off is Inactive;
// a parameter that is on but whose own source has no value for it takes the
// value of the source its parent's value came from, which always has one.
// Consequences, both tested: a parameter that is inactive in θ̃ adds nothing
// to any coalition and gets φ = 0 (the effect of switching it off is
// credited to the parent that switched it off); and every hybrid point is a
// valid configuration, so the surrogate is never asked about impossible ones.
//
// Comparisons (thesis section 3): ablation analysis (Fawcett and Hoos 2016,
// greedy flips from a source to a target on the surrogate, eq. 3), local
// parameter importance (Biedenkapp et al. 2018, eq. 2: the variance of f
// along each dimension through θ̃, normalised) and Friedman and Popescu's
// H-statistic for pairs (2008, eq. 44).
//
// Functions passed to the estimators must be safe for concurrent use when
// Options.Workers > 1: the points of a coalition or of a batch of Monte Carlo
// draws are evaluated in one batched call, and batches run in parallel.
package shapley
