package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"xbo/store"
)

// httpError carries a status for errors found by the handlers themselves.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }

func (e *httpError) Unwrap() error { return e.err }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

func statusOf(err error) int {
	var he *httpError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return he.status
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrExists), errors.Is(err, store.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, store.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, store.ErrStorageFull):
		return http.StatusInsufficientStorage
	case errors.Is(err, store.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("server: encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
	return nil
}

func writeError(w http.ResponseWriter, status int, err error) {
	msg := err.Error()
	if status == http.StatusInternalServerError {
		msg = "internal error: " + msg
	}
	body, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// decode reads a JSON body strictly: unknown fields and trailing data are
// errors. An empty body decodes as {} when allowEmpty.
func decode(r *http.Request, v any, allowEmpty bool) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("reading request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil
		}
		return badRequest("request body is empty; a JSON object is expected")
	}
	if string(bytes.TrimSpace(body)) == "null" {
		return badRequest("request body is null; a JSON object is expected")
	}
	if escapesNUL(body) {
		// PostgreSQL cannot store NUL in text and SQLite can: both refuse
		// it, so the backends agree.
		return badRequest("request body contains a NUL character (\\u0000), which no string may hold")
	}
	if !utf8.Valid(body) {
		// encoding/json would replace the bad bytes with U+FFFD, storing
		// a name the client never sent.
		return badRequest("request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return badRequest("malformed JSON body: %v", err)
	}
	if dec.More() {
		return badRequest("malformed JSON body: data after the JSON object")
	}
	return nil
}

// escapesNUL reports whether a JSON text holds the escape \u0000 (and not
// an escaped backslash followed by the letters u0000).
func escapesNUL(body []byte) bool {
	for i := 0; ; {
		k := bytes.Index(body[i:], []byte(`\u0000`))
		if k < 0 {
			return false
		}
		at := i + k
		backslashes := 0
		for j := at - 1; j >= 0 && body[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return true
		}
		i = at + 1
	}
}

// finite reads a JSON value that must be a finite number. Strings such as
// "NaN" or "Infinity" and numbers too large for float64 are refused by name.
func finite(what string, raw json.RawMessage) (float64, error) {
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		return 0, badRequest("%s is missing", what)
	}
	if strings.HasPrefix(text, `"`) {
		var sv string
		json.Unmarshal(raw, &sv)
		return 0, badRequest("%s must be a finite JSON number, not the string %q", what, sv)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, badRequest("%s %s is not a finite number", what, text)
	}
	if v == 0 && underflows(text) {
		return 0, badRequest("%s %s is too small for a float64 (it would be stored as 0)", what, text)
	}
	return v, nil
}

// outcome reads a complete trial's objective value(s) and constraint
// values: value a number or a list, or values a list (not both); a list of
// one is the value of a single-objective study. The store checks the
// numbers against the study's objectives and constraints.
func outcome(value json.RawMessage, values, constraints []json.RawMessage) (float64, []float64, []float64, error) {
	text := strings.TrimSpace(string(value))
	hasValue := text != "" && text != "null"
	if strings.HasPrefix(text, "[") {
		if len(values) > 0 {
			return 0, nil, nil, badRequest("give value or values, not both")
		}
		if err := json.Unmarshal(value, &values); err != nil {
			return 0, nil, nil, badRequest("value: %v", err)
		}
		if len(values) == 0 {
			return 0, nil, nil, badRequest("value is an empty list")
		}
		hasValue = false
	}
	var vals, cons []float64
	for k, raw := range values {
		v, err := finite(fmt.Sprintf("objective value %d", k), raw)
		if err != nil {
			return 0, nil, nil, err
		}
		vals = append(vals, v)
	}
	for j, raw := range constraints {
		c, err := finite(fmt.Sprintf("constraint value %d", j), raw)
		if err != nil {
			return 0, nil, nil, err
		}
		cons = append(cons, c)
	}
	switch {
	case hasValue && len(vals) > 0:
		return 0, nil, nil, badRequest("give value or values, not both")
	case hasValue:
		v, err := finite("value", value)
		return v, nil, cons, err
	case len(vals) == 1:
		return vals[0], nil, cons, nil
	case len(vals) > 1:
		return vals[0], vals, cons, nil
	}
	return 0, nil, nil, badRequest("value is missing")
}

// underflows reports whether a number that parsed as 0 has a nonzero digit
// in its mantissa, i.e. was rounded to 0.
func underflows(text string) bool {
	mantissa, _, _ := strings.Cut(strings.ToLower(text), "e")
	return strings.ContainsAny(mantissa, "123456789")
}

// normalizeNumbers turns json.Number leaves (from decode's UseNumber) into
// float64 so values can be stored and compared.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
		return x
	}
	return v
}
