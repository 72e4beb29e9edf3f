// Package trials reads and writes the trials table that every xbo command
// shares: a CSV file with one column per hyperparameter (an empty cell for an
// inactive conditional parameter), then `value`, then optionally
// `acquisition` (which acquisition chose the trial) and `state`.
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

// Header is the layout of a trials table: the column of each parameter of
// the space, of the value, state, number and acquisition (−1 when absent),
// and the other columns, which are kept as user attributes.
type Header struct {
	Params                            []int
	Value, State, Number, Acquisition int
	Extra                             map[int]string
}

// ParseHeader maps a header line onto a space's parameters. Every parameter
// needs a column and the value column (named value unless valueName says
// otherwise) must exist; a column named twice is an error. "origin" is read
// as the acquisition column (SMAC3's name for it).
func ParseHeader(header []string, s *space.Space, valueName string) (*Header, error) {
	if valueName == "" {
		valueName = ValueColumn
	}
	h := &Header{Params: make([]int, s.Dim()), Value: -1, State: -1, Number: -1, Acquisition: -1, Extra: map[int]string{}}
	for i := range h.Params {
		h.Params[i] = -1
	}
	seen := map[string]bool{}
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
		switch name {
		case valueName:
			h.Value = c
		case AcquisitionColumn, "origin":
			h.Acquisition = c
		case StateColumn:
			h.State = c
		case NumberColumn:
			h.Number = c
		default:
			h.Extra[c] = name
		}
	}
	for i, c := range h.Params {
		if c < 0 {
			return nil, fmt.Errorf("header: no column for parameter %q", s.Params[i].Name)
		}
	}
	if h.Value < 0 {
		return nil, fmt.Errorf("header: no %q column", valueName)
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
type Row struct {
	Line        int
	Params      []string
	Value       float64
	State       history.State
	Number      int64
	HasNumber   bool
	Acquisition string
	Attrs       map[string]any
}

// Scan reads the header and every data line of a CSV table. Both readers of
// tables (ReadCSV, strict about the space, and the importer, which widens
// it) go through it, so they agree on every column but the parameters'.
// Lines longer than MaxLineBytes are refused.
func Scan(r io.Reader, s *space.Space, valueName string, visit func(h *Header, row *Row) error) (*Header, error) {
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
	h, err := ParseHeader(header, s, valueName)
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
		vtext := strings.TrimSpace(rec[h.Value])
		if vtext != "" && !strings.EqualFold(vtext, "nan") {
			v, err := strconv.ParseFloat(vtext, 64)
			if err != nil {
				return nil, fmt.Errorf("trials: line %d, column %q: %s is not a number", line, header[h.Value], Excerpt(vtext))
			}
			if math.IsInf(v, 0) {
				return nil, fmt.Errorf("trials: line %d, column %q: %v is not finite (leave the cell empty for a failed trial)", line, header[h.Value], v)
			}
			row.Value = v
		}
		if math.IsNaN(row.Value) && row.State == history.Complete {
			row.State = history.Failed // no value, no result
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
// completed in file order. Columns that are not parameters or one of value,
// acquisition, state and number are kept as user attributes, with a warning.
func ReadCSV(r io.Reader, s *space.Space) (*history.History, error) {
	h := &history.History{Space: s}
	completed := 0
	header, err := Scan(r, s, ValueColumn, func(_ *Header, row *Row) error {
		vals := make([]float64, s.Dim())
		for i, text := range row.Params {
			x, err := s.ParseValue(i, text)
			if err != nil {
				return fmt.Errorf("trials: line %d, column %q: %w", row.Line, s.Params[i].Name, err)
			}
			vals[i] = x
		}
		t := history.Trial{Number: int64(len(h.Trials)), State: row.State, Params: vals, Value: row.Value,
			Acquisition: row.Acquisition, UserAttrs: row.Attrs, Completion: -1}
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
		h.Warnings = append(h.Warnings, fmt.Sprintf("columns %s are not parameters of the space (%s); kept as user attributes",
			strings.Join(quoted, ", "), strings.Join(s.Names(), ", ")))
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
	Number      int64
	Params      []float64 // natural values, NaN for inactive
	Value       float64   // NaN for a failed trial
	Acquisition string
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

func newWriter(w io.Writer, s *space.Space, withNumber, withState bool) (*Writer, error) {
	if s == nil {
		return nil, errors.New("trials: no space given")
	}
	cw := csv.NewWriter(w)
	var header []string
	if withNumber {
		header = append(header, NumberColumn)
	}
	header = append(header, s.Names()...)
	header = append(header, ValueColumn, AcquisitionColumn)
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
	rec := make([]string, 0, w.s.Dim()+4)
	if w.withNumber {
		rec = append(rec, strconv.FormatInt(r.Number, 10))
	}
	for i, v := range r.Params {
		rec = append(rec, w.s.Format(i, v))
	}
	value := ""
	if !math.IsNaN(r.Value) {
		value = strconv.FormatFloat(r.Value, 'g', -1, 64)
	}
	rec = append(rec, value, r.Acquisition)
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
// state says it is no result at full budget.
func Write(w io.Writer, h *history.History) error {
	if h == nil || h.Space == nil {
		return errors.New("trials: no history or no space")
	}
	tw, err := newWriter(w, h.Space, true, true)
	if err != nil {
		return err
	}
	for i := range h.Trials {
		t := &h.Trials[i]
		v := math.NaN()
		if t.Usable() || (t.State == history.Pruned && !math.IsInf(t.Value, 0)) {
			v = t.Value
		}
		if err := tw.Write(Record{Number: t.Number, Params: t.Params, Value: v, Acquisition: t.Acquisition, State: string(t.State)}); err != nil {
			return fmt.Errorf("trials: trial %d: %w", t.Number, err)
		}
	}
	return nil
}
