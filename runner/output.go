package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"xbo/space"
)

// MaxLine bounds what is kept of one line of a command's output: the last
// MaxLine bytes of a longer line are read for its last number, and a JSON
// line longer than this is not read as JSON. Whatever a command prints,
// reading its output holds at most this much per stream.
const MaxLine = 64 << 10

// MaxReason bounds a failed trial's reason (the tail of the command's
// standard error, with what went wrong).
const MaxReason = 2000

// Intermediate is a value the command reported before its result: a JSON
// line {"step": s, "value": v}.
type Intermediate struct {
	Step  int64
	Value float64
}

// MaxNumbers bounds the numbers kept of the last line that prints any: a
// study's result is at most one per objective and per constraint.
const MaxNumbers = space.MaxObjectives + space.MaxConstraints

// Output is what a command's standard output said: its result, if any, and
// where it came from.
type Output struct {
	// Value is the result: the value of the last {"value": v} line (the
	// first of its "values") when there is one, otherwise the last number
	// printed (NaN when neither).
	Value float64
	// FromJSON says that the result came from a JSON line; Values are then
	// its objective values ({"value": v} gives one) and Constraints its
	// constraint values (nil when the line had none).
	FromJSON            bool
	Values, Constraints []float64
	// Numbers are the last numbers (at most MaxNumbers) of the last line
	// that printed a number, in their order: the result of a study with
	// several objectives or constraints printed as text.
	Numbers []float64
	// Found reports whether any result was printed.
	Found bool
}

// scanOutput reads a command's standard output to its end, line by line
// with at most MaxLine bytes of a line held, and returns its result.
// Lines that are JSON objects are read as JSON: {"step": s, "value": v}
// calls report (the intermediate values, in order; a report that returns
// an error stops nothing), {"value": v} or {"values": [...]} (either with
// "constraints": [...]) is the result, and any other object is ignored.
// Every other line is scanned for numbers. echo, when not nil, gets every
// line (cut to MaxLine).
func scanOutput(r io.Reader, report func(Intermediate), echo func(line []byte)) (Output, error) {
	out := Output{Value: math.NaN()}
	var lastNumbers []float64
	br := bufio.NewReaderSize(r, MaxLine)
	var long []byte // the tail of a line longer than the reader's buffer
	cut := false
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Keep only the line's tail: its last number is there.
			long = append(long, chunk...)
			if len(long) > MaxLine {
				long = append(long[:0], long[len(long)-MaxLine:]...)
				cut = true
			}
			continue
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			if len(long) > MaxLine {
				long = append(long[:0], long[len(long)-MaxLine:]...)
				cut = true
			}
			line = long
		}
		if len(line) > 0 {
			if echo != nil {
				echo(bytes.TrimRight(line, "\r\n"))
			}
			if nums := readLine(line, cut, report, &out); len(nums) > 0 {
				lastNumbers = nums
			}
		}
		long, cut = long[:0], false
		if err != nil {
			if !out.FromJSON && len(lastNumbers) > 0 {
				out.Value, out.Numbers, out.Found = lastNumbers[len(lastNumbers)-1], lastNumbers, true
			}
			if err == io.EOF {
				err = nil
			}
			return out, err
		}
	}
}

// readLine reads one line: a JSON object updates out or reports, a text
// line gives its last numbers (at most MaxNumbers). cut says the line's
// head was dropped, so its first token may be a fragment and it is no JSON.
func readLine(line []byte, cut bool, report func(Intermediate), out *Output) []float64 {
	text := bytes.TrimSpace(line)
	if !cut && len(text) > 1 && text[0] == '{' && text[len(text)-1] == '}' {
		var obj map[string]json.RawMessage
		if json.Unmarshal(text, &obj) == nil {
			readObject(obj, report, out)
			return nil
		}
	}
	return lastNumbers(string(text), cut, MaxNumbers)
}

// readObject takes the result or an intermediate value from a JSON line. A
// result line with a value that is not a number, or lists that are not
// lists of numbers, is ignored like any other object.
func readObject(obj map[string]json.RawMessage, report func(Intermediate), out *Output) {
	rawValues, hasValues := obj["values"]
	rawValue, hasValue := obj["value"]
	_, hasStep := obj["step"]
	if hasValues && !hasValue && !hasStep {
		values, ok := jsonNumbers(rawValues)
		if !ok || len(values) == 0 {
			return
		}
		setResult(out, values, obj)
		return
	}
	if !hasValue || hasValues {
		return
	}
	v, ok := jsonNumber(rawValue)
	if !ok {
		return
	}
	rawStep, hasStep := obj["step"]
	if !hasStep {
		setResult(out, []float64{v}, obj)
		return
	}
	step, ok := jsonNumber(rawStep)
	if !ok || step < 0 || step != math.Trunc(step) || step > 1<<53 || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if report != nil {
		report(Intermediate{Step: int64(step), Value: v})
	}
}

// setResult makes a JSON line's values, and its "constraints" when it has
// them, the result.
func setResult(out *Output, values []float64, obj map[string]json.RawMessage) {
	var cons []float64
	if raw, has := obj["constraints"]; has {
		var ok bool
		if cons, ok = jsonNumbers(raw); !ok {
			return
		}
	}
	out.Value, out.Values, out.Constraints = values[0], values, cons
	out.FromJSON, out.Found = true, true
}

// jsonNumbers reads a JSON list of numbers (jsonNumber each), at most
// MaxNumbers of them.
func jsonNumbers(raw json.RawMessage) ([]float64, bool) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) > MaxNumbers {
		return nil, false
	}
	out := make([]float64, len(list))
	for i, item := range list {
		v, ok := jsonNumber(item)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// jsonNumber reads a JSON number, or the strings "NaN", "Infinity" and
// "-Infinity" that Python's json module writes for non-finite floats (as
// bare words, which are not JSON: such a line reaches here only quoted).
func jsonNumber(raw json.RawMessage) (float64, bool) {
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return f, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if v, err := strconv.ParseFloat(s, 64); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			return v, true
		}
	}
	return 0, false
}

// separators split a text line into tokens, so that "loss=0.12",
// "loss: 0.12," and "(0.12)" all give the number 0.12.
const separators = " \t\r\n,;:=()[]{}<>\"'|"

// lastNumbers returns the last k tokens of a line that read as numbers,
// in their order (nan and inf included: a command that prints them as its
// result failed). With cut, the first token may be a fragment of a longer
// one and is not read.
func lastNumbers(line string, cut bool, k int) []float64 {
	fields := strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(separators, r) })
	var out []float64
	for i := len(fields) - 1; i >= 0 && len(out) < k; i-- {
		if cut && i == 0 {
			break
		}
		if v, ok := number(fields[i]); ok {
			out = append(out, v)
		}
	}
	slices.Reverse(out)
	return out
}

func number(tok string) (float64, bool) {
	if tok == "" || !(tok[0] >= '0' && tok[0] <= '9' || tok[0] == '-' || tok[0] == '+' || tok[0] == '.' ||
		tok[0] == 'n' || tok[0] == 'N' || tok[0] == 'i' || tok[0] == 'I') {
		return 0, false
	}
	tok = strings.TrimRight(tok, ".") // the full stop of a sentence
	if strings.HasPrefix(tok, "0x") || strings.HasPrefix(tok, "0X") || strings.Contains(tok, "_") {
		return 0, false // Go syntax that a training script does not mean as a number
	}
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// tail keeps the last bytes written to it, for a failed trial's reason.
type tail struct {
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String is the kept text, made printable: valid UTF-8 (a cut rune at the
// start is dropped), no NUL or other control characters but newlines and
// tabs, trimmed.
func (t *tail) String() string {
	b := t.buf
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	s := strings.ToValidUTF8(string(b), "?")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || r >= 0x20 && r != 0x7f {
			return r
		}
		return -1
	}, s)
	return strings.TrimSpace(s)
}
