package opt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"xbo/acq"
	"xbo/gp"
	"xbo/history"
	"xbo/space"
)

// Settings is a study's optimizer configuration as a JSON document: what a
// client sends when it creates a study, what the store keeps, and what every
// process that proposes for or explains the study builds its optimizer from.
// Zero values mean the optimizer's defaults (see Config).
type Settings struct {
	// Strategy: ei, lcb, pi, pvar, random, or a BOBAX strategy (bax, bobax,
	// bobax-prob, eibax, bo-rs, a-bobax) set up by the fields below.
	Strategy  string `json:"strategy,omitempty"`
	Surrogate string `json:"surrogate,omitempty"`
	// OutputWarp: "yeo-johnson" or "none" (Config.OutputWarp).
	OutputWarp string `json:"output_warp,omitempty"`
	Kernel     string `json:"kernel,omitempty"`
	// LengthscalePrior: "none", "inverse-squared" or "dimension-scaled"
	// (Config.LengthscalePrior).
	LengthscalePrior string  `json:"lengthscale_prior,omitempty"`
	Tau              float64 `json:"tau,omitempty"`
	// SE: what lcb's s is the sd of, "latent" (default) or "predictive"
	// (an observation: mlrMBO's convention; Config.SE).
	SE            string  `json:"se,omitempty"`
	Xi            float64 `json:"xi,omitempty"`
	InitialDesign string  `json:"initial_design,omitempty"`
	InitialSize   int     `json:"initial_size,omitempty"`
	Liar          string  `json:"liar,omitempty"`
	AcqOptimizer  string  `json:"acq_optimizer,omitempty"`
	Candidates    int     `json:"candidates,omitempty"`
	// LocalCandidates: perturbations of the best trials scored beside the
	// uniform candidates (default 500; -1 none).
	LocalCandidates int `json:"local_candidates,omitempty"`
	// TrustRegion: "alternate", "always" or "none" (Config.TrustRegion).
	TrustRegion string `json:"trust_region,omitempty"`
	// ExactPoints and MeanPoints: the GP is exact up to ExactPoints
	// completed trials (default 256), a subset-of-data GP beyond, its mean
	// on MeanPoints (default 1000).
	ExactPoints int `json:"exact_points,omitempty"`
	MeanPoints  int `json:"mean_points,omitempty"`
	// BOBAX settings (Moosbauer et al. 2022): interleaving period k, probability
	// π of bobax-prob, EIBAX's β, a-BOBAX's tolerance on the mean PD band
	// half-width (objective units), and the parameters whose PDPs should be
	// accurate (default all). An a-BOBAX optimizer rebuilt from history decides
	// its switch afresh from the current bands, which is the same rule it
	// applied before.
	K           int      `json:"k,omitempty"`
	Pi          float64  `json:"pi,omitempty"`
	Beta        float64  `json:"beta,omitempty"`
	PDTolerance float64  `json:"pd_tolerance,omitempty"`
	PDParams    []string `json:"pd_params,omitempty"`
	// Resource names the study's budget, what its intermediate-value steps
	// count, and its range: {"name": "epochs", "min": 1, "max": 81}.
	// Proposals then learn from trials stopped early (Config.Resource).
	Resource *Resource `json:"resource,omitempty"`
	// Seed makes proposals reproducible; the server picks and stores one when
	// it is not given, so every server process proposes from the same streams.
	Seed *uint64 `json:"seed,omitempty"`
}

// ParseSettings reads a settings document; empty or null gives the defaults,
// unknown fields are errors.
func ParseSettings(raw json.RawMessage) (Settings, error) {
	var cfg Settings
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return cfg, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		// The decoder's own message names Go types ("Go struct field
		// Settings.candidates of type int"); say it in the document's terms.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return cfg, fmt.Errorf("optimizer: %s: want %s, got %s", te.Field, jsonKind(te.Type.Kind()), te.Value)
		}
		return cfg, fmt.Errorf("optimizer: %w", err)
	}
	return cfg, nil
}

// jsonKind names a Go kind as a settings document's value type.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer (digits, no exponent or fraction)"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// MaxCandidateCells bounds (candidates + local candidates) × parameters.
// Each candidate of an ask's acquisition search is a row of the space's
// dimension, encoded and scored while the ask runs, so this product, not
// either factor alone, sets an ask's memory: with the per-setting limits
// alone (100,000 each, 500 parameters) one ask held gigabytes. The bound
// it keeps an ask under is stated and measured in docs/api.md ("Limits").
const MaxCandidateCells = 4_000_000

// checkCandidateCells refuses settings whose candidate search over sp
// exceeds MaxCandidateCells, naming the limit and the largest count the
// space allows, so that the 400 says what to change.
func (c Settings) checkCandidateCells(sp *space.Space) error {
	if sp == nil {
		return errors.New("opt: no space")
	}
	cand, local := c.Candidates, c.LocalCandidates
	if cand == 0 {
		cand = acq.DefaultCandidates
	}
	switch {
	case local == 0:
		local = defaultLocalCandidates
	case local < 0:
		local = 0
	}
	// Out-of-range counts are refused by New with their own message; the
	// product is checked only for counts that could be valid.
	if cand < 0 || cand > MaxCandidates || local > MaxCandidates {
		return nil
	}
	d := max(sp.Dim(), 1)
	if cells := (cand + local) * d; cells > MaxCandidateCells {
		return fmt.Errorf("(candidates %d + local_candidates %d) × %d parameters = %d exceeds the limit of %d on (candidates + local_candidates) × parameters, which bounds an ask's memory: candidates + local_candidates ≤ %d for this space",
			cand, local, d, cells, MaxCandidateCells, MaxCandidateCells/d)
	}
	return nil
}

// New builds the optimizer these settings describe over sp, resuming from
// history; workers bounds one proposal's goroutines (0: the default).
func (c Settings) New(sp *space.Space, history []Trial, workers int) (*Optimizer, error) {
	if err := c.checkCandidateCells(sp); err != nil {
		return nil, err
	}
	return New(c.Config(sp, history, workers))
}

// NewMultiObjective builds the optimizer these settings describe for a
// study with several objectives or constraints (sp's Objectives and
// Constraints): NewMultiObjective over sp's directions, its models and
// candidate search configured by the settings. A resumed history's
// complete trials carry Values and Constraints.
func (c Settings) NewMultiObjective(sp *space.Space, history []Trial, workers int) (MultiObjective, error) {
	if sp == nil {
		return nil, errors.New("opt: no space")
	}
	if c.Resource != nil {
		return nil, errors.New("opt: a resource (the configuration × budget model) is for one objective; a study with several objectives or constraints learns from final values only")
	}
	if err := c.checkCandidateCells(sp); err != nil {
		return nil, err
	}
	return NewMultiObjective(c.Config(sp, history, workers), sp.Directions())
}

// Config is the optimizer configuration these settings describe over sp
// (validated by New), resuming from history; workers bounds one proposal's
// goroutines (0: the default).
func (c Settings) Config(sp *space.Space, history []Trial, workers int) Config {
	var seed uint64
	if c.Seed != nil {
		seed = *c.Seed
	}
	return Config{
		Space: sp, Strategy: c.Strategy, Surrogate: c.Surrogate, OutputWarp: c.OutputWarp, Kernel: c.Kernel, LengthscalePrior: c.LengthscalePrior, Tau: c.Tau, SE: c.SE, Xi: c.Xi,
		InitialDesign: c.InitialDesign, InitialSize: c.InitialSize, Liar: c.Liar,
		AcqOptimizer: c.AcqOptimizer, Candidates: c.Candidates, LocalCandidates: c.LocalCandidates, TrustRegion: c.TrustRegion, ExactPoints: c.ExactPoints, MeanPoints: c.MeanPoints, Seed: seed, History: history, Workers: workers,
		Resource: c.Resource,
		BOBAX:    BOBAXConfig{K: c.K, Pi: c.Pi, Beta: c.Beta, Tolerance: c.PDTolerance, Params: c.PDParams},
	}
}

// ProposalMeta is what the optimizer records about a proposal: the number
// of complete trials its surrogate was fitted on (of trials that reached
// Budget, for a multi-fidelity model fitted below the full budget), that
// surrogate's GP hyperparameters, and a note on unusual proposals. Stores keep it verbatim
// as the trial's meta, so the proposing surrogate can be rebuilt exactly.
type ProposalMeta struct {
	Observed int       `json:"observed,omitempty"`
	Hyper    *gp.Hyper `json:"hyper,omitempty"`
	Note     string    `json:"note,omitempty"`
	Fidelity bool      `json:"fidelity,omitempty"`
	Warped   bool      `json:"warped,omitempty"`
}

// Meta returns the trial's proposal record.
func (t *Trial) Meta() ProposalMeta {
	return ProposalMeta{Observed: t.Observed, Hyper: t.Hyper, Note: t.Note, Fidelity: t.Fidelity, Warped: t.Warped}
}

// SetMeta restores a proposal record read back from a store.
func (t *Trial) SetMeta(m ProposalMeta) {
	t.Observed, t.Hyper, t.Note, t.Fidelity, t.Warped = m.Observed, m.Hyper, m.Note, m.Fidelity, m.Warped
}

// notProposals are acquisition labels of trials no surrogate chose.
var notProposals = map[string]bool{
	AcqInitialDesign: true, AcqRandom: true, AcqRandomFallback: true,
	"design": true, "initial": true, "init": true, "enqueued": true, "imported": true, "requeue": true,
}

// FromHistory turns a study's history into an optimizer history: expired
// trials are left out (their requeued copies stand for them), complete
// trials keep their completion order, failed ones count as failed, pruned
// ones as pruned (which steers proposals as a failure does unless the
// optimizer has a Resource; see the package doc), the rest as pending;
// every trial keeps its intermediate values. A trial's recorded proposal (history.Trial's
// Meta) is read back; a history without records (a CSV file, an import) is
// taken as a sequential run, so a model-chosen trial — one whose acquisition
// is not a design, random or enqueued label, or every trial from the
// max(4·d, 5)-th on when no trial names its acquisition — was proposed from
// every trial completed before it. It returns the optimizer history and
// each trial number's id in it.
func FromHistory(h *history.History) ([]Trial, map[int64]int64, error) {
	if h == nil || h.Space == nil {
		return nil, nil, fmt.Errorf("opt: no history")
	}
	named := false
	for i := range h.Trials {
		named = named || h.Trials[i].Acquisition != ""
	}
	start := max(4*h.Space.Dim(), 5)
	// completedBefore counts the complete trials with a smaller completion
	// rank; trials are in number order, which for a sequential run is the
	// order they were completed in.
	ranks := make([]int, 0, len(h.Trials))
	hist := make([]Trial, 0, len(h.Trials))
	ids := make(map[int64]int64, len(h.Trials))
	for i := range h.Trials {
		t := &h.Trials[i]
		if t.State == history.Expired {
			continue
		}
		ot := Trial{ID: int64(len(hist) + 1), Params: slices.Clone(t.Params), Acquisition: t.Acquisition, Value: math.NaN(), Completion: -1,
			Curve: slices.Clone(t.Intermediate)}
		recorded := false
		if len(t.Meta) > 0 {
			var m ProposalMeta
			if json.Unmarshal(t.Meta, &m) == nil {
				ot.SetMeta(m)
				recorded = true
			}
		}
		if !recorded {
			proposal := (named && t.Acquisition != "" && !notProposals[t.Acquisition]) || (!named && i >= start)
			if proposal && len(ranks) >= 2 { // a surrogate needs two observations
				ot.Observed = len(ranks)
			}
		}
		switch t.State {
		case history.Complete:
			if !t.Usable() {
				ot.State = Failed // a complete trial without a finite value teaches nothing
				break
			}
			ot.State, ot.Value, ot.Completion = Complete, t.Value, t.Completion
			ranks = append(ranks, t.Completion)
		case history.Failed:
			ot.State = Failed
		case history.Pruned:
			ot.State = Pruned
		default:
			ot.State = Pending
		}
		ids[t.Number] = ot.ID
		hist = append(hist, ot)
	}
	// Completion ranks must be 0..c−1 among the trials kept.
	slices.Sort(ranks)
	dense := make(map[int]int, len(ranks))
	for k, r := range ranks {
		dense[r] = k
	}
	for k := range hist {
		if hist[k].State == Complete {
			hist[k].Completion = dense[hist[k].Completion]
		}
	}
	return hist, ids, nil
}
