package pdp_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"xbo/surrogate"
)

// blr is Bayesian linear regression f(x) = wᵀφ(x), w ~ N(0, τ²I), with
// Gaussian noise σ²: a surrogate whose posterior mean, covariance and average
// variance are closed forms, so the PDP code can be checked by hand.
// Features: 1, x_j, x_j², and x_0·x_1.
type blr struct {
	dim   int
	mu    *mat.VecDense
	sigma *mat.SymDense // posterior covariance of w
}

func features(x []float64) []float64 {
	f := []float64{1}
	for _, v := range x {
		f = append(f, v, v*v)
	}
	if len(x) >= 2 {
		f = append(f, x[0]*x[1])
	}
	return f
}

func fitBLR(x [][]float64, y []float64, noise, prior float64) (*blr, error) {
	p := len(features(x[0]))
	phi := mat.NewDense(len(x), p, nil)
	for i, row := range x {
		phi.SetRow(i, features(row))
	}
	// Posterior precision A = ΦᵀΦ/σ² + I/τ², mean A⁻¹Φᵀy/σ².
	var a mat.SymDense
	a.SymOuterK(1/(noise*noise), phi.T())
	for k := range p {
		a.SetSym(k, k, a.At(k, k)+1/(prior*prior))
	}
	var chol mat.Cholesky
	if !chol.Factorize(&a) {
		return nil, fmt.Errorf("blr: posterior precision not positive definite")
	}
	var sigma mat.SymDense
	if err := chol.InverseTo(&sigma); err != nil {
		return nil, err
	}
	var rhs mat.VecDense
	rhs.MulVec(phi.T(), mat.NewVecDense(len(y), y))
	rhs.ScaleVec(1/(noise*noise), &rhs)
	var mu mat.VecDense
	mu.MulVec(&sigma, &rhs)
	return &blr{dim: len(x[0]), mu: &mu, sigma: &sigma}, nil
}

func (m *blr) Dim() int { return m.dim }

func (m *blr) Predict(x [][]float64, mean, variance []float64) error {
	if err := surrogate.CheckPoints(m.dim, x, mean, variance); err != nil {
		return err
	}
	for i, row := range x {
		f := mat.NewVecDense(len(features(row)), features(row))
		mean[i] = mat.Dot(f, m.mu)
		variance[i] = mat.Inner(f, m.sigma, f)
	}
	return nil
}

// AverageVariance is φ̄ᵀΣφ̄ with φ̄ the mean feature vector: the variance of
// the mean of f over the points, without any n×n matrix.
func (m *blr) AverageVariance(points [][]float64) (float64, error) {
	if err := surrogate.CheckPoints(m.dim, points); err != nil {
		return 0, err
	}
	p := m.mu.Len()
	bar := make([]float64, p)
	for _, row := range points {
		for k, v := range features(row) {
			bar[k] += v / float64(len(points))
		}
	}
	f := mat.NewVecDense(p, bar)
	return mat.Inner(f, m.sigma, f), nil
}

func (m *blr) Covariance(a, b [][]float64) (*mat.Dense, error) {
	p := m.mu.Len()
	fa := mat.NewDense(len(a), p, nil)
	for i, row := range a {
		fa.SetRow(i, features(row))
	}
	fb := mat.NewDense(len(b), p, nil)
	for i, row := range b {
		fb.SetRow(i, features(row))
	}
	var tmp, out mat.Dense
	tmp.Mul(fa, m.sigma)
	out.Mul(&tmp, fb.T())
	return &out, nil
}

var (
	_ surrogate.AverageVariancer = (*blr)(nil)
	_ surrogate.Covariancer      = (*blr)(nil)
)

// quadratic is the test objective on [0,1]³ (unit coordinates), in the span
// of the features: f = 2 + 3x₀ − 2x₁ + x₀x₁ + 1.5x₀² + x₂². Its partial
// dependence on x₀ under the uniform distribution is closed form:
// 2 + 3x₀ − 1 + 0.5x₀ + 1.5x₀² + 1/3.
func quadratic(x []float64) float64 {
	return 2 + 3*x[0] - 2*x[1] + x[0]*x[1] + 1.5*x[0]*x[0] + x[2]*x[2]
}

func quadraticPD0(a float64) float64 { return 2 + 3.5*a - 1 + 1.5*a*a + 1.0/3 }

func uniformData(rng *rand.Rand, n, d int, noise float64, f func([]float64) float64) ([][]float64, []float64) {
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = rng.Float64()
		}
		y[i] = f(x[i]) + noise*rng.NormFloat64()
	}
	return x, y
}

// funcModel has a mean and variance given by functions; for checks where
// the posterior need not be coherent.
type funcModel struct {
	dim  int
	mean func([]float64) float64
	vari func([]float64) float64
}

func (m funcModel) Dim() int { return m.dim }
func (m funcModel) Predict(x [][]float64, mean, variance []float64) error {
	if err := surrogate.CheckPoints(m.dim, x, mean, variance); err != nil {
		return err
	}
	for i, row := range x {
		mean[i], variance[i] = m.mean(row), m.vari(row)
	}
	return nil
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }
