// Package trials reads and writes the trials table that every xbo command
// shares: a CSV file with one column per hyperparameter (an empty cell for an
// inactive conditional parameter), then `value`, then optionally
// `acquisition` (which acquisition chose the trial) and `state`.
//
// Reading is strict about the table's shape, because a silently misread
// column would make every explanation wrong: unknown columns, values outside
// the space and non-numeric values are errors that name the row and column.
// A row whose value is empty, "nan" or whose state is not complete is a
// failed trial: it is skipped and counted, never dropped silently.
package trials

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"xbo/space"
)

// Column names besides the parameters.
const (
	ValueColumn       = "value"
	AcquisitionColumn = "acquisition"
	StateColumn       = "state"
	NumberColumn      = "number"
)

// Table is a parsed trials file. Rows, Values and Acquisitions are parallel
// and hold only the usable (completed, finite) trials, in file order.
type Table struct {
	Space        *space.Space
	Rows         [][]float64 // natural values, NaN for inactive parameters
	Values       []float64
	Acquisitions []string // empty strings when the file has no acquisition column
	Lines        []int    // the 1-based CSV line of each row, for messages
	Skipped      int      // rows without a usable value (failed, pending, empty, NaN)
}

// Len is the number of usable trials.
func (t *Table) Len() int { return len(t.Rows) }

// Encoded returns the rows in the unit-cube encoding of the space.
func (t *Table) Encoded() ([][]float64, error) {
	out := make([][]float64, len(t.Rows))
	for i, r := range t.Rows {
		u, err := t.Space.Encode(r)
		if err != nil {
			return nil, fmt.Errorf("trials: line %d: %w", t.Lines[i], err)
		}
		out[i] = u
	}
	return out, nil
}

// Best returns the index of the best usable trial for the space's direction,
// or −1 for an empty table.
func (t *Table) Best() int {
	best := -1
	sign := t.Space.Sign()
	for i, v := range t.Values {
		if best < 0 || sign*v < sign*t.Values[best] {
			best = i
		}
	}
	return best
}

// ReadFile reads a trials CSV from disk.
func ReadFile(path string, s *space.Space) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trials: %w", err)
	}
	defer f.Close()
	t, err := ReadCSV(f, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ReadCSV parses a trials table against a space.
func ReadCSV(r io.Reader, s *space.Space) (*Table, error) {
	if s == nil {
		return nil, errors.New("trials: no space given")
	}
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("trials: empty file (expected a header line)")
	}
	if err != nil {
		return nil, fmt.Errorf("trials: header: %w", err)
	}
	paramCol := make([]int, s.Dim())
	for i := range paramCol {
		paramCol[i] = -1
	}
	valueCol, acqCol, stateCol := -1, -1, -1
	for c, name := range header {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		if i, ok := s.Index(name); ok {
			if paramCol[i] >= 0 {
				return nil, fmt.Errorf("trials: header: column %q appears twice", name)
			}
			paramCol[i] = c
			continue
		}
		switch name {
		case ValueColumn:
			valueCol = c
		case AcquisitionColumn:
			acqCol = c
		case StateColumn:
			stateCol = c
		case NumberColumn:
		default:
			return nil, fmt.Errorf("trials: header: column %d %q is neither a parameter of the space (%s) nor one of value, acquisition, state, number", c+1, name, strings.Join(s.Names(), ", "))
		}
	}
	for i, c := range paramCol {
		if c < 0 {
			return nil, fmt.Errorf("trials: header: no column for parameter %q", s.Params[i].Name)
		}
	}
	if valueCol < 0 {
		return nil, errors.New("trials: header: no \"value\" column")
	}
	t := &Table{Space: s}
	line := 1
	for {
		rec, err := cr.Read()
		line++
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("trials: line %d: %w", line, err)
		}
		if stateCol >= 0 {
			if st := strings.TrimSpace(rec[stateCol]); st != "" && st != "complete" {
				t.Skipped++
				continue
			}
		}
		vtext := strings.TrimSpace(rec[valueCol])
		if vtext == "" || strings.EqualFold(vtext, "nan") {
			t.Skipped++
			continue
		}
		v, err := strconv.ParseFloat(vtext, 64)
		if err != nil {
			return nil, fmt.Errorf("trials: line %d, column \"value\": %q is not a number", line, vtext)
		}
		if math.IsInf(v, 0) {
			return nil, fmt.Errorf("trials: line %d, column \"value\": %v is not finite (leave the cell empty for a failed trial)", line, v)
		}
		vals := make([]float64, s.Dim())
		for i, c := range paramCol {
			x, err := s.ParseValue(i, rec[c])
			if err != nil {
				return nil, fmt.Errorf("trials: line %d, column %q: %w", line, s.Params[i].Name, err)
			}
			vals[i] = x
		}
		if err := s.Validate(vals); err != nil {
			return nil, fmt.Errorf("trials: line %d: %w", line, err)
		}
		acq := ""
		if acqCol >= 0 {
			acq = strings.TrimSpace(rec[acqCol])
		}
		t.Rows = append(t.Rows, vals)
		t.Values = append(t.Values, v)
		t.Acquisitions = append(t.Acquisitions, acq)
		t.Lines = append(t.Lines, line)
	}
	return t, nil
}

// Record is one trial to write.
type Record struct {
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
	s         *space.Space
	cw        *csv.Writer
	withState bool
}

// NewWriter writes the header and returns a Writer.
func NewWriter(w io.Writer, s *space.Space) (*Writer, error) {
	return newWriter(w, s, false)
}

// NewWriterWithState is NewWriter with a trailing `state` column, for
// histories that hold failed, pruned or pending trials worth keeping apart.
func NewWriterWithState(w io.Writer, s *space.Space) (*Writer, error) {
	return newWriter(w, s, true)
}

func newWriter(w io.Writer, s *space.Space, withState bool) (*Writer, error) {
	if s == nil {
		return nil, errors.New("trials: no space given")
	}
	cw := csv.NewWriter(w)
	header := append(s.Names(), ValueColumn, AcquisitionColumn)
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
	return &Writer{s: s, cw: cw, withState: withState}, nil
}

// Write appends one trial.
func (w *Writer) Write(r Record) error {
	if len(r.Params) != w.s.Dim() {
		return fmt.Errorf("trials: record has %d parameters, the space has %d", len(r.Params), w.s.Dim())
	}
	rec := make([]string, 0, w.s.Dim()+2)
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
