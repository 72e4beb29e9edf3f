package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runCLI runs the CLI in-process and returns exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &cliEnv{stdout: &out, stderr: &errb, stdin: strings.NewReader("")})
	return code, out.String(), errb.String()
}

func TestHelpListsEveryCommand(t *testing.T) {
	code, out, _ := runCLI(t, "help")
	if code != 0 {
		t.Fatalf("help exit %d", code)
	}
	for name := range commands {
		if !strings.Contains(out, name) {
			t.Errorf("help does not list %q", name)
		}
	}
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	code, _, errOut := runCLI(t, "frobnicate")
	if code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
}

// An unknown command is named alone, not with the flags after it.
func TestUnknownCommandNamesOnlyTheCommand(t *testing.T) {
	code, _, errOut := runCLI(t, "tune", "--space", "s.json")
	if code != 2 || !strings.Contains(errOut, `unknown command "tune" `) || strings.Contains(errOut, "--space") {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := runCLI(t, args...)
		if code != 0 || !strings.HasPrefix(out, "xbo "+Version+" (commit ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
}

// A server that cannot bind its address exits with the error and leaves no
// database file behind.
func TestServeThatCannotBindCreatesNoDatabase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "new.db")
	code, _, errOut := runCLI(t, "serve", "--addr", ln.Addr().String(), "--db", db)
	if code != 1 || !strings.Contains(errOut, "listen") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("the failed serve left %s (%v)", db, err)
	}
}

// A trials file whose first line never ends is refused after the reader's
// line limit, with a one-line error, by every command that reads one
// (a 50 MB header once took 1.25 GB and 210 MB of stderr).
func TestHugeHeaderLineIsRefusedShortly(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(data, []byte(strings.Repeat("x", 3<<20)+"\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(dir, "space.json")
	if err := os.WriteFile(sp, []byte(`{"params":[{"name":"x","type":"float","low":0,"high":1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"explain", "importance", "--data", data, "--space", sp},
		{"explain", "pdp", "--data", data, "--space", sp, "--param", "x"},
		{"import", "--csv", data, "--space", sp, "--out", filepath.Join(dir, "o.csv"), "--space-out", filepath.Join(dir, "o.json")},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != 1 || !strings.Contains(errOut, "longer than") || len(errOut) > 300 {
			t.Errorf("%v: exit %d, %d bytes of stderr: %.200q", args, code, len(errOut), errOut)
		}
	}
}
