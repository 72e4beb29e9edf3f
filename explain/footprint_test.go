package explain

import (
	"math"
	"testing"

	"xbo/history"
	"xbo/space"
)

func footprintHistory(t *testing.T, doc string, rows [][]float64) *history.History {
	t.Helper()
	sp, err := space.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	h := &history.History{Space: sp}
	for i, r := range rows {
		h.Trials = append(h.Trials, history.Trial{Number: int64(10 + i), State: history.Complete, Params: r, Value: float64(i), Completion: i})
	}
	return h
}

// With two parameters the map is a rotation of the unit square: every
// distance between two trials on the map is their distance in the
// encoding, and the two axes carry all of the variance.
func TestFootprintKeepsDistances(t *testing.T) {
	var rows [][]float64
	for i := range 15 {
		rows = append(rows, []float64{math.Mod(0.1+float64(i)*0.618034, 1), math.Mod(0.7+float64(i)*0.754878, 1)})
	}
	h := footprintHistory(t, `{"objective":"minimize","params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1}]}`, rows)
	res, err := Footprint(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 15 || res.Trials[3].Trial != 13 || res.Trials[3].Value != 3 || len(res.Uniform) != FootprintUniform {
		t.Fatalf("footprint of %d trials (trial %d, value %v), %d uniform points", len(res.Trials), res.Trials[3].Trial, res.Trials[3].Value, len(res.Uniform))
	}
	if s := res.Explained[0] + res.Explained[1]; math.Abs(s-1) > 1e-12 || res.Explained[0] < res.Explained[1] {
		t.Fatalf("explained %v: two axes of two parameters carry all the variance, the first the most", res.Explained)
	}
	for i := range rows {
		for j := range i {
			want := math.Hypot(rows[i][0]-rows[j][0], rows[i][1]-rows[j][1])
			got := math.Hypot(res.Trials[i].X-res.Trials[j].X, res.Trials[i].Y-res.Trials[j].Y)
			if math.Abs(got-want) > 1e-12 {
				t.Fatalf("trials %d and %d: %v apart on the map, %v in the encoding", i, j, got, want)
			}
		}
	}
}

// Trials along the diagonal a = b of three parameters, c fixed: the first
// axis is that diagonal (loadings 1/√2, 1/√2, 0) and carries all of the
// variance; every trial lies on it; the uniform configurations spread
// across both axes (the space the trials never searched).
func TestFootprintFindsTheSearchedLine(t *testing.T) {
	var rows [][]float64
	for i := range 12 {
		v := float64(i) / 11
		rows = append(rows, []float64{v, v, 0.5})
	}
	h := footprintHistory(t, `{"objective":"minimize","params":[{"name":"a","type":"float","low":0,"high":1},{"name":"b","type":"float","low":0,"high":1},{"name":"c","type":"float","low":0,"high":1}]}`, rows)
	res, err := Footprint(h)
	if err != nil {
		t.Fatal(err)
	}
	r := 1 / math.Sqrt2
	if l := res.Loadings; math.Abs(l[0][0]-r) > 1e-9 || math.Abs(l[1][0]-r) > 1e-9 || math.Abs(l[2][0]) > 1e-9 || math.Abs(res.Explained[0]-1) > 1e-9 {
		t.Fatalf("loadings %v, explained %v: want the diagonal of a and b with all the variance", l, res.Explained)
	}
	for k, p := range res.Trials {
		if want := (float64(k)/11 - 0.5) * math.Sqrt2; math.Abs(p.X-want) > 1e-9 || math.Abs(p.Y) > 1e-9 {
			t.Fatalf("trial %d at (%v, %v), want (%v, 0)", k, p.X, p.Y, want)
		}
	}
	spread := 0.0
	for _, u := range res.Uniform {
		spread = math.Max(spread, math.Abs(u[1]))
	}
	if spread < 0.3 {
		t.Fatalf("uniform configurations reach only %v off the searched line", spread)
	}
}
