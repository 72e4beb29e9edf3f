package importer

import (
	"xbo/history"

	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"xbo/space"
)

// StudyInfo describes one study in an Optuna storage.
type StudyInfo struct {
	Name       string
	Objectives int // 1 for single-objective studies
	Trials     int
}

// optunaDist is an Optuna distribution (optuna/distributions.py), with the
// deprecated classes folded into the current ones the way Optuna 3 does.
type optunaDist struct {
	class   string
	typ     space.Type
	low     float64
	high    float64
	log     bool
	step    float64 // 0 when the range is continuous (or every integer)
	choices []string
	typed   map[string]any // choices that are numbers or booleans (rawParam.typed)
}

// parseOptunaDist reads distribution_json: {"name": class, "attributes":
// {...}}, or the abbreviated {"type": "float"|"int"|"categorical", ...} form
// that optuna.distributions.json_to_distribution also accepts.
func parseOptunaDist(text string) (optunaDist, error) {
	doc, err := decodeJSON([]byte(text))
	if err != nil {
		return optunaDist{}, fmt.Errorf("distribution %q is not JSON: %w", text, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return optunaDist{}, fmt.Errorf("distribution %q is not a JSON object", text)
	}
	var d optunaDist
	var attrs map[string]any
	if name, ok := obj["name"].(string); ok {
		d.class = name
		attrs, _ = obj["attributes"].(map[string]any)
		if attrs == nil {
			return d, fmt.Errorf("distribution %s has no attributes", name)
		}
	} else if typ, ok := obj["type"].(string); ok {
		attrs = obj
		switch typ {
		case "float":
			d.class = "FloatDistribution"
		case "int":
			d.class = "IntDistribution"
		case "categorical":
			d.class = "CategoricalDistribution"
		default:
			return d, fmt.Errorf("unknown distribution type %q", typ)
		}
	} else {
		return d, fmt.Errorf("distribution %q has neither a name nor a type", text)
	}
	num := func(key string, required bool) (float64, error) {
		v, present := attrs[key]
		if !present || v == nil {
			if required {
				return 0, fmt.Errorf("%s lacks %q", d.class, key)
			}
			return 0, nil
		}
		f, ok := numberOf(v)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%s: %q is %v, not a finite number", d.class, key, v)
		}
		return f, nil
	}
	switch d.class {
	case "FloatDistribution", "UniformDistribution", "LogUniformDistribution", "DiscreteUniformDistribution",
		"IntDistribution", "IntUniformDistribution", "IntLogUniformDistribution":
		if d.low, err = num("low", true); err != nil {
			return d, err
		}
		if d.high, err = num("high", true); err != nil {
			return d, err
		}
		if d.low > d.high {
			return d, fmt.Errorf("%s: low %v is above high %v", d.class, d.low, d.high)
		}
		switch d.class {
		case "FloatDistribution", "UniformDistribution", "LogUniformDistribution", "DiscreteUniformDistribution":
			d.typ = space.Float
		default:
			d.typ = space.Int
		}
		switch d.class {
		case "LogUniformDistribution", "IntLogUniformDistribution":
			d.log = true
		case "FloatDistribution", "IntDistribution":
			if lg, present := attrs["log"]; present && lg != nil {
				b, ok := lg.(bool)
				if !ok {
					return d, fmt.Errorf("%s: log is %v, not a boolean", d.class, lg)
				}
				d.log = b
			}
		}
		stepKey := "step"
		if d.class == "DiscreteUniformDistribution" {
			stepKey = "q"
		}
		if d.step, err = num(stepKey, d.class == "DiscreteUniformDistribution"); err != nil {
			return d, err
		}
		if d.step < 0 {
			return d, fmt.Errorf("%s: step %v is negative", d.class, d.step)
		}
		if d.typ == space.Int && d.step == 1 {
			d.step = 0
		}
		if d.log && d.low <= 0 {
			return d, fmt.Errorf("%s: log scale with low %v <= 0", d.class, d.low)
		}
	case "CategoricalDistribution":
		d.typ = space.Categorical
		raw, ok := attrs["choices"].([]any)
		if !ok || len(raw) == 0 {
			return d, fmt.Errorf("CategoricalDistribution has no choices")
		}
		seen := map[string]bool{}
		for _, c := range raw {
			name, err := choiceName(c)
			if err != nil {
				return d, fmt.Errorf("CategoricalDistribution: %w", err)
			}
			if seen[name] {
				return d, fmt.Errorf("CategoricalDistribution: choice %q appears twice", name)
			}
			seen[name] = true
			d.choices = append(d.choices, name)
		}
		d.typed = choiceTypes(raw)
	default:
		return d, fmt.Errorf("unsupported distribution class %q", d.class)
	}
	return d, nil
}

// external converts a value in Optuna's internal representation (a float;
// the index for a categorical) to the raw value xbo stores.
func (d *optunaDist) external(internal float64) (rawValue, error) {
	if math.IsNaN(internal) || math.IsInf(internal, 0) {
		return rawValue{}, fmt.Errorf("internal value %v is not finite", internal)
	}
	switch d.typ {
	case space.Categorical:
		k := int(internal)
		if float64(k) != internal || k < 0 || k >= len(d.choices) {
			return rawValue{}, fmt.Errorf("categorical index %v is not one of the %d choices", internal, len(d.choices))
		}
		return catValue(d.choices[k]), nil
	case space.Int:
		return numValue(math.Trunc(internal)), nil
	}
	return numValue(internal), nil
}

func (d *optunaDist) describe() string {
	if d.typ == space.Categorical {
		return fmt.Sprintf("%s%v", d.class, d.choices)
	}
	s := fmt.Sprintf("%s[%v, %v]", d.class, d.low, d.high)
	if d.log {
		s += " log"
	}
	if d.step > 0 {
		s += fmt.Sprintf(" step %v", d.step)
	}
	return s
}

type optunaParam struct {
	name     string
	internal float64
	dist     optunaDist
}

type optunaTrial struct {
	number int
	state  history.State
	value  float64 // NaN when none; the first objective's
	// values are every objective's value of a multi-objective study's
	// trial (NaN where it has none), nil for one objective.
	values       []float64
	params       []optunaParam
	intermediate []history.Intermediate // in step order
	// constraints is the system attribute "constraints" that Optuna's
	// samplers with a constraints_func set on complete and pruned trials
	// (nil when the trial has none, or its function failed).
	constraints []float64
	// userAttrs, started, finished and enqueued: optuna_attrs.go.
	userAttrs         map[string]any
	started, finished time.Time
	enqueued          bool
}

// optunaStudy is what a storage says about a study as a whole.
type optunaStudy struct {
	name      string
	userAttrs map[string]any // the study's user attributes
	// dirs are the objectives' directions ("" where not set).
	dirs []space.Direction
	// metricNames are the objectives' names when the study set them
	// (Study.set_metric_names), else nil.
	metricNames []string
}

// Study system attributes that name a study's objectives: Optuna's own
// (set_metric_names, Optuna 3.2 and later) and optuna-dashboard's older
// one (set_objective_names).
const (
	optunaMetricNamesKey   = "study:metric_names"
	dashboardObjectivesKey = "dashboard:objective_names"
	optunaConstraintsKey   = "constraints"
)

// setMetricNames records a study system attribute if it names the
// objectives (Optuna's key wins over the dashboard's).
func (s *optunaStudy) setMetricNames(key string, value any, fromDashboard *bool) {
	if key != optunaMetricNamesKey && key != dashboardObjectivesKey {
		return
	}
	if key == dashboardObjectivesKey && s.metricNames != nil && !*fromDashboard {
		return
	}
	list, ok := value.([]any)
	if !ok {
		return
	}
	names := make([]string, len(list))
	for k, v := range list {
		if names[k], ok = v.(string); !ok {
			return
		}
	}
	s.metricNames = names
	*fromDashboard = key == dashboardObjectivesKey
}

// optunaConstraintValues reads the "constraints" system attribute: a list
// of numbers, or null when the study's constraints function failed.
func optunaConstraintValues(v any) ([]float64, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("system attribute %q is %v, not a list", optunaConstraintsKey, v)
	}
	out := make([]float64, len(list))
	for j, x := range list {
		f, ok := numberOf(x)
		if !ok {
			return nil, fmt.Errorf("system attribute %q: %v is not a number", optunaConstraintsKey, x)
		}
		out[j] = f
	}
	return out, nil
}

// optunaStateName maps Optuna's TrialState names.
func optunaStateName(name string) (history.State, bool) {
	switch strings.ToUpper(name) {
	case "COMPLETE":
		return history.Complete, true
	case "FAIL":
		return history.Failed, true
	case "PRUNED":
		return history.Pruned, true
	case "RUNNING":
		return history.Running, true
	case "WAITING":
		return history.Pending, true
	}
	return "", false
}

// optunaStateCode maps TrialState's integer values (journal files).
func optunaStateCode(code int) (history.State, bool) {
	switch code {
	case 0:
		return history.Running, true
	case 1:
		return history.Complete, true
	case 2:
		return history.Pruned, true
	case 3:
		return history.Failed, true
	case 4:
		return history.Pending, true
	}
	return "", false
}

// assembleOptuna merges each parameter's distributions over the trials
// (Optuna allows them to change between trials: a "dynamic" search space)
// and builds the run. A study with several objectives, or named ones,
// gets the space's objectives (Optuna's metric names, else objective_0,
// objective_1, ...); one whose trials carry constraint values gets
// constraints constraint_0, constraint_1, ... (Optuna does not name them).
func assembleOptuna(format, source string, st optunaStudy, trialsIn []optunaTrial, warnings []string) (*Run, error) {
	b := newBuilder(format, source)
	b.study = st.name
	b.inferConditions = true
	b.warnings = append(b.warnings, warnings...)
	dirs := slices.Clone(st.dirs)
	for k, d := range dirs {
		if d == "" {
			if len(dirs) == 1 {
				b.warnf("study %q has no direction set; imported as minimize", st.name)
			} else {
				b.warnf("study %q: objective %d has no direction set; imported as minimize", st.name, k)
			}
			dirs[k] = space.Minimize
		}
	}
	b.objective = dirs[0]
	names := st.metricNames
	if names != nil && len(names) != len(dirs) {
		b.warnf("study %q names %d metrics (%s) for its %d objectives; the names are not used", st.name, len(names), strings.Join(names, ", "), len(dirs))
		names = nil
	}
	if len(dirs) > 1 || names != nil {
		for k, d := range dirs {
			o := space.Objective{Direction: d}
			if names != nil {
				o.Name = names[k]
			}
			b.objectives = append(b.objectives, o)
		}
	}
	if err := b.optunaConstraints(trialsIn); err != nil {
		return nil, err
	}
	type merged struct {
		first   optunaDist
		firstNo int
		dist    optunaDist
		dynamic bool
		steps   map[float64]bool
	}
	var order []string
	dists := map[string]*merged{}
	for _, t := range trialsIn {
		for _, p := range t.params {
			m, ok := dists[p.name]
			if !ok {
				d := p.dist
				d.choices = append([]string(nil), d.choices...)
				d.typed = maps.Clone(d.typed)
				dists[p.name] = &merged{first: p.dist, firstNo: t.number, dist: d, steps: map[float64]bool{p.dist.step: true}}
				order = append(order, p.name)
				continue
			}
			d := p.dist
			if d.typ != m.dist.typ {
				return nil, fmt.Errorf("parameter %q: trial %d uses %s but trial %d uses %s; one parameter cannot change kind", p.name, t.number, d.describe(), m.firstNo, m.first.describe())
			}
			if d.log != m.dist.log {
				return nil, fmt.Errorf("parameter %q: trial %d uses %s but trial %d uses %s; the log setting cannot change", p.name, t.number, d.describe(), m.firstNo, m.first.describe())
			}
			m.steps[d.step] = true
			switch d.typ {
			case space.Categorical:
				for _, c := range d.choices {
					if !containsString(m.dist.choices, c) {
						m.dist.choices = append(m.dist.choices, c)
						if v, ok := d.typed[c]; ok {
							if m.dist.typed == nil {
								m.dist.typed = map[string]any{}
							}
							m.dist.typed[c] = v
						}
						m.dynamic = true
					}
				}
				if len(d.choices) != len(m.first.choices) {
					m.dynamic = true
				}
			default:
				if d.low != m.first.low || d.high != m.first.high {
					m.dynamic = true
				}
				m.dist.low = math.Min(m.dist.low, d.low)
				m.dist.high = math.Max(m.dist.high, d.high)
			}
		}
	}
	for _, name := range order {
		m := dists[name]
		d := m.dist
		if m.dynamic {
			b.warnf("parameter %q: its distribution changes between trials (a dynamic search space); imported as the union %s", name, d.describe())
		}
		rp := &rawParam{name: name, typ: d.typ, low: d.low, high: d.high, log: d.log, choices: d.choices, typed: d.typed}
		switch {
		case len(m.steps) > 1:
			steps := slices.Sorted(maps.Keys(m.steps))
			b.warnf("parameter %q: its step changes between trials (%v); imported without a step in [%v, %v]", name, steps, d.low, d.high)
		case m.dynamic && d.step > 0:
			b.warnf("parameter %q: its range changes between trials; step %v is not kept", name, d.step)
		default:
			rp.step = d.step // build checks it against the range
		}
		if err := b.addParam(rp); err != nil {
			return nil, err
		}
	}
	for _, t := range trialsIn {
		rt := rawTrial{number: t.number, values: map[string]rawValue{}, value: t.value, state: t.state, intermediate: t.intermediate,
			constraints: t.constraints, attrs: t.userAttrs, created: t.started, started: t.started, finished: t.finished}
		if t.enqueued {
			rt.origin = "enqueued"
		}
		if len(dirs) > 1 {
			rt.objValues = t.values
			if t.values == nil && t.state == history.Complete {
				rt.value = math.NaN() // complete without values: imported as failed, with a warning
			}
		}
		for _, p := range t.params {
			v, err := p.dist.external(p.internal)
			if err != nil {
				return nil, fmt.Errorf("trial %d: parameter %q: %w", t.number, p.name, err)
			}
			rt.values[p.name] = v
		}
		b.trials = append(b.trials, rt)
	}
	run, err := b.build()
	if err != nil {
		return nil, err
	}
	run.StudyAttrs = st.userAttrs
	return run, nil
}

// optunaConstraints declares the study's constraints from its trials'
// constraint values: every trial that has them must have as many. A trial
// whose values are not all finite loses them (xbo keeps finite constraint
// values), with a warning.
func (b *builder) optunaConstraints(list []optunaTrial) error {
	n, first := 0, -1
	var nonFinite []int
	for i := range list {
		t := &list[i]
		if t.constraints == nil {
			continue
		}
		if !allFinite(t.constraints) {
			nonFinite = append(nonFinite, t.number)
			t.constraints = nil
			continue
		}
		if first >= 0 && len(t.constraints) != n {
			return fmt.Errorf("trial %d has %d constraint values but trial %d has %d; a study's trials report the same constraints", t.number, len(t.constraints), first, n)
		}
		n, first = len(t.constraints), t.number
	}
	if len(nonFinite) > 0 {
		b.warnf("%d trials have constraint values that are not finite (e.g. trial %d); they are imported without them, so xbo counts them infeasible", len(nonFinite), nonFinite[0])
	}
	for j := range n {
		b.constraints = append(b.constraints, fmt.Sprintf("constraint_%d", j))
	}
	return nil
}

// allFinite reports whether every value is finite.
func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func directionName(name string) (space.Direction, bool) {
	switch strings.ToUpper(name) {
	case "MINIMIZE", "1":
		return space.Minimize, true
	case "MAXIMIZE", "2":
		return space.Maximize, true
	case "NOT_SET", "0":
		return "", true
	}
	return "", false
}
