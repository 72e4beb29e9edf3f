package shapley

import (
	"errors"
	"fmt"
	"math"

	"xbo/acq"
	"xbo/surrogate"
)

// Function is a batched, possibly vector-valued function of configurations in
// the unit-cube encoding: Eval writes output o at point i into out[o][i].
// Evaluating all outputs from one call is what lets m̂, ŝ and cb share their
// samples.
type Function interface {
	// Dim is the number of coordinates of a point.
	Dim() int
	// Outputs names the outputs, in the order of out.
	Outputs() []string
	// Eval evaluates every row of x; out has len(Outputs()) slices of len(x).
	Eval(x [][]float64, out [][]float64) error
}

// Output names of the LCB function (and of the CLI's JSON).
const (
	OutputMean = "mean"
	OutputSE   = "se"
	OutputCB   = "cb"
)

type scalarFunc struct {
	name string
	dim  int
	f    func(x [][]float64, out []float64) error
}

// NewFunc wraps a batched scalar function f of dim coordinates as a Function
// with one output called name.
func NewFunc(name string, dim int, f func(x [][]float64, out []float64) error) (Function, error) {
	if f == nil {
		return nil, errors.New("shapley: nil function")
	}
	if dim < 1 {
		return nil, fmt.Errorf("shapley: dimension %d must be at least 1", dim)
	}
	if name == "" {
		name = "f"
	}
	return &scalarFunc{name: name, dim: dim, f: f}, nil
}

func (s *scalarFunc) Dim() int          { return s.dim }
func (s *scalarFunc) Outputs() []string { return []string{s.name} }
func (s *scalarFunc) Eval(x [][]float64, out [][]float64) error {
	return s.f(x, out[0])
}

// LCBFunc evaluates a surrogate's posterior mean m̂, standard deviation ŝ and
// confidence bound at the same points: the lower bound cb = m̂ − τ·ŝ of
// Croppi 2021 (definition 3) when the objective is minimized, and the upper
// bound cb = m̂ + τ·ŝ when it is maximized, so that in both cases cb is the
// optimistic value an optimizer chases and φ(cb) = φ(m) + w·φ(se) with the
// exploration weight w = ∓τ (SEWeight). Its outputs are "mean", "se" and "cb".
type LCBFunc struct {
	Model surrogate.Model
	Tau   float64
	// Maximize selects the upper bound m̂ + τ·ŝ.
	Maximize bool
	// NoiseVariance σ_n² ≥ 0, when set, makes ŝ the sd of a new observation,
	// √(v + σ_n²), instead of the latent √v: mlrMBO's convention, whose
	// DiceKriging learner predicts with the nugget (Croppi 2021's se).
	NoiseVariance float64
}

// SEWeight is the coefficient of ŝ in cb: −τ for the lower bound, +τ for the
// upper bound.
func (l *LCBFunc) SEWeight() float64 {
	if l.Maximize {
		return l.Tau
	}
	return -l.Tau
}

// Formula writes cb in symbols, for captions.
func (l *LCBFunc) Formula() string {
	f := "cb = m − τ·s"
	if l.Maximize {
		f = "cb = m + τ·s"
	}
	if l.NoiseVariance > 0 {
		f += ", s the sd of an observation (noise included)"
	}
	return f
}

// ConfidenceBound returns the ShapleyMBO function of a surrogate in the
// objective's own direction: the lower bound when minimizing, the upper bound
// when maximizing (τ ≥ 0).
func ConfidenceBound(model surrogate.Model, tau float64, maximize bool) (*LCBFunc, error) {
	f, err := LCB(model, tau)
	if err != nil {
		return nil, err
	}
	f.Maximize = maximize
	return f, nil
}

// LCB returns the ShapleyMBO function of a surrogate for a given τ ≥ 0: the
// lower confidence bound of a minimized objective.
func LCB(model surrogate.Model, tau float64) (*LCBFunc, error) {
	if model == nil {
		return nil, errors.New("shapley: lcb: nil surrogate")
	}
	if model.Dim() < 1 {
		return nil, fmt.Errorf("shapley: lcb: surrogate dimension %d", model.Dim())
	}
	if !(tau >= 0) || math.IsInf(tau, 0) {
		return nil, fmt.Errorf("shapley: lcb: tau must be finite and ≥ 0, got %v", tau)
	}
	return &LCBFunc{Model: model, Tau: tau}, nil
}

// Dim implements Function.
func (l *LCBFunc) Dim() int { return l.Model.Dim() }

// Outputs implements Function.
func (l *LCBFunc) Outputs() []string { return []string{OutputMean, OutputSE, OutputCB} }

// Eval implements Function.
func (l *LCBFunc) Eval(x [][]float64, out [][]float64) error {
	mean, se, cb := out[0], out[1], out[2]
	w := l.SEWeight()
	if !(l.NoiseVariance >= 0) || math.IsInf(l.NoiseVariance, 0) {
		return fmt.Errorf("shapley: noise variance %v, want finite and ≥ 0", l.NoiseVariance)
	}
	// The variance goes into the cb slot first and is consumed in place.
	if err := l.Model.Predict(x, mean, cb); err != nil {
		return fmt.Errorf("shapley: surrogate: %w", err)
	}
	for i := range x {
		v := cb[i]
		if math.IsNaN(v) || math.IsNaN(mean[i]) {
			return fmt.Errorf("shapley: surrogate predicted NaN at point %d", i)
		}
		// Round-off in k(x,x) − kᵀK⁻¹k may go slightly below zero.
		se[i] = math.Sqrt(math.Max(v, 0) + l.NoiseVariance)
		cb[i] = mean[i] + w*se[i]
	}
	return nil
}

type acqFunc struct {
	model surrogate.Model
	a     acq.Acquisition
}

// Acquisition explains an acquisition function's value itself (EI, PI, PVAR,
// information gain, ...): its one output is named after the acquisition.
// Scores are utilities, higher is better (package acq).
func Acquisition(model surrogate.Model, a acq.Acquisition) (Function, error) {
	if model == nil || a == nil {
		return nil, errors.New("shapley: acquisition: nil surrogate or acquisition")
	}
	if model.Dim() < 1 {
		return nil, fmt.Errorf("shapley: acquisition: surrogate dimension %d", model.Dim())
	}
	return &acqFunc{model: model, a: a}, nil
}

func (f *acqFunc) Dim() int          { return f.model.Dim() }
func (f *acqFunc) Outputs() []string { return []string{f.a.Name()} }
func (f *acqFunc) Eval(x [][]float64, out [][]float64) error {
	if err := f.a.Score(f.model, x, out[0]); err != nil {
		return fmt.Errorf("shapley: %w", err)
	}
	return nil
}

// evalChecked calls f and refuses non-finite results, which would silently
// poison every Shapley value they enter.
func evalChecked(f Function, x [][]float64, out [][]float64) error {
	if err := f.Eval(x, out); err != nil {
		return err
	}
	for o := range out {
		for i, v := range out[o][:len(x)] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("shapley: output %q is %v at point %d", f.Outputs()[o], v, i)
			}
		}
	}
	return nil
}
