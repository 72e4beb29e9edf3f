package importer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"xbo/history"
	"xbo/space"
)

// inferAllConditions gives every parameter that some complete trials lack a
// condition on another parameter, when the data determine one (see
// inferCondition); the rest stay unconditional and their incomplete trials
// are reported when the rows are validated.
func (b *builder) inferAllConditions() {
	ref := make([]int, 0, len(b.trials))
	for i, t := range b.trials {
		if t.state == history.Complete {
			ref = append(ref, i)
		}
	}
	if len(ref) == 0 {
		for i := range b.trials {
			ref = append(ref, i)
		}
	}
	present := map[string]int{}
	for _, i := range ref {
		for name := range b.trials[i].values {
			present[name]++
		}
	}
	for _, rp := range b.params {
		if rp.cond != nil || present[rp.name] == len(ref) {
			continue
		}
		cond := b.inferCondition(rp, ref, present)
		if cond == nil {
			b.warnf("parameter %q is missing from %d of %d complete trials and no other parameter's value explains when it is used; it is imported as unconditional", rp.name, len(ref)-present[rp.name], len(ref))
			continue
		}
		rp.cond = cond
		b.warnf("parameter %q: Optuna records no conditions; inferred from %d trials that it is active only when %q is %s", rp.name, len(ref), cond.Parent, describeValues(cond.Values))
	}
}

// inferCondition looks for a parent P (categorical or int) such that in the
// reference trials the child is present exactly when P is present and takes
// a value from a set A that is disjoint from the values P takes when the
// child is absent (B, which must be non-empty). Requiring B ≠ ∅ means P is
// present in strictly more trials than the child, so inferred conditions can
// never form a cycle. Categorical parents are preferred, then parents seen in
// more trials (closer to the root).
func (b *builder) inferCondition(child *rawParam, ref []int, present map[string]int) *space.Condition {
	type candidate struct {
		p      *rawParam
		values []rawValue
	}
	var best *candidate
	for _, p := range b.params {
		if p == child || p.typ == space.Float || present[p.name] <= present[child.name] {
			continue
		}
		with := map[string]rawValue{}
		without := map[string]bool{}
		ok := true
		for _, i := range ref {
			vals := b.trials[i].values
			pv, hasP := vals[p.name]
			_, hasC := vals[child.name]
			switch {
			case hasC && !hasP:
				ok = false
			case hasC:
				with[valueKey(pv)] = pv
			case hasP:
				without[valueKey(pv)] = true
			}
			if !ok {
				break
			}
		}
		if !ok || len(with) == 0 || len(without) == 0 {
			continue
		}
		for k := range with {
			if without[k] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		c := &candidate{p: p}
		for _, v := range with {
			c.values = append(c.values, v)
		}
		better := best == nil ||
			(p.typ == space.Categorical && best.p.typ != space.Categorical) ||
			(p.typ == best.p.typ && present[p.name] > present[best.p.name])
		if better {
			best = c
		}
	}
	if best == nil {
		return nil
	}
	cond := &space.Condition{Parent: best.p.name}
	if best.p.typ == space.Categorical {
		// Keep the parent's choice order, which is what users read.
		for _, ch := range best.p.choices {
			for _, v := range best.values {
				if valueKey(v) == valueKey(catValue(ch)) {
					cond.Values = append(cond.Values, ch)
				}
			}
		}
	} else {
		var nums []float64
		for _, v := range best.values {
			nums = append(nums, v.num)
		}
		sort.Float64s(nums)
		for _, x := range nums {
			cond.Values = append(cond.Values, x)
		}
	}
	return cond
}

func valueKey(v rawValue) string {
	if v.isCat {
		return "c:" + v.text
	}
	return "n:" + strconv.FormatFloat(v.num, 'g', -1, 64)
}

func describeValues(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if s, ok := v.(string); ok {
			parts[i] = strconv.Quote(s)
		} else {
			parts[i] = fmt.Sprint(v)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "one of " + strings.Join(parts, ", ")
}
