// Package history is the one plain-data form of a study's trials that every
// source produces and every consumer reads: the store (a study of the
// service), the importers (Optuna, SMAC3, generic tables) and the trials CSV
// reader all build a History; the explanation engine, the report and the
// CLI read one. It owns the three decisions that must never differ between
// surfaces: which trials are usable, which is best, and how they are encoded
// for a surrogate (DESIGN.md, "The seams": one study history).
//
// Values are in the objective's own units and direction, as the user wrote
// them: a maximize study keeps its values positive-is-better, and Best picks
// the largest. Parameters are natural values in the order of the space
// (package space conventions: a categorical's level index, NaN for an
// inactive conditional parameter).
//
// A budget is a step of the trials' intermediate values (an epoch count, a
// data fraction in the worker's own units). The performance of a trial at
// budget b is defined here, once, for every surface:
//
//   - Which trials: the finished ones — complete and pruned — that reached
//     b, meaning one of their finite intermediate values is at a step ≥ b.
//     A pruned trial that reached b is as informative there as a complete
//     one, so it counts (leaving it out would keep only the trials the
//     pruner liked, a selection on the outcome). Running trials are left out
//     because their curves still change (an explanation at a budget would
//     change under the dashboard's eyes), and failed or expired trials
//     because their last reports may be what made them fail.
//   - Which value: the value reported at the largest step ≤ b. When the
//     trial reported exactly at b this is that value; when workers report
//     on different grids (every epoch, every other epoch, Hyperband's rungs)
//     it is the latest value the trial had with at most b resource, so no
//     trial gets credit for resource beyond b, and a trial whose reports
//     skip b is not dropped (as "exactly at b" would drop it). A trial whose
//     first report is beyond b has no value at b and is left out; so is one
//     that stopped before b (extending its curve would invent a performance
//     it never showed).
//
// The final value of a trial is its objective value (complete, finite):
// Usable, the budget-free notion (Trial.ValueAt, History.AtBudget and
// History.Budgets apply this definition).
package history

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"time"

	"xbo/space"
)

// State is a trial's stage. Only Complete trials with a finite value are
// usable by surrogates and explanations. A Pruned trial was stopped early
// by a pruner: it keeps its intermediate values and, as Value, the last of
// them (NaN when it reported none); that value is not at the full budget,
// so it is not usable either, but a pruned trial is no failure.
type State string

// Trial states, a superset of what every source records: the store's
// life cycle (pending, running, complete, failed, expired) and other tools'
// outcomes (pruned).
const (
	Pending  State = "pending"
	Running  State = "running"
	Complete State = "complete"
	Failed   State = "failed"
	Pruned   State = "pruned"
	Expired  State = "expired"
)

// States lists every state.
var States = []State{Pending, Running, Complete, Failed, Pruned, Expired}

// Valid reports whether s is a known state.
func (s State) Valid() bool { return slices.Contains(States, s) }

// Intermediate is a value reported before a trial finished (e.g. the
// validation loss after some epochs).
type Intermediate struct {
	Step  int64   `json:"step"`
	Value float64 `json:"value"`
}

// Trial is one evaluation.
type Trial struct {
	// Number identifies the trial in its source (the store's trial number,
	// Optuna's number, a table's row index); trials are kept in number order.
	Number int64
	State  State
	// Params are natural values in space order; NaN marks an inactive (or
	// unrecorded) parameter.
	Params []float64
	// Value is the objective value in the objective's own units; NaN when
	// the trial has none. With several objectives it is the first one's.
	Value float64
	// Values are every objective's value, in the space's objective order,
	// for a study with several objectives (Values[0] == Value); nil for a
	// study with one.
	Values []float64
	// Constraints are the trial's constraint values in the space's order
	// (feasible when every one is ≤ 0); nil when it reported none.
	Constraints  []float64
	Intermediate []Intermediate
	UserAttrs    map[string]any
	// Acquisition names what chose the configuration (an acquisition,
	// "initial-design", "random", "enqueued", an importer's origin, ...).
	Acquisition string
	Worker      string
	FailReason  string
	// Note is what a person wrote about the trial ("" when nothing).
	Note string
	// Meta is what the proposing optimizer recorded about the proposal,
	// verbatim (package opt reads it back to rebuild that surrogate).
	Meta json.RawMessage
	// Completion is the order in which the trial was completed among the
	// study's complete trials (0 for the first), −1 when it is not complete.
	Completion int
	// Timestamps; the zero time when the source does not record them.
	Created, Started, Finished time.Time
}

// Usable reports whether the trial has a value surrogates can learn from: it
// is complete and its value is finite. This is the one place that decides
// it; a pruned trial is not usable (its value is an intermediate one).
func (t *Trial) Usable() bool {
	if t.State != Complete || !finite(t.Value) {
		return false
	}
	for _, v := range t.Values {
		if !finite(v) {
			return false
		}
	}
	return true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Duration is how long the trial ran, 0 when unknown.
func (t *Trial) Duration() time.Duration {
	if t.Started.IsZero() || t.Finished.IsZero() || t.Finished.Before(t.Started) {
		return 0
	}
	return t.Finished.Sub(t.Started)
}

// History is a study: its space (whose Objective is the direction), its
// trials in number order, and where it came from.
type History struct {
	// Name is the study's name ("" for a file without one).
	Name string
	// Source says where the history came from, for summaries and messages
	// (a file path, "optuna-rdb:study.db", "store").
	Source string
	Space  *space.Space
	Trials []Trial
	// Optimizer is the study's optimizer configuration as stored (JSON;
	// empty when the source has none, e.g. a CSV file).
	Optimizer json.RawMessage
	// StudyVersion is the store's version counter when the history was read
	// (0 for files): a dashboard compares it with the events it has seen.
	StudyVersion int64
	// Warnings name everything a source could not carry over exactly.
	Warnings []string
	// Objective names the objective a history of one objective of a study
	// with several holds (ForObjective); empty otherwise.
	Objective string
	// Note is what a person wrote about the study ("" when nothing).
	Note string
}

// Errors wrapped by Validate and the accessors.
var (
	ErrNoSpace  = errors.New("history has no space")
	ErrTooFew   = errors.New("too few usable trials")
	ErrBadTrial = errors.New("invalid trial")
)

// Direction is the objective's direction (minimize when the space leaves it
// empty).
func (h *History) Direction() space.Direction {
	if h.Space != nil && h.Space.Objective == space.Maximize {
		return space.Maximize
	}
	return space.Minimize
}

// Validate checks that every trial fits the space: one natural value per
// parameter, valid for the space where the trial is usable, a known state,
// and numbers in increasing order.
func (h *History) Validate() error {
	if h == nil || h.Space == nil {
		return ErrNoSpace
	}
	d := h.Space.Dim()
	if d == 0 {
		return fmt.Errorf("%w: the space has no parameters", ErrNoSpace)
	}
	for i := range h.Trials {
		t := &h.Trials[i]
		if !t.State.Valid() {
			return fmt.Errorf("%w: trial %d: unknown state %q", ErrBadTrial, t.Number, t.State)
		}
		if i > 0 && t.Number <= h.Trials[i-1].Number {
			return fmt.Errorf("%w: trial numbers must increase (trial %d follows %d)", ErrBadTrial, t.Number, h.Trials[i-1].Number)
		}
		if len(t.Params) != d {
			return fmt.Errorf("%w: trial %d has %d parameter values for %d parameters", ErrBadTrial, t.Number, len(t.Params), d)
		}
		if t.Usable() {
			if err := h.Space.Validate(t.Params); err != nil {
				return fmt.Errorf("%w: trial %d: %v", ErrBadTrial, t.Number, err)
			}
		}
		if err := h.checkOutcome(t); err != nil {
			return err
		}
	}
	return nil
}

// Usable returns the indices (into Trials) of the usable trials, in number
// order.
func (h *History) Usable() []int {
	var idx []int
	for i := range h.Trials {
		if h.Trials[i].Usable() {
			idx = append(idx, i)
		}
	}
	return idx
}

// Counts returns how many trials are in each state.
func (h *History) Counts() map[State]int {
	c := map[State]int{}
	for i := range h.Trials {
		c[h.Trials[i].State]++
	}
	return c
}

// Better reports whether value a is better than b in the study's direction.
func (h *History) Better(a, b float64) bool {
	if h.Direction() == space.Maximize {
		return a > b
	}
	return a < b
}

// Best returns the index (into Trials) of the best usable feasible trial
// on the (first) objective, the earliest among equals, and false when no
// trial is usable and feasible. An infeasible trial is never best. With
// several objectives this is the Pareto-optimal trial best on the first
// objective; ParetoFront gives them all.
func (h *History) Best() (int, bool) {
	best := -1
	for i := range h.Trials {
		t := &h.Trials[i]
		if t.Usable() && h.Feasible(t) && (best < 0 || h.Better(t.Value, h.Trials[best].Value) ||
			t.Value == h.Trials[best].Value && h.tieBetter(t, &h.Trials[best])) {
			best = i
		}
	}
	return best, best >= 0
}

// Index returns the index (into Trials) of the trial with the given number.
func (h *History) Index(number int64) (int, bool) {
	i, ok := slices.BinarySearchFunc(h.Trials, number, func(t Trial, n int64) int {
		switch {
		case t.Number < n:
			return -1
		case t.Number > n:
			return 1
		}
		return 0
	})
	return i, ok
}

// Data is the usable part of a history as a surrogate sees it.
type Data struct {
	// X are the usable trials in unit-cube encoding, Y their values in the
	// objective's own units, both in number order.
	X [][]float64
	Y []float64
	// Index maps each row to its trial (an index into History.Trials).
	Index []int
	// Best is the row of the best usable trial.
	Best int
}

// Encode returns the usable trials encoded for a surrogate. It fails when
// fewer than min trials are usable.
func (h *History) Encode(min int) (*Data, error) {
	if h == nil || h.Space == nil {
		return nil, ErrNoSpace
	}
	d := &Data{Best: -1}
	for i := range h.Trials {
		t := &h.Trials[i]
		if !t.Usable() {
			continue
		}
		u, err := h.Space.Encode(t.Params)
		if err != nil {
			return nil, fmt.Errorf("%w: trial %d: %v", ErrBadTrial, t.Number, err)
		}
		if h.Feasible(t) && (d.Best < 0 || h.Better(t.Value, d.Y[d.Best])) {
			d.Best = len(d.Y)
		}
		d.X = append(d.X, u)
		d.Y = append(d.Y, t.Value)
		d.Index = append(d.Index, i)
	}
	if len(d.Y) < min {
		return nil, fmt.Errorf("%w: %d usable (complete, finite) trials of %d; need at least %d", ErrTooFew, len(d.Y), len(h.Trials), min)
	}
	if d.Best < 0 && len(d.Y) > 0 {
		// No feasible trial: the best row is the best value all the same,
		// so explanations still have a configuration to start from.
		for r := range d.Y {
			if d.Best < 0 || h.Better(d.Y[r], d.Y[d.Best]) {
				d.Best = r
			}
		}
	}
	return d, nil
}

// Fingerprint identifies what an explanation of the usable trials depends
// on: the space (with its direction) and the usable trials' numbers,
// parameters and values. Two histories with the same fingerprint give the
// same explanations, whatever their source; a trial that starts running or
// fails does not change it. With all set it covers every trial (states,
// acquisitions, proposal records and completion order too), for explanations
// of the optimizer's proposals.
func (h *History) Fingerprint(all bool) (string, error) {
	if h == nil || h.Space == nil {
		return "", ErrNoSpace
	}
	f, err := newFingerprinter(h.Space)
	if err != nil {
		return "", err
	}
	putInt, putFloat, putString := f.putInt, f.putFloat, f.putString
	if all {
		putString(string(h.Optimizer))
	}
	for i := range h.Trials {
		t := &h.Trials[i]
		if !all && !t.Usable() {
			continue
		}
		putInt(t.Number)
		for _, v := range t.Params {
			putFloat(v)
		}
		putFloat(t.Value)
		putInt(int64(len(t.Values)))
		for _, v := range t.Values {
			putFloat(v)
		}
		putInt(int64(len(t.Constraints)))
		for _, v := range t.Constraints {
			putFloat(v)
		}
		if all {
			putString(string(t.State))
			putString(t.Acquisition)
			putString(string(t.Meta))
			putInt(int64(t.Completion))
		}
	}
	return f.sum(), nil
}

// fingerprinter hashes a space and then numbers and strings, each
// unambiguously (strings with their length).
type fingerprinter struct {
	h   hash.Hash
	buf [8]byte
}

func newFingerprinter(sp *space.Space) (*fingerprinter, error) {
	b, err := json.Marshal(sp)
	if err != nil {
		return nil, fmt.Errorf("history: fingerprint: %w", err)
	}
	f := &fingerprinter{h: sha256.New()}
	f.putString(string(b))
	return f, nil
}

func (f *fingerprinter) putInt(v int64) {
	binary.LittleEndian.PutUint64(f.buf[:], uint64(v))
	f.h.Write(f.buf[:])
}

func (f *fingerprinter) putFloat(v float64) { f.putInt(int64(math.Float64bits(v))) }

func (f *fingerprinter) putString(s string) {
	f.putInt(int64(len(s)))
	f.h.Write([]byte(s))
}

func (f *fingerprinter) sum() string { return hex.EncodeToString(f.h.Sum(nil)[:16]) }

// CompletionOrder sets every trial's Completion from the order of the given
// keys (smaller first; ties keep number order): complete trials get 0, 1, …,
// the others −1. Sources that record when trials finished call it with
// their finishing order; files call it with the row order.
func (h *History) CompletionOrder(key func(t *Trial) int64) {
	var complete []int
	for i := range h.Trials {
		h.Trials[i].Completion = -1
		if h.Trials[i].State == Complete {
			complete = append(complete, i)
		}
	}
	slices.SortStableFunc(complete, func(a, b int) int {
		ka, kb := key(&h.Trials[a]), key(&h.Trials[b])
		switch {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	for rank, i := range complete {
		h.Trials[i].Completion = rank
	}
}
