package forest

import (
	"math"
	"math/rand/v2"
	"sort"
)

// builder grows trees; one per goroutine, reused across that goroutine's
// trees so scratch memory is allocated once.
type builder struct {
	d         *dataset
	r         resolved
	bootstrap bool

	cnt    []int32   // bootstrap multiplicity of each row
	order  [][]int32 // per dimension: rows of the current tree, sorted, partitioned by node
	tmp    []int32
	goLeft []bool
	feats  []int
	rng    *rand.Rand

	catW, catS []float64
	present    []int
	setScratch []uint64
	bestSet    []uint64

	t *Tree
}

func newBuilder(d *dataset, r resolved, bootstrap bool) *builder {
	maxK := 0
	for _, k := range d.levels {
		maxK = max(maxK, k)
	}
	b := &builder{d: d, r: r, bootstrap: bootstrap,
		cnt: make([]int32, d.n), order: make([][]int32, d.dim), tmp: make([]int32, d.n),
		goLeft: make([]bool, d.n), feats: make([]int, d.dim),
		catW: make([]float64, maxK+1), catS: make([]float64, maxK+1), present: make([]int, 0, maxK+1),
		setScratch: make([]uint64, catWords(maxK)), bestSet: make([]uint64, catWords(maxK))}
	for j := range b.order {
		b.order[j] = make([]int32, d.n)
	}
	return b
}

// grow builds one tree from its own seed.
func (b *builder) grow(seed uint64) *Tree {
	b.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n := b.d.n
	if b.bootstrap {
		clear(b.cnt)
		for range n {
			b.cnt[b.rng.IntN(n)]++
		}
	} else {
		for i := range b.cnt {
			b.cnt[i] = 1
		}
	}
	active := 0
	for j := range b.d.dim {
		k := 0
		for _, i := range b.d.order[j] {
			if b.cnt[i] > 0 {
				b.order[j][k] = i
				k++
			}
		}
		active = k
	}
	for j := range b.feats {
		b.feats[j] = j
	}
	b.t = &Tree{levels: b.d.levels}
	b.build(0, active, 0)
	t := b.t
	b.t = nil
	return t
}

func (b *builder) addNode(value float64, samples int32) int {
	t := b.t
	t.feature = append(t.feature, -1)
	t.threshold = append(t.threshold, math.NaN())
	t.catOff = append(t.catOff, -1)
	t.left = append(t.left, -1)
	t.right = append(t.right, -1)
	t.value = append(t.value, value)
	t.samples = append(t.samples, samples)
	return len(t.feature) - 1
}

// split is the best split found at a node.
type split struct {
	feature   int
	gain      float64
	threshold float64
}

func (b *builder) build(lo, hi, depth int) int {
	d, cnt, y := b.d, b.cnt, b.d.y
	rows := b.order[0][lo:hi]
	w, s := 0.0, 0.0
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, i := range rows {
		c := float64(cnt[i])
		w += c
		s += c * y[i]
		ymin = math.Min(ymin, y[i])
		ymax = math.Max(ymax, y[i])
	}
	mean := s / w
	node := b.addNode(mean, int32(w))
	if w < float64(b.r.minSplit) || depth >= b.r.maxDepth || ymin == ymax || len(rows) < 2 {
		return node
	}
	sse := 0.0
	for _, i := range rows {
		e := y[i] - mean
		sse += float64(cnt[i]) * e * e
	}

	best := split{feature: -1}
	for idx := range d.dim {
		if idx >= b.r.mtry && best.feature >= 0 {
			break
		}
		// Partial Fisher–Yates: the first mtry entries are a uniform draw
		// without replacement; later ones are the fallback order.
		sw := idx + b.rng.IntN(d.dim-idx)
		b.feats[idx], b.feats[sw] = b.feats[sw], b.feats[idx]
		j := b.feats[idx]
		var gain, thr float64
		var ok bool
		if d.levels[j] > 0 {
			gain, ok = b.bestCategorical(j, lo, hi, mean, w)
		} else {
			gain, thr, ok = b.bestNumeric(j, lo, hi, mean, w)
		}
		if ok && gain > best.gain {
			best = split{feature: j, gain: gain, threshold: thr}
			if d.levels[j] > 0 {
				copy(b.bestSet, b.setScratch)
			}
		}
	}
	// Gains at rounding level are not structure.
	if best.feature < 0 || best.gain <= 1e-12*sse {
		return node
	}

	j := best.feature
	if k := d.levels[j]; k > 0 {
		codes := d.codes[j]
		for _, i := range rows {
			c := int(codes[i])
			b.goLeft[i] = b.bestSet[c>>6]>>(uint(c)&63)&1 == 1
		}
	} else {
		col := d.cols[j]
		for _, i := range rows {
			b.goLeft[i] = col[i] <= best.threshold
		}
	}
	nLeft := 0
	for f := range d.dim {
		ord := b.order[f][lo:hi]
		l, r := 0, 0
		for _, i := range ord {
			if b.goLeft[i] {
				ord[l] = i
				l++
			} else {
				b.tmp[r] = i
				r++
			}
		}
		copy(ord[l:], b.tmp[:r])
		nLeft = l
	}
	if nLeft == 0 || nLeft == hi-lo {
		return node
	}
	t := b.t
	t.feature[node] = int32(j)
	if k := d.levels[j]; k > 0 {
		t.catOff[node] = int32(len(t.catBits))
		t.catBits = append(t.catBits, b.bestSet[:catWords(k)]...)
	} else {
		t.threshold[node] = best.threshold
	}
	left := b.build(lo, lo+nLeft, depth+1)
	right := b.build(lo+nLeft, hi, depth+1)
	t.left[node] = int32(left)
	t.right[node] = int32(right)
	return node
}

// bestNumeric scans the sorted rows of dimension j; the gain of a split is
// the drop in squared error, sL²·W/(wL·wR) with sums of centred targets,
// which avoids the cancellation of Σy² − (Σy)²/W.
func (b *builder) bestNumeric(j, lo, hi int, mean, w float64) (gain, thr float64, ok bool) {
	ord := b.order[j][lo:hi]
	col, y, cnt := b.d.cols[j], b.d.y, b.cnt
	minLeaf := float64(b.r.minLeaf)
	wl, sl := 0.0, 0.0
	for p := 0; p < len(ord)-1; p++ {
		i := ord[p]
		c := float64(cnt[i])
		wl += c
		sl += c * (y[i] - mean)
		xv, xn := col[i], col[ord[p+1]]
		if xn == xv || wl < minLeaf {
			continue
		}
		wr := w - wl
		if wr < minLeaf {
			break
		}
		g := sl * sl * w / (wl * wr)
		if g > gain {
			gain, ok = g, true
			thr = xv + (xn-xv)/2
			if !(thr < xn) {
				thr = xv
			}
		}
	}
	return gain, thr, ok
}

// bestCategorical finds the best subset of the levels present at the node
// and leaves it in b.setScratch (bit c+1 for level c, bit 0 for inactive).
func (b *builder) bestCategorical(j, lo, hi int, mean, w float64) (gain float64, ok bool) {
	k := b.d.levels[j]
	codes, y, cnt := b.d.codes[j], b.d.y, b.cnt
	catW, catS := b.catW[:k+1], b.catS[:k+1]
	clear(catW)
	clear(catS)
	for _, i := range b.order[j][lo:hi] {
		c := float64(cnt[i])
		catW[codes[i]] += c
		catS[codes[i]] += c * (y[i] - mean)
	}
	present := b.present[:0]
	for c := range catW {
		if catW[c] > 0 {
			present = append(present, c)
		}
	}
	m := len(present)
	if m < 2 {
		return 0, false
	}
	minLeaf := float64(b.r.minLeaf)
	words := catWords(k)
	set := b.setScratch[:words]
	bestMask, bestPrefix := -1, -1
	if m <= exhaustiveLimit {
		// present[0] stays left, so each partition is counted once.
		for mask := 0; mask < 1<<(m-1)-1; mask++ {
			wl, sl := catW[present[0]], catS[present[0]]
			for q := 1; q < m; q++ {
				if mask>>(q-1)&1 == 1 {
					wl += catW[present[q]]
					sl += catS[present[q]]
				}
			}
			wr := w - wl
			if wl < minLeaf || wr < minLeaf {
				continue
			}
			if g := sl * sl * w / (wl * wr); g > gain {
				gain, ok, bestMask = g, true, mask
			}
		}
		if !ok {
			return 0, false
		}
		clear(set)
		setBit(set, present[0])
		for q := 1; q < m; q++ {
			if bestMask>>(q-1)&1 == 1 {
				setBit(set, present[q])
			}
		}
		b.present = present
		return gain, true
	}
	// Breiman's ordering: sort levels by mean response and try the m−1 cuts.
	sort.SliceStable(present, func(a, c int) bool {
		return catS[present[a]]/catW[present[a]] < catS[present[c]]/catW[present[c]]
	})
	wl, sl := 0.0, 0.0
	for q := 0; q < m-1; q++ {
		wl += catW[present[q]]
		sl += catS[present[q]]
		wr := w - wl
		if wl < minLeaf || wr < minLeaf {
			continue
		}
		if g := sl * sl * w / (wl * wr); g > gain {
			gain, ok, bestPrefix = g, true, q
		}
	}
	if !ok {
		return 0, false
	}
	clear(set)
	for q := 0; q <= bestPrefix; q++ {
		setBit(set, present[q])
	}
	b.present = present
	return gain, true
}

func setBit(ws []uint64, b int) { ws[b>>6] |= 1 << (uint(b) & 63) }
