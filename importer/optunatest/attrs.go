package optunatest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// AttrsTrial is one trial of make_optuna_attrs.py's study as Optuna itself
// reported it.
type AttrsTrial struct {
	Number           int64              `json:"number"`
	State            string             `json:"state"` // COMPLETE, PRUNED, FAIL
	Params           map[string]any     `json:"params"`
	Value            *float64           `json:"value"`
	Intermediate     map[string]float64 `json:"intermediate"` // step (as text) → value
	UserAttrs        map[string]any     `json:"user_attrs"`
	DatetimeStart    string             `json:"datetime_start"`    // isoformat, naive local time
	DatetimeComplete string             `json:"datetime_complete"` // isoformat, naive local time
	Enqueued         bool               `json:"enqueued"`
}

// AttrsStudy is make_optuna_attrs.py's study in one storage.
type AttrsStudy struct {
	UserAttrs map[string]any `json:"user_attrs"`
	Trials    []AttrsTrial   `json:"trials"`
}

// AttrsStudies returns the lossless-import study of each storage ("rdb",
// "journal") from dir's optuna_attrs_expected.json, and the paths of the
// RDB file and the journal. dir is a fresh study made with the installed
// Optuna when it is there (FreshStudyFrom), else the committed fixtures.
func AttrsStudies(t testing.TB) (studies map[string]AttrsStudy, rdb, journal string) {
	t.Helper()
	dir := FreshStudyFrom(t, "make_optuna_attrs.py")
	if dir == "" {
		dir = Fixtures()
	}
	raw, err := os.ReadFile(filepath.Join(dir, "optuna_attrs_expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &studies); err != nil {
		t.Fatal(err)
	}
	return studies, filepath.Join(dir, "optuna_attrs_rdb.sqlite3"), filepath.Join(dir, "optuna_attrs_journal.log")
}
