package importer

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"xbo/space"
)

// csParam is a ConfigSpace hyperparameter as imported.
type csParam struct {
	raw     *rawParam
	ordinal []string // an ordinal's sequence when imported as a categorical
}

type configSpace struct {
	params map[string]*csParam
}

func parseConfigSpace(data []byte, b *builder) (*configSpace, error) {
	doc, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	hps, ok := top["hyperparameters"].([]any)
	if !ok {
		return nil, errors.New(`no "hyperparameters" list (is this ConfigSpace's JSON format?)`)
	}
	cs := &configSpace{params: map[string]*csParam{}}
	for i, h := range hps {
		obj, ok := h.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("hyperparameter #%d is not an object", i+1)
		}
		p, err := parseHyperparameter(obj, b)
		if err != nil {
			name, _ := obj["name"].(string)
			return nil, fmt.Errorf("hyperparameter #%d %q: %w", i+1, name, err)
		}
		if err := b.addParam(p.raw); err != nil {
			return nil, err
		}
		cs.params[p.raw.name] = p
	}
	conds, _ := top["conditions"].([]any)
	for i, c := range conds {
		obj, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("condition #%d is not an object", i+1)
		}
		if err := cs.applyCondition(obj, b); err != nil {
			return nil, fmt.Errorf("condition #%d: %w", i+1, err)
		}
	}
	if forb, _ := top["forbiddens"].([]any); len(forb) > 0 {
		b.warnf("configspace.json has %d forbidden clauses; xbo spaces have none, so explanations average over forbidden configurations too", len(forb))
	}
	return cs, nil
}

func parseHyperparameter(obj map[string]any, b *builder) (*csParam, error) {
	name, ok := obj["name"].(string)
	if !ok || name == "" {
		return nil, errors.New("no name")
	}
	typ, _ := obj["type"].(string)
	rp := &rawParam{name: name}
	def, hasDef := obj["default"]
	if !hasDef {
		def, hasDef = obj["default_value"]
	}
	num := func(key string) (float64, bool, error) {
		v, present := obj[key]
		if !present || v == nil {
			return 0, false, nil
		}
		f, ok := numberOf(v)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false, fmt.Errorf("%s %v is not a finite number", key, v)
		}
		return f, true, nil
	}
	logScale := false
	if lg, present := obj["log"]; present && lg != nil {
		bv, ok := lg.(bool)
		if !ok {
			return nil, fmt.Errorf("log %v is not a boolean", lg)
		}
		logScale = bv
	}
	switch typ {
	case "uniform_float", "uniform_int", "normal_float", "normal_int", "beta_float", "beta_int":
		rp.typ = space.Float
		if strings.HasSuffix(typ, "_int") {
			rp.typ = space.Int
		}
		rp.log = logScale
		lo, hasLo, err := num("lower")
		if err != nil {
			return nil, err
		}
		hi, hasHi, err := num("upper")
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(typ, "uniform_") && (!hasLo || !hasHi) {
			return nil, errors.New("lower and upper are required")
		}
		if strings.HasPrefix(typ, "normal_") && (!hasLo || !hasHi) {
			// Old ConfigSpace: an unbounded normal. Take mu ± 3 sigma (on
			// the log scale for log parameters); observed values widen it.
			mu, hasMu, err := num("mu")
			if err != nil {
				return nil, err
			}
			sigma, hasSigma, err := num("sigma")
			if err != nil {
				return nil, err
			}
			if !hasMu || !hasSigma || sigma <= 0 {
				return nil, errors.New("a normal hyperparameter needs lower/upper or mu and a positive sigma")
			}
			lo, hi = mu-3*sigma, mu+3*sigma
			if logScale {
				lo, hi = math.Exp(lo), math.Exp(hi)
			}
			if rp.typ == space.Int {
				lo, hi = math.Floor(lo), math.Ceil(hi)
			}
			b.warnf("parameter %q: %s without bounds; imported as uniform over mu ± 3 sigma = [%v, %v]", name, typ, lo, hi)
		} else if !strings.HasPrefix(typ, "uniform_") {
			b.warnf("parameter %q: %s prior is not kept; imported as uniform over its bounds [%v, %v]", name, typ, lo, hi)
		}
		if !hasLo && !hasHi && strings.HasPrefix(typ, "beta_") {
			return nil, errors.New("lower and upper are required")
		}
		if lo > hi {
			return nil, fmt.Errorf("lower %v is above upper %v", lo, hi)
		}
		if rp.log && lo <= 0 {
			return nil, fmt.Errorf("log scale with lower %v <= 0", lo)
		}
		rp.low, rp.high = lo, hi
		if q, has, _ := num("q"); has && q > 0 {
			// ConfigSpace rounds to multiples of q: a stepped range from
			// lower when lower is one of them (build checks upper), no
			// grid xbo can hold on a log scale.
			if k := lo / q; !rp.log && strings.HasPrefix(typ, "uniform_") && math.Abs(k-math.Round(k)) < 1e-8 {
				rp.step = q
			} else {
				b.warnf("parameter %q: quantization q = %v is not kept (xbo's steps start at lower and are not on a log scale)", name, q)
			}
		}
		if hasDef && def != nil {
			if f, ok := numberOf(def); ok && f >= lo && f <= hi {
				rp.def = f
			}
		}
		return &csParam{raw: rp}, nil
	case "categorical":
		list, ok := obj["choices"].([]any)
		if !ok || len(list) == 0 {
			return nil, errors.New("no choices")
		}
		choices, err := choiceNames(list)
		if err != nil {
			return nil, err
		}
		rp.typ = space.Categorical
		rp.choices, rp.typed = choices, choiceTypes(list)
		if w, present := obj["weights"]; present && w != nil {
			b.warnf("parameter %q: choice weights are not kept (xbo samples every choice equally)", name)
		}
		if hasDef {
			if d, err := choiceName(def); err == nil && slices.Contains(choices, d) {
				rp.def = d
			}
		}
		return &csParam{raw: rp}, nil
	case "ordinal":
		list, ok := obj["sequence"].([]any)
		if !ok || len(list) == 0 {
			return nil, errors.New("no sequence")
		}
		names, err := choiceNames(list)
		if err != nil {
			return nil, err
		}
		if lo, hi, ok := consecutiveInts(list); ok && hi > lo {
			rp.typ, rp.low, rp.high = space.Int, float64(lo), float64(hi)
			if f, ok := numberOf(def); ok && hasDef {
				rp.def = f
			}
			return &csParam{raw: rp}, nil
		}
		rp.typ = space.Categorical
		rp.choices, rp.typed = names, choiceTypes(list)
		if hasDef {
			if d, err := choiceName(def); err == nil && slices.Contains(names, d) {
				rp.def = d
			}
		}
		b.warnf("parameter %q: ordinal imported as a categorical; the order %s is not kept", name, strings.Join(names, " < "))
		return &csParam{raw: rp, ordinal: names}, nil
	case "constant", "unparametrized":
		v, present := obj["value"]
		if !present {
			return nil, errors.New("constant without a value")
		}
		c, err := choiceName(v)
		if err != nil {
			return nil, err
		}
		rp.typ = space.Categorical
		rp.choices, rp.typed = []string{c}, choiceTypes([]any{v})
		rp.def = c
		return &csParam{raw: rp}, nil
	case "":
		return nil, errors.New("no type")
	}
	return nil, fmt.Errorf("unsupported hyperparameter type %q", typ)
}

func choiceNames(list []any) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, c := range list {
		n, err := choiceName(c)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("choice %q appears twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// consecutiveInts reports whether a sequence is lo, lo+1, ..., hi.
func consecutiveInts(list []any) (int, int, bool) {
	var prev int
	for i, v := range list {
		k, ok := intOf(v)
		if !ok || (i > 0 && k != prev+1) {
			return 0, 0, false
		}
		prev = k
	}
	first, _ := intOf(list[0])
	return first, prev, true
}
