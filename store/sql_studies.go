package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

const studyColumns = `id, name, direction, space, optimizer, pruner, created_us, version, next_number, n_objectives, n_constraints, note`

// scanStudy reads a study row. Its Version is the row's counter, which only
// SQLite maintains; the public methods replace it by the highest trial
// version.
func scanStudy(scan func(dest ...any) error) (*Study, error) {
	var (
		st                   Study
		space, optim, pruner string
		created              int64
	)
	if err := scan(&st.ID, &st.Name, &st.Direction, &space, &optim, &pruner, &created, &st.Version, &st.NextNumber,
		&st.NumObjectives, &st.NumConstraints, &st.Note); err != nil {
		return nil, err
	}
	st.Space = []byte(space)
	st.Optimizer = []byte(optim)
	st.Pruner = []byte(pruner)
	st.CreatedAt = fromMicros(created)
	return &st, nil
}

const qStudyByName = `SELECT ` + studyColumns + ` FROM studies WHERE name = $1`

func getStudy(ctx context.Context, q querier, name string) (*Study, error) {
	st, err := scanStudy(q.queryRow(ctx, qStudyByName, name))
	if errors.Is(err, errNoRows) {
		return nil, fmt.Errorf("study %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: study %q: %w", name, err)
	}
	return st, nil
}

func (s *sqlStore) CreateStudy(ctx context.Context, ns NewStudy) (*Study, error) {
	if err := checkNewStudy(ns); err != nil {
		return nil, fmt.Errorf("store: create study: %w", err)
	}
	var st *Study
	err := s.withTx(ctx, writeTx, func(q tx) error {
		var err error
		st, err = s.insertStudy(ctx, q, ns)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: create study: %w", err)
	}
	return st, nil
}

// insertStudy inserts a checked new study; a taken name is ErrExists.
func (s *sqlStore) insertStudy(ctx context.Context, q querier, ns NewStudy) (*Study, error) {
	optim, pruner := string(ns.Optimizer), string(ns.Pruner)
	if optim == "" {
		optim = "{}"
	}
	if pruner == "" {
		pruner = "{}"
	}
	objectives, constraints := outcomeShape(ns.Space)
	st, err := scanStudy(q.queryRow(ctx, `INSERT INTO studies (name, direction, space, optimizer, pruner, created_us, n_objectives, n_constraints)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+studyColumns,
		ns.Name, ns.Direction, string(ns.Space), optim, pruner, micros(ns.Now), objectives, constraints))
	if err != nil && s.b.isUniqueViolation(err) {
		return nil, fmt.Errorf("study %q: %w", ns.Name, ErrExists)
	}
	return st, err
}

func (s *sqlStore) Study(ctx context.Context, name string) (*Study, error) {
	var st *Study
	err := s.withTx(ctx, readTx, func(q tx) error {
		var err error
		if st, err = getStudy(ctx, q, name); err != nil {
			return err
		}
		var n, sum int64
		if err := q.queryRow(ctx, `SELECT coalesce(max(version), 0), count(*), CAST(coalesce(sum(version), 0) AS BIGINT)
			FROM trials WHERE study_id = $1`, st.ID)(&st.Version, &n, &sum); err != nil {
			return fmt.Errorf("store: study %q: %w", name, err)
		}
		st.Fingerprint = fmt.Sprintf("%d:%d:%d", st.ID, n, sum)
		return nil
	})
	return st, err
}

func (s *sqlStore) Studies(ctx context.Context) ([]StudySummary, error) {
	var out []StudySummary
	err := s.withTx(ctx, readTx, func(q tx) error {
		r, err := q.query(ctx, `SELECT `+studyColumns+` FROM studies ORDER BY name`)
		if err != nil {
			return err
		}
		index := map[int64]int{}
		for r.Next() {
			st, err := scanStudy(r.Scan)
			if err != nil {
				r.Close()
				return err
			}
			index[st.ID] = len(out)
			out = append(out, StudySummary{Study: *st, Counts: map[State]int{}})
		}
		r.Close()
		if err := r.Err(); err != nil {
			return err
		}
		r, err = q.query(ctx, `SELECT study_id, state, count(*), max(version) FROM trials GROUP BY study_id, state`)
		if err != nil {
			return err
		}
		for r.Next() {
			var id, n, v int64
			var state string
			if err := r.Scan(&id, &state, &n, &v); err != nil {
				r.Close()
				return err
			}
			if i, ok := index[id]; ok {
				out[i].Counts[State(state)] = int(n)
				out[i].Version = max(out[i].Version, v)
			}
		}
		r.Close()
		if err := r.Err(); err != nil {
			return err
		}
		r, err = q.query(ctx, `SELECT study_id, min(value), max(value) FROM trials WHERE state = 'complete' AND infeasible = 0 GROUP BY study_id`)
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var id int64
			var lo, hi float64
			if err := r.Scan(&id, &lo, &hi); err != nil {
				return err
			}
			if i, ok := index[id]; ok {
				best := lo
				if out[i].Direction == "maximize" {
					best = hi
				}
				out[i].Best = &best
			}
		}
		return r.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: list studies: %w", err)
	}
	return out, nil
}

func (s *sqlStore) DeleteStudy(ctx context.Context, name string) error {
	return s.withTx(ctx, writeTx, func(q tx) error {
		st, err := getStudy(ctx, q, name)
		if err != nil {
			return err
		}
		if err := s.b.lockStudy(ctx, q, st.ID); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `DELETE FROM intermediate_values WHERE study_id = $1`, st.ID); err != nil {
			return fmt.Errorf("store: delete intermediate values of %q: %w", name, err)
		}
		if _, err := q.exec(ctx, `DELETE FROM trials WHERE study_id = $1`, st.ID); err != nil {
			return fmt.Errorf("store: delete trials of %q: %w", name, err)
		}
		if _, err := q.exec(ctx, `DELETE FROM studies WHERE id = $1`, st.ID); err != nil {
			return fmt.Errorf("store: delete study %q: %w", name, err)
		}
		return nil
	})
}

// stepsPerInsert bounds the rows of one insert of intermediate values (4
// parameters each, far below both databases' limits).
const stepsPerInsert = 500

// insertSteps adds a trial's intermediate values to the per-step table the
// pruners read (intermediate_values, which mirrors the trials' intermediate
// column).
func insertSteps(ctx context.Context, q querier, studyID, number int64, steps []Intermediate) error {
	for start := 0; start < len(steps); start += stepsPerInsert {
		chunk := steps[start:min(len(steps), start+stepsPerInsert)]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO intermediate_values (study_id, number, step, value) VALUES `)
		args := make([]any, 0, 4*len(chunk))
		for i, iv := range chunk {
			if i > 0 {
				sb.WriteString(", ")
			}
			n := len(args)
			fmt.Fprintf(&sb, "($%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4)
			args = append(args, studyID, number, iv.Step, iv.Value)
		}
		if _, err := q.exec(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("store: intermediate values of trial %d: %w", number, err)
		}
	}
	return nil
}
