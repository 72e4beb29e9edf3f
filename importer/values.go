package importer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"xbo/space"
)

// spaceChoices lists a categorical's choices for xbo's space: typed values
// where the source gave numbers or booleans, names otherwise. Should two
// typed choices share a text form with another choice (true and "true"),
// the parameter keeps the names, which are distinct, and says so.
func (b *builder) spaceChoices(rp *rawParam) []any {
	out := make([]any, len(rp.choices))
	seen := map[string]bool{}
	clash := false
	for k, name := range rp.choices {
		out[k] = rp.choiceValue(name)
		text := space.ChoiceLabel(out[k])
		clash = clash || seen[text]
		seen[text] = true
	}
	if clash {
		b.warnf("parameter %q: its choices %s are kept as strings, since some are written alike once typed", rp.name, quoteAll(rp.choices))
		for k, name := range rp.choices {
			out[k] = name
		}
		rp.typed = nil
	}
	return out
}

// nameOf names the choice a trial's JSON value stands for: a number or a
// boolean equal to a typed choice is that choice (16 and 16.0 alike; true
// is the choice true, whatever name the source gave it), anything else is
// named by choiceName.
func (rp *rawParam) nameOf(v any) (string, error) {
	if tv, ok := typedChoice(v); ok {
		for _, name := range rp.choices {
			if c, has := rp.typed[name]; has && c == tv {
				return name, nil
			}
		}
	}
	return choiceName(v)
}

// choiceValue is the value in xbo's space of the choice of that name.
func (rp *rawParam) choiceValue(name string) any {
	if v, ok := rp.typed[name]; ok {
		return v
	}
	return name
}

// naturalOf converts a raw value to the natural value of parameter p, which
// was built from rp: a categorical's value is matched by name against the
// source's choices, which are the space's choices in the same order.
func naturalOf(p *space.Param, rp *rawParam, v rawValue) (float64, error) {
	if p.Type == space.Categorical {
		text := v.text
		if !v.isCat {
			text = strconv.FormatFloat(v.num, 'g', -1, 64)
		}
		k := slices.Index(rp.choices, text)
		if k < 0 {
			return 0, fmt.Errorf("parameter %q: %q is not one of its choices %v", p.Name, text, rp.choices)
		}
		return float64(k), nil
	}
	if v.isCat {
		f, err := strconv.ParseFloat(strings.TrimSpace(v.text), 64)
		if err != nil {
			return 0, fmt.Errorf("parameter %q: %q is not a number", p.Name, v.text)
		}
		return onGrid(p, f), nil
	}
	return onGrid(p, v.num), nil
}

// onGrid reads a stepped parameter's value as its grid value, as the
// service does (Optuna's low + k·step is 0.30000000000000004 for 0.3);
// a value off the grid is left for Validate to report.
func onGrid(p *space.Param, v float64) float64 {
	if !p.Stepped() || p.CheckValue(v) != nil {
		return v
	}
	return p.GridValue(p.GridIndex(v))
}
