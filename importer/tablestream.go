package importer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"xbo/trials"
)

// A trial table is read as a stream, so that an import's memory does not
// grow with the file's size: a CSV file through trials.Scan, which bounds
// each line as it reads it, and a JSON table one record at a time by
// jsonRecords, which bounds each record as it reads it. Reading the file
// whole first (as imports once did) made a 1 GiB file without line breaks
// cost 1 GiB before its first line was refused.

// MaxRecordBytes bounds one record of a JSON table (an element of its
// list, or a line of JSON lines), as trials.MaxLineBytes bounds a line of
// a CSV table.
const MaxRecordBytes = trials.MaxLineBytes

// sniffJSON reports whether a table is JSON: its name says so, or its
// first byte that is not white space (or a byte-order mark) within the
// reader's buffer opens a JSON list or object. It consumes nothing.
func sniffJSON(r *bufio.Reader, ext string) (bool, error) {
	if ext == ".json" || ext == ".jsonl" || ext == ".ndjson" {
		return true, nil
	}
	head, err := r.Peek(r.Size())
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return false, err
	}
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	return len(head) > 0 && (head[0] == '[' || head[0] == '{'), nil
}

// jsonRecords splits a JSON table into its records as it reads: the
// elements of a list, of the list "trials" of an object, or the values of
// JSON lines (a single object is one record). Each record's text is at
// most MaxRecordBytes; it is handed to visit with a label for messages
// ("trial #3", "trials[2]", "line 7") and decoded there (decodeJSON, which
// reads Python's NaN and Infinity).
type jsonRecords struct {
	r    *bufio.Reader
	line int // the line of the next byte
	buf  []byte
}

// each calls visit for every record in order, with its 0-based index.
func (s *jsonRecords) each(visit func(i int, where string, text []byte) error) error {
	s.line = 1
	if head, _ := s.r.Peek(3); bytes.Equal(head, []byte("\ufeff")) {
		s.r.Discard(3)
	}
	c, err := s.skipSpace()
	if err == io.EOF {
		return errors.New("empty file: expected a list of trials, an object with \"trials\", or one JSON object per line")
	}
	if err != nil {
		return err
	}
	switch c {
	case '[':
		s.r.ReadByte()
		return s.list(0, func(i int) string { return fmt.Sprintf("trial #%d", i+1) }, visit)
	case '{':
		n, err := s.object(visit)
		if err != nil {
			return err
		}
		// More values after the first: JSON lines.
		for i := n; ; i++ {
			c, err := s.skipSpace()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if c == ',' || c == ']' || c == '}' {
				return fmt.Errorf("line %d: unexpected %q between JSON lines", s.line, c)
			}
			where := fmt.Sprintf("line %d", s.line)
			text, err := s.value(where)
			if err != nil {
				return err
			}
			if err := visit(i, where, text); err != nil {
				return err
			}
		}
	default:
		return errors.New("expected a list of trials, an object with \"trials\", or one JSON object per line")
	}
}

// object reads the first top-level object: the wrapper {"trials": [...]}
// (its other keys are ignored), or a record of its own. It returns how
// many records it visited.
func (s *jsonRecords) object(visit func(i int, where string, text []byte) error) (int, error) {
	start := s.line
	s.r.ReadByte() // '{'
	// The fields are kept, bounded as one record, in case the object is
	// a record rather than the wrapper.
	var fields bytes.Buffer
	fields.WriteByte('{')
	records, wrapper := 0, false
	for first := true; ; first = false {
		c, err := s.skipSpace()
		if err != nil {
			return 0, s.early(err)
		}
		if c == '}' && first {
			s.r.ReadByte()
			break
		}
		key, err := s.value(fmt.Sprintf("line %d", s.line))
		if err != nil {
			return 0, err
		}
		key = bytes.Clone(key) // the value's text reuses the buffer
		if c, err = s.skipSpace(); err != nil || c != ':' {
			return 0, s.expected("':' after a key", err)
		}
		s.r.ReadByte()
		if c, err = s.skipSpace(); err != nil {
			return 0, s.early(err)
		}
		if string(key) == `"trials"` && c == '[' && !wrapper {
			s.r.ReadByte()
			wrapper = true
			err := s.list(0, func(i int) string { return fmt.Sprintf("trials[%d]", i) }, func(i int, where string, text []byte) error {
				records++
				return visit(i, where, text)
			})
			if err != nil {
				return 0, err
			}
		} else {
			text, err := s.value(fmt.Sprintf("line %d", s.line))
			if err != nil {
				return 0, err
			}
			if !wrapper {
				if fields.Len() > 1 {
					fields.WriteByte(',')
				}
				fields.Write(key)
				fields.WriteByte(':')
				fields.Write(text)
				if fields.Len() > MaxRecordBytes {
					return 0, fmt.Errorf("line %d: a record longer than %d bytes", start, MaxRecordBytes)
				}
			}
		}
		if c, err = s.skipSpace(); err != nil {
			return 0, s.early(err)
		}
		s.r.ReadByte()
		if c == '}' {
			break
		}
		if c != ',' {
			return 0, fmt.Errorf("line %d: expected ',' or '}' in an object, found %q", s.line, c)
		}
	}
	if wrapper {
		return records, nil
	}
	fields.WriteByte('}')
	return 1, visit(0, fmt.Sprintf("line %d", start), fields.Bytes())
}

// list visits the elements of a list whose '[' was read, up to its ']'.
func (s *jsonRecords) list(from int, label func(int) string, visit func(i int, where string, text []byte) error) error {
	for i := from; ; i++ {
		c, err := s.skipSpace()
		if err != nil {
			return s.early(err)
		}
		if c == ']' && i == from {
			s.r.ReadByte()
			return nil
		}
		where := label(i)
		text, err := s.value(where)
		if err != nil {
			return err
		}
		if err := visit(i, where, text); err != nil {
			return err
		}
		if c, err = s.skipSpace(); err != nil {
			return s.early(err)
		}
		s.r.ReadByte()
		if c == ']' {
			return nil
		}
		if c != ',' {
			return fmt.Errorf("line %d: expected ',' or ']' after %s, found %q", s.line, where, c)
		}
	}
}

// skipSpace reads white space and returns the next byte, unread.
func (s *jsonRecords) skipSpace() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case '\n':
			s.line++
		case ' ', '\t', '\r':
		default:
			s.r.UnreadByte()
			return c, nil
		}
	}
}

// value reads one JSON value's text (an object, a list, a string or a
// scalar) and returns it; the slice is valid until the next call. Its
// syntax is checked by the decoder later; here only nesting and strings
// are followed, to find where it ends, and its length is bounded.
func (s *jsonRecords) value(where string) ([]byte, error) {
	s.buf = s.buf[:0]
	depth, inString, escaped := 0, false, false
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF && depth == 0 && !inString && len(s.buf) > 0 {
				return s.buf, nil // a scalar at the end of the file
			}
			return nil, s.early(err)
		}
		if len(s.buf) >= MaxRecordBytes {
			return nil, fmt.Errorf("%s: a record longer than %d bytes", where, MaxRecordBytes)
		}
		if c == '\n' {
			s.line++
		}
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				s.r.UnreadByte() // the end of the enclosing list or object
				return s.buf, nil
			}
			depth--
		case depth == 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\r' || c == '\n'):
			if c == '\n' {
				s.line--
			}
			s.r.UnreadByte()
			return s.buf, nil
		}
		s.buf = append(s.buf, c)
		if depth == 0 && !inString && (c == '}' || c == ']' || (c == '"' && len(s.buf) > 1)) {
			return s.buf, nil
		}
	}
}

func (s *jsonRecords) early(err error) error {
	if err == io.EOF {
		return fmt.Errorf("line %d: the document ends early (truncated file?)", s.line)
	}
	return err
}

func (s *jsonRecords) expected(what string, err error) error {
	if err != nil {
		return s.early(err)
	}
	return fmt.Errorf("line %d: expected %s", s.line, what)
}
