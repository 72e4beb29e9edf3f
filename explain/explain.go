package explain

import (
	"context"
	"fmt"

	"xbo/history"
)

// Kinds lists the explanation kinds, as the API and the CLI name them.
var Kinds = []string{"pdp", "slice", "regional", "importance", "shapley", "paths", "ablation", "lpi", "bias", "budgets", "tradeoff"}

// BiasRequest asks for the sampling-bias measure alone (every other result
// carries it in its About too).
type BiasRequest struct{}

// BiasResult is the sampling-bias measure with the engine's header.
type BiasResult struct {
	About
}

// SamplingBias measures how far the evaluated configurations are from a
// uniform sample of the space.
func (e *Engine) SamplingBias(ctx context.Context, h *history.History) (*BiasResult, error) {
	return explainAs(ctx, e, h, "bias", nil, func(*prepared) (any, error) { return BiasRequest{}, nil },
		func(t *task, p *prepared) (*BiasResult, error) { return &BiasResult{About: p.about("bias")}, nil })
}

// explainAs is the path of every kind: prepare the history (at the budget,
// when one is given), normalize the request (which returns the request's
// cache key, or an error before any work), then serve the result from the
// cache or compute it.
func explainAs[R any](ctx context.Context, e *Engine, h *history.History, kind string, budget *int64,
	normalize func(p *prepared) (any, error), compute func(t *task, p *prepared) (*R, error)) (*R, error) {
	p, err := prepareAt(h, budget)
	if err != nil {
		return nil, err
	}
	key, err := normalize(p)
	if err != nil {
		return nil, err
	}
	v, err := e.compute(ctx, p, kind, key, func(t *task) (any, error) { return compute(t, p) })
	if err != nil {
		return nil, err
	}
	return v.(*R), nil
}

// Explain computes the explanation a request describes: one of the request
// types of this package, as ParseQuery returns them.
func (e *Engine) Explain(ctx context.Context, h *history.History, req any) (any, error) {
	switch r := req.(type) {
	case PDPRequest:
		return e.PDP(ctx, h, r)
	case SliceRequest:
		return e.Slice(ctx, h, r)
	case RegionalRequest:
		return e.Regional(ctx, h, r)
	case ImportanceRequest:
		return e.Importance(ctx, h, r)
	case ShapleyRequest:
		return e.Shapley(ctx, h, r)
	case PathsRequest:
		return e.Paths(ctx, h, r)
	case AblationRequest:
		return e.Ablation(ctx, h, r)
	case LPIRequest:
		return e.LPI(ctx, h, r)
	case BiasRequest:
		return e.SamplingBias(ctx, h)
	case BudgetsRequest:
		return e.Budgets(ctx, h, r)
	case TradeoffRequest:
		return e.Tradeoff(ctx, h, r)
	}
	return nil, fmt.Errorf("explain: unknown request type %T", req)
}
