package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Python's json module writes the non-standard literals NaN, Infinity and
// -Infinity (SMAC3 for crashed runs' costs, Optuna's journal for infinite
// objective values). encoding/json rejects them, so they are rewritten, outside
// strings only, into number tokens that keep the document valid JSON and are
// recognised again when a number is read:
//
//	Infinity → 1e999999 (the same length, so byte offsets do not move; it
//	           overflows float64 and is read as +Inf anyway)
//	NaN      → -0e999999 (a spelling of zero no JSON writer produces)
const (
	infinityToken = "1e999999"
	nanToken      = "-0e999999"
)

// literalFix records where a rewrite changed the length of the text, so that
// decoder offsets can be mapped back to the original file.
type literalFix struct {
	at    int // offset in the rewritten text just after the replacement
	shift int // rewritten length minus original length
}

// rewriteLiterals returns data with NaN, Infinity and -Infinity outside
// strings replaced by number tokens, and the length changes it made. Text
// that is not valid JSON is passed through for the decoder to reject.
func rewriteLiterals(data []byte) ([]byte, []literalFix) {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data, nil
	}
	out := make([]byte, 0, len(data)+16)
	var fixes []literalFix
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(data) {
					i++
					out = append(out, data[i])
				}
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			out = append(out, c)
		case c == 'N' && bytes.HasPrefix(data[i:], []byte("NaN")) && tokenEnds(data, i+3):
			out = append(out, nanToken...)
			fixes = append(fixes, literalFix{at: len(out), shift: len(nanToken) - 3})
			i += 2
		case c == 'I' && bytes.HasPrefix(data[i:], []byte("Infinity")) && tokenEnds(data, i+8):
			out = append(out, infinityToken...)
			i += 7
		default:
			out = append(out, c)
		}
	}
	return out, fixes
}

// tokenEnds reports whether a literal ending at offset end is a whole token.
func tokenEnds(data []byte, end int) bool {
	if end >= len(data) {
		return true
	}
	c := data[end]
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.')
}

// originalOffset maps an offset in rewritten text back to the original text.
func originalOffset(off int, fixes []literalFix) int {
	orig := off
	for _, f := range fixes {
		if f.at <= off {
			orig -= f.shift
		}
	}
	return max(orig, 0)
}

// decodeJSON decodes a whole JSON document that may hold Python's NaN and
// Infinity literals into generic values (numbers as json.Number). Syntax
// errors are reported with the line and column of the original text.
func decodeJSON(data []byte) (any, error) {
	fixed, fixes := rewriteLiterals(data)
	dec := json.NewDecoder(bytes.NewReader(fixed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, locateJSONError(data, fixes, err)
	}
	if _, err := dec.Token(); err == nil {
		off := originalOffset(int(dec.InputOffset()), fixes)
		line, col := lineCol(data, off)
		return nil, fmt.Errorf("line %d, column %d: unexpected text after the JSON document", line, col)
	}
	return v, nil
}

func locateJSONError(orig []byte, fixes []literalFix, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := lineCol(orig, originalOffset(int(syn.Offset), fixes))
		return fmt.Errorf("line %d, column %d: %v", line, col, syn)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := lineCol(orig, len(orig))
		return fmt.Errorf("line %d, column %d: the document ends early (truncated or empty file?)", line, col)
	}
	return err
}

func lineCol(data []byte, off int) (int, int) {
	off = min(off, len(data))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// numberOf converts a decoded JSON value to a float64: numbers (including the
// rewritten NaN and Infinity tokens), and the strings "nan", "inf",
// "-inf", "infinity" that some writers use. ok is false for anything else.
func numberOf(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if s == nanToken {
			return math.NaN(), true
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			var numErr *strconv.NumError
			if errors.As(err, &numErr) && errors.Is(numErr.Err, strconv.ErrRange) {
				return f, true // ±Inf for overflow, ±0 for underflow
			}
			return 0, false
		}
		return f, true
	case float64:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "nan":
			return math.NaN(), true
		case "inf", "infinity", "+inf", "+infinity":
			return math.Inf(1), true
		case "-inf", "-infinity":
			return math.Inf(-1), true
		}
	}
	return 0, false
}

// intOf converts a decoded JSON number holding a whole number to an int.
func intOf(v any) (int, bool) {
	f, ok := numberOf(v)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int(f), true
}

// typedChoice is the JSON value a source's categorical choice keeps in
// xbo's space: finite numbers and booleans keep their type. Strings need no
// entry (a choice's name is the string), and null, NaN and infinities,
// which no xbo choice can be, stay the names choiceName gives them.
func typedChoice(v any) (any, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case json.Number:
		if f, err := x.Float64(); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return x, true
		}
	}
	return nil, false
}

// choiceTypes maps the names of a source's choices to their typed values
// (typedChoice); nil when every choice is a string.
func choiceTypes(list []any) map[string]any {
	var out map[string]any
	for _, c := range list {
		v, ok := typedChoice(c)
		if !ok {
			continue
		}
		name, err := choiceName(c)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[name] = v
	}
	return out
}

// choiceName renders a categorical choice as xbo names it: strings as they
// are, numbers as written in the file, booleans and null as Python prints
// them (both tools are Python, so that is what their users wrote).
func choiceName(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		switch string(x) {
		case nanToken:
			return "nan", nil
		case infinityToken:
			return "inf", nil
		case "-" + infinityToken:
			return "-inf", nil
		}
		return string(x), nil
	case bool:
		if x {
			return "True", nil
		}
		return "False", nil
	case nil:
		return "None", nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("choice %v is not a string, number, boolean or null", v)
}
