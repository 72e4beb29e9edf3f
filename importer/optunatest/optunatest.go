// Package optunatest creates Optuna studies with the real Optuna (Debian's
// python3-optuna) for tests of the importer and of what is built on it, so
// that a format change in the installed Optuna is caught, not only the one
// pinned by the committed fixtures in importer/testdata.
package optunatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Python is the interpreter that sees Debian's python3-optuna.
const Python = "/usr/bin/python3"

// Fixtures is the directory of the committed fixtures and of make_optuna.py.
func Fixtures() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// FreshStudy runs make_optuna.py in a temporary directory and returns it; the
// directory then holds optuna_rdb.sqlite3, optuna_journal.log and
// optuna_expected.json. When Optuna is not installed it returns "" — or fails
// the test when XBO_REQUIRE_OPTUNA is set, as CI does.
func FreshStudy(t testing.TB) string {
	t.Helper()
	return FreshStudyFrom(t, "make_optuna.py")
}

// FreshStudyFrom is FreshStudy with another script of the fixtures
// directory.
func FreshStudyFrom(t testing.TB, script string) string {
	t.Helper()
	if !Available(t) {
		return ""
	}
	dir := t.TempDir()
	text, err := os.ReadFile(filepath.Join(Fixtures(), script))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, script), text, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Python, script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return dir
}

// Available reports whether Python can import optuna. When it cannot, it
// logs why and returns false — or fails the test when XBO_REQUIRE_OPTUNA is
// set, as CI does.
func Available(t testing.TB) bool {
	t.Helper()
	if err := exec.Command(Python, "-c", "import optuna").Run(); err != nil {
		if os.Getenv("XBO_REQUIRE_OPTUNA") != "" {
			t.Fatalf("XBO_REQUIRE_OPTUNA is set but %s cannot import optuna: %v", Python, err)
		}
		t.Logf("python3-optuna is not installed (%v)", err)
		return false
	}
	return true
}
