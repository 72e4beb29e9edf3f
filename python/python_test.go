// Package python_test runs the tests of the Python client (the xbo package in
// this directory) from go test, so that .ci/run, which runs go test ./...,
// runs them too. It builds xbo, starts `xbo serve` on a free port with a
// temporary SQLite database, installs the package into a fresh virtual
// environment with the command README.md documents (downloading nothing), and
// runs `python -m unittest` in tests/ with the installed package, then the
// example worker.
package python_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"xbo/client"
	"xbo/store/storetest"
)

const token = "python-test-token"

// debianPython sees Debian's python3-optuna, which the Optuna bridge tests
// need (the same interpreter as package importer/optunatest).
const debianPython = "/usr/bin/python3"

func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func interpreter(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(debianPython); err == nil {
		return debianPython
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("skipping: python3 is not installed")
	}
	return py
}

// TestPythonClient is the whole Python side: install, unit tests against a
// real server, the example worker.
func TestPythonClient(t *testing.T) {
	py := interpreter(t)
	dir := t.TempDir()
	bin := buildXBO(t, dir)
	url := serve(t, bin, dir)
	venvPython := install(t, py, dir)

	t.Run("unittest", func(t *testing.T) {
		cmd := exec.Command(venvPython, "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py", "-v")
		// Run from tests/, so that `import xbo` finds the installed package
		// and not the source tree.
		cmd.Dir = filepath.Join(here(), "tests")
		cmd.Env = append(os.Environ(), "XBO_TEST_URL="+url, "XBO_TEST_TOKEN="+token, "PYTHONDONTWRITEBYTECODE=1")
		out, err := runFor(cmd, 15*time.Minute)
		if err != nil {
			t.Fatalf("python -m unittest: %v\n%s", err, out)
		}
		summary := regexp.MustCompile(`(?m)^Ran \d+ tests? in .*$|^OK.*$`).FindAllString(out, -1)
		t.Logf("%s", strings.Join(summary, "; "))
		for _, name := range []string{"test_xbo_proposes_optuna_evaluates", "test_sklearn_simple_pattern"} {
			if !strings.Contains(out, name) {
				t.Fatalf("unittest did not discover the Optuna bridge tests (%s):\n%s", name, out)
			}
		}
		if os.Getenv("XBO_REQUIRE_OPTUNA") != "" {
			// The conformance tests of the sampler contract run in CI:
			// neither Optuna nor scikit-learn may be missing there.
			for _, skip := range []string{"skipped 'optuna is not installed'", "skipped 'sklearn is not installed'"} {
				if strings.Contains(out, skip) {
					t.Fatalf("XBO_REQUIRE_OPTUNA is set but bridge tests %s (%s):\n%s", skip, py, out)
				}
			}
		}
	})

	t.Run("worker-example", func(t *testing.T) { workerExample(t, venvPython, url) })

	// Studies with several objectives and constraints use the stores'
	// newest columns and checks: their tests run against PostgreSQL too.
	t.Run("objectives-postgres", func(t *testing.T) {
		pgURL := serveDB(t, bin, t.TempDir(), storetest.PostgresDSN(t))
		cmd := exec.Command(venvPython, "-m", "unittest", "-v", "test_objectives")
		cmd.Dir = filepath.Join(here(), "tests")
		cmd.Env = append(os.Environ(), "XBO_TEST_URL="+pgURL, "XBO_TEST_TOKEN="+token, "PYTHONDONTWRITEBYTECODE=1")
		out, err := runFor(cmd, 10*time.Minute)
		if err != nil {
			t.Fatalf("python -m unittest test_objectives on PostgreSQL: %v\n%s", err, out)
		}
		if !strings.Contains(out, "test_optimize_two_objectives_with_a_constraint") {
			t.Fatalf("the objectives tests did not run:\n%s", out)
		}
	})
}

// install creates a virtual environment that sees the system's packages
// (Optuna, for the bridge tests) and installs a copy of the package into it
// with README.md's command, pip's build isolation included: the build
// backend needs nothing that could be downloaded. The copy keeps the source
// tree free of the backend's bytecode.
func install(t *testing.T, py, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	copyPackage(t, here(), src)
	venv := filepath.Join(dir, "venv")
	if out, err := runFor(exec.Command(py, "-m", "venv", "--system-site-packages", venv), 2*time.Minute); err != nil {
		t.Fatalf("%s -m venv (Debian: apt-get install python3-venv): %v\n%s", py, err, out)
	}
	vpy := filepath.Join(venv, "bin", "python")
	pip := exec.Command(vpy, "-m", "pip", "install", "--no-index", src)
	pip.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1")
	if out, err := runFor(pip, 5*time.Minute); err != nil {
		t.Fatalf("pip install --no-index: %v\n%s", err, out)
	}
	// The installed package is the one imported outside the source tree.
	where := exec.Command(vpy, "-c", "import xbo, xbo.integration; print(xbo.__file__)")
	where.Dir = dir
	out, err := runFor(where, time.Minute)
	if err != nil {
		t.Fatalf("import the installed xbo: %v\n%s", err, out)
	}
	if !strings.HasPrefix(strings.TrimSpace(out), venv+string(filepath.Separator)) {
		t.Fatalf("xbo was imported from %s, not from the virtual environment %s", strings.TrimSpace(out), venv)
	}
	return vpy
}

// copyPackage copies what pip needs: pyproject.toml, README.md, the build
// backend in _build/ and the package in xbo/.
func copyPackage(t *testing.T, from, to string) {
	t.Helper()
	for _, name := range []string{"pyproject.toml", "README.md"} {
		copyFile(t, filepath.Join(from, name), filepath.Join(to, name))
	}
	for _, dir := range []string{"_build", "xbo"} {
		err := filepath.WalkDir(filepath.Join(from, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(from, path)
			if err != nil {
				return err
			}
			copyFile(t, path, filepath.Join(to, rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runFor runs cmd with a time limit and returns its combined output.
func runFor(cmd *exec.Cmd, limit time.Duration) (string, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		return out.String(), context.DeadlineExceeded
	}
}

func buildXBO(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "xbo")
	if out, err := exec.Command("go", "build", "-o", bin, "xbo/cmd/xbo").CombinedOutput(); err != nil {
		t.Fatalf("go build xbo: %v\n%s", err, out)
	}
	return bin
}

// serve starts `xbo serve` on a free port with a SQLite database in dir and
// returns its URL once it answers; the server is stopped at the test's end.
func serve(t *testing.T, bin, dir string) string {
	t.Helper()
	return serveDB(t, bin, dir, filepath.Join(dir, "xbo.db"))
}

// serveDB is serve with the given database (a SQLite file or a PostgreSQL
// DSN); dir holds the server's log.
func serveDB(t *testing.T, bin, dir, db string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	log, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", addr, "--db", db, "--token", token, "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("xbo serve log:\n%s", b)
		}
	})
	url := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(url + "/api/health")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("xbo serve did not answer at %s", url)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// workerExample runs examples/python/worker.py: one copy creates the study,
// then two run at once on it.
func workerExample(t *testing.T, py, url string) {
	script := filepath.Join(here(), "..", "examples", "python", "worker.py")
	run := func(create bool, name string) *exec.Cmd {
		args := []string{script, "--url", url, "--token", token, "--study", "py-worker", "--trials", "6", "--worker", name}
		if create {
			args = append(args, "--create")
		}
		return exec.Command(py, args...)
	}
	if out, err := runFor(run(true, "p0"), 5*time.Minute); err != nil {
		t.Fatalf("worker.py --create: %v\n%s", err, out)
	}
	a, b := run(false, "p1"), run(false, "p2")
	type result struct {
		out string
		err error
	}
	results := make(chan result, 2)
	for _, cmd := range []*exec.Cmd{a, b} {
		go func(cmd *exec.Cmd) {
			out, err := runFor(cmd, 5*time.Minute)
			results <- result{out, err}
		}(cmd)
	}
	for range 2 {
		if r := <-results; r.err != nil {
			t.Fatalf("worker.py: %v\n%s", r.err, r.out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	all, err := client.New(url, client.WithToken(token)).Trials(ctx, "py-worker")
	if err != nil {
		t.Fatal(err)
	}
	workers := map[string]int{}
	for _, tr := range all {
		workers[tr.Worker]++
		switch tr.State {
		case "complete":
			// The told loss is the last epoch's reported loss.
			if len(tr.Intermediate) == 0 || tr.Intermediate[len(tr.Intermediate)-1].Value != *tr.Value {
				t.Fatalf("trial %d: last intermediate value %v, told %v", tr.Number, tr.Intermediate, *tr.Value)
			}
			if epochs := tr.Params["epochs"].(float64); len(tr.Intermediate) != int(epochs) {
				t.Fatalf("trial %d: %d intermediate values for %v epochs", tr.Number, len(tr.Intermediate), epochs)
			}
		case "failed":
			if !strings.Contains(tr.FailReason, "diverged") && !strings.Contains(tr.FailReason, "Overflow") {
				t.Fatalf("trial %d failed for another reason than divergence: %q", tr.Number, tr.FailReason)
			}
		default:
			t.Fatalf("trial %d is %s", tr.Number, tr.State)
		}
	}
	if len(all) != 18 || workers["p0"] != 6 || workers["p1"] != 6 || workers["p2"] != 6 {
		t.Fatalf("%d trials by workers %v", len(all), workers)
	}
}
