package space

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The space document: the JSON (or YAML) file format a space is read from
// and written to.

// DocumentJSON returns a space document as compact JSON: JSON as it is
// (compacted), YAML converted. It checks the syntax only; Parse checks the
// space. A server keeps the document as its user wrote it, in one
// notation.
func DocumentJSON(doc []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(doc)
	if len(trimmed) == 0 {
		return nil, errors.New("space: empty document")
	}
	if !bytes.HasPrefix(trimmed, []byte("{")) {
		var v any
		if err := yaml.Unmarshal(trimmed, &v); err != nil {
			return nil, fmt.Errorf("space: not JSON and not YAML: %w", err)
		}
		converted, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("space: YAML document has a shape JSON cannot hold: %w", err)
		}
		trimmed = converted
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	return buf.Bytes(), nil
}

// Parse reads a space from JSON, or from YAML when the text is not JSON.
func Parse(data []byte) (*Space, error) {
	data, err := DocumentJSON(data)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Objective   Direction   `json:"objective"`
		Objectives  []Objective `json:"objectives"`
		Constraints []string    `json:"constraints"`
		Params      []struct {
			Name      string     `json:"name"`
			Type      Type       `json:"type"`
			Low       *float64   `json:"low"`
			High      *float64   `json:"high"`
			Log       bool       `json:"log"`
			Step      *float64   `json:"step"`
			Choices   []any      `json:"choices"`
			Condition *Condition `json:"condition"`
			Default   any        `json:"default"`
		} `json:"params"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	params := make([]Param, len(raw.Params))
	for i, rp := range raw.Params {
		p := Param{Name: rp.Name, Type: rp.Type, Log: rp.Log, Condition: rp.Condition, Default: rp.Default}
		label := paramLabel(i, rp.Name)
		switch rp.Type {
		case Float, Int:
			if rp.Low == nil || rp.High == nil {
				return nil, fmt.Errorf("space: %s: %s parameter needs both low and high", label, rp.Type)
			}
			p.Low, p.High = *rp.Low, *rp.High
			if len(rp.Choices) > 0 {
				return nil, fmt.Errorf("space: %s: choices are only for categorical parameters", label)
			}
		case Categorical:
			if rp.Low != nil || rp.High != nil {
				return nil, fmt.Errorf("space: %s: low and high are not used by a categorical parameter", label)
			}
			if rp.Step != nil {
				return nil, fmt.Errorf("space: %s: step is only for float and int parameters", label)
			}
			p.Choices = rp.Choices
		}
		if rp.Step != nil {
			if *rp.Step <= 0 {
				return nil, fmt.Errorf("space: %s: step must be positive (got %v)", label, *rp.Step)
			}
			p.Step = *rp.Step
		}
		params[i] = p
	}
	if len(raw.Objectives) > 0 || len(raw.Constraints) > 0 {
		return NewWithObjectives(raw.Objective, raw.Objectives, raw.Constraints, params)
	}
	return New(raw.Objective, params)
}

// Load reads a space file (.json, .yaml or .yml).
func Load(path string) (*Space, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return s, nil
}

// MarshalJSON writes the space in the file format Parse reads.
func (s *Space) MarshalJSON() ([]byte, error) {
	type plain struct {
		Objective   Direction   `json:"objective"`
		Objectives  []Objective `json:"objectives,omitempty"`
		Constraints []string    `json:"constraints,omitempty"`
		Params      []Param     `json:"params"`
	}
	obj := s.Objective
	if obj == "" {
		obj = Minimize
	}
	return json.Marshal(plain{Objective: obj, Objectives: s.Objectives, Constraints: s.Constraints, Params: s.Params})
}

// MarshalJSON writes a parameter in the file format; numeric bounds are
// always written, even when zero.
func (p Param) MarshalJSON() ([]byte, error) {
	type numeric struct {
		Name      string     `json:"name"`
		Type      Type       `json:"type"`
		Low       float64    `json:"low"`
		High      float64    `json:"high"`
		Log       bool       `json:"log,omitempty"`
		Step      float64    `json:"step,omitempty"`
		Condition *Condition `json:"condition,omitempty"`
		Default   any        `json:"default,omitempty"`
	}
	type categorical struct {
		Name      string     `json:"name"`
		Type      Type       `json:"type"`
		Choices   []any      `json:"choices"`
		Condition *Condition `json:"condition,omitempty"`
		Default   any        `json:"default,omitempty"`
	}
	if p.Type == Categorical {
		return json.Marshal(categorical{p.Name, p.Type, p.Choices, p.Condition, p.Default})
	}
	return json.Marshal(numeric{p.Name, p.Type, p.Low, p.High, p.Log, p.Step, p.Condition, p.Default})
}

// UnmarshalJSON lets a Space be embedded in other JSON documents.
func (s *Space) UnmarshalJSON(data []byte) error {
	parsed, err := Parse(data)
	if err != nil {
		return err
	}
	*s = *parsed
	return nil
}
