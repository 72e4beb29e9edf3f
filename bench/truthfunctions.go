package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"xbo/space"
)

// The synthetic problems of the truth catalogue. Definitions follow the
// Virtual Library of Simulation Experiments by S. Surjanovic and D. Bingham,
// Simon Fraser University (https://www.sfu.ca/~ssurjano/), where a problem
// comes from there; the page is named in each constructor's comment.
// Problems whose function is a sum of products of one-dimensional factors
// (type separable) have exact truths; the others are estimated.

// truthSynthetic builds the synthetic problems in catalogue order.
func truthSynthetic() ([]*TruthProblem, error) {
	builders := []func() (*TruthProblem, error){
		truthAckley5, truthLevy4, truthMichalewicz3, truthRastrigin4, truthLogRosenbrock3, truthGenzPeak4,
		truthHartmann3Inert, truthHartmann3Weak, truthTraining4, truthStaircase4, truthDiverging4,
		truthMixed5, truthAckley10, truthBumps10,
	}
	out := make([]*TruthProblem, 0, len(builders))
	for _, b := range builders {
		p, err := b()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// separableProblem is a problem on float parameters whose function is
// separable, with its exact PD and indices.
func separableProblem(name string, heldOut bool, tags []string, dir space.Direction, params []space.Param,
	c float64, terms []sepTerm, breaks [][]float64) (*TruthProblem, error) {
	sep, err := newSeparable(params, c, terms, breaks)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", name, err)
	}
	sp, err := space.New(dir, params)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", name, err)
	}
	main, total, err := sep.indices()
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", name, err)
	}
	return &TruthProblem{Name: name, HeldOut: heldOut, Tags: tags, Space: sp, Eval: sep.eval, PD: sep.pd, Main: main, Total: total}, nil
}

// estimatedProblem is a problem whose truths are estimated.
func estimatedProblem(name string, heldOut bool, tags []string, params []space.Param, eval func([]float64) float64) (*TruthProblem, error) {
	sp, err := space.New(space.Minimize, params)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", name, err)
	}
	d := len(params)
	return &TruthProblem{Name: name, HeldOut: heldOut, Tags: tags, Space: sp, Eval: func(x []float64) float64 {
		if len(x) != d {
			return math.NaN()
		}
		return eval(x)
	}}, nil
}

// ackley is Ackley's function (ackley.html; a = 20, b = 0.2, c = 2π) of
// x − shift.
func ackley(x, shift []float64) float64 {
	var s2, sc float64
	for j, v := range x {
		z := v - shift[j]
		s2 += z * z
		sc += math.Cos(2 * math.Pi * z)
	}
	d := float64(len(x))
	return -20*math.Exp(-0.2*math.Sqrt(s2/d)) - math.Exp(sc/d) + 20 + math.E
}

// truthAckley5 is Ackley's function (ackley.html) in d = 5 on the library's
// domain [−32.768, 32.768]^5: a plateau with a ripple of about 65 periods
// per coordinate and a narrow well at 0. Its PDs are nearly flat ripples
// that no data set of this size resolves. Truths estimated.
func truthAckley5() (*TruthProblem, error) {
	shift := make([]float64, 5)
	return estimatedProblem("ackley-5", false, []string{TagRough}, floatParams(5, -32.768, 32.768),
		func(x []float64) float64 { return ackley(x, shift) })
}

// truthAckley10 is Ackley's function (ackley.html) in d = 10 on the
// restricted domain [−5, 5]^10 that the library mentions, with its optimum
// moved from 0 to shift so that the coordinates differ. Truths estimated.
func truthAckley10() (*TruthProblem, error) {
	shift := []float64{1.7, -2.3, 0.6, 3.1, -0.9, 2.2, -3.4, 0.3, -1.6, 2.8}
	return estimatedProblem("ackley-10", false, []string{TagRough, TagHighD}, floatParams(10, -5, 5),
		func(x []float64) float64 { return ackley(x, shift) })
}

// truthLevy4 is the Levy function (levy.html) in d = 4 on [−10, 10]^4:
// with w = 1 + (x − 1)/4,
//
//	f = sin²(πw₁) + Σ_{i<d} (w_i − 1)²[1 + 10 sin²(πw_i + 1)] + (w_d − 1)²[1 + sin²(2πw_d)],
//
// additive (each bracket depends on its own w_i), so the truths are exact.
func truthLevy4() (*TruthProblem, error) {
	w := func(x float64) float64 { return 1 + (x-1)/4 }
	sq := func(v float64) float64 { return v * v }
	mid := func(x float64) float64 { return sq(w(x)-1) * (1 + 10*sq(math.Sin(math.Pi*w(x)+1))) }
	h := []func(float64) float64{
		func(x float64) float64 { return sq(math.Sin(math.Pi*w(x))) + mid(x) },
		mid, mid,
		func(x float64) float64 { return sq(w(x)-1) * (1 + sq(math.Sin(2*math.Pi*w(x)))) },
	}
	return separableProblem("levy-4", false, []string{TagRough}, space.Minimize, floatParams(4, -10, 10), 0, additiveTerms(h), nil)
}

// truthMichalewicz3 is the Michalewicz function (michal.html) in d = 3 with
// m = 10 on [0, π]³: f = −Σ_i sin(x_i) sin^{2m}(i x_i²/π), steep narrow
// ridges that sharpen with i. Additive: exact truths.
func truthMichalewicz3() (*TruthProblem, error) {
	h := make([]func(float64) float64, 3)
	for i := range h {
		ii := float64(i + 1)
		h[i] = func(x float64) float64 { return -math.Sin(x) * math.Pow(math.Sin(ii*x*x/math.Pi), 20) }
	}
	return separableProblem("michalewicz-3", true, []string{TagRough}, space.Minimize, floatParams(3, 0, math.Pi), 0, additiveTerms(h), nil)
}

// truthRastrigin4 is a weighted Rastrigin function (rastr.html, each term
// weighted by a_j = 1, 0.6, 0.3, 0.1 so that the indices differ) on
// [−5.12, 5.12]^4: f = Σ a_j (x_j² − 10 cos 2πx_j + 10), a bowl under about
// ten ripples per coordinate. Additive: exact truths.
func truthRastrigin4() (*TruthProblem, error) {
	a := []float64{1, 0.6, 0.3, 0.1}
	h := make([]func(float64) float64, len(a))
	for j, aj := range a {
		h[j] = func(x float64) float64 { return aj * (x*x - 10*math.Cos(2*math.Pi*x) + 10) }
	}
	return separableProblem("rastrigin-4", false, []string{TagRough}, space.Minimize, floatParams(4, -5.12, 5.12), 0, additiveTerms(h), nil)
}

// truthLogRosenbrock3 is log(1 + f) of the Rosenbrock function (rosen.html)
// in d = 3 on the library's domain [−5, 10]³, f = Σ_{i<d} 100(x_{i+1} −
// x_i²)² + (x_i − 1)²: the logarithm keeps its values within 0–14 and its
// curved valley. Truths estimated.
func truthLogRosenbrock3() (*TruthProblem, error) {
	return estimatedProblem("log-rosenbrock-3", false, []string{TagValley}, floatParams(3, -5, 10), func(x []float64) float64 {
		s := 0.0
		for i := 0; i+1 < len(x); i++ {
			a, b := x[i+1]-x[i]*x[i], x[i]-1
			s += 100*a*a + b*b
		}
		return math.Log1p(s)
	})
}

// truthGenzPeak4 is Genz's product peak (genzpeak.html), Π_i (a_i^−2 +
// (x_i − u_i)²)^−1, divided by its maximum Π a_i² so that the peak is 1, in
// d = 4 on [0,1]⁴ and to be MAXIMIZED; a = (8, 5, 3, 1.5) and
// u = (0.3, 0.55, 0.7, 0.2) instead of the library's a_i = 5 and u_i = 0.5,
// with which every index would be equal. A product: exact truths.
func truthGenzPeak4() (*TruthProblem, error) {
	a := []float64{8, 5, 3, 1.5}
	u := []float64{0.3, 0.55, 0.7, 0.2}
	g := make([]func(float64) float64, len(a))
	for i := range a {
		ai, ui := a[i], u[i]
		g[i] = func(x float64) float64 { return 1 / (1 + ai*ai*(x-ui)*(x-ui)) }
	}
	return separableProblem("genz-peak-4", true, []string{TagMaximize}, space.Maximize, floatParams(4, 0, 1), 0,
		[]sepTerm{{w: 1, g: g}}, nil)
}

// hartmannTerms are the bumps −α_i Π_j exp(−A_ij (x_j − P_ij)²) of a
// Hartmann function over d ≥ len(A[i]) coordinates; the coordinates beyond
// do nothing.
func hartmannTerms(a, p [][]float64, d int) []sepTerm {
	terms := make([]sepTerm, len(a))
	for i := range a {
		g := make([]func(float64) float64, d)
		for j := range a[i] {
			if a[i][j] != 0 {
				g[j] = gaussFactor(a[i][j], p[i][j])
			}
		}
		terms[i] = sepTerm{w: -hartmannAlpha[i], g: g}
	}
	return terms
}

// truthHartmann3Inert is Hartmann 3-d (hart3.html) on x1..x3 with two more
// parameters x4, x5 in [0, 1] that do nothing: their true PDs are flat and
// their indices 0. A sum of products of Gaussian factors: exact truths.
func truthHartmann3Inert() (*TruthProblem, error) {
	return separableProblem("hartmann3-inert", false, []string{TagSwitchedOff}, space.Minimize, floatParams(5, 0, 1), 0,
		hartmannTerms(hartmann3A, hartmann3P, 5), nil)
}

// truthHartmann3Weak is Hartmann 3-d (hart3.html) with a fourth parameter
// x4 in [0, 1] that scales the deepest bump by exp(−1.5(x4 − 0.3)²), between
// 0.48 and 1: a weak parameter whose main effect is small but not zero
// (S₄ = 0.006, T₄ = 0.023), mostly an interaction with x1..x3. Exact truths.
func truthHartmann3Weak() (*TruthProblem, error) {
	terms := hartmannTerms(hartmann3A, hartmann3P, 4)
	terms[3].g[3] = gaussFactor(1.5, 0.3)
	return separableProblem("hartmann3-weak", false, []string{TagWeak}, space.Minimize, floatParams(4, 0, 1), 0, terms, nil)
}

// smoothstep is 3t² − 2t³ on [0, 1], 0 before, 1 after.
func smoothstep(t float64) float64 {
	t = math.Min(1, math.Max(0, t))
	return t * t * (3 - 2*t)
}

// truthTraining4 is shaped like the validation accuracy of a training run,
// to be MAXIMIZED (ours, not the library's): with l = log₁₀ lr,
//
//	acc = 0.1 + a(l)·q(momentum)·h(dropout)·r(weight decay),
//
// where a is a plateau at 0.35 for l ≤ −4 (the rate is too small to learn
// in the epochs given), a smooth rise to 0.85 at l = −2.5, a decline to
// 0.75 at l = −1 and then 0: the run diverges and the accuracy drops to
// chance, 0.1, whatever the other parameters; q = 1 − 0.3(momentum − 0.9)²,
// h = 1 − 0.5(dropout − 0.2)², r = 1 − 0.25/(1 + exp(−4(log₁₀ wd + 2))).
// A product: exact truths (the quadrature panels end at the jump).
func truthTraining4() (*TruthProblem, error) {
	params := []space.Param{
		{Name: "lr", Type: space.Float, Low: 1e-5, High: 1, Log: true},
		{Name: "momentum", Type: space.Float, Low: 0, High: 0.99},
		{Name: "dropout", Type: space.Float, Low: 0, High: 0.8},
		{Name: "weight_decay", Type: space.Float, Low: 1e-6, High: 0.1, Log: true},
	}
	rate := func(lr float64) float64 {
		l := math.Log10(lr)
		switch {
		case l <= -4:
			return 0.35
		case l <= -2.5:
			return 0.35 + 0.5*smoothstep((l+4)/1.5)
		case l <= -1:
			return 0.85 - 0.1*smoothstep((l+2.5)/1.5)
		}
		return 0
	}
	g := []func(float64) float64{
		rate,
		func(m float64) float64 { return 1 - 0.3*(m-0.9)*(m-0.9) },
		func(d float64) float64 { return 1 - 0.5*(d-0.2)*(d-0.2) },
		func(wd float64) float64 { return 1 - 0.25/(1+math.Exp(-4*(math.Log10(wd)+2))) },
	}
	breaks := [][]float64{{1e-4, math.Pow(10, -2.5), 0.1}, nil, nil, nil}
	return separableProblem("training-4", false, []string{TagSteps, TagMaximize}, space.Maximize, params, 0.1,
		[]sepTerm{{w: 1, g: g}}, breaks)
}

// stair is x quantized to s levels, min(⌊s·x⌋, s − 1)/s on [0, 1] (the
// last level closed, so x = 1 is not a step of its own).
func stair(x float64, s int) float64 {
	return math.Min(math.Floor(float64(s)*x), float64(s-1)) / float64(s)
}

// stairBreaks are the jumps of stair(·, s).
func stairBreaks(s int) []float64 {
	b := make([]float64, s-1)
	for k := range b {
		b[k] = float64(k+1) / float64(s)
	}
	return b
}

// truthStaircase4 is a quantized bowl on [0, 1]⁴ (ours): with q_j the
// coordinate quantized to s_j = 4, 6, 3, 10 levels,
//
//	f = Σ_j w_j (q_j − c_j)² + 0.5·stair(x₁, 3)·stair(x₃, 2),
//
// w = (1, 0.6, 0.3, 0.15), c = (0.5, 0.3, 0.6, 0.4): flat plateaus and
// jumps in every coordinate, like integer hyperparameters, and an
// interaction of two staircases. Exact truths.
func truthStaircase4() (*TruthProblem, error) {
	s := []int{4, 6, 3, 10}
	w := []float64{1, 0.6, 0.3, 0.15}
	c := []float64{0.5, 0.3, 0.6, 0.4}
	h := make([]func(float64) float64, 4)
	breaks := make([][]float64, 4)
	for j := range h {
		sj, wj, cj := s[j], w[j], c[j]
		h[j] = func(x float64) float64 { q := stair(x, sj) - cj; return wj * q * q }
		breaks[j] = stairBreaks(sj)
	}
	terms := additiveTerms(h)
	inter := make([]func(float64) float64, 4)
	inter[0] = func(x float64) float64 { return stair(x, 3) }
	inter[2] = func(x float64) float64 { return stair(x, 2) }
	terms = append(terms, sepTerm{w: 0.5, g: inter})
	breaks[0] = append(breaks[0], stairBreaks(3)...)
	breaks[2] = append(breaks[2], stairBreaks(2)...)
	return separableProblem("staircase-4", true, []string{TagSteps}, space.Minimize, floatParams(4, 0, 1), 0, terms, breaks)
}

// divergeProbability is the chance that a trial of the heavy-tailed problem
// reports a diverged run.
const divergeProbability = 0.1

// truthDiverging4 is a smooth loss on [0, 1]⁴ (ours),
//
//	f = 0.7 − 0.5·exp(−3(x₁ − 0.3)² − 2(x₂ − 0.6)²) + 0.3(x₃ − 0.5)² + 0.1·x₄,
//
// whose trials diverge now and then: with probability 0.1 a trial reports
// 10× the median of f times 1 + 0.2|z| (z standard normal) instead of f,
// about 5 where f lies in 0.2–0.9 (DESIGN.md: one such value dominates a
// squared-error fit). The truths are those of the clean f, exact.
func truthDiverging4() (*TruthProblem, error) {
	h := make([]func(float64) float64, 4)
	h[2] = func(x float64) float64 { return (x - 0.5) * (x - 0.5) }
	h[3] = func(x float64) float64 { return x }
	terms := additiveTerms(h)
	terms[0].w, terms[1].w = 0.3, 0.1
	bump := []func(float64) float64{gaussFactor(3, 0.3), gaussFactor(2, 0.6), nil, nil}
	terms = append(terms, sepTerm{w: -0.5, g: bump})
	p, err := separableProblem("diverging-4", false, []string{TagHeavyTailed}, space.Minimize, floatParams(4, 0, 1), 0.7, terms, nil)
	if err != nil {
		return nil, err
	}
	// The median of f under the reference measure, from a fixed sample.
	rng := rand.New(rand.NewPCG(truthSeed, 4))
	vals := make([]float64, 10000)
	for i, u := range p.Space.Sample(rng, len(vals)) {
		vals[i] = p.Eval(p.Space.Decode(u))
	}
	slices.Sort(vals)
	median := vals[len(vals)/2]
	eval := p.Eval
	p.Observe = func(x []float64, rng *rand.Rand) float64 {
		if rng.Float64() < divergeProbability {
			return 10 * median * (1 + 0.2*math.Abs(rng.NormFloat64()))
		}
		return eval(x)
	}
	p.Note = fmt.Sprintf("trials diverge with probability %.2f and then report about %.3g; truths of the clean function", divergeProbability, 10*median)
	return p, nil
}

// truthMixed5 is a tuning-like function on a mixed conditional space (ours,
// in the spirit of bench.NameConditional): a log learning rate, an
// optimizer (sgd, adam, rmsprop), a momentum active only for sgd, an integer
// number of layers and a dropout,
//
//	f = b_o + κ_o (log₁₀ lr − μ_o)² + 0.02(layers − 4)² + 0.5(dropout − 0.05(layers − 1))²
//	    + (sgd ? 0.4(momentum − 0.85)² : 0),
//
// b = (0.12, 0.05, 0.08), κ = (0.06, 0.12, 0.1), μ = (−1.5, −3.2, −2.8): the
// optimizer shifts the best learning rate (an interaction) and the layers
// shift the best dropout. Natural values: the optimizer as its level index.
// Truths estimated (the momentum's PD averages over sgd configurations).
func truthMixed5() (*TruthProblem, error) {
	b := []float64{0.12, 0.05, 0.08}
	kappa := []float64{0.06, 0.12, 0.1}
	mu := []float64{-1.5, -3.2, -2.8}
	params := []space.Param{
		{Name: "lr", Type: space.Float, Low: 1e-5, High: 0.1, Log: true},
		{Name: "optimizer", Type: space.Categorical, Choices: []any{"sgd", "adam", "rmsprop"}},
		{Name: "momentum", Type: space.Float, Low: 0, High: 0.99, Condition: &space.Condition{Parent: "optimizer", Values: []any{"sgd"}}},
		{Name: "layers", Type: space.Int, Low: 1, High: 8},
		{Name: "dropout", Type: space.Float, Low: 0, High: 0.5},
	}
	return estimatedProblem("mixed-5", false, []string{TagCategorical, TagConditional}, params, func(x []float64) float64 {
		if !(x[0] > 0) || math.IsNaN(x[1]) || math.IsNaN(x[3]) || math.IsNaN(x[4]) {
			return math.NaN()
		}
		o := int(x[1])
		l := math.Log10(x[0]) - mu[o]
		dr := x[4] - 0.05*(x[3]-1)
		v := b[o] + kappa[o]*l*l + 0.02*(x[3]-4)*(x[3]-4) + 0.5*dr*dr
		if o == 0 {
			if math.IsNaN(x[2]) {
				return math.NaN()
			}
			v += 0.4 * (x[2] - 0.85) * (x[2] - 0.85)
		}
		return v
	})
}

// truthBumps10 is a sum of four Gaussian bumps in d = 10 on [0, 1]^10, of
// Hartmann's form (hart6.html) with weights α = (1, 1.2, 3, 3.2) (ours):
// x1..x3 matter (A between 2 and 12), x4 and x5 are weak (A between 0.1
// and 0.4), and x6..x10 do nothing. Exact truths.
func truthBumps10() (*TruthProblem, error) {
	a := [][]float64{{8, 3, 10, 0.3, 0.1}, {2, 12, 4, 0.1, 0.4}, {10, 5, 2, 0.2, 0.2}, {4, 8, 12, 0.4, 0.1}}
	p := [][]float64{{0.2, 0.7, 0.5, 0.3, 0.8}, {0.8, 0.3, 0.6, 0.5, 0.2}, {0.4, 0.4, 0.1, 0.9, 0.6}, {0.6, 0.9, 0.8, 0.1, 0.4}}
	return separableProblem("bumps-10", true, []string{TagSwitchedOff, TagWeak, TagHighD}, space.Minimize, floatParams(10, 0, 1), 0,
		hartmannTerms(a, p, 10), nil)
}
