package regional

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"xbo/explain/pdp"
)

// Leaf is a sub-region with its regional PDP.
type Leaf struct {
	ID        int         `json:"id"`
	Path      []string    `json:"path"` // split conditions from the root; empty for the whole space
	Size      int         `json:"size"` // ICE curves in the region
	Impurity  float64     `json:"impurity"`
	HoldsBest bool        `json:"holds_best"`
	PDP       *pdp.Result `json:"pdp"`

	members []int
}

// Members lists the ICE curves (Monte Carlo indices) of the region, e.g. to
// average another model's ICE curves over the same region.
func (l *Leaf) Members() []int { return slices.Clone(l.members) }

// Result is the confidence-splitting explanation of one parameter: the
// global PDP, the tree and one regional PDP per leaf. The service, dashboard
// and report marshal it as is.
type Result struct {
	Param        string      `json:"param"`
	Global       *pdp.Result `json:"global"`
	Tree         *Node       `json:"tree"`
	Leaves       []Leaf      `json:"leaves"`
	Splits       int         `json:"splits"`
	BestLeaf     int         `json:"best_leaf"` // leaf ID holding the best configuration, −1 if none given
	RootImpurity float64     `json:"root_impurity"`
	LeafImpurity float64     `json:"leaf_impurity"` // Σ over leaves, never above RootImpurity
}

// Explain grows the tree on the ICE curves and computes the global and the
// regional PDPs. best is the best observed configuration in unit encoding
// (nil when unknown); its leaf is marked. It stops with ctx's error when
// ctx is cancelled.
func Explain(ctx context.Context, ice *pdp.ICE, best []float64, opts Options) (*Result, error) {
	if ice == nil {
		return nil, errors.New("regional: no ICE curves")
	}
	tree, err := Fit(ice, opts)
	if err != nil {
		return nil, err
	}
	global, err := ice.PDP(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("regional: global PDP: %w", err)
	}
	r := &Result{
		Param:        global.Param,
		Global:       global,
		Tree:         tree.Root,
		Splits:       tree.Splits,
		BestLeaf:     -1,
		RootImpurity: tree.Root.Impurity,
	}
	if best != nil {
		leaf, err := tree.Leaf(best)
		if err != nil {
			return nil, fmt.Errorf("regional: best configuration: %w", err)
		}
		r.BestLeaf = leaf.ID
	}
	for _, n := range tree.Leaves {
		p, err := ice.PDP(ctx, n.members)
		if err != nil {
			return nil, fmt.Errorf("regional: leaf %d: %w", n.ID, err)
		}
		r.Leaves = append(r.Leaves, Leaf{ID: n.ID, Path: n.Path, Size: n.Size, Impurity: n.Impurity,
			HoldsBest: n.ID == r.BestLeaf, PDP: p, members: n.members})
		r.LeafImpurity += n.Impurity
	}
	return r, nil
}

// Best returns the leaf holding the best configuration, or nil.
func (r *Result) Best() *Leaf {
	for k := range r.Leaves {
		if r.Leaves[k].HoldsBest {
			return &r.Leaves[k]
		}
	}
	return nil
}
