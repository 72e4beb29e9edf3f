package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// MarshalJSONIndent renders the report's numbers. NaN and ±Inf, which
// encoding/json rejects, cannot occur in a built report; a report that holds
// one anyway is an error rather than a silently altered number.
func (rep *Report) MarshalJSONIndent() ([]byte, error) {
	if rep == nil {
		return nil, errors.New("report: json: nil report")
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: json: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteFiles writes the HTML page (and the JSON numbers when jsonPath is not
// empty). Everything is rendered in memory, then written to temporary files
// beside the targets and renamed into place only when every file is
// complete, so a failure never leaves a half-written or mismatched report.
func WriteFiles(rep *Report, htmlPath, jsonPath string) error {
	if htmlPath == "" {
		return errors.New("report: no output file")
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		return err
	}
	outs := []struct {
		path string
		data []byte
	}{{htmlPath, page.Bytes()}}
	if jsonPath != "" {
		data, err := rep.MarshalJSONIndent()
		if err != nil {
			return err
		}
		outs = append(outs, struct {
			path string
			data []byte
		}{jsonPath, data})
	}
	var temps []string
	cleanup := func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}
	for _, o := range outs {
		t, err := writeTemp(o.path, o.data)
		if err != nil {
			cleanup()
			return err
		}
		temps = append(temps, t)
	}
	for i, o := range outs {
		if err := os.Rename(temps[i], o.path); err != nil {
			cleanup()
			return fmt.Errorf("report: %s: %w", o.path, err)
		}
	}
	return nil
}

func writeTemp(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("report: %s: %w", path, err)
	}
	name := f.Name()
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("report: %s: %w", path, err)
	}
	if err := os.Chmod(name, 0o644); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("report: %s: %w", path, err)
	}
	return name, nil
}
