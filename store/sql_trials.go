package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// trialColumnsOf is trialColumns qualified by a table alias.
func trialColumnsOf(alias string) string {
	cols := strings.Split(trialColumns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

var trialColumnsT = trialColumnsOf("t")

var qLockTrial = `SELECT s.id, ` + trialColumnsT + ` FROM studies s JOIN trials t ON t.study_id = s.id
		WHERE s.name = $1 AND t.number = $2`

// lockTrial reads (and in PostgreSQL row-locks) a trial by study name and
// number in one round trip.
func (s *sqlStore) lockTrial(ctx context.Context, q querier, study string, number int64) (int64, *Trial, error) {
	var studyID int64
	lock := ""
	if l := s.b.rowLock(false); l != "" {
		lock = l + " OF t"
	}
	row := q.queryRow(ctx, qLockTrial+lock, study, number)
	t, err := scanTrial(func(dest ...any) error { return row(append([]any{&studyID}, dest...)...) })
	if errors.Is(err, errNoRows) {
		if _, err := getStudy(ctx, q, study); err != nil {
			return 0, nil, err
		}
		return 0, nil, fmt.Errorf("trial %d: %w", number, ErrNotFound)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("store: trial %d: %w", number, err)
	}
	return studyID, &t, nil
}

func getTrial(ctx context.Context, q querier, studyID, number int64, lock string) (*Trial, error) {
	t, err := scanTrial(q.queryRow(ctx, `SELECT `+trialColumns+` FROM trials WHERE study_id = $1 AND number = $2`+lock, studyID, number))
	if errors.Is(err, errNoRows) {
		return nil, fmt.Errorf("trial %d: %w", number, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: trial %d: %w", number, err)
	}
	return &t, nil
}

const qReserve = `UPDATE studies SET next_number = next_number + $2
		WHERE id = $1 RETURNING next_number - $2`

// reserve takes n trial numbers; callers hold the study's ask lock.
func reserve(ctx context.Context, q querier, studyID int64, n int64) (firstNumber int64, err error) {
	err = q.queryRow(ctx, qReserve, studyID, n)(&firstNumber)
	if err != nil {
		return 0, fmt.Errorf("store: reserve trial numbers: %w", err)
	}
	return firstNumber, nil
}

// reserveVersioned reserves n numbers and stamps the change.
func (s *sqlStore) reserveVersioned(ctx context.Context, q querier, studyID int64, n int64) (version, firstNumber int64, err error) {
	if r, ok := s.b.(interface {
		reserveVersioned(ctx context.Context, q querier, studyID int64, n int64) (int64, int64, error)
	}); ok {
		return r.reserveVersioned(ctx, q, studyID, n)
	}
	if firstNumber, err = reserve(ctx, q, studyID, n); err != nil {
		return 0, 0, err
	}
	if version, err = s.b.nextVersion(ctx, q, studyID); err != nil {
		return 0, 0, fmt.Errorf("store: next version: %w", err)
	}
	return version, firstNumber, nil
}

func (s *sqlStore) stamp(ctx context.Context, q querier, studyID int64) (int64, error) {
	v, err := s.b.nextVersion(ctx, q, studyID)
	if err != nil {
		return 0, fmt.Errorf("store: next version: %w", err)
	}
	return v, nil
}

type trialRow struct {
	studyID      int64
	number       int64
	state        State
	params       string
	value        *float64
	userAttrs    string
	worker       string
	acquisition  string
	requeuedFrom *int64
	meta         string
	created      int64
	started      *int64
	deadline     *int64
	finished     *int64
	version      int64
	askKey       *string // the idempotency key of the ask that handed it out
	values       *string // objective values (JSON), nil for one objective
	constraints  *string // constraint values (JSON), nil when none
	infeasible   int     // 1 when a constraint value is above 0
}

func (r trialRow) updated() int64 { return r.created }

// insertColumns are the columns of a new trial, in trialRow.args order.
const insertColumns = `INSERT INTO trials
		(study_id, number, state, params, value, user_attrs, worker, acquisition, requeued_from, meta,
		 created_us, started_us, deadline_us, finished_us, version, updated_us, ask_key,
		 objective_values, constraint_values, infeasible) VALUES `

const qInsertTrial = insertColumns + `($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
		RETURNING ` + trialColumns

// args are the values of one row in qInsertTrial's order.
func (r trialRow) args() []any {
	if r.userAttrs == "" {
		r.userAttrs = "{}"
	}
	if r.meta == "" {
		r.meta = "{}"
	}
	return []any{r.studyID, r.number, string(r.state), r.params, r.value, r.userAttrs, r.worker, r.acquisition, r.requeuedFrom, r.meta,
		r.created, r.started, r.deadline, r.finished, r.version, r.updated(), r.askKey,
		r.values, r.constraints, r.infeasible}
}

func insertTrial(ctx context.Context, q querier, r trialRow) (*Trial, error) {
	t, err := scanTrial(q.queryRow(ctx, qInsertTrial, r.args()...))
	if err != nil {
		return nil, fmt.Errorf("store: insert trial %d: %w", r.number, err)
	}
	return &t, nil
}

// encodeTrial checks a trial given from outside and encodes its parameters
// and user attributes for storage.
func encodeTrial(params map[string]any, value *float64, userAttrs map[string]any) (p, attrs string, err error) {
	if params == nil {
		return "", "", fmt.Errorf("%w: no params", ErrInvalid)
	}
	if value != nil {
		if err := checkFinite("value", *value); err != nil {
			return "", "", err
		}
	}
	if p, err = marshalJSON(params, "{}"); err != nil {
		return "", "", fmt.Errorf("%w: params: %v", ErrInvalid, err)
	}
	if err := checkAttrs(userAttrs); err != nil {
		return "", "", err
	}
	if attrs, err = marshalJSON(userAttrs, "{}"); err != nil {
		return "", "", fmt.Errorf("%w: user attributes: %v", ErrInvalid, err)
	}
	return p, attrs, nil
}

func (s *sqlStore) AddTrial(ctx context.Context, study string, nt NewTrial) (*Trial, error) {
	params, attrs, err := encodeTrial(nt.Params, nt.Value, nt.UserAttrs)
	if err != nil {
		return nil, fmt.Errorf("store: add trial: %w", err)
	}
	vals, cons, infeasible, err := encodeOutcome(nt.Value, nt.Values, nt.Constraints)
	if err != nil {
		return nil, fmt.Errorf("store: add trial: %w", err)
	}
	var out *Trial
	err = s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		if err := s.b.lockStudy(ctx, q, st.ID); err != nil {
			return err
		}
		if nt.Value != nil {
			if err := st.checkShape(nt.Values, nt.Constraints); err != nil {
				return err
			}
		}
		v, num, err := s.reserveVersioned(ctx, q, st.ID, 1)
		if err != nil {
			return err
		}
		row := trialRow{studyID: st.ID, number: num, state: Pending, params: params, userAttrs: attrs,
			acquisition: "enqueued", created: micros(nt.Now), version: v}
		if nt.Value != nil {
			now := micros(nt.Now)
			row.state, row.value, row.acquisition, row.finished = Complete, nt.Value, "imported", &now
			row.values, row.constraints, row.infeasible = vals, cons, infeasible
		}
		out, err = insertTrial(ctx, q, row)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: add trial to %q: %w", study, err)
	}
	return out, nil
}

func (s *sqlStore) Trial(ctx context.Context, study string, number int64) (*Trial, error) {
	var out *Trial
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		out, err = getTrial(ctx, q, st.ID, number, "")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: %q: %w", study, err)
	}
	return out, nil
}

func (s *sqlStore) Trials(ctx context.Context, study string, tq TrialQuery) ([]Trial, int, error) {
	if err := checkQuery(tq); err != nil {
		return nil, 0, fmt.Errorf("store: list trials: %w", err)
	}
	var out []Trial
	total := 0
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		where := ` FROM trials WHERE study_id = $1 AND version > $2`
		args := []any{st.ID, tq.SinceVersion}
		if len(tq.States) > 0 {
			marks := make([]string, len(tq.States))
			for i, state := range tq.States {
				args = append(args, string(state))
				marks[i] = "$" + strconv.Itoa(len(args))
			}
			where += ` AND state IN (` + strings.Join(marks, ", ") + `)`
		}
		var n int64
		if err := q.queryRow(ctx, `SELECT count(*)`+where, args...)(&n); err != nil {
			return err
		}
		total = int(n)
		page := where + ` ORDER BY number`
		if tq.Limit > 0 {
			page += ` LIMIT ` + strconv.Itoa(tq.Limit)
		} else if tq.Offset > 0 {
			page += ` LIMIT -1`
			if s.b.name() == "postgres" {
				page = where + ` ORDER BY number LIMIT ALL`
			}
		}
		if tq.Offset > 0 {
			page += ` OFFSET ` + strconv.Itoa(tq.Offset)
		}
		r, err := q.query(ctx, `SELECT `+trialColumns+page, args...)
		if err != nil {
			return err
		}
		defer r.Close()
		out = []Trial{}
		for r.Next() {
			t, err := scanTrial(r.Scan)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return r.Err()
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: list trials of %q: %w", study, err)
	}
	return out, total, nil
}

// eventWindow is how long a PostgreSQL change may take from drawing its
// version to committing; events re-send changes this recent, so that a
// transaction that commits after a later-numbered one is never skipped.
const eventWindow = 5 * time.Second

func (s *sqlStore) Events(ctx context.Context, study string, since int64, now time.Time) ([]Trial, int64, error) {
	trials, _, err := s.Trials(ctx, study, TrialQuery{SinceVersion: since})
	if err != nil {
		return nil, since, err
	}
	next := since
	if s.b.orderedVersions() {
		for _, t := range trials {
			next = max(next, t.Version)
		}
		return trials, next, nil
	}
	// Advance over the prefix (in version order) of changes old enough to
	// be settled: a younger change may still have a smaller-numbered
	// transaction in flight behind it.
	horizon := micros(now.Add(-eventWindow))
	byVersion := slices.Clone(trials)
	slices.SortFunc(byVersion, func(a, b Trial) int { return cmp.Compare(a.Version, b.Version) })
	for _, t := range byVersion {
		if t.updatedUS > horizon {
			break
		}
		next = t.Version
	}
	return trials, next, nil
}

func (s *sqlStore) Read(ctx context.Context, study string, read func(ctx context.Context, view AskView) error) error {
	if read == nil {
		return fmt.Errorf("store: read %q: %w: no reader", study, ErrInvalid)
	}
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		return read(ctx, &askView{b: s.b, q: q, study: st})
	})
	if err != nil {
		return fmt.Errorf("store: read %q: %w", study, err)
	}
	return nil
}

func (s *sqlStore) Best(ctx context.Context, study string) (*Trial, error) {
	var out *Trial
	err := s.withTx(ctx, readTx, func(q tx) error {
		st, err := getStudy(ctx, q, study)
		if err != nil {
			return err
		}
		order := "ASC"
		if st.Direction == "maximize" {
			order = "DESC"
		}
		t, err := scanTrial(q.queryRow(ctx, `SELECT `+trialColumns+` FROM trials WHERE study_id = $1 AND state = 'complete' AND infeasible = 0
			ORDER BY value `+order+`, number ASC LIMIT 1`, st.ID))
		if errors.Is(err, errNoRows) {
			return fmt.Errorf("no complete feasible trial yet: %w", ErrNotFound)
		}
		if err != nil {
			return err
		}
		out = &t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: best trial of %q: %w", study, err)
	}
	return out, nil
}
