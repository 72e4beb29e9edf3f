package shapley

import (
	"xbo/space"
)

// mixer builds the hybrid point of a coalition: coordinates in the coalition
// from the explicand x, the others from a background point z. For spaces with
// conditions it applies the rule of the package doc so that every hybrid is a
// valid configuration.
type mixer struct {
	dim    int
	space  *space.Space // nil or without conditions: plain coordinate mixing
	parent []int
	order  []int // parents before children
}

func newMixer(dim int, s *space.Space) *mixer {
	m := &mixer{dim: dim}
	if s == nil || !s.Conditional() {
		return m
	}
	m.space = s
	m.parent = make([]int, dim)
	for i := range m.parent {
		m.parent[i] = s.ParentOf(i)
	}
	// Depth-first topological order; the space refused cycles when built.
	seen := make([]bool, dim)
	var visit func(i int)
	visit = func(i int) {
		if seen[i] {
			return
		}
		seen[i] = true
		if q := m.parent[i]; q >= 0 {
			visit(q)
		}
		m.order = append(m.order, i)
	}
	for i := 0; i < dim; i++ {
		visit(i)
	}
	return m
}

// inCoalition reports whether player j is in the coalition mask.
func inCoalition(mask uint64, j int) bool { return mask&(1<<uint(j)) != 0 }

// mix writes into dst the hybrid of x (players in mask) and z (the rest).
// src is scratch of length dim (nil allowed for unconditional spaces).
func (m *mixer) mix(dst, x, z []float64, mask uint64, src []bool) {
	if m.space == nil {
		for j := range dst {
			if inCoalition(mask, j) {
				dst[j] = x[j]
			} else {
				dst[j] = z[j]
			}
		}
		return
	}
	// src[j] true: coordinate j comes from x.
	for j := range dst {
		src[j] = inCoalition(mask, j)
		if src[j] {
			dst[j] = x[j]
		} else {
			dst[j] = z[j]
		}
	}
	// Resolve activity parents-first. A coordinate that is on in the hybrid
	// but Inactive in its own source follows its parent's source, which is
	// valid and has the parent at the same value, hence the child on.
	// Decode reads parents only, so one pass per level of nesting suffices;
	// p passes bound the depth.
	for pass := 0; pass < m.dim; pass++ {
		vals := m.space.Decode(dst)
		changed := false
		for _, j := range m.order {
			q := m.parent[j]
			if q < 0 || vals[j] != vals[j] { // unconditional, or off (NaN)
				continue
			}
			if dst[j] >= 0 {
				continue
			}
			if dst[q] < 0 {
				// The parent itself is still being resolved this pass.
				continue
			}
			src[j] = src[q]
			if src[j] {
				dst[j] = x[j]
			} else {
				dst[j] = z[j]
			}
			changed = true
		}
		if !changed {
			break
		}
	}
	m.space.Repair(dst)
}
