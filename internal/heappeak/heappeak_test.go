package heappeak

import "testing"

// sink keeps what a measured call allocated reachable after it.
var sink []byte

// A call that holds 64 MiB at once shows it at its peak and not after it;
// one that keeps it shows it after.
func TestMeasure(t *testing.T) {
	u, err := Measure(func() {
		b := make([]byte, 64<<20)
		for i := range b {
			b[i] = byte(i)
		}
		sink = b
	})
	if err != nil {
		t.Fatal(err)
	}
	if u.Grew() < 60<<20 || u.Kept() < 60<<20 {
		t.Fatalf("held 64 MiB and kept it: %+v", u)
	}
	sink = nil
	u, err = Measure(func() {
		b := make([]byte, 64<<20)
		for i := range b {
			b[i] = byte(i)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if u.Grew() < 60<<20 || u.Kept() > 8<<20 {
		t.Fatalf("held 64 MiB for a while: %+v", u)
	}
	if _, err := Measure(nil); err == nil {
		t.Fatal("Measure(nil) did not fail")
	}
}
