package importer

import (
	"xbo/history"

	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"xbo/space"
	"xbo/trials"
)

// TableOptions tunes the import of a generic trial table.
type TableOptions struct {
	// ValueColumn names the objective column (default "value").
	ValueColumn string
}

// ImportTable reads a generic trial table against a space file's space: a
// CSV file with a header (one column per parameter, an empty cell for an
// inactive one; the value column; optional "state", "number" and
// "acquisition" columns), or JSON: a list of trials, or one trial per line,
// each either {"params": {...}, "value": v, "state": s, "number": n} or a
// flat object of parameters plus "value". Columns or keys the space does not
// know are kept as user attributes (and named in a warning), as the trials
// reader does (trials.Scan reads the CSV for both); values outside the space
// widen it (reported), where the trials reader refuses them.
func ImportTable(path string, s *space.Space, opts TableOptions) (*Run, error) {
	if s == nil {
		return nil, errors.New("importer: a table needs a space (--space)")
	}
	if opts.ValueColumn == "" {
		opts.ValueColumn = "value"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b := newBuilder("csv", path)
	b.objective = s.Objective
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
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	ext := strings.ToLower(filepath.Ext(path))
	isJSON := ext == ".json" || ext == ".jsonl" || ext == ".ndjson" || (len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{'))
	if isJSON {
		b.format = "json"
		err = readJSONTable(data, b, opts)
	} else {
		err = readCSVTable(data, s, b, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	run, err := b.build()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return run, nil
}

func readCSVTable(data []byte, s *space.Space, b *builder, opts TableOptions) error {
	header, err := trials.Scan(bytes.NewReader(data), s, opts.ValueColumn, func(_ *trials.Header, row *trials.Row) error {
		rt := rawTrial{number: len(b.trials), values: map[string]rawValue{}, state: row.State, value: row.Value,
			origin: row.Acquisition, attrs: row.Attrs}
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
		b.trials = append(b.trials, rt)
		return nil
	})
	if err != nil {
		return err
	}
	if extra := header.ExtraNames(); len(extra) > 0 {
		b.warnf("columns %s are not parameters of the space; kept as user attributes", quoteAll(extra))
	}
	return nil
}

func readJSONTable(data []byte, b *builder, opts TableOptions) error {
	var records []any
	var where []string // a label per record for messages
	doc, err := decodeJSON(data)
	if err == nil {
		switch x := doc.(type) {
		case []any:
			records = x
			for i := range x {
				where = append(where, fmt.Sprintf("trial #%d", i+1))
			}
		case map[string]any:
			if list, ok := x["trials"].([]any); ok {
				records = list
				for i := range list {
					where = append(where, fmt.Sprintf("trials[%d]", i))
				}
			} else {
				records = []any{x}
				where = []string{"line 1"}
			}
		default:
			return errors.New("expected a list of trials, an object with \"trials\", or one JSON object per line")
		}
	} else {
		// JSON lines.
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			v, lerr := decodeJSON(line)
			if lerr != nil {
				if len(records) == 0 && i == 0 {
					return err
				}
				return fmt.Errorf("line %d: %w", i+1, lerr)
			}
			records = append(records, v)
			where = append(where, fmt.Sprintf("line %d", i+1))
		}
	}
	unknown := map[string]bool{}
	for i, r := range records {
		obj, ok := r.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not a JSON object", where[i])
		}
		rt := rawTrial{number: i, values: map[string]rawValue{}, state: history.Complete, value: math.NaN()}
		params, nested := obj["params"].(map[string]any)
		if !nested {
			params = obj
		}
		if n, present := obj["number"]; present {
			k, ok := intOf(n)
			if !ok {
				return fmt.Errorf("%s: number %v is not an integer", where[i], n)
			}
			rt.number = k
		}
		if st, present := obj["state"]; present && st != nil {
			text, _ := st.(string)
			st, err := trials.ParseState(text)
			if err != nil {
				return fmt.Errorf("%s: %w", where[i], err)
			}
			rt.state = st
		}
		if o, ok := obj["acquisition"].(string); ok {
			rt.origin = o
		}
		if v, present := obj[opts.ValueColumn]; present && v != nil {
			f, ok := numberOf(v)
			if !ok {
				return fmt.Errorf("%s: %s %v is not a number", where[i], opts.ValueColumn, v)
			}
			rt.value = f
		}
		if math.IsNaN(rt.value) && rt.state == history.Complete {
			rt.state = history.Failed
		}
		for name, v := range params {
			p, ok := b.byName[name]
			if !ok {
				switch name {
				case opts.ValueColumn, "state", "number", "acquisition":
					if !nested {
						continue
					}
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
					return fmt.Errorf("%s: parameter %q: %w", where[i], name, err)
				}
				rt.values[name] = catValue(c)
				continue
			}
			f, ok := numberOf(v)
			if !ok {
				return fmt.Errorf("%s: parameter %q: %v is not a number", where[i], name, v)
			}
			rt.values[name] = numValue(f)
		}
		b.trials = append(b.trials, rt)
	}
	if len(unknown) > 0 {
		var names []string
		for n := range unknown {
			names = append(names, n)
		}
		sort.Strings(names)
		b.warnf("keys %s are not parameters of the space; kept as user attributes", quoteAll(names))
	}
	return nil
}
