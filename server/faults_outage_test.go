package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"xbo/client"
	"xbo/store/storetest"
)

// outageWorker is a Python worker pool of the xbo package: `workers`
// threads ask and tell until the file stop exists, each writing "number
// value" to out before it tells (the result exists from then on); any
// error that escapes the client's retries ends the script with status 1.
const outageWorker = `
import os, sys, threading, time
import xbo

url, tok, study, out, stop, workers = sys.argv[1:7]
lock = threading.Lock()
failed = []

def work(k):
    try:
        s = xbo.load_study(study, url=url, token=tok, worker="py/%d" % k)
        while not os.path.exists(stop):
            t = s.ask()
            v = (t.params["x"] - 0.3) ** 2
            with lock, open(out, "a") as f:
                f.write("%d %r\n" % (t.number, v))
            s.tell(t, v)
            time.sleep(0.1)
    except BaseException as e:
        failed.append(e)
        raise

threads = [threading.Thread(target=work, args=(k,)) for k in range(int(workers))]
for t in threads:
    t.start()
for t in threads:
    t.join()
sys.exit(1 if failed else 0)
`

// faultOutageUnderRun stops PostgreSQL (a TCP gate in front of it shut:
// connections cut and refused, as when the database is stopped, without
// stopping the PostgreSQL other tests share) for `outage` under `xbo
// serve`, while `xbo run --url` runs 4 commands at once and the Python
// client 8 worker threads on two studies: both ride it out with their
// default retry windows (60 s), end with status 0, and every result they
// produced is in the store.
func faultOutageUnderRun(t *testing.T, bin string, outage time.Duration) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	g, dsn := newGate(t, storetest.PostgresDSN(t))
	dir, addr := t.TempDir(), freeAddr(t)
	srv := serveProcess(t, bin, dir, addr, "--db", dsn)
	defer func() { srv.Process.Kill(); srv.Wait() }()
	url := "http://" + addr
	admin := client.New(url, client.WithToken(token))
	oneX := json.RawMessage(`{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	if _, err := admin.CreateStudy(ctx, client.StudySpec{Name: "py", Space: oneX, Optimizer: json.RawMessage(`{"strategy":"random","seed":5}`)}); err != nil {
		t.Fatal(err)
	}
	spacePath := filepath.Join(dir, "run.json")
	if err := os.WriteFile(spacePath, oneX, 0o644); err != nil {
		t.Fatal(err)
	}

	runOut, pyOut, stop := filepath.Join(dir, "run.out"), filepath.Join(dir, "py.out"), filepath.Join(dir, "stop")
	const runTrials = 160
	run := exec.CommandContext(ctx, bin, "run", "--url", url, "--token", token, "--name", "run", "--space", spacePath,
		"--strategy", "random", "--trials", strconv.Itoa(runTrials), "--workers", "4",
		"--", "/bin/sh", "-c", `sleep 0.4; echo "$XBO_TRIAL {x}" >> `+runOut+`; echo {x}`)
	var runLog strings.Builder
	run.Stdout, run.Stderr = &runLog, &runLog
	script := filepath.Join(dir, "worker.py")
	if err := os.WriteFile(script, []byte(outageWorker), 0o644); err != nil {
		t.Fatal(err)
	}
	py := exec.CommandContext(ctx, python, script, url, token, "py", pyOut, stop, "8")
	// The package from this tree, not an installed one.
	py.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(moduleRoot(t), "python"), "PYTHONDONTWRITEBYTECODE=1")
	var pyLog strings.Builder
	py.Stdout, py.Stderr = &pyLog, &pyLog
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	if err := py.Start(); err != nil {
		t.Fatal(err)
	}

	// The outage starts with both under way.
	for len(readProduced(t, runOut)) < 12 || len(readProduced(t, pyOut)) < 40 {
		if ctx.Err() != nil {
			t.Fatalf("no progress before the outage:\n%s\n%s", runLog.String(), pyLog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	g.shut()
	shutAt := len(readProduced(t, runOut))
	time.Sleep(outage)
	g.open(g.addr)
	if len(readProduced(t, runOut)) >= runTrials {
		t.Fatalf("xbo run finished its %d trials during the outage: it tested nothing", runTrials)
	}
	// The Python workers go on a little past the outage, then stop.
	time.Sleep(5 * time.Second)
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("xbo run across the outage: %v\n%s", err, runLog.String())
	}
	if err := py.Wait(); err != nil {
		t.Fatalf("the Python workers across the outage: %v\n%s", err, pyLog.String())
	}

	for study, out := range map[string]string{"run": runOut, "py": pyOut} {
		produced := readProduced(t, out)
		stored, err := admin.Trials(ctx, study, "complete")
		if err != nil {
			t.Fatal(err)
		}
		byNumber := map[int64]float64{}
		for _, tr := range stored {
			byNumber[tr.Number] = *tr.Value
		}
		for n, v := range produced {
			if got, ok := byNumber[n]; !ok || got != v {
				t.Errorf("%s: trial %d produced %v; stored: %v (present %v)", study, n, v, got, ok)
			}
		}
		t.Logf("%s: %d results produced, all stored", study, len(produced))
	}
	if !strings.Contains(runLog.String(), "the study has "+strconv.Itoa(runTrials)+" finished trials") {
		t.Errorf("xbo run's summary does not count the study's trials:\n%s", runLog.String())
	}
	log, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
	if !strings.Contains(string(log), "store unavailable") {
		t.Errorf("xbo serve never saw the outage:\n%s", log)
	}
	t.Logf("outage of %v with %d of xbo run's %d trials done", outage, shutAt, runTrials)
}

// readProduced reads the "number value" lines a worker wrote (none while
// the file does not exist).
func readProduced(t *testing.T, path string) map[int64]float64 {
	t.Helper()
	out := map[int64]float64{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue // a line being written
		}
		n, err1 := strconv.ParseInt(fields[0], 10, 64)
		v, err2 := strconv.ParseFloat(fields[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: line %q", path, sc.Text())
		}
		out[n] = v
	}
	return out
}

// moduleRoot is the repository's root (where go.mod is).
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
