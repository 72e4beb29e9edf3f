package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"xbo/space"
)

// Data upgrades rewrite stored documents that a schema migration cannot
// (they need Go code, such as the space parser). Each runs once per
// database, in the migrations' transaction (under their lock on
// PostgreSQL), and is recorded by name in its own table, so that its
// bookkeeping never mixes with the numbered SQL migrations.
const qDataUpgrades = `CREATE TABLE IF NOT EXISTS data_upgrades (name TEXT PRIMARY KEY, applied_us BIGINT NOT NULL)`

// upgradeData runs the data upgrades not yet recorded.
func upgradeData(ctx context.Context, q querier) error {
	if _, err := q.exec(ctx, qDataUpgrades); err != nil {
		return fmt.Errorf("store: data upgrades: %w", err)
	}
	for _, u := range []struct {
		name string
		run  func(context.Context, querier) error
	}{{"typed-choices", upgradeTypedChoices}} {
		var done int64
		if err := q.queryRow(ctx, `SELECT count(*) FROM data_upgrades WHERE name = $1`, u.name)(&done); err != nil {
			return fmt.Errorf("store: data upgrade %s: %w", u.name, err)
		}
		if done > 0 {
			continue
		}
		if err := u.run(ctx, q); err != nil {
			return fmt.Errorf("store: data upgrade %s: %w", u.name, err)
		}
		if _, err := q.exec(ctx, `INSERT INTO data_upgrades (name, applied_us) VALUES ($1, $2)`, u.name, micros(time.Now())); err != nil {
			return fmt.Errorf("store: data upgrade %s: %w", u.name, err)
		}
	}
	return nil
}

// upgradeTypedChoices gives the trials stored before categorical choices
// kept their JSON types the typed values: a choice of 16 was stored as the
// string "16", true as "true". The stored spaces already hold the typed
// choices (a study keeps its space document as written), so each such
// string is replaced by the choice it names. Only the representation
// changes, never which choice a trial holds, so versions are not stamped:
// optimizers and caches built on the old rows stay right.
func upgradeTypedChoices(ctx context.Context, q querier) error {
	type study struct {
		id    int64
		space string
	}
	r, err := q.query(ctx, `SELECT id, space FROM studies ORDER BY id`)
	if err != nil {
		return err
	}
	var studies []study
	for r.Next() {
		var s study
		if err := r.Scan(&s.id, &s.space); err != nil {
			r.Close()
			return err
		}
		studies = append(studies, s)
	}
	r.Close()
	if err := r.Err(); err != nil {
		return err
	}
	for _, s := range studies {
		sp, err := space.Parse([]byte(s.space))
		if err != nil {
			continue // a space this version refuses is left exactly as it was
		}
		typed := map[string]*space.Param{}
		for i := range sp.Params {
			p := &sp.Params[i]
			for _, c := range p.Choices {
				if _, isString := c.(string); !isString {
					typed[p.Name] = p
					break
				}
			}
		}
		if len(typed) == 0 {
			continue
		}
		if err := retypeTrials(ctx, q, s.id, typed); err != nil {
			return fmt.Errorf("study %d: %w", s.id, err)
		}
	}
	return nil
}

// retypeTrials rewrites the parameters of one study's trials whose values
// for the typed categoricals are text forms.
func retypeTrials(ctx context.Context, q querier, studyID int64, typed map[string]*space.Param) error {
	r, err := q.query(ctx, `SELECT id, params FROM trials WHERE study_id = $1 ORDER BY id`, studyID)
	if err != nil {
		return err
	}
	type update struct {
		id     int64
		params string
	}
	var updates []update
	for r.Next() {
		var id int64
		var text string
		if err := r.Scan(&id, &text); err != nil {
			r.Close()
			return err
		}
		var params map[string]any
		if json.Unmarshal([]byte(text), &params) != nil {
			continue
		}
		changed := false
		for name, v := range params {
			p, ok := typed[name]
			str, isString := v.(string)
			if !ok || !isString {
				continue
			}
			k, err := p.Level(str)
			if err != nil {
				continue
			}
			if _, stillString := p.Choices[k].(string); !stillString {
				params[name] = p.Choices[k]
				changed = true
			}
		}
		if !changed {
			continue
		}
		b, err := json.Marshal(params)
		if err != nil {
			r.Close()
			return err
		}
		updates = append(updates, update{id, string(b)})
	}
	r.Close()
	if err := r.Err(); err != nil {
		return err
	}
	for _, u := range updates {
		if _, err := q.exec(ctx, `UPDATE trials SET params = $2 WHERE id = $1`, u.id, u.params); err != nil {
			return err
		}
	}
	return nil
}
