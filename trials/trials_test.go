package trials

import (
	"bytes"
	"math"
	"strings"
	"testing"

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
	tab, err := ReadCSV(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 2 || tab.Skipped != 1 {
		t.Fatalf("len %d skipped %d", tab.Len(), tab.Skipped)
	}
	if tab.Rows[1][1] != 1 || !math.IsNaN(tab.Rows[1][2]) || tab.Acquisitions[1] != "ei" {
		t.Fatalf("row 2 read back as %v %q", tab.Rows[1], tab.Acquisitions[1])
	}
	if b := tab.Best(); b != 1 { // maximize: 0.95 beats 0.9
		t.Fatalf("best = %d", b)
	}
	u, err := tab.Encoded()
	if err != nil || u[1][2] != space.Inactive {
		t.Fatalf("encoded %v %v", u, err)
	}
}

func TestReadErrorsNameRowAndColumn(t *testing.T) {
	s := testSpace(t)
	cases := []struct{ name, csv, want string }{
		{"unknown column", "lr,opt,momentum,value,speed\n0.01,sgd,0.5,1,3\n", `column 5 "speed"`},
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

func TestReadSkipsFailedAndPendingByState(t *testing.T) {
	s := testSpace(t)
	tab, err := ReadCSV(strings.NewReader("number,lr,opt,momentum,value,state\n0,0.01,adam,,1,complete\n1,0.01,adam,,,failed\n2,0.02,adam,,5,pending\n3,0.02,adam,,nan,\n"), s)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 1 || tab.Skipped != 3 || tab.Lines[0] != 2 {
		t.Fatalf("len %d skipped %d lines %v", tab.Len(), tab.Skipped, tab.Lines)
	}
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
	tab, err := ReadCSV(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 1 || tab.Skipped != 1 {
		t.Fatalf("a pruned trial must be skipped: len %d skipped %d", tab.Len(), tab.Skipped)
	}
}
