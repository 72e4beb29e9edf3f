package server_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"xbo/client"
	"xbo/explain"
	"xbo/store/storetest"
)

// TestFootprint: explain/footprint places every complete trial, with its
// value, and with two parameters the map is a rotation of their unit-square
// encodings (space2D: x on [−5, 10], y on [0, 15]), so every distance on it
// is the distance between the encodings; a study with too few trials is a
// 409.
func TestFootprint(t *testing.T) {
	st, _ := storetest.Open(t, "sqlite")
	e := newEnv(t, st, 0)
	ctx := context.Background()
	createStudy(t, e, "s", `{"strategy":"random","seed":5}`)
	if code, body := raw(t, e, "GET", "/api/studies/s/explain/footprint", "", false); code != 409 {
		t.Fatalf("footprint of an empty study: %d %s, want 409", code, body)
	}
	if err := e.c.Optimize(ctx, "s", 12, func(_ context.Context, t *client.Trial) (float64, error) { return evalBranin(t) }); err != nil {
		t.Fatal(err)
	}
	trials, err := e.c.Trials(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	code, body := raw(t, e, "GET", "/api/studies/s/explain/footprint", "", false)
	if code != 200 {
		t.Fatalf("footprint: %d %s", code, body)
	}
	var res explain.FootprintResult
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != len(trials) || len(trials) != 12 || len(res.Uniform) != 300 || math.Abs(res.Explained[0]+res.Explained[1]-1) > 1e-9 {
		t.Fatalf("footprint: %d trials of %d, %d uniform points, explained %v", len(res.Trials), len(trials), len(res.Uniform), res.Explained)
	}
	unit := func(tr client.Trial) [2]float64 {
		x, _ := tr.Float("x")
		y, _ := tr.Float("y")
		return [2]float64{(x + 5) / 15, y / 15}
	}
	for i, p := range res.Trials {
		tr := trials[i]
		if p.Trial != tr.Number || tr.Value == nil || p.Value != *tr.Value {
			t.Fatalf("footprint point %d: trial %d value %v; API trial %d value %v", i, p.Trial, p.Value, tr.Number, tr.Value)
		}
		for j := range i {
			a, b := unit(tr), unit(trials[j])
			want := math.Hypot(a[0]-b[0], a[1]-b[1])
			got := math.Hypot(p.X-res.Trials[j].X, p.Y-res.Trials[j].Y)
			if math.Abs(got-want) > 1e-9 {
				t.Fatalf("trials %d and %d: %v apart on the map, %v between their encodings", tr.Number, trials[j].Number, got, want)
			}
		}
	}
}
