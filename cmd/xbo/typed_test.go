package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xbo/store"
)

// A study with numeric and boolean choices exports a CSV of text forms and
// its space; the pair reads back into explain --data and import --csv with
// the choices' types, and the store, the JSON export and the explanations
// keep them.
func TestTypedChoicesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := filepath.Join(dir, "space.json")
	os.WriteFile(spacePath, []byte(`{"objective":"minimize","params":[
		{"name":"units","type":"categorical","choices":[16,32,64]},
		{"name":"flag","type":"categorical","choices":[true,false]},
		{"name":"x","type":"float","low":0,"high":1}]}`), 0o644)
	if code, _, errOut := runCLI(t, "study", "create", "--db", db, "--name", "net", "--space", spacePath, "--seed", "1"); code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		units := []float64{16, 32, 64}[i%3]
		flag := i%2 == 0
		x := float64(i) / 10
		v := units/64 + x
		if flag {
			v++
		}
		if _, err := st.AddTrial(ctx, "net", store.NewTrial{Params: map[string]any{"units": units, "flag": flag, "x": x}, Value: &v, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	csvPath, outSpace := filepath.Join(dir, "t.csv"), filepath.Join(dir, "s.json")
	if code, _, errOut := runCLI(t, "study", "export", "net", "--db", db, "-o", csvPath, "--space-out", outSpace); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	csv, _ := os.ReadFile(csvPath)
	if !strings.Contains(string(csv), "\n0,16,true,0,") {
		t.Fatalf("CSV rows hold text forms: %s", csv)
	}
	doc, _ := os.ReadFile(outSpace)
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), ""), `"choices":[16,32,64]`) {
		t.Fatalf("exported space lost the types: %s", doc)
	}
	labels := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"explain", "pdp"}, args...)...)
		if code != 0 {
			t.Fatalf("explain pdp %v: %d %s", args, code, errOut)
		}
		var r struct {
			Labels json.RawMessage `json:"labels"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("explain pdp %v: %v in %s", args, err, out)
		}
		return strings.Join(strings.Fields(string(r.Labels)), "")
	}
	if got := labels("--data", csvPath, "--space", outSpace, "--param", "units", "--mc", "100", "--json"); got != `[16,32,64]` {
		t.Fatalf("explain --data levels %s", got)
	}
	if got := labels("--study", "net", "--db", db, "--param", "flag", "--mc", "100", "--json"); got != `[true,false]` {
		t.Fatalf("explain --study levels %s", got)
	}

	other := filepath.Join(dir, "other.db")
	if code, out, errOut := runCLI(t, "import", "--csv", csvPath, "--space", outSpace, "--into", other, "--name", "copy"); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errOut)
	}
	st, err = store.OpenExisting(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	imported, _, err := st.Trials(ctx, "copy", store.TrialQuery{})
	st.Close()
	if err != nil || len(imported) != 9 {
		t.Fatalf("imported %d trials, %v", len(imported), err)
	}
	for _, tr := range imported {
		if _, ok := tr.Params["units"].(float64); !ok {
			t.Fatalf("imported trial %d: units %#v", tr.Number, tr.Params["units"])
		}
		if _, ok := tr.Params["flag"].(bool); !ok {
			t.Fatalf("imported trial %d: flag %#v", tr.Number, tr.Params["flag"])
		}
	}
	code, out, errOut := runCLI(t, "study", "export", "copy", "--json", "--db", other)
	if code != 0 {
		t.Fatalf("export --json: %d %s", code, errOut)
	}
	var exported struct {
		Trials []struct {
			Params map[string]any `json:"params"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &exported); err != nil || len(exported.Trials) != 9 {
		t.Fatalf("export --json: %v %.300s", err, out)
	}
	if got := fmt.Sprint(exported.Trials[0].Params["units"], exported.Trials[0].Params["flag"]); got != "16 true" {
		t.Fatalf("exported JSON first trial: %s (%#v)", got, exported.Trials[0].Params)
	}
}
