// Package atomicfile writes a file so that it is either whole or absent: the
// content goes to a temporary file in the same directory, is synced, and is
// renamed into place only when complete, so a failure or a kill never leaves
// a truncated file that looks whole (rename is atomic within a file system,
// POSIX rename(2)). The standard library's os.WriteFile truncates in place.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write writes path through write, atomically (see the package doc), with
// mode 0644.
func Write(path string, write func(io.Writer) error) error {
	if path == "" {
		return errors.New("atomicfile: empty path")
	}
	if write == nil {
		return fmt.Errorf("atomicfile: %s: nil writer", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := write(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
