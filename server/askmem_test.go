package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"xbo/client"
	"xbo/internal/heappeak"
	"xbo/opt"
	"xbo/space"
	"xbo/store/storetest"
)

// askMemoryBound is what docs/api.md ("Limits") promises one ask at the
// limits stays under.
const askMemoryBound = 256 << 20

// widestSpace is a space of space.MaxParams float parameters.
func widestSpace() json.RawMessage {
	params := make([]string, space.MaxParams)
	for i := range params {
		params[i] = fmt.Sprintf(`{"name":"x%d","type":"float","low":0,"high":1}`, i)
	}
	return json.RawMessage(`{"params":[` + strings.Join(params, ",") + `]}`)
}

// The product (candidates + local candidates) × parameters is bounded, with
// a 400 that names the limit and what this space allows; at the limit the
// study is created.
func TestCandidateCellsLimited(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	perParam := opt.MaxCandidateCells / space.MaxParams
	over := fmt.Sprintf(`{"name":"over","space":%s,"optimizer":{"candidates":%d,"local_candidates":500,"initial_size":5}}`, widestSpace(), perParam-499)
	code, body := raw(t, e, "POST", "/api/studies", over, true)
	if code != 400 || !strings.Contains(body, fmt.Sprintf("limit of %d", opt.MaxCandidateCells)) ||
		!strings.Contains(body, fmt.Sprintf("candidates + local_candidates ≤ %d for this space", perParam)) {
		t.Fatalf("over the limit: %d %s", code, body)
	}
	at := fmt.Sprintf(`{"name":"at","space":%s,"optimizer":{"candidates":%d,"local_candidates":500,"initial_size":5}}`, widestSpace(), perParam-500)
	if code, body := raw(t, e, "POST", "/api/studies", at, true); code != 201 {
		t.Fatalf("at the limit: %d %s", code, body)
	}
	// A small space keeps the per-setting limits.
	small := `{"name":"small","space":{"params":[{"name":"x","type":"float","low":0,"high":1}]},"optimizer":{"candidates":100000,"local_candidates":100000}}`
	if code, body := raw(t, e, "POST", "/api/studies", small, true); code != 201 {
		t.Fatalf("a small space with the most candidates: %d %s", code, body)
	}
}

// One model-based ask at the documented limits (500 parameters, candidates
// and local candidates at their product's limit) stays under
// askMemoryBound, and its memory is released after it. At the former
// limits (100,000 of each) one ask held about 2 GiB.
func TestAskAtTheLimitsBoundsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a model-based ask over 500 parameters takes seconds")
	}
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	perParam := opt.MaxCandidateCells / space.MaxParams
	spec := client.StudySpec{Name: "wide", Space: widestSpace(),
		Optimizer: map[string]any{"candidates": perParam - 500, "local_candidates": 500, "initial_size": 5, "seed": 7}}
	if _, err := e.c.CreateStudy(ctx, spec); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 24; i++ {
		params := map[string]any{}
		sum := 0.0
		for k := 0; k < space.MaxParams; k++ {
			x := rng.Float64()
			params[fmt.Sprintf("x%d", k)] = x
			sum += (x - 0.3) * (x - 0.3)
		}
		if _, err := e.c.AddResult(ctx, "wide", params, sum); err != nil {
			t.Fatal(err)
		}
	}
	var tr *client.Trial
	var err error
	u, merr := heappeak.Measure(func() { tr, err = e.c.Ask(ctx, "wide") })
	if err != nil || merr != nil {
		t.Fatal(err, merr)
	}
	if tr.Acquisition == "initial-design" || tr.Acquisition == "random" || tr.Acquisition == "random-fallback" {
		t.Fatalf("the ask was not model-based (%s): it measured nothing", tr.Acquisition)
	}
	t.Logf("heap before %d MiB, peak %d MiB, after %d MiB", u.Before>>20, u.Peak>>20, u.After>>20)
	if u.Grew() > askMemoryBound {
		t.Fatalf("one ask at the limits took %d MiB of heap, above the %d MiB bound", u.Grew()>>20, askMemoryBound>>20)
	}
	if u.Kept() > 32<<20 {
		t.Fatalf("the ask kept %d MiB after it (before %d MiB, after %d MiB)", u.Kept()>>20, u.Before>>20, u.After>>20)
	}
}
