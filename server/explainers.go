package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"xbo/explain/fanova"
	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/explain/shapley"
	"xbo/forest"
)

// DefaultExplainers wires the explanation packages into the API:
//
//	pdp        ?param=a[&param=b]&grid=20&samples=1000&alpha=0.05&exact=false&ice=false
//	           PDP with confidence band of a GP fitted to the complete trials
//	           (paper 000, eq. 2–5), in the objective's units.
//	regional   ?param=a&max_splits=&samples=  confidence-splitting tree and
//	           regional PDPs (paper 000, Algorithm 1).
//	importance ?pairs=true&cap_quantile=q  fANOVA of a random forest fitted to
//	           the complete trials (paper 003): variance fractions of main
//	           effects and pairs; with cap_quantile the values are capped at
//	           the quantile q of the best (0.25: importance inside the top 25%,
//	           paper 003 section 3.3).
//	shapley    ?trial=N&tau=1&samples=  Shapley values of trial N's
//	           configuration (any state: a running proposal too) for the GP
//	           mean, standard error and m − τ·s (paper 004); the latest
//	           complete trial by default.
//	paths      ?tau=1&samples=200&method=mc  desirability paths: the same
//	           Shapley values for every model-chosen proposal, each with the
//	           surrogate of its own iteration (the last 200; see explainPaths).
func DefaultExplainers() map[string]Explainer {
	return map[string]Explainer{
		"pdp":        ExplainerFunc(explainPDP),
		"regional":   ExplainerFunc(explainRegional),
		"importance": ExplainerFunc(explainImportance),
		"shapley":    ExplainerFunc(explainShapley),
		"paths":      ExplainerFunc(explainPaths),
	}
}

func queryInt(in *ExplainInput, name string, def, lo int) (int, error) {
	text := in.Query.Get(name)
	if text == "" {
		return def, nil
	}
	v, err := strconv.Atoi(text)
	if err != nil || v < lo {
		return 0, fmt.Errorf("%w: %s=%q must be an integer ≥ %d", ErrBadExplainRequest, name, text, lo)
	}
	return v, nil
}

func queryFloat(in *ExplainInput, name string, def float64) (float64, error) {
	text := in.Query.Get(name)
	if text == "" {
		return def, nil
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not a number", ErrBadExplainRequest, name, text)
	}
	return v, nil
}

func queryBool(in *ExplainInput, name string) (bool, error) {
	text := in.Query.Get(name)
	if text == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(text)
	if err != nil {
		return false, fmt.Errorf("%w: %s=%q is not true or false", ErrBadExplainRequest, name, text)
	}
	return v, nil
}

// queryParams reads ?param=a&param=b or ?param=a,b and checks the names.
func queryParams(in *ExplainInput, most int) ([]string, error) {
	var names []string
	for _, field := range in.Query["param"] {
		for _, n := range strings.Split(field, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 || len(names) > most {
		return nil, fmt.Errorf("%w: give %s with ?param=<name> (parameters: %s)", ErrBadExplainRequest,
			map[bool]string{true: "one parameter", false: "one or two parameters"}[most == 1], strings.Join(in.Space.Names(), ", "))
	}
	for _, n := range names {
		if _, ok := in.Space.Index(n); !ok {
			return nil, fmt.Errorf("%w: unknown parameter %q (parameters: %s)", ErrBadExplainRequest, n, strings.Join(in.Space.Names(), ", "))
		}
	}
	return names, nil
}

func pdpOptions(in *ExplainInput) (pdp.Options, error) {
	var o pdp.Options
	var err error
	if o.GridSize, err = queryInt(in, "grid", pdp.DefaultGridSize, 2); err != nil {
		return o, err
	}
	if o.Samples, err = queryInt(in, "samples", pdp.DefaultSamples, 1); err != nil {
		return o, err
	}
	if o.GridSize > 200 || o.Samples > 20000 {
		return o, fmt.Errorf("%w: grid ≤ 200 and samples ≤ 20000 keep a request bounded", ErrBadExplainRequest)
	}
	if o.Alpha, err = queryFloat(in, "alpha", pdp.DefaultAlpha); err != nil {
		return o, err
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return o, fmt.Errorf("%w: alpha %v must lie in (0, 1)", ErrBadExplainRequest, o.Alpha)
	}
	if o.Exact, err = queryBool(in, "exact"); err != nil {
		return o, err
	}
	if o.KeepICE, err = queryBool(in, "ice"); err != nil {
		return o, err
	}
	o.Seed = 1
	return o, nil
}

func explainPDP(ctx context.Context, in *ExplainInput) (any, error) {
	names, err := queryParams(in, 2)
	if err != nil {
		return nil, err
	}
	o, err := pdpOptions(in)
	if err != nil {
		return nil, err
	}
	model, err := in.GP()
	if err != nil {
		return nil, err
	}
	return pdp.Compute(ctx, model, in.Space, names, o)
}

func explainRegional(ctx context.Context, in *ExplainInput) (any, error) {
	names, err := queryParams(in, 1)
	if err != nil {
		return nil, err
	}
	o, err := pdpOptions(in)
	if err != nil {
		return nil, err
	}
	o.KeepVariance = true
	splits, err := queryInt(in, "max_splits", 0, 0)
	if err != nil {
		return nil, err
	}
	model, err := in.GP()
	if err != nil {
		return nil, err
	}
	j, _ := in.Space.Index(names[0])
	ice, err := pdp.NewICE(ctx, model, in.Space, []int{j}, o)
	if err != nil {
		return nil, err
	}
	return regional.Explain(ctx, ice, in.BestU(), regional.Options{MaxSplits: splits})
}

func explainImportance(ctx context.Context, in *ExplainInput) (any, error) {
	pairs := true
	if in.Query.Get("pairs") != "" {
		var err error
		if pairs, err = queryBool(in, "pairs"); err != nil {
			return nil, err
		}
	}
	y := in.Y
	if in.Query.Get("cap_quantile") != "" {
		q, err := queryFloat(in, "cap_quantile", 0)
		if err != nil {
			return nil, err
		}
		if !(q > 0 && q <= 1) {
			return nil, fmt.Errorf("%w: cap_quantile %v must lie in (0, 1]", ErrBadExplainRequest, q)
		}
		if y, _, err = fanova.CapQuantile(in.Y, q, in.Space.Sign() < 0); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadExplainRequest, err)
		}
	}
	f, err := forest.Fit(in.X, y, forest.Options{Levels: in.Space.Levels(), Seed: 1})
	if err != nil {
		return nil, err
	}
	mass, err := fanova.InactiveMass(in.Space)
	if err != nil {
		return nil, err
	}
	e, err := fanova.New(f, fanova.Options{InactiveMass: mass})
	if err != nil {
		return nil, err
	}
	dec, err := e.Decompose(pairs)
	if err != nil {
		return nil, err
	}
	return dec.Importance(in.Space.Names())
}

func explainShapley(ctx context.Context, in *ExplainInput) (any, error) {
	number := in.Trials[len(in.Trials)-1].Number
	var u []float64
	if text := in.Query.Get("trial"); text != "" {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: trial=%q is not a trial number", ErrBadExplainRequest, text)
		}
		number = n
	}
	for i, t := range in.Trials {
		if t.Number == number {
			u = in.X[i]
		}
	}
	if u == nil && in.Lookup != nil {
		// A proposal still running (or failed): explain why it was chosen.
		t, err := in.Lookup(number)
		if err != nil {
			return nil, fmt.Errorf("%w: trial %d: %v", ErrBadExplainRequest, number, err)
		}
		vals, err := in.Space.FromMap(t.Params)
		if err != nil {
			return nil, fmt.Errorf("trial %d: %w", number, err)
		}
		if u, err = in.Space.Encode(vals); err != nil {
			return nil, fmt.Errorf("trial %d: %w", number, err)
		}
	}
	if u == nil {
		return nil, fmt.Errorf("%w: no trial %d in this study", ErrBadExplainRequest, number)
	}
	tau, err := queryFloat(in, "tau", 1)
	if err != nil {
		return nil, err
	}
	samples, err := queryInt(in, "samples", 0, 0)
	if err != nil {
		return nil, err
	}
	model, err := in.GP()
	if err != nil {
		return nil, err
	}
	f, err := shapley.LCB(model, tau)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadExplainRequest, err)
	}
	ex, err := shapley.Explain(ctx, f, u, shapley.Options{Space: in.Space, Samples: samples, Seed: 1,
		BackgroundSize: min(1000*in.Space.Dim(), 4000)})
	if err != nil {
		return nil, err
	}
	return map[string]any{"trial": number, "explanation": ex}, nil
}
