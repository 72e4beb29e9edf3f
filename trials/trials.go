// Package trials reads and writes the trials table that every xbo command
// shares: a CSV file with one column per hyperparameter (an empty cell for an
// inactive conditional parameter), then `value`, then optionally
// `acquisition` (which acquisition chose the trial) and `state`.
//
// A study with several objectives has a column per objective instead of
// `value`, named after it (space.Space.ObjectiveNames: "error", "size"),
// and a constrained study a column per constraint, named after it (an
// empty cell in every one of them: the trial reported no constraint
// values). The space says which columns to look for, so a table goes
// round with its space; Columns names other columns (xbo import
// --value-column, --constraint-column).
//
// Reading produces a history.History, the form every explanation reads.
// It is strict about the parameters, because a silently misread column would
// make every explanation wrong: values outside the space and non-numeric
// values are errors that name the row and column. Other columns are kept as
// user attributes and named in a warning. A row whose value is empty or
// "nan", or whose state is not complete, is kept as a trial without a usable
// value (failed, pruned, pending, ...), never dropped.
//
// Scan is the one header-and-row policy for trial tables; the importer's
// lenient table reader (which widens the space instead of refusing values
// outside it) uses it too.
package trials

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"xbo/history"
	"xbo/space"
)

// Column names besides the parameters.
const (
	ValueColumn       = "value"
	AcquisitionColumn = "acquisition"
	StateColumn       = "state"
	NumberColumn      = "number"
)

// MaxLineBytes bounds one line of a trials file: a longer line is refused
// before it is held in memory (a 3,000-parameter header is about 60 kB).
const MaxLineBytes = 1 << 20

// excerptLen bounds how much of a cell or column name an error quotes.
const excerptLen = 60

// Excerpt quotes at most a short prefix of text, for error messages about
// input of any size.
func Excerpt(text string) string {
	r := []rune(text)
	if len(r) <= excerptLen {
		return strconv.Quote(text)
	}
	return strconv.Quote(string(r[:excerptLen])) + fmt.Sprintf("… (%d characters)", len(r))
}

// ParseState reads a state cell. Empty means complete (a value decides);
// besides history's state names it accepts the spellings other tools write.
func ParseState(text string) (history.State, error) {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "", "complete", "completed", "success", "succeeded", "ok":
		return history.Complete, nil
	case "failed", "fail", "error", "crashed":
		return history.Failed, nil
	case "pruned":
		return history.Pruned, nil
	case "running":
		return history.Running, nil
	case "waiting", "pending", "queued":
		return history.Pending, nil
	case "expired":
		return history.Expired, nil
	}
	return "", fmt.Errorf("unknown state %s (complete, failed, pruned, running, pending, expired)", Excerpt(text))
}

// Columns names the outcome columns of a table: one per objective, in the
// space's order, and one per constraint. Empty fields take the space's own
// names (ObjectiveNames, Constraints); a single objective also reads a
// column named "value" when its name is not one of the table's (a study
// whose one objective is named reads the tables of before it was).
type Columns struct {
	Values      []string
	Constraints []string
}

// resolve fills the defaults and checks the names against the space: one
// per objective and per constraint, none twice, none a parameter's or
// another column's name (a CSV header could not tell them apart).
func (c Columns) resolve(s *space.Space) (Columns, error) {
	out := Columns{Values: c.Values, Constraints: c.Constraints}
	if len(out.Values) == 0 {
		out.Values = s.ObjectiveNames()
	}
	if len(out.Constraints) == 0 {
		out.Constraints = s.Constraints
	}
	if m := s.NumObjectives(); len(out.Values) != m {
		return Columns{}, fmt.Errorf("%d value columns (%s) for the space's %d objective(s) (%s)",
			len(out.Values), strings.Join(out.Values, ", "), m, strings.Join(s.ObjectiveNames(), ", "))
	}
	if n := len(s.Constraints); len(out.Constraints) != n {
		return Columns{}, fmt.Errorf("%d constraint columns (%s) for the space's %d constraint(s)",
			len(out.Constraints), strings.Join(out.Constraints, ", "), n)
	}
	seen := map[string]string{}
	for _, name := range []string{NumberColumn, StateColumn, AcquisitionColumn, "origin"} {
		seen[name] = "the " + name + " column"
	}
	for _, p := range s.Params {
		seen[p.Name] = fmt.Sprintf("parameter %q", p.Name)
	}
	check := func(kind string, names []string) error {
		for _, name := range names {
			if strings.TrimSpace(name) == "" {
				return fmt.Errorf("%s column has an empty name", kind)
			}
			if other, taken := seen[name]; taken {
				return fmt.Errorf("%s column %s is also the name of %s; a table cannot hold both", kind, Excerpt(name), other)
			}
			seen[name] = kind + " column " + strconv.Quote(name)
		}
		return nil
	}
	if err := check("objective", out.Values); err != nil {
		return Columns{}, err
	}
	if err := check("constraint", out.Constraints); err != nil {
		return Columns{}, err
	}
	return out, nil
}

// Header is the layout of a trials table: the column of each parameter of
// the space, of each objective value and constraint value, of the state,
// number and acquisition (−1 when absent), and the other columns, which
// are kept as user attributes.
type Header struct {
	Params []int
	// Values holds the column of each objective (its first the objective
	// of a single-objective study), Constraints of each constraint.
	Values, Constraints         []int
	State, Number, Acquisition  int
	Extra                       map[int]string
	valueNames, constraintNames []string
}

// ParseHeader maps a header line onto a space's parameters and outcome
// columns (cols, defaults from the space). Every parameter, objective and
// constraint needs a column; a column named twice is an error. "origin" is
// read as the acquisition column (SMAC3's name for it).
func ParseHeader(header []string, s *space.Space, cols Columns) (*Header, error) {
	cols, err := cols.resolve(s)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	h := &Header{Params: make([]int, s.Dim()), Values: make([]int, len(cols.Values)), Constraints: make([]int, len(cols.Constraints)),
		State: -1, Number: -1, Acquisition: -1, Extra: map[int]string{}, valueNames: cols.Values, constraintNames: cols.Constraints}
	for _, list := range [][]int{h.Params, h.Values, h.Constraints} {
		for i := range list {
			list[i] = -1
		}
	}
	valueAt, constraintAt := map[string]int{}, map[string]int{}
	for k, name := range cols.Values {
		valueAt[name] = k
	}
	for j, name := range cols.Constraints {
		constraintAt[name] = j
	}
	seen := map[string]bool{}
	valueCol := -1 // a column named "value", for a single objective named otherwise
	for c, name := range header {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		if seen[name] {
			return nil, fmt.Errorf("header: column %s appears twice", Excerpt(name))
		}
		seen[name] = true
		if i, ok := s.Index(name); ok {
			h.Params[i] = c
			continue
		}
		if k, ok := valueAt[name]; ok {
			h.Values[k] = c
			continue
		}
		if j, ok := constraintAt[name]; ok {
			h.Constraints[j] = c
			continue
		}
		switch name {
		case AcquisitionColumn, "origin":
			h.Acquisition = c
		case StateColumn:
			h.State = c
		case NumberColumn:
			h.Number = c
		default:
			if name == ValueColumn {
				valueCol = c
			}
			h.Extra[c] = name
		}
	}
	for i, c := range h.Params {
		if c < 0 {
			return nil, fmt.Errorf("header: no column for parameter %q", s.Params[i].Name)
		}
	}
	if len(h.Values) == 1 && h.Values[0] < 0 && valueCol >= 0 {
		h.Values[0] = valueCol
		h.valueNames = []string{ValueColumn}
		delete(h.Extra, valueCol)
	}
	for k, c := range h.Values {
		if c < 0 {
			if len(h.Values) == 1 {
				return nil, fmt.Errorf("header: no %q column", cols.Values[0])
			}
			return nil, fmt.Errorf("header: no column for objective %q (a study with several objectives has a column per objective, named after it)", cols.Values[k])
		}
	}
	for j, c := range h.Constraints {
		if c < 0 {
			return nil, fmt.Errorf("header: no column for constraint %q (a constrained study has a column per constraint, named after it)", cols.Constraints[j])
		}
	}
	return h, nil
}

// ExtraNames lists the columns kept as user attributes, in file order.
func (h *Header) ExtraNames() []string {
	cols := make([]int, 0, len(h.Extra))
	for c := range h.Extra {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	names := make([]string, len(cols))
	for k, c := range cols {
		names[k] = h.Extra[c]
	}
	return names
}

// Row is one data line read against a Header: the trimmed cells of the
// parameters, the parsed value (NaN when empty or "nan"), state, number and
// acquisition, and the extra cells as user attributes (numbers as float64).
// With several objectives, Values holds every objective's value of a
// complete row (Value is the first; a complete row missing one is failed);
// Constraints holds the constraint values when the row has them (nil when
// every constraint cell is empty).
type Row struct {
	Line        int
	Params      []string
	Value       float64
	Values      []float64
	Constraints []float64
	State       history.State
	Number      int64
	HasNumber   bool
	Acquisition string
	Attrs       map[string]any
}

// Scan reads the header and every data line of a CSV table. Both readers of
// tables (ReadCSV, strict about the space, and the importer, which widens
// it) go through it, so they agree on every column but the parameters'.
// cols names the outcome columns (zero: the space's names). Lines longer
// than MaxLineBytes are refused.
func Scan(r io.Reader, s *space.Space, cols Columns, visit func(h *Header, row *Row) error) (*Header, error) {
	if s == nil {
		return nil, errors.New("trials: no space given")
	}
	cr := csv.NewReader(&boundedLines{r: r, limit: MaxLineBytes, line: 1})
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("trials: empty file (expected a header line)")
	}
	if err != nil {
		return nil, fmt.Errorf("trials: header: %w", err)
	}
	header = slices.Clone(header) // the reader reuses its record
	h, err := ParseHeader(header, s, cols)
	if err != nil {
		return nil, fmt.Errorf("trials: %w", err)
	}
	line := 1
	for {
		rec, err := cr.Read()
		line++
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return nil, fmt.Errorf("trials: line %d: %w", line, err)
		}
		row := &Row{Line: line, Params: make([]string, s.Dim()), Value: math.NaN(), State: history.Complete}
		for i, c := range h.Params {
			row.Params[i] = strings.TrimSpace(rec[c])
		}
		if h.State >= 0 {
			if row.State, err = ParseState(rec[h.State]); err != nil {
				return nil, fmt.Errorf("trials: line %d, column \"state\": %w", line, err)
			}
		}
		if h.Number >= 0 {
			text := strings.TrimSpace(rec[h.Number])
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("trials: line %d, column \"number\": %s is not an integer", line, Excerpt(text))
			}
			row.Number, row.HasNumber = n, true
		}
		if h.Acquisition >= 0 {
			row.Acquisition = strings.TrimSpace(rec[h.Acquisition])
		}
		values := make([]float64, len(h.Values))
		missing := false
		for k, c := range h.Values {
			v, err := valueCell(rec[c])
			if err != nil {
				return nil, fmt.Errorf("trials: line %d, column %q: %w", line, h.valueNames[k], err)
			}
			values[k] = v
			missing = missing || math.IsNaN(v)
		}
		row.Value = values[0]
		if missing && row.State == history.Complete {
			row.State = history.Failed // no value, no result
		}
		if len(values) > 1 && row.State == history.Complete {
			// Only a complete trial has every objective's value; another
			// keeps its first column as its value (a pruned trial's last
			// intermediate value).
			row.Values = values
		}
		if row.Constraints, err = constraintCells(rec, h); err != nil {
			return nil, fmt.Errorf("trials: line %d, %w", line, err)
		}
		for c, name := range h.Extra {
			text := strings.TrimSpace(rec[c])
			if text == "" {
				continue
			}
			if row.Attrs == nil {
				row.Attrs = map[string]any{}
			}
			if f, err := strconv.ParseFloat(text, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				row.Attrs[name] = f
			} else {
				row.Attrs[name] = text
			}
		}
		if err := visit(h, row); err != nil {
			return nil, err
		}
	}
}

// valueCell reads an objective value: NaN when empty or "nan", an error
// when it is not a number or not finite.
func valueCell(cell string) (float64, error) {
	text := strings.TrimSpace(cell)
	if text == "" || strings.EqualFold(text, "nan") {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a number", Excerpt(text))
	}
	if math.IsInf(v, 0) {
		return 0, fmt.Errorf("%v is not finite (leave the cell empty for a failed trial)", v)
	}
	return v, nil
}

// constraintCells reads a row's constraint values: nil when every cell is
// empty (the trial reported none), else every one, finite.
func constraintCells(rec []string, h *Header) ([]float64, error) {
	empty := 0
	for _, c := range h.Constraints {
		if strings.TrimSpace(rec[c]) == "" {
			empty++
		}
	}
	if empty == len(h.Constraints) {
		return nil, nil
	}
	out := make([]float64, len(h.Constraints))
	for j, c := range h.Constraints {
		text := strings.TrimSpace(rec[c])
		if text == "" {
			return nil, fmt.Errorf("column %q is empty while other constraint columns are not (a trial reports every constraint value or none)", h.constraintNames[j])
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("column %q: %s is not a finite number", h.constraintNames[j], Excerpt(text))
		}
		out[j] = v
	}
	return out, nil
}

// boundedLines passes a reader through and fails once a line exceeds limit
// bytes, so a file without line breaks is not read whole into memory.
type boundedLines struct {
	r     io.Reader
	limit int
	run   int // bytes since the last line break
	line  int
}

func (b *boundedLines) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			b.run = 0
			b.line++
			continue
		}
		b.run++
		if b.run > b.limit {
			return 0, fmt.Errorf("line %d is longer than %d bytes", b.line, b.limit)
		}
	}
	return n, err
}

// ReadFile reads a trials CSV from disk.
func ReadFile(path string, s *space.Space) (*history.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trials: %w", err)
	}
	defer f.Close()
	h, err := ReadCSV(f, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h.Source = path
	return h, nil
}

// ReadCSV parses a trials table against a space into a history. Every row
// becomes a trial, usable or not; the parameters must lie in the space
// (values outside it are errors naming the line and column: `xbo import
// --csv` widens the space instead). Rows are numbered by the number column
// when there is one (then sorted by it), else by their position from 0, and
// completed in file order. The outcome columns are the space's (Columns);
// columns that are not parameters, outcomes or one of acquisition, state
// and number are kept as user attributes, with a warning.
func ReadCSV(r io.Reader, s *space.Space) (*history.History, error) {
	h := &history.History{Space: s}
	completed := 0
	header, err := Scan(r, s, Columns{}, func(_ *Header, row *Row) error {
		vals := make([]float64, s.Dim())
		for i, text := range row.Params {
			x, err := s.ParseValue(i, text)
			if err != nil {
				return fmt.Errorf("trials: line %d, column %q: %w", row.Line, s.Params[i].Name, err)
			}
			vals[i] = x
		}
		t := history.Trial{Number: int64(len(h.Trials)), State: row.State, Params: vals, Value: row.Value,
			Values: row.Values, Constraints: row.Constraints, Acquisition: row.Acquisition, UserAttrs: row.Attrs, Completion: -1}
		if t.State == history.Complete {
			t.Completion = completed // the file's order is the order the trials were run
			completed++
		}
		if row.HasNumber {
			t.Number = row.Number
		}
		if t.Usable() {
			if err := s.Validate(vals); err != nil {
				return fmt.Errorf("trials: line %d: %w", row.Line, err)
			}
		}
		h.Trials = append(h.Trials, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if extra := header.ExtraNames(); len(extra) > 0 {
		quoted := make([]string, len(extra))
		for k, n := range extra {
			quoted[k] = Excerpt(n)
		}
		h.Warnings = append(h.Warnings, fmt.Sprintf("columns %s are not parameters of the space (%s) nor its objectives (%s); kept as user attributes",
			strings.Join(quoted, ", "), strings.Join(s.Names(), ", "), strings.Join(header.valueNames, ", ")))
	}
	slices.SortStableFunc(h.Trials, func(a, b history.Trial) int { return cmp.Compare(a.Number, b.Number) })
	for i := 1; i < len(h.Trials); i++ {
		if h.Trials[i].Number == h.Trials[i-1].Number {
			return nil, fmt.Errorf("trials: column \"number\": trial %d appears twice", h.Trials[i].Number)
		}
	}
	return h, nil
}

// Record is one trial to write.
type Record struct {
	// Number is written by writers made by Write (a number column first).
	Number int64
	Params []float64 // natural values, NaN for inactive
	Value  float64   // NaN for a failed trial
	// Values are every objective's value of a study with several (nil:
	// Value goes in the first objective's column, the others stay empty);
	// Constraints the constraint values (nil: empty cells).
	Values, Constraints []float64
	Acquisition         string
	// State is written only by writers made with NewWriterWithState:
	// "complete", "failed", "pruned", "pending", ...
	State string
}

// Writer writes a trials CSV, one record at a time, flushing after each so
// that a long run interrupted midway leaves every finished trial on disk.
type Writer struct {
	s                     *space.Space
	cw                    *csv.Writer
	withNumber, withState bool
}

// NewWriter writes the header and returns a Writer.
func NewWriter(w io.Writer, s *space.Space) (*Writer, error) {
	return newWriter(w, s, false, false)
}

// NewWriterWithState is NewWriter with a trailing `state` column, for
// histories that hold failed, pruned or pending trials worth keeping apart.
func NewWriterWithState(w io.Writer, s *space.Space) (*Writer, error) {
	return newWriter(w, s, false, true)
}

// newWriter writes the header: [number,] the parameters, a column per
// objective (value for one unnamed objective), a column per constraint,
// acquisition[, state].
func newWriter(w io.Writer, s *space.Space, withNumber, withState bool) (*Writer, error) {
	if s == nil {
		return nil, errors.New("trials: no space given")
	}
	cols, err := Columns{}.resolve(s)
	if err != nil {
		return nil, fmt.Errorf("trials: %w", err)
	}
	cw := csv.NewWriter(w)
	var header []string
	if withNumber {
		header = append(header, NumberColumn)
	}
	header = append(header, s.Names()...)
	header = append(header, cols.Values...)
	header = append(header, cols.Constraints...)
	header = append(header, AcquisitionColumn)
	if withState {
		header = append(header, StateColumn)
	}
	if err := cw.Write(header); err != nil {
		return nil, fmt.Errorf("trials: write header: %w", err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return nil, fmt.Errorf("trials: write header: %w", err)
	}
	return &Writer{s: s, cw: cw, withNumber: withNumber, withState: withState}, nil
}

// Write appends one trial.
func (w *Writer) Write(r Record) error {
	if len(r.Params) != w.s.Dim() {
		return fmt.Errorf("trials: record has %d parameters, the space has %d", len(r.Params), w.s.Dim())
	}
	m, n := w.s.NumObjectives(), len(w.s.Constraints)
	if len(r.Values) > 0 && len(r.Values) != m {
		return fmt.Errorf("trials: record has %d objective values, the space has %d objectives", len(r.Values), m)
	}
	if len(r.Constraints) > 0 && len(r.Constraints) != n {
		return fmt.Errorf("trials: record has %d constraint values, the space has %d constraints", len(r.Constraints), n)
	}
	rec := make([]string, 0, w.s.Dim()+m+n+4)
	if w.withNumber {
		rec = append(rec, strconv.FormatInt(r.Number, 10))
	}
	for i, v := range r.Params {
		rec = append(rec, w.s.Format(i, v))
	}
	number := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	values := r.Values
	if len(values) == 0 {
		values = make([]float64, m)
		for k := range values {
			values[k] = math.NaN()
		}
		values[0] = r.Value
	}
	for _, v := range values {
		rec = append(rec, number(v))
	}
	for j := range n {
		cell := ""
		if len(r.Constraints) > 0 {
			cell = number(r.Constraints[j])
		}
		rec = append(rec, cell)
	}
	rec = append(rec, r.Acquisition)
	if w.withState {
		state := r.State
		if state == "" && !math.IsNaN(r.Value) {
			state = "complete"
		}
		rec = append(rec, state)
	}
	if err := w.cw.Write(rec); err != nil {
		return fmt.Errorf("trials: %w", err)
	}
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		return fmt.Errorf("trials: %w", err)
	}
	return nil
}

// Write writes every trial of a history in number order, with the number
// and state columns, so that reading it back gives the same history (up to
// what the CSV does not hold: intermediate values, attributes, timestamps):
// what `xbo study export` and the importers produce. A pruned trial keeps
// its value (its last intermediate value), which readers do not model: its
// state says it is no result at full budget. Objective and constraint
// values go in their own columns (Columns).
func Write(w io.Writer, h *history.History) error {
	if h == nil || h.Space == nil {
		return errors.New("trials: no history or no space")
	}
	return WriteSeq(w, h.Space, func(yield func(history.Trial, error) bool) {
		for i := range h.Trials {
			if !yield(h.Trials[i], nil) {
				return
			}
		}
	})
}

// WriteSeq is Write for trials of space s read from a sequence as they are
// written, so that a history too large to hold can be written; an error of
// the sequence ends the writing and is returned.
func WriteSeq(w io.Writer, s *space.Space, seq iter.Seq2[history.Trial, error]) error {
	if s == nil || seq == nil {
		return errors.New("trials: no space or no trials")
	}
	tw, err := newWriter(w, s, true, true)
	if err != nil {
		return err
	}
	for t, err := range seq {
		if err != nil {
			return err
		}
		v := math.NaN()
		var values, cons []float64
		if t.Usable() || (t.State == history.Pruned && !math.IsInf(t.Value, 0)) {
			v = t.Value
		}
		if t.Usable() {
			values = t.Values
		}
		if allFinite(t.Constraints) {
			cons = t.Constraints
		}
		rec := Record{Number: t.Number, Params: t.Params, Value: v, Values: values, Constraints: cons, Acquisition: t.Acquisition, State: string(t.State)}
		if err := tw.Write(rec); err != nil {
			return fmt.Errorf("trials: trial %d: %w", t.Number, err)
		}
	}
	return nil
}

// allFinite reports whether every value is finite: a constraint value that
// is not could not be read back (and no source xbo writes holds one).
func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
