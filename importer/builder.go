package importer

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"xbo/history"
	"xbo/space"
)

// The builder shared by every importer: raw parameters as the source declares
// them, raw trials as name → value maps, turned into a validated space and
// natural-value rows.

// rawValue is a parameter value as the source stored it.
type rawValue struct {
	num   float64
	text  string
	isCat bool // text holds a categorical choice
}

func numValue(f float64) rawValue { return rawValue{num: f} }
func catValue(s string) rawValue  { return rawValue{text: s, isCat: true} }
func (v rawValue) String() string {
	if v.isCat {
		return strconv.Quote(v.text)
	}
	return strconv.FormatFloat(v.num, 'g', -1, 64)
}

type rawParam struct {
	name    string
	typ     space.Type
	low     float64
	high    float64
	log     bool
	step    float64  // a stepped range's step (0: continuous or every integer)
	choices []string // the choices' names (choiceName), which trial values are matched against
	// typed maps the names of choices that are not strings (numbers,
	// booleans) to their values, so that the space keeps their JSON types.
	typed map[string]any
	cond  *space.Condition
	def   any
	// imputeDefault: the source's condition could not be expressed, so the
	// parameter is unconditional and its default fills trials where the
	// source had it inactive.
	imputeDefault bool
	// seen is what the trials say about its domain (widen).
	seen widening
}

type rawTrial struct {
	number int
	values map[string]rawValue
	value  float64
	// objValues are every objective's value of a trial with several (nil
	// otherwise; objValues[0] is value), constraints its constraint values
	// (nil: none reported).
	objValues, constraints []float64
	state                  history.State
	origin                 string
	// Recorded where the source has them.
	intermediate               []history.Intermediate
	attrs                      map[string]any
	created, started, finished time.Time
}

type builder struct {
	format    string
	source    string
	study     string
	objective space.Direction
	// objectives name a study's objectives (several, or one named one);
	// constraints name its constraints (see space.NewWithObjectives).
	objectives  []space.Objective
	constraints []string
	params      []*rawParam
	byName      map[string]*rawParam
	trials      []rawTrial
	warnings    []string
	// infer conditions from which trials lack a parameter (Optuna).
	inferConditions bool
	rows            rowTally
}

// rowTally counts what turning raw trials into rows (builder.row) left
// out or changed, for the warnings after the last row (rowWarnings): counts
// and a few examples rather than a list, so that a table read as a stream
// holds no more of it for a million rows than for ten.
type rowTally struct {
	// consDropped counts trials that are not complete but reported
	// constraint values; consMissing the complete trials of a constrained
	// study that reported none (consMissingFirst is the first).
	consDropped, consMissing int
	consMissingFirst         int
	imputed                  map[string]int
	excluded                 []string
	nExcluded, nDropped      int
	// noValue and infinite count the complete trials without a value and
	// those with an infinite one: each is named for the first
	// maxTrialWarnings, then counted.
	noValue, infinite int
	// complete counts the complete rows made, for their completion order
	// when the trials are streamed in number order.
	complete int
}

// maxTrialWarnings is how many trials one kind of per-trial warning names
// before it only counts the rest: a file of a million broken rows gets a
// readable report, and a bounded one.
const maxTrialWarnings = 10

func newBuilder(format, source string) *builder {
	return &builder{format: format, source: source, byName: map[string]*rawParam{}}
}

func (b *builder) warnf(format string, a ...any) {
	b.warnings = append(b.warnings, fmt.Sprintf(format, a...))
}

func (b *builder) addParam(p *rawParam) error {
	if _, dup := b.byName[p.name]; dup {
		return fmt.Errorf("parameter %q is declared twice", p.name)
	}
	b.params = append(b.params, p)
	b.byName[p.name] = p
	return nil
}

// finiteSteps keeps the intermediate values xbo can store (finite, at steps
// ≥ 0) and counts the others.
func finiteSteps(list []history.Intermediate) ([]history.Intermediate, int) {
	var kept []history.Intermediate
	for _, iv := range list {
		if iv.Step >= 0 && !math.IsNaN(iv.Value) && !math.IsInf(iv.Value, 0) {
			kept = append(kept, iv)
		}
	}
	return kept, len(list) - len(kept)
}

// keptStep is rp's step when the (possibly widened) range is a whole number
// of steps, and 0 with a warning otherwise: the trials then keep their
// values, on a continuous range or on every integer.
func (b *builder) keptStep(rp *rawParam) float64 {
	if rp.step <= 0 {
		return 0
	}
	_, err := space.New(space.Minimize, []space.Param{{Name: rp.name, Type: rp.typ, Low: rp.low, High: rp.high, Log: rp.log, Step: rp.step}})
	if err == nil {
		return rp.step
	}
	kind := "a continuous range"
	if rp.typ == space.Int {
		kind = "every integer"
	}
	b.warnf("parameter %q: step %v is not kept (%v); imported as %s in [%v, %v]", rp.name, rp.step, err, kind, rp.low, rp.high)
	return 0
}

// build turns the raw parameters and trials into a Run.
func (b *builder) build() (*Run, error) {
	if len(b.params) == 0 {
		return nil, errors.New("no parameters found (no trial suggested any)")
	}
	if err := b.widen(); err != nil {
		return nil, err
	}
	if b.inferConditions {
		b.inferAllConditions()
	}
	run, err := b.newRun()
	if err != nil {
		return nil, err
	}
	b.rows = rowTally{}
	for _, rt := range b.trials {
		t, keep, err := b.row(run.Space, rt)
		if err != nil {
			return nil, err
		}
		if keep {
			run.Trials = append(run.Trials, t)
		}
	}
	b.rowWarnings()
	slices.SortStableFunc(run.Trials, func(a, b history.Trial) int { return cmp.Compare(a.Number, b.Number) })
	for i := 1; i < len(run.Trials); i++ {
		if run.Trials[i].Number == run.Trials[i-1].Number {
			return nil, fmt.Errorf("trial number %d appears twice", run.Trials[i].Number)
		}
	}
	// Completion follows the source's order of finishing where it records
	// one for every complete trial, else the trials' order.
	timed := true
	for i := range run.Trials {
		timed = timed && (run.Trials[i].State != history.Complete || !run.Trials[i].Finished.IsZero())
	}
	run.CompletionOrder(func(t *history.Trial) int64 {
		if timed {
			return t.Finished.UnixNano()
		}
		return t.Number
	})
	run.Warnings = b.warnings
	return run, nil
}

// newRun makes the space of the (widened) raw parameters, with their
// conditions, and a Run of it without trials.
func (b *builder) newRun() (*Run, error) {
	params := make([]space.Param, len(b.params))
	for i, rp := range b.params {
		p := space.Param{Name: rp.name, Type: rp.typ, Log: rp.log, Condition: rp.cond, Default: rp.def}
		if rp.typ == space.Categorical {
			p.Choices = b.spaceChoices(rp)
			if name, ok := rp.def.(string); ok {
				p.Default = rp.choiceValue(name)
			}
		} else {
			p.Low, p.High = rp.low, rp.high
			p.Step = b.keptStep(rp)
		}
		params[i] = p
	}
	for i, rp := range b.params {
		// A condition on a categorical names the parent's choices by name.
		if rp.cond == nil {
			continue
		}
		parent, ok := b.byName[rp.cond.Parent]
		if !ok || parent.typ != space.Categorical {
			continue
		}
		cond := *rp.cond
		cond.Values = make([]any, len(rp.cond.Values))
		for k, v := range rp.cond.Values {
			cond.Values[k] = v
			if name, ok := v.(string); ok {
				cond.Values[k] = parent.choiceValue(name)
			}
		}
		params[i].Condition = &cond
	}
	newSpace := func() (*space.Space, error) {
		if len(b.objectives) > 0 || len(b.constraints) > 0 {
			return space.NewWithObjectives("", b.objectives, b.constraints, params)
		}
		return space.New(b.objective, params)
	}
	s, err := newSpace()
	if err != nil && anyDefault(params) {
		// A default the widened domain no longer describes is not worth
		// failing the import for.
		for i := range params {
			params[i].Default = nil
		}
		if s2, err2 := newSpace(); err2 == nil {
			b.warnf("parameter defaults were dropped: %v", err)
			s, err = s2, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the imported search space is invalid: %w", err)
	}
	return &Run{Format: b.format, History: &history.History{Name: b.study, Source: b.source, Space: s}}, nil
}

// row turns one raw trial into a row of space s, and says whether it is
// kept: a usable trial that does not fit s is left out (and counted).
func (b *builder) row(s *space.Space, rt rawTrial) (history.Trial, bool, error) {
	if b.rows.imputed == nil {
		b.rows.imputed = map[string]int{}
	}
	vals := make([]float64, s.Dim())
	for i, rp := range b.params {
		vals[i] = math.NaN()
		if v, ok := rt.values[rp.name]; ok {
			nv, err := naturalOf(&s.Params[i], rp, v)
			if err != nil {
				return history.Trial{}, false, fmt.Errorf("trial %d: %w", rt.number, err)
			}
			vals[i] = nv
		}
	}
	if err := b.impute(s, vals, b.rows.imputed); err != nil {
		return history.Trial{}, false, fmt.Errorf("trial %d: %w", rt.number, err)
	}
	inter, dropped := finiteSteps(rt.intermediate)
	b.rows.nDropped += dropped
	t := history.Trial{Number: int64(rt.number), Params: vals, Value: rt.value, State: rt.state, Acquisition: rt.origin,
		Intermediate: inter, UserAttrs: rt.attrs, Created: rt.created, Started: rt.started, Finished: rt.finished}
	if err := b.outcome(s, &t, rt); err != nil {
		return history.Trial{}, false, err
	}
	if t.State == history.Complete && (math.IsNaN(t.Value) || slices.ContainsFunc(t.Values, math.IsNaN)) {
		if b.rows.noValue++; b.rows.noValue <= maxTrialWarnings {
			b.warnf("trial %d is complete but has no value (NaN); imported as failed", t.Number)
		}
		t.State = history.Failed
		t.Values, t.Constraints = nil, nil
	}
	if t.State == history.Complete && !t.Usable() {
		if b.rows.infinite++; b.rows.infinite <= maxTrialWarnings {
			b.warnf("trial %d has the value %v; it is written without a value (like a failed trial), because no model can fit an infinite value", t.Number, outcomeText(&t))
		}
	}
	if t.Usable() {
		if err := s.Validate(vals); err != nil {
			b.rows.nExcluded++
			if len(b.rows.excluded) < 10 {
				b.rows.excluded = append(b.rows.excluded, fmt.Sprintf("trial %d (%v)", t.Number, strings.TrimPrefix(err.Error(), "space: ")))
			}
			return history.Trial{}, false, nil
		}
	}
	return t, true, nil
}

// rowWarnings reports, after the last row, what the rows left out or
// changed.
func (b *builder) rowWarnings() {
	r := &b.rows
	if n := r.noValue - maxTrialWarnings; n > 0 {
		b.warnf("%d more complete trials have no value (NaN); imported as failed", n)
	}
	if n := r.infinite - maxTrialWarnings; n > 0 {
		b.warnf("%d more complete trials have an infinite value; written without a value", n)
	}
	for _, rp := range b.params {
		if n := r.imputed[rp.name]; n > 0 {
			b.warnf("parameter %q: inactive in %d trials under a condition xbo cannot express; there it is set to its default %v", rp.name, n, rp.def)
		}
	}
	if r.consDropped > 0 {
		b.warnf("%d trials that are not complete (pruned ones) reported constraint values; they are not kept (xbo records constraint values with a complete trial's outcome)", r.consDropped)
	}
	if r.consMissing > 0 {
		b.warnf("%d complete trials report no constraint values (e.g. trial %d); xbo counts them infeasible, so they are never best", r.consMissing, r.consMissingFirst)
	}
	if r.nDropped > 0 {
		b.warnf("%d intermediate values are left out: NaN, infinite, or at a negative step (xbo keeps finite values at steps ≥ 0)", r.nDropped)
	}
	if r.nExcluded > 0 {
		more := ""
		if r.nExcluded > len(r.excluded) {
			more = fmt.Sprintf(" and %d more", r.nExcluded-len(r.excluded))
		}
		b.warnf("%d complete trials do not fit the imported space and are left out: %s%s", r.nExcluded, strings.Join(r.excluded, "; "), more)
	}
}

func anyDefault(ps []space.Param) bool {
	for _, p := range ps {
		if p.Default != nil {
			return true
		}
	}
	return false
}

// outcome gives trial t its objective and constraint values from rt,
// checked against the space's objectives and constraints: a trial with the
// wrong number of them is an error (the source is inconsistent), a
// complete trial without constraint values in a constrained study is kept
// (xbo counts it infeasible), and constraint values stay with complete
// trials only (xbo's store records them with a complete trial's outcome).
func (b *builder) outcome(s *space.Space, t *history.Trial, rt rawTrial) error {
	m, n := s.NumObjectives(), len(s.Constraints)
	switch {
	case len(rt.objValues) > 0 && len(rt.objValues) != m:
		return fmt.Errorf("trial %d has %d objective values; the study has %d objectives (%s)", rt.number, len(rt.objValues), m, strings.Join(s.ObjectiveNames(), ", "))
	case len(rt.objValues) > 0 && m > 1 && t.State == history.Complete:
		// Several objective values are a complete trial's outcome; another
		// trial keeps its first as its value (as a pruned one's is).
		t.Values = slices.Clone(rt.objValues)
		t.Value = t.Values[0]
	case m > 1 && t.State == history.Complete:
		t.Value = math.NaN() // no values: imported as failed, with a warning
	}
	if len(rt.constraints) > 0 && len(rt.constraints) != n {
		return fmt.Errorf("trial %d has %d constraint values; the study has %d constraints", rt.number, len(rt.constraints), n)
	}
	switch {
	case t.State == history.Complete && len(rt.constraints) > 0:
		t.Constraints = slices.Clone(rt.constraints)
	case len(rt.constraints) > 0:
		b.rows.consDropped++
	case t.State == history.Complete && n > 0:
		if b.rows.consMissing == 0 {
			b.rows.consMissingFirst = rt.number
		}
		b.rows.consMissing++
	}
	return nil
}

// outcomeText is a trial's value, or its objective values.
func outcomeText(t *history.Trial) string {
	if len(t.Values) > 0 {
		return fmt.Sprint(t.Values)
	}
	return fmt.Sprint(t.Value)
}

// impute fills parameters whose source condition could not be expressed with
// their default where they are active in xbo's space but absent.
func (b *builder) impute(s *space.Space, vals []float64, count map[string]int) error {
	need := false
	for _, rp := range b.params {
		need = need || rp.imputeDefault
	}
	if !need {
		return nil
	}
	// Parents first: imputing a parent can activate its children.
	for range b.params {
		act, err := s.Active(vals)
		if err != nil {
			return err
		}
		changed := false
		for i, rp := range b.params {
			if !rp.imputeDefault || !act[i] || !math.IsNaN(vals[i]) || rp.def == nil {
				continue
			}
			v, err := naturalOf(&s.Params[i], rp, defaultValue(rp))
			if err != nil {
				return fmt.Errorf("parameter %q: default: %w", rp.name, err)
			}
			vals[i] = v
			count[rp.name]++
			changed = true
		}
		if !changed {
			break
		}
	}
	return nil
}

func defaultValue(rp *rawParam) rawValue {
	switch d := rp.def.(type) {
	case string:
		return catValue(d)
	case float64:
		if rp.typ == space.Categorical {
			return catValue(strconv.FormatFloat(d, 'g', -1, 64))
		}
		return numValue(d)
	}
	return catValue(fmt.Sprint(rp.def))
}
