package importer

import (
	"xbo/history"

	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"

	"xbo/space"
)

// Optuna's JournalStorage (optuna/storages/_journal/storage.py) appends one
// JSON object per line, each an operation with an "op_code". Replaying the
// operations in order, with the same rules Optuna applies when it replays a
// journal written by other workers, rebuilds the studies:
//
//	0 create study      {study_name, directions: [1 minimize | 2 maximize | 0 not set]}
//	1 delete study      {study_id}
//	2 study user attr   {study_id, user_attr: {key: value}}
//	3 study system attr {study_id, system_attr: {key: value}}   (the metric names)
//	4 create trial      {study_id, state?, value?, values?, distributions?, params?, intermediate_values?, user_attrs?, system_attrs?, datetime_start?, datetime_complete?}
//	5 set param         {trial_id, param_name, param_value_internal, distribution (JSON text)}
//	6 set state/values  {trial_id, state, values, datetime_start?, datetime_complete?}
//	7 intermediate      {trial_id, step, intermediate_value}
//	8 trial user attr   {trial_id, user_attr: {key: value}}
//	9 trial system attr {trial_id, system_attr: {key: value}}   (the constraint values, fixed_params)
//
// Study ids count successful creations; trial ids count trials over the whole
// file; a trial's number counts the trials of its study. Updates to unknown or
// finished trials are ignored, as Optuna ignores them.
const (
	opCreateStudy = iota
	opDeleteStudy
	opSetStudyUserAttr
	opSetStudySystemAttr
	opCreateTrial
	opSetTrialParam
	opSetTrialStateValues
	opSetTrialIntermediateValue
	opSetTrialUserAttr
	opSetTrialSystemAttr
)

type journalStudy struct {
	id       int
	name     string
	dirs     []int
	trialIDs []int
	// metricNames are the objectives' names, when set; fromDashboard says
	// they came from optuna-dashboard's older attribute.
	metricNames   []string
	fromDashboard bool
	userAttrs     map[string]any
}

type journalTrial struct {
	studyID int
	t       optunaTrial
	values  []float64
}

type journal struct {
	studies     map[int]*journalStudy
	order       []int // study ids in creation order
	nextStudyID int
	trials      []*journalTrial
	ignored     int // updates Optuna would ignore too
	// dropped counts the trial system attributes not kept, by key.
	dropped     map[string]int
	incompat    []string
	partialLine int // line number of an incomplete last line, 0 if none
}

// replayJournal parses a journal. Errors name the line.
func replayJournal(r io.Reader) (*journal, error) {
	j := &journal{studies: map[int]*journalStudy{}}
	br := bufio.NewReaderSize(r, 1<<16)
	lineNo := 0
	var pendingErr error
	for {
		line, readErr := br.ReadBytes('\n')
		if len(line) > 0 {
			lineNo++
			if pendingErr != nil {
				// A bad line followed by more lines is corruption, not an
				// interrupted final write.
				return nil, pendingErr
			}
			trimmed := bytes.TrimSpace(line)
			if len(trimmed) > 0 {
				doc, err := decodeJSON(trimmed)
				if err != nil {
					pendingErr = fmt.Errorf("line %d: %w", lineNo, err)
					if readErr == io.EOF {
						j.partialLine = lineNo
						pendingErr = nil
					}
				} else if err := j.apply(doc); err != nil {
					return nil, fmt.Errorf("line %d: %w", lineNo, err)
				}
			}
		}
		if readErr == io.EOF {
			break
		}
		if readErr != nil {
			return nil, readErr
		}
	}
	if pendingErr != nil {
		// The undecodable line was the last one but ended with a newline:
		// Optuna too skips an undecodable final line.
		j.partialLine = lineNo
	}
	return j, nil
}

func (j *journal) apply(doc any) error {
	op, ok := doc.(map[string]any)
	if !ok {
		return errors.New("not a JSON object")
	}
	code, ok := intOf(op["op_code"])
	if !ok {
		return fmt.Errorf("op_code %v is not an integer", op["op_code"])
	}
	switch code {
	case opCreateStudy:
		name, ok := op["study_name"].(string)
		if !ok {
			return errors.New("create study: study_name is not a string")
		}
		rawDirs, ok := op["directions"].([]any)
		if !ok || len(rawDirs) == 0 {
			return errors.New("create study: directions is not a non-empty list")
		}
		var dirs []int
		for _, d := range rawDirs {
			k, ok := intOf(d)
			if !ok || k < 0 || k > 2 {
				return fmt.Errorf("create study: direction %v is not 0, 1 or 2", d)
			}
			dirs = append(dirs, k)
		}
		for _, s := range j.studies {
			if s.name == name {
				return nil // Optuna ignores a duplicate creation
			}
		}
		id := j.nextStudyID
		j.nextStudyID++
		j.studies[id] = &journalStudy{id: id, name: name, dirs: dirs}
		j.order = append(j.order, id)
	case opDeleteStudy:
		id, ok := intOf(op["study_id"])
		if !ok {
			return errors.New("delete study: study_id is not an integer")
		}
		delete(j.studies, id)
	case opSetStudySystemAttr:
		id, ok := intOf(op["study_id"])
		if !ok {
			return errors.New("set study system attr: study_id is not an integer")
		}
		attrs, ok := op["system_attr"].(map[string]any)
		if !ok {
			return errors.New("set study system attr: system_attr is not an object")
		}
		if s, live := j.studies[id]; live {
			info := optunaStudy{metricNames: s.metricNames}
			for key, v := range attrs {
				info.setMetricNames(key, v, &s.fromDashboard)
			}
			s.metricNames = info.metricNames
		}
	case opSetTrialSystemAttr:
		attrs, ok := op["system_attr"].(map[string]any)
		if !ok {
			return errors.New("set trial system attr: system_attr is not an object")
		}
		j.countDropped(attrs)
		_, cons := attrs[optunaConstraintsKey]
		_, fixed := attrs[optunaFixedParamsKey]
		if !cons && !fixed {
			return nil // the samplers' other bookkeeping
		}
		t, ok, err := j.updatable(op, "set trial system attr")
		if !ok {
			return err
		}
		return t.setSystemAttrs(attrs)
	case opSetStudyUserAttr:
		id, ok := intOf(op["study_id"])
		if !ok {
			return errors.New("set study user attr: study_id is not an integer")
		}
		if s, live := j.studies[id]; live {
			var err error
			if s.userAttrs, err = journalAttrs(op, "user_attr", s.userAttrs); err != nil {
				return fmt.Errorf("set study user attr: %w", err)
			}
		}
	case opSetTrialUserAttr:
		t, ok, err := j.updatable(op, "set trial user attr")
		if !ok {
			return err
		}
		if t.t.userAttrs, err = journalAttrs(op, "user_attr", t.t.userAttrs); err != nil {
			return fmt.Errorf("set trial user attr: %w", err)
		}
	case opSetTrialIntermediateValue:
		return j.setIntermediate(op)
	case opCreateTrial:
		return j.createTrial(op)
	case opSetTrialParam:
		return j.setParam(op)
	case opSetTrialStateValues:
		return j.setState(op)
	default:
		return fmt.Errorf("unknown op_code %d (written by a newer Optuna than this importer knows?)", code)
	}
	return nil
}

func (j *journal) createTrial(op map[string]any) error {
	sid, ok := intOf(op["study_id"])
	if !ok {
		return errors.New("create trial: study_id is not an integer")
	}
	s, ok := j.studies[sid]
	if !ok {
		j.ignored++
		return nil
	}
	jt := &journalTrial{studyID: sid, t: optunaTrial{number: len(s.trialIDs), state: history.Running, value: math.NaN()}}
	if st, present := op["state"]; present && st != nil {
		code, ok := intOf(st)
		state, known := optunaStateCode(code)
		if !ok || !known {
			return fmt.Errorf("create trial: unknown state %v", st)
		}
		jt.t.state = state
	}
	if vs, present := op["values"]; present && vs != nil {
		values, err := floatList(vs)
		if err != nil {
			return fmt.Errorf("create trial: values: %w", err)
		}
		jt.values = values
	} else if v, present := op["value"]; present && v != nil {
		f, ok := numberOf(v)
		if !ok {
			return fmt.Errorf("create trial: value %v is not a number", v)
		}
		jt.values = []float64{f}
	}
	if dm, present := op["distributions"]; present && dm != nil {
		dists, ok := dm.(map[string]any)
		if !ok {
			return errors.New("create trial: distributions is not an object")
		}
		params, _ := op["params"].(map[string]any)
		names := make([]string, 0, len(params))
		for name := range params {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			text, ok := dists[name].(string)
			if !ok {
				return fmt.Errorf("create trial: parameter %q has no distribution", name)
			}
			d, err := parseOptunaDist(text)
			if err != nil {
				return fmt.Errorf("create trial: parameter %q: %w", name, err)
			}
			internal, ok := numberOf(params[name])
			if !ok {
				return fmt.Errorf("create trial: parameter %q: value %v is not a number", name, params[name])
			}
			jt.t.params = append(jt.t.params, optunaParam{name: name, internal: internal, dist: d})
		}
	}
	if sa, present := op["system_attrs"]; present && sa != nil {
		attrs, ok := sa.(map[string]any)
		if !ok {
			return errors.New("create trial: system_attrs is not an object")
		}
		j.countDropped(attrs)
		if err := jt.setSystemAttrs(attrs); err != nil {
			return fmt.Errorf("create trial: %w", err)
		}
	}
	if err := journalTimes(op, &jt.t); err != nil {
		return fmt.Errorf("create trial: %w", err)
	}
	var err error
	if jt.t.userAttrs, err = journalAttrs(op, "user_attrs", nil); err != nil {
		return fmt.Errorf("create trial: %w", err)
	}
	if iv, present := op["intermediate_values"]; present && iv != nil {
		m, ok := iv.(map[string]any)
		if !ok {
			return errors.New("create trial: intermediate_values is not an object")
		}
		for key, v := range m {
			step, err := strconv.ParseInt(key, 10, 64)
			if err != nil {
				return fmt.Errorf("create trial: intermediate step %q is not an integer", key)
			}
			f, ok := numberOf(v)
			if !ok {
				return fmt.Errorf("create trial: intermediate value %v at step %d is not a number", v, step)
			}
			jt.t.intermediate = withStep(jt.t.intermediate, step, f)
		}
	}
	s.trialIDs = append(s.trialIDs, len(j.trials))
	j.trials = append(j.trials, jt)
	return nil
}

// setSystemAttrs keeps the trial system attributes xbo reads: the
// constraint values.
func (t *journalTrial) setSystemAttrs(attrs map[string]any) error {
	if _, fixed := attrs[optunaFixedParamsKey]; fixed {
		t.t.enqueued = true
	}
	v, present := attrs[optunaConstraintsKey]
	if !present {
		return nil
	}
	cons, err := optunaConstraintValues(v)
	if err != nil {
		return fmt.Errorf("trial %d: %w", t.t.number, err)
	}
	t.t.constraints = cons
	return nil
}

// setIntermediate records a reported value (a later one at the same step
// replaces it, as in Optuna).
func (j *journal) setIntermediate(op map[string]any) error {
	t, ok, err := j.updatable(op, "set intermediate value")
	if !ok {
		return err
	}
	step, ok := intOf(op["step"])
	if !ok {
		return fmt.Errorf("set intermediate value: step %v is not an integer", op["step"])
	}
	v, ok := numberOf(op["intermediate_value"])
	if !ok {
		return fmt.Errorf("set intermediate value: %v is not a number", op["intermediate_value"])
	}
	t.t.intermediate = withStep(t.t.intermediate, int64(step), v)
	return nil
}

// withStep inserts or replaces the value at step, keeping steps in order.
func withStep(list []history.Intermediate, step int64, v float64) []history.Intermediate {
	i, found := slices.BinarySearchFunc(list, step, func(it history.Intermediate, s int64) int { return cmp.Compare(it.Step, s) })
	if found {
		list[i].Value = v
		return list
	}
	return slices.Insert(list, i, history.Intermediate{Step: step, Value: v})
}

// updatable mirrors Optuna's rule: updates to unknown or finished trials are
// dropped.
func (j *journal) updatable(op map[string]any, what string) (*journalTrial, bool, error) {
	id, ok := intOf(op["trial_id"])
	if !ok {
		return nil, false, fmt.Errorf("%s: trial_id %v is not an integer", what, op["trial_id"])
	}
	if id < 0 || id >= len(j.trials) {
		j.ignored++
		return nil, false, nil
	}
	t := j.trials[id]
	switch t.t.state {
	case history.Complete, history.Failed, history.Pruned:
		j.ignored++
		return nil, false, nil
	}
	return t, true, nil
}

func (j *journal) setParam(op map[string]any) error {
	t, ok, err := j.updatable(op, "set param")
	if !ok {
		return err
	}
	name, ok := op["param_name"].(string)
	if !ok {
		return errors.New("set param: param_name is not a string")
	}
	text, ok := op["distribution"].(string)
	if !ok {
		return fmt.Errorf("set param %q: distribution is not a JSON string", name)
	}
	d, err := parseOptunaDist(text)
	if err != nil {
		return fmt.Errorf("set param %q: %w", name, err)
	}
	internal, ok := numberOf(op["param_value_internal"])
	if !ok {
		return fmt.Errorf("set param %q: param_value_internal %v is not a number", name, op["param_value_internal"])
	}
	// Optuna checks the new distribution against the first trial of the
	// study that has this parameter and silently skips an incompatible one.
	if s, live := j.studies[t.studyID]; live {
	search:
		for _, tid := range s.trialIDs {
			for _, p := range j.trials[tid].t.params {
				if p.name != name {
					continue
				}
				if why := incompatible(p.dist, d); why != "" {
					j.incompat = append(j.incompat, fmt.Sprintf("trial %d: parameter %q (%s)", t.t.number, name, why))
					return nil
				}
				break search
			}
		}
	}
	for i, p := range t.t.params {
		if p.name == name {
			t.t.params[i] = optunaParam{name: name, internal: internal, dist: d}
			return nil
		}
	}
	t.t.params = append(t.t.params, optunaParam{name: name, internal: internal, dist: d})
	return nil
}

// incompatible mirrors optuna.distributions.check_distribution_compatibility.
func incompatible(old, cur optunaDist) string {
	if old.class != cur.class {
		return fmt.Sprintf("%s after %s", cur.class, old.class)
	}
	if old.log != cur.log {
		return "log setting changed"
	}
	if old.typ == space.Categorical {
		if len(old.choices) != len(cur.choices) {
			return "categorical choices changed"
		}
		for i := range old.choices {
			if old.choices[i] != cur.choices[i] {
				return "categorical choices changed"
			}
		}
	}
	return ""
}

func (j *journal) setState(op map[string]any) error {
	t, ok, err := j.updatable(op, "set state")
	if !ok {
		return err
	}
	code, ok := intOf(op["state"])
	state, known := optunaStateCode(code)
	if !ok || !known {
		return fmt.Errorf("set state: unknown state %v", op["state"])
	}
	if state == history.Running && t.t.state == history.Running {
		return nil
	}
	if err := journalTimes(op, &t.t); err != nil {
		return fmt.Errorf("set state: %w", err)
	}
	t.t.state = state
	if vs, present := op["values"]; present && vs != nil {
		values, err := floatList(vs)
		if err != nil {
			return fmt.Errorf("set state: values: %w", err)
		}
		t.values = values
	}
	return nil
}

func floatList(v any) ([]float64, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%v is not a list", v)
	}
	out := make([]float64, len(list))
	for i, x := range list {
		f, ok := numberOf(x)
		if !ok {
			return nil, fmt.Errorf("%v is not a number", x)
		}
		out[i] = f
	}
	return out, nil
}

func (j *journal) infos() []StudyInfo {
	var out []StudyInfo
	for _, id := range j.order {
		s, ok := j.studies[id]
		if !ok {
			continue
		}
		out = append(out, StudyInfo{Name: s.name, Objectives: len(s.dirs), Trials: len(s.trialIDs)})
	}
	return out
}

func readJournalFile(path string) (*journal, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return replayJournal(f)
}

// ListOptunaJournalStudies lists the studies of an Optuna journal file.
func ListOptunaJournalStudies(path string) ([]StudyInfo, error) {
	j, err := readJournalFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return j.infos(), nil
}

// ImportOptunaJournal reads one study of an Optuna JournalStorage file (see
// ImportOptuna for how the study is chosen).
func ImportOptunaJournal(path, study string) (*Run, error) {
	j, err := readJournalFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	run, err := j.importStudy(path, study)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return run, nil
}

func (j *journal) importStudy(path, study string) (*Run, error) {
	name, err := chooseStudy(j.infos(), study)
	if err != nil {
		return nil, err
	}
	var s *journalStudy
	for _, id := range j.order {
		if st, ok := j.studies[id]; ok && st.name == name {
			s = st
		}
	}
	if len(s.dirs) > space.MaxObjectives {
		return nil, fmt.Errorf("study %q has %d objectives; xbo takes at most %d", name, len(s.dirs), space.MaxObjectives)
	}
	info := optunaStudy{name: name, metricNames: s.metricNames, userAttrs: s.userAttrs}
	for _, d := range s.dirs {
		dir, _ := directionName(strconv.Itoa(d))
		info.dirs = append(info.dirs, dir)
	}
	var warnings []string
	if j.partialLine > 0 {
		warnings = append(warnings, fmt.Sprintf("line %d is not complete JSON (an interrupted write); it is ignored, as Optuna ignores it", j.partialLine))
	}
	if j.ignored > 0 {
		warnings = append(warnings, fmt.Sprintf("%d journal records update unknown or already finished trials; they are ignored, as Optuna ignores them", j.ignored))
	}
	if len(j.incompat) > 0 {
		warnings = append(warnings, fmt.Sprintf("%d parameter records conflict with the parameter's first distribution and are ignored, as Optuna ignores them: %s", len(j.incompat), j.incompat[0]))
	}
	if w := systemAttrsWarning("trial", j.dropped); w != "" {
		warnings = append(warnings, w)
	}
	m := len(s.dirs)
	list := make([]optunaTrial, 0, len(s.trialIDs))
	for _, tid := range s.trialIDs {
		jt := j.trials[tid]
		t := jt.t
		switch {
		case len(jt.values) == 0:
		case len(jt.values) != m:
			return nil, fmt.Errorf("study %q: trial %d has %d values; the study has %d objective(s)", name, t.number, len(jt.values), m)
		case m == 1:
			t.value = jt.values[0]
		default:
			t.value, t.values = jt.values[0], slices.Clone(jt.values)
		}
		list = append(list, t)
	}
	run, err := assembleOptuna("optuna-journal", path, info, list, warnings)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	return run, nil
}
