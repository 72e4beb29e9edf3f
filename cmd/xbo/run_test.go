package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"xbo/store"
)

// TestMain lets a test run this test binary as the xbo command (the
// interrupt test needs a process of its own to send SIGINT to).
func TestMain(m *testing.M) {
	if os.Getenv("XBO_TEST_AS_CLI") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func writeTestFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// studyTrials reads a study's trials straight from its database.
func studyTrials(t *testing.T, dsn, study string) []store.Trial {
	t.Helper()
	st, err := store.OpenExisting(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, _, err := st.Trials(context.Background(), study, store.TrialQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

const typedRunSpace = `{"objective":"minimize","params":[
	{"name":"lr","type":"float","low":0.0001,"high":1,"log":true},
	{"name":"batch-size","type":"int","low":1,"high":1000000},
	{"name":"units","type":"categorical","choices":[16,32,64]},
	{"name":"flag","type":"categorical","choices":[true,false]},
	{"name":"momentum","type":"float","low":0,"high":1,"condition":{"parent":"flag","values":[true]}}]}`

// Every trial's command gets the configuration as placeholders and as
// XBO_PARAM_* variables, with the values' text forms; its JSON lines are
// intermediate values and its result is read from its output.
func TestRunPlaceholdersEnvAndIntermediate(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "net.json", typedRunSpace)
	seen := filepath.Join(dir, "seen")
	os.Mkdir(seen, 0o755)
	// The command records what it saw, reports two intermediate values,
	// then prints its result after a line of text with other numbers.
	script := `out=` + seen + `/$XBO_TRIAL
printf '%s|' "$@" > $out
printf '\n%s|%s|%s|%s|%s|%s|%s|%s\n' "$XBO_PARAM_LR" "$XBO_PARAM_BATCH_SIZE" "$XBO_PARAM_UNITS" "$XBO_PARAM_FLAG" "${XBO_PARAM_MOMENTUM-unset}" "$XBO_TRIAL" "$XBO_STUDY" "${XBO_PARAM_STALE-unset}" >> $out
echo '{"step": 1, "value": 2.5}'
echo "epoch 1 of 2, 30 s"
echo '{"step": 2, "value": 1.25}'
echo "final loss: 0.$XBO_TRIAL"`
	t.Setenv("XBO_PARAM_STALE", "from the shell") // never passed on
	code, out, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "6", "--db", db, "--seed", "2", "--literal-braces", "--",
		"/bin/sh", "-c", script, "sh", "--lr={lr}", "{batch-size}", "{units}", "{flag}", "{momentum}", "{unknown}")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var best struct {
		Best struct {
			Trial  int64          `json:"trial"`
			Value  float64        `json:"value"`
			Params map[string]any `json:"params"`
		} `json:"best"`
	}
	if err := json.Unmarshal([]byte(out), &best); err != nil || best.Best.Trial != 0 || best.Best.Value != 0 {
		t.Fatalf("stdout %q: %v", out, err)
	}
	trials := studyTrials(t, db, "net")
	if len(trials) != 6 {
		t.Fatalf("%d trials", len(trials))
	}
	for _, tr := range trials {
		if tr.State != store.Complete || *tr.Value != float64(tr.Number)/10 && tr.Number < 10 {
			t.Fatalf("trial %d: %s %v (%s)", tr.Number, tr.State, tr.Value, tr.FailReason)
		}
		if len(tr.Intermediate) != 2 || tr.Intermediate[0] != (store.Intermediate{Step: 1, Value: 2.5}) || tr.Intermediate[1] != (store.Intermediate{Step: 2, Value: 1.25}) {
			t.Fatalf("trial %d: intermediate %v", tr.Number, tr.Intermediate)
		}
		b, err := os.ReadFile(filepath.Join(seen, strconv.FormatInt(tr.Number, 10)))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		p := tr.Params
		lr := strconv.FormatFloat(p["lr"].(float64), 'g', -1, 64)
		batch := strconv.Itoa(int(p["batch-size"].(float64)))
		units := strconv.Itoa(int(p["units"].(float64)))
		flag := strconv.FormatBool(p["flag"].(bool))
		momentum := ""
		if m, on := p["momentum"].(float64); on {
			momentum = strconv.FormatFloat(m, 'g', -1, 64)
		}
		wantArgs := "--lr=" + lr + "|" + batch + "|" + units + "|" + flag + "|" + momentum + "|{unknown}|"
		envMomentum := momentum
		if envMomentum == "" {
			envMomentum = "unset" // inactive: no variable at all
		}
		wantEnv := lr + "|" + batch + "|" + units + "|" + flag + "|" + envMomentum + "|" + strconv.FormatInt(tr.Number, 10) + "|net|unset"
		if len(lines) != 2 || lines[0] != wantArgs || lines[1] != wantEnv {
			t.Fatalf("trial %d (%v) saw\n%s\nwant\n%s\n%s", tr.Number, p, b, wantArgs, wantEnv)
		}
	}
}

// A command that fails, prints no result, prints NaN or runs too long
// fails its trial with a reason; the run stops when its first three trials
// all fail, and says why.
func TestRunFailures(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "f.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	// Trial 0 fails with a long standard error, 1 prints no number, 3 NaN,
	// 4 sleeps past the timeout, 2 and 5 succeed.
	script := `case $XBO_TRIAL in
0) i=0; while [ $i -lt 300 ]; do echo "traceback line $i of the error" >&2; i=$((i+1)); done; echo "ValueError: bad x" >&2; exit 3;;
1) echo "nothing to see";;
3) echo "loss nan";;
4) echo 0.5; sleep 20;;
*) echo {x};;
esac`
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "6", "--db", db, "--trial-timeout", "500ms", "--grace", "200ms",
		"--", "/bin/sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	trials := studyTrials(t, db, "f")
	if len(trials) != 6 {
		t.Fatalf("%d trials: %s", len(trials), errOut)
	}
	reasons := map[int64]string{}
	for _, tr := range trials {
		reasons[tr.Number] = tr.FailReason
	}
	if r := reasons[0]; !strings.HasPrefix(r, "exit status 3; stderr: …") || !strings.HasSuffix(r, "ValueError: bad x") || len(r) > 2000 {
		t.Errorf("trial 0: reason of %d bytes %.60q…", len(r), r)
	}
	if r := reasons[1]; !strings.HasPrefix(r, "printed no result") {
		t.Errorf("trial 1: %q", r)
	}
	if r := reasons[3]; r != "its result NaN is not a finite number" {
		t.Errorf("trial 3: %q", r)
	}
	if r := reasons[4]; r != "timed out after 500ms" {
		t.Errorf("trial 4: %q", r)
	}
	for _, tr := range []store.Trial{trials[2], trials[5]} {
		if tr.State != store.Complete || *tr.Value != tr.Params["x"].(float64) {
			t.Errorf("trial %d: %s %v, x %v", tr.Number, tr.State, tr.Value, tr.Params["x"])
		}
	}
	if !strings.Contains(errOut, "trial 0 failed: exit status 3; stderr: …") || !strings.Contains(errOut, "this run: 2 complete, 0 pruned, 4 failed (0 interrupted)") {
		t.Errorf("console:\n%s", errOut)
	}

	// A broken command: the run stops after three failures.
	code, _, errOut = runCLI(t, "run", "--space", spacePath, "--name", "broken", "--trials", "50", "--db", db, "--workers", "2",
		"--", "/bin/sh", "-c", "echo 'command not found: trian.py' >&2; exit 127")
	if code != 1 || !strings.Contains(errOut, "the first 3 trials all failed") || !strings.Contains(errOut, "trian.py") {
		t.Fatalf("broken command: exit %d\n%s", code, errOut)
	}
	if n := len(studyTrials(t, db, "broken")); n < 3 || n > 4 {
		t.Fatalf("broken command ran %d trials", n)
	}
	// Bad calls are usage errors, and nothing is created for them.
	for _, args := range [][]string{
		{"run", "--space", spacePath, "--trials", "3", "--db", db},
		{"run", "--space", spacePath, "--db", db, "--", "true"},
		{"run", "--space", spacePath, "--trials", "3", "--workers", "0", "--", "true"},
		{"run", "--space", spacePath, "--trials", "3", "--db", db, "--url", "http://x", "--", "true"},
		{"run", "--name", "nope", "--trials", "3", "--db", db, "--", "true"},
	} {
		if code, _, errOut := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
	fresh := filepath.Join(dir, "fresh.db")
	if code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "3", "--db", fresh, "--", "no-such-program-xbo"); code != 1 || !strings.Contains(errOut, "no-such-program-xbo") {
		t.Errorf("missing program: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a mistyped program created %s", fresh)
	}
}

// --trials is the study's total: the same command resumes, a larger
// --trials extends the study, and a study is never given another space.
func TestRunResumes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "r.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	cmd := []string{"--", "awk", "-v", "x={x}", "BEGIN { print (x - 0.3) ^ 2 }"}
	for _, c := range []struct{ trials, want int }{{4, 4}, {4, 4}, {7, 7}} {
		code, _, errOut := runCLI(t, append([]string{"run", "--space", spacePath, "--trials", strconv.Itoa(c.trials), "--db", db}, cmd...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if n := len(studyTrials(t, db, "r")); n != c.want {
			t.Fatalf("--trials %d: the study has %d trials, want %d", c.trials, n, c.want)
		}
	}
	// Without --space the stored space is used.
	if code, _, errOut := runCLI(t, append([]string{"run", "--name", "r", "--trials", "8", "--db", db}, cmd...)...); code != 0 {
		t.Fatalf("resume by name: exit %d: %s", code, errOut)
	}
	other := writeTestFile(t, dir, "r2.json", `{"params":[{"name":"x","type":"float","low":0,"high":2}]}`)
	code, _, errOut := runCLI(t, append([]string{"run", "--space", other, "--name", "r", "--trials", "9", "--db", db}, cmd...)...)
	if code != 2 || !strings.Contains(errOut, `study "r" exists with another space`) {
		t.Fatalf("another space: exit %d: %s", code, errOut)
	}
	if n := len(studyTrials(t, db, "r")); n != 8 {
		t.Fatalf("the study has %d trials after the refused run", n)
	}
}

// K workers run K commands at once.
func TestRunWorkersAreConcurrent(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "w.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	times := filepath.Join(dir, "times")
	os.Mkdir(times, 0o755)
	// Each command records when it started and ended (nanoseconds).
	script := `date +%s%N > ` + times + `/$XBO_TRIAL.start; sleep 0.6; date +%s%N > ` + times + `/$XBO_TRIAL.end; echo {x}`
	start := time.Now()
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "6", "--workers", "3", "--db", db, "--", "/bin/sh", "-c", script)
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	type event struct {
		at    int64
		delta int
	}
	var events []event
	for i := range 6 {
		for kind, delta := range map[string]int{"start": 1, "end": -1} {
			b, err := os.ReadFile(filepath.Join(times, fmt.Sprintf("%d.%s", i, kind)))
			if err != nil {
				t.Fatal(err)
			}
			at, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, event{at, delta})
		}
	}
	sort.Slice(events, func(i, j int) bool {
		if events[i].at != events[j].at {
			return events[i].at < events[j].at
		}
		return events[i].delta < events[j].delta
	})
	running, most := 0, 0
	for _, e := range events {
		running += e.delta
		most = max(most, running)
	}
	t.Logf("6 commands of 0.6 s with 3 workers took %v; at most %d ran at once", took, most)
	if most != 3 {
		t.Fatalf("at most %d commands ran at once, want 3", most)
	}
}

// On a quadratic, the optimizer's proposals after its initial design find
// a far better value than the design did.
func TestRunImprovesOnAQuadratic(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "q.json", `{"params":[{"name":"x","type":"float","low":-2,"high":2},{"name":"y","type":"float","low":-2,"high":2}]}`)
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "24", "--db", db, "--seed", "5", "--initial", "8",
		"--", "awk", "-v", "x={x}", "-v", "y={y}", "BEGIN { print (x - 0.7) ^ 2 + (y + 0.4) ^ 2 }")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	trials := studyTrials(t, db, "q")
	design, after := math.Inf(1), math.Inf(1)
	for _, tr := range trials {
		if tr.Acquisition == "initial-design" {
			design = math.Min(design, *tr.Value)
		} else {
			after = math.Min(after, *tr.Value)
		}
	}
	t.Logf("best of the initial design %.4g, best after it %.4g", design, after)
	if !(after < 0.01 && after < design/10) {
		t.Fatalf("best of the initial design %g, best after it %g", design, after)
	}
}

// SIGINT to a real xbo run: the running commands get SIGTERM (and SIGKILL
// when they ignore it), their trials fail as interrupted, every result
// told before stays, nothing is left running, and the same command
// resumes to the total.
func TestRunInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs this test binary as xbo")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "i.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	pids := filepath.Join(dir, "pids")
	os.Mkdir(pids, 0o755)
	// Trials 0-2 finish at once; later ones record their pid and sleep, one
	// of them deaf to SIGTERM.
	script := `if [ "$XBO_TRIAL" -lt 3 ] || [ -e ` + dir + `/resume ]; then echo {x}; exit 0; fi
if [ "$XBO_TRIAL" = 3 ]; then trap '' TERM; fi
echo $$ > ` + pids + `/$XBO_TRIAL
while :; do sleep 0.1; done`
	cmd := exec.Command(os.Args[0], "run", "--space", spacePath, "--trials", "8", "--workers", "2", "--db", db, "--grace", "1s",
		"--", "/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "XBO_TEST_AS_CLI=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		entries, _ := os.ReadDir(pids)
		if len(entries) == 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the long trials never started:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	err := cmd.Wait()
	took := time.Since(sent)
	t.Logf("xbo run exited %v after SIGINT (%v):\n%s", took, err, stderr.String())
	if code := cmd.ProcessState.ExitCode(); code != 1 || took > 6*time.Second || !strings.Contains(stderr.String(), "run the same command again to resume") {
		t.Fatalf("exit %d after %v", code, took)
	}
	// The commands, the deaf one included, are gone.
	entries, _ := os.ReadDir(pids)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(pids, e.Name()))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("trial %s's command (pid %d) still runs", e.Name(), pid)
		}
	}
	trials := studyTrials(t, db, "i")
	complete, interrupted := 0, 0
	for _, tr := range trials {
		switch {
		case tr.State == store.Complete && *tr.Value == tr.Params["x"].(float64):
			complete++
		case tr.State == store.Failed && tr.FailReason == "interrupted":
			interrupted++
		default:
			t.Errorf("trial %d: %s %v %q", tr.Number, tr.State, tr.Value, tr.FailReason)
		}
	}
	if complete != 3 || interrupted != 2 {
		t.Fatalf("%d complete, %d interrupted; want 3 and 2", complete, interrupted)
	}
	// Resumed, the study gets its 8 evaluations: interrupted trials do
	// not count.
	writeTestFile(t, dir, "resume", "")
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "8", "--db", db, "--", "/bin/sh", "-c", script)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
	complete = 0
	for _, tr := range studyTrials(t, db, "i") {
		if tr.State == store.Complete {
			complete++
		}
	}
	if complete != 8 {
		t.Fatalf("%d complete trials after resuming, want 8", complete)
	}
}

// A run against a remote xbo serve goes through its API; a run with
// --dashboard serves the dashboard and the API while it lasts.
func TestRunRemoteAndDashboard(t *testing.T) {
	dir := t.TempDir()
	spacePath := writeTestFile(t, dir, "d.json", `{"params":[{"name":"units","type":"categorical","choices":[16,32,64]}]}`)
	st, hs := remoteServer(t, dir, "tok")
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "3", "--url", hs.URL, "--token", "tok",
		"--", "/bin/sh", "-c", "echo $(({units} / 16))")
	if code != 0 {
		t.Fatalf("remote: exit %d: %s", code, errOut)
	}
	list, _, err := st.Trials(context.Background(), "d", store.TrialQuery{})
	if err != nil || len(list) != 3 {
		t.Fatalf("remote study: %d trials, %v", len(list), err)
	}
	for _, tr := range list {
		if u, ok := tr.Params["units"].(float64); !ok || *tr.Value != u/16 || !strings.HasPrefix(tr.Worker, "xbo-run/") {
			t.Fatalf("remote trial %+v", tr)
		}
	}
	if !strings.Contains(errOut, hs.URL+"/#study=d") {
		t.Errorf("no dashboard link:\n%s", errOut)
	}

	// --dashboard: while the first trial's command waits for a file, the
	// test reads the page and the study from the printed address.
	db := filepath.Join(dir, "xbo.db")
	gate := filepath.Join(dir, "gate")
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		env := &cliEnv{stdout: io.Discard, stderr: pw, stdin: strings.NewReader("")}
		done <- run(context.Background(), []string{"run", "--space", spacePath, "--trials", "2", "--db", db, "--dashboard", "127.0.0.1:0",
			"--", "/bin/sh", "-c", "while [ ! -e " + gate + " ]; do sleep 0.05; done; echo 1"}, env)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	base := ""
	for lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "dashboard: "); ok {
			base = strings.TrimSuffix(u, "/#study=d")
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if base == "" {
		t.Fatal("no dashboard address printed")
	}
	// The address is printed before the first trial is handed out: the
	// study shows it running within a few seconds.
	for path, want := range map[string]string{"/": "<html", "/api/studies/d": `"running":1`} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(strings.ToLower(string(b)), strings.ToLower(want)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: %d %.300s", path, resp.StatusCode, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	os.WriteFile(gate, nil, 0o644)
	if code := <-done; code != 0 {
		t.Fatalf("dashboard run: exit %d", code)
	}
	if _, err := http.Get(base + "/api/health"); err == nil {
		t.Fatal("the dashboard is still served after the run")
	}
}

// The README's main job: examples/train.py tuned over examples/train.json
// (with 2 epochs instead of 20, to be quick). Every trial records the
// script's per-epoch validation losses and ends with the last of them.
func TestRunTrainExample(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	db := filepath.Join(t.TempDir(), "xbo.db")
	code, out, errOut := runCLI(t, "run", "--space", "../../examples/train.json", "--trials", "3", "--workers", "2", "--db", db, "--",
		python, "../../examples/train.py", "--lr", "{lr}", "--hidden", "{hidden}", "--activation", "{activation}", "--l2", "{l2}",
		"--batch-size", "{batch_size}", "--epochs", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	trials := studyTrials(t, db, "train")
	if len(trials) != 3 {
		t.Fatalf("%d trials", len(trials))
	}
	for _, tr := range trials {
		if tr.State != store.Complete || len(tr.Intermediate) != 2 || tr.Intermediate[1].Value != *tr.Value || !(*tr.Value > 0 && *tr.Value < 5) {
			t.Fatalf("trial %d: %s %v %v %q", tr.Number, tr.State, tr.Value, tr.Intermediate, tr.FailReason)
		}
		if _, ok := tr.Params["hidden"].(float64); !ok {
			t.Fatalf("hidden %#v is not a number", tr.Params["hidden"])
		}
	}
	if !strings.Contains(out, `{"best":{`) {
		t.Fatalf("stdout %q", out)
	}
}

// TestRunPrunes runs a command under a median pruner: every trial reports
// its x at five steps, pausing between them; a trial whose x is above the
// median of the earlier trials' values at that step is stopped at once
// (SIGTERM) and ends pruned, keeping its last intermediate value, and is not
// counted as failed.
func TestRunPrunes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "x.json", `{"params":[{"name":"x","type":"float","low":0,"high":1}]}`)
	script := `for s in 1 2 3 4 5; do echo "{\"step\": $s, \"value\": $XBO_PARAM_X}"; sleep 0.2; done; echo $XBO_PARAM_X`
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "10", "--db", db, "--seed", "3", "--strategy", "random",
		"--pruner", `{"type":"median","n_startup_trials":2}`, "--", "/bin/sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "pruned") {
		t.Errorf("the summary does not count pruned trials: %s", errOut)
	}
	trials := studyTrials(t, db, "x")
	pruned := 0
	for _, tr := range trials {
		switch tr.State {
		case store.Pruned:
			pruned++
			if !strings.Contains(errOut, fmt.Sprintf("trial %d pruned: pruned by the study's pruner\n", tr.Number)) || strings.Contains(errOut, fmt.Sprintf("trial %d failed", tr.Number)) {
				t.Errorf("pruned trial %d is not reported as pruned: %s", tr.Number, errOut)
			}
			last := tr.Intermediate[len(tr.Intermediate)-1]
			if len(tr.Intermediate) >= 5 || tr.Value == nil || *tr.Value != last.Value {
				t.Errorf("pruned trial %d: %d intermediate values, value %v (last intermediate %v)", tr.Number, len(tr.Intermediate), tr.Value, last.Value)
			}
			if tr.Number < 2 {
				t.Errorf("trial %d pruned during the startup trials", tr.Number)
			}
		case store.Complete:
			if len(tr.Intermediate) != 5 {
				t.Errorf("complete trial %d: %d intermediate values", tr.Number, len(tr.Intermediate))
			}
		default:
			t.Errorf("trial %d: %s (%s)", tr.Number, tr.State, tr.FailReason)
		}
	}
	// Ten uniform x: the chance that none of trials 2..9 lies above the
	// running median is far below 1e-3; with seed 3 several do.
	if pruned == 0 || len(trials) != 10 {
		t.Errorf("%d trials, %d pruned", len(trials), pruned)
	}
}

// A study with two objectives and a constraint, created by xbo run from its
// space file: even trials print the result as text (the last three numbers
// of the line), odd ones as a JSON line; every trial is told its values and
// constraint value, and the summary prints the study's Pareto-optimal
// trials, which are history's front of the stored trials (feasible only).
func TestRunSeveralObjectives(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "mo.json", `{"objectives": [{"name": "error", "direction": "minimize"}, {"name": "size", "direction": "maximize"}],
		"constraints": ["memory"],
		"params": [{"name": "x", "type": "float", "low": 0, "high": 1}, {"name": "y", "type": "float", "low": 0, "high": 1}]}`)
	script := `m=$(awk -v x="$XBO_PARAM_X" 'BEGIN { printf "%.17g", x - 0.7 }')
if [ $((XBO_TRIAL % 2)) = 0 ]; then
  echo "trial $XBO_TRIAL: error=$XBO_PARAM_X size=$XBO_PARAM_Y memory=$m"
else
  echo "{\"values\": [$XBO_PARAM_X, $XBO_PARAM_Y], \"constraints\": [$m]}"
  echo "done after 3 epochs"
fi`
	code, out, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "8", "--db", db, "--seed", "3", "--", "/bin/sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "the study's Pareto-optimal trials (error minimize, size maximize; constraints memory)") {
		t.Errorf("stderr %q", errOut)
	}
	ctx := context.Background()
	st, err := store.OpenExisting(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	h, err := store.LoadHistory(ctx, st, "mo")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	infeasible := 0
	for _, tr := range h.Trials {
		x, y := tr.Params[0], tr.Params[1]
		if tr.State != "complete" || !slices.Equal(tr.Values, []float64{x, y}) || len(tr.Constraints) != 1 || math.Abs(tr.Constraints[0]-(x-0.7)) > 1e-12 {
			t.Fatalf("trial %d: %s %v %v for x=%v y=%v", tr.Number, tr.State, tr.Values, tr.Constraints, x, y)
		}
		if !h.Feasible(&tr) {
			infeasible++
		}
	}
	if len(h.Trials) != 8 || infeasible == 0 {
		t.Fatalf("%d trials, %d infeasible: the test needs some of each", len(h.Trials), infeasible)
	}
	front, _ := h.ParetoFront()
	var want []int64
	for _, i := range front {
		want = append(want, h.Trials[i].Number)
	}
	var printed struct {
		BestTrials []struct {
			Trial       int64              `json:"trial"`
			Values      map[string]float64 `json:"values"`
			Constraints []float64          `json:"constraints"`
		} `json:"best_trials"`
	}
	if err := json.Unmarshal([]byte(out), &printed); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	var got []int64
	for _, b := range printed.BestTrials {
		got = append(got, b.Trial)
		if b.Constraints[0] > 0 || len(b.Values) != 2 {
			t.Errorf("printed best trial %d: %v %v", b.Trial, b.Values, b.Constraints)
		}
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("printed Pareto-optimal trials %v, the stored trials' front %v", got, want)
	}

	// A command that prints one number for this study fails its trials with
	// the counts, and the run stops.
	code, _, errOut = runCLI(t, "run", "--name", "mo", "--trials", "20", "--db", db, "--", "/bin/sh", "-c", "echo loss 0.5")
	if code != 1 || !strings.Contains(errOut, "the study has 2 objectives (error, size) and 1 constraint (memory); the command printed 1 number") {
		t.Errorf("one number: exit %d %q", code, errOut)
	}
}

// One objective with a constraint: the command prints {"value": v,
// "constraints": [c]}; the best trial is the best feasible one, never a
// better infeasible one.
func TestRunConstrainedObjective(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "c.json", `{"objective": "minimize", "constraints": ["floor"],
		"params": [{"name": "x", "type": "float", "low": 0, "high": 1}]}`)
	script := `c=$(awk -v x="$XBO_PARAM_X" 'BEGIN { printf "%.17g", 0.3 - x }')
echo "{\"value\": $XBO_PARAM_X, \"constraints\": [$c]}"`
	code, out, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "6", "--db", db, "--seed", "5", "--", "/bin/sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var best struct {
		Best struct {
			Trial       int64     `json:"trial"`
			Value       float64   `json:"value"`
			Constraints []float64 `json:"constraints"`
		} `json:"best"`
	}
	if err := json.Unmarshal([]byte(out), &best); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	lowest, lowestFeasible := math.Inf(1), math.Inf(1)
	for _, tr := range studyTrials(t, db, "c") {
		if tr.State != store.Complete || len(tr.Constraints) != 1 {
			t.Fatalf("trial %d: %s %v", tr.Number, tr.State, tr.Constraints)
		}
		lowest = math.Min(lowest, *tr.Value)
		if tr.Constraints[0] <= 0 {
			lowestFeasible = math.Min(lowestFeasible, *tr.Value)
		}
	}
	if !(lowest < lowestFeasible) {
		t.Fatalf("no infeasible trial beats the feasible ones (%v, %v): the test shows nothing", lowest, lowestFeasible)
	}
	if best.Best.Value != lowestFeasible || best.Best.Constraints[0] > 0 {
		t.Errorf("best %+v, want the lowest feasible value %v (lowest of all %v)", best.Best, lowestFeasible, lowest)
	}
}

// The summary counts this run's random fallbacks: a 2 × 2 categorical
// space with more trials than configurations leaves the optimizer nothing
// new to propose, and the count is that of the stored trials labelled
// random-fallback.
func TestRunCountsRandomFallbacks(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "xbo.db")
	spacePath := writeTestFile(t, dir, "grid.json", `{"params":[{"name":"a","type":"categorical","choices":["x","y"]},{"name":"b","type":"categorical","choices":["p","q"]}]}`)
	code, _, errOut := runCLI(t, "run", "--space", spacePath, "--trials", "14", "--db", db, "--seed", "2", "--", "/bin/sh", "-c", `echo '{"value": 1}'`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	fallbacks := 0
	for _, tr := range studyTrials(t, db, "grid") {
		if tr.Acquisition == "random-fallback" {
			fallbacks++
		}
	}
	want := fmt.Sprintf("%d of this run's trials were random configurations standing in for model-based proposals", fallbacks)
	if fallbacks == 0 || !strings.Contains(errOut, want) {
		t.Errorf("%d random fallbacks stored; the summary should say %q: %s", fallbacks, want, errOut)
	}
}
