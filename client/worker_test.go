package client

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// A copy made by AsWorker asks under its own name and leaves the original's
// alone; an empty name is refused.
func TestAsWorker(t *testing.T) {
	var got []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Worker string }
		json.NewDecoder(r.Body).Decode(&body)
		got = append(got, body.Worker)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"number": 1, "params": {}}`))
	})
	c := New("http://localhost", WithHandler(h), WithWorker("w"))
	slot, err := c.AsWorker("w/2")
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range []*Client{slot, c} {
		if _, err := cl.Ask(context.Background(), "s"); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || got[0] != "w/2" || got[1] != "w" || slot.Worker() != "w/2" || c.Worker() != "w" {
		t.Fatalf("asked as %v; workers %q, %q", got, slot.Worker(), c.Worker())
	}
	if _, err := c.AsWorker(" "); err == nil {
		t.Error("an empty worker name accepted")
	}
	var none *Client
	if _, err := none.AsWorker("x"); err == nil || none.Worker() != "" {
		t.Error("a nil client gave a copy")
	}
}
