package explain

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"xbo/space"
)

// ParseQuery reads the query parameters of GET …/explain/{kind} into the
// kind's request. The parameter names are the JSON names of the request's
// fields (docs/api.md lists them with their limits); the surrogate is chosen
// with surrogate, kernel, trees and seed. Unknown parameters, repeated
// single-valued ones and malformed values are errors wrapping ErrInvalid.
func ParseQuery(kind string, sp *space.Space, q map[string][]string) (any, error) {
	// The objective is chosen before the request is read (Objective).
	p := &queryParser{q: q, used: map[string]bool{ObjectiveParam: true}}
	var req any
	switch kind {
	case "pdp":
		r := PDPRequest{Params: p.params(), Grid: p.int("grid"), Samples: p.int("samples"), Alpha: p.float("alpha"),
			Band: p.str("band"), ICE: p.bool("ice"), Surrogate: p.surrogate(), Budget: p.budget()}
		if p.bool("exact") {
			if r.Band != "" && r.Band != BandExact {
				p.fail("exact=true contradicts band=%s", r.Band)
			}
			r.Band = BandExact
		}
		req = r
	case "slice":
		req = SliceRequest{Param: p.one(p.params()), Point: p.str("point"), Grid: p.int("grid"), Alpha: p.float("alpha"),
			Surrogate: p.surrogate(), Budget: p.budget()}
	case "regional":
		req = RegionalRequest{Param: p.one(p.params()), Grid: p.int("grid"), Samples: p.int("samples"), Alpha: p.float("alpha"),
			Band: p.str("band"), MaxSplits: p.int("max_splits"), MaxDepth: p.int("max_depth"), MinSize: p.int("min_size"),
			MinImprovement: p.float("min_improvement"), Criterion: p.str("criterion"), MinDelta: p.float("min_delta"), Surrogate: p.surrogate(), Budget: p.budget()}
	case "importance":
		r := ImportanceRequest{Method: p.str("method"), CapQuantile: p.float("cap_quantile"), Trees: p.int("trees"),
			Seed: p.uint("seed"), Samples: p.int("samples"), Posterior: p.int("posterior"), Refits: p.int("refits"),
			Budget: p.budget(), Outliers: p.str("outliers")}
		if p.has("surrogate") || p.has("kernel") {
			r.Surrogate = &Surrogate{Kind: p.str("surrogate"), Kernel: p.str("kernel"), Seed: r.Seed}
		}
		if p.has("cap_quantile") && !(r.CapQuantile > 0) {
			p.fail("cap_quantile %v must lie in (0, 1]", r.CapQuantile)
		}
		if p.has("pairs") {
			v := p.bool("pairs")
			r.Pairs = &v
		}
		if p.has("cap_value") {
			v := p.float("cap_value")
			r.CapValue = &v
		}
		req = r
	case "shapley":
		r := ShapleyRequest{Point: p.str("point"), Target: p.str("target"), Tau: p.optFloat("tau"), SE: p.str("se"), Method: p.str("method"),
			Samples: p.int("samples"), MaxSamples: p.int("max_samples"), Background: p.int("background"),
			Local: p.float("local"), Baseline: p.str("baseline"), Level: p.float("level"), Surrogate: p.surrogate(),
			Budget: p.budget()}
		if p.has("trial") {
			n := p.int64("trial")
			r.Trial = &n
		}
		req = r
	case "paths":
		req = PathsRequest{Tau: p.optFloat("tau"), SE: p.str("se"), Samples: p.int("samples"), Method: p.str("method"),
			Proposals: p.int("proposals"), Background: p.int("background"), Level: p.float("level")}
	case "ablation":
		req = AblationRequest{Source: p.str("source"), Target: p.str("target"), Output: p.str("output"),
			Tau: p.optFloat("tau"), Surrogate: p.surrogate(), Budget: p.budget()}
	case "lpi":
		req = LPIRequest{Point: p.str("point"), Grid: p.int("grid"), Tau: p.optFloat("tau"), HStat: p.bool("hstat"),
			HPoints: p.int("hpoints"), Surrogate: p.surrogate(), Budget: p.budget()}
	case "bias":
		req = BiasRequest{}
	case "budgets":
		req = BudgetsRequest{Budgets: p.budgets(), Level: p.float("level")}
	case "tradeoff":
		r := TradeoffRequest{Params: p.params(), Grid: p.int("grid"), Samples: p.int("samples"), Alpha: p.float("alpha"),
			Method: p.str("method")}
		if p.has("trial") {
			n := p.int64("trial")
			r.Trial = &n
		}
		req = r
	default:
		return nil, invalidf("unknown explanation kind %q (known: %s)", kind, strings.Join(Kinds, ", "))
	}
	var unknown []string
	for k := range q {
		if !p.used[k] {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		p.fail("unknown query parameter(s) %s for explain/%s", strings.Join(unknown, ", "), kind)
	}
	if p.err != nil {
		return nil, p.err
	}
	return req, nil
}

// queryParser reads typed query parameters, keeping the first error.
type queryParser struct {
	q    map[string][]string
	used map[string]bool
	err  error
}

func (p *queryParser) fail(format string, a ...any) {
	if p.err == nil {
		p.err = invalidf(format, a...)
	}
}

func (p *queryParser) has(name string) bool {
	_, ok := p.q[name]
	return ok
}

// str returns a single-valued parameter ("" when absent).
func (p *queryParser) str(name string) string {
	p.used[name] = true
	vals, ok := p.q[name]
	if !ok {
		return ""
	}
	if len(vals) > 1 {
		p.fail("%s is given %d times", name, len(vals))
		return ""
	}
	return vals[0]
}

func (p *queryParser) int(name string) int {
	text := p.str(name)
	if text == "" {
		return 0
	}
	v, err := strconv.Atoi(text)
	if err != nil {
		p.fail("%s=%s is not an integer", name, strconv.Quote(text))
	}
	return v
}

func (p *queryParser) int64(name string) int64 {
	text := p.str(name)
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil || strings.HasPrefix(text, "+") {
		p.fail("%s=%s is not an integer", name, strconv.Quote(text))
	}
	return v
}

func (p *queryParser) uint(name string) uint64 {
	text := p.str(name)
	if text == "" {
		return 0
	}
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		p.fail("%s=%s is not a non-negative integer", name, strconv.Quote(text))
	}
	return v
}

func (p *queryParser) float(name string) float64 {
	text := p.str(name)
	if text == "" {
		return 0
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		p.fail("%s=%s is not a finite number", name, strconv.Quote(text))
	}
	return v
}

func (p *queryParser) optFloat(name string) *float64 {
	if !p.has(name) {
		p.used[name] = true
		return nil
	}
	v := p.float(name)
	return &v
}

func (p *queryParser) bool(name string) bool {
	text := p.str(name)
	if text == "" {
		return false
	}
	v, err := strconv.ParseBool(text)
	if err != nil {
		p.fail("%s=%s is not true or false", name, strconv.Quote(text))
	}
	return v
}

// params reads ?param=a&param=b or ?param=a,b.
func (p *queryParser) params() []string {
	p.used["param"] = true
	var names []string
	for _, field := range p.q["param"] {
		for _, n := range strings.Split(field, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}

func (p *queryParser) one(names []string) string {
	if len(names) != 1 {
		p.fail("give exactly one parameter with ?param=<name>")
		return ""
	}
	return names[0]
}

// budget reads ?budget=<step> (nil when absent).
func (p *queryParser) budget() *int64 {
	if !p.has("budget") {
		p.used["budget"] = true
		return nil
	}
	b := p.int64("budget")
	if b < 0 {
		p.fail("budget=%d must be a step ≥ 0", b)
	}
	return &b
}

// budgets reads ?budget=1&budget=3 or ?budget=1,3.
func (p *queryParser) budgets() []int64 {
	p.used["budget"] = true
	var out []int64
	for _, field := range p.q["budget"] {
		for _, text := range strings.Split(field, ",") {
			text = strings.TrimSpace(text)
			b, err := strconv.ParseInt(text, 10, 64)
			if err != nil || b < 0 || strings.HasPrefix(text, "+") {
				p.fail("budget=%s is not a step (an integer ≥ 0)", strconv.Quote(text))
			}
			out = append(out, b)
		}
	}
	return out
}

func (p *queryParser) surrogate() Surrogate {
	s := Surrogate{Kind: p.str("surrogate"), Kernel: p.str("kernel"), Trees: p.int("trees"), Seed: p.uint("seed"), Outliers: p.str("outliers")}
	if s.Kind != "" && !slices.Contains([]string{SurrogateGP, SurrogateForest}, s.Kind) {
		p.fail("surrogate=%s: want gp or forest", strconv.Quote(s.Kind))
	}
	return s
}
