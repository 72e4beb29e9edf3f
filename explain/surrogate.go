package explain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"xbo/forest"
	"xbo/gp"
	"xbo/history"
	"xbo/space"
	"xbo/surrogate"
)

// Surrogate names the model explanations are computed from. The zero value
// is the default: a GP with the Matérn 5/2 kernel, seed 1.
type Surrogate struct {
	// Kind is "gp" (default) or "forest".
	Kind string `json:"kind"`
	// Kernel of the GP: "matern52" (default), "matern32" or "se".
	Kernel string `json:"kernel,omitempty"`
	// Trees of the forest (default forest.DefaultTrees).
	Trees int `json:"trees,omitempty"`
	// Seed of the fit (default 1).
	Seed uint64 `json:"seed"`
	// Outliers is "exclude" (default: trials no model of the others
	// predicts, failed or diverged runs, are left out; robust.go) or
	// "keep".
	Outliers string `json:"outliers,omitempty"`
}

// Surrogate kinds.
const (
	SurrogateGP     = "gp"
	SurrogateForest = "forest"
)

// MaxTrees bounds a forest's size.
const MaxTrees = 1000

func (s *Surrogate) normalize() error {
	if s.Kind == "" {
		s.Kind = SurrogateGP
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Outliers == "" {
		s.Outliers = OutliersExclude
	}
	if s.Outliers != OutliersExclude && s.Outliers != OutliersKeep {
		return invalidf("outliers %q: want %s or %s", s.Outliers, OutliersExclude, OutliersKeep)
	}
	switch s.Kind {
	case SurrogateGP:
		if s.Kernel == "" {
			s.Kernel = gp.Matern52.String()
		}
		k, err := gp.ParseKernel(s.Kernel)
		if err != nil {
			return invalidf("surrogate kernel: %v", err)
		}
		s.Kernel = k.String()
		if s.Trees != 0 {
			return invalidf("trees apply to the forest surrogate, not the GP")
		}
	case SurrogateForest:
		if s.Kernel != "" {
			return invalidf("a kernel applies to the GP surrogate, not the forest")
		}
		if s.Trees == 0 {
			s.Trees = forest.DefaultTrees
		}
		if s.Trees < 1 || s.Trees > MaxTrees {
			return invalidf("trees %d must lie in 1..%d", s.Trees, MaxTrees)
		}
	default:
		return invalidf("surrogate %q: want gp or forest", s.Kind)
	}
	return nil
}

// SurrogateInfo says which model an explanation was computed from and on
// how many trials.
type SurrogateInfo struct {
	Kind   string `json:"kind"`
	Kernel string `json:"kernel,omitempty"`
	Trees  int    `json:"trees,omitempty"`
	Seed   uint64 `json:"seed"`
	// Trials is the number of usable trials given; ConditionedOn the number
	// the model was fitted on (fewer when it is an approximation).
	Trials        int `json:"trials"`
	ConditionedOn int `json:"conditioned_on"`
	// VarianceConditionedOn is, for an approximate GP, the number of
	// trials its uncertainty is conditioned on.
	VarianceConditionedOn int  `json:"variance_conditioned_on,omitempty"`
	Approximate           bool `json:"approximate"`
	// Note explains an approximation in words.
	Note string `json:"note,omitempty"`
	// FitSeconds is how long fitting took (not in the JSON, like
	// About.Seconds).
	FitSeconds float64 `json:"-"`
}

// fitted is a model with its description, the trials it was fitted to and
// its check on them.
type fitted struct {
	model surrogate.Model
	info  SurrogateInfo
	// data are the trials the model was fitted to: the usable ones but the
	// outliers left out (robust.go).
	data  *history.Data
	check *ModelCheck
	// limits are a GP's 95% lower lengthscale limits per dimension (nil
	// for a forest; see switchedOff); alts the models at those limits,
	// made on first use (alternative).
	limits []float64
	altMu  sync.Mutex
	alts   map[int]surrogate.Model
	// nulls are the GP on uniform designs (extrapolation.go).
	nulls []*gp.GP
	// cleaning is what left outliers out of data (nil: every trial kept);
	// checkMu guards check and limits, computed on first use (ensureCheck).
	cleaning *cleaning
	checkMu  sync.Mutex
}

// onceFlight lets computations that need the same shared value (a fitted
// model, a cleaning) at the same time compute it once.
type onceFlight struct {
	done chan struct{}
	v    any
	err  error
}

// once returns the value cached under key in the engine's model cache, or
// computes it, once however many computations ask at the same time.
func (t *task) once(key string, compute func() (any, error)) (any, error) {
	e := t.engine
	for {
		e.mu.Lock()
		if v, ok := e.models.get(key); ok {
			e.mu.Unlock()
			f, inFlight := v.(*onceFlight)
			if !inFlight {
				return v, nil
			}
			select {
			case <-f.done:
			case <-t.ctx.Done():
				return nil, t.ctx.Err()
			}
			if f.err == nil {
				return f.v, nil
			}
			if errors.Is(f.err, context.Canceled) && t.ctx.Err() == nil {
				continue // its owner went away; compute it here
			}
			return nil, f.err
		}
		f := &onceFlight{done: make(chan struct{})}
		e.models.put(key, f, 1)
		e.mu.Unlock()
		f.v, f.err = compute()
		e.mu.Lock()
		if f.err != nil {
			if v, ok := e.models.get(key); ok && v == any(f) {
				e.models.remove(key)
			}
		} else {
			e.models.put(key, f.v, 1)
		}
		e.mu.Unlock()
		close(f.done)
		return f.v, f.err
	}
}

// model returns the surrogate of the prepared data for spec, fitted once per
// (data, spec) and kept in the engine's model cache.
func (t *task) model(p *prepared, spec Surrogate) (*fitted, error) {
	m, err := t.unchecked(p, spec)
	if err != nil {
		return nil, err
	}
	if err := t.ensureCheck(p, m, spec); err != nil {
		return nil, err
	}
	return m, nil
}

// unchecked returns the fitted surrogate without its model check, which
// only a surrogate an explanation describes needs (the forest whose band a
// GP's calibrated band covers has none computed).
func (t *task) unchecked(p *prepared, spec Surrogate) (*fitted, error) {
	key := p.fingerprint + "\x00" + spec.Kind + "\x00" + spec.Kernel + fmt.Sprintf("\x00%d\x00%d\x00", spec.Trees, spec.Seed) + spec.Outliers
	v, err := t.once(key, func() (any, error) { return t.fit(p, spec) })
	if err != nil {
		return nil, err
	}
	return v.(*fitted), nil
}

// ensureCheck computes m's model check once (check.go).
func (t *task) ensureCheck(p *prepared, m *fitted, spec Surrogate) error {
	m.checkMu.Lock()
	defer m.checkMu.Unlock()
	if m.check != nil {
		return nil
	}
	t.progress("checking the model on the trials it was fitted to", 0, 1)
	var c *ModelCheck
	var limits []float64
	var err error
	switch spec.Kind {
	case SurrogateForest:
		c, err = forestCheck(t, m, p.h.Space, spec)
	default:
		c, limits, err = gpCheck(m.model, m.data, p.h.Space)
	}
	if err != nil {
		return err
	}
	if m.cleaning != nil {
		c.Outliers = m.cleaning.outliers
	}
	c.judge(m.cleaning)
	m.check, m.limits = c, limits
	return t.ctx.Err()
}

// defaultSurrogate is the surrogate the outlier test uses: the engine's
// default GP.
func defaultSurrogate() Surrogate {
	s := Surrogate{}
	_ = s.normalize() // the zero value always normalizes
	return s
}

// cleaned returns the prepared data with the outliers left out, computed
// once per data (robust.go).
func (t *task) cleaned(p *prepared) (*cleaning, error) {
	v, err := t.once(p.fingerprint+"\x00clean", func() (any, error) {
		spec := defaultSurrogate()
		t.progress(fmt.Sprintf("checking %d trials for failed or diverged runs", len(p.data.Y)), 0, 1)
		return clean(p, func(d *history.Data) (*fitted, error) { return t.fitTo(p, d, spec) },
			func(like *fitted, d *history.Data) (*fitted, error) { return t.fitLike(p, d, like) }, heldOutAll)
	})
	if err != nil {
		return nil, err
	}
	return v.(*cleaning), nil
}

// heldOutAll predicts every row of all from model m fitted to the rows of
// kept (those not marked out): leave-one-out for the rows it was fitted
// to, a plain prediction with the noise for the others.
func heldOutAll(m *fitted, kept, all *history.Data, out []bool) ([]float64, []float64, error) {
	var km, kv []float64
	var err error
	var noise float64
	switch g := m.model.(type) {
	case *gp.Subset:
		km, kv, err = g.LeaveOneOut(kept.X, kept.Y)
		_, part := g.Parts()
		noise = part.NoiseVariance()
	case *gp.GP:
		km, kv, err = g.LeaveOneOut()
		noise = g.NoiseVariance()
	default:
		return nil, nil, fmt.Errorf("explain: outlier test needs a GP, not %T", m.model)
	}
	if err != nil {
		return nil, nil, err
	}
	mean, variance := make([]float64, len(all.Y)), make([]float64, len(all.Y))
	var rest [][]float64
	var at []int
	k := 0
	for i := range all.Y {
		if out[i] {
			rest, at = append(rest, all.X[i]), append(at, i)
			continue
		}
		mean[i], variance[i] = km[k], kv[k]
		k++
	}
	if len(rest) > 0 {
		pm, pv := make([]float64, len(rest)), make([]float64, len(rest))
		if err := m.model.Predict(rest, pm, pv); err != nil {
			return nil, nil, err
		}
		for r, i := range at {
			mean[i], variance[i] = pm[r], pv[r]+noise
		}
	}
	return mean, variance, nil
}

// fit fits spec to the prepared data, the outliers left out unless spec
// keeps them, and checks the model on the trials it was fitted to.
func (t *task) fit(p *prepared, spec Surrogate) (*fitted, error) {
	if err := t.ctx.Err(); err != nil {
		return nil, err
	}
	data := p.data
	var cl *cleaning
	var m *fitted
	if spec.Outliers != OutliersKeep {
		var err error
		if cl, err = t.cleaned(p); err != nil {
			return nil, err
		}
		data = cl.data
		if spec == defaultSurrogate() {
			c := cl.model
			m = &fitted{model: c.model, info: c.info, data: c.data} // the cleaning keeps its own
		}
	}
	if m == nil {
		var err error
		if m, err = t.fitTo(p, data, spec); err != nil {
			return nil, err
		}
	}
	m.info.Trials = len(p.data.Y)
	m.cleaning = cl
	if cl != nil && len(cl.outliers) > 0 {
		note := fmt.Sprintf("%d of the %d trials left out as failed or diverged runs (see model_check)", len(cl.outliers), len(p.data.Y))
		m.info.Note = strings.TrimPrefix(m.info.Note+"; "+note, "; ")
	}
	return m, t.ctx.Err()
}

// fitTo fits spec to the rows of d.
func (t *task) fitTo(p *prepared, d *history.Data, spec Surrogate) (*fitted, error) {
	sp := p.h.Space
	x, y := d.X, d.Y
	info := SurrogateInfo{Kind: spec.Kind, Kernel: spec.Kernel, Trees: spec.Trees, Seed: spec.Seed, Trials: len(y), ConditionedOn: len(y)}
	t.progress(fmt.Sprintf("fitting the %s surrogate to %d trials", spec.Kind, len(y)), 0, 1)
	start := time.Now()
	var model surrogate.Model
	switch spec.Kind {
	case SurrogateForest:
		// As the importance forest: a leaf per trialsPerLeafTrial trials at
		// least, so a forest of a large study stays cheap.
		minLeaf := (len(y) + trialsPerLeafTrial - 1) / trialsPerLeafTrial
		f, err := forest.Fit(x, y, forest.Options{Trees: spec.Trees, Seed: spec.Seed, Levels: sp.Levels(), Workers: t.workers, MinSamplesLeaf: minLeaf})
		if err != nil {
			return nil, fmt.Errorf("explain: fit forest: %w", err)
		}
		model = f
		if minLeaf > 1 {
			info.Note = fmt.Sprintf("every leaf holds at least %d trials (one more per %d trials), which bounds the forest's cost", minLeaf, trialsPerLeafTrial)
		}
	default:
		k, err := gp.ParseKernel(spec.Kernel)
		if err != nil {
			return nil, invalidf("%v", err)
		}
		g, err := gp.FitSubset(t.ctx, x, y, gp.SubsetOptions{
			Options:  gp.Options{Kernel: k, Levels: sp.Levels(), Restarts: 3, Seed: spec.Seed, Workers: t.workers, UncertainLevel: true},
			Maximize: p.h.Direction() == space.Maximize,
		})
		if err != nil {
			if ctxErr := t.ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, fmt.Errorf("explain: fit GP: %w", err)
		}
		model = g
		if !g.Exact() {
			meanOn, varianceOn := g.Conditioned()
			info.ConditionedOn, info.VarianceConditionedOn = meanOn, varianceOn
			info.Approximate = true
			info.Note = fmt.Sprintf("subset-of-data GP: the mean is conditioned on %d of the %d trials and the "+
				"hyperparameters and uncertainty on %d (each the best quarter plus a space-filling rest); "+
				"the uncertainty is never smaller than the exact GP's at the same hyperparameters", meanOn, len(y), varianceOn)
		}
	}
	info.FitSeconds = time.Since(start).Seconds()
	return &fitted{model: model, info: info, data: d}, t.ctx.Err()
}

// fitLike conditions the default GP on d with the hyperparameters and
// output scale of like (a GP fitted to other rows): the same model, given
// other data.
func (t *task) fitLike(p *prepared, d *history.Data, like *fitted) (*fitted, error) {
	var h gp.Hyper
	var out gp.OutputScale
	switch g := like.model.(type) {
	case *gp.Subset:
		h, out = g.Hyper(), g.OutputScale()
	case *gp.GP:
		h, out = g.Hyper(), g.OutputScale()
	default:
		return nil, fmt.Errorf("explain: refit needs a GP, not %T", like.model)
	}
	k, err := gp.ParseKernel(like.info.Kernel)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	g, err := gp.FitSubset(t.ctx, d.X, d.Y, gp.SubsetOptions{
		Options:  gp.Options{Kernel: k, Levels: p.h.Space.Levels(), Fixed: &h, Output: &out, Workers: t.workers, UncertainLevel: true},
		Maximize: p.h.Direction() == space.Maximize,
	})
	if err != nil {
		if ctxErr := t.ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("explain: condition GP: %w", err)
	}
	info := like.info
	info.Trials, info.ConditionedOn = len(d.Y), len(d.Y)
	return &fitted{model: g, info: info, data: d}, t.ctx.Err()
}

// unitsText says in words how to read the numbers of a study's explanations.
func unitsText(d space.Direction) string {
	if d == space.Maximize {
		return "objective units; the objective is maximized, so higher is better"
	}
	return "objective units; the objective is minimized, so lower is better"
}
