package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"

	"xbo/history"
	"xbo/space"
	"xbo/trials"
)

// WriteCSV writes the trials CSV.
func (r *Run) WriteCSV(w io.Writer) error {
	if r.History == nil || r.Space == nil {
		return errors.New("importer: run has no space")
	}
	if err := trials.Write(w, r.History); err != nil {
		return fmt.Errorf("importer: %w", err)
	}
	return nil
}

// WriteFiles writes the trials CSV and the space JSON (either path may be
// empty to skip it). Each file is written to a temporary file in the same
// directory and renamed into place only when every file is complete, so a
// failure never leaves a half-written file behind.
func WriteFiles(r *Run, csvPath, spacePath string) error {
	if r == nil || r.History == nil || r.Space == nil {
		return errors.New("importer: nothing to write (no run or no space)")
	}
	return WriteFilesFrom(r, Held(r), csvPath, spacePath)
}

// Held yields the trials a run holds, for the functions that take trials
// as a sequence (WriteFilesFrom, TableTrials.Trials); none for a run
// without a history.
func Held(r *Run) iter.Seq2[history.Trial, error] {
	return func(yield func(history.Trial, error) bool) {
		if r == nil || r.History == nil {
			return
		}
		for i := range r.Trials {
			if !yield(r.Trials[i], nil) {
				return
			}
		}
	}
}

// WriteFilesFrom is WriteFiles for trials read from a sequence as they are
// written (TableTrials.Trials), so that the run need not hold them; an
// error of the sequence leaves no file behind.
func WriteFilesFrom(r *Run, seq iter.Seq2[history.Trial, error], csvPath, spacePath string) error {
	if r == nil || r.History == nil || r.Space == nil || seq == nil {
		return errors.New("importer: nothing to write (no run, no space or no trials)")
	}
	type pending struct{ tmp, dst string }
	var done []pending
	cleanup := func() {
		for _, p := range done {
			os.Remove(p.tmp)
		}
	}
	if csvPath != "" {
		tmp, err := writeTemp(csvPath, func(w io.Writer) error {
			if err := trials.WriteSeq(w, r.Space, seq); err != nil {
				return fmt.Errorf("importer: %w", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		done = append(done, pending{tmp, csvPath})
	}
	if spacePath != "" {
		tmp, err := writeTemp(spacePath, func(w io.Writer) error {
			data, err := SpaceJSON(r.Space)
			if err != nil {
				return err
			}
			_, err = w.Write(data)
			return err
		})
		if err != nil {
			cleanup()
			return err
		}
		done = append(done, pending{tmp, spacePath})
	}
	for i, p := range done {
		if err := os.Rename(p.tmp, p.dst); err != nil {
			for _, q := range done[i:] {
				os.Remove(q.tmp)
			}
			return fmt.Errorf("importer: %w", err)
		}
	}
	return nil
}

// writeTemp writes a file next to dst through fill and syncs it; it returns
// the temporary file's name.
func writeTemp(dst string, fill func(io.Writer) error) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("importer: %w", err)
	}
	name := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(name)
		return "", fmt.Errorf("importer: write %s: %w", dst, err)
	}
	if err := fill(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("importer: write %s: %w", dst, err)
	}
	if err := os.Chmod(name, 0o644); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("importer: write %s: %w", dst, err)
	}
	return name, nil
}

// SpaceJSON renders a space in the file format space.Parse reads, indented
// for people, and checks that it reads back.
func SpaceJSON(s *space.Space) ([]byte, error) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("importer: space: %w", err)
	}
	if _, err := space.Parse(data); err != nil {
		return nil, fmt.Errorf("importer: the space does not read back: %w", err)
	}
	return append(data, '\n'), nil
}
