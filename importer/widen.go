package importer

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"xbo/space"
)

// widen makes every parameter's domain hold every value a trial recorded
// for it, and reports each change by name.
func (b *builder) widen() error {
	for _, rp := range b.params {
		var outside []float64
		var newChoices []string
		for _, rt := range b.trials {
			v, ok := rt.values[rp.name]
			if !ok {
				continue
			}
			if rp.typ == space.Categorical {
				text := v.text
				if !v.isCat {
					text = strconv.FormatFloat(v.num, 'g', -1, 64)
				}
				if !slices.Contains(rp.choices, text) {
					rp.choices = append(rp.choices, text)
					newChoices = append(newChoices, text)
				}
				continue
			}
			x := v.num
			if v.isCat {
				f, err := strconv.ParseFloat(strings.TrimSpace(v.text), 64)
				if err != nil {
					return fmt.Errorf("trial %d: parameter %q: %q is not a number", rt.number, rp.name, v.text)
				}
				x = f
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("trial %d: parameter %q: value %v is not finite", rt.number, rp.name, x)
			}
			if rp.typ == space.Int && x != math.Trunc(x) {
				b.warnf("parameter %q: trial %d has the non-integer value %v; the parameter is imported as a float", rp.name, rt.number, x)
				rp.typ = space.Float
			}
			if x < rp.low || x > rp.high {
				outside = append(outside, x)
			}
		}
		if len(newChoices) > 0 {
			b.warnf("parameter %q: trials use values %s that the declared choices lack; they were added as choices", rp.name, quoteAll(newChoices))
		}
		if len(outside) > 0 {
			lo, hi := rp.low, rp.high
			for _, x := range outside {
				rp.low = math.Min(rp.low, x)
				rp.high = math.Max(rp.high, x)
			}
			if rp.typ == space.Int {
				rp.low, rp.high = math.Floor(rp.low), math.Ceil(rp.high)
			}
			msg := fmt.Sprintf("parameter %q: %d trial values lie outside the declared range [%v, %v] (e.g. %v); the range is widened to [%v, %v]", rp.name, len(outside), lo, hi, outside[0], rp.low, rp.high)
			if rp.log && rp.low <= 0 {
				rp.log = false
				msg += " and put on a linear scale, since it now reaches values <= 0"
			}
			b.warnings = append(b.warnings, msg)
		}
		if rp.typ != space.Categorical && rp.low >= rp.high {
			// A single-valued range (Optuna allows low == high, ConfigSpace
			// constants): xbo needs low < high, and a one-level categorical
			// says the same thing.
			only := strconv.FormatFloat(rp.low, 'g', -1, 64)
			b.warnf("parameter %q takes the single value %s; imported as a categorical with one choice", rp.name, only)
			rp.typ = space.Categorical
			rp.choices = []string{only}
			rp.typed = map[string]any{only: rp.low}
			if rp.def != nil {
				rp.def = only
			}
		}
	}
	return nil
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}
