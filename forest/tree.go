package forest

import (
	"math"
)

// Tree is one fitted regression tree in flat arrays; node 0 is the root.
// Its methods only read.
type Tree struct {
	feature   []int32   // split dimension, −1 for a leaf
	threshold []float64 // numeric split: x ≤ threshold goes left
	catOff    []int32   // categorical split: offset of the left level set in catBits
	left      []int32
	right     []int32
	value     []float64 // mean target of the node's samples
	samples   []int32   // bootstrap samples in the node, with multiplicity
	catBits   []uint64
	levels    []int
}

// Node is a read-only view of one tree node.
type Node struct {
	// Feature is the split dimension, or −1 for a leaf.
	Feature int
	// Threshold: a numeric split sends x ≤ Threshold to Left.
	Threshold float64
	// LeftLevels: a categorical split sends these levels to Left (−1 stands
	// for inactive); nil for numeric splits and leaves.
	LeftLevels []int
	// Left and Right are child node indices (−1 for a leaf).
	Left, Right int
	// Value is the mean training target in the node (the prediction of a leaf).
	Value float64
	// Samples counts the node's bootstrap samples with multiplicity.
	Samples int
}

// NumNodes is the number of nodes.
func (t *Tree) NumNodes() int { return len(t.feature) }

// NumLeaves is the number of leaves.
func (t *Tree) NumLeaves() int {
	n := 0
	for _, f := range t.feature {
		if f < 0 {
			n++
		}
	}
	return n
}

// Node returns node i, or false when i is out of range.
func (t *Tree) Node(i int) (Node, bool) {
	if i < 0 || i >= len(t.feature) {
		return Node{}, false
	}
	n := Node{Feature: int(t.feature[i]), Threshold: t.threshold[i], Left: int(t.left[i]), Right: int(t.right[i]),
		Value: t.value[i], Samples: int(t.samples[i])}
	if n.Feature >= 0 && t.levels[n.Feature] > 0 {
		k := t.levels[n.Feature]
		n.Threshold = math.NaN()
		for c := -1; c < k; c++ {
			if t.catLeft(i, c) {
				n.LeftLevels = append(n.LeftLevels, c)
			}
		}
	}
	return n, true
}

// Split returns node i's split dimension (−1 for a leaf or an index out of
// range) and, for a numeric split, its threshold (NaN otherwise), without
// the allocation of Node.
func (t *Tree) Split(i int) (feature int, threshold float64) {
	if i < 0 || i >= len(t.feature) || t.feature[i] < 0 {
		return -1, math.NaN()
	}
	f := int(t.feature[i])
	if t.levels[f] > 0 {
		return f, math.NaN()
	}
	return f, t.threshold[i]
}

func (t *Tree) catLeft(node, code int) bool {
	b := code + 1
	return t.catBits[int(t.catOff[node])+b>>6]>>(uint(b)&63)&1 == 1
}

// Predict is the tree's prediction at one unit-cube point.
func (t *Tree) Predict(x []float64) float64 {
	i := 0
	for {
		f := t.feature[i]
		if f < 0 {
			return t.value[i]
		}
		var goLeft bool
		if k := t.levels[f]; k > 0 {
			goLeft = t.catLeft(i, levelCode(x[f], k))
		} else {
			goLeft = x[f] <= t.threshold[i]
		}
		if goLeft {
			i = int(t.left[i])
		} else {
			i = int(t.right[i])
		}
	}
}

// Box is the region of a leaf. For numeric dimension j it holds the u with
// Lower[j] < u ≤ Upper[j] (±Inf when no split bounds it; Inactive = −1 is an
// ordinary value there). For categorical dimension j, Levels[j][c+1] tells
// whether level c is in the box (c = −1 is inactive); Levels[j] is nil when
// no split restricts j (every level is in).
type Box struct {
	Lower, Upper []float64
	Levels       [][]bool
}

// Leaf is a leaf with its box.
type Leaf struct {
	Node    int
	Value   float64
	Samples int
	Box     Box
}

// Leaves returns every leaf with its box, in depth-first order.
func (t *Tree) Leaves() []Leaf {
	var out []Leaf
	t.VisitLeaves(func(l *Leaf) {
		c := *l
		c.Box = Box{Lower: append([]float64(nil), l.Box.Lower...), Upper: append([]float64(nil), l.Box.Upper...),
			Levels: make([][]bool, len(l.Box.Levels))}
		for j, set := range l.Box.Levels {
			if set != nil {
				c.Box.Levels[j] = append([]bool(nil), set...)
			}
		}
		out = append(out, c)
	})
	return out
}

// VisitLeaves calls fn for every leaf in depth-first order without copying
// boxes: the Leaf and its Box are only valid during the call (use Leaves for
// copies). fANOVA uses it to read large forests without allocating per leaf.
func (t *Tree) VisitLeaves(fn func(l *Leaf)) {
	d := len(t.levels)
	leaf := Leaf{Box: Box{Lower: make([]float64, d), Upper: make([]float64, d), Levels: make([][]bool, d)}}
	lower, upper, cats := leaf.Box.Lower, leaf.Box.Upper, leaf.Box.Levels
	for j := range d {
		lower[j], upper[j] = math.Inf(-1), math.Inf(1)
	}
	var walk func(i int)
	walk = func(i int) {
		f := int(t.feature[i])
		if f < 0 {
			leaf.Node, leaf.Value, leaf.Samples = i, t.value[i], int(t.samples[i])
			fn(&leaf)
			return
		}
		if k := t.levels[f]; k > 0 {
			saved := cats[f]
			for side, child := range []int32{t.left[i], t.right[i]} {
				set := make([]bool, k+1)
				for c := -1; c < k; c++ {
					in := saved == nil || saved[c+1]
					set[c+1] = in && t.catLeft(i, c) == (side == 0)
				}
				cats[f] = set
				walk(int(child))
			}
			cats[f] = saved
			return
		}
		hi := upper[f]
		upper[f] = math.Min(hi, t.threshold[i])
		walk(int(t.left[i]))
		upper[f] = hi
		lo := lower[f]
		lower[f] = math.Max(lo, t.threshold[i])
		walk(int(t.right[i]))
		lower[f] = lo
	}
	walk(0)
}

// catWords is the number of 64-bit words of a level set with k levels plus
// the inactive one.
func catWords(k int) int { return (k + 1 + 63) / 64 }
