package explain

import (
	"context"
	"fmt"
	"math"

	"xbo/explain/fanova"
	"xbo/forest"
	"xbo/history"
	"xbo/space"
)

// Importance methods.
const (
	// ImportanceForest is paper 003's fANOVA: the variance decomposition of
	// each tree of a random forest, with exact marginals, averaged over
	// trees (mean ± std across trees).
	ImportanceForest = "forest-fanova"
)

// trialsPerLeafTrial sets the forest's least leaf size: one trial per this
// many, so a tree has at most about that many leaves and the pairwise
// decomposition, quadratic in the leaves, stays interactive on large
// studies (at 10,000 trials leaves hold at least 5).
const trialsPerLeafTrial = 2000

// MaxPairsParams bounds the spaces whose pairwise interactions are computed
// (their number grows as d²).
const MaxPairsParams = 40

// ImportanceRequest asks for hyperparameter importance: the fraction of the
// objective's variance over the space that each parameter (and each pair)
// explains. Zero values mean the defaults.
type ImportanceRequest struct {
	// Method is forest-fanova (the default).
	Method string `json:"method"`
	// Pairs includes pairwise interactions (default true up to
	// MaxPairsParams parameters).
	Pairs *bool `json:"pairs"`
	// CapQuantile q in (0, 1] computes importance in the good region: values
	// worse than the quantile q of the best are capped there (paper 003,
	// section 3.3); CapValue caps at a value instead.
	CapQuantile float64  `json:"cap_quantile,omitempty"`
	CapValue    *float64 `json:"cap_value,omitempty"`
	// Trees of the forest (default forest.DefaultTrees) and its seed.
	Trees int    `json:"trees"`
	Seed  uint64 `json:"seed"`
}

// ImportanceResult is the importance with a ranking of the main effects.
type ImportanceResult struct {
	About
	Method string `json:"method"`
	*fanova.Importance
	Ranking []RankedEffect `json:"ranking"`
	// Cap says how values were capped, when they were.
	Cap  string `json:"cap,omitempty"`
	Note string `json:"note,omitempty"`
}

// RankedEffect is one row of the ranking of main effects.
type RankedEffect struct {
	Param    string  `json:"param"`
	Fraction float64 `json:"fraction"`
	Std      float64 `json:"std"`
}

func (r *ImportanceRequest) normalize(sp *space.Space) error {
	if r.Method == "" {
		r.Method = ImportanceForest
	}
	if r.Method != ImportanceForest {
		return invalidf("importance method %q: want %s", r.Method, ImportanceForest)
	}
	if r.Pairs == nil {
		v := sp.Dim() > 1 && sp.Dim() <= MaxPairsParams
		r.Pairs = &v
	}
	if *r.Pairs && sp.Dim() > MaxPairsParams {
		return invalidf("pairs of %d parameters: the limit is %d parameters", sp.Dim(), MaxPairsParams)
	}
	if r.Trees == 0 {
		r.Trees = forest.DefaultTrees
	}
	if r.Seed == 0 {
		r.Seed = 1
	}
	switch {
	case r.Trees < 1 || r.Trees > MaxTrees:
		return invalidf("trees %d must lie in 1..%d", r.Trees, MaxTrees)
	case math.IsNaN(r.CapQuantile) || r.CapQuantile < 0 || r.CapQuantile > 1:
		return invalidf("cap_quantile %v must lie in (0, 1]", r.CapQuantile)
	case r.CapQuantile > 0 && r.CapValue != nil:
		return invalidf("cap_quantile and cap_value exclude each other")
	case r.CapValue != nil && (math.IsNaN(*r.CapValue) || math.IsInf(*r.CapValue, 0)):
		return invalidf("cap_value %v is not finite", *r.CapValue)
	}
	return nil
}

// Importance computes hyperparameter importance.
func (e *Engine) Importance(ctx context.Context, h *history.History, req ImportanceRequest) (*ImportanceResult, error) {
	return explainAs(ctx, e, h, "importance", func(*prepared) (any, error) {
		err := req.normalize(h.Space)
		return req, err
	}, func(t *task, p *prepared) (*ImportanceResult, error) { return forestImportance(t, p, req) })
}

func forestImportance(t *task, p *prepared, req ImportanceRequest) (*ImportanceResult, error) {
	sp := p.h.Space
	maximize := p.h.Direction() == space.Maximize
	y := p.data.Y
	out := &ImportanceResult{About: p.about("importance"), Method: req.Method}
	var err error
	switch {
	case req.CapQuantile > 0:
		var limit float64
		if y, limit, err = fanova.CapQuantile(y, req.CapQuantile, maximize); err != nil {
			return nil, invalidf("%v", err)
		}
		out.Cap = fmt.Sprintf("values capped at %.6g (the best %.0f%%)", limit, 100*req.CapQuantile)
	case req.CapValue != nil:
		if y, err = fanova.Cap(y, *req.CapValue, maximize); err != nil {
			return nil, invalidf("%v", err)
		}
		out.Cap = fmt.Sprintf("values capped at %.6g", *req.CapValue)
	}
	t.progress(fmt.Sprintf("fitting a forest of %d trees to %d trials", req.Trees, len(y)), 0, 2)
	minLeaf := (len(y) + trialsPerLeafTrial - 1) / trialsPerLeafTrial
	f, err := forest.Fit(p.data.X, y, forest.Options{Trees: req.Trees, Seed: req.Seed, Levels: sp.Levels(), Workers: t.workers, MinSamplesLeaf: minLeaf})
	if err != nil {
		return nil, fmt.Errorf("explain: importance: %w", err)
	}
	out.Surrogate = &SurrogateInfo{Kind: SurrogateForest, Trees: req.Trees, Seed: req.Seed, Trials: len(y), ConditionedOn: len(y)}
	if minLeaf > 1 {
		out.Surrogate.Note = fmt.Sprintf("every leaf holds at least %d trials (one more per %d trials), which bounds the cost of the decomposition", minLeaf, trialsPerLeafTrial)
	}
	// A conditional parameter's "off" state weighs as much as it does under
	// uniform sampling of the space (see the package doc of explain/fanova).
	mass, err := fanova.InactiveMass(sp)
	if err != nil {
		return nil, err
	}
	fa, err := fanova.New(f, fanova.Options{InactiveMass: mass})
	if err != nil {
		return nil, err
	}
	t.progress("decomposing the variance", 1, 2)
	dec, err := fa.Decompose(*req.Pairs)
	if err != nil {
		return nil, err
	}
	if out.Importance, err = dec.Importance(sp.Names()); err != nil {
		return nil, err
	}
	for _, r := range out.RankedMain() {
		out.Ranking = append(out.Ranking, RankedEffect{Param: r.Name, Fraction: r.Fraction, Std: r.Std})
	}
	if out.TreesUsed == 0 {
		out.Note = "the forest predicts a constant (all values equal after capping?); every fraction is 0"
	} else if mass != nil {
		out.Note = "a conditional parameter's \"off\" state is weighted by how often it is off in the space; read its fraction together with its parent's"
	}
	return out, nil
}
