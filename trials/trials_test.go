package trials

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"xbo/history"
	"xbo/space"
)

func testSpace(t *testing.T) *space.Space {
	t.Helper()
	s, err := space.Parse([]byte(`{"objective":"maximize","params":[
		{"name":"lr","type":"float","low":1e-4,"high":0.1,"log":true},
		{"name":"opt","type":"categorical","choices":["sgd","adam"]},
		{"name":"momentum","type":"float","low":0.1,"high":0.99,"condition":{"parent":"opt","values":["sgd"]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWriteThenReadRoundTrip(t *testing.T) {
	s := testSpace(t)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	records := []Record{
		{Params: []float64{0.01, 0, 0.5}, Value: 0.9, Acquisition: "initial-design"},
		{Params: []float64{0.001, 1, math.NaN()}, Value: 0.95, Acquisition: "ei"},
		{Params: []float64{0.05, 1, math.NaN()}, Value: math.NaN(), Acquisition: "ei"},
	}
	for _, r := range records {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(buf.String(), "lr,opt,momentum,value,acquisition\n") {
		t.Fatalf("header: %q", buf.String())
	}
	h, err := ReadCSV(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Trials) != 3 || len(h.Usable()) != 2 || h.Trials[2].State != history.Failed {
		t.Fatalf("%d trials, %d usable, third %q", len(h.Trials), len(h.Usable()), h.Trials[2].State)
	}
	if h.Trials[1].Params[1] != 1 || !math.IsNaN(h.Trials[1].Params[2]) || h.Trials[1].Acquisition != "ei" {
		t.Fatalf("row 2 read back as %v %q", h.Trials[1].Params, h.Trials[1].Acquisition)
	}
	if b, ok := h.Best(); !ok || b != 1 { // maximize: 0.95 beats 0.9
		t.Fatalf("best = %d", b)
	}
	d, err := h.Encode(2)
	if err != nil || d.X[1][2] != space.Inactive || d.Best != 1 {
		t.Fatalf("encoded %v %v", d, err)
	}
}

func TestReadErrorsNameRowAndColumn(t *testing.T) {
	s := testSpace(t)
	cases := []struct{ name, csv, want string }{
		{"twice", "lr,opt,momentum,value,lr\n0.01,sgd,0.5,1,3\n", `column "lr" appears twice`},
		{"bad state", "lr,opt,momentum,value,state\n0.01,adam,,1,finished\n", `line 2, column "state": unknown state "finished"`},
		{"bad number", "number,lr,opt,momentum,value\nx,0.01,adam,,1\n", `line 2, column "number": "x" is not an integer`},
		{"number twice", "number,lr,opt,momentum,value\n3,0.01,adam,,1\n3,0.01,adam,,2\n", `trial 3 appears twice`},
		{"missing param", "lr,opt,value\n0.01,adam,1\n", `no column for parameter "momentum"`},
		{"no value", "lr,opt,momentum\n0.01,adam,\n", `no "value" column`},
		{"out of space", "lr,opt,momentum,value\n0.5,adam,,1\n", `line 2, column "lr": parameter "lr": 0.5 is outside`},
		{"not numeric", "lr,opt,momentum,value\n0.01,sgd,fast,1\n", `line 2, column "momentum"`},
		{"bad level", "lr,opt,momentum,value\n0.01,rmsprop,,1\n", `line 2, column "opt"`},
		{"bad value", "lr,opt,momentum,value\n0.01,adam,,abc\n", `line 2, column "value": "abc" is not a number`},
		{"inf value", "lr,opt,momentum,value\n0.01,adam,,inf\n", `line 2, column "value"`},
		{"inactive given", "lr,opt,momentum,value\n0.01,adam,0.5,1\n", `line 2: space: parameter "momentum" is inactive`},
		{"active missing", "lr,opt,momentum,value\n0.01,adam,,1\n0.01,sgd,,1\n", `line 3: space: parameter "momentum" is active but has no value`},
		{"empty", "", "empty file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(c.csv), s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestReadKeepsFailedAndPendingByState(t *testing.T) {
	s := testSpace(t)
	h, err := ReadCSV(strings.NewReader("number,lr,opt,momentum,value,state\n5,0.01,adam,,1,complete\n1,0.01,adam,,,failed\n2,0.02,adam,,5,pending\n3,0.02,adam,,nan,\n4,0.03,adam,,2,\n"), s)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		number     int64
		state      history.State
		completion int
	}{{1, history.Failed, -1}, {2, history.Pending, -1}, {3, history.Failed, -1}, {4, history.Complete, 1}, {5, history.Complete, 0}}
	if len(h.Trials) != len(want) {
		t.Fatalf("%d trials", len(h.Trials))
	}
	for i, w := range want {
		got := h.Trials[i]
		if got.Number != w.number || got.State != w.state || got.Completion != w.completion {
			t.Fatalf("trial %d: number %d state %q completion %d, want %+v", i, got.Number, got.State, got.Completion, w)
		}
	}
	if u := h.Usable(); len(u) != 2 {
		t.Fatalf("usable %v", u)
	}
}

func TestExtraColumnsBecomeUserAttributes(t *testing.T) {
	s := testSpace(t)
	h, err := ReadCSV(strings.NewReader("lr,opt,momentum,value,seconds,host\n0.01,adam,,1,3.5,a1\n0.02,adam,,2,,b2\n"), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], `"seconds", "host"`) {
		t.Fatalf("warnings %q", h.Warnings)
	}
	if h.Trials[0].UserAttrs["seconds"] != 3.5 || h.Trials[0].UserAttrs["host"] != "a1" {
		t.Fatalf("attributes %v", h.Trials[0].UserAttrs)
	}
	if _, ok := h.Trials[1].UserAttrs["seconds"]; ok || h.Trials[1].UserAttrs["host"] != "b2" {
		t.Fatalf("attributes %v", h.Trials[1].UserAttrs)
	}
}

// A file whose first line never ends is refused after MaxLineBytes, and the
// error quotes only a short excerpt of anything it names.
func TestLongLinesAreRefusedEarly(t *testing.T) {
	s := testSpace(t)
	r := &endless{}
	_, err := ReadCSV(r, s)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("error %v", err)
	}
	if r.read > 2*MaxLineBytes {
		t.Fatalf("read %d bytes before refusing", r.read)
	}
	long := strings.Repeat("x", 5000)
	_, err = ReadCSV(strings.NewReader("lr,opt,momentum,value,state\n0.01,adam,,1,"+long+"\n"), s)
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "(5000 characters)") {
		t.Fatalf("error of %d bytes: %.300v", len(err.Error()), err)
	}
}

// endless is a header that never ends.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.read += len(p)
	return len(p), nil
}

func TestStateColumnRoundTrip(t *testing.T) {
	s := testSpace(t)
	var buf bytes.Buffer
	w, err := NewWriterWithState(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Write(Record{Params: []float64{0.01, 1, math.NaN()}, Value: 0.5})
	_ = w.Write(Record{Params: []float64{0.02, 1, math.NaN()}, Value: 0.7, State: "pruned"})
	if !strings.Contains(buf.String(), ",complete\n") || !strings.Contains(buf.String(), ",pruned\n") {
		t.Fatalf("states not written: %q", buf.String())
	}
	h, err := ReadCSV(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Usable()) != 1 || h.Trials[1].State != history.Pruned {
		t.Fatalf("a pruned trial must be kept and not usable: %+v", h.Trials)
	}
}

// A study with several objectives and a constraint: Write gives each its
// own column, named after it, and ReadCSV reads them back (a pruned trial
// keeps its value in the first objective's column, no values; a complete
// one without constraint values stays without them).
func TestObjectiveAndConstraintColumns(t *testing.T) {
	s, err := space.Parse([]byte(`{"objectives": [{"name": "error"}, {"name": "size", "direction": "maximize"}], "constraints": ["memory"],
		"params": [{"name": "x", "type": "float", "low": 0, "high": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := &history.History{Space: s, Trials: []history.Trial{
		{Number: 0, State: history.Complete, Params: []float64{0.5}, Value: 0.25, Values: []float64{0.25, 3}, Constraints: []float64{-1}},
		{Number: 1, State: history.Pruned, Params: []float64{0.1}, Value: 0.75},
		{Number: 2, State: history.Complete, Params: []float64{0.2}, Value: 0.5, Values: []float64{0.5, 1}},
		{Number: 3, State: history.Failed, Params: []float64{0.3}, Value: math.NaN()},
	}}
	var buf bytes.Buffer
	if err := Write(&buf, h); err != nil {
		t.Fatal(err)
	}
	want := "number,x,error,size,memory,acquisition,state\n0,0.5,0.25,3,-1,,complete\n1,0.1,0.75,,,,pruned\n2,0.2,0.5,1,,,complete\n3,0.3,,,,,failed\n"
	if buf.String() != want {
		t.Fatalf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
	back, err := ReadCSV(strings.NewReader(buf.String()), s)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range back.Trials {
		w := h.Trials[i]
		if tr.State != w.State || !slices.Equal(tr.Values, w.Values) || !slices.Equal(tr.Constraints, w.Constraints) ||
			!(tr.Value == w.Value || math.IsNaN(tr.Value) && math.IsNaN(w.Value)) {
			t.Errorf("trial %d read back as %+v, written %+v", w.Number, tr, w)
		}
	}
	if err := back.Validate(); err != nil {
		t.Error(err)
	}
	// A single named objective reads a "value" column too; a name shared
	// with a parameter is refused before anything is written.
	named, _ := space.Parse([]byte(`{"objectives": [{"name": "loss"}], "params": [{"name": "x", "type": "float", "low": 0, "high": 1}]}`))
	if h, err := ReadCSV(strings.NewReader("x,value\n0.5,2\n"), named); err != nil || h.Trials[0].Value != 2 {
		t.Errorf("value column for a named objective: %v %+v", err, h)
	}
	clash, _ := space.Parse([]byte(`{"objectives": [{"name": "x"}, {"name": "y"}], "params": [{"name": "x", "type": "float", "low": 0, "high": 1}]}`))
	if err := Write(&bytes.Buffer{}, &history.History{Space: clash}); err == nil || !strings.Contains(err.Error(), `objective column "x" is also the name of parameter "x"`) {
		t.Errorf("clash: %v", err)
	}
}
