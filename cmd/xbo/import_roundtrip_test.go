package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"xbo/importer/optunatest"
	"xbo/store"
)

// TestOptunaRoundTripIntoStore imports an Optuna study (both storages) into
// a store and compares every trial field by field with what Optuna itself
// reported (importer/testdata/make_optuna_attrs.py): state, parameters,
// value, intermediate values, user attributes under their own names, start
// and finish times; the provenance (format, source, number, state, the
// enqueued origin) sits apart in one attribute. The study's user
// attributes, which an xbo study cannot hold, are a warning. A second
// import of the same study, with no --name, gets the next free name.
func TestOptunaRoundTripIntoStore(t *testing.T) {
	fixtures, rdb, journal := optunatest.AttrsStudies(t)
	sources := map[string][]string{
		"rdb":     {"--optuna", rdb, "optuna-rdb"},
		"journal": {"--optuna-journal", journal, "optuna-journal"},
	}
	states := map[string]store.State{"COMPLETE": store.Complete, "PRUNED": store.Pruned, "FAIL": store.Failed}
	for kind, src := range sources {
		db := filepath.Join(t.TempDir(), "xbo.db")
		code, stdout, stderr := runCLI(t, "import", src[0], src[1], "--into", db)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", kind, code, stderr)
		}
		if !strings.Contains(stdout, `into study "attrs"`) || !strings.Contains(stderr, "user attributes (budget, dataset) are not kept") {
			t.Errorf("%s: stdout %q stderr %q", kind, stdout, stderr)
		}
		ctx := context.Background()
		st, err := store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		list, _, err := st.Trials(ctx, "attrs", store.TrialQuery{})
		if err != nil {
			t.Fatal(err)
		}
		want := fixtures[kind].Trials
		if len(list) != len(want) {
			t.Fatalf("%s: %d trials, want %d", kind, len(list), len(want))
		}
		for i, w := range want {
			got := list[i]
			if got.State != states[w.State] {
				t.Errorf("%s: trial %d: state %s, want %s", kind, w.Number, got.State, w.State)
			}
			if !reflect.DeepEqual(got.Params, w.Params) {
				t.Errorf("%s: trial %d: params %v, want %v", kind, w.Number, got.Params, w.Params)
			}
			if w.State == "COMPLETE" && (got.Value == nil || w.Value == nil || *got.Value != *w.Value) {
				t.Errorf("%s: trial %d: value %v, want %v", kind, w.Number, got.Value, w.Value)
			}
			inter := map[string]float64{}
			for _, iv := range got.Intermediate {
				inter[strings.TrimSpace(jsonText(t, iv.Step))] = iv.Value
			}
			if !reflect.DeepEqual(inter, w.Intermediate) {
				t.Errorf("%s: trial %d: intermediate %v, want %v", kind, w.Number, inter, w.Intermediate)
			}
			attrs := map[string]any{}
			for k, v := range got.UserAttrs {
				if k != provenanceAttr {
					attrs[k] = v
				}
			}
			if !reflect.DeepEqual(attrs, w.UserAttrs) {
				t.Errorf("%s: trial %d: user attributes %v, want %v", kind, w.Number, attrs, w.UserAttrs)
			}
			prov, _ := got.UserAttrs[provenanceAttr].(map[string]any)
			if prov["format"] != src[2] || prov["study"] != "attrs" || prov["number"] != float64(w.Number) || prov["state"] == nil {
				t.Errorf("%s: trial %d: provenance %v", kind, w.Number, prov)
			}
			if enq := prov["origin"] == "enqueued"; enq != w.Enqueued {
				t.Errorf("%s: trial %d: origin %v, enqueued in Optuna: %v", kind, w.Number, prov["origin"], w.Enqueued)
			}
			start, _ := time.ParseInLocation("2006-01-02T15:04:05.999999", w.DatetimeStart, time.Local)
			end, _ := time.ParseInLocation("2006-01-02T15:04:05.999999", w.DatetimeComplete, time.Local)
			if got.StartedAt == nil || !got.StartedAt.Equal(start) || got.FinishedAt == nil || !got.FinishedAt.Equal(end) || !got.CreatedAt.Equal(start) {
				t.Errorf("%s: trial %d: created %v started %v finished %v, want %v %v", kind, w.Number, got.CreatedAt, got.StartedAt, got.FinishedAt, start, end)
			}
		}
		st.Close()
		// Imported again without --name: the next free name.
		code, stdout, stderr = runCLI(t, "import", src[0], src[1], "--into", db)
		if code != 0 || !strings.Contains(stdout, `into study "attrs-2"`) {
			t.Errorf("%s: second import: exit %d %q %q", kind, code, stdout, stderr)
		}
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An Optuna storage keeps no pruner: importing pruned trials without one is
// a warning, --pruner sets the study's (validated), and a bad one or one
// without --into is a usage error.
func TestImportPruner(t *testing.T) {
	src := importTestdata + "optuna_pruned_rdb.sqlite3"
	db := filepath.Join(t.TempDir(), "xbo.db")
	code, _, stderr := runCLI(t, "import", "--optuna", src, "--into", db, "--name", "none")
	if code != 0 || !strings.Contains(stderr, "does not record its pruner") {
		t.Errorf("no pruner: exit %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "import", "--optuna", src, "--into", db, "--name", "median", "--pruner", `{"type":"median","n_warmup_steps":2}`)
	if code != 0 || strings.Contains(stderr, "does not record its pruner") {
		t.Fatalf("with a pruner: exit %d %q", code, stderr)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	study, err := st.Study(context.Background(), "median")
	if err != nil {
		t.Fatal(err)
	}
	var pr map[string]any
	if err := json.Unmarshal(study.Pruner, &pr); err != nil || pr["type"] != "median" || pr["n_warmup_steps"] != 2.0 {
		t.Errorf("stored pruner %s (%v)", study.Pruner, err)
	}
	for _, args := range [][]string{
		{"import", "--optuna", src, "--into", db, "--name", "bad", "--pruner", `{"type":"sometimes"}`},
		{"import", "--optuna", src, "--out", filepath.Join(t.TempDir(), "t.csv"), "--pruner", `{"type":"median"}`},
	} {
		if code, _, stderr := runCLI(t, args...); code != 2 || !strings.Contains(stderr, "--pruner") {
			t.Errorf("%v: exit %d %q", args, code, stderr)
		}
	}
}
