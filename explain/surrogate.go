package explain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"xbo/forest"
	"xbo/gp"
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

// fitted is a model with its description.
type fitted struct {
	model surrogate.Model
	info  SurrogateInfo
}

// modelFlight lets computations that need the same model at the same time
// fit it once.
type modelFlight struct {
	done chan struct{}
	m    *fitted
	err  error
}

// model returns the surrogate of the prepared data for spec, fitted once per
// (data, spec) and kept in the engine's model cache.
func (t *task) model(p *prepared, spec Surrogate) (*fitted, error) {
	e := t.engine
	key := p.fingerprint + "\x00" + spec.Kind + "\x00" + spec.Kernel + fmt.Sprintf("\x00%d\x00%d", spec.Trees, spec.Seed)
	for {
		e.mu.Lock()
		if v, ok := e.models.get(key); ok {
			e.mu.Unlock()
			switch v := v.(type) {
			case *fitted:
				return v, nil
			case *modelFlight:
				select {
				case <-v.done:
				case <-t.ctx.Done():
					return nil, t.ctx.Err()
				}
				if v.err == nil {
					return v.m, nil
				}
				if errors.Is(v.err, context.Canceled) && t.ctx.Err() == nil {
					continue // its owner went away; fit it here
				}
				return nil, v.err
			}
		}
		mf := &modelFlight{done: make(chan struct{})}
		e.models.put(key, mf, 1)
		e.mu.Unlock()
		mf.m, mf.err = t.fit(p, spec)
		e.mu.Lock()
		if mf.err != nil {
			if v, ok := e.models.get(key); ok && v == any(mf) {
				e.models.remove(key)
			}
		} else {
			e.models.put(key, mf.m, 1)
		}
		e.mu.Unlock()
		close(mf.done)
		return mf.m, mf.err
	}
}

func (t *task) fit(p *prepared, spec Surrogate) (*fitted, error) {
	if err := t.ctx.Err(); err != nil {
		return nil, err
	}
	sp := p.h.Space
	x, y := p.data.X, p.data.Y
	info := SurrogateInfo{Kind: spec.Kind, Kernel: spec.Kernel, Trees: spec.Trees, Seed: spec.Seed, Trials: len(y), ConditionedOn: len(y)}
	t.progress(fmt.Sprintf("fitting the %s surrogate to %d trials", spec.Kind, len(y)), 0, 1)
	start := time.Now()
	var model surrogate.Model
	switch spec.Kind {
	case SurrogateForest:
		f, err := forest.Fit(x, y, forest.Options{Trees: spec.Trees, Seed: spec.Seed, Levels: sp.Levels(), Workers: t.workers})
		if err != nil {
			return nil, fmt.Errorf("explain: fit forest: %w", err)
		}
		model = f
	default:
		k, err := gp.ParseKernel(spec.Kernel)
		if err != nil {
			return nil, invalidf("%v", err)
		}
		g, err := gp.FitSubset(t.ctx, x, y, gp.SubsetOptions{
			Options:  gp.Options{Kernel: k, Levels: sp.Levels(), Restarts: 3, Seed: spec.Seed, Workers: t.workers},
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
	return &fitted{model: model, info: info}, t.ctx.Err()
}

// unitsText says in words how to read the numbers of a study's explanations.
func unitsText(d space.Direction) string {
	if d == space.Maximize {
		return "objective units; the objective is maximized, so higher is better"
	}
	return "objective units; the objective is minimized, so lower is better"
}
