package importer

import (
	"xbo/history"

	"bufio"
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

	"xbo/space"
	"xbo/trials"
)

// TableOptions tunes the import of a generic trial table.
type TableOptions struct {
	// ValueColumns name the objective columns, one per objective of the
	// space in its order (default: the space's objective names, "value"
	// for one unnamed objective).
	ValueColumns []string
	// ConstraintColumns name the constraint columns, one per constraint of
	// the space (default: the constraints' names). When the space declares
	// no constraints they declare them: the imported space's constraints
	// are named after the columns.
	ConstraintColumns []string
}

// ImportTable reads a generic trial table against a space file's space: a
// CSV file with a header (one column per parameter, an empty cell for an
// inactive one; the objective columns; optional constraint, "state",
// "number" and "acquisition" columns), or JSON: a list of trials, or one
// trial per line, each either {"params": {...}, "value": v, "state": s,
// "number": n} or a flat object of parameters plus "value" (with several
// objectives a key per objective, or "values": [...]; constraint values a
// key per constraint, or "constraints": [...]). Columns or keys the space
// does not know are kept as user attributes (and named in a warning), as
// the trials reader does (trials.Scan reads the CSV for both); values
// outside the space widen it (reported), where the trials reader refuses
// them.
func ImportTable(path string, s *space.Space, opts TableOptions) (*Run, error) {
	tb, err := newTable(path, s, opts)
	if err != nil {
		return nil, err
	}
	b := tb.b
	if err := tb.read(b.warnf, func(rt rawTrial) error {
		b.trials = append(b.trials, rt)
		return nil
	}); err != nil {
		return nil, err
	}
	run, err := b.build()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return run, nil
}

// table is a trial table to import: its file, the space it is read
// against, its columns, and the builder of its parameters.
type table struct {
	path string
	s    *space.Space
	cols trials.Columns
	b    *builder
}

// newTable checks a table import's space and columns and makes its
// builder.
func newTable(path string, s *space.Space, opts TableOptions) (*table, error) {
	if s == nil {
		return nil, errors.New("importer: a table needs a space (--space)")
	}
	if len(s.Constraints) == 0 && len(opts.ConstraintColumns) > 0 {
		// The columns declare the constraints (a constraint needs nothing
		// but its name: feasible when ≤ 0).
		withCons, err := space.NewWithObjectives(s.Objective, s.Objectives, opts.ConstraintColumns, s.Params)
		if err != nil {
			return nil, fmt.Errorf("importer: constraint columns: %w", err)
		}
		s = withCons
	}
	cols := trials.Columns{Values: opts.ValueColumns, Constraints: opts.ConstraintColumns}
	if m := s.NumObjectives(); len(cols.Values) > 0 && len(cols.Values) != m {
		return nil, fmt.Errorf("importer: %d value columns (%s) for the space's %d objective(s) (%s); a study with several objectives declares them in the space file (\"objectives\": [{\"name\": ..., \"direction\": ...}, ...])",
			len(cols.Values), strings.Join(cols.Values, ", "), m, strings.Join(s.ObjectiveNames(), ", "))
	}
	if n := len(s.Constraints); len(cols.Constraints) > 0 && len(cols.Constraints) != n {
		return nil, fmt.Errorf("importer: %d constraint columns (%s) for the space's %d constraint(s) (%s)",
			len(cols.Constraints), strings.Join(cols.Constraints, ", "), n, strings.Join(s.Constraints, ", "))
	}
	b := newBuilder("csv", path)
	b.objective = s.Objective
	b.objectives, b.constraints = s.Objectives, s.Constraints
	for _, p := range s.Params {
		rp := &rawParam{name: p.Name, typ: p.Type, low: p.Low, high: p.High, log: p.Log, def: p.Default}
		// Trial values are matched by the choices' text forms, which are
		// what CSV cells hold; the space's typed choices are kept.
		rp.choices = p.Labels()
		for k, c := range p.Choices {
			if _, isString := c.(string); !isString {
				if rp.typed == nil {
					rp.typed = map[string]any{}
				}
				rp.typed[rp.choices[k]] = c
			}
		}
		if p.Condition != nil {
			c := *p.Condition
			rp.cond = &c
		}
		if err := b.addParam(rp); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return &table{path: path, s: s, cols: cols, b: b}, nil
}

// read reads the table's file, handing each row to emit as it is read;
// warn gets what the file holds that the space does not know.
func (tb *table) read(warn func(format string, a ...any), emit func(rawTrial) error) error {
	f, err := os.Open(tb.path)
	if err != nil {
		return err
	}
	defer f.Close()
	// Streamed: the readers bound each line or record as they read it
	// (tablestream.go), so the file is never held whole.
	in := bufio.NewReaderSize(f, 64<<10)
	isJSON, err := sniffJSON(in, strings.ToLower(filepath.Ext(tb.path)))
	if err != nil {
		return fmt.Errorf("%s: %w", tb.path, err)
	}
	if isJSON {
		tb.b.format = "json"
		err = readJSONTable(in, tb.s, tb.b, tb.cols, warn, emit)
	} else {
		err = readCSVTable(in, tb.s, tb.b, tb.cols, warn, emit)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", tb.path, err)
	}
	return nil
}

func readCSVTable(in io.Reader, s *space.Space, b *builder, cols trials.Columns, warn func(string, ...any), emit func(rawTrial) error) error {
	rows := 0
	header, err := trials.Scan(in, s, cols, func(_ *trials.Header, row *trials.Row) error {
		rt := rawTrial{number: rows, values: map[string]rawValue{}, state: row.State, value: row.Value,
			objValues: row.Values, constraints: row.Constraints, origin: row.Acquisition, attrs: row.Attrs}
		if row.HasNumber {
			rt.number = int(row.Number)
		}
		for i, text := range row.Params {
			if text == "" {
				continue
			}
			p := b.params[i]
			if p.typ == space.Categorical {
				rt.values[p.name] = catValue(text)
				continue
			}
			f, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return fmt.Errorf("line %d, column %q: %s is not a number", row.Line, p.name, trials.Excerpt(text))
			}
			rt.values[p.name] = numValue(f)
		}
		rows++
		return emit(rt)
	})
	if err != nil {
		return err
	}
	if extra := header.ExtraNames(); len(extra) > 0 {
		warn("columns %s are not parameters of the space; kept as user attributes", quoteAll(extra))
	}
	return nil
}

func readJSONTable(in *bufio.Reader, s *space.Space, b *builder, cols trials.Columns, warn func(string, ...any), emit func(rawTrial) error) error {
	if len(cols.Values) == 0 {
		cols.Values = s.ObjectiveNames()
	}
	if len(cols.Constraints) == 0 {
		cols.Constraints = s.Constraints
	}
	// Keys that hold the outcome, not parameters or attributes.
	outcomeKey := map[string]bool{"values": true, "constraints": true, trials.ValueColumn: len(cols.Values) == 1}
	for _, name := range append(slices.Clone(cols.Values), cols.Constraints...) {
		outcomeKey[name] = true
	}
	unknown := map[string]bool{}
	records := &jsonRecords{r: in}
	err := records.each(func(i int, where string, text []byte) error {
		r, err := decodeJSON(text)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		obj, ok := r.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not a JSON object", where)
		}
		rt := rawTrial{number: i, values: map[string]rawValue{}, state: history.Complete, value: math.NaN()}
		params, nested := obj["params"].(map[string]any)
		if !nested {
			params = obj
		}
		if n, present := obj["number"]; present {
			k, ok := intOf(n)
			if !ok {
				return fmt.Errorf("%s: number %v is not an integer", where, n)
			}
			rt.number = k
		}
		if st, present := obj["state"]; present && st != nil {
			text, _ := st.(string)
			st, err := trials.ParseState(text)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			rt.state = st
		}
		if o, ok := obj["acquisition"].(string); ok {
			rt.origin = o
		}
		values, err := jsonValues(obj, cols.Values)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		rt.value = values[0]
		missing := slices.ContainsFunc(values, math.IsNaN)
		if missing && rt.state == history.Complete {
			rt.state = history.Failed
		}
		if len(values) > 1 && rt.state == history.Complete {
			rt.objValues = values
		}
		if rt.constraints, err = jsonConstraints(obj, cols.Constraints); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		for name, v := range params {
			p, ok := b.byName[name]
			if !ok {
				if !nested && (outcomeKey[name] || name == "state" || name == "number" || name == "acquisition") {
					continue
				}
				unknown[name] = true
				if v != nil {
					if rt.attrs == nil {
						rt.attrs = map[string]any{}
					}
					rt.attrs[name] = v
				}
				continue
			}
			if v == nil {
				continue
			}
			if p.typ == space.Categorical {
				c, err := p.nameOf(v)
				if err != nil {
					return fmt.Errorf("%s: parameter %q: %w", where, name, err)
				}
				rt.values[name] = catValue(c)
				continue
			}
			f, ok := numberOf(v)
			if !ok {
				return fmt.Errorf("%s: parameter %q: %v is not a number", where, name, v)
			}
			rt.values[name] = numValue(f)
		}
		return emit(rt)
	})
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		var names []string
		for n := range unknown {
			names = append(names, n)
		}
		sort.Strings(names)
		warn("keys %s are not parameters of the space; kept as user attributes", quoteAll(names))
	}
	return nil
}

// jsonValues reads a record's objective values: the list "values" (one
// per objective), else a key per objective (names; a single objective
// also "value"). A value that is absent or null is NaN.
func jsonValues(obj map[string]any, names []string) ([]float64, error) {
	out := make([]float64, len(names))
	if list, ok := obj["values"].([]any); ok {
		if len(list) != len(names) {
			return nil, fmt.Errorf("values has %d entries for %d objective(s) (%s)", len(list), len(names), strings.Join(names, ", "))
		}
		for k, v := range list {
			if out[k] = math.NaN(); v == nil {
				continue
			}
			f, ok := numberOf(v)
			if !ok {
				return nil, fmt.Errorf("values[%d] = %v is not a number", k, v)
			}
			out[k] = f
		}
		return out, nil
	}
	for k, name := range names {
		out[k] = math.NaN()
		v, present := obj[name]
		if !present && len(names) == 1 {
			name = trials.ValueColumn
			v = obj[name]
		}
		if v == nil {
			continue
		}
		f, ok := numberOf(v)
		if !ok {
			return nil, fmt.Errorf("%s %v is not a number", name, v)
		}
		out[k] = f
	}
	return out, nil
}

// jsonConstraints reads a record's constraint values: the list
// "constraints", else a key per constraint; nil when it has none, an
// error when it has some but not all or one is not a finite number.
func jsonConstraints(obj map[string]any, names []string) ([]float64, error) {
	if len(names) == 0 {
		if list, ok := obj["constraints"].([]any); ok && len(list) > 0 {
			return nil, fmt.Errorf("constraints has %d entries, but the space declares no constraints (add \"constraints\" to the space file or give --constraint-column)", len(list))
		}
		return nil, nil
	}
	raw := make([]any, len(names))
	what := make([]string, len(names))
	if list, ok := obj["constraints"].([]any); ok {
		if len(list) != len(names) {
			return nil, fmt.Errorf("constraints has %d entries for %d constraint(s) (%s)", len(list), len(names), strings.Join(names, ", "))
		}
		copy(raw, list)
		for j := range what {
			what[j] = fmt.Sprintf("constraints[%d]", j)
		}
	} else {
		for j, name := range names {
			raw[j], what[j] = obj[name], name
		}
	}
	given := 0
	for _, v := range raw {
		if v != nil {
			given++
		}
	}
	if given == 0 {
		return nil, nil
	}
	out := make([]float64, len(names))
	for j, v := range raw {
		if v == nil {
			return nil, fmt.Errorf("%s is missing while other constraint values are given (a trial reports every constraint value or none)", what[j])
		}
		f, ok := numberOf(v)
		if !ok {
			return nil, fmt.Errorf("%s = %v is not a number", what[j], v)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s = %v is not finite", what[j], f)
		}
		out[j] = f
	}
	return out, nil
}
