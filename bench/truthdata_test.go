package bench

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func problemNamed(t *testing.T, name string) *TruthProblem {
	t.Helper()
	for _, p := range catalogue(t) {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no problem %s", name)
	return nil
}

// The cache round-trips a data set exactly, is read instead of generating
// (a changed observed value comes back), serves a shorter prefix, and is
// regenerated when it no longer matches the problem. A shorter run of the
// default optimizer is a prefix of a longer one, which the prefix reuse
// relies on. The maximize problem is told its values as they are.
func TestTruthDataCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := problemNamed(t, "training-4") // maximize; initial design of 16
	d, err := truthData(ctx, p, DataDefault, 20, 3, dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 20 || len(d.U) != 20 || !reflect.DeepEqual(d.Y, d.Clean) {
		t.Fatalf("data %+v", d)
	}
	path := filepath.Join(dir, "training-4.default.3.json")
	again, err := truthData(ctx, p, DataDefault, 20, 3, dir)
	if err != nil || !reflect.DeepEqual(again, d) {
		t.Fatalf("cached data differ: %v", err)
	}
	short, err := generateTruthData(ctx, p, DataDefault, 18, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(short, d.prefix(18)) {
		t.Error("18 trials of the optimizer are not the prefix of 20")
	}
	// Tamper with an observed value: the cache is what is read.
	var stored TruthData
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	stored.Y[0] = 42
	b, _ = json.Marshal(stored)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := truthData(ctx, p, DataDefault, 10, 3, dir); err != nil || got.N != 10 || got.Y[0] != 42 {
		t.Fatalf("prefix from the cache: %+v, %v", got, err)
	}
	// A clean value that the problem does not give: regenerated.
	stored.Clean[1]++
	b, _ = json.Marshal(stored)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := truthData(ctx, p, DataDefault, 20, 3, dir); err != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("stale cache not regenerated: %v", err)
	}
	// A longer size than the cache holds: generated and stored.
	if got, err := truthData(ctx, p, DataUniform, 30, 3, dir); err != nil || got.N != 30 {
		t.Fatal(err)
	}
	if got, err := readTruthData(filepath.Join(dir, "training-4.uniform.3.json"), p, DataUniform, 3); err != nil || got.N != 30 {
		t.Fatalf("uniform cache: %v", err)
	}
}

// The heavy-tailed problem reports a diverged value in about a tenth of its
// trials (binomial(400, 0.1): 40 ± 6), more than 5 times the largest clean
// value, and the data keep both.
func TestTruthDataDiverged(t *testing.T) {
	p := problemNamed(t, "diverging-4")
	d, err := generateTruthData(context.Background(), p, DataUniform, 400, 1)
	if err != nil {
		t.Fatal(err)
	}
	diverged := 0
	top := slices.Max(d.Clean)
	for i := range d.Y {
		if d.Y[i] != d.Clean[i] {
			diverged++
			if !(d.Y[i] > 5*top) || math.IsInf(d.Y[i], 0) {
				t.Errorf("diverged value %v, largest clean value %v", d.Y[i], top)
			}
		}
	}
	if diverged < 22 || diverged > 58 {
		t.Errorf("%d of 400 trials diverged", diverged)
	}
}
