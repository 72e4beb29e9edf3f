package fanova

import (
	"fmt"
	"math"
	"sort"

	"xbo/forest"
)

// measure is the product measure of one dimension: an atom of mass inactive
// at the Inactive code, and the rest spread uniformly over the active values
// (the unit interval, or the K levels).
type measure struct {
	levels   int
	inactive float64
}

// atoms partition one dimension of one tree into the cells its splits can
// tell apart. Atom 0 is the Inactive value; numeric atoms 1..m+1 are the
// intervals [0,c₀], (c₀,c₁], …, (c_m,1] between the tree's thresholds c
// inside (0,1); categorical atom c+1 is level c.
type atoms struct {
	cuts []float64
	mass []float64
}

func (a *atoms) index(x float64, levels int) int {
	if x < 0 {
		return 0
	}
	if levels > 0 {
		c := int(x * float64(levels))
		if c >= levels {
			c = levels - 1
		}
		return c + 1
	}
	return 1 + sort.SearchFloat64s(a.cuts, x) // #{c < x}
}

// entry is one leaf's restriction on one dimension: the atom ranges
// [r[2i], r[2i+1]) it covers and their mass μ.
type entry struct {
	leaf int32
	dim  int32
	mass float64
	rOff int32
	rLen int32
}

type leaf struct {
	value    float64
	prodNZ   float64 // product of the non-zero masses of the restricted dimensions
	zeros    int32   // restricted dimensions with zero mass
	entryOff int32
	entryLen int32
}

// prepared is one tree as a list of leaves with boxes in atom coordinates.
type prepared struct {
	dims    []atoms
	leaves  []leaf
	entries []entry
	ranges  []int32
	byDim   [][]int32 // entries restricting each dimension, in leaf order
	mean    float64   // f_∅
	total   float64   // V
}

// fullMass is the leaf's mass P_l = Π_j μ_j(B_lj).
func (l *leaf) fullMass() float64 {
	if l.zeros > 0 {
		return 0
	}
	return l.prodNZ
}

// massWithout is Π over the restricted dimensions other than those of the
// given entries: the volume fraction of the leaf in the remaining dimensions
// (Hutter et al. 2014, Theorem 6).
func (p *prepared) massWithout(l *leaf, es ...*entry) float64 {
	zeros := l.zeros
	div := 1.0
	for _, e := range es {
		if e == nil {
			continue
		}
		if e.mass == 0 {
			zeros--
		} else {
			div *= e.mass
		}
	}
	if zeros > 0 {
		return 0
	}
	return l.prodNZ / div
}

func prepare(t *forest.Tree, ms []measure) (*prepared, error) {
	d := len(ms)
	p := &prepared{dims: make([]atoms, d), leaves: make([]leaf, 0, t.NumLeaves()), byDim: make([][]int32, d)}
	cuts := make([][]float64, d)
	for i := range t.NumNodes() {
		if f, thr := t.Split(i); f >= 0 && f < d && ms[f].levels == 0 && thr > 0 && thr < 1 {
			cuts[f] = append(cuts[f], thr)
		}
	}
	for j, m := range ms {
		if m.levels > 0 {
			mass := make([]float64, m.levels+1)
			mass[0] = m.inactive
			for c := 1; c <= m.levels; c++ {
				mass[c] = (1 - m.inactive) / float64(m.levels)
			}
			p.dims[j] = atoms{mass: mass}
			continue
		}
		sort.Float64s(cuts[j])
		cs := compact(cuts[j])
		mass := make([]float64, len(cs)+2)
		mass[0] = m.inactive
		prev := 0.0
		for i, c := range append(cs, 1) {
			mass[i+1] = (1 - m.inactive) * (c - prev)
			prev = c
		}
		p.dims[j] = atoms{cuts: cs, mass: mass}
	}
	var runs []int32
	var failed error
	t.VisitLeaves(func(lf *forest.Leaf) {
		if failed != nil {
			return
		}
		li := len(p.leaves)
		l := leaf{value: lf.Value, prodNZ: 1, entryOff: int32(len(p.entries))}
		for j, m := range ms {
			runs = runs[:0]
			a := &p.dims[j]
			n := int32(len(a.mass))
			if m.levels > 0 {
				set := lf.Box.Levels[j]
				if set == nil {
					continue
				}
				if len(set) != m.levels+1 {
					failed = fmt.Errorf("leaf %d: dimension %d has %d level flags, want %d", li, j, len(set), m.levels+1)
					return
				}
				for c := 0; c < len(set); {
					if !set[c] {
						c++
						continue
					}
					s := c
					for c < len(set) && set[c] {
						c++
					}
					runs = append(runs, int32(s), int32(c))
				}
			} else {
				lo, hi := lf.Box.Lower[j], lf.Box.Upper[j]
				if math.IsInf(lo, -1) && math.IsInf(hi, 1) {
					continue
				}
				inact := lo < forest.Inactive && forest.Inactive <= hi
				s, e := int32(0), int32(0) // interval atoms [s,e) in 1-based atom indices
				if lo < 1 && hi > 0 {
					s = 1 + int32(countLE(a.cuts, lo))
					e = 1 + int32(countLT(a.cuts, hi)) + 1
					if hi >= 1 {
						e = n
					}
				}
				switch {
				case inact && s == 1:
					runs = append(runs, 0, e)
				case inact:
					runs = append(runs, 0, 1)
					if e > s {
						runs = append(runs, s, e)
					}
				case e > s:
					runs = append(runs, s, e)
				}
			}
			if len(runs) == 2 && runs[0] == 0 && runs[1] == n {
				continue // covers the whole dimension: no restriction
			}
			mu := 0.0
			for r := 0; r < len(runs); r += 2 {
				for q := runs[r]; q < runs[r+1]; q++ {
					mu += a.mass[q]
				}
			}
			e := entry{leaf: int32(li), dim: int32(j), mass: mu, rOff: int32(len(p.ranges)), rLen: int32(len(runs) / 2)}
			p.ranges = append(p.ranges, runs...)
			p.byDim[j] = append(p.byDim[j], int32(len(p.entries)))
			p.entries = append(p.entries, e)
			if mu == 0 {
				l.zeros++
			} else {
				l.prodNZ *= mu
			}
		}
		l.entryLen = int32(len(p.entries)) - l.entryOff
		p.leaves = append(p.leaves, l)
	})
	if failed != nil {
		return nil, failed
	}
	mean := 0.0
	for i := range p.leaves {
		mean += p.leaves[i].value * p.leaves[i].fullMass()
	}
	v := 0.0
	for i := range p.leaves {
		dv := p.leaves[i].value - mean
		v += dv * dv * p.leaves[i].fullMass()
	}
	p.mean, p.total = mean, v
	return p, nil
}

func compact(s []float64) []float64 {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func countLE(s []float64, x float64) int {
	return sort.Search(len(s), func(i int) bool { return s[i] > x })
}
func countLT(s []float64, x float64) int { return sort.SearchFloat64s(s, x) }

func (p *prepared) entryRanges(e *entry) []int32 {
	return p.ranges[e.rOff : e.rOff+2*e.rLen]
}

// covers tells whether a leaf's box holds atom a of dimension j.
func (p *prepared) covers(l *leaf, j, a int) bool {
	for q := l.entryOff; q < l.entryOff+l.entryLen; q++ {
		e := &p.entries[q]
		if int(e.dim) != j {
			continue
		}
		rs := p.entryRanges(e)
		for r := 0; r < len(rs); r += 2 {
			if int(rs[r]) <= a && a < int(rs[r+1]) {
				return true
			}
		}
		return false
	}
	return true
}

// marginal is â_U(x_U) for one tree (Hutter et al. 2014, eq. 1 via Theorem 6):
// the sum over the leaves whose box holds x_U of value × volume fraction of the
// box in the other dimensions. Linear in the number of leaves.
func (p *prepared) marginal(ms []measure, dims []int, x []float64) float64 {
	atomOf := make([]int, len(dims))
	for i, j := range dims {
		atomOf[i] = p.dims[j].index(x[i], ms[j].levels)
	}
	inU := make(map[int]int, len(dims))
	for i, j := range dims {
		inU[j] = i
	}
	sum := 0.0
	for li := range p.leaves {
		l := &p.leaves[li]
		w := 1.0
		ok := true
		for q := l.entryOff; q < l.entryOff+l.entryLen && ok; q++ {
			e := &p.entries[q]
			if i, in := inU[int(e.dim)]; in {
				ok = p.covers(l, int(e.dim), atomOf[i])
			} else {
				w *= e.mass
			}
		}
		if ok {
			sum += l.value * w
		}
	}
	return sum
}

// mainTable fills out (len = atoms of j) with â_j on every atom of j minus
// the constant contributed by leaves that do not restrict j; withConst adds
// that constant back.
func (p *prepared) mainTable(j int, out []float64, withConst bool) {
	n := len(p.dims[j].mass)
	diff := out[:n]
	clear(diff)
	for _, ei := range p.byDim[j] {
		e := &p.entries[ei]
		l := &p.leaves[e.leaf]
		c := l.value * p.massWithout(l, e)
		if c == 0 {
			continue
		}
		rs := p.entryRanges(e)
		for r := 0; r < len(rs); r += 2 {
			diff[rs[r]] += c
			if int(rs[r+1]) < n {
				diff[rs[r+1]] -= c
			}
		}
	}
	run := 0.0
	for a := range n {
		run += diff[a]
		diff[a] = run
	}
	if withConst {
		k := p.constantWithout(j, -1)
		for a := range n {
			diff[a] += k
		}
	}
}

// constantWithout sums value × mass over the leaves that restrict neither j
// nor k (k = −1 for none).
func (p *prepared) constantWithout(j, k int) float64 {
	s := 0.0
	for li := range p.leaves {
		l := &p.leaves[li]
		skip := false
		for q := l.entryOff; q < l.entryOff+l.entryLen; q++ {
			if d := int(p.entries[q].dim); d == j || d == k {
				skip = true
				break
			}
		}
		if !skip {
			s += l.value * l.fullMass()
		}
	}
	return s
}

// pairTable fills out (row-major, atoms of j × atoms of k, needs
// (nj+1)·(nk+1) space) with â_jk minus the constant of leaves restricting
// neither; it returns the row stride.
func (p *prepared) pairTable(j, k int, out []float64, withConst bool) int {
	nj, nk := len(p.dims[j].mass), len(p.dims[k].mass)
	stride := nk + 1
	diff := out[:(nj+1)*stride]
	clear(diff)
	full := [2]int32{0, 0}
	add := func(rj, rk []int32, c float64) {
		for a := 0; a < len(rj); a += 2 {
			a0, a1 := int(rj[a]), int(rj[a+1])
			for b := 0; b < len(rk); b += 2 {
				b0, b1 := int(rk[b]), int(rk[b+1])
				diff[a0*stride+b0] += c
				diff[a0*stride+b1] -= c
				diff[a1*stride+b0] -= c
				diff[a1*stride+b1] += c
			}
		}
	}
	fullJ := full
	fullJ[1] = int32(nj)
	fullK := full
	fullK[1] = int32(nk)
	lj, lk := p.byDim[j], p.byDim[k]
	x, y := 0, 0
	for x < len(lj) || y < len(lk) {
		var ej, ek *entry
		switch {
		case y >= len(lk) || (x < len(lj) && p.entries[lj[x]].leaf < p.entries[lk[y]].leaf):
			ej = &p.entries[lj[x]]
			x++
		case x >= len(lj) || p.entries[lk[y]].leaf < p.entries[lj[x]].leaf:
			ek = &p.entries[lk[y]]
			y++
		default:
			ej, ek = &p.entries[lj[x]], &p.entries[lk[y]]
			x++
			y++
		}
		var l *leaf
		rj, rk := fullJ[:], fullK[:]
		if ej != nil {
			l = &p.leaves[ej.leaf]
			rj = p.entryRanges(ej)
		}
		if ek != nil {
			l = &p.leaves[ek.leaf]
			rk = p.entryRanges(ek)
		}
		c := l.value * p.massWithout(l, ej, ek)
		if c == 0 {
			continue
		}
		add(rj, rk, c)
	}
	// Two-dimensional prefix sums, in place, into the top-left nj×nk block
	// laid out with stride nk+1.
	for a := range nj {
		run := 0.0
		row := diff[a*stride : a*stride+nk]
		for b := range nk {
			run += row[b]
			if a > 0 {
				row[b] = run + diff[(a-1)*stride+b]
			} else {
				row[b] = run
			}
		}
	}
	if withConst {
		kc := p.constantWithout(j, k)
		for a := range nj {
			row := diff[a*stride : a*stride+nk]
			for b := range row {
				row[b] += kc
			}
		}
	}
	return stride
}

// variance1 is the variance of a table under the atom masses.
func variance1(t, m []float64) float64 {
	g := 0.0
	for a, w := range m {
		g += w * t[a]
	}
	v := 0.0
	for a, w := range m {
		d := t[a] - g
		v += w * d * d
	}
	return v
}

// interaction2 is V_jk: the variance of the doubly centred pair table
// f_jk = â_jk − â_j − â_k + f_∅, where â_j and â_k are the table's weighted
// row and column means (exactly the main marginals, since the masses of each
// dimension sum to one), so constants dropped from the table cancel.
func interaction2(t []float64, stride int, mj, mk []float64, rowMean, colMean []float64) float64 {
	nj, nk := len(mj), len(mk)
	rowMean = rowMean[:nj]
	colMean = colMean[:nk]
	clear(colMean)
	g := 0.0
	for a := range nj {
		row := t[a*stride : a*stride+nk]
		s := 0.0
		for b, w := range mk {
			s += w * row[b]
			colMean[b] += mj[a] * row[b]
		}
		rowMean[a] = s
		g += mj[a] * s
	}
	v := 0.0
	for a := range nj {
		if mj[a] == 0 {
			continue
		}
		row := t[a*stride : a*stride+nk]
		s := 0.0
		ra := rowMean[a] - g
		for b, w := range mk {
			d := row[b] - ra - colMean[b]
			s += w * d * d
		}
		v += mj[a] * s
	}
	return v
}

// pairScratch is reusable memory for pairVariance.
type pairScratch struct {
	table, rowMean, colMean, mj, mk []float64
	mapJ, mapK                      []int32
	leaves                          [][2]int32
}

// coarsen marks the atom boundaries used by the given ranges, and returns
// the coarse masses and the map from fine boundary to coarse boundary index.
func coarsen(fine []float64, rangesOf func(yield func(r []int32)), mapping []int32, mass []float64) ([]int32, []float64) {
	n := len(fine)
	if cap(mapping) < n+1 {
		mapping = make([]int32, n+1)
	}
	mapping = mapping[:n+1]
	for i := range mapping {
		mapping[i] = -1
	}
	mapping[0], mapping[n] = 0, 0
	rangesOf(func(r []int32) {
		for _, b := range r {
			mapping[b] = 0
		}
	})
	mass = mass[:0]
	idx := int32(0)
	acc := 0.0
	for i := 0; i <= n; i++ {
		if mapping[i] >= 0 {
			if i > 0 {
				mass = append(mass, acc)
				acc = 0
				idx++
			}
			mapping[i] = idx
		}
		if i < n {
			acc += fine[i]
		}
	}
	return mapping, mass
}

// pairVariance is V_jk of the tree. Only leaves restricting both j and k
// matter: a leaf restricting one of them adds a function of that dimension
// alone (times a constant), which double centring removes. Those leaves'
// boxes are unions of cells between their own bounds, so the table is built
// on that coarser partition; it is still exact.
func (p *prepared) pairVariance(j, k int, s *pairScratch) float64 {
	lj, lk := p.byDim[j], p.byDim[k]
	both := s.leaves[:0]
	for x, y := 0, 0; x < len(lj) && y < len(lk); {
		a, b := p.entries[lj[x]].leaf, p.entries[lk[y]].leaf
		switch {
		case a < b:
			x++
		case b < a:
			y++
		default:
			both = append(both, [2]int32{lj[x], lk[y]})
			x++
			y++
		}
	}
	s.leaves = both
	if len(both) == 0 {
		return 0
	}
	var mj, mk []float64
	s.mapJ, mj = coarsen(p.dims[j].mass, func(yield func([]int32)) {
		for _, e := range both {
			yield(p.entryRanges(&p.entries[e[0]]))
		}
	}, s.mapJ, s.mj)
	s.mapK, mk = coarsen(p.dims[k].mass, func(yield func([]int32)) {
		for _, e := range both {
			yield(p.entryRanges(&p.entries[e[1]]))
		}
	}, s.mapK, s.mk)
	s.mj, s.mk = mj, mk
	nj, nk := len(mj), len(mk)
	stride := nk + 1
	s.table = grow(s.table, (nj+1)*stride)
	diff := s.table
	clear(diff)
	for _, e := range both {
		ej, ek := &p.entries[e[0]], &p.entries[e[1]]
		l := &p.leaves[ej.leaf]
		c := l.value * p.massWithout(l, ej, ek)
		if c == 0 {
			continue
		}
		rj, rk := p.entryRanges(ej), p.entryRanges(ek)
		for a := 0; a < len(rj); a += 2 {
			a0, a1 := int(s.mapJ[rj[a]]), int(s.mapJ[rj[a+1]])
			for b := 0; b < len(rk); b += 2 {
				b0, b1 := int(s.mapK[rk[b]]), int(s.mapK[rk[b+1]])
				diff[a0*stride+b0] += c
				diff[a0*stride+b1] -= c
				diff[a1*stride+b0] -= c
				diff[a1*stride+b1] += c
			}
		}
	}
	for a := range nj {
		run := 0.0
		row := diff[a*stride : a*stride+nk]
		for b := range nk {
			run += row[b]
			if a > 0 {
				row[b] = run + diff[(a-1)*stride+b]
			} else {
				row[b] = run
			}
		}
	}
	s.rowMean = grow(s.rowMean, nj)
	s.colMean = grow(s.colMean, nk)
	return interaction2(diff, stride, mj, mk, s.rowMean, s.colMean)
}
