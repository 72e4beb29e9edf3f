package shapley

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// PathStep is the explanation of one proposal of a run.
type PathStep struct {
	// Iteration is the proposal's position in the run (trial number).
	Iteration   int          `json:"iteration"`
	Explanation *Explanation `json:"explanation"`
}

// Path is a desirability path (thesis section 7): the contributions of every
// proposal over the iterations, each explained with the surrogate of its own
// iteration.
type Path struct {
	Params []string   `json:"params"`
	Steps  []PathStep `json:"steps"`
}

// StepFunc gives the function (built on the surrogate of that iteration)
// and the unit-cube proposal to explain for one iteration. It is called from
// several goroutines at once.
type StepFunc func(ctx context.Context, iteration int) (Function, []float64, error)

// ExplainPath explains the given iterations in parallel, one iteration per
// worker (opt.Workers, default all cores), each explanation running on its
// worker alone. Unless opt.Background or a local radius is given, one
// uniform background is drawn once and shared by all iterations, and every
// iteration uses the same seed: differences along the path then come from
// the models and proposals, not from different samples (the thesis' payout
// paths, figure 15, rely on a stable background too).
func ExplainPath(ctx context.Context, iterations []int, step StepFunc, opt Options) (*Path, error) {
	if step == nil {
		return nil, errors.New("shapley: path: nil step function")
	}
	if len(iterations) == 0 {
		return nil, errors.New("shapley: path: no iterations to explain")
	}
	workers := opt.Workers
	if workers < 1 {
		workers = defaultWorkers()
	}
	steps := make([]PathStep, len(iterations))
	var shared [][]float64
	// The background depends only on the space and the size, so draw it
	// from the first iteration's function dimension before fanning out.
	if opt.Background == nil && opt.LocalRadius == 0 && opt.Method != Baseline {
		var dim int
		if opt.Space != nil {
			dim = opt.Space.Dim()
		} else {
			f, _, err := step(ctx, iterations[0])
			if err != nil {
				return nil, fmt.Errorf("shapley: path: iteration %d: %w", iterations[0], err)
			}
			dim = f.Dim()
		}
		n := opt.BackgroundSize
		if n == 0 {
			n = DefaultBackgroundPerDim * dim
		}
		var err error
		shared, err = UniformBackground(opt.Space, dim, n, opt.Seed^0x5851f42d4c957f2d)
		if err != nil {
			return nil, err
		}
	}
	var (
		progressMu sync.Mutex
		done       int
	)
	err := parallel(ctx, workers, len(iterations), func(_, i int) error {
		it := iterations[i]
		f, x, err := step(ctx, it)
		if err != nil {
			return fmt.Errorf("shapley: path: iteration %d: %w", it, err)
		}
		o := opt
		o.Workers = 1
		if shared != nil {
			o.Background = shared
		}
		e, err := Explain(ctx, f, x, o)
		if err != nil {
			return fmt.Errorf("shapley: path: iteration %d: %w", it, err)
		}
		steps[i] = PathStep{Iteration: it, Explanation: e}
		if opt.Progress != nil {
			progressMu.Lock()
			done++
			opt.Progress(done, len(iterations))
			progressMu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Path{Params: slices.Clone(steps[0].Explanation.Params), Steps: steps}, nil
}
