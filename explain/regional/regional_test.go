package regional_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"xbo/explain/pdp"
	"xbo/explain/regional"
	"xbo/space"
	"xbo/surrogate"
)

type funcModel struct {
	dim  int
	mean func([]float64) float64
	vari func([]float64) float64
}

func (m funcModel) Dim() int { return m.dim }
func (m funcModel) Predict(x [][]float64, mean, variance []float64) error {
	if err := surrogate.CheckPoints(m.dim, x, mean, variance); err != nil {
		return err
	}
	for i, row := range x {
		mean[i], variance[i] = m.mean(row), m.vari(row)
	}
	return nil
}

func mustSpace(t testing.TB, doc string) *space.Space {
	t.Helper()
	sp, err := space.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

const floatSpace = `{"params":[
	{"name":"a","type":"float","low":0,"high":1},
	{"name":"b","type":"float","low":0,"high":1},
	{"name":"c","type":"float","low":0,"high":1}]}`

// The variance jumps where b crosses 0.3 and is flat in c: the first split
// must be on b near 0.3.
func TestFirstSplitFindsVarianceJump(t *testing.T) {
	sp := mustSpace(t, floatSpace)
	m := funcModel{dim: 3,
		mean: func(x []float64) float64 { return x[0] + x[1] },
		vari: func(x []float64) float64 {
			if x[1] > 0.3 {
				return 4 * (1 + x[0])
			}
			return 1 + x[0]
		},
	}
	ice, err := pdp.NewICE(context.Background(), m, sp, []int{0}, pdp.Options{Samples: 500, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	res, err := regional.Explain(context.Background(), ice, []float64{0.5, 0.1, 0.5}, regional.Options{MaxSplits: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Tree.Split
	if s == nil || s.Param != "b" || math.Abs(*s.Threshold-0.3) > 0.02 {
		t.Fatalf("first split %+v, want b ≤ 0.3", s)
	}
	best := res.Best()
	if best == nil || best.Path[0] != res.Tree.Left.Path[0] || !strings.HasPrefix(best.Path[0], "b ≤ 0.") {
		t.Fatalf("best leaf %+v", best)
	}
	// Within each side the variance curves are identical up to a(…), so the
	// children are pure.
	if res.LeafImpurity > 1e-9*res.RootImpurity {
		t.Errorf("leaf impurity %g of root %g", res.LeafImpurity, res.RootImpurity)
	}
	// The low-variance leaf has the narrower band everywhere.
	lo, hi := res.Leaves[0].PDP, res.Leaves[1].PDP
	for g := range lo.SD {
		if !(lo.SD[g] < hi.SD[g]) {
			t.Errorf("grid %d: left sd %g not below right %g", g, lo.SD[g], hi.SD[g])
		}
	}
}

// The three structural checks of the issue on a messy variance surface, for
// approximate and exact bands: impurity never increases, leaves partition
// the sample, and the global PDP is the size-weighted mean of the leaf PDPs.
func TestTreeInvariants(t *testing.T) {
	sp := mustSpace(t, `{"params":[
		{"name":"a","type":"float","low":0,"high":1},
		{"name":"b","type":"float","low":0.001,"high":10,"log":true},
		{"name":"k","type":"int","low":1,"high":6},
		{"name":"opt","type":"categorical","choices":["sgd","adam","rms","ada"]},
		{"name":"mom","type":"float","low":0,"high":1,"condition":{"parent":"opt","values":["sgd","rms"]}}]}`)
	m := funcModel{dim: 5,
		mean: func(x []float64) float64 { return math.Sin(5*x[0]) + x[1]*x[2] + x[3] },
		vari: func(x []float64) float64 {
			v := 0.2 + math.Pow(x[0]-x[1], 2) + 0.3*x[2] + 0.5*x[3]
			if x[4] == space.Inactive {
				v += 0.7
			} else {
				v += x[4] * x[0]
			}
			return v
		},
	}
	ice, err := pdp.NewICE(context.Background(), m, sp, []int{0}, pdp.Options{Samples: 800, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []regional.Options{{MaxSplits: 6}, {MaxDepth: 3}, {MaxSplits: 20, MinNodeSize: 30}} {
		tree, err := regional.Fit(ice, opts)
		if err != nil {
			t.Fatal(err)
		}
		checkNode(t, tree.Root, opts)
		seen := make([]bool, ice.Len())
		for _, leaf := range tree.Leaves {
			for _, i := range leaf.Members() {
				if seen[i] {
					t.Fatalf("curve %d in two leaves", i)
				}
				seen[i] = true
				// The leaf's rules route the curve's configuration to it.
				got, err := tree.Leaf(ice.Sample[i])
				if err != nil || got != leaf {
					t.Fatalf("curve %d routed to leaf %v, lives in %d", i, got, leaf.ID)
				}
			}
		}
		if slices.Contains(seen, false) {
			t.Fatal("leaves do not cover the sample")
		}
		if opts.MaxSplits > 0 && tree.Splits > opts.MaxSplits {
			t.Errorf("%d splits, bound %d", tree.Splits, opts.MaxSplits)
		}
		if opts.MaxDepth == 3 && tree.Splits < 4 {
			t.Errorf("depth-3 tree made only %d splits", tree.Splits)
		}
	}
	res, err := regional.Explain(context.Background(), ice, nil, regional.Options{MaxSplits: 6})
	if err != nil {
		t.Fatal(err)
	}
	checkWeightedAverage(t, res)
	if res.BestLeaf != -1 {
		t.Errorf("best leaf %d without a best configuration", res.BestLeaf)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"tree":`, `"leaves":`, `"split":`, `"path":`, `"global":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func checkNode(t *testing.T, n *regional.Node, opts regional.Options) {
	t.Helper()
	if n.IsLeaf() {
		if opts.MaxDepth > 0 && n.Depth > opts.MaxDepth {
			t.Errorf("leaf at depth %d beyond %d", n.Depth, opts.MaxDepth)
		}
		if opts.MinNodeSize > 0 && n.Size < opts.MinNodeSize {
			t.Errorf("leaf of %d curves below minimum %d", n.Size, opts.MinNodeSize)
		}
		return
	}
	if n.Left.Size+n.Right.Size != n.Size {
		t.Errorf("node %d: children sizes %d + %d ≠ %d", n.ID, n.Left.Size, n.Right.Size, n.Size)
	}
	if n.Left.Impurity+n.Right.Impurity > n.Impurity*(1+1e-12) {
		t.Errorf("node %d: split raised impurity %g → %g", n.ID, n.Impurity, n.Left.Impurity+n.Right.Impurity)
	}
	checkNode(t, n.Left, opts)
	checkNode(t, n.Right, opts)
}

func checkWeightedAverage(t *testing.T, res *regional.Result) {
	t.Helper()
	G := len(res.Global.Mean)
	mean := make([]float64, G)
	variance := make([]float64, G)
	total := 0
	for _, l := range res.Leaves {
		total += l.Size
		for g := range G {
			mean[g] += float64(l.Size) * l.PDP.Mean[g]
			variance[g] += float64(l.Size) * l.PDP.SD[g] * l.PDP.SD[g]
		}
	}
	if total != res.Global.Samples {
		t.Fatalf("leaf sizes sum to %d, sample has %d", total, res.Global.Samples)
	}
	for g := range G {
		if math.Abs(mean[g]/float64(total)-res.Global.Mean[g]) > 1e-12*(1+math.Abs(res.Global.Mean[g])) {
			t.Errorf("grid %d: weighted leaf mean %.15g, global %.15g", g, mean[g]/float64(total), res.Global.Mean[g])
		}
		// With eq. 5 the band variance is a mean too, so it decomposes alike.
		gv := res.Global.SD[g] * res.Global.SD[g]
		if math.Abs(variance[g]/float64(total)-gv) > 1e-12*(1+gv) {
			t.Errorf("grid %d: weighted leaf variance %.15g, global %.15g", g, variance[g]/float64(total), gv)
		}
	}
}

// The running-sum search must find the same best split as trying every
// threshold of every parameter with eq. 6 computed from scratch.
func TestSplitMatchesBruteForce(t *testing.T) {
	for _, onSD := range []bool{false, true} {
		splitMatchesBruteForce(t, onSD)
	}
}

// splitMatchesBruteForce checks the first split against every cut, on the
// variance curves (eq. 6) or on the sd curves (Options.OnSD).
func splitMatchesBruteForce(t *testing.T, onSD bool) {
	sp := mustSpace(t, floatSpace)
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 1))
		w := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		m := funcModel{dim: 3,
			mean: func(x []float64) float64 { return 0 },
			vari: func(x []float64) float64 {
				return math.Exp(w[0]*x[0]*x[1] + w[1]*math.Sin(4*x[2]) + w[2]*x[1]*x[1])
			},
		}
		ice, err := pdp.NewICE(context.Background(), m, sp, []int{0}, pdp.Options{Samples: 120, GridSize: 6, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		tree, err := regional.Fit(ice, regional.Options{MaxSplits: 1, MinNodeSize: 3, OnSD: onSD})
		if err != nil {
			t.Fatal(err)
		}
		curves := ice.Var
		if onSD {
			curves = make([][]float64, len(ice.Var))
			for i, v := range ice.Var {
				for _, x := range v {
					curves[i] = append(curves[i], math.Sqrt(x))
				}
			}
		}
		bestSum, bestParam := bestCut(ice.Sample, curves, impurity, 3)
		got := tree.Root.Left.Impurity + tree.Root.Right.Impurity
		if math.Abs(got-bestSum) > 1e-9*bestSum || tree.Root.Split.Param != sp.Params[bestParam].Name {
			t.Errorf("on sd %v, seed %d: split on %s with impurity %.12g; brute force %s %.12g", onSD, seed, tree.Root.Split.Param, got, sp.Params[bestParam].Name, bestSum)
		}
	}
}

// bestCut tries every threshold of parameters 1 and 2 with children of at
// least minSize rows and returns the least summed impurity and its parameter.
func bestCut(sample, targets [][]float64, imp func([][]float64, []int) float64, minSize int) (float64, int) {
	bestSum, bestParam := math.Inf(1), -1
	for j := 1; j < 3; j++ {
		for _, cut := range sample {
			var l, r []int
			for i, row := range sample {
				if row[j] <= cut[j] {
					l = append(l, i)
				} else {
					r = append(r, i)
				}
			}
			if len(l) < minSize || len(r) < minSize {
				continue
			}
			if s := imp(targets, l) + imp(targets, r); s < bestSum {
				bestSum, bestParam = s, j
			}
		}
	}
	return bestSum, bestParam
}

// impurity is eq. 6 over the given curves (n × G).
func impurity(curves [][]float64, members []int) float64 {
	r := 0.0
	for g := range curves[0] {
		m := 0.0
		for _, i := range members {
			m += curves[i][g]
		}
		m /= float64(len(members))
		for _, i := range members {
			r += (curves[i][g] - m) * (curves[i][g] - m)
		}
	}
	return r
}

// Categorical splits: exact subset search for few levels, the ordered
// heuristic for many; both must recover a two-group structure.
func TestCategoricalSplits(t *testing.T) {
	for _, k := range []int{4, 14} {
		var choices []string
		for l := range k {
			choices = append(choices, "L"+string(rune('a'+l)))
		}
		js, _ := json.Marshal(choices)
		sp := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},
			{"name":"cat","type":"categorical","choices":`+string(js)+`},
			{"name":"c","type":"float","low":0,"high":1}]}`)
		high := func(level int) bool { return level%3 == 1 } // scattered levels
		m := funcModel{dim: 3,
			mean: func(x []float64) float64 { return 0 },
			vari: func(x []float64) float64 {
				lvl := int(sp.Params[1].FromUnit(x[1]))
				v := 1 + x[0] + 0.05*x[2]
				if high(lvl) {
					v *= 5
				}
				return v
			},
		}
		ice, err := pdp.NewICE(context.Background(), m, sp, []int{0}, pdp.Options{Samples: 1000, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		tree, err := regional.Fit(ice, regional.Options{MaxSplits: 1})
		if err != nil {
			t.Fatal(err)
		}
		s := tree.Root.Split
		if s == nil || s.Param != "cat" || s.Kind != "categorical" {
			t.Fatalf("K=%d: split %+v", k, s)
		}
		left := map[bool]bool{}
		for _, name := range s.LeftLevels {
			left[high(slices.Index(choices, name.(string)))] = true
		}
		if len(left) != 1 || len(s.LeftLevels) == 0 || len(s.LeftLevels) == k {
			t.Errorf("K=%d: left levels %v mix the groups", k, s.LeftLevels)
		}
		if !strings.Contains(tree.Root.Left.Path[0], "∈ {") {
			t.Errorf("K=%d: path %q", k, tree.Root.Left.Path[0])
		}
	}
}

func TestStoppingRules(t *testing.T) {
	sp := mustSpace(t, floatSpace)
	flat := funcModel{dim: 3, mean: func(x []float64) float64 { return 0 }, vari: func(x []float64) float64 { return 2 }}
	ice, err := pdp.NewICE(context.Background(), flat, sp, []int{0}, pdp.Options{Samples: 100})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := regional.Fit(ice, regional.Options{MaxSplits: 5})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Splits != 0 || len(tree.Leaves) != 1 {
		t.Errorf("constant variance was split %d times", tree.Splits)
	}
	smooth := funcModel{dim: 3, mean: func(x []float64) float64 { return 0 },
		vari: func(x []float64) float64 { return 1 + x[1] + 0.01*x[2] }}
	ice, err = pdp.NewICE(context.Background(), smooth, sp, []int{0}, pdp.Options{Samples: 400})
	if err != nil {
		t.Fatal(err)
	}
	// Each split of a linear trend removes 3/4 of a node's impurity, so a
	// 0.8 minimum relative improvement refuses the first split.
	tree, err = regional.Fit(ice, regional.Options{MaxSplits: 5, MinImprovement: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Splits != 0 {
		t.Errorf("min improvement ignored: %d splits", tree.Splits)
	}
	tree, err = regional.Fit(ice, regional.Options{MaxSplits: 5, MinImprovement: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Splits == 0 {
		t.Error("min improvement 0.5 refused a split removing 3/4")
	}
	tree, err = regional.Fit(ice, regional.Options{MaxSplits: 50, MinNodeSize: 150})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Splits != 1 {
		t.Errorf("min node size 150 of 400 allows 1 split, got %d", tree.Splits)
	}
	for _, bad := range []regional.Options{{MaxSplits: -1}, {MinImprovement: 1}, {MinImprovement: math.NaN()}} {
		if _, err := regional.Fit(ice, bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
	if _, err := regional.Fit(nil, regional.Options{}); err == nil {
		t.Error("nil ICE accepted")
	}
}

// Every criterion's fast search must find the split that trying every
// threshold with the impurity computed from scratch finds: the L1 impurity
// around per-grid-point medians, the area impurity on the curves' mean
// heights, the point impurity on the sd (or variance) at the Monte Carlo
// points themselves.
func TestCriteriaMatchBruteForce(t *testing.T) {
	sp := mustSpace(t, floatSpace)
	for _, crit := range []regional.Criterion{regional.CriterionL1, regional.CriterionArea, regional.CriterionPoint} {
		for _, onSD := range []bool{false, true} {
			for seed := range uint64(4) {
				rng := rand.New(rand.NewPCG(seed, 7))
				w := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
				m := funcModel{dim: 3,
					mean: func(x []float64) float64 { return 0 },
					vari: func(x []float64) float64 {
						return math.Exp(w[0]*x[0]*x[1] + w[1]*math.Sin(4*x[2]) + w[2]*x[1]*x[1])
					},
				}
				ice, err := pdp.NewICE(context.Background(), m, sp, []int{0}, pdp.Options{Samples: 90, GridSize: 5, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				tree, err := regional.Fit(ice, regional.Options{MaxSplits: 1, MinNodeSize: 3, OnSD: onSD, Criterion: crit})
				if err != nil {
					t.Fatal(err)
				}
				scale := func(v float64) float64 {
					if onSD {
						return math.Sqrt(v)
					}
					return v
				}
				var targets [][]float64
				for i, v := range ice.Var {
					switch crit {
					case regional.CriterionL1:
						row := make([]float64, len(v))
						for g, x := range v {
							row[g] = scale(x)
						}
						targets = append(targets, row)
					case regional.CriterionArea:
						a := 0.0
						for _, x := range v {
							a += scale(x)
						}
						targets = append(targets, []float64{a / float64(len(v))})
					case regional.CriterionPoint:
						targets = append(targets, []float64{scale(m.vari(ice.Sample[i]))})
					}
				}
				imp := impurity
				if crit == regional.CriterionL1 {
					imp = absImpurity
				}
				bestSum, bestParam := bestCut(ice.Sample, targets, imp, 3)
				all := make([]int, len(targets))
				for i := range all {
					all[i] = i
				}
				if root := imp(targets, all); math.Abs(tree.Root.Impurity-root) > 1e-9*root {
					t.Errorf("%s, on sd %v, seed %d: root impurity %.12g, brute force %.12g", crit, onSD, seed, tree.Root.Impurity, root)
				}
				got := tree.Root.Left.Impurity + tree.Root.Right.Impurity
				if math.Abs(got-bestSum) > 1e-9*bestSum || tree.Root.Split.Param != sp.Params[bestParam].Name {
					t.Errorf("%s, on sd %v, seed %d: split on %s with impurity %.12g; brute force %s %.12g", crit, onSD, seed, tree.Root.Split.Param, got, sp.Params[bestParam].Name, bestSum)
				}
			}
		}
	}
}

// absImpurity is Σ_g Σ_i |v_ig − median_g| over the given rows, by sorting.
func absImpurity(curves [][]float64, members []int) float64 {
	r := 0.0
	for g := range curves[0] {
		var col []float64
		for _, i := range members {
			col = append(col, curves[i][g])
		}
		slices.Sort(col)
		med := col[len(col)/2]
		if len(col)%2 == 0 {
			med = (col[len(col)/2-1] + col[len(col)/2]) / 2
		}
		for _, v := range col {
			r += math.Abs(v - med)
		}
	}
	return r
}

// A hand-computed L1 node: one grid point, curves 1, 2, 4, 10 have median 3
// and Σ|v − 3| = 2 + 1 + 1 + 7 = 11; the L2 impurity of the same node is
// Σ(v − 4.25)² = 10.5625 + 5.0625 + 0.0625 + 33.0625 = 48.75. A constant-variance model keeps the test to the
// arithmetic: the curves are set directly.
func TestL1ImpurityByHand(t *testing.T) {
	sp := mustSpace(t, floatSpace)
	m := funcModel{dim: 3, mean: func([]float64) float64 { return 0 }, vari: func(x []float64) float64 { return 1 }}
	ice, err := pdp.NewICE(context.Background(), m, sp, []int{0}, pdp.Options{Samples: 10, GridSize: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ice.Var = ice.Var[:4]
	ice.Sample, ice.Background = ice.Sample[:4], ice.Background[:4]
	ice.Mean = ice.Mean[:4]
	for i, v := range []float64{1, 2, 4, 10} {
		ice.Var[i] = []float64{v, v}
	}
	for _, c := range []struct {
		crit regional.Criterion
		want float64
	}{{regional.CriterionL1, 2 * 11}, {regional.CriterionL2, 2 * 48.75}, {regional.CriterionArea, 48.75}} {
		tree, err := regional.Fit(ice, regional.Options{MaxSplits: 1, MinNodeSize: 2, Criterion: c.crit})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(tree.Root.Impurity-c.want) > 1e-12 {
			t.Errorf("%s: root impurity %v, want %v", c.crit, tree.Root.Impurity, c.want)
		}
	}
	if _, err := regional.Fit(ice, regional.Options{Criterion: "l3"}); err == nil || !strings.Contains(err.Error(), "l3") {
		t.Errorf("unknown criterion: error %v", err)
	}
}

// The L1 criterion on a categorical parameter tries every subset of levels
// with impurities computed directly; its best split must match trying every
// partition (and every threshold of the numeric parameter) from scratch.
func TestCategoricalL1MatchesBruteForce(t *testing.T) {
	sp := mustSpace(t, `{"params":[{"name":"a","type":"float","low":0,"high":1},
		{"name":"cat","type":"categorical","choices":["p","q","r","s"]},
		{"name":"c","type":"float","low":0,"high":1}]}`)
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 3))
		lv := []float64{rng.Float64(), rng.Float64(), rng.Float64(), rng.Float64()}
		m := funcModel{dim: 3, mean: func([]float64) float64 { return 0 },
			vari: func(x []float64) float64 {
				return math.Exp(2*lv[int(sp.Params[1].FromUnit(x[1]))]*x[0] + 0.7*x[2])
			}}
		ice, err := pdp.NewICE(context.Background(), m, sp, []int{0}, pdp.Options{Samples: 80, GridSize: 4, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		tree, err := regional.Fit(ice, regional.Options{MaxSplits: 1, MinNodeSize: 2, Criterion: regional.CriterionL1})
		if err != nil {
			t.Fatal(err)
		}
		best := math.Inf(1)
		try := func(left func(row []float64) bool) {
			var l, r []int
			for i, row := range ice.Sample {
				if left(row) {
					l = append(l, i)
				} else {
					r = append(r, i)
				}
			}
			if len(l) >= 2 && len(r) >= 2 {
				best = min(best, absImpurity(ice.Var, l)+absImpurity(ice.Var, r))
			}
		}
		for mask := 1; mask < 15; mask++ {
			try(func(row []float64) bool { return mask&(1<<int(sp.Params[1].FromUnit(row[1]))) != 0 })
		}
		for _, cut := range ice.Sample {
			try(func(row []float64) bool { return row[2] <= cut[2] })
		}
		if got := tree.Root.Left.Impurity + tree.Root.Right.Impurity; math.Abs(got-best) > 1e-9*best {
			t.Errorf("seed %d: split %s with impurity %.12g, brute force %.12g", seed, tree.Root.Split.Param, got, best)
		}
	}
}
