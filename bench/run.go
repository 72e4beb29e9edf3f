package bench

import (
	"context"
	"fmt"
	"math"
	"xbo/acq"

	"xbo/opt"
)

// RunOptions describe one optimization of a test function.
type RunOptions struct {
	// Function is a name Lookup accepts; Dim its dimension (0 for the
	// fixed-dimension functions).
	Function string
	Dim      int
	// Budget is the number of evaluations.
	Budget int
	// Seed drives the optimizer and, through its own stream, the noise.
	Seed uint64
	// Strategy and Tau are opt.Config's ("ei", "lcb", "pi", "pvar", "random").
	Strategy string
	Tau      float64
	// Noise is the standard deviation of Gaussian noise added to each
	// evaluation (0: none).
	Noise float64
	// Config, if non-nil, is the base optimizer configuration; Space,
	// Strategy, Tau and Seed are set from the fields above.
	Config *opt.Config
	// OnTrial, if set, is called after every completed evaluation.
	OnTrial func(opt.Trial) error
}

// RunResult is the outcome of one optimization.
type RunResult struct {
	Function *Function
	History  []opt.Trial
	// Best is the completed trial with the lowest observed value.
	Best opt.Trial
	// Regret is the simple regret f(x̂) − f* of the best observed
	// configuration x̂, evaluated without noise.
	Regret float64
	// Trace[i] is the simple regret after i+1 evaluations.
	Trace []float64
	// BandLog and SwitchedAt are a-BOBAX's band half-width per model-based
	// proposal and the evaluation count at its switch (−1: never switched);
	// empty for other strategies.
	BandLog    []acq.BandRecord
	SwitchedAt int
}

// Run optimizes a test function sequentially with package opt.
func Run(ctx context.Context, o RunOptions) (*RunResult, error) {
	res, err := run(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("bench: run %s: %w", o.Function, err)
	}
	return res, nil
}

func run(ctx context.Context, o RunOptions) (*RunResult, error) {
	if o.Budget < 1 {
		return nil, fmt.Errorf("budget %d must be at least 1", o.Budget)
	}
	if o.Noise < 0 || math.IsNaN(o.Noise) || math.IsInf(o.Noise, 0) {
		return nil, fmt.Errorf("noise sd %v must be finite and ≥ 0", o.Noise)
	}
	f, err := Lookup(o.Function, o.Dim)
	if err != nil {
		return nil, err
	}
	s, err := f.Space()
	if err != nil {
		return nil, err
	}
	cfg := opt.Config{}
	if o.Config != nil {
		cfg = *o.Config
	}
	cfg.Space, cfg.Strategy, cfg.Tau, cfg.Seed = s, o.Strategy, o.Tau, o.Seed
	optimizer, err := opt.New(cfg)
	if err != nil {
		return nil, err
	}
	track := newTracker(&Problem{Function: f, Noise: o.Noise}, o.Seed)
	res := &RunResult{Function: f, Trace: make([]float64, 0, o.Budget)}
	for range o.Budget {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tr, err := optimizer.Ask()
		if err != nil {
			return nil, err
		}
		y, err := track.evaluate(tr.Params)
		if err != nil {
			return nil, err
		}
		if err := optimizer.Tell(tr.ID, y); err != nil {
			return nil, err
		}
		track.told(tr.Params, y)
		res.Trace = append(res.Trace, track.regret)
		if o.OnTrial != nil {
			done, err := optimizer.Trial(tr.ID)
			if err != nil {
				return nil, err
			}
			if err := o.OnTrial(done); err != nil {
				return nil, err
			}
		}
	}
	res.History = optimizer.History()
	res.SwitchedAt = -1
	if log, at, switched := optimizer.BandLog(); log != nil {
		res.BandLog = log
		if switched {
			res.SwitchedAt = at
		}
	}
	res.Best, _ = optimizer.Best()
	res.Regret = track.regret
	return res, nil
}
