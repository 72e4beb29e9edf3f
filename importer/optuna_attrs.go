package importer

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// What an Optuna study holds besides parameters and values, and where it
// goes in xbo:
//
//   - a trial's user attributes: the trial's UserAttrs, under their own
//     names (provenance, added by `xbo import --into`, is kept apart);
//   - its datetime_start and datetime_complete: Started and Finished
//     (Optuna writes naive local times, read in this machine's time zone);
//   - the system attribute fixed_params, which Study.enqueue_trial sets:
//     the trial's origin "enqueued" (its Acquisition);
//   - the study's user attributes: History.Attrs.
//
// The samplers' other system attributes (their bookkeeping) are not
// carried over, and the pruner is not in Optuna's storage at all (it is
// code): both are named in the run's warnings when present.

// optunaFixedParamsKey is the trial system attribute enqueue_trial sets.
const optunaFixedParamsKey = "fixed_params"

// optunaTimeLayouts are the forms Optuna's storages write times in:
// SQLAlchemy's DATETIME text in SQLite, isoformat in journals.
var optunaTimeLayouts = []string{"2006-01-02 15:04:05.999999", "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05", "2006-01-02T15:04:05"}

// parseOptunaTime reads an Optuna timestamp ("" is no time).
func parseOptunaTime(text string) (time.Time, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return time.Time{}, nil
	}
	for _, layout := range optunaTimeLayouts {
		if t, err := time.ParseInLocation(layout, text, time.Local); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, text); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time Optuna writes", text)
}

// decodeAttr reads an attribute's value_json.
func decodeAttr(key, text string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("attribute %q: value %q is not JSON: %w", key, text, err)
	}
	return v, nil
}

// systemAttrsWarning names the system attribute keys that are not carried
// over, or "" when there are none.
func systemAttrsWarning(what string, keys map[string]int) string {
	if len(keys) == 0 {
		return ""
	}
	names := make([]string, 0, len(keys))
	for k, n := range keys {
		names = append(names, fmt.Sprintf("%s (%d)", k, n))
	}
	sort.Strings(names)
	return fmt.Sprintf("%s system attributes are Optuna's and its samplers' bookkeeping and are not kept: %s", what, strings.Join(names, ", "))
}

// trialExtras reads the trials' user attributes, times and enqueued
// markers from an Optuna RDB, and names the system attributes it drops.
func (o *optunaDB) trialExtras(studyID int64, study string, list []optunaTrial, index map[int64]int) ([]string, error) {
	var warnings []string
	if o.has("trials", "datetime_start") && o.has("trials", "datetime_complete") {
		rows, err := o.db.Query(`SELECT trial_id, datetime_start, datetime_complete FROM trials WHERE study_id = ?`, studyID)
		if err != nil {
			return nil, fmt.Errorf("study %q: read trial times: %w", study, err)
		}
		err = eachRow(rows, func() error {
			var id int64
			var start, complete sql.NullString
			if err := rows.Scan(&id, &start, &complete); err != nil {
				return err
			}
			t := &list[index[id]]
			var err error
			if t.started, err = parseOptunaTime(start.String); err != nil {
				return fmt.Errorf("trial %d: datetime_start: %w", t.number, err)
			}
			if t.finished, err = parseOptunaTime(complete.String); err != nil {
				return fmt.Errorf("trial %d: datetime_complete: %w", t.number, err)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("study %q: read trial times: %w", study, err)
		}
	}
	if o.has("trial_user_attributes", "value_json") {
		rows, err := o.db.Query(`SELECT a.trial_id, a."key", a.value_json FROM trial_user_attributes a JOIN trials t ON a.trial_id = t.trial_id
			WHERE t.study_id = ? ORDER BY a.trial_user_attribute_id`, studyID)
		if err != nil {
			return nil, fmt.Errorf("study %q: read trial_user_attributes: %w", study, err)
		}
		err = eachRow(rows, func() error {
			var id int64
			var key, text string
			if err := rows.Scan(&id, &key, &text); err != nil {
				return err
			}
			t := &list[index[id]]
			v, err := decodeAttr(key, text)
			if err != nil {
				return fmt.Errorf("trial %d: %w", t.number, err)
			}
			if t.userAttrs == nil {
				t.userAttrs = map[string]any{}
			}
			t.userAttrs[key] = v
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("study %q: read trial_user_attributes: %w", study, err)
		}
	}
	if o.has("trial_system_attributes", "value_json") {
		rows, err := o.db.Query(`SELECT a.trial_id, a."key" FROM trial_system_attributes a JOIN trials t ON a.trial_id = t.trial_id
			WHERE t.study_id = ?`, studyID)
		if err != nil {
			return nil, fmt.Errorf("study %q: read trial_system_attributes: %w", study, err)
		}
		dropped := map[string]int{}
		err = eachRow(rows, func() error {
			var id int64
			var key string
			if err := rows.Scan(&id, &key); err != nil {
				return err
			}
			switch key {
			case optunaFixedParamsKey:
				list[index[id]].enqueued = true
			case optunaConstraintsKey:
			default:
				dropped[key]++
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("study %q: read trial_system_attributes: %w", study, err)
		}
		if w := systemAttrsWarning("trial", dropped); w != "" {
			warnings = append(warnings, w)
		}
	}
	return warnings, nil
}

// studyUserAttrs reads the study's user attributes from an Optuna RDB.
func (o *optunaDB) studyUserAttrs(studyID int64, study string, info *optunaStudy) error {
	if !o.has("study_user_attributes", "value_json") {
		return nil
	}
	rows, err := o.db.Query(`SELECT "key", value_json FROM study_user_attributes WHERE study_id = ?`, studyID)
	if err != nil {
		return fmt.Errorf("study %q: read study_user_attributes: %w", study, err)
	}
	err = eachRow(rows, func() error {
		var key, text string
		if err := rows.Scan(&key, &text); err != nil {
			return err
		}
		v, err := decodeAttr(key, text)
		if err != nil {
			return err
		}
		if info.userAttrs == nil {
			info.userAttrs = map[string]any{}
		}
		info.userAttrs[key] = v
		return nil
	})
	if err != nil {
		return fmt.Errorf("study %q: read study_user_attributes: %w", study, err)
	}
	return nil
}

// eachRow calls scan for every row and closes rows.
func eachRow(rows *sql.Rows, scan func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := scan(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// journalTimes reads the datetime_start and datetime_complete of a journal
// record into t (absent keys leave t's times as they are).
func journalTimes(op map[string]any, t *optunaTrial) error {
	for key, dst := range map[string]*time.Time{"datetime_start": &t.started, "datetime_complete": &t.finished} {
		raw, present := op[key]
		if !present || raw == nil {
			continue
		}
		text, ok := raw.(string)
		if !ok {
			return fmt.Errorf("%s is %v, not a time", key, raw)
		}
		v, err := parseOptunaTime(text)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		*dst = v
	}
	return nil
}

// journalAttrs merges a journal record's user_attr (or user_attrs) object
// into attrs.
func journalAttrs(op map[string]any, key string, attrs map[string]any) (map[string]any, error) {
	raw, present := op[key]
	if !present || raw == nil {
		return attrs, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return attrs, errors.New(key + " is not an object")
	}
	if attrs == nil && len(m) > 0 {
		attrs = map[string]any{}
	}
	for k, v := range m {
		// The journal is read with json.Number; an attribute holds plain
		// JSON values, as one read from an RDB does.
		text, err := json.Marshal(v)
		if err != nil {
			return attrs, fmt.Errorf("%s: %q: %w", key, k, err)
		}
		if attrs[k], err = decodeAttr(k, string(text)); err != nil {
			return attrs, err
		}
	}
	return attrs, nil
}

// countDropped counts the system attributes setSystemAttrs does not keep.
func (j *journal) countDropped(attrs map[string]any) {
	for key := range attrs {
		if key != optunaConstraintsKey && key != optunaFixedParamsKey {
			if j.dropped == nil {
				j.dropped = map[string]int{}
			}
			j.dropped[key]++
		}
	}
}
