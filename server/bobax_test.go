package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"xbo/client"
	"xbo/store/storetest"
)

// TestABOBAXStudy runs an a-BOBAX study through the service: proposals after
// the initial design interleave EIG_PDP and EI, and every model-based
// proposal carries the current PD band half-width in its meta note, which the
// dashboard plots against the tolerance.
func TestABOBAXStudy(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	_, err := e.c.CreateStudy(ctx, client.StudySpec{Name: "missing-tolerance", Space: json.RawMessage(space2D),
		Optimizer: json.RawMessage(`{"strategy":"a-bobax"}`)})
	if err == nil || !strings.Contains(err.Error(), "tolerance") {
		t.Fatalf("a-bobax without pd_tolerance: %v", err)
	}
	createStudy(t, e, "ab", `{"strategy":"a-bobax","pd_tolerance":1e-9,"k":2,"seed":3,"initial_size":5,"candidates":300}`)
	for range 9 {
		tr, err := e.c.Ask(ctx, "ab")
		if err != nil {
			t.Fatal(err)
		}
		v, err := evalBranin(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.c.Tell(ctx, "ab", tr.Number, v); err != nil {
			t.Fatal(err)
		}
	}
	all, err := e.c.Trials(ctx, "ab")
	if err != nil {
		t.Fatal(err)
	}
	acqs := map[string]int{}
	for _, tr := range all[5:] {
		acqs[tr.Acquisition]++
		var meta struct {
			Note string `json:"note"`
		}
		if err := json.Unmarshal(tr.Meta, &meta); err != nil {
			t.Fatalf("trial %d meta %s: %v", tr.Number, tr.Meta, err)
		}
		// A tolerance of 1e-9 is never reached: a-BOBAX keeps interleaving.
		if !strings.Contains(meta.Note, "mean PD band half-width") || !strings.Contains(meta.Note, "phase interleave") {
			t.Fatalf("trial %d note %q", tr.Number, meta.Note)
		}
	}
	if acqs["eig-pdp"] != 2 || acqs["ei"] != 2 {
		t.Fatalf("k = 2 over 4 model-based proposals should give 2 EIG_PDP and 2 EI: %v", acqs)
	}
}
