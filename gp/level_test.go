package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// dense is the ordinary-kriging posterior computed with dense matrices from
// the GP's own hyperparameters and its data standardized by the plain
// average and standard deviation (R&W eq. 2.42 with a vague prior on a
// constant mean): the reference the streamed forms must equal.
type dense struct {
	g          *GP
	kinv       *mat.Dense
	ystd       []float64
	beta, prec float64
	avg, std   float64
}

func newDense(t *testing.T, g *GP, y []float64) *dense {
	t.Helper()
	n := g.n
	kd := mat.NewDense(n, n, nil)
	h := g.hyper
	for i := range n {
		for j := range n {
			v := h.SignalVariance * g.kernel.corrValue(g.met.r2(g.x[i*g.dim:(i+1)*g.dim], g.x[j*g.dim:(j+1)*g.dim]))
			if i == j {
				v += h.NoiseVariance + g.jitter
			}
			kd.Set(i, j, v)
		}
	}
	var kinv mat.Dense
	if err := kinv.Inverse(kd); err != nil {
		t.Fatal(err)
	}
	out, _ := outputScale(y)
	d := &dense{g: g, kinv: &kinv, avg: out.Mean, std: out.Std}
	for _, v := range y {
		d.ystd = append(d.ystd, (v-out.Mean)/out.Std)
	}
	for i := range n {
		for j := range n {
			d.prec += kinv.At(i, j)
			d.beta += kinv.At(i, j) * d.ystd[j]
		}
	}
	d.beta /= d.prec
	return d
}

// kvec is k(X, x) in standardized units.
func (d *dense) kvec(x []float64) []float64 {
	g := d.g
	e := make([]float64, g.dim)
	if err := encodePoint(e, x, g.levels); err != nil {
		panic(err)
	}
	k := make([]float64, g.n)
	for i := range k {
		k[i] = g.hyper.SignalVariance * g.kernel.corrValue(g.met.r2(e, g.x[i*g.dim:(i+1)*g.dim]))
	}
	return k
}

// quad is aᵀK⁻¹b.
func (d *dense) quad(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		for j := range b {
			s += a[i] * d.kinv.At(i, j) * b[j]
		}
	}
	return s
}

func (d *dense) ones() []float64 {
	o := make([]float64, d.g.n)
	for i := range o {
		o[i] = 1
	}
	return o
}

// cov is the ordinary-kriging covariance of f at a and b, objective units.
func (d *dense) cov(a, b []float64) float64 {
	g := d.g
	ka, kb := d.kvec(a), d.kvec(b)
	ea, eb := make([]float64, g.dim), make([]float64, g.dim)
	_ = encodePoint(ea, a, g.levels)
	_ = encodePoint(eb, b, g.levels)
	prior := g.hyper.SignalVariance * g.kernel.corrValue(g.met.r2(ea, eb))
	ra, rb := 1-d.quad(ka, d.ones()), 1-d.quad(kb, d.ones())
	return d.std * d.std * (prior - d.quad(ka, kb) + ra*rb/d.prec)
}

func (d *dense) mean(x []float64) float64 {
	k := d.kvec(x)
	c := make([]float64, len(d.ystd))
	for i, v := range d.ystd {
		c[i] = v - d.beta
	}
	return d.avg + d.std*(d.beta+d.quad(k, c))
}

// The GP with an uncertain level predicts the ordinary-kriging mean,
// variance, covariance and average variance of dense linear algebra, its
// level is the generalized-least-squares mean, and its variance is never
// below the known-level GP's.
func TestUncertainLevelMatchesDenseKriging(t *testing.T) {
	rng := newRNG(31)
	// Clustered data: most points near a corner, a few spread out.
	x := make([][]float64, 30)
	y := make([]float64, 30)
	for i := range x {
		if i < 22 {
			x[i] = []float64{0.1 * rng.Float64(), 0.1 * rng.Float64(), rng.Float64()}
		} else {
			x[i] = []float64{rng.Float64(), rng.Float64(), rng.Float64()}
		}
		y[i] = 5*x[i][0] + math.Sin(4*x[i][1]) + 0.01*rng.NormFloat64()
	}
	known, err := Fit(x, y, Options{Kernel: Matern52, Levels: []int{0, 0, 3}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	h := known.Hyper()
	g, err := Fit(x, y, Options{Kernel: Matern52, Levels: []int{0, 0, 3}, Fixed: &h, UncertainLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	d := newDense(t, g, y)
	level, sd, ok := g.MeanLevel()
	if !ok || !relClose(level, d.avg+d.std*d.beta, 1e-9) || !relClose(sd, d.std/math.Sqrt(d.prec), 1e-9) {
		t.Fatalf("level %v ± %v (%v), want %v ± %v", level, sd, ok, d.avg+d.std*d.beta, d.std/math.Sqrt(d.prec))
	}
	if _, _, ok := known.MeanLevel(); ok {
		t.Error("a known-level GP reports a level")
	}
	// Variances come out of cancellations of the prior's size: they are
	// compared to a fraction of it (the dense inverse of the clustered
	// data's ill-conditioned K has its own rounding).
	vtol := 1e-6 * d.std * d.std * h.SignalVariance
	pts := [][]float64{{0.05, 0.05, 0.2}, {0.9, 0.9, 0.5}, {0.5, 0.2, 0.9}, {0.02, 0.8, 0.4}}
	m, v := make([]float64, len(pts)), make([]float64, len(pts))
	km, kv := make([]float64, len(pts)), make([]float64, len(pts))
	if err := g.Predict(pts, m, v); err != nil {
		t.Fatal(err)
	}
	if err := known.Predict(pts, km, kv); err != nil {
		t.Fatal(err)
	}
	for i, p := range pts {
		if !relClose(m[i], d.mean(p), 1e-8) || math.Abs(v[i]-d.cov(p, p)) > vtol {
			t.Errorf("point %d: %v ± %v, dense %v ± %v", i, m[i], v[i], d.mean(p), d.cov(p, p))
		}
		if v[i] < kv[i]-1e-12 {
			t.Errorf("point %d: variance %v below the known level's %v", i, v[i], kv[i])
		}
	}
	c, err := g.Covariance(pts, pts)
	if err != nil {
		t.Fatal(err)
	}
	avg := 0.0
	for i := range pts {
		for j := range pts {
			if math.Abs(c.At(i, j)-d.cov(pts[i], pts[j])) > vtol {
				t.Errorf("cov(%d, %d) = %v, dense %v", i, j, c.At(i, j), d.cov(pts[i], pts[j]))
			}
			avg += d.cov(pts[i], pts[j])
		}
	}
	avg /= float64(len(pts) * len(pts))
	av, err := g.AverageVariance(pts)
	if err != nil || math.Abs(av-avg) > vtol {
		t.Errorf("average variance %v (%v), dense %v", av, err, avg)
	}
	prior, err := g.PriorAverage(pts)
	if err != nil {
		t.Fatal(err)
	}
	if given, err := g.AverageVarianceGivenPrior(pts, prior); err != nil || math.Abs(given-avg) > vtol {
		t.Errorf("average variance given the prior %v (%v), dense %v", given, err, avg)
	}
	// Far from the clustered data the mean reverts to the level, not to the
	// average of the values, which the cluster dominates.
	far := []float64{0.95, 0.95, 0.5}
	fm, fv := make([]float64, 1), make([]float64, 1)
	if err := g.Predict([][]float64{far}, fm, fv); err != nil {
		t.Fatal(err)
	}
	t.Logf("far point: mean %.3f (level %.3f ± %.3f, plain average %.3f)", fm[0], level, sd, d.avg)
	// Conditioning keeps the level estimated: it equals a refit.
	cg, err := g.Condition([]float64{0.7, 0.3, 0.1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	hh, o := g.Hyper(), g.OutputScale()
	ref, err := Fit(append(append([][]float64{}, x...), []float64{0.7, 0.3, 0.1}), append(append([]float64{}, y...), 4),
		Options{Kernel: Matern52, Levels: []int{0, 0, 3}, Fixed: &hh, Output: &o, UncertainLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	cm, cv, rm, rv := make([]float64, 1), make([]float64, 1), make([]float64, 1), make([]float64, 1)
	_ = cg.Predict([][]float64{far}, cm, cv)
	_ = ref.Predict([][]float64{far}, rm, rv)
	if !relClose(cm[0], rm[0], 1e-8) || !relClose(cv[0], rv[0], 1e-8) {
		t.Errorf("conditioned %v ± %v, refit %v ± %v", cm[0], cv[0], rm[0], rv[0])
	}
}

// The variance's gradient includes the level's term: it matches central
// differences of Predict.
func TestUncertainLevelGradient(t *testing.T) {
	g0, x, y := fittedModel(t, 12, 25, 2, Matern52, nil)
	h := g0.Hyper()
	g, err := Fit(x, y, Options{Kernel: Matern52, Fixed: &h, UncertainLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	rng := newRNG(5)
	for range 10 {
		p := []float64{rng.Float64(), rng.Float64()}
		dm, dv := make([]float64, 2), make([]float64, 2)
		m, v, err := g.PredictGradient(p, dm, dv)
		if err != nil {
			t.Fatal(err)
		}
		pm, pv := make([]float64, 1), make([]float64, 1)
		_ = g.Predict([][]float64{p}, pm, pv)
		if !relClose(m, pm[0], 1e-10) || !relClose(v, pv[0], 1e-10) {
			t.Fatalf("value (%v, %v), Predict (%v, %v)", m, v, pm[0], pv[0])
		}
		const step = 1e-6
		for j := range 2 {
			lo, hi := append([]float64(nil), p...), append([]float64(nil), p...)
			lo[j] -= step
			hi[j] += step
			ms, vs := make([]float64, 2), make([]float64, 2)
			_ = g.Predict([][]float64{lo, hi}, ms, vs)
			if fd := (vs[1] - vs[0]) / (2 * step); math.Abs(dv[j]-fd) > 1e-5*(1+math.Abs(fd)) {
				t.Errorf("∂v/∂x%d = %v, finite difference %v", j, dv[j], fd)
			}
			if fd := (ms[1] - ms[0]) / (2 * step); math.Abs(dm[j]-fd) > 1e-5*(1+math.Abs(fd)) {
				t.Errorf("∂m/∂x%d = %v, finite difference %v", j, dm[j], fd)
			}
		}
		b, bm := make([]float64, 1), make([]float64, 1)
		if err := g.PredictBound([][]float64{p}, bm, b); err != nil || b[0] < pv[0]-1e-12 {
			t.Errorf("bound %v below the variance %v (%v)", b[0], pv[0], err)
		}
	}
}
