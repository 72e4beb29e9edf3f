package importer

import (
	"fmt"
	"slices"
	"strings"

	"xbo/space"
)

// applyCondition maps a ConfigSpace condition onto xbo's "parent takes one of
// these values". EQ and IN map directly; NEQ, LT and GT map when the parent
// has finitely many values (categorical, ordinal, integer) by listing the
// values that satisfy them; AND and OR map when all their parts concern the
// same parent (intersection, union). Anything else leaves the child
// unconditional, reported by name, with its default filling the trials where
// SMAC had it inactive.
func (cs *configSpace) applyCondition(obj map[string]any, b *builder) error {
	childName, _ := obj["child"].(string)
	child, ok := cs.params[childName]
	if !ok {
		return fmt.Errorf("child %q is not a hyperparameter", childName)
	}
	parent, values, why := cs.conditionValues(obj)
	if why != "" {
		child.raw.imputeDefault = true
		b.warnf("parameter %q: condition %s cannot be expressed (%s); imported as unconditional", childName, describeCondition(obj), why)
		return nil
	}
	if len(values) == 0 {
		child.raw.imputeDefault = true
		b.warnf("parameter %q: condition %s holds for no value of %q; imported as unconditional", childName, describeCondition(obj), parent.raw.name)
		return nil
	}
	child.raw.cond = &space.Condition{Parent: parent.raw.name, Values: values}
	return nil
}

// conditionValues returns the parent and the parent values under which the
// condition holds, or a reason why that is not expressible.
func (cs *configSpace) conditionValues(obj map[string]any) (*csParam, []any, string) {
	typ, _ := obj["type"].(string)
	switch typ {
	case "AND", "OR":
		parts, _ := obj["conditions"].([]any)
		if len(parts) == 0 {
			return nil, nil, typ + " without conditions"
		}
		var parent *csParam
		var acc []any
		for i, part := range parts {
			po, ok := part.(map[string]any)
			if !ok {
				return nil, nil, "malformed part"
			}
			p, vals, why := cs.conditionValues(po)
			if why != "" {
				return nil, nil, why
			}
			if parent != nil && p != parent {
				return nil, nil, fmt.Sprintf("its parts concern different parents %q and %q, and an xbo condition has one parent", parent.raw.name, p.raw.name)
			}
			parent = p
			if i == 0 {
				acc = vals
				continue
			}
			if typ == "AND" {
				acc = slices.DeleteFunc(acc, func(v any) bool { return !containsValue(vals, v) })
			} else {
				for _, v := range vals {
					if !containsValue(acc, v) {
						acc = append(acc, v)
					}
				}
			}
		}
		return parent, cs.ordered(parent, acc), ""
	}
	parentName, _ := obj["parent"].(string)
	parent, ok := cs.params[parentName]
	if !ok {
		return nil, nil, fmt.Sprintf("parent %q is not a hyperparameter", parentName)
	}
	domain, finite := cs.domain(parent)
	toValue := func(v any) (any, bool) {
		if parent.raw.typ == space.Categorical {
			n, err := choiceName(v)
			return n, err == nil
		}
		f, ok := numberOf(v)
		return f, ok
	}
	switch typ {
	case "EQ", "NEQ", "LT", "GT":
		v, ok := toValue(obj["value"])
		if !ok {
			return nil, nil, fmt.Sprintf("value %v does not fit parent %q", obj["value"], parentName)
		}
		if typ == "EQ" {
			return parent, []any{v}, ""
		}
		if !finite {
			return nil, nil, fmt.Sprintf("%s on the continuous parameter %q", typ, parentName)
		}
		var out []any
		pos := slices.IndexFunc(domain, func(d any) bool { return d == v })
		for i, d := range domain {
			keep := false
			switch typ {
			case "NEQ":
				keep = d != v
			case "LT", "GT":
				if parent.raw.typ == space.Categorical && parent.ordinal == nil {
					return nil, nil, fmt.Sprintf("%s on the unordered categorical %q", typ, parentName)
				}
				if parent.ordinal != nil {
					if pos < 0 {
						return nil, nil, fmt.Sprintf("value %v is not in the sequence of %q", v, parentName)
					}
					keep = (typ == "LT" && i < pos) || (typ == "GT" && i > pos)
				} else {
					x, y := d.(float64), v.(float64)
					keep = (typ == "LT" && x < y) || (typ == "GT" && x > y)
				}
			}
			if keep {
				out = append(out, d)
			}
		}
		return parent, out, ""
	case "IN":
		list, ok := obj["values"].([]any)
		if !ok {
			return nil, nil, "IN without values"
		}
		var out []any
		for _, x := range list {
			v, ok := toValue(x)
			if !ok {
				return nil, nil, fmt.Sprintf("value %v does not fit parent %q", x, parentName)
			}
			if !containsValue(out, v) {
				out = append(out, v)
			}
		}
		return parent, cs.ordered(parent, out), ""
	}
	return nil, nil, fmt.Sprintf("unknown condition type %q", typ)
}

// domain lists a parameter's values when there are finitely many (at most
// 10 000 for integers).
func (cs *configSpace) domain(p *csParam) ([]any, bool) {
	switch p.raw.typ {
	case space.Categorical:
		out := make([]any, len(p.raw.choices))
		for i, c := range p.raw.choices {
			out[i] = c
		}
		return out, true
	case space.Int:
		if p.raw.high-p.raw.low > 10000 {
			return nil, false
		}
		var out []any
		for k := p.raw.low; k <= p.raw.high; k++ {
			out = append(out, k)
		}
		return out, true
	}
	return nil, false
}

// ordered puts condition values in the parent's own order.
func (cs *configSpace) ordered(p *csParam, vals []any) []any {
	dom, ok := cs.domain(p)
	if !ok {
		return vals
	}
	var out []any
	for _, d := range dom {
		if containsValue(vals, d) {
			out = append(out, d)
		}
	}
	for _, v := range vals {
		if !containsValue(out, v) {
			out = append(out, v) // values outside the domain stay, and fail loudly later
		}
	}
	return out
}

func containsValue(list []any, v any) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func describeCondition(obj map[string]any) string {
	typ, _ := obj["type"].(string)
	switch typ {
	case "AND", "OR":
		parts, _ := obj["conditions"].([]any)
		descs := make([]string, 0, len(parts))
		for _, p := range parts {
			if po, ok := p.(map[string]any); ok {
				descs = append(descs, describeCondition(po))
			}
		}
		return "(" + strings.Join(descs, " "+typ+" ") + ")"
	case "IN":
		return fmt.Sprintf("IN on %q %v", obj["parent"], obj["values"])
	}
	return fmt.Sprintf("%s on %q %v", typ, obj["parent"], obj["value"])
}
