package opt

import (
	"math"

	"xbo/acq"
)

// When the acquisition's best candidate repeats a trial (within
// Config.DuplicateTolerance), propose searches again with every trial walled
// off within the tolerance (exclude with withDone): the random stage, the
// extra candidates (local and trust-region) and the refinement all score a
// walled point −Inf, so neither the pattern search nor the gradient climb
// can walk back onto a copy. The second answer is taken when worthProposing
// says so; only otherwise is the proposal replaced by a random
// configuration ("random-fallback").
//
// A copy is typical when the optimum lies on a corner or edge of the space:
// the incumbent sits on the boundary, and the acquisition's argmax is the
// incumbent itself. Replacing every such copy by a uniform random
// configuration, as mlrMBO does, turned most of the budget into random
// search there. The best non-duplicate candidate is instead the
// acquisition's own next choice, usually a point just beside the incumbent
// along the boundary or a step inside the box. docs/research/peers.md (Boundary
// optima) has the measurements.

// worthProposing says whether score, the best a search found away from every
// trial, is better than a random configuration. For EI and PI a score of 0
// means no improvement is expected anywhere outside the walls, so a random
// configuration explores at least as well; for the others (LCB, whose score
// τ·s − m has no natural zero, the BOBAX family's products and EIG, a
// chooser's own acquisition) any finite score ranks the candidate above the
// rest. A discrete space keeps its earlier rule, any admissible score: the
// best level not evaluated yet beats a random one that may well be.
func (o *Optimizer) worthProposing(a acq.Acquisition, score float64) bool {
	if math.IsNaN(score) || math.IsInf(score, -1) {
		return false
	}
	if o.discrete() {
		return true
	}
	switch a.(type) {
	case acq.EI, acq.PI:
		return score > 0
	}
	return true
}
