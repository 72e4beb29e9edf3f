package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestProgressDrawsOnlyOnATerminal(t *testing.T) {
	var quiet bytes.Buffer
	p := newProgress(&cliEnv{stderr: &quiet}, "work")
	p.set(1, 4)
	p.describe("work: step 2")
	p.finish()
	if quiet.Len() != 0 {
		t.Fatalf("drew off a terminal: %q", quiet.String())
	}

	var term bytes.Buffer
	p = newProgress(&cliEnv{stderr: &term, isTerminal: true}, "work")
	p.finish() // before any update: nothing to clear, no bar made
	if term.Len() != 0 {
		t.Fatalf("finish without updates drew %q", term.String())
	}
	p.set(2, 4)
	p.describe("work: step 3")
	p.set(3, 4)
	if out := term.String(); !strings.Contains(out, "3/4") || !strings.Contains(out, "work: step 3") {
		t.Fatalf("bar output %q lacks the count or the description", out)
	}
	p.finish()
}
