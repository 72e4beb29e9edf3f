// Package regional finds sub-regions of a search space in which a partial
// dependence plot is more confident, by the confidence splitting of Moosbauer
// et al. 2021, "Explaining Hyperparameter Optimization via Partial Dependence
// Plots" (section 5, Algorithm 1, eq. 6).
//
// A node is a set N' of ICE curves (Monte Carlo points λ_C^i). Its impurity is
//
//	R(N') = Σ_g Σ_{i∈N'} (ŝ²(λ_S^g, λ_C^i) − ŝ²_{S|N'}(λ_S^g))²,
//
// the spread of the ICE curves of the posterior variance around their mean.
// A split sends λ_j ≤ t left (numeric j ∈ C) or λ_j ∈ L left (categorical j),
// and the best split minimizes R(left) + R(right). Because
// R(N') = Σ_g (Σ_i v_ig² − (Σ_i v_ig)²/|N'|), prefix sums over the points
// sorted by λ_j give every threshold's impurity in O(G), so a node costs
// O(n log n + G·n) per parameter. Categorical parameters try every subset
// of levels when there are few, and otherwise order the levels by their mean
// variance and scan that order (the CART heuristic; exact for Fisher's L2
// grouping of one-dimensional targets, a heuristic for G-dimensional ones).
//
// Other impurities (Options.Criterion), after the authors' public code
// (github.com/slds-lmu/paper_2021_xautoml, R/tree_splitting.R), which offers
// them beside eq. 6 (its SS_L2) for the comparison of impurity measures in the
// paper's appendix:
//
//   - area (SS_area): Σ_{i∈N'} (a_i − ā)², a_i = (1/G)·Σ_g v_ig the mean height
//     of curve i and ā their mean over N', eq. 6 on one "grid point";
//   - point (SS_sd): Σ_{i∈N'} (s_i − s̄)², s_i the posterior sd (variance
//     without OnSD) at the Monte Carlo point λ^(i) itself, not on the grid;
//   - l1: Σ_g Σ_{i∈N'} |v_ig − med_g(N')|, the L1 analogue of eq. 6 around
//     the per-grid-point median. The authors' SS_L1 computes
//     min_{i,g} (v_ig − v̄_g)², a minimum of squares rather than an L1 loss; we
//     take the name at its word, with the median because it minimizes the L1
//     loss, so that a split never raises the impurity as it can around the
//     mean. Running medians (two heaps per grid point) give every threshold's
//     impurity in O(G·n log n) per parameter.
//
// area and point are eq. 6 on one-column curves and use the same prefix sums.
//
// The tree grows CART-like, best split first, until the stopping rules hold:
// maximum depth, maximum number of splits, minimum node size and minimum
// relative improvement. Each leaf gets the regional PDP of its ICE curves
// with a band (package explain/pdp); the leaf holding the best observed
// configuration is the region a user of HPO cares about most.
package regional

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"xbo/explain/pdp"
	"xbo/space"
)

// DefaultMaxSplits is used when neither MaxSplits nor MaxDepth is set.
const DefaultMaxSplits = 3

// DefaultMaxExactLevels bounds the categorical parameters whose level subsets
// are enumerated (2^(K−1)−1 candidate splits).
const DefaultMaxExactLevels = 10

// Options are the stopping rules. The zero value makes 3 splits with leaves
// of at least 1% of the sample (and at least 5 curves).
type Options struct {
	// MaxSplits bounds the number of splits (leaves − 1). Zero means no bound
	// when MaxDepth is set, and DefaultMaxSplits otherwise.
	MaxSplits int
	// MaxDepth bounds the depth of a leaf (the root has depth 0); zero means
	// no bound. With MaxSplits zero, MaxDepth = k grows every node down to
	// depth k, the "n_sp = k" of the paper's tables.
	MaxDepth int
	// MinNodeSize is the smallest number of ICE curves in a child.
	MinNodeSize int
	// MinImprovement is the smallest relative impurity reduction
	// (R(N) − R(left) − R(right))/R(N) for which a node is split.
	MinImprovement float64
	// MaxExactLevels: categoricals with more levels use the ordered heuristic.
	MaxExactLevels int
	// OnSD computes eq. 6 on the ICE curves of the posterior standard
	// deviation instead of the variance. Eq. 6 is written with ŝ², but the
	// authors' code (github.com/slds-lmu/paper_2021_xautoml,
	// benchmarks/helper_experiments.R and R/tree_splitting.R: compute_tree
	// with objective "SS_L2" on the "pdp+ice" effect of getPredictionSE)
	// splits the sd curves; `xbo bench pdp-split --preset moosbauer2021` does as
	// they did.
	OnSD bool
	// Criterion is the impurity of a node: CriterionL2 (eq. 6, the default),
	// CriterionL1, CriterionArea or CriterionPoint (see the package doc).
	Criterion Criterion
}

// Criterion names a node impurity.
type Criterion string

// The impurities a tree can be grown with; the authors' names are SS_L2,
// SS_L1, SS_area and SS_sd.
const (
	CriterionL2    Criterion = "l2"
	CriterionL1    Criterion = "l1"
	CriterionArea  Criterion = "area"
	CriterionPoint Criterion = "point"
)

// Criteria lists the valid criteria, the default first.
var Criteria = []Criterion{CriterionL2, CriterionL1, CriterionArea, CriterionPoint}

// ParseCriterion returns the criterion of a name, CriterionL2 for an empty
// one, and an error naming the valid ones for any other.
func ParseCriterion(name string) (Criterion, error) {
	if name == "" {
		return CriterionL2, nil
	}
	if c := Criterion(name); slices.Contains(Criteria, c) {
		return c, nil
	}
	return "", fmt.Errorf("unknown split criterion %q (want l2, l1, area or point)", name)
}

func (o Options) withDefaults(n int) (Options, error) {
	if o.MaxSplits < 0 || o.MaxDepth < 0 || o.MinNodeSize < 0 || o.MaxExactLevels < 0 {
		return o, errors.New("stopping rules must not be negative")
	}
	if math.IsNaN(o.MinImprovement) || o.MinImprovement < 0 || o.MinImprovement >= 1 {
		return o, fmt.Errorf("minimum relative improvement %v must lie in [0, 1)", o.MinImprovement)
	}
	c, err := ParseCriterion(string(o.Criterion))
	if err != nil {
		return o, err
	}
	o.Criterion = c
	if o.MaxSplits == 0 && o.MaxDepth == 0 {
		o.MaxSplits = DefaultMaxSplits
	}
	if o.MaxSplits == 0 {
		o.MaxSplits = math.MaxInt
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = math.MaxInt
	}
	if o.MinNodeSize == 0 {
		o.MinNodeSize = max(5, n/100)
	}
	if o.MaxExactLevels == 0 {
		o.MaxExactLevels = DefaultMaxExactLevels
	}
	return o, nil
}

// Split is the rule of an inner node: a point goes left when its value of
// Param is at most Threshold (numeric) or one of LeftLevels (categorical).
// InactiveLeft says where configurations go in which Param is switched off.
// Levels absent from the node's sample (possible in deep, small nodes) go
// right, as does anything not listed on the left.
type Split struct {
	Param        string   `json:"param"`
	Kind         string   `json:"kind"`                   // "numeric" or "categorical"
	Threshold    *float64 `json:"threshold,omitempty"`    // natural value, numeric splits
	LeftLevels   []any    `json:"left_levels,omitempty"`  // categorical splits: choices, typed as in the space
	RightLevels  []any    `json:"right_levels,omitempty"` // the node's other levels
	InactiveLeft bool     `json:"inactive_left,omitempty"`
	// InactiveRight says that configurations with Param switched off were
	// in the node and went right (categorical splits).
	InactiveRight bool `json:"inactive_right,omitempty"`

	index      int     // parameter index
	thresholdU float64 // unit-encoded threshold, numeric splits
	leftKeys   []int   // categorical level indices going left (−1 = inactive)
}

// Left reports whether the unit-encoded configuration u goes left.
func (s *Split) Left(sp *space.Space, u []float64) bool {
	v := u[s.index]
	if s.Kind == "numeric" {
		return v <= s.thresholdU
	}
	return slices.Contains(s.leftKeys, levelKey(sp, s.index, v))
}

// levelKey maps a categorical coordinate to its level index, −1 if inactive.
func levelKey(sp *space.Space, j int, v float64) int {
	if v == space.Inactive {
		return -1
	}
	return int(sp.Params[j].FromUnit(v))
}

// Describe renders one side of the split for a path: "lr ≤ 0.01",
// "optimizer ∈ {adam, sgd}".
func (s *Split) Describe(left bool) string {
	if s.Kind == "numeric" {
		if s.Threshold == nil {
			if left {
				return s.Param + " inactive"
			}
			return s.Param + " active"
		}
		t := strconv.FormatFloat(*s.Threshold, 'g', 4, 64)
		switch {
		case left:
			if s.InactiveLeft {
				return s.Param + " ≤ " + t + " or inactive"
			}
			return s.Param + " ≤ " + t
		default:
			return s.Param + " > " + t
		}
	}
	levels, inactive := s.LeftLevels, s.InactiveLeft
	if !left {
		levels, inactive = s.RightLevels, s.InactiveRight
	}
	names := make([]string, 0, len(levels)+1)
	for _, l := range levels {
		names = append(names, space.ChoiceLabel(l))
	}
	if inactive {
		if len(names) == 0 {
			return s.Param + " inactive"
		}
		names = append(names, "inactive")
	}
	return s.Param + " ∈ {" + strings.Join(names, ", ") + "}"
}

// Node is a node of the tree. Leaves have no Split.
type Node struct {
	ID       int      `json:"id"`
	Depth    int      `json:"depth"`
	Size     int      `json:"size"`
	Impurity float64  `json:"impurity"`
	Path     []string `json:"path"` // the split conditions from the root
	Split    *Split   `json:"split,omitempty"`
	Left     *Node    `json:"left,omitempty"`
	Right    *Node    `json:"right,omitempty"`

	members []int
}

// Members lists the ICE curves (Monte Carlo indices) of the node.
func (n *Node) Members() []int { return slices.Clone(n.members) }

// IsLeaf tells whether the node has no split.
func (n *Node) IsLeaf() bool { return n.Split == nil }

// Tree is a fitted confidence-splitting tree.
type Tree struct {
	Root   *Node
	Leaves []*Node // in ID order
	Splits int
	space  *space.Space
	params []int
}

// Leaf returns the leaf into which the unit-encoded configuration u falls.
func (t *Tree) Leaf(u []float64) (*Node, error) {
	if len(u) != t.space.Dim() {
		return nil, fmt.Errorf("regional: configuration has %d coordinates, want %d", len(u), t.space.Dim())
	}
	n := t.Root
	for !n.IsLeaf() {
		if n.Split.Left(t.space, u) {
			n = n.Left
		} else {
			n = n.Right
		}
	}
	return n, nil
}

// Fit grows the confidence-splitting tree on the ICE curves of the posterior
// variance (or what Options.OnSD and Options.Criterion choose), splitting on
// the parameters not in S.
func Fit(ice *pdp.ICE, opts Options) (*Tree, error) {
	if ice == nil || ice.Len() == 0 {
		return nil, errors.New("regional: no ICE curves")
	}
	if ice.Var == nil {
		return nil, errors.New("regional: the ICE curves have no variances (build them with pdp.Options.KeepVariance when bands are exact)")
	}
	if len(ice.Var) != ice.Len() || len(ice.Sample) != ice.Len() {
		return nil, errors.New("regional: ICE curves and sample differ in length")
	}
	opts, err := opts.withDefaults(ice.Len())
	if err != nil {
		return nil, fmt.Errorf("regional: %w", err)
	}
	curves, err := splitTargets(ice, opts)
	if err != nil {
		return nil, fmt.Errorf("regional: %w", err)
	}
	b := &builder{ice: ice, sp: ice.Space, opts: opts, G: len(curves[0]), curves: curves}
	for j := range ice.Space.Dim() {
		if !slices.Contains(ice.Params, j) {
			b.candidates = append(b.candidates, j)
		}
	}
	all := make([]int, ice.Len())
	for i := range all {
		all[i] = i
	}
	root := &Node{Size: len(all), members: all, Path: []string{}}
	root.Impurity = b.impurity(all)
	t := &Tree{Root: root, space: ice.Space, params: slices.Clone(ice.Params)}

	// Best-first growth: always split the open node whose best split reduces
	// the impurity most, so a bound on the number of splits keeps the most
	// useful ones.
	open := &queue{}
	if c, ok := b.bestSplit(root); ok {
		heap.Push(open, c)
	}
	for open.Len() > 0 && t.Splits < opts.MaxSplits {
		c := heap.Pop(open).(candidate)
		n := c.node
		n.Split = c.split
		n.Left = &Node{Depth: n.Depth + 1, members: c.left, Size: len(c.left), Impurity: c.leftImp,
			Path: append(slices.Clone(n.Path), c.split.Describe(true))}
		n.Right = &Node{Depth: n.Depth + 1, members: c.right, Size: len(c.right), Impurity: c.rightImp,
			Path: append(slices.Clone(n.Path), c.split.Describe(false))}
		t.Splits++
		for _, child := range []*Node{n.Left, n.Right} {
			if cc, ok := b.bestSplit(child); ok {
				heap.Push(open, cc)
			}
		}
	}
	// Number nodes breadth-first so IDs read top-down, left to right.
	id := 0
	level := []*Node{root}
	for len(level) > 0 {
		var next []*Node
		for _, n := range level {
			n.ID = id
			id++
			if n.IsLeaf() {
				t.Leaves = append(t.Leaves, n)
			} else {
				next = append(next, n.Left, n.Right)
			}
		}
		level = next
	}
	return t, nil
}

// splitTargets are the rows the impurity is computed on: the ICE curves of
// the variance or sd, their mean heights (area), or the variance or sd at
// the Monte Carlo points themselves (point).
func splitTargets(ice *pdp.ICE, opts Options) ([][]float64, error) {
	scale := func(v float64) float64 {
		if opts.OnSD {
			return math.Sqrt(v)
		}
		return v
	}
	out := make([][]float64, ice.Len())
	switch opts.Criterion {
	case CriterionPoint:
		model := ice.Model()
		if model == nil {
			return nil, errors.New("the point criterion needs the ICE curves' model")
		}
		mean, variance := make([]float64, ice.Len()), make([]float64, ice.Len())
		if err := model.Predict(ice.Sample, mean, variance); err != nil {
			return nil, fmt.Errorf("point criterion: predicting at the Monte Carlo points: %w", err)
		}
		for i, v := range variance {
			out[i] = []float64{scale(v)}
		}
	case CriterionArea:
		for i, v := range ice.Var {
			a := 0.0
			for _, x := range v {
				a += scale(x)
			}
			out[i] = []float64{a / float64(len(v))}
		}
	default:
		for i, v := range ice.Var {
			out[i] = make([]float64, len(v))
			for g, x := range v {
				out[i][g] = scale(x)
			}
		}
	}
	return out, nil
}

type builder struct {
	ice *pdp.ICE
	// curves are what the impurity is computed on (splitTargets), n rows of
	// G columns.
	curves     [][]float64
	sp         *space.Space
	opts       Options
	G          int
	candidates []int
}

// impurity is the criterion computed directly: eq. 6 in two passes for
// numerical stability, or the L1 impurity around the medians.
func (b *builder) impurity(members []int) float64 {
	if len(members) == 0 {
		return 0
	}
	if b.opts.Criterion == CriterionL1 {
		return b.absImpurity(members)
	}
	r := 0.0
	for g := range b.G {
		m := 0.0
		for _, i := range members {
			m += b.curves[i][g]
		}
		m /= float64(len(members))
		for _, i := range members {
			d := b.curves[i][g] - m
			r += d * d
		}
	}
	return r
}

// absImpurity is Σ_g Σ_i |v_ig − med_g| over the members.
func (b *builder) absImpurity(members []int) float64 {
	col := make([]float64, len(members))
	r := 0.0
	for g := range b.G {
		for k, i := range members {
			col[k] = b.curves[i][g]
		}
		slices.Sort(col)
		med := col[len(col)/2]
		if len(col)%2 == 0 {
			med = (col[len(col)/2-1] + med) / 2
		}
		for _, v := range col {
			r += math.Abs(v - med)
		}
	}
	return r
}

// runningL1 is Σ|v − median| of a growing set of numbers: the lower half in a
// max-heap, the upper half in a min-heap, and the sum of each half. With the
// lower half holding the median m (it is never smaller than the upper),
// Σ|v − m| = (Σ upper − m·|upper|) + (m·|lower| − Σ lower).
type runningL1 struct {
	lower, upper    floatHeap // lower stores negated values
	sumLower, sumHi float64
}

func (r *runningL1) add(v float64) {
	if r.lower.Len() == 0 || v <= -r.lower[0] {
		heap.Push(&r.lower, -v)
		r.sumLower += v
	} else {
		heap.Push(&r.upper, v)
		r.sumHi += v
	}
	switch {
	case r.lower.Len() > r.upper.Len()+1:
		x := -heap.Pop(&r.lower).(float64)
		r.sumLower -= x
		heap.Push(&r.upper, x)
		r.sumHi += x
	case r.upper.Len() > r.lower.Len():
		x := heap.Pop(&r.upper).(float64)
		r.sumHi -= x
		heap.Push(&r.lower, -x)
		r.sumLower += x
	}
}

func (r *runningL1) value() float64 {
	if r.lower.Len() == 0 {
		return 0
	}
	m := -r.lower[0]
	return math.Max(0, r.sumHi-m*float64(r.upper.Len())+m*float64(r.lower.Len())-r.sumLower)
}

type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(a, b int) bool { return h[a] < h[b] }
func (h floatHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *floatHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// prefixL1 gives, for the members taken in the given order, the L1 impurity
// of the first k+1 (left[k]) and of the rest after them (right[k]).
func (b *builder) prefixL1(members []int, order []int) (left, right []float64) {
	m := len(order)
	left, right = make([]float64, m), make([]float64, m)
	for g := range b.G {
		var fw, bw runningL1
		for pos := range m {
			fw.add(b.curves[members[order[pos]]][g])
			left[pos] += fw.value()
		}
		for pos := m - 1; pos > 0; pos-- {
			bw.add(b.curves[members[order[pos]]][g])
			right[pos-1] += bw.value()
		}
	}
	return left, right
}

type candidate struct {
	node              *Node
	split             *Split
	left, right       []int
	leftImp, rightImp float64
	gain              float64
}

// bestSplit searches every parameter in C for the split of n with the least
// summed child impurity, and reports false when the stopping rules forbid one.
func (b *builder) bestSplit(n *Node) (candidate, bool) {
	if n.Depth >= b.opts.MaxDepth || len(n.members) < 2*b.opts.MinNodeSize || n.Impurity <= 0 {
		return candidate{}, false
	}
	// Centre the curves on the node's mean per grid point: the impurity is
	// shift-invariant, and the prefix sums then do not cancel catastrophically.
	m := len(n.members)
	centred := make([][]float64, m)
	nodeMean := make([]float64, b.G)
	for _, i := range n.members {
		for g := range b.G {
			nodeMean[g] += b.curves[i][g]
		}
	}
	for g := range nodeMean {
		nodeMean[g] /= float64(m)
	}
	sq := make([]float64, m) // Σ_g v'_ig² per curve
	for k, i := range n.members {
		row := make([]float64, b.G)
		for g := range b.G {
			row[g] = b.curves[i][g] - nodeMean[g]
			sq[k] += row[g] * row[g]
		}
		centred[k] = row
	}
	best := candidate{gain: math.Inf(-1)}
	found := false
	for _, j := range b.candidates {
		var (
			s      *Split
			leftK  []int // positions into n.members
			lI, rI float64
			ok     bool
		)
		if b.sp.Params[j].Type == space.Categorical {
			s, leftK, lI, rI, ok = b.categoricalSplit(n, j, centred, sq)
		} else {
			s, leftK, lI, rI, ok = b.numericSplit(n, j, centred, sq)
		}
		if !ok {
			continue
		}
		gain := n.Impurity - lI - rI
		if gain > best.gain {
			found = true
			best = candidate{node: n, split: s, leftImp: lI, rightImp: rI, gain: gain}
			inLeft := make([]bool, m)
			for _, k := range leftK {
				inLeft[k] = true
			}
			best.left, best.right = nil, nil
			for k, i := range n.members {
				if inLeft[k] {
					best.left = append(best.left, i)
				} else {
					best.right = append(best.right, i)
				}
			}
		}
	}
	if !found || best.gain <= 0 || best.gain < b.opts.MinImprovement*n.Impurity {
		return candidate{}, false
	}
	// Recompute the children's impurity directly so reported values carry no
	// prefix-sum rounding.
	best.leftImp, best.rightImp = b.impurity(best.left), b.impurity(best.right)
	best.gain = n.Impurity - best.leftImp - best.rightImp
	return best, true
}

// sideImpurity is Σ v² − ‖Σ v‖²/count from running sums.
func sideImpurity(sumSq float64, sum []float64, count int) float64 {
	if count == 0 {
		return 0
	}
	s := 0.0
	for _, v := range sum {
		s += v * v
	}
	return math.Max(sumSq-s/float64(count), 0)
}

func (b *builder) numericSplit(n *Node, j int, centred [][]float64, sq []float64) (*Split, []int, float64, float64, bool) {
	m := len(n.members)
	x := make([]float64, m)
	for k, i := range n.members {
		x[k] = b.ice.Sample[i][j]
	}
	order := make([]int, m)
	for k := range order {
		order[k] = k
	}
	sort.Slice(order, func(a, c int) bool { return x[order[a]] < x[order[c]] })
	if x[order[0]] == x[order[m-1]] {
		return nil, nil, 0, 0, false
	}
	total := make([]float64, b.G)
	totalSq := 0.0
	for k := range m {
		for g := range b.G {
			total[g] += centred[k][g]
		}
		totalSq += sq[k]
	}
	var leftL1, rightL1 []float64
	if b.opts.Criterion == CriterionL1 {
		leftL1, rightL1 = b.prefixL1(n.members, order)
	}
	left := make([]float64, b.G)
	right := make([]float64, b.G)
	leftSq := 0.0
	bestPos, bestSum := -1, math.Inf(1)
	var bestL, bestR float64
	minSize := b.opts.MinNodeSize
	for pos := 0; pos < m-1; pos++ {
		k := order[pos]
		for g := range b.G {
			left[g] += centred[k][g]
		}
		leftSq += sq[k]
		nl := pos + 1
		if nl < minSize || m-nl < minSize || x[order[pos]] == x[order[pos+1]] {
			continue
		}
		var l, r float64
		if leftL1 != nil {
			l, r = leftL1[pos], rightL1[pos]
		} else {
			for g := range b.G {
				right[g] = total[g] - left[g]
			}
			l = sideImpurity(leftSq, left, nl)
			r = sideImpurity(totalSq-leftSq, right, m-nl)
		}
		if l+r < bestSum {
			bestPos, bestSum, bestL, bestR = pos, l+r, l, r
		}
	}
	if bestPos < 0 {
		return nil, nil, 0, 0, false
	}
	lo, hi := x[order[bestPos]], x[order[bestPos+1]]
	p := &b.sp.Params[j]
	s := &Split{Param: p.Name, Kind: "numeric", index: j, InactiveLeft: x[order[0]] == space.Inactive}
	if lo == space.Inactive {
		// Only the switched-off configurations go left: a threshold between
		// Inactive (−1) and the cube, and no natural value to show.
		s.thresholdU = -0.5
		return s, order[:bestPos+1], bestL, bestR, true
	}
	s.thresholdU = (lo + hi) / 2
	natural := p.FromUnit(s.thresholdU)
	if p.Cardinality() > 0 {
		natural = p.FromUnit(lo) // left holds the grid values up to this one
	}
	s.Threshold = &natural
	return s, order[:bestPos+1], bestL, bestR, true
}

// levelStats are the running sums of one categorical level (or "inactive").
type levelStats struct {
	key   int
	count int
	sumSq float64
	sum   []float64
	mean  float64 // mean centred variance, for the ordered heuristic
	pos   []int   // positions into the node's members
}

func (b *builder) categoricalSplit(n *Node, j int, centred [][]float64, sq []float64) (*Split, []int, float64, float64, bool) {
	byKey := map[int]*levelStats{}
	for k, i := range n.members {
		key := levelKey(b.sp, j, b.ice.Sample[i][j])
		st := byKey[key]
		if st == nil {
			st = &levelStats{key: key, sum: make([]float64, b.G)}
			byKey[key] = st
		}
		st.count++
		st.sumSq += sq[k]
		for g := range b.G {
			st.sum[g] += centred[k][g]
		}
		st.pos = append(st.pos, k)
	}
	if len(byKey) < 2 {
		return nil, nil, 0, 0, false
	}
	levels := make([]*levelStats, 0, len(byKey))
	for _, st := range byKey {
		for _, v := range st.sum {
			st.mean += v
		}
		st.mean /= float64(st.count * b.G)
		levels = append(levels, st)
	}
	sort.Slice(levels, func(a, c int) bool { return levels[a].key < levels[c].key })
	K := len(levels)
	total := make([]float64, b.G)
	totalSq, m := 0.0, len(n.members)
	for _, st := range levels {
		totalSq += st.sumSq
		for g := range b.G {
			total[g] += st.sum[g]
		}
	}
	bestSum, bestL, bestR := math.Inf(1), 0.0, 0.0
	var bestSet []int // indices into levels going left
	left := make([]float64, b.G)
	right := make([]float64, b.G)
	eval := func(set []int) {
		for g := range left {
			left[g] = 0
		}
		leftSq, nl := 0.0, 0
		for _, a := range set {
			st := levels[a]
			nl += st.count
			leftSq += st.sumSq
			for g := range b.G {
				left[g] += st.sum[g]
			}
		}
		if nl < b.opts.MinNodeSize || m-nl < b.opts.MinNodeSize {
			return
		}
		var l, r float64
		if b.opts.Criterion == CriterionL1 {
			l, r = b.setImpurities(n, levels, set)
		} else {
			for g := range b.G {
				right[g] = total[g] - left[g]
			}
			l = sideImpurity(leftSq, left, nl)
			r = sideImpurity(totalSq-leftSq, right, m-nl)
		}
		if l+r < bestSum {
			bestSum, bestL, bestR, bestSet = l+r, l, r, slices.Clone(set)
		}
	}
	if K <= b.opts.MaxExactLevels {
		// Level 0 stays on the left so each partition is tried once.
		for mask := 0; mask < 1<<(K-1)-1; mask++ {
			set := []int{0}
			for a := 1; a < K; a++ {
				if mask&(1<<(a-1)) != 0 {
					set = append(set, a)
				}
			}
			eval(set)
		}
	} else {
		order := make([]int, K)
		for a := range order {
			order[a] = a
		}
		sort.Slice(order, func(a, c int) bool { return levels[order[a]].mean < levels[order[c]].mean })
		for cut := 1; cut < K; cut++ {
			eval(slices.Clone(order[:cut]))
		}
	}
	if bestSet == nil {
		return nil, nil, 0, 0, false
	}
	p := &b.sp.Params[j]
	s := &Split{Param: p.Name, Kind: "categorical", index: j}
	var pos []int
	for a, st := range levels {
		if slices.Contains(bestSet, a) {
			s.leftKeys = append(s.leftKeys, st.key)
			if st.key < 0 {
				s.InactiveLeft = true
			} else {
				s.LeftLevels = append(s.LeftLevels, p.Choices[st.key])
			}
			pos = append(pos, st.pos...)
			continue
		}
		if st.key < 0 {
			s.InactiveRight = true
		} else {
			s.RightLevels = append(s.RightLevels, p.Choices[st.key])
		}
	}
	return s, pos, bestL, bestR, true
}

// setImpurities computes the impurity of the members whose levels are in set
// (indices into levels) and of the others directly: the L1 impurity has no
// running sums over levels.
func (b *builder) setImpurities(n *Node, levels []*levelStats, set []int) (float64, float64) {
	var l, r []int
	for a, st := range levels {
		for _, k := range st.pos {
			if slices.Contains(set, a) {
				l = append(l, n.members[k])
			} else {
				r = append(r, n.members[k])
			}
		}
	}
	return b.impurity(l), b.impurity(r)
}

// queue orders open candidates by impurity reduction, largest first.
type queue []candidate

func (q queue) Len() int           { return len(q) }
func (q queue) Less(a, b int) bool { return q[a].gain > q[b].gain }
func (q queue) Swap(a, b int)      { q[a], q[b] = q[b], q[a] }
func (q *queue) Push(x any)        { *q = append(*q, x.(candidate)) }
func (q *queue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
