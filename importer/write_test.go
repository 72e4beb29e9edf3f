package importer

import (
	"os"
	"path/filepath"
	"testing"

	"xbo/space"
	"xbo/trials"
)

func TestWriteFilesIsAllOrNothing(t *testing.T) {
	run, err := ImportOptuna("testdata/optuna_rdb.sqlite3", "tpe-known")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "trials.csv")
	spacePath := filepath.Join(dir, "space.json")
	if err := WriteFiles(run, csvPath, spacePath); err != nil {
		t.Fatal(err)
	}
	s, err := space.Load(spacePath)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := trials.ReadFile(csvPath, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Usable()) != 38 || len(tab.Trials) != 40 {
		t.Errorf("read back %d usable of %d", len(tab.Usable()), len(tab.Trials))
	}

	// The space file cannot be written (its directory does not exist): the
	// existing CSV must stay as it was and no temporary file may remain.
	os.WriteFile(csvPath, []byte("old contents\n"), 0o644)
	err = WriteFiles(run, csvPath, filepath.Join(dir, "missing", "space.json"))
	if err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if got, _ := os.ReadFile(csvPath); string(got) != "old contents\n" {
		t.Errorf("the CSV was replaced although the import failed: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "trials.csv" && e.Name() != "space.json" {
			t.Errorf("left behind %s", e.Name())
		}
	}
}
