// Package gp is Gaussian-process regression for Bayesian optimization over
// unit-cube encodings of search spaces (package space).
//
// The model and its formulas follow Rasmussen & Williams, "Gaussian Processes
// for Machine Learning" (2006), cited below as R&W:
//
//   - prior f ~ GP(0, k) on standardized outputs (y − mean)/std, with
//     k(a, b) = σ_f² · g(r), g the squared-exponential or Matérn correlation
//     (R&W eq. 4.9, 4.17) and r² an ARD distance with one lengthscale per
//     dimension; observations y = f + ε, ε ~ N(0, σ_n²);
//   - posterior mean k*ᵀ(K+σ_n²I)⁻¹y and variance k(x,x) − k*ᵀ(K+σ_n²I)⁻¹k*
//     through the Cholesky factor (R&W Algorithm 2.1);
//   - hyperparameters (log ℓ_j, log σ_f², log σ_n²) maximize the log marginal
//     likelihood −½yᵀα − ½log|K+σ_n²I| − (n/2)log 2π (R&W eq. 5.8) whose
//     gradient is ½ tr((ααᵀ − (K+σ_n²I)⁻¹) ∂K/∂θ) (R&W eq. 5.9), with L-BFGS
//     (gonum optimize) from several starts.
//
// Categorical dimensions add 1{levels differ}/ℓ_j² to r² (a scaled one-hot
// embedding, so the kernels stay positive definite); a switched-off
// conditional parameter (space.Inactive = −1) is a value of its own.
//
// The average-variance form 1ᵀK̂1/n² used for partial dependence bands is
// eq. 4 of Moosbauer et al. 2021, "Explaining hyperparameter optimization via
// partial dependence plots"); it is computed without
// forming the n×n posterior covariance.
//
// For acquisition search the GP also gives the gradients of the posterior
// mean and variance in the test point (PredictGradient: R&W eq. 2.25–2.26
// differentiated in x_*) and, for the cost of the mean alone, an upper bound
// on the variance (PredictBound): the posterior given the few observations
// most correlated with the point, which can only be larger than the
// posterior given all of them.
//
// Hyperparameters (type Hyper) live in standardized-output units; every
// prediction, covariance, sample and noise variance the GP returns is in the
// objective's own units. Variances are of the latent f, without noise.
package gp
