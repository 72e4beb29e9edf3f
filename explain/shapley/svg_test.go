package shapley

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

func wellFormed(t *testing.T, b []byte) int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	elems := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return elems
		}
		if err != nil {
			t.Fatalf("svg is not well-formed XML: %v\n%s", err, b)
		}
		if _, ok := tok.(xml.StartElement); ok {
			elems++
		}
	}
}

func lcbExplanation(t *testing.T, m Method) *Explanation {
	t.Helper()
	f, err := LCB(lcbModel(), 2)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(context.Background(), f, []float64{0.45, 0.6, 0.5, 0.3}, Options{Method: m, Samples: 200, BackgroundSize: 400, Names: []string{"a", "b<c", "c", "d"}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestDecompositionSVG(t *testing.T) {
	for _, m := range []Method{Exact, MonteCarlo} {
		e := lcbExplanation(t, m)
		var buf bytes.Buffer
		if err := WriteDecompositionSVG(&buf, e, nil); err != nil {
			t.Fatal(err)
		}
		n := wellFormed(t, buf.Bytes())
		// Two stacked bars and one diamond per parameter at least.
		if n < 3*4 || !strings.Contains(buf.String(), "b&lt;c") {
			t.Errorf("%s: %d elements", m, n)
		}
	}
	f := scalar(t, 3, toy)
	e, _ := Explain(context.Background(), f, []float64{0, 0, 0}, Options{BackgroundSize: 100})
	var buf bytes.Buffer
	if err := WriteDecompositionSVG(&buf, e, nil); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, buf.Bytes())
}

func TestPathAndSVG(t *testing.T) {
	base := lcbModel()
	iters := []int{3, 4, 5, 6}
	step := func(_ context.Context, it int) (Function, []float64, error) {
		shift := float64(it) / 10
		m := closedForm{dim: 4, mean: func(x []float64) float64 { return base.mean(x) + shift*x[0] }, sd: base.sd}
		f, err := LCB(m, 1)
		return f, []float64{0.5, 0.5 - shift/10, 0.5, 0.5}, err
	}
	var reported []int
	p, err := ExplainPath(context.Background(), iters, step, Options{Method: MonteCarlo, Samples: 100, BackgroundSize: 200, Workers: 2,
		Progress: func(done, total int) {
			if total != len(iters) {
				t.Errorf("progress total %d, want %d", total, len(iters))
			}
			reported = append(reported, done)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(reported) != "[1 2 3 4]" {
		t.Errorf("progress reported %v, want one call per iteration counting up to 4", reported)
	}
	if len(p.Steps) != 4 || p.Steps[2].Iteration != 5 {
		t.Fatalf("path %+v", p.Steps)
	}
	// Each step equals a stand-alone explanation with the same options.
	f, x, _ := step(context.Background(), 5)
	bg, _ := UniformBackground(nil, 4, 200, 0^0x5851f42d4c957f2d)
	alone, err := Explain(context.Background(), f, x, Options{Method: MonteCarlo, Samples: 100, Background: bg})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := p.Steps[2].Explanation.Output(OutputCB)
	want, _ := alone.Output(OutputCB)
	for j := range got.Phi {
		if got.Phi[j] != want.Phi[j] {
			t.Errorf("path step differs from a stand-alone explanation: %v vs %v", got.Phi, want.Phi)
			break
		}
	}
	var buf bytes.Buffer
	if err := WritePathSVG(&buf, p); err != nil {
		t.Fatal(err)
	}
	if n := wellFormed(t, buf.Bytes()); n < 4*3 {
		t.Errorf("%d elements", n)
	}
}

func TestSummaryJSON(t *testing.T) {
	e := lcbExplanation(t, MonteCarlo)
	s, err := e.Summarize(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Point  map[string]float64               `json:"point"`
		Payout map[string]float64               `json:"payout"`
		Mean   map[string]float64               `json:"mean"`
		SE     map[string]float64               `json:"se"`
		CB     map[string]float64               `json:"cb"`
		CI95   map[string]map[string][2]float64 `json:"ci95"`
		Tau    float64                          `json:"tau"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	cb, _ := e.Output(OutputCB)
	if got.Tau != 2 || got.Point["b<c"] != 0.6 || got.Payout["cb"] != cb.Payout || got.CB["d"] != cb.Phi[3] ||
		got.CI95["cb"]["a"][0] != cb.Lower[0] || len(got.Mean) != 4 || len(got.SE) != 4 {
		t.Errorf("summary %s", b)
	}
	if math.Abs(got.CB["a"]-(got.Mean["a"]-2*got.SE["a"])) > 1e-10 {
		t.Errorf("summary breaks linearity")
	}
	// The whole explanation marshals too (service and report reuse it).
	if _, err := json.Marshal(e); err != nil {
		t.Fatal(err)
	}
}
