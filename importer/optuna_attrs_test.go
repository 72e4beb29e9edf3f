package importer

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"xbo/history"
	"xbo/importer/optunatest"
)

// TestOptunaImportKeepsAttributesTimesAndOrigins compares every field of
// every imported trial with what Optuna itself reported, for both
// storages: states, parameters, values, intermediate values, user
// attributes under their own names, start and completion times, the
// enqueued marker, and the study's user attributes.
func TestOptunaImportKeepsAttributesTimesAndOrigins(t *testing.T) {
	fixtures, rdb, journal := optunatest.AttrsStudies(t)
	imports := map[string]func() (*Run, error){
		"rdb":     func() (*Run, error) { return ImportOptuna(rdb, "attrs") },
		"journal": func() (*Run, error) { return ImportOptunaJournal(journal, "attrs") },
	}
	states := map[string]history.State{"COMPLETE": history.Complete, "PRUNED": history.Pruned, "FAIL": history.Failed}
	for kind, load := range imports {
		run, err := load()
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		want := fixtures[kind]
		if !reflect.DeepEqual(run.StudyAttrs, want.UserAttrs) {
			t.Errorf("%s: study attributes %v, want %v", kind, run.StudyAttrs, want.UserAttrs)
		}
		if len(run.Trials) != len(want.Trials) {
			t.Fatalf("%s: %d trials, want %d", kind, len(run.Trials), len(want.Trials))
		}
		for i, w := range want.Trials {
			got := run.Trials[i]
			if got.Number != w.Number || got.State != states[w.State] {
				t.Errorf("%s: trial %d: number %d state %s, want %d %s", kind, i, got.Number, got.State, w.Number, w.State)
			}
			for name, v := range w.Params {
				j, _ := run.Space.Index(name)
				if f, _ := v.(float64); got.Params[j] != f {
					t.Errorf("%s: trial %d: %s = %v, want %v", kind, w.Number, name, got.Params[j], v)
				}
			}
			if (w.Value == nil) != (math.IsNaN(got.Value)) || (w.Value != nil && *w.Value != got.Value) {
				t.Errorf("%s: trial %d: value %v, want %v", kind, w.Number, got.Value, w.Value)
			}
			if len(got.Intermediate) != len(w.Intermediate) {
				t.Errorf("%s: trial %d: intermediate %v, want %v", kind, w.Number, got.Intermediate, w.Intermediate)
			}
			for _, iv := range got.Intermediate {
				if wv, ok := w.Intermediate[json.Number(itoa(iv.Step)).String()]; !ok || wv != iv.Value {
					t.Errorf("%s: trial %d: step %d = %v, want %v", kind, w.Number, iv.Step, iv.Value, w.Intermediate)
				}
			}
			if !reflect.DeepEqual(got.UserAttrs, w.UserAttrs) {
				t.Errorf("%s: trial %d: user attributes %v, want %v", kind, w.Number, got.UserAttrs, w.UserAttrs)
			}
			start, err := parseOptunaTime(w.DatetimeStart)
			if err != nil {
				t.Fatal(err)
			}
			complete, err := parseOptunaTime(w.DatetimeComplete)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Started.Equal(start) || !got.Finished.Equal(complete) || start.IsZero() || complete.IsZero() {
				t.Errorf("%s: trial %d: started %v finished %v, want %v %v", kind, w.Number, got.Started, got.Finished, start, complete)
			}
			if enq := got.Acquisition == "enqueued"; enq != w.Enqueued {
				t.Errorf("%s: trial %d: acquisition %q, enqueued in Optuna: %v", kind, w.Number, got.Acquisition, w.Enqueued)
			}
		}
		// RandomSampler keeps no system attributes; nothing to warn about.
		for _, w := range run.Warnings {
			if strings.Contains(w, "system attributes") {
				t.Errorf("%s: unexpected warning %q", kind, w)
			}
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
