package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"xbo/server"
	"xbo/store"
	"xbo/store/storetest"
)

// ask prints a trial as JSON and tell records its outcome, on the embedded
// store: a shell pipeline can run a study.
func TestAskTellOnTheEmbeddedStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "s.json", `{"params":[{"name":"x","type":"float","low":0,"high":1},{"name":"opt","type":"categorical","choices":["sgd","adam"]}]}`)
	// Without --space a missing database is not created.
	code, _, stderr := runCLI(t, "ask", "--study", "s", "--db", db)
	if code != 1 || !strings.Contains(stderr, "no database there") {
		t.Fatalf("ask without a database: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("ask created %s", db)
	}
	asked := make([]askedTrial, 3)
	for i := range asked {
		args := []string{"ask", "--study", "s", "--db", db}
		if i == 0 {
			args = append(args, "--space", spacePath)
		}
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("ask %d: exit %d: %s", i, code, stderr)
		}
		if err := json.Unmarshal([]byte(stdout), &asked[i]); err != nil || asked[i].Number != int64(i) || len(asked[i].Params) != 2 || !strings.HasSuffix(stdout, "}\n") {
			t.Fatalf("ask %d printed %q (%v)", i, stdout, err)
		}
		if _, ok := asked[i].Params["opt"].(string); !ok {
			t.Fatalf("ask %d: opt is %T", i, asked[i].Params["opt"])
		}
	}
	x := strconv.FormatFloat(asked[0].Params["x"].(float64), 'g', -1, 64)
	for _, args := range [][]string{
		{"--trial", "0", "--value", x},
		{"--trial", "0", "--value", x}, // the same outcome again
		{"--trial", "1", "--state", "failed", "--reason", "out of memory"},
		{"--trial", "2", "--state", "pruned", "--value", "0.75"},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"tell", "--study", "s", "--db", db}, args...)...)
		if code != 0 || stdout != "" || !strings.HasPrefix(stderr, "trial "+args[1]+` of study "s": `) {
			t.Fatalf("tell %v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	got := studyTrials(t, db, "s")
	if len(got) != 3 || got[0].State != store.Complete || *got[0].Value != asked[0].Params["x"].(float64) || got[0].Worker == "" ||
		got[1].State != store.Failed || got[1].FailReason != "out of memory" || got[2].State != store.Pruned || *got[2].Value != 0.75 {
		t.Fatalf("trials %+v", got)
	}
	// Misuses: each one line and exit 2; another outcome for a told trial
	// is refused by the service (exit 1).
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--trial", "0", "--value", "0.9"}, 1, "409"},
		{[]string{"--trial", "1", "--state", "fialed"}, 2, `xbo tell: --state "fialed"; did you mean "failed"?`},
		{[]string{"--trial", "1", "--value", "nan"}, 2, "xbo tell: --value: nan is not a finite number"},
		{[]string{"--trial", "1"}, 2, "xbo tell: --value is required for a complete trial"},
		{[]string{"--value", "1"}, 2, "xbo tell: --trial N (the number xbo ask printed) is required"},
		{[]string{"--trial", "1", "--state", "failed", "--value", "1"}, 2, "xbo tell: a failed trial has no --value"},
		{[]string{"--trial", "1", "--value", "1", "--url", "http://127.0.0.1:1"}, 2, "xbo tell: give --db or --url, not both"},
	} {
		code, _, stderr := runCLI(t, append([]string{"tell", "--study", "s", "--db", db}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("tell %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// ask and tell reach a running xbo serve with --url, and delete a study
// there.
func TestAskTellDeleteOnAServer(t *testing.T) {
	dir := t.TempDir()
	st, hs := remoteServer(t, dir, "tok")
	spacePath := writeTestFile(t, dir, "r.json", `{"objectives":[{"name":"a","direction":"minimize"},{"name":"b","direction":"minimize"}],"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	code, stdout, stderr := runCLI(t, "ask", "--study", "r", "--space", spacePath, "--url", hs.URL, "--token", "tok", "--worker", "pipeline-1")
	var a askedTrial
	if code != 0 || json.Unmarshal([]byte(stdout), &a) != nil {
		t.Fatalf("ask: exit %d, %q, %s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, "tell", "--study", "r", "--trial", strconv.FormatInt(a.Number, 10), "--value", "0.5,2", "--url", hs.URL, "--token", "tok")
	if code != 0 {
		t.Fatalf("tell: exit %d: %s", code, stderr)
	}
	list, _, err := st.Trials(context.Background(), "r", store.TrialQuery{})
	if err != nil || len(list) != 1 || list[0].State != store.Complete || len(list[0].Values) != 2 || list[0].Values[1] != 2 || list[0].Worker != "pipeline-1" {
		t.Fatalf("trials %+v, %v", list, err)
	}
	// One value for two objectives is the caller's mistake.
	code, _, _ = runCLI(t, "ask", "--study", "r", "--url", hs.URL, "--token", "tok")
	code2, _, stderr := runCLI(t, "tell", "--study", "r", "--trial", "1", "--value", "0.5", "--url", hs.URL, "--token", "tok")
	if code != 0 || code2 != 2 || !strings.Contains(stderr, "xbo tell: ") {
		t.Fatalf("one value for two objectives: exit %d, %d: %s", code, code2, stderr)
	}
	code, _, stderr = runCLI(t, "study", "delete", "r", "--url", hs.URL, "--token", "tok", "--yes")
	if code != 0 || stderr != "deleted study \"r\" and its 2 trials\n" {
		t.Fatalf("delete: exit %d: %q", code, stderr)
	}
	if _, err := st.Study(context.Background(), "r"); err == nil {
		t.Fatal("the study is still there")
	}
}

// remoteServer starts an xbo serve (in this process) on a store in dir,
// closed at the end of the test.
func remoteServer(t *testing.T, dir, token string) (store.Store, *httptest.Server) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, "remote.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(server.Config{Store: st, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return st, hs
}

// study delete needs --yes: without it nothing is deleted, and the
// refusal says what would be.
func TestStudyDeleteNeedsYes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "d.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	if code, _, stderr := runCLI(t, "ask", "--study", "d", "--space", spacePath, "--db", db); code != 0 {
		t.Fatalf("ask: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "study", "delete", "d", "--db", db)
	want := `xbo study delete: deleting study "d" (` + db + `) would remove it and its 1 trial for good; add --yes to confirm` + "\n"
	if code != 2 || stdout != "" || stderr != want {
		t.Fatalf("without --yes: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	if n := len(studyTrials(t, db, "d")); n != 1 {
		t.Fatalf("%d trials left after the refusal", n)
	}
	if code, _, stderr := runCLI(t, "study", "delete", "d", "--db", db, "--yes"); code != 0 {
		t.Fatalf("--yes: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"study", "delete", "d", "--db", db, "--yes"}, 1, `xbo study delete: no study "d" in ` + db},
		{[]string{"study", "delete", "--db", db, "--yes"}, 2, "xbo study delete: which study?"},
		{[]string{"study", "delete", "d", "--db", filepath.Join(dir, "none.db"), "--yes"}, 1, "no database there"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); !os.IsNotExist(err) {
		t.Error("study delete created a database")
	}
}

// ask, tell and study delete work on a PostgreSQL store given with --db
// (skipped without a server unless XBO_REQUIRE_POSTGRES=1).
func TestAskTellDeleteOnPostgres(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	spacePath := writeTestFile(t, t.TempDir(), "pg.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	code, stdout, stderr := runCLI(t, "ask", "--study", "pg", "--space", spacePath, "--db", dsn)
	var a askedTrial
	if code != 0 || json.Unmarshal([]byte(stdout), &a) != nil {
		t.Fatalf("ask: exit %d, %q, %s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "tell", "--study", "pg", "--trial", strconv.FormatInt(a.Number, 10), "--value", "0.25", "--db", dsn); code != 0 {
		t.Fatalf("tell: exit %d: %s", code, stderr)
	}
	if got := studyTrials(t, dsn, "pg"); len(got) != 1 || got[0].State != store.Complete || *got[0].Value != 0.25 {
		t.Fatalf("trials %+v", got)
	}
	code, _, stderr = runCLI(t, "study", "delete", "pg", "--db", dsn)
	if code != 2 || !strings.Contains(stderr, `deleting study "pg" (PostgreSQL) would remove it and its 1 trial for good`) {
		t.Fatalf("without --yes: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "study", "delete", "pg", "--db", dsn, "--yes"); code != 0 {
		t.Fatalf("delete: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "tell", "--study", "pg", "--trial", "0", "--value", "1", "--db", dsn)
	if code != 1 || !strings.Contains(stderr, "404") {
		t.Fatalf("tell after the delete: exit %d: %s", code, stderr)
	}
}
