// Package store keeps studies and their trials for the tuning service
// (DESIGN.md, "The service"). One interface, Store, has two backends: an
// embedded SQLite file (the default; pure-Go driver, WAL journal, busy
// timeout, immediate write transactions) and PostgreSQL (pgx pool, schema
// migrations from an embedded directory, advisory locks per study) for several
// servers sharing one database.
//
// The contract that makes parallel tuning correct lives here, not in the
// server:
//
//   - An ask is serialized per study: while one proposal is being computed no
//     other trial of that study can be created, so the proposer always sees
//     every pending trial (the constant-liar strategy of the optimizer needs
//     them) and trial numbers are dense and unique.
//   - A queued (pending) trial is handed to exactly one worker.
//   - Every change to a study's trials takes the next value of the study's
//     version counter inside the same transaction, while holding the study
//     row's lock, so versions are assigned in commit order. A reader that has
//     seen every trial up to version v can catch up by reading the trials whose
//     version is above v; that is how servers keep a per-study optimizer cached
//     in memory and how the dashboard polls for events.
//   - A told value is written in one transaction and is never changed again:
//     repeating the same tell is a no-op, a different one is ErrConflict.
//   - An ask may carry an idempotency key (AskRequest.Key), stored on the
//     trial it hands out in the same transaction; a unique index lets no
//     second trial be handed out under it, and AskedWith finds the trial, so
//     a repeated ask can be answered with it.
//   - A PostgreSQL transaction whose connection died runs again on a fresh
//     one. When the connection died at the commit, a write that must not
//     happen twice first asks the database whether the transaction
//     committed (txid_status); idempotent writes simply run again.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"xbo/space"
)

// State is the life-cycle stage of a trial.
type State string

// Trial states. Pending trials wait in the study's queue (enqueued by a user
// or re-queued after an expiry) until an ask hands them out; running trials
// belong to a worker until it tells or its deadline passes, when they become
// expired and their configuration is queued again as a new pending trial.
// A pruned trial was stopped early on purpose (its worker followed the
// study's pruner): it keeps its intermediate values and, as its value, the
// last of them. It is not a failure, and not a finished evaluation either.
const (
	Pending  State = "pending"
	Running  State = "running"
	Complete State = "complete"
	Failed   State = "failed"
	Pruned   State = "pruned"
	Expired  State = "expired"
)

// States lists every state in life-cycle order.
var States = []State{Pending, Running, Complete, Failed, Pruned, Expired}

// Valid reports whether s is one of the known states.
func (s State) Valid() bool {
	for _, v := range States {
		if s == v {
			return true
		}
	}
	return false
}

// Finished reports whether a trial in this state has its outcome recorded
// (it never changes again).
func (s State) Finished() bool { return s == Complete || s == Failed || s == Pruned }

// Errors returned by every backend; test them with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	ErrConflict = errors.New("conflict")
	ErrInvalid  = errors.New("invalid")
	// ErrStorageFull: the database's disk (or its size limit) is full.
	// Nothing of the failed operation was stored; it can be retried once
	// space is freed.
	ErrStorageFull = errors.New("the store's disk is full: free space, then retry")
	// ErrUnavailable: the database cannot be reached or stays locked
	// (PostgreSQL down, restarting or out of connections; SQLite locked
	// by another process past its busy timeout). It is an outage, not a
	// fault of the request or of xbo: retry later. A write that failed
	// with it was not stored, except one whose commit answer was lost
	// (asks with an Idempotency-Key find their trial again).
	ErrUnavailable = errors.New("the store is unavailable: retry later")
)

// Study is a tuning study. Space, Optimizer and Pruner are JSON documents
// that the store keeps verbatim; the server parses them.
type Study struct {
	ID        int64           `json:"id"`
	Name      string          `json:"name"`
	Direction string          `json:"direction"`
	Space     json.RawMessage `json:"space"`
	Optimizer json.RawMessage `json:"optimizer"`
	// Pruner is the study's pruner configuration (package prune); {} when
	// the study has none.
	Pruner    json.RawMessage `json:"pruner"`
	CreatedAt time.Time       `json:"created_at"`
	// Version is the highest version stamped on the study's trials (0 when
	// it has none): every change of a trial takes a new, larger version.
	Version int64 `json:"version"`
	// NextNumber is the number the next new trial will get.
	NextNumber int64 `json:"next_number"`
	// NumObjectives and NumConstraints are the shape of a complete trial's
	// outcome, read from the space when the study was created: one
	// objective (Value alone) or that many Values, and that many
	// Constraints. The store refuses an outcome of another shape.
	NumObjectives  int `json:"-"`
	NumConstraints int `json:"-"`
	// Note is what a person wrote about the study ("" when nothing; see
	// Store.SetStudyNote).
	Note string `json:"note,omitempty"`
	// Fingerprint, set by Store.Study, changes whenever any trial of the
	// study changes: it is the study's id, its number of trials and the sum
	// of their versions, read in one snapshot. Versions only grow, so the
	// sum moves with every committed change, even when (PostgreSQL) a
	// change with a smaller version commits after one with a larger
	// version, which Version alone would miss. Caches of results derived
	// from the trials key on it.
	Fingerprint string `json:"-"`
}

// StudySummary is a study with its trial counts and best value.
type StudySummary struct {
	Study
	Counts map[State]int `json:"counts"`
	Best   *float64      `json:"best,omitempty"`
}

// ImportedTrial is a finished trial recorded from another tool. State is
// Complete (with Value), Failed (with Reason) or Pruned (with its last
// intermediate value as Value, when it has one); an empty State means
// Complete when Value is set and Failed otherwise.
type ImportedTrial struct {
	State  State
	Params map[string]any
	Value  *float64
	// Values and Constraints as in Trial (a complete trial only).
	Values, Constraints []float64
	Reason              string
	UserAttrs           map[string]any
	Intermediate        []Intermediate
	// Created, Started and Finished are the source's times; a zero one is
	// the import's instant (NewStudy.Now), so that durations and timelines
	// of imported trials are the source's own.
	Created, Started, Finished time.Time
}

// NewStudy describes a study to create.
type NewStudy struct {
	Name      string
	Direction string // "minimize" or "maximize"
	Space     json.RawMessage
	Optimizer json.RawMessage
	Pruner    json.RawMessage // optional; stored as {} when empty
	Now       time.Time
}

// Intermediate is a value a worker reported before finishing, e.g. a
// validation loss after some epochs.
type Intermediate struct {
	Step  int64   `json:"step"`
	Value float64 `json:"value"`
}

// Trial is one evaluation of a configuration.
type Trial struct {
	ID     int64 `json:"id"`
	Number int64 `json:"number"`
	State  State `json:"state"`
	// Params maps parameter names to natural values (numbers, or the level
	// name of a categorical); inactive parameters are absent.
	Params map[string]any `json:"params"`
	Value  *float64       `json:"value,omitempty"`
	// Values are every objective's value of a complete trial of a study
	// with several objectives (Values[0] is Value); nil otherwise.
	Values []float64 `json:"values,omitempty"`
	// Constraints are the constraint values the trial reported (feasible
	// when every one is ≤ 0); nil when it reported none.
	Constraints  []float64      `json:"constraints,omitempty"`
	Intermediate []Intermediate `json:"intermediate,omitempty"`
	UserAttrs    map[string]any `json:"user_attrs,omitempty"`
	Worker       string         `json:"worker,omitempty"`
	// Acquisition names what chose the configuration: the optimizer's
	// acquisition or design, "enqueued", "imported" or "requeue".
	Acquisition  string `json:"acquisition,omitempty"`
	FailReason   string `json:"fail_reason,omitempty"`
	RequeuedFrom *int64 `json:"requeued_from,omitempty"`
	// Meta is what the optimizer recorded about the proposal (e.g. the GP
	// hyperparameters it used), kept verbatim so a rebuilt optimizer can
	// warm-start from it.
	Meta       json.RawMessage `json:"meta,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	StartedAt  *time.Time      `json:"started_at,omitempty"`
	Deadline   *time.Time      `json:"deadline,omitempty"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	Version    int64           `json:"version"`
	// Note is what a person wrote about the trial ("" when nothing; see
	// Store.SetTrialNote).
	Note string `json:"note,omitempty"`
	// StudyID is the study's id: a study deleted and created again under
	// the same name has another one, so a cache of a study's settings
	// keyed by name can tell that it is stale.
	StudyID int64 `json:"-"`

	updatedUS int64 // when the trial last changed (events' settling window)
}

// NewTrial is a trial added by a user rather than proposed: with a Value it
// is recorded as complete (a result obtained elsewhere), otherwise it joins
// the queue as pending and the next ask hands it out.
type NewTrial struct {
	Params map[string]any
	Value  *float64
	// Values and Constraints as in Trial (with a Value only).
	Values, Constraints []float64
	UserAttrs           map[string]any
	Now                 time.Time
}

// AskRequest carries what the store needs to hand out a trial.
type AskRequest struct {
	Worker  string
	Now     time.Time
	Timeout time.Duration // running trials expire after this; 0 means never
	// HandOut, when set, gives the time a newly proposed trial is handed
	// out, read after the proposals are made: its start and deadline count
	// from then, so time spent proposing (or queued behind other asks) is
	// not taken from the worker's timeout. Nil means Now.
	HandOut func() time.Time
	// Key, when not empty, is the ask's idempotency key (see
	// Store.AskedWith): it is stored on the trial handed out, in the
	// transaction that hands it out. A key names one ask in the whole
	// store: handing out a second trial under a stored key fails with
	// ErrConflict.
	Key string
}

// KeyedAsk is what an ask with an idempotency key handed out: the trial
// and its study's name.
type KeyedAsk struct {
	Study string
	Trial Trial
}

// MaxAskKeyLength bounds an idempotency key (a UUID takes 36 bytes).
const MaxAskKeyLength = 200

// CheckAskKey checks an idempotency key: 1 to MaxAskKeyLength printable
// ASCII characters, no spaces, as the HTTP header that carries it allows.
func CheckAskKey(key string) error {
	if key == "" || len(key) > MaxAskKeyLength {
		return fmt.Errorf("%w: an idempotency key has 1 to %d characters, not %d", ErrInvalid, MaxAskKeyLength, len(key))
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return fmt.Errorf("%w: an idempotency key is printable ASCII without spaces (byte %d is 0x%02x)", ErrInvalid, i, key[i])
		}
	}
	return nil
}

// Proposal is a new configuration chosen by the optimizer.
type Proposal struct {
	Params      map[string]any
	Acquisition string
	Meta        json.RawMessage // optional JSON object, stored verbatim
}

// AskView is what a proposer may read while the study's ask lock is held.
type AskView interface {
	Study() *Study
	// Watch returns the trials numbered from or above, plus those listed in
	// numbers, in number order. A proposer that remembers which trials can
	// still change (pending, running, expired: complete and failed trials
	// never change again) catches up exactly with it, whatever the order in
	// which concurrent transactions committed.
	Watch(ctx context.Context, numbers []int64, from int64) ([]Trial, error)
	// Changed returns, in number order, every trial whose version is above
	// since, and the highest version among them (since when there are none).
	Changed(ctx context.Context, since int64) ([]Trial, int64, error)
	// Ordered reports whether versions become visible in the order they
	// were taken (SQLite). A proposer that has seen every trial up to
	// version v then catches up exactly, and more cheaply than with Watch,
	// with Changed(v).
	Ordered() bool
}

// ProposeFunc computes a new configuration when the queue is empty. It runs
// while no other trial of the study can be created. The store numbers the
// trial itself: view.Study().NextNumber.
type ProposeFunc func(ctx context.Context, view AskView) (Proposal, error)

// BatchProposeFunc proposes n configurations at once, each accounting for
// the ones before it (the store numbers them view.Study().NextNumber,
// NextNumber+1, ...).
type BatchProposeFunc func(ctx context.Context, view AskView, n int) ([]Proposal, error)

// Result is the outcome a worker tells: Complete with Value, Failed, or
// Pruned. A pruned trial's Value is NaN to keep its last intermediate value
// as its value (no value when it reported none), or a finite value to
// record instead.
type Result struct {
	State State // Complete, Failed or Pruned
	Value float64
	// Values are every objective's value of a complete trial of a study
	// with several objectives (Values[0] == Value), Constraints its
	// constraint values; both nil otherwise. The store checks that they
	// are finite; the study's server checks their number.
	Values, Constraints []float64
	Reason              string
	UserAttrs           map[string]any
	Now                 time.Time
}

// Report is an intermediate value; it also pushes back a running trial's
// deadline by Extend, so it doubles as a heartbeat.
type Report struct {
	Step   int64
	Value  float64
	Now    time.Time
	Extend time.Duration
}

// StepValue is one trial's intermediate value at one step.
type StepValue struct {
	Number int64
	Step   int64
	Value  float64
}

// TrialQuery selects trials for listing.
type TrialQuery struct {
	States       []State
	SinceVersion int64 // only trials changed after this version
	Offset       int
	Limit        int // 0 means no limit
}

// Store is the storage of studies and trials. Implementations are safe for
// concurrent use by many goroutines and, for PostgreSQL, many processes.
type Store interface {
	CreateStudy(ctx context.Context, s NewStudy) (*Study, error)
	Study(ctx context.Context, name string) (*Study, error)
	Studies(ctx context.Context) ([]StudySummary, error)
	DeleteStudy(ctx context.Context, name string) error

	// AddTrial enqueues a configuration or records one evaluated elsewhere.
	AddTrial(ctx context.Context, study string, t NewTrial) (*Trial, error)
	// ImportStudy creates a study together with trials evaluated
	// elsewhere, in one transaction: after a crash either the whole
	// study exists or nothing does.
	ImportStudy(ctx context.Context, s NewStudy, trials []ImportedTrial) (*Study, error)
	// ImportStudyFrom is ImportStudy for a history too large to hold: it
	// reads the trials from a sequence while it writes them, a bounded
	// batch at a time, all in the one transaction, so its memory does not
	// grow with the trials. An error the sequence yields rolls the whole
	// import back and is returned, wrapped. The sequence is not read when
	// the study cannot be created (ErrExists), so it may be reused.
	ImportStudyFrom(ctx context.Context, s NewStudy, trials iter.Seq2[ImportedTrial, error]) (*Study, error)
	// Ask hands out the oldest pending trial, or creates a running trial
	// from propose. It does not expire overdue trials; call Expire first.
	// With SQLite the proposal is made from a read snapshot, and made again
	// if a trial was created meanwhile (finally under the write lock):
	// propose may then be called more than once, and must forget its
	// earlier answers.
	Ask(ctx context.Context, study string, req AskRequest, propose ProposeFunc) (*Trial, error)
	// AskBatch is Ask for several workers in one transaction (one commit):
	// queued trials go to the first requests, the others get proposals.
	// On an error the trials already claimed in a committed transaction are
	// returned with it.
	AskBatch(ctx context.Context, study string, reqs []AskRequest, propose BatchProposeFunc) ([]*Trial, error)
	// AskedWith returns, for each of keys that an ask stored (AskRequest.Key),
	// the trial it handed out and its study, read in one snapshot. The key
	// stays with the trial while it runs and after it finishes; a trial that
	// expires or is released loses it (the ask no longer holds it), so the
	// same key may then hand out another trial. Unknown keys are absent.
	AskedWith(ctx context.Context, keys []string) (map[string]KeyedAsk, error)
	// Tell records a trial's outcome. It reports changed=false when the same
	// outcome was already recorded and returns ErrConflict for a different one.
	Tell(ctx context.Context, study string, number int64, r Result) (t *Trial, changed bool, err error)
	// Release hands a running trial back to the queue: it becomes pending
	// again, without worker or deadline, and the next ask hands it out. It
	// is for a trial made for an ask whose client went away before the
	// answer reached it. A trial that is not running is left as it is and
	// returned with released=false.
	Release(ctx context.Context, study string, number int64, now time.Time) (t *Trial, released bool, err error)
	// ReportIntermediate records an intermediate value of an unfinished trial.
	ReportIntermediate(ctx context.Context, study string, number int64, r Report) (*Trial, error)
	// CompleteAtStep returns the intermediate values that the study's
	// complete trials reported at exactly step (in no particular order),
	// and how many complete trials the study has, read in one snapshot:
	// what median and percentile pruners compare a running trial with.
	CompleteAtStep(ctx context.Context, study string, step int64) (values []float64, complete int, err error)
	// FirstFromStep returns, for every trial of the study (in any state)
	// that reported a step ≥ step, the first such step and its value, in
	// trial-number order: what successive-halving pruners compare at a rung.
	FirstFromStep(ctx context.Context, study string, step int64) ([]StepValue, error)
	// Expire marks running trials whose deadline is before now as expired and
	// queues their configurations again; it returns the expired trials.
	Expire(ctx context.Context, study string, now time.Time) ([]Trial, error)

	Trial(ctx context.Context, study string, number int64) (*Trial, error)
	Trials(ctx context.Context, study string, q TrialQuery) (trials []Trial, total int, err error)
	// Events returns the trials changed after version since and the version
	// to ask from next. With SQLite versions become visible in order. With
	// PostgreSQL they are drawn from a sequence before commit, so a change
	// is re-sent until it is five seconds old: it may arrive twice, and is
	// skipped only if some write takes more than five seconds to commit.
	Events(ctx context.Context, study string, since int64, now time.Time) (trials []Trial, next int64, err error)
	// Best returns the complete trial with the best value, ErrNotFound if none.
	Best(ctx context.Context, study string) (*Trial, error)
	// Read calls read with a view of the study in one read-only snapshot:
	// the view a proposer gets in an ask, without the ask lock, so that a
	// reader that mirrors the study's trials catches up with them as a
	// proposer does (AskView.Watch), while asks go on.
	Read(ctx context.Context, study string, read func(ctx context.Context, view AskView) error) error

	// SetStudyNote replaces the study's note ("" clears it; see CheckNote)
	// and returns the study.
	SetStudyNote(ctx context.Context, study, note string) (*Study, error)
	// SetTrialNote replaces a trial's note, in any state ("" clears it),
	// and returns the trial. A note is no change of the trial's outcome:
	// its version stays, so neither optimizers nor caches keyed on the
	// study's fingerprint see it.
	SetTrialNote(ctx context.Context, study string, number int64, note string) (*Trial, error)

	Close() error
}

// Open opens a store from a data source: "postgres://..." or
// "postgresql://..." for PostgreSQL, otherwise a SQLite file path (optionally
// prefixed with "sqlite:" or "file:"). Migrations are applied.
func Open(ctx context.Context, dsn string) (Store, error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return OpenPostgres(ctx, dsn)
	case dsn == "":
		return nil, fmt.Errorf("store: empty data source")
	default:
		return OpenSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"))
	}
}

// OpenExisting is Open for commands that only read: a SQLite file that does
// not exist is an error (ErrNotFound) instead of a new, empty database.
func OpenExisting(ctx context.Context, dsn string) (Store, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") && dsn != "" {
		file := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
		if i := strings.IndexByte(file, '?'); i >= 0 {
			file = file[:i]
		}
		if _, err := os.Stat(file); err != nil {
			return nil, fmt.Errorf("store: %w: %v (no database there; check --db)", ErrNotFound, err)
		}
	}
	return Open(ctx, dsn)
}

// Validation shared by the backends.

// MaxAttrDepth bounds how deep a user attribute's value may nest objects
// and arrays: the stored JSON is read back by every client, and recursive
// decoders (Python's among them) fail on deep nesting long before the
// request size limit is reached.
const MaxAttrDepth = 32

// checkAttrs refuses user attributes nested deeper than MaxAttrDepth.
func checkAttrs(attrs map[string]any) error {
	for k, v := range attrs {
		if depth(v, MaxAttrDepth+1) > MaxAttrDepth {
			return fmt.Errorf("%w: user attribute %q nests objects or arrays more than %d deep", ErrInvalid, k, MaxAttrDepth)
		}
	}
	return nil
}

// depth is how deep v nests objects and arrays (0 for a scalar), counted up
// to limit: a hostile value is not walked further than the limit needs.
func depth(v any, limit int) int {
	if limit <= 0 {
		return 0
	}
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e, limit-1))
		}
	case []any:
		for _, e := range x {
			d = max(d, depth(e, limit-1))
		}
	default:
		return 0
	}
	return d + 1
}

func checkName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: study name is empty", ErrInvalid)
	}
	if len(name) > 200 {
		return fmt.Errorf("%w: study name is longer than 200 bytes", ErrInvalid)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: study name %q is not valid UTF-8", ErrInvalid, name)
	}
	if name == "." || name == ".." {
		return fmt.Errorf("%w: study name %q cannot be addressed in a URL path", ErrInvalid, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == '/' {
			return fmt.Errorf("%w: study name %q contains a control character or '/'", ErrInvalid, name)
		}
	}
	return nil
}

func checkNewStudy(s NewStudy) error {
	if err := checkName(s.Name); err != nil {
		return err
	}
	if s.Direction != "minimize" && s.Direction != "maximize" {
		return fmt.Errorf("%w: direction %q must be minimize or maximize", ErrInvalid, s.Direction)
	}
	if !json.Valid(s.Space) {
		return fmt.Errorf("%w: space is not valid JSON", ErrInvalid)
	}
	if len(s.Optimizer) > 0 && !json.Valid(s.Optimizer) {
		return fmt.Errorf("%w: optimizer configuration is not valid JSON", ErrInvalid)
	}
	if len(s.Pruner) > 0 && !json.Valid(s.Pruner) {
		return fmt.Errorf("%w: pruner configuration is not valid JSON", ErrInvalid)
	}
	return nil
}

func checkFinite(what string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%w: %s %v is not a finite number", ErrInvalid, what, v)
	}
	return nil
}

func checkResult(r Result) error {
	if err := checkAttrs(r.UserAttrs); err != nil {
		return err
	}
	if r.State != Complete && (len(r.Values) > 0 || len(r.Constraints) > 0) {
		return fmt.Errorf("%w: objective and constraint values go with a complete trial only, not a %s one", ErrInvalid, r.State)
	}
	switch r.State {
	case Complete:
		if err := checkFinite("value", r.Value); err != nil {
			return err
		}
		_, _, _, err := encodeOutcome(&r.Value, r.Values, r.Constraints)
		return err
	case Failed:
		return nil
	case Pruned:
		if math.IsInf(r.Value, 0) {
			return fmt.Errorf("%w: value %v is not a finite number", ErrInvalid, r.Value)
		}
		return nil
	default:
		return fmt.Errorf("%w: a tell must complete, fail or prune a trial, not set it %q", ErrInvalid, r.State)
	}
}

// outcomeValue is the value a tell records for trial t: a complete
// trial's told value, a pruned trial's told value or else its last
// intermediate value (none when it reported none), no value for a failure.
func outcomeValue(t *Trial, r Result) *float64 {
	switch {
	case r.State == Complete, r.State == Pruned && !math.IsNaN(r.Value):
		v := r.Value
		return &v
	case r.State == Pruned && len(t.Intermediate) > 0:
		v := t.Intermediate[len(t.Intermediate)-1].Value
		return &v
	}
	return nil
}

func checkQuery(q TrialQuery) error {
	for _, s := range q.States {
		if !s.Valid() {
			return fmt.Errorf("%w: unknown trial state %q", ErrInvalid, s)
		}
	}
	if q.Offset < 0 || q.Limit < 0 {
		return fmt.Errorf("%w: offset and limit must not be negative", ErrInvalid)
	}
	return nil
}

// sameOutcome decides whether a repeated tell is the same as the recorded
// one (a pruned trial's intermediate values never change once it is
// finished, so its resolved value can be compared).
func sameOutcome(t *Trial, r Result) bool {
	if t.State != r.State {
		return false
	}
	want := outcomeValue(t, r)
	if want == nil || t.Value == nil {
		return want == nil && t.Value == nil
	}
	return *t.Value == *want && slices.Equal(t.Values, r.Values) && slices.Equal(t.Constraints, r.Constraints)
}

// outcomeShape reads the number of objectives and constraints from a
// space document (1 and 0 when it cannot be read: the server validates
// spaces before they reach the store).
func outcomeShape(doc json.RawMessage) (objectives, constraints int) {
	sp, err := space.Parse(doc)
	if err != nil {
		return 1, 0
	}
	return sp.NumObjectives(), len(sp.Constraints)
}

// checkShape checks a complete trial's outcome against the study's shape.
func (st *Study) checkShape(values, constraints []float64) error {
	switch {
	case st.NumObjectives > 1 && len(values) != st.NumObjectives:
		return fmt.Errorf("%w: the study has %d objectives; a complete trial needs one value for each, not %d", ErrInvalid, st.NumObjectives, len(values))
	case st.NumObjectives <= 1 && len(values) > 0:
		return fmt.Errorf("%w: the study has one objective; a complete trial has a value, not a list of %d", ErrInvalid, len(values))
	case len(constraints) != st.NumConstraints:
		return fmt.Errorf("%w: the study has %d constraints; a complete trial reports %d constraint values, not %d", ErrInvalid, st.NumConstraints, st.NumConstraints, len(constraints))
	}
	return nil
}

// encodeOutcome checks a complete trial's objective and constraint values
// (finite; the first objective value equal to value) and encodes them for
// their columns, with the trial's infeasible flag.
func encodeOutcome(value *float64, values, constraints []float64) (vals, cons *string, infeasible int, err error) {
	if len(values) > 0 {
		if value == nil || values[0] != *value {
			return nil, nil, 0, fmt.Errorf("%w: the first objective value must be the trial's value", ErrInvalid)
		}
		for k, v := range values {
			if err := checkFinite(fmt.Sprintf("objective value %d", k), v); err != nil {
				return nil, nil, 0, err
			}
		}
		b, _ := json.Marshal(values)
		text := string(b)
		vals = &text
	}
	if len(constraints) > 0 {
		if value == nil {
			return nil, nil, 0, fmt.Errorf("%w: constraint values go with a complete trial only", ErrInvalid)
		}
		for j, c := range constraints {
			if err := checkFinite(fmt.Sprintf("constraint value %d", j), c); err != nil {
				return nil, nil, 0, err
			}
			if c > 0 {
				infeasible = 1
			}
		}
		b, _ := json.Marshal(constraints)
		text := string(b)
		cons = &text
	}
	return vals, cons, infeasible, nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func optMicros(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := fromMicros(*us)
	return &t
}

func marshalJSON(v any, empty string) (string, error) {
	if v == nil {
		return empty, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// trialColumns is the column list every trial query selects, in scanTrial order.
const trialColumns = `id, number, state, params, value, intermediate, user_attrs, worker, acquisition,
	fail_reason, requeued_from, meta, created_us, started_us, deadline_us, finished_us, version, updated_us, study_id,
	objective_values, constraint_values, note`

func scanTrial(scan func(dest ...any) error) (Trial, error) {
	var (
		t                           Trial
		state                       string
		params, inter, attrs, meta  string
		created                     int64
		started, deadline, finished *int64
		values, constraints         *string
	)
	if err := scan(&t.ID, &t.Number, &state, &params, &t.Value, &inter, &attrs, &t.Worker, &t.Acquisition,
		&t.FailReason, &t.RequeuedFrom, &meta, &created, &started, &deadline, &finished, &t.Version, &t.updatedUS, &t.StudyID,
		&values, &constraints, &t.Note); err != nil {
		return t, err
	}
	if values != nil {
		if err := json.Unmarshal([]byte(*values), &t.Values); err != nil {
			return t, fmt.Errorf("trial %d: objective values: %w", t.Number, err)
		}
	}
	if constraints != nil {
		if err := json.Unmarshal([]byte(*constraints), &t.Constraints); err != nil {
			return t, fmt.Errorf("trial %d: constraint values: %w", t.Number, err)
		}
	}
	t.State = State(state)
	if err := json.Unmarshal([]byte(params), &t.Params); err != nil {
		return t, fmt.Errorf("trial %d: params: %w", t.Number, err)
	}
	if inter != "" && inter != "[]" {
		if err := json.Unmarshal([]byte(inter), &t.Intermediate); err != nil {
			return t, fmt.Errorf("trial %d: intermediate values: %w", t.Number, err)
		}
	}
	if attrs != "" && attrs != "{}" {
		if err := json.Unmarshal([]byte(attrs), &t.UserAttrs); err != nil {
			return t, fmt.Errorf("trial %d: user attributes: %w", t.Number, err)
		}
	}
	if meta != "" && meta != "{}" {
		t.Meta = json.RawMessage(meta)
	}
	t.CreatedAt = fromMicros(created)
	t.StartedAt = optMicros(started)
	t.Deadline = optMicros(deadline)
	t.FinishedAt = optMicros(finished)
	return t, nil
}

// mergeAttrs returns old updated with add (add wins).
func mergeAttrs(old, add map[string]any) map[string]any {
	if len(add) == 0 {
		return old
	}
	out := make(map[string]any, len(old)+len(add))
	for k, v := range old {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

// withIntermediate inserts or replaces the value at step, keeping steps sorted.
func withIntermediate(list []Intermediate, step int64, v float64) []Intermediate {
	out := make([]Intermediate, 0, len(list)+1)
	inserted := false
	for _, it := range list {
		if it.Step == step {
			continue
		}
		if !inserted && it.Step > step {
			out = append(out, Intermediate{step, v})
			inserted = true
		}
		out = append(out, it)
	}
	if !inserted {
		out = append(out, Intermediate{step, v})
	}
	return out
}

func deadlineMicros(now time.Time, timeout time.Duration) *int64 {
	if timeout <= 0 {
		return nil
	}
	d := micros(now.Add(timeout))
	return &d
}
