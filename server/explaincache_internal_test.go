package server

import (
	"fmt"
	"testing"
)

func TestExplainCacheBounds(t *testing.T) {
	var c explainCache
	for i := range explainCacheEntries + 10 {
		c.put(fmt.Sprint(i), "f", []byte("body"))
	}
	if len(c.entries) != explainCacheEntries || len(c.order) != explainCacheEntries {
		t.Fatalf("%d entries, %d in order, want %d", len(c.entries), len(c.order), explainCacheEntries)
	}
	if _, ok := c.get("0", "f"); ok {
		t.Fatal("the oldest entry was not evicted")
	}
	if b, ok := c.get(fmt.Sprint(explainCacheEntries+9), "f"); !ok || string(b) != "body" {
		t.Fatal("the newest entry is missing")
	}
	// Replacing an entry keeps one copy and counts its bytes once.
	c.put("x", "f1", make([]byte, 100))
	c.put("x", "f2", make([]byte, 10))
	if _, ok := c.get("x", "f1"); ok {
		t.Fatal("an entry was served for an old fingerprint")
	}
	if c.bytes != 4*(explainCacheEntries-1)+10 {
		t.Fatalf("bytes %d", c.bytes)
	}
	big := make([]byte, explainCacheBytes/8)
	for i := range 10 {
		c.put(fmt.Sprint("big", i), "f", big)
	}
	if c.bytes > explainCacheBytes {
		t.Fatalf("%d bytes cached, bound %d", c.bytes, explainCacheBytes)
	}
}
