package fanova

import (
	"math"
	"testing"

	"xbo/space"
)

// The exact inactive masses agree with the frequencies of space.Sample
// (200 000 draws: 4.5 binomial standard errors are below 0.005).
func TestInactiveMassMatchesSampling(t *testing.T) {
	s, err := space.Parse([]byte(`{"params": [
	  {"name": "opt", "type": "categorical", "choices": ["sgd", "adam", "rms"]},
	  {"name": "momentum", "type": "float", "low": 0, "high": 1, "condition": {"parent": "opt", "values": ["sgd", "rms"]}},
	  {"name": "nesterov", "type": "categorical", "choices": ["no", "yes"], "condition": {"parent": "momentum", "values": [0.5]}},
	  {"name": "layers", "type": "int", "low": 1, "high": 16, "log": true},
	  {"name": "width2", "type": "int", "low": 8, "high": 64, "condition": {"parent": "layers", "values": [2, 3]}},
	  {"name": "drop2", "type": "float", "low": 0, "high": 0.5, "condition": {"parent": "width2", "values": [8, 9, 10, 11]}}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := InactiveMass(s)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200000
	freq := make([]float64, s.Dim())
	for _, u := range s.Sample(newRNG(5), n) {
		for j, v := range u {
			if v == space.Inactive {
				freq[j] += 1.0 / n
			}
		}
	}
	t.Logf("exact %v, sampled %v", got, freq)
	for j := range got {
		if math.Abs(got[j]-freq[j]) > 0.005 {
			t.Errorf("%s: exact inactive mass %.4f, sampled %.4f", s.Params[j].Name, got[j], freq[j])
		}
	}
	if got[0] != 0 || got[2] != 1 || math.Abs(got[1]-1.0/3) > 1e-15 {
		t.Errorf("closed forms: opt %v (want 0), momentum %v (want 1/3), nesterov %v (want 1: a float parent never equals one value)", got[0], got[1], got[2])
	}
	plain, err := space.Parse([]byte(`{"params": [{"name": "a", "type": "float", "low": 0, "high": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := InactiveMass(plain); m != nil || err != nil {
		t.Errorf("unconditional space: %v, %v; want nil", m, err)
	}
}
