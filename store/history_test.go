package store

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"xbo/history"
)

func TestToHistory(t *testing.T) {
	st := &Study{Name: "s", Version: 9, Space: json.RawMessage(`{"objective":"maximize","params":[
		{"name":"x","type":"float","low":0,"high":1},{"name":"c","type":"categorical","choices":["a","b"]}]}`)}
	v1, v2 := 0.5, 0.9
	now := time.Unix(100, 0)
	later := now.Add(time.Minute)
	trials := []Trial{ // out of number order; trial 2 completed before trial 0
		{Number: 2, State: Complete, Params: map[string]any{"x": 0.2, "c": "b"}, Value: &v2, Version: 3, StartedAt: &now, FinishedAt: &later},
		{Number: 0, State: Complete, Params: map[string]any{"x": 0.1, "c": "a"}, Value: &v1, Version: 5,
			Intermediate: []Intermediate{{Step: 1, Value: 0.3}}, UserAttrs: map[string]any{"k": "v"}, Worker: "w1"},
		{Number: 1, State: Failed, Params: map[string]any{"x": 0.7, "c": "a"}, FailReason: "oom", Version: 4},
		{Number: 3, State: Expired, Params: map[string]any{"x": 0.7, "c": "a"}, Version: 6},
	}
	h, err := ToHistory(st, trials)
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "s" || h.StudyVersion != 9 || h.Direction() != "maximize" || len(h.Trials) != 4 {
		t.Fatalf("history %+v", h)
	}
	t0, t1, t2 := h.Trials[0], h.Trials[1], h.Trials[2]
	if t0.Number != 0 || t0.Params[1] != 0 || t0.Value != 0.5 || t0.Worker != "w1" || t0.UserAttrs["k"] != "v" || len(t0.Intermediate) != 1 {
		t.Fatalf("trial 0: %+v", t0)
	}
	if t1.State != history.Failed || !math.IsNaN(t1.Value) || t1.FailReason != "oom" || t1.Completion != -1 {
		t.Fatalf("trial 1: %+v", t1)
	}
	// Completion follows the versions: trial 2 (version 3) before trial 0 (5).
	if t2.Completion != 0 || t0.Completion != 1 || t2.Duration() != time.Minute {
		t.Fatalf("completions %d %d, duration %v", t2.Completion, t0.Completion, t2.Duration())
	}
	if b, _ := h.Best(); h.Trials[b].Number != 2 {
		t.Fatalf("best %d", h.Trials[b].Number)
	}
	trials[0].Params["x"] = 3.0 // outside the space
	if _, err := ToHistory(st, trials); err == nil {
		t.Fatal("a trial outside the space was accepted")
	}
}
