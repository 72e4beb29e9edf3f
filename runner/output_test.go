package runner

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"xbo/space"
)

func scan(t *testing.T, text string) (Output, []Intermediate) {
	t.Helper()
	var ivs []Intermediate
	out, err := scanOutput(strings.NewReader(text), func(iv Intermediate) { ivs = append(ivs, iv) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out, ivs
}

func TestScanOutputResult(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       float64
		json       bool
	}{
		{"last number", "epoch 1 loss 0.9\nepoch 2 loss 0.5\n0.42\n", 0.42, false},
		{"last number of the last line with one", "loss=0.31, acc: 0.88\ndone.\n", 0.88, false},
		{"no newline at the end", "result 1e-3", 0.001, false},
		{"sentence", "The validation loss is 0.25.\n", 0.25, false},
		{"negative", "value (-3.5)\n", -3.5, false},
		{"json value wins over later numbers", `{"value": 0.125}` + "\nsaved model after 12 epochs\n", 0.125, true},
		{"last json value", `{"value": 2}` + "\n" + `{"value": 1}` + "\n", 1, true},
		{"nan result", "loss nan\n", math.NaN(), false},
		{"python nan in json", `{"value": NaN}` + "\n", math.NaN(), false},
		{"quoted nan in json", `{"value": "NaN"}` + "\n", math.NaN(), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _ := scan(t, c.text)
			if !out.Found || out.FromJSON != c.json || !(out.Value == c.want || math.IsNaN(c.want) && math.IsNaN(out.Value)) {
				t.Fatalf("got %+v, want %v (json %v)", out, c.want, c.json)
			}
		})
	}
	for _, text := range []string{"", "no numbers here\n", "0x10 1_000 v2\n", `{"step": 1, "value": 0.5}` + "\n", `{"loss": 0.5}` + "\n"} {
		if out, _ := scan(t, text); out.Found {
			t.Errorf("%q gave a result %+v", text, out)
		}
	}
}

func TestScanOutputIntermediate(t *testing.T) {
	text := `{"step": 0, "value": 1.5}
epoch 0 done
{"step": 1, "value": 0.75, "note": "kept"}
{"step": -1, "value": 3}
{"step": 1.5, "value": 3}
{"step": 2, "value": "Infinity"}
{"step": 3, "value": 0.5}
0.5
`
	out, ivs := scan(t, text)
	want := []Intermediate{{0, 1.5}, {1, 0.75}, {3, 0.5}}
	if len(ivs) != len(want) {
		t.Fatalf("intermediate values %v, want %v", ivs, want)
	}
	for i := range want {
		if ivs[i] != want[i] {
			t.Fatalf("intermediate values %v, want %v", ivs, want)
		}
	}
	if out.Value != 0.5 || out.FromJSON {
		t.Fatalf("result %+v", out)
	}
}

// endless produces n bytes of a line without a newline, then tail.
type endless struct {
	n    int
	tail string
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n > 0 {
		k := min(len(p), e.n)
		for i := range k {
			p[i] = "0123456789 x"[i%12]
		}
		e.n -= k
		return k, nil
	}
	if e.tail == "" {
		return 0, io.EOF
	}
	k := copy(p, e.tail)
	e.tail = e.tail[k:]
	return k, nil
}

// A command that prints hundreds of megabytes, in one line or many, costs
// a bounded amount of memory, and its last number is still found.
func TestScanOutputBoundedMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := scanOutput(io.MultiReader(&endless{n: 300 << 20, tail: " 7.5\n"},
		strings.NewReader(strings.Repeat("x", 10)+"\n"), &endless{n: 100 << 20, tail: "\n"}, strings.NewReader("final 0.125\n")), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if !out.Found || out.Value != 0.125 {
		t.Fatalf("result %+v", out)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("reading 400 MB allocated %d bytes", grew)
	}
	// The number ending an over-long line is found; a fragment at the
	// start of its kept tail is not taken for one.
	out, err = scanOutput(&endless{n: 5 << 20, tail: " 7.5\n"}, nil, nil)
	if err != nil || out.Value != 7.5 {
		t.Fatalf("long line: %+v %v", out, err)
	}
	if v := lastNumbers("123 abc", true, 1); len(v) > 0 {
		t.Fatalf("the first token of a cut line was read: %v", v)
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	tl := &tail{max: 16}
	tl.Write([]byte("first line\n"))
	tl.Write([]byte("second line\x00\n"))
	tl.Write([]byte("é third"))
	if got := tl.String(); got != "d line\né third" {
		t.Fatalf("tail %q", got)
	}
	if len(tl.buf) > 16 {
		t.Fatalf("tail holds %d bytes", len(tl.buf))
	}
	tl.Write([]byte(strings.Repeat("z", 100)))
	if tl.String() != strings.Repeat("z", 16) {
		t.Fatalf("tail after a big write %q", tl.String())
	}
	// A cut multi-byte rune at the start is dropped; NUL is removed.
	tl = &tail{max: 5}
	tl.Write([]byte("aé\x00bcd"))
	if got := tl.String(); got != "bcd" {
		t.Fatalf("tail %q", got)
	}
}

func TestEnvNameAndSubstitute(t *testing.T) {
	for in, want := range map[string]string{"lr": "XBO_PARAM_LR", "batch-size": "XBO_PARAM_BATCH_SIZE", "n.layers": "XBO_PARAM_N_LAYERS", "x1": "XBO_PARAM_X1", "é": "XBO_PARAM__"} {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
	values := map[string]string{"lr": "0.01", "units": "64", "flag": "true", "off": ""}
	for in, want := range map[string]string{
		"--lr={lr}":           "--lr=0.01",
		"{units}x{units}":     "64x64",
		"{flag}":              "true",
		"{off}":               "",
		`{"json": {unknown}}`: `{"json": {unknown}}`,
		"{lr":                 "{lr",
		"a{b}{lr}}":           "a{b}0.01}",
		"plain":               "plain",
	} {
		if got := substitute(in, values); got != want {
			t.Errorf("substitute(%q) = %q, want %q", in, got, want)
		}
	}
}

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

// A pruned trial's command gets SIGTERM as soon as the report that said so
// returns, and what it prints on the way out is still read.
func TestExecuteStopsOnPrune(t *testing.T) {
	var steps []int64
	start := time.Now()
	ex := execute(context.Background(), sh(`trap 'echo stopped >&2; exit 9' TERM
echo '{"step": 1, "value": 3}'
echo '{"step": 2, "value": 2}'
sleep 20 &
wait`), os.Environ(), 0, 5*time.Second, func(iv Intermediate) bool {
		steps = append(steps, iv.Step)
		return iv.Step == 2
	}, nil)
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("the pruned command ran %v", took)
	}
	if ex.stopped != pruned || ex.stderr != "stopped" || len(steps) != 2 {
		t.Fatalf("stopped %v, stderr %q, steps %v, wait %v", ex.stopped, ex.stderr, steps, ex.waitErr)
	}
}

// A command that ignores SIGTERM is killed after the grace period; one
// that leaves a process holding its output open does not hold its trial.
func TestExecuteTimeoutAndLeftovers(t *testing.T) {
	start := time.Now()
	ex := execute(context.Background(), sh(`trap '' TERM; echo 1; while :; do sleep 0.1; done`), os.Environ(),
		300*time.Millisecond, 300*time.Millisecond, nil, nil)
	took := time.Since(start)
	if ex.stopped != timedOut || ex.waitErr == nil || took < 600*time.Millisecond || took > 3*time.Second {
		t.Fatalf("stopped %v, wait %v after %v", ex.stopped, ex.waitErr, took)
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start = time.Now()
	ex = execute(context.Background(), sh(`sleep 30 & echo $! > `+pidFile+`; echo 0.5`), os.Environ(), 0, time.Second, nil, nil)
	if took := time.Since(start); took > drainWait+2*time.Second {
		t.Fatalf("a left-over process held the trial for %v", took)
	}
	if ex.waitErr != nil || !ex.out.Found || ex.out.Value != 0.5 {
		t.Fatalf("execution %+v", ex)
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatalf("the left-over process %d still runs", pid)
	}
}

func TestWithStderrIsBounded(t *testing.T) {
	long := strings.Repeat("é", 3000) + " the end"
	got := withStderr("exit status 1", long)
	if len(got) > MaxReason || !strings.HasPrefix(got, "exit status 1; stderr: …") || !strings.HasSuffix(got, "the end") {
		t.Fatalf("reason of %d bytes: %.80q…%q", len(got), got, got[len(got)-20:])
	}
	if !strings.Contains(got, "é") || strings.ContainsRune(got, '\uFFFD') {
		t.Fatal("cut inside a rune")
	}
	if withStderr("x", "") != "x" {
		t.Fatal("empty stderr")
	}
}

// The result of a study with several objectives or constraints: a JSON line
// with "values" (or "value") and "constraints", or the last numbers of the
// last line that prints numbers.
func TestScanOutputSeveralNumbers(t *testing.T) {
	out, _ := scan(t, `{"values": [0.25, 3], "constraints": [-1.5]}`+"\nsaved after 12 epochs\n")
	if !out.FromJSON || !slices.Equal(out.Values, []float64{0.25, 3}) || !slices.Equal(out.Constraints, []float64{-1.5}) || out.Value != 0.25 {
		t.Fatalf("values line: %+v", out)
	}
	out, _ = scan(t, `{"value": 0.5, "constraints": ["Infinity", 2]}`+"\n")
	if !out.FromJSON || !slices.Equal(out.Values, []float64{0.5}) || len(out.Constraints) != 2 || !math.IsInf(out.Constraints[0], 1) {
		t.Fatalf("value with constraints: %+v", out)
	}
	for _, text := range []string{`{"values": [1, "x"]}`, `{"values": []}`, `{"value": 1, "values": [1, 2]}`, `{"values": [1, 2], "constraints": 3}`, `{"values": [1], "step": 2}`} {
		if out, _ := scan(t, text+"\n"); out.Found {
			t.Errorf("%s gave a result %+v", text, out)
		}
	}
	out, _ = scan(t, "epoch 3\nerror=0.12 size=4.5 memory=-2\nbye\n")
	if out.FromJSON || !slices.Equal(out.Numbers, []float64{0.12, 4.5, -2}) || out.Value != -2 {
		t.Fatalf("numbers: %+v", out)
	}
}

func TestResultOf(t *testing.T) {
	two, err := space.Parse([]byte(`{"objectives": [{"name": "error"}, {"name": "size", "direction": "maximize"}], "constraints": ["memory"],
		"params": [{"name": "x", "type": "float", "low": 0, "high": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	one, err := space.Parse([]byte(`{"objective": "minimize", "params": [{"name": "x", "type": "float", "low": 0, "high": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		sp     *space.Space
		text   string
		values []float64
		cons   []float64
		msg    string
	}{
		{"json", two, `{"values": [0.5, 3], "constraints": [-1]}`, []float64{0.5, 3}, []float64{-1}, ""},
		{"numbers: the last three of the line", two, "epoch 7: 0.5 3 -1", []float64{0.5, 3}, []float64{-1}, ""},
		{"one number", two, "loss 0.5", nil, nil, "the study has 2 objectives (error, size) and 1 constraint (memory); the command printed 1 number on its last line with numbers (give 3 on one line"},
		{"json one value", two, `{"value": 0.5}`, nil, nil, "the study has 2 objectives (error, size) and 1 constraint (memory); the command printed 1 objective value in its JSON result line"},
		{"json no constraints", two, `{"values": [0.5, 3]}`, nil, nil, "the command printed no constraint value in its JSON result line"},
		{"not finite", two, "nan 3 -1", nil, nil, `its value of objective "error", NaN, is not a finite number`},
		{"infinite constraint", two, `{"values": [1, 2], "constraints": ["Infinity"]}`, nil, nil, `its value of constraint "memory", +Inf, is not a finite number`},
		{"single objective: the last number", one, "1 2 0.25", []float64{0.25}, nil, ""},
		{"single objective, constraints printed", one, `{"value": 1, "constraints": [0]}`, nil, nil, "the study has 1 objective; the command printed 1 constraint value"},
	} {
		out, _ := scan(t, c.text+"\n")
		res, msg := resultOf(c.sp, out)
		if c.msg != "" {
			if !strings.Contains(msg, c.msg) {
				t.Errorf("%s: message %q, want %q", c.name, msg, c.msg)
			}
			continue
		}
		if msg != "" || !slices.Equal(res.Values, c.values) || !slices.Equal(res.Constraints, c.cons) {
			t.Errorf("%s: %+v %q, want %v %v", c.name, res, msg, c.values, c.cons)
		}
	}
}
