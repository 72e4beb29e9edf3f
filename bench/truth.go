package bench

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"xbo/explain/pdp"
	"xbo/explain/sobol"
	"xbo/space"
)

// The truth catalogue is a suite of problems whose explanations are known:
// the partial dependence of every parameter and its Sobol indices, exactly
// where a closed form or a full table gives them and by Monte Carlo (PD) or
// quasi-Monte Carlo (indices) otherwise. `xbo bench calibration` and `xbo
// bench importance` score the explanation engine against them.
//
// Part of the catalogue is held out: problems and seeds that nobody looks at
// while tuning the explanations, reported apart, so that a benchmark tuned
// against does not stand in for evidence (DESIGN.md, "Trust on the user's
// own data"). The tune part runs seeds 1..S, the held-out part seeds
// 1001..1000+S, and a run of the tune suite never builds data, truths or
// numbers of a held-out problem.

// TruthProblem is a problem with known explanations.
type TruthProblem struct {
	Name string
	// HeldOut problems are never looked at while tuning; they are reported
	// apart and run on their own seeds.
	HeldOut bool
	// Tags say what is hard about the problem (see the Tag constants).
	Tags []string
	// Space is the search space with its direction (space.Maximize for the
	// problems tagged maximize).
	Space *space.Space
	// Eval is the clean objective at natural values (space.Decode); the
	// truths describe it.
	Eval func(x []float64) float64
	// Observe, if set, is what a trial reports (e.g. now and then a
	// diverged run); nil means Eval.
	Observe func(x []float64, rng *rand.Rand) float64
	// PD, if set, is the exact partial dependence of parameter p at natural
	// value v under explain/pdp's reference measure; nil: Monte Carlo.
	PD func(p int, v float64) (float64, bool)
	// Main and Total, if set, are the exact Sobol indices; nil: estimated
	// by quasi-Monte Carlo.
	Main, Total []float64
	// Note says where the truths come from when that is not obvious
	// (e.g. duplicated rows of a table averaged).
	Note string
}

// Tags of truth problems.
const (
	TagRough       = "rough"        // oscillations finer than the data
	TagSwitchedOff = "switched-off" // parameters that do nothing
	TagWeak        = "weak"         // a parameter with a small but nonzero effect
	TagSteps       = "steps"        // plateaus and jumps
	TagHeavyTailed = "heavy-tailed" // trials now and then report a diverged value
	TagMaximize    = "maximize"
	TagCategorical = "categorical"
	TagConditional = "conditional"
	TagTable       = "table" // a full grid of real results, exact truths
	TagReal        = "real"
	TagHighD       = "high-d" // d ≥ 10
	TagValley      = "valley" // a curved narrow valley (Rosenbrock)
)

// Suites of the catalogue benchmarks.
const (
	SuiteTune    = "tune"
	SuiteHeldOut = "heldout"
	SuiteAll     = "all"
)

// HeldOutSeedOffset shifts the seeds of the held-out part: 1001..1000+S.
const HeldOutSeedOffset = 1000

// Seeds returns the problem's seeds for s seeds per cell: 1..s for the tune
// part, 1001..1000+s for the held-out part (none for s < 1).
func (p *TruthProblem) Seeds(s int) []uint64 {
	if s < 1 {
		return nil
	}
	off := uint64(0)
	if p.HeldOut {
		off = HeldOutSeedOffset
	}
	seeds := make([]uint64, s)
	for i := range seeds {
		seeds[i] = off + uint64(i) + 1
	}
	return seeds
}

// Part is "held-out" or "tune".
func (p *TruthProblem) Part() string {
	if p.HeldOut {
		return "held-out"
	}
	return "tune"
}

// HasTag reports whether the problem carries tag.
func (p *TruthProblem) HasTag(tag string) bool { return slices.Contains(p.Tags, tag) }

// observe is what a trial at x reports.
func (p *TruthProblem) observe(x []float64, rng *rand.Rand) float64 {
	if p.Observe != nil {
		return p.Observe(x, rng)
	}
	return p.Eval(x)
}

// validate checks that the problem is complete and consistent.
func (p *TruthProblem) validate() error {
	switch {
	case p.Name == "" || strings.ContainsAny(p.Name, " /\\,"):
		return fmt.Errorf("bench: truth problem name %q must be non-empty without spaces, slashes or commas", p.Name)
	case p.Space == nil || p.Space.Dim() == 0:
		return fmt.Errorf("bench: truth problem %s: no space", p.Name)
	case p.Eval == nil:
		return fmt.Errorf("bench: truth problem %s: no Eval", p.Name)
	case (p.Space.Objective == space.Maximize) != p.HasTag(TagMaximize):
		return fmt.Errorf("bench: truth problem %s: direction %s does not match its tags %v", p.Name, p.Space.Objective, p.Tags)
	case (p.Main == nil) != (p.Total == nil):
		return fmt.Errorf("bench: truth problem %s: give both exact main and total indices or neither", p.Name)
	case p.Main != nil && (len(p.Main) != p.Space.Dim() || len(p.Total) != p.Space.Dim()):
		return fmt.Errorf("bench: truth problem %s: %d main and %d total indices for %d parameters", p.Name, len(p.Main), len(p.Total), p.Space.Dim())
	}
	return nil
}

// CatalogueOptions say where the tables of the catalogue are.
type CatalogueOptions struct {
	// DataDir holds the shared CSVs (lda_on_grid.csv, svm_on_grid.csv,
	// logreg_on_grid.csv; default ../shared/data, relative to the
	// repository's root like the other benchmarks).
	DataDir string
}

// SkippedTable is a table of the catalogue that is absent here.
type SkippedTable struct {
	Name    string
	HeldOut bool
	Reason  string
}

// LoadTruthCatalogue returns every problem of the catalogue, the synthetic
// ones first, and the tables whose file is absent (a machine without the
// shared directory runs the synthetic problems and the built-in tables
// only).
func LoadTruthCatalogue(o CatalogueOptions) ([]*TruthProblem, []SkippedTable, error) {
	if o.DataDir == "" {
		o.DataDir = "../shared/data"
	}
	problems, err := truthSynthetic()
	if err != nil {
		return nil, nil, err
	}
	tables, skipped, err := truthTables(o)
	if err != nil {
		return nil, nil, err
	}
	problems = append(problems, tables...)
	seen := map[string]bool{}
	for _, p := range problems {
		if err := p.validate(); err != nil {
			return nil, nil, err
		}
		if seen[p.Name] {
			return nil, nil, fmt.Errorf("bench: truth problem %s defined twice", p.Name)
		}
		seen[p.Name] = true
	}
	return problems, skipped, nil
}

// SelectTruthProblems returns the problems of suite (tune, heldout or all)
// in catalogue order, restricted to names when given. A name outside the
// suite is an error, so that a tune run cannot print a held-out number by
// accident.
func SelectTruthProblems(all []*TruthProblem, suite string, names []string) ([]*TruthProblem, error) {
	in := func(p *TruthProblem) bool { return true }
	switch suite {
	case SuiteTune, "":
		in = func(p *TruthProblem) bool { return !p.HeldOut }
	case SuiteHeldOut:
		in = func(p *TruthProblem) bool { return p.HeldOut }
	case SuiteAll:
	default:
		return nil, fmt.Errorf("bench: suite %q: want %s, %s or %s", suite, SuiteTune, SuiteHeldOut, SuiteAll)
	}
	byName := map[string]*TruthProblem{}
	var out []*TruthProblem
	for _, p := range all {
		byName[p.Name] = p
		if in(p) && (len(names) == 0 || slices.Contains(names, p.Name)) {
			out = append(out, p)
		}
	}
	for _, n := range names {
		p, ok := byName[n]
		switch {
		case !ok:
			var valid []string
			for _, q := range all {
				if in(q) {
					valid = append(valid, q.Name)
				}
			}
			return nil, fmt.Errorf("bench: unknown problem %q (suite %s: %s)", n, suite, strings.Join(valid, ", "))
		case !in(p):
			return nil, fmt.Errorf("bench: problem %q is not in the %s suite (it is in the %s part)", n, suite, p.Part())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: the %s suite has no problems here", suite)
	}
	return out, nil
}

// nameSeed is a stream constant of a name, so that problems with the same
// seed draw different data.
func nameSeed(parts ...string) uint64 {
	h := fnv.New64a()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// truthSeed seeds the Monte Carlo and quasi-Monte Carlo truths; it is fixed,
// so the truths are the same in every run.
const truthSeed = 20261127

// pdTruth is the true PD of a problem: exact when the problem gives it,
// otherwise by Monte Carlo with samples points, computed at every grid value
// of the engine's default grid up front (the explanations ask for exactly
// those), so that workers share it without waiting.
func pdTruth(p *TruthProblem, samples int) (*truePD, error) {
	t := newTruePD(p.Eval, p.PD, p.Space, samples, nameSeed(p.Name)^truthSeed)
	for j := range p.Space.Params {
		grid, err := p.Space.Grid(j, pdp.DefaultGridSize)
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", p.Name, err)
		}
		for _, v := range grid {
			if pd, _ := t.withError(j, v); math.IsNaN(pd) || math.IsInf(pd, 0) {
				return nil, fmt.Errorf("bench: %s: true PD of %s at %v is %v", p.Name, p.Space.Params[j].Name, v, pd)
			}
		}
	}
	return t, nil
}

// indexTruth is a problem's main and total Sobol indices: exact when the
// problem gives them, otherwise by a quasi-Monte Carlo pick-freeze design of
// samples base points on Eval (explain/sobol, the estimator of the engine's
// gp-sobol, on the true function); se is the largest design error (0 when
// exact).
func indexTruth(ctx context.Context, p *TruthProblem, samples int) (main, total []float64, se float64, err error) {
	if p.Main != nil {
		return p.Main, p.Total, 0, nil
	}
	sp := p.Space
	eval := func(x [][]float64, out []float64) error {
		for i, u := range x {
			out[i] = p.Eval(sp.Decode(u))
			if math.IsNaN(out[i]) || math.IsInf(out[i], 0) {
				return fmt.Errorf("value %v at %v", out[i], sp.Decode(u))
			}
		}
		return nil
	}
	res, err := sobol.Estimate(ctx, eval, sp, sobol.Options{Samples: samples, Seed: truthSeed, Workers: 1})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("bench: %s: true indices: %w", p.Name, err)
	}
	for j := range res.Main {
		main = append(main, res.Main[j].Estimate)
		total = append(total, res.Total[j].Estimate)
		se = math.Max(se, math.Max(res.Main[j].Std, res.Total[j].Std))
	}
	return main, total, se, nil
}

// checkSizes validates sizes per dimension.
func checkSizes(what string, sizes []int) error {
	if len(sizes) == 0 {
		return fmt.Errorf("bench: %s: no sizes", what)
	}
	for _, s := range sizes {
		if s < 1 || s > 200 {
			return fmt.Errorf("bench: %s: size %d per dimension out of 1..200", what, s)
		}
	}
	return nil
}

// checkKinds validates data kinds.
func checkKinds(what string, kinds []string) error {
	if len(kinds) == 0 {
		return fmt.Errorf("bench: %s: no data kinds", what)
	}
	for _, k := range kinds {
		if !slices.Contains(TruthDataKinds, k) {
			return fmt.Errorf("bench: %s: data %q: want one of %s", what, k, strings.Join(TruthDataKinds, ", "))
		}
	}
	return nil
}
