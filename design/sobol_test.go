package design

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

type sobolCase struct {
	d, n, skip int
	points     [][]float64
}

// readSobolReference parses testdata/sobol_reference.txt, written by
// testdata/gen_sobol_reference.py from Debian's python3-scipy.
func readSobolReference(t *testing.T) []sobolCase {
	t.Helper()
	f, err := os.Open("testdata/sobol_reference.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []sobolCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "# d=") {
			var c sobolCase
			if _, err := fmt.Sscanf(text, "# d=%d n=%d skip=%d", &c.d, &c.n, &c.skip); err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			cases = append(cases, c)
			continue
		}
		if strings.HasPrefix(text, "#") || len(cases) == 0 {
			continue
		}
		fields := strings.Fields(text)
		c := &cases[len(cases)-1]
		if len(fields) != c.d {
			t.Fatalf("line %d: %d fields, want %d", line, len(fields), c.d)
		}
		p := make([]float64, c.d)
		for j, fld := range fields {
			k, err := strconv.ParseInt(fld, 10, 64)
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			p[j] = math.Ldexp(float64(k), -30)
		}
		c.points = append(c.points, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases in the reference file")
	}
	return cases
}

func TestSobolMatchesScipy(t *testing.T) {
	for _, c := range readSobolReference(t) {
		if len(c.points) != c.n {
			t.Fatalf("d=%d: reference has %d points, header says %d", c.d, len(c.points), c.n)
		}
		got, err := SobolDesign(c.n, c.d, c.skip)
		if err != nil {
			t.Fatalf("d=%d n=%d skip=%d: %v", c.d, c.n, c.skip, err)
		}
		for i := range got {
			for j := range got[i] {
				if got[i][j] != c.points[i][j] {
					t.Fatalf("d=%d skip=%d: point %d coordinate %d = %v, scipy %v",
						c.d, c.skip, c.skip+i, j, got[i][j], c.points[i][j])
				}
			}
		}
	}
}

// TestSobolFirstPoints pins the start of the sequence by hand: dimension 1 is
// van der Corput in Gray-code order, dimension 2 has m_1 = 1 and polynomial
// x + 1, so v_k = 1/2^k ⊕ v_(k−1)/2.
func TestSobolFirstPoints(t *testing.T) {
	got, err := SobolDesign(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0, 0}, {0.5, 0.5}, {0.75, 0.25}, {0.25, 0.75}}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("point %d = %v, want %v", i, got[i], want[i])
			}
		}
	}
}

// TestSobolBalance checks the (0,m,1)-net property of every one-dimensional
// projection: the first 2^m points put exactly 2^(m−k) points in each dyadic
// interval [c/2^k, (c+1)/2^k), k = 0..m.
func TestSobolBalance(t *testing.T) {
	for _, tc := range []struct{ m, d int }{{4, 64}, {8, 64}, {10, 20}, {6, MaxSobolDim}} {
		n := 1 << tc.m
		pts, err := SobolDesign(n, tc.d, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j := range tc.d {
			for k := 0; k <= tc.m; k++ {
				counts := make([]int, 1<<k)
				for _, p := range pts {
					counts[int(math.Ldexp(p[j], k))]++
				}
				for c, got := range counts {
					if got != n>>k {
						t.Fatalf("n=2^%d dim %d: interval %d/2^%d holds %d points, want %d", tc.m, j, c, k, got, n>>k)
					}
				}
			}
		}
	}
}

// TestSobolPairBalance checks a two-dimensional net property that holds for
// the first two dimensions (a (0,m,2)-net): the first 2^m points put exactly
// one point in every dyadic box of area 2^−m.
func TestSobolPairBalance(t *testing.T) {
	const m = 8
	pts, err := SobolDesign(1<<m, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k <= m; k++ {
		seen := make(map[[2]int]bool)
		for _, p := range pts {
			box := [2]int{int(math.Ldexp(p[0], k)), int(math.Ldexp(p[1], m-k))}
			if seen[box] {
				t.Fatalf("boxes 2^-%d × 2^-%d: box %v holds two points", k, m-k, box)
			}
			seen[box] = true
		}
	}
}

func TestSobolSeekMatchesIteration(t *testing.T) {
	seq, err := NewSobolSequence(7)
	if err != nil {
		t.Fatal(err)
	}
	all := make([][]float64, 300)
	for i := range all {
		all[i] = make([]float64, 7)
		if err := seq.Next(all[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, skip := range []int{1, 5, 64, 127, 128, 299} {
		got, err := SobolDesign(1, 7, skip)
		if err != nil {
			t.Fatal(err)
		}
		for j := range got[0] {
			if got[0][j] != all[skip][j] {
				t.Fatalf("skip %d: %v, iterating gives %v", skip, got[0], all[skip])
			}
		}
	}
	if seq.Index() != 300 || seq.Dim() != 7 {
		t.Errorf("index %d dim %d, want 300 and 7", seq.Index(), seq.Dim())
	}
	if err := seq.Next(make([]float64, 3)); err == nil {
		t.Error("Next with a short destination succeeded")
	}
	if err := seq.Seek(1 << 60); err == nil {
		t.Error("Seek beyond the precision succeeded")
	}
	if _, err := SobolDesign(2, 3, 1<<52); err == nil {
		t.Error("SobolDesign beyond the precision succeeded")
	}
	if _, err := NewSobolSequence(0); err == nil {
		t.Error("NewSobolSequence(0) succeeded")
	}
}

// TestSobolDirectionTable checks the invariants of the Joe–Kuo rows: m_k odd
// and below 2^k, a below 2^(s−1), degrees non-decreasing.
func TestSobolDirectionTable(t *testing.T) {
	if MaxSobolDim < 64 {
		t.Fatalf("MaxSobolDim = %d, want at least 64", MaxSobolDim)
	}
	prev := uint(0)
	for i, row := range joeKuoDirections {
		if row.s < prev || len(row.m) != int(row.s) || row.a >= 1<<(row.s-1) {
			t.Fatalf("dimension %d: malformed row %+v", i+2, row)
		}
		for k, m := range row.m {
			if m%2 != 1 || m >= 1<<(k+1) {
				t.Fatalf("dimension %d: m_%d = %d not odd below 2^%d", i+2, k+1, m, k+1)
			}
		}
		prev = row.s
	}
}

func BenchmarkSobol(b *testing.B) {
	for b.Loop() {
		if _, err := SobolDesign(1024, 64, 0); err != nil {
			b.Fatal(err)
		}
	}
}
