package importer

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"xbo/history"
	"xbo/space"
)

// The Optuna RDB schema read here (optuna/storages/_rdb/models.py; schema
// versions 2.4 and later, with fallbacks for the older columns):
//
//	studies(study_id, study_name)
//	study_directions(study_id, direction 'MINIMIZE'|'MAXIMIZE'|'NOT_SET', objective)
//	trials(trial_id, number, study_id, state 'COMPLETE'|'FAIL'|'PRUNED'|'RUNNING'|'WAITING')
//	trial_params(trial_id, param_name, param_value internal repr, distribution_json)
//	trial_values(trial_id, objective, value, value_type 'FINITE'|'INF_POS'|'INF_NEG')
//	study_system_attributes(study_id, key, value_json)   key 'study:metric_names': the objectives' names
//	trial_system_attributes(trial_id, key, value_json)   key 'constraints': the constraint values
//	trial_intermediate_values(trial_id, step, intermediate_value,
//	                          intermediate_value_type 'FINITE'|'INF_POS'|'INF_NEG'|'NAN')
//
// Before Optuna 2.4 a study had one direction column and a trial one value
// column; before 3.0 an intermediate value was a column "value" without a
// type; every shape is read.

type optunaDB struct {
	path   string
	db     *sql.DB
	tables map[string]map[string]bool // table → columns
}

func openOptunaDB(path string) (*optunaDB, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	header := make([]byte, 16)
	_, err = io.ReadFull(f, header)
	f.Close()
	if err != nil || !bytes.Equal(header, []byte("SQLite format 3\x00")) {
		return nil, errors.New("not an SQLite database file (for a journal file use --optuna-journal)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	o := &optunaDB{path: path, db: db, tables: map[string]map[string]bool{}}
	if err := o.loadSchema(); err != nil {
		db.Close()
		return nil, err
	}
	for _, t := range []string{"studies", "trials", "trial_params"} {
		if o.tables[t] == nil {
			db.Close()
			return nil, fmt.Errorf("not an Optuna storage: table %q is missing", t)
		}
	}
	return o, nil
}

func (o *optunaDB) loadSchema() error {
	ctx := context.Background()
	rows, err := o.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("read schema: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	for _, n := range names {
		cols := map[string]bool{}
		crows, err := o.db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, n)
		if err != nil {
			return fmt.Errorf("read schema of %s: %w", n, err)
		}
		for crows.Next() {
			var c string
			if err := crows.Scan(&c); err != nil {
				crows.Close()
				return fmt.Errorf("read schema of %s: %w", n, err)
			}
			cols[c] = true
		}
		crows.Close()
		o.tables[n] = cols
	}
	return nil
}

func (o *optunaDB) has(table, column string) bool { return o.tables[table][column] }

func (o *optunaDB) libraryVersion() string {
	if !o.has("version_info", "library_version") {
		return ""
	}
	var v sql.NullString
	if err := o.db.QueryRow(`SELECT library_version FROM version_info LIMIT 1`).Scan(&v); err != nil {
		return ""
	}
	return v.String
}

func (o *optunaDB) studies() ([]StudyInfo, error) {
	objectives := `1`
	if o.has("study_directions", "study_id") {
		objectives = `(SELECT COUNT(*) FROM study_directions d WHERE d.study_id = s.study_id)`
	}
	rows, err := o.db.Query(`SELECT s.study_name, ` + objectives + `,
		(SELECT COUNT(*) FROM trials t WHERE t.study_id = s.study_id)
		FROM studies s ORDER BY s.study_id`)
	if err != nil {
		return nil, fmt.Errorf("list studies: %w", err)
	}
	defer rows.Close()
	var out []StudyInfo
	for rows.Next() {
		var s StudyInfo
		if err := rows.Scan(&s.Name, &s.Objectives, &s.Trials); err != nil {
			return nil, fmt.Errorf("list studies: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// ListOptunaStudies lists the studies of an Optuna SQLite storage.
func ListOptunaStudies(path string) ([]StudyInfo, error) {
	o, err := openOptunaDB(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer o.db.Close()
	s, err := o.studies()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ImportOptuna reads one study of an Optuna RDB storage in an SQLite file.
// An empty study name selects the only study; a file with several studies
// then returns an error of type *StudyChoiceError listing them.
func ImportOptuna(path, study string) (*Run, error) {
	o, err := openOptunaDB(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer o.db.Close()
	run, err := o.importStudy(study)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	run.Source = path
	return run, nil
}

func (o *optunaDB) importStudy(study string) (*Run, error) {
	infos, err := o.studies()
	if err != nil {
		return nil, err
	}
	study, err = chooseStudy(infos, study)
	if err != nil {
		return nil, err
	}
	var studyID int64
	if err := o.db.QueryRow(`SELECT study_id FROM studies WHERE study_name = ?`, study).Scan(&studyID); err != nil {
		return nil, fmt.Errorf("study %q: %w", study, err)
	}
	dirs, err := o.directions(studyID, study)
	if err != nil {
		return nil, err
	}
	info := optunaStudy{name: study, dirs: dirs}
	if err := o.studyAttrs(studyID, &info); err != nil {
		return nil, err
	}
	var warnings []string

	// Trials, in trial-number order.
	numberCol := "number"
	if !o.has("trials", "number") {
		numberCol = "trial_id"
	}
	rows, err := o.db.Query(`SELECT trial_id, `+numberCol+`, state FROM trials WHERE study_id = ? ORDER BY `+numberCol+`, trial_id`, studyID)
	if err != nil {
		return nil, fmt.Errorf("study %q: read trials: %w", study, err)
	}
	var list []optunaTrial
	index := map[int64]int{}
	for rows.Next() {
		var id int64
		var number sql.NullInt64
		var state string
		if err := rows.Scan(&id, &number, &state); err != nil {
			rows.Close()
			return nil, fmt.Errorf("study %q: read trials: %w", study, err)
		}
		st, ok := optunaStateName(state)
		if !ok {
			rows.Close()
			return nil, fmt.Errorf("study %q: trial_id %d: unknown state %q", study, id, state)
		}
		n := len(list)
		if number.Valid {
			n = int(number.Int64)
		}
		index[id] = len(list)
		list = append(list, optunaTrial{number: n, state: st, value: math.NaN()})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("study %q: read trials: %w", study, err)
	}

	// Parameters, in the order they were suggested.
	rows, err = o.db.Query(`SELECT p.trial_id, p.param_name, p.param_value, p.distribution_json
		FROM trial_params p JOIN trials t ON p.trial_id = t.trial_id
		WHERE t.study_id = ? ORDER BY p.param_id`, studyID)
	if err != nil {
		return nil, fmt.Errorf("study %q: read trial_params: %w", study, err)
	}
	cache := map[string]optunaDist{}
	for rows.Next() {
		var id int64
		var name string
		var value sql.NullFloat64
		var distJSON sql.NullString
		if err := rows.Scan(&id, &name, &value, &distJSON); err != nil {
			rows.Close()
			return nil, fmt.Errorf("study %q: read trial_params: %w", study, err)
		}
		i := index[id]
		t := &list[i]
		if !value.Valid || !distJSON.Valid {
			rows.Close()
			return nil, fmt.Errorf("study %q: trial %d: parameter %q has no stored value or distribution", study, t.number, name)
		}
		d, ok := cache[distJSON.String]
		if !ok {
			d, err = parseOptunaDist(distJSON.String)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("study %q: trial %d: parameter %q: %w", study, t.number, name, err)
			}
			cache[distJSON.String] = d
		}
		t.params = append(t.params, optunaParam{name: name, internal: value.Float64, dist: d})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("study %q: read trial_params: %w", study, err)
	}

	if err := o.values(studyID, study, len(dirs), list, index); err != nil {
		return nil, err
	}
	if err := o.intermediates(studyID, study, list, index); err != nil {
		return nil, err
	}
	if err := o.constraints(studyID, study, list, index); err != nil {
		return nil, err
	}
	extra, err := o.trialExtras(studyID, study, list, index)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, extra...)
	if err := o.studyUserAttrs(studyID, study, &info); err != nil {
		return nil, err
	}
	run, err := assembleOptuna("optuna-rdb", o.path, info, list, warnings)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", study, err)
	}
	return run, nil
}

// directions reads the study's objectives' directions ("" where Optuna
// has none set); a study stored before directions had their table has one.
func (o *optunaDB) directions(studyID int64, study string) ([]space.Direction, error) {
	var names []string
	if o.has("study_directions", "direction") {
		rows, err := o.db.Query(`SELECT direction FROM study_directions WHERE study_id = ? ORDER BY objective`, studyID)
		if err != nil {
			return nil, fmt.Errorf("study %q: read directions: %w", study, err)
		}
		defer rows.Close()
		for rows.Next() {
			var d string
			if err := rows.Scan(&d); err != nil {
				return nil, fmt.Errorf("study %q: read directions: %w", study, err)
			}
			names = append(names, d)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("study %q: read directions: %w", study, err)
		}
	} else if o.has("studies", "direction") {
		var d string
		if err := o.db.QueryRow(`SELECT direction FROM studies WHERE study_id = ?`, studyID).Scan(&d); err != nil {
			return nil, fmt.Errorf("study %q: read direction: %w", study, err)
		}
		names = []string{d}
	}
	if len(names) > space.MaxObjectives {
		return nil, fmt.Errorf("study %q has %d objectives; xbo takes at most %d", study, len(names), space.MaxObjectives)
	}
	if len(names) == 0 {
		return []space.Direction{""}, nil
	}
	dirs := make([]space.Direction, len(names))
	for k, name := range names {
		dir, ok := directionName(name)
		if !ok {
			return nil, fmt.Errorf("study %q: unknown direction %q", study, name)
		}
		dirs[k] = dir
	}
	return dirs, nil
}

// studyAttrs reads the study system attributes that name its objectives.
func (o *optunaDB) studyAttrs(studyID int64, info *optunaStudy) error {
	if !o.has("study_system_attributes", "value_json") {
		return nil
	}
	rows, err := o.db.Query(`SELECT "key", value_json FROM study_system_attributes WHERE study_id = ? AND "key" IN (?, ?)`,
		studyID, optunaMetricNamesKey, dashboardObjectivesKey)
	if err != nil {
		return fmt.Errorf("study %q: read study_system_attributes: %w", info.name, err)
	}
	defer rows.Close()
	fromDashboard := false
	for rows.Next() {
		var key string
		var text sql.NullString
		if err := rows.Scan(&key, &text); err != nil {
			return fmt.Errorf("study %q: read study_system_attributes: %w", info.name, err)
		}
		if v, err := decodeJSON([]byte(text.String)); err == nil {
			info.setMetricNames(key, v, &fromDashboard)
		}
	}
	return rows.Err()
}

// constraints reads each trial's constraint values (the system attribute
// Optuna's samplers set when the study has a constraints function).
func (o *optunaDB) constraints(studyID int64, study string, list []optunaTrial, index map[int64]int) error {
	if !o.has("trial_system_attributes", "value_json") {
		return nil
	}
	rows, err := o.db.Query(`SELECT a.trial_id, a.value_json FROM trial_system_attributes a JOIN trials t ON a.trial_id = t.trial_id
		WHERE t.study_id = ? AND a."key" = ?`, studyID, optunaConstraintsKey)
	if err != nil {
		return fmt.Errorf("study %q: read trial_system_attributes: %w", study, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var text sql.NullString
		if err := rows.Scan(&id, &text); err != nil {
			return fmt.Errorf("study %q: read trial_system_attributes: %w", study, err)
		}
		t := &list[index[id]]
		v, err := decodeJSON([]byte(text.String))
		if err != nil {
			return fmt.Errorf("study %q: trial %d: constraint values %q: %w", study, t.number, text.String, err)
		}
		if t.constraints, err = optunaConstraintValues(v); err != nil {
			return fmt.Errorf("study %q: trial %d: %w", study, t.number, err)
		}
	}
	return rows.Err()
}

// values reads every trial's objective values (m objectives).
func (o *optunaDB) values(studyID int64, study string, m int, list []optunaTrial, index map[int64]int) error {
	if o.has("trial_values", "value") {
		typeCol := "'FINITE'"
		if o.has("trial_values", "value_type") {
			typeCol = "v.value_type"
		}
		rows, err := o.db.Query(`SELECT v.trial_id, v.objective, v.value, `+typeCol+`
			FROM trial_values v JOIN trials t ON v.trial_id = t.trial_id
			WHERE t.study_id = ?`, studyID)
		if err != nil {
			return fmt.Errorf("study %q: read trial_values: %w", study, err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var objective int
			var value sql.NullFloat64
			var typ string
			if err := rows.Scan(&id, &objective, &value, &typ); err != nil {
				return fmt.Errorf("study %q: read trial_values: %w", study, err)
			}
			t := &list[index[id]]
			if objective < 0 || objective >= m {
				return fmt.Errorf("study %q: trial %d has a value for objective %d, but the study has %d objective(s)", study, t.number, objective, m)
			}
			v := math.NaN()
			switch typ {
			case "FINITE":
				if value.Valid {
					v = value.Float64
				}
			case "INF_POS":
				v = math.Inf(1)
			case "INF_NEG":
				v = math.Inf(-1)
			default:
				return fmt.Errorf("study %q: trial %d: unknown value_type %q", study, t.number, typ)
			}
			if m > 1 && t.values == nil {
				t.values = make([]float64, m)
				for k := range t.values {
					t.values[k] = math.NaN()
				}
			}
			if m > 1 {
				t.values[objective] = v
			}
			if objective == 0 {
				t.value = v
			}
		}
		return rows.Err()
	}
	if o.has("trials", "value") {
		rows, err := o.db.Query(`SELECT trial_id, value FROM trials WHERE study_id = ?`, studyID)
		if err != nil {
			return fmt.Errorf("study %q: read trial values: %w", study, err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var value sql.NullFloat64
			if err := rows.Scan(&id, &value); err != nil {
				return fmt.Errorf("study %q: read trial values: %w", study, err)
			}
			if value.Valid {
				list[index[id]].value = value.Float64
			}
		}
		return rows.Err()
	}
	return fmt.Errorf("study %q: the storage has neither a trial_values table nor a trials.value column (unknown Optuna schema %s)", study, o.libraryVersion())
}

// intermediates reads the values trials reported before finishing (kept
// with pruned trials too: Optuna's pruned trial has its last one as value).
func (o *optunaDB) intermediates(studyID int64, study string, list []optunaTrial, index map[int64]int) error {
	table := "trial_intermediate_values"
	valueCol := "intermediate_value"
	switch {
	case o.tables[table] == nil:
		return nil
	case !o.has(table, valueCol):
		valueCol = "value"
	}
	typeCol := "'FINITE'"
	if o.has(table, "intermediate_value_type") {
		typeCol = "iv.intermediate_value_type"
	}
	rows, err := o.db.Query(`SELECT iv.trial_id, iv.step, iv.`+valueCol+`, `+typeCol+`
		FROM `+table+` iv JOIN trials t ON iv.trial_id = t.trial_id
		WHERE t.study_id = ? ORDER BY iv.trial_id, iv.step`, studyID)
	if err != nil {
		return fmt.Errorf("study %q: read %s: %w", study, table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, step int64
		var value sql.NullFloat64
		var typ string
		if err := rows.Scan(&id, &step, &value, &typ); err != nil {
			return fmt.Errorf("study %q: read %s: %w", study, table, err)
		}
		t := &list[index[id]]
		v := math.NaN()
		switch typ {
		case "FINITE":
			if value.Valid {
				v = value.Float64
			}
		case "INF_POS":
			v = math.Inf(1)
		case "INF_NEG":
			v = math.Inf(-1)
		case "NAN":
		default:
			return fmt.Errorf("study %q: trial %d: unknown intermediate_value_type %q", study, t.number, typ)
		}
		t.intermediate = append(t.intermediate, history.Intermediate{Step: step, Value: v})
	}
	return rows.Err()
}

// StudyChoiceError is returned when a storage holds several studies and none
// was named.
type StudyChoiceError struct {
	Studies []StudyInfo
}

func (e *StudyChoiceError) Error() string {
	parts := make([]string, len(e.Studies))
	for i, s := range e.Studies {
		extra := ""
		if s.Objectives > 1 {
			extra = fmt.Sprintf(", %d objectives", s.Objectives)
		}
		parts[i] = fmt.Sprintf("%q (%d trials%s)", s.Name, s.Trials, extra)
	}
	return fmt.Sprintf("the storage holds %d studies; choose one with --study: %s", len(e.Studies), strings.Join(parts, ", "))
}

func chooseStudy(infos []StudyInfo, study string) (string, error) {
	if len(infos) == 0 {
		return "", errors.New("the storage holds no study")
	}
	if study == "" {
		if len(infos) > 1 {
			return "", &StudyChoiceError{Studies: infos}
		}
		return infos[0].Name, nil
	}
	for _, s := range infos {
		if s.Name == study {
			return study, nil
		}
	}
	names := make([]string, len(infos))
	for i, s := range infos {
		names[i] = fmt.Sprintf("%q", s.Name)
	}
	return "", fmt.Errorf("no study named %q (studies: %s)", study, strings.Join(names, ", "))
}
