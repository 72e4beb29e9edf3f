package importer

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

func TestRewriteLiterals(t *testing.T) {
	in := `{"a": NaN, "b": [Infinity, -Infinity], "s": "NaN Infinity \" NaN", "NaN": 1, "c": NaNx}`
	out, _ := rewriteLiterals([]byte(in))
	want := `{"a": -0e999999, "b": [1e999999, -1e999999], "s": "NaN Infinity \" NaN", "NaN": 1, "c": NaNx}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	v, err := decodeJSON([]byte(`{"a": NaN, "b": [Infinity, -Infinity, 2.5], "s": "NaN"}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	a, _ := numberOf(m["a"])
	b := m["b"].([]any)
	p, _ := numberOf(b[0])
	n, _ := numberOf(b[1])
	x, _ := numberOf(b[2])
	if !math.IsNaN(a) || !math.IsInf(p, 1) || !math.IsInf(n, -1) || x != 2.5 || m["s"] != "NaN" {
		t.Errorf("decoded %v %v %v %v %v", a, p, n, x, m["s"])
	}
	// Errors point into the original text even after rewrites moved bytes.
	_, err = decodeJSON([]byte("{\"a\": NaN,\n \"b\": NaN, \"c\": ?}"))
	if err == nil || !strings.Contains(err.Error(), "line 2, column 18") {
		t.Errorf("error location: %v", err)
	}
	_, err = decodeJSON([]byte(`{"a": [1, 2`))
	if err == nil || !strings.Contains(err.Error(), "ends early") {
		t.Errorf("truncated: %v", err)
	}
}

// FuzzRewriteLiterals checks the literal rewriter on arbitrary input: it never
// panics, leaves valid JSON unchanged, never touches string contents, and
// whatever it produces from Python-style JSON decodes.
func FuzzRewriteLiterals(f *testing.F) {
	for _, s := range []string{
		`{"a": NaN}`, `[Infinity, -Infinity]`, `"NaN"`, `"\\"`, `"\"NaN\""`, `NaN`, `[NaN,NaN]`,
		`{"x": "Infinity", "y": Infinity}`, `"unterminated NaN`, `\`, `Infinit`, `-NaN`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, fixes := rewriteLiterals(data)
		if json.Valid(data) && !bytes.Equal(out, data) {
			t.Fatalf("valid JSON changed: %q → %q", data, out)
		}
		for _, fx := range fixes {
			if fx.at < 0 || fx.at > len(out) {
				t.Fatalf("fix outside the output: %+v", fx)
			}
		}
		// A string literal's contents survive exactly.
		quoted, _ := json.Marshal(string(data))
		if o, _ := rewriteLiterals(quoted); !bytes.Equal(o, quoted) {
			t.Fatalf("string contents changed: %q → %q", quoted, o)
		}
		// Python-style input decodes as the same value with literals swapped.
		v, err := decodeJSON(data)
		if err == nil && json.Valid(data) {
			var w any
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if dec.Decode(&w) != nil {
				t.Fatalf("decodeJSON accepted what encoding/json rejects: %q", data)
			}
			_ = v
		}
	})
}

// FuzzJournal feeds arbitrary journal files to the replayer and the study
// import: errors are fine, panics are not.
func FuzzJournal(f *testing.F) {
	f.Add([]byte(`{"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [1]}
{"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": null}
{"op_code": 5, "worker_id": "w", "trial_id": 0, "param_name": "x", "param_value_internal": 0.5, "distribution": "{\"name\": \"FloatDistribution\", \"attributes\": {\"step\": null, \"low\": 0, \"high\": 1, \"log\": false}}"}
{"op_code": 5, "worker_id": "w", "trial_id": 0, "param_name": "c", "param_value_internal": 1, "distribution": "{\"name\": \"CategoricalDistribution\", \"attributes\": {\"choices\": [\"a\", null, 1.5]}}"}
{"op_code": 6, "worker_id": "w", "trial_id": 0, "state": 1, "values": [Infinity]}
{"op_code": 4, "worker_id": "w", "study_id": 0, "state": 1, "value": 2, "distributions": {"x": "{\"type\": \"float\", \"low\": 0, \"high\": 1}"}, "params": {"x": 0.25}}
{"op_code": 1, "worker_id": "w", "study_id": 0}
`))
	f.Add([]byte(`{"op_code": 0, "study_name": "s", "directions": [2]}` + "\n" + `{"op_code": 6, "trial_id": 9, "state": 3, "values": null}`))
	f.Add([]byte("{\"op_code\": 99}\n"))
	data, err := readTestdata("testdata/optuna_journal.log")
	if err == nil {
		f.Add(data[:min(len(data), 4000)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := replayJournal(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, info := range j.infos() {
			run, err := j.importStudy("fuzz.log", info.Name)
			if err != nil {
				continue
			}
			for _, tr := range run.Trials {
				if tr.Usable() {
					if err := run.Space.Validate(tr.Params); err != nil {
						t.Fatalf("usable trial %d does not fit the imported space: %v", tr.Number, err)
					}
				}
			}
		}
	})
}

func readTestdata(path string) ([]byte, error) { return os.ReadFile(path) }
