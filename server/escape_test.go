package server

import "testing"

func TestEscapesNUL(t *testing.T) {
	for body, want := range map[string]bool{
		`{"w":"a\u0000"}`:    true,
		`{"w":"a\\u0000"}`:   false, // an escaped backslash, then text
		`{"w":"a\\\u0000"}`:  true,
		`{"w":"plain"}`:      false,
		`{"a":"\\","b":"x"}`: false,
	} {
		if got := escapesNUL([]byte(body)); got != want {
			t.Errorf("%s: %v, want %v", body, got, want)
		}
	}
}
