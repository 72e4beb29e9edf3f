package pareto

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"xbo/space"
)

var (
	minMin = []space.Direction{space.Minimize, space.Minimize}
	minMax = []space.Direction{space.Minimize, space.Maximize}
)

func TestDominates(t *testing.T) {
	cases := []struct {
		a, b []float64
		dirs []space.Direction
		want bool
	}{
		{[]float64{1, 1}, []float64{2, 2}, minMin, true},
		{[]float64{1, 2}, []float64{1, 2}, minMin, false}, // equal: neither
		{[]float64{1, 2}, []float64{1, 3}, minMin, true},  // equal in one, better in the other
		{[]float64{1, 3}, []float64{2, 2}, minMin, false}, // a trade-off
		{[]float64{1, 3}, []float64{2, 2}, minMax, true},  // 3 is better when maximized
		{[]float64{2, 2}, []float64{1, 3}, minMax, false},
	}
	for _, c := range cases {
		got, err := Dominates(c.a, c.b, c.dirs)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Dominates(%v, %v, %v) = %v, want %v", c.a, c.b, c.dirs, got, c.want)
		}
	}
	for _, bad := range []struct {
		a, b []float64
		dirs []space.Direction
	}{
		{[]float64{1}, []float64{1, 2}, minMin},
		{[]float64{math.NaN(), 1}, []float64{1, 2}, minMin},
		{[]float64{1, 2}, []float64{1, 2}, []space.Direction{"up", space.Minimize}},
		{nil, nil, nil},
	} {
		if _, err := Dominates(bad.a, bad.b, bad.dirs); err == nil {
			t.Errorf("Dominates(%v, %v, %v): no error", bad.a, bad.b, bad.dirs)
		}
	}
}

// bruteFronts peels fronts by the definition: front k is the set of
// remaining vectors that no remaining vector dominates.
func bruteFronts(values [][]float64, dirs []space.Direction) [][]int {
	left := make([]int, len(values))
	for i := range left {
		left[i] = i
	}
	var fronts [][]int
	for len(left) > 0 {
		var front, rest []int
		for _, i := range left {
			dominated := false
			for _, j := range left {
				if d, _ := Dominates(values[j], values[i], dirs); d {
					dominated = true
					break
				}
			}
			if dominated {
				rest = append(rest, i)
			} else {
				front = append(front, i)
			}
		}
		if len(front) == 0 {
			// Only a broken dominance (one that holds both ways) leaves
			// every vector dominated; stop rather than loop.
			return append(fronts, rest)
		}
		fronts = append(fronts, front)
		left = rest
	}
	return fronts
}

// The fast sort gives the fronts of the definition on random sets with
// many ties (values on a coarse lattice), for 2 to 4 objectives and mixed
// directions.
func TestSortMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for rep := range 200 {
		m := 2 + rep%3
		dirs := make([]space.Direction, m)
		for k := range dirs {
			dirs[k] = space.Minimize
			if rng.IntN(2) == 0 {
				dirs[k] = space.Maximize
			}
		}
		values := make([][]float64, 1+rng.IntN(30))
		for i := range values {
			values[i] = make([]float64, m)
			for k := range values[i] {
				values[i][k] = float64(rng.IntN(5))
			}
		}
		got, err := Sort(values, dirs)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteFronts(values, dirs)
		if !slices.EqualFunc(got, want, slices.Equal[[]int]) {
			t.Fatalf("rep %d: fronts %v, want %v (values %v, %v)", rep, got, want, values, dirs)
		}
		front, err := Front(values, dirs)
		if err != nil || !slices.Equal(front, want[0]) {
			t.Fatalf("rep %d: Front %v (%v), want %v", rep, front, err, want[0])
		}
	}
}

// Feasible vectors come first by Pareto fronts; the infeasible follow by
// total violation, whatever their objectives.
func TestConstrainedSort(t *testing.T) {
	values := [][]float64{{1, 1}, {0, 0}, {2, 2}, {0.5, 3}, {3, 0.5}, {5, 5}}
	violation := []float64{0.5, 2, 0, 0, 0, 0.5}
	got, err := ConstrainedSort(values, violation, minMin)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{2, 3, 4}, {0, 5}, {1}}
	if !slices.EqualFunc(got, want, slices.Equal[[]int]) {
		t.Errorf("fronts %v, want %v", got, want)
	}
	if _, err := ConstrainedSort(values, violation[:2], minMin); err == nil {
		t.Error("violations of the wrong length accepted")
	}
	if _, err := ConstrainedSort(values, []float64{0, 0, 0, 0, 0, -1}, minMin); err == nil {
		t.Error("a negative violation accepted")
	}
	if v := Violation([]float64{-1, 0, 0.25, 2}); v != 2.25 {
		t.Errorf("Violation = %v, want 2.25", v)
	}
	if v := Violation([]float64{-1, math.NaN()}); !math.IsInf(v, 1) {
		t.Errorf("Violation with NaN = %v, want +Inf", v)
	}
	if v := Violation(nil); v != 0 {
		t.Errorf("Violation of no constraints = %v", v)
	}
}

// inclusionExclusion is the exact hypervolume of few minimized vectors by
// inclusion–exclusion over every non-empty subset: the boxes [p, ref]
// intersect in [max_i p_i, ref].
func inclusionExclusion(values [][]float64, ref []float64) float64 {
	var pts [][]float64
	for _, v := range values {
		ok := true
		for k := range v {
			ok = ok && v[k] < ref[k]
		}
		if ok {
			pts = append(pts, v)
		}
	}
	total := 0.0
	for mask := 1; mask < 1<<len(pts); mask++ {
		corner := make([]float64, len(ref))
		for k := range corner {
			corner[k] = math.Inf(-1)
		}
		bits := 0
		for i, p := range pts {
			if mask&(1<<i) == 0 {
				continue
			}
			bits++
			for k := range corner {
				corner[k] = math.Max(corner[k], p[k])
			}
		}
		vol := 1.0
		for k := range corner {
			vol *= ref[k] - corner[k]
		}
		if bits%2 == 1 {
			total += vol
		} else {
			total -= vol
		}
	}
	return total
}

// Hypervolume equals inclusion–exclusion over all subsets for 1 to 4
// objectives and up to 10 vectors (some outside the reference point, some
// dominated, some tied), to rounding.
func TestHypervolumeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for rep := range 300 {
		m := 1 + rep%4
		dirs := make([]space.Direction, m)
		ref := make([]float64, m)
		for k := range dirs {
			dirs[k] = space.Minimize
			ref[k] = 1
		}
		values := make([][]float64, rng.IntN(11))
		for i := range values {
			values[i] = make([]float64, m)
			for k := range values[i] {
				values[i][k] = math.Round(rng.Float64()*12)/10 - 0.05 // some beyond ref = 1, many ties
			}
		}
		got, err := Hypervolume(values, ref, dirs)
		if err != nil {
			t.Fatal(err)
		}
		want := inclusionExclusion(values, ref)
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Fatalf("rep %d (m = %d): hypervolume %v, want %v; values %v", rep, m, got, want, values)
		}
	}
}

// Known values: a 2-D staircase by hand, a maximized objective as the
// mirror of a minimized one, and the 3-D front of a unit sphere's octant
// sampled densely, whose hypervolume with ref (1,1,1) tends to 1 − π/6.
func TestHypervolumeKnown(t *testing.T) {
	// (1,3), (2,2), (3,1) with ref (4,4): 3·1 + 2·1 + 1·1 = 6.
	hv, err := Hypervolume([][]float64{{1, 3}, {2, 2}, {3, 1}}, []float64{4, 4}, minMin)
	if err != nil || hv != 6 {
		t.Errorf("staircase: %v (%v), want 6", hv, err)
	}
	mirrored, err := Hypervolume([][]float64{{1, -3}, {2, -2}, {3, -1}}, []float64{4, -4}, minMax)
	if err != nil || mirrored != 6 {
		t.Errorf("staircase with the second objective maximized: %v (%v), want 6", mirrored, err)
	}
	empty, err := Hypervolume(nil, []float64{1, 1}, minMin)
	if err != nil || empty != 0 {
		t.Errorf("no vectors: %v (%v)", empty, err)
	}
	// The octant: vectors on the unit sphere dominate, up to (1,1,1),
	// the unit cube minus the ball's octant as the grid is refined.
	var sphere [][]float64
	const steps = 60
	for i := 0; i <= steps; i++ {
		for j := 0; j <= steps; j++ {
			th, ph := math.Pi/2*float64(i)/steps, math.Pi/2*float64(j)/steps
			sphere = append(sphere, []float64{math.Sin(th) * math.Cos(ph), math.Sin(th) * math.Sin(ph), math.Cos(th)})
		}
	}
	dirs3 := []space.Direction{space.Minimize, space.Minimize, space.Minimize}
	hv3, err := Hypervolume(sphere, []float64{1, 1, 1}, dirs3)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 - math.Pi/6; hv3 > want || hv3 < want-0.02 {
		t.Errorf("sphere octant: %v, want just below %v", hv3, want)
	}
}

// Each exclusive contribution equals the hypervolume lost without the
// vector, computed by inclusion–exclusion; dominated and duplicated
// vectors contribute 0.
func TestContributions(t *testing.T) {
	values := [][]float64{{0.1, 0.8, 0.5}, {0.5, 0.5, 0.5}, {0.8, 0.1, 0.4}, {0.6, 0.6, 0.6}, {0.8, 0.1, 0.4}, {0.3, 0.3, 0.9}}
	ref := []float64{1, 1, 1}
	dirs := []space.Direction{space.Minimize, space.Minimize, space.Minimize}
	got, err := Contributions(values, ref, dirs)
	if err != nil {
		t.Fatal(err)
	}
	all := inclusionExclusion(values, ref)
	for i := range values {
		rest := slices.Concat(values[:i], values[i+1:])
		want := all - inclusionExclusion(rest, ref)
		if math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("vector %d: contribution %v, want %v", i, got[i], want)
		}
	}
	if got[3] != 0 || got[2] != 0 || got[4] != 0 {
		t.Errorf("dominated (3) or duplicated (2, 4) vectors contribute %v, %v, %v", got[3], got[2], got[4])
	}
	if got[0] <= 0 || got[1] <= 0 || got[5] <= 0 {
		t.Errorf("front vectors contribute %v", got)
	}
}

func TestHypervolumeInputs(t *testing.T) {
	for _, c := range []struct {
		values [][]float64
		ref    []float64
		dirs   []space.Direction
	}{
		{[][]float64{{1, 2}}, []float64{3}, minMin},
		{[][]float64{{1, 2}}, []float64{3, math.Inf(1)}, minMin},
		{[][]float64{{1, math.NaN()}}, []float64{3, 3}, minMin},
		{[][]float64{{1, 2, 3}}, []float64{3, 3}, minMin},
		{[][]float64{make([]float64, MaxObjectives+1)}, make([]float64, MaxObjectives+1), make([]space.Direction, MaxObjectives+1)},
	} {
		if _, err := Hypervolume(c.values, c.ref, c.dirs); err == nil {
			t.Errorf("Hypervolume(%v, %v, %v): no error", c.values, c.ref, c.dirs)
		}
	}
	dirs := slices.Repeat([]space.Direction{space.Minimize}, MaxObjectives+1)
	if _, err := Hypervolume([][]float64{make([]float64, MaxObjectives+1)}, slices.Repeat([]float64{1}, MaxObjectives+1), dirs); err == nil {
		t.Errorf("%d objectives accepted", MaxObjectives+1)
	}
}

// BenchmarkHypervolume: a random 3- and 4-objective front of 200 vectors
// (all non-dominated: on the simplex), the size of a long study's front.
func BenchmarkHypervolume(b *testing.B) {
	for _, m := range []int{3, 4} {
		rng := rand.New(rand.NewPCG(5, 6))
		values := make([][]float64, 200)
		for i := range values {
			values[i] = make([]float64, m)
			sum := 0.0
			for k := range values[i] {
				values[i][k] = rng.ExpFloat64()
				sum += values[i][k]
			}
			for k := range values[i] {
				values[i][k] /= sum
			}
		}
		ref := slices.Repeat([]float64{1.1}, m)
		dirs := slices.Repeat([]space.Direction{space.Minimize}, m)
		b.Run(fmt.Sprintf("m=%d/n=200", m), func(b *testing.B) {
			for b.Loop() {
				if _, err := Hypervolume(values, ref, dirs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFront3 is the first front of 20,000 random vectors of three
// objectives, the size of a long study's best_trials request.
func BenchmarkFront3(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	values := make([][]float64, 20000)
	for i := range values {
		values[i] = []float64{rng.Float64(), rng.Float64(), rng.Float64()}
	}
	dirs := []space.Direction{space.Minimize, space.Minimize, space.Minimize}
	for b.Loop() {
		if _, err := Front(values, dirs); err != nil {
			b.Fatal(err)
		}
	}
}

// ReferencePoint moves each objective's worst value a tenth of the range
// further in the worse direction, a tenth of its magnitude (or 1 at 0)
// when every vector shares it, and gives nil for no vectors.
func TestReferencePoint(t *testing.T) {
	dirs := []space.Direction{space.Minimize, space.Maximize, space.Minimize}
	got := ReferencePoint([][]float64{{1, 10, 5}, {3, 20, 5}}, dirs)
	want := []float64{3.2, 9, 5.5}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-12 {
			t.Errorf("objective %d: %v, want %v", k, got[k], want[k])
		}
	}
	if got := ReferencePoint([][]float64{{0, 0, 0}}, dirs); got[0] != 1 || got[1] != -1 || got[2] != 1 {
		t.Errorf("all zero: %v, want [1 -1 1]", got)
	}
	if ReferencePoint(nil, dirs) != nil {
		t.Error("no vectors: a reference point")
	}
}
