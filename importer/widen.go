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
	for _, rt := range b.trials {
		if err := b.observe(rt); err != nil {
			return err
		}
	}
	b.widened()
	return nil
}

// widening is what the trials seen so far say about one parameter's
// domain: how many values lie outside its declared range and how far,
// which values its declared choices lack, and the first trial with a
// non-integer value for an integer. It is gathered one trial at a time
// (observe), so that a table read twice, once for its space and once for
// its rows, need not hold its trials in between.
type widening struct {
	outside              int
	firstOutside         float64
	lowest, highest      float64 // of the values outside
	newChoices           []string
	nonInteger           bool
	firstNonIntegerTrial int
	nonIntegerValue      float64
}

// observe takes one trial's values into its parameters' widenings.
func (b *builder) observe(rt rawTrial) error {
	for _, rp := range b.params {
		v, ok := rt.values[rp.name]
		if !ok {
			continue
		}
		w := &rp.seen
		if rp.typ == space.Categorical {
			text := v.text
			if !v.isCat {
				text = strconv.FormatFloat(v.num, 'g', -1, 64)
			}
			if !slices.Contains(rp.choices, text) {
				rp.choices = append(rp.choices, text)
				w.newChoices = append(w.newChoices, text)
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
		if rp.typ == space.Int && x != math.Trunc(x) && !w.nonInteger {
			w.nonInteger, w.firstNonIntegerTrial, w.nonIntegerValue = true, rt.number, x
		}
		if x < rp.low || x > rp.high {
			if w.outside == 0 {
				w.firstOutside, w.lowest, w.highest = x, x, x
			}
			w.outside++
			w.lowest, w.highest = math.Min(w.lowest, x), math.Max(w.highest, x)
		}
	}
	return nil
}

// widened widens every parameter's domain as its widening says, and
// reports each change by name.
func (b *builder) widened() {
	for _, rp := range b.params {
		w := &rp.seen
		if w.nonInteger {
			b.warnf("parameter %q: trial %d has the non-integer value %v; the parameter is imported as a float", rp.name, w.firstNonIntegerTrial, w.nonIntegerValue)
			rp.typ = space.Float
		}
		if len(w.newChoices) > 0 {
			b.warnf("parameter %q: trials use values %s that the declared choices lack; they were added as choices", rp.name, quoteAll(w.newChoices))
		}
		if w.outside > 0 {
			lo, hi := rp.low, rp.high
			rp.low = math.Min(rp.low, w.lowest)
			rp.high = math.Max(rp.high, w.highest)
			if rp.typ == space.Int {
				rp.low, rp.high = math.Floor(rp.low), math.Ceil(rp.high)
			}
			msg := fmt.Sprintf("parameter %q: %d trial values lie outside the declared range [%v, %v] (e.g. %v); the range is widened to [%v, %v]", rp.name, w.outside, lo, hi, w.firstOutside, rp.low, rp.high)
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
		rp.seen = widening{}
	}
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}
