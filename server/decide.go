package server

import (
	"context"
	"fmt"
	"sync"

	"xbo/opt"
	"xbo/store"
)

// decisionCache serves the model pruner's decisions for one study. It
// mirrors the study's trials, as the asks' cache does, so that a decision
// reads only the trials that changed since the previous one instead of the
// whole study, and then builds the optimizer from the mirror (cheap next to
// the model's fit). It is apart from the asks' cache, whose optimizer
// belongs to the goroutine that serves asks: reports are decided while
// asks are served. Decisions for one study take turns.
//
// A decision on a trial that has not changed since the previous decision's
// optimizer was built reuses that optimizer, and with it its fitted model
// (opt.Optimizer.ContinueChance keeps it): with many workers, the reports
// that arrive while one decision fits its model are decided from that
// model, as if each had been decided when it was built (after the trial's
// report, so on a state of the store that includes it), instead of each
// fitting a model of its own.
type decisionCache struct {
	mu sync.Mutex
	mirror
	built    *opt.Optimizer
	builtIDs map[int64]int64 // trial number → the built optimizer's trial id
	builtVer map[int64]int64 // trial number → its version when it was built
}

// maxDecisionCaches bounds the studies whose trials are mirrored for the
// model pruner; past it the caches start over.
const maxDecisionCaches = 64

func (s *Server) decisionCache(study string) *decisionCache {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.decisions[study]
	if !ok {
		if len(s.decisions) >= maxDecisionCaches {
			clear(s.decisions)
		}
		d = &decisionCache{}
		s.decisions[study] = d
	}
	return d
}

// continueChance is the chance that trial number, given its curve in the
// store now, ends better than the study's best complete trial
// (opt.Optimizer.ContinueChance).
func (d *decisionCache) continueChance(ctx context.Context, st store.Store, study string, number int64, minRank float64, workers int) (float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := st.Read(ctx, study, func(ctx context.Context, view store.AskView) error {
		_, reset, err := d.catchUp(ctx, view)
		if reset || err != nil {
			d.built = nil
		}
		return err
	}); err != nil {
		return 0, err
	}
	t, known := d.trials[number]
	if v, ok := d.builtVer[number]; d.built == nil || !known || !ok || v != t.Version {
		o, ids, _, err := d.optimizer(workers)
		if err != nil {
			d.built = nil
			return 0, fmt.Errorf("study %q: %w", study, err)
		}
		d.built, d.builtIDs = o, ids
		d.builtVer = make(map[int64]int64, len(d.trials))
		for n, t := range d.trials {
			d.builtVer[n] = t.Version
		}
	}
	id, ok := d.builtIDs[number]
	if !ok {
		return 0, fmt.Errorf("trial %d of %q is not in its history", number, study)
	}
	return d.built.ContinueChance(id, minRank)
}
