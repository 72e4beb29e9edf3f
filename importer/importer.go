// Package importer reads the trial histories of other tuning tools so that
// xbo can explain runs it did not make (DESIGN.md, user 3): Optuna storages
// (the SQLite RDB file, read directly with SQL, and the JSON-lines journal
// file), SMAC3 run directories (runhistory.json in its v1 and v2 shapes with
// configspace.json), and generic CSV or JSON trial tables with a space file.
//
// Every importer produces a Run: an xbo search space and the trials as
// natural values (space package conventions: a categorical's level index, NaN
// for an inactive parameter). The rule throughout is "carry over faithfully,
// never drop silently":
//
//   - failed, pruned, running and waiting trials are kept with their state
//     (they are written without a value, which every xbo command reads as
//     "no usable result");
//   - values outside the declared domain (Optuna lets enqueued trials leave
//     it; dynamic search spaces change it between trials) widen the domain;
//   - what xbo's space cannot express (a step that does not divide the
//     range, a step on a log scale, steps that differ between trials, normal priors,
//     conditions other than "parent takes one of these values", a trial whose
//     parameters fit no consistent space) is named in Run.Warnings, which the
//     CLI prints.
//
// Optuna stores no conditions: a parameter that a trial did not suggest is
// simply absent. The importer infers the condition from the data: the
// parameter is active exactly when some categorical (or integer) parameter
// takes one of the values observed with it, and never with the values seen
// without it (see inferCondition). The inference is reported as a warning so
// the user can check it.
package importer

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"xbo/history"
	"xbo/space"
	"xbo/trials"
)

// Run is an imported history and the format it was read from. Trials keep
// the source's states (failed, pruned, running and waiting trials too, a
// waiting trial as history.Pending), numbers and origins (as the trials'
// acquisition); Warnings name everything that could not be carried over
// exactly.
type Run struct {
	Format string // "optuna-rdb", "optuna-journal", "smac3-v1", "smac3-v2", "csv", "json"
	*history.History
	// StudyAttrs are the source study's own attributes (Optuna's study
	// user attributes); nil when it has none.
	StudyAttrs map[string]any
}

// WriteCSV writes the trials CSV.
func (r *Run) WriteCSV(w io.Writer) error {
	if r.History == nil || r.Space == nil {
		return errors.New("importer: run has no space")
	}
	if err := trials.Write(w, r.History); err != nil {
		return fmt.Errorf("importer: %w", err)
	}
	return nil
}

// WriteFiles writes the trials CSV and the space JSON (either path may be
// empty to skip it). Each file is written to a temporary file in the same
// directory and renamed into place only when every file is complete, so a
// failure never leaves a half-written file behind.
func WriteFiles(r *Run, csvPath, spacePath string) error {
	if r == nil || r.History == nil || r.Space == nil {
		return errors.New("importer: nothing to write (no run or no space)")
	}
	type pending struct{ tmp, dst string }
	var done []pending
	cleanup := func() {
		for _, p := range done {
			os.Remove(p.tmp)
		}
	}
	if csvPath != "" {
		tmp, err := writeTemp(csvPath, r.WriteCSV)
		if err != nil {
			return err
		}
		done = append(done, pending{tmp, csvPath})
	}
	if spacePath != "" {
		tmp, err := writeTemp(spacePath, func(w io.Writer) error {
			data, err := SpaceJSON(r.Space)
			if err != nil {
				return err
			}
			_, err = w.Write(data)
			return err
		})
		if err != nil {
			cleanup()
			return err
		}
		done = append(done, pending{tmp, spacePath})
	}
	for i, p := range done {
		if err := os.Rename(p.tmp, p.dst); err != nil {
			for _, q := range done[i:] {
				os.Remove(q.tmp)
			}
			return fmt.Errorf("importer: %w", err)
		}
	}
	return nil
}

// writeTemp writes a file next to dst through fill and syncs it; it returns
// the temporary file's name.
func writeTemp(dst string, fill func(io.Writer) error) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("importer: %w", err)
	}
	name := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(name)
		return "", fmt.Errorf("importer: write %s: %w", dst, err)
	}
	if err := fill(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("importer: write %s: %w", dst, err)
	}
	if err := os.Chmod(name, 0o644); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("importer: write %s: %w", dst, err)
	}
	return name, nil
}

// ---------------------------------------------------------------------------
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
	// consDropped counts trials that are not complete but reported
	// constraint values; consMissing are the complete trials of a
	// constrained study that reported none.
	consDropped int
	consMissing []int
}

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
	run := &Run{Format: b.format, History: &history.History{Name: b.study, Source: b.source, Space: s}}
	imputed := map[string]int{}
	var excluded []string
	nExcluded, nDropped := 0, 0
	for _, rt := range b.trials {
		vals := make([]float64, s.Dim())
		for i, rp := range b.params {
			vals[i] = math.NaN()
			if v, ok := rt.values[rp.name]; ok {
				nv, err := naturalOf(&s.Params[i], rp, v)
				if err != nil {
					return nil, fmt.Errorf("trial %d: %w", rt.number, err)
				}
				vals[i] = nv
			}
		}
		if err := b.impute(s, vals, imputed); err != nil {
			return nil, fmt.Errorf("trial %d: %w", rt.number, err)
		}
		inter, dropped := finiteSteps(rt.intermediate)
		nDropped += dropped
		t := history.Trial{Number: int64(rt.number), Params: vals, Value: rt.value, State: rt.state, Acquisition: rt.origin,
			Intermediate: inter, UserAttrs: rt.attrs, Created: rt.created, Started: rt.started, Finished: rt.finished}
		if err := b.outcome(s, &t, rt); err != nil {
			return nil, err
		}
		if t.State == history.Complete && (math.IsNaN(t.Value) || slices.ContainsFunc(t.Values, math.IsNaN)) {
			b.warnf("trial %d is complete but has no value (NaN); imported as failed", t.Number)
			t.State = history.Failed
			t.Values, t.Constraints = nil, nil
		}
		if t.State == history.Complete && !t.Usable() {
			b.warnf("trial %d has the value %v; it is written without a value (like a failed trial), because no model can fit an infinite value", t.Number, outcomeText(&t))
		}
		if t.Usable() {
			if err := s.Validate(vals); err != nil {
				nExcluded++
				if len(excluded) < 10 {
					excluded = append(excluded, fmt.Sprintf("trial %d (%v)", t.Number, strings.TrimPrefix(err.Error(), "space: ")))
				}
				continue
			}
		}
		run.Trials = append(run.Trials, t)
	}
	for _, rp := range b.params {
		if n := imputed[rp.name]; n > 0 {
			b.warnf("parameter %q: inactive in %d trials under a condition xbo cannot express; there it is set to its default %v", rp.name, n, rp.def)
		}
	}
	if b.consDropped > 0 {
		b.warnf("%d trials that are not complete (pruned ones) reported constraint values; they are not kept (xbo records constraint values with a complete trial's outcome)", b.consDropped)
	}
	if k := len(b.consMissing); k > 0 {
		b.warnf("%d complete trials report no constraint values (e.g. trial %d); xbo counts them infeasible, so they are never best", k, b.consMissing[0])
	}
	if nDropped > 0 {
		b.warnf("%d intermediate values are left out: NaN, infinite, or at a negative step (xbo keeps finite values at steps ≥ 0)", nDropped)
	}
	if nExcluded > 0 {
		more := ""
		if nExcluded > len(excluded) {
			more = fmt.Sprintf(" and %d more", nExcluded-len(excluded))
		}
		b.warnf("%d complete trials do not fit the imported space and are left out: %s%s", nExcluded, strings.Join(excluded, "; "), more)
	}
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
		b.consDropped++
	case t.State == history.Complete && n > 0:
		b.consMissing = append(b.consMissing, rt.number)
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

// SpaceJSON renders a space in the file format space.Parse reads, indented
// for people, and checks that it reads back.
func SpaceJSON(s *space.Space) ([]byte, error) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("importer: space: %w", err)
	}
	if _, err := space.Parse(data); err != nil {
		return nil, fmt.Errorf("importer: the space does not read back: %w", err)
	}
	return append(data, '\n'), nil
}
