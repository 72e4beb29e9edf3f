package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A failed write leaves the old file as it was and nothing beside it; a
// successful one replaces it whole.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "half of the new")
		return errors.New("killed")
	})
	if err == nil {
		t.Fatal("a failed write reported success")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %d files", len(entries))
	}
	if err := WriteBytes(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("file holds %q, want new", b)
	}
	if err := WriteBytes("", nil); err == nil {
		t.Error("empty path accepted")
	}
}
