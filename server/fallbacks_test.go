package server_test

import (
	"context"
	"strings"
	"testing"

	"xbo/store/storetest"
)

// TestRandomFallbacksMetric: every stored trial proposed as a random
// fallback counts in xbo_random_fallbacks_total, and no other does. With one
// design point and no trial told yet, the second and third asks have no
// model to propose from.
func TestRandomFallbacksMetric(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "s", `{"initial_size":1,"seed":2}`)
	createStudy(t, e, "r", `{"strategy":"random","seed":2}`)
	fallbacks := 0
	for range 3 {
		for _, study := range []string{"s", "r"} {
			tr, err := e.c.Ask(ctx, study)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Acquisition == "random-fallback" {
				fallbacks++
			}
		}
	}
	if fallbacks != 2 {
		t.Fatalf("%d random fallbacks, want 2 (the asks of s after its design point)", fallbacks)
	}
	code, body := raw(t, e, "GET", "/metrics", "", false)
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	if want := "xbo_random_fallbacks_total 2\n"; !strings.Contains(body, want) {
		t.Errorf("metrics lack %q", want)
	}
}
