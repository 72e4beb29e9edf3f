package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"text/tabwriter"

	"xbo/explain"
	"xbo/explain/sobol"
	"xbo/history"
	"xbo/opt"
	"xbo/space"
)

// ImportanceOptions configure the importance-accuracy benchmark:
// every importance method of the explanation engine against the true
// variance-based indices of known functions.
type ImportanceOptions struct {
	// Sizes are the numbers n of uniform random observations (default 500,
	// 1000, 3000).
	Sizes []int
	// Seeds is the number of datasets per (case, n) and BOSeeds of optimizer
	// runs per BO-EI case (default 1 and 3; BOSeeds −1: none).
	Seeds, BOSeeds int
	// Methods are explain's importance methods (default gp-sobol and
	// forest-fanova).
	Methods []string
	// TruthSamples is the base design size of the quasi-Monte Carlo truth of
	// functions without closed-form indices (default 2^15).
	TruthSamples int
	Progress     func(done, total int)
}

// ImportanceRow is one (case, data, method): the errors of the main and
// total effects against the truth, averaged over seeds, and how often the
// method's 95% interval of a main effect contains the true index
// (forest-fanova: fraction ± 1.96·std across trees).
type ImportanceRow struct {
	Case   string `json:"case"`
	Data   string `json:"data"`
	N      int    `json:"n"`
	Method string `json:"method"`
	Seeds  int    `json:"seeds"`
	// MaxMainError is the mean over seeds of max_j |Ŝ_j − S_j|; WorstMain
	// the largest over seeds.
	MaxMainError float64 `json:"max_main_error"`
	WorstMain    float64 `json:"worst_main_error"`
	// MaxTotalError is the same for total effects (gp-sobol only; NaN
	// otherwise).
	MaxTotalError float64 `json:"max_total_error"`
	// Covered of Params (parameter, seed) intervals contain the true index.
	Covered int `json:"covered"`
	Params  int `json:"params"`
}

// MarshalJSON writes the NaN total error of a method without total effects
// as null (encoding/json refuses NaN).
func (r ImportanceRow) MarshalJSON() ([]byte, error) {
	type plain ImportanceRow
	return json.Marshal(struct {
		plain
		MaxTotalError *float64 `json:"max_total_error"`
	}{plain(r), finite(r.MaxTotalError)})
}

// ImportanceResult is the table.
type ImportanceResult struct {
	Rows []ImportanceRow `json:"rows"`
	// TruthError is the largest design error (std) of a quasi-Monte Carlo
	// truth, by case.
	TruthError map[string]float64 `json:"truth_error"`
}

// importanceCase is a function on a space with its true indices.
type importanceCase struct {
	name string
	sp   *space.Space
	eval func(x []float64) float64 // natural values
	// main and total are the true indices (total nil: computed too).
	main, total []float64
}

func floatParams(d int, low, high float64) []space.Param {
	ps := make([]space.Param, d)
	for j := range ps {
		ps[j] = space.Param{Name: fmt.Sprintf("x%d", j+1), Type: space.Float, Low: low, High: high}
	}
	return ps
}

// analyticCases are the closed-form cases; their indices are derived in
// docs/research/importance.md.
func analyticCases() ([]importanceCase, error) {
	var cases []importanceCase
	add := func(name string, params []space.Param, eval func([]float64) float64, main, total []float64) error {
		sp, err := space.New(space.Minimize, params)
		if err != nil {
			return fmt.Errorf("bench: importance case %s: %w", name, err)
		}
		cases = append(cases, importanceCase{name: name, sp: sp, eval: eval, main: main, total: total})
		return nil
	}
	// Ishigami (a = 7, b = 0.1) on [−π, π]³.
	pi4, pi8 := math.Pow(math.Pi, 4), math.Pow(math.Pi, 8)
	v1, v2, v13 := 0.5*math.Pow(1+0.1*pi4/5, 2), 49.0/8, 8*0.01*pi8/225
	v := v1 + v2 + v13
	if err := add("ishigami", floatParams(3, -math.Pi, math.Pi), func(x []float64) float64 {
		return math.Sin(x[0]) + 7*math.Pow(math.Sin(x[1]), 2) + 0.1*math.Pow(x[2], 4)*math.Sin(x[0])
	}, []float64{v1 / v, v2 / v, 0}, []float64{(v1 + v13) / v, v2 / v, v13 / v}); err != nil {
		return nil, err
	}
	// Sobol G, a = (0, 1, 4.5, 9, 99, 99): V_j = 1/(3(1+a_j)²),
	// V = Π(1+V_j) − 1, S_j = V_j/V, T_j = V_j Π_{k≠j}(1+V_k)/V.
	a := []float64{0, 1, 4.5, 9, 99, 99}
	vj := make([]float64, len(a))
	prod := 1.0
	for j, aj := range a {
		vj[j] = 1 / (3 * (1 + aj) * (1 + aj))
		prod *= 1 + vj[j]
	}
	gMain, gTotal := make([]float64, len(a)), make([]float64, len(a))
	for j := range a {
		gMain[j] = vj[j] / (prod - 1)
		gTotal[j] = vj[j] * prod / (1 + vj[j]) / (prod - 1)
	}
	if err := add("sobol-g", floatParams(6, 0, 1), func(x []float64) float64 {
		p := 1.0
		for j, aj := range a {
			p *= (math.Abs(4*x[j]-2) + aj) / (1 + aj)
		}
		return p
	}, gMain, gTotal); err != nil {
		return nil, err
	}
	// Linear with weights 8, 4, 2, 1 on [0,1]⁴: S_j = T_j = a_j²/Σa².
	w := []float64{8, 4, 2, 1}
	lin := make([]float64, len(w))
	for j := range w {
		lin[j] = w[j] * w[j] / 85
	}
	if err := add("linear", floatParams(4, 0, 1), func(x []float64) float64 {
		return 8*x[0] + 4*x[1] + 2*x[2] + x[3]
	}, lin, lin); err != nil {
		return nil, err
	}
	// Pure product x₁x₂x₃ on [0,1]³: V = 1/27 − 1/64 = 37/1728,
	// V_j = Var(x)/16 = 1/192, so S_j = 9/37; Var E[f | x_{−j}] = 7/576,
	// so T_j = 1 − 21/37 = 16/37.
	if err := add("product", floatParams(3, 0, 1), func(x []float64) float64 {
		return x[0] * x[1] * x[2]
	}, []float64{9.0 / 37, 9.0 / 37, 9.0 / 37}, []float64{16.0 / 37, 16.0 / 37, 16.0 / 37}); err != nil {
		return nil, err
	}
	// Categorical: f = c_k(1 + x₁) + 2x₃ with level values c = (0, 1, 3)
	// uniform over k. E c = 4/3, Var c = 14/9, Var(1+x₁) = 1/12:
	// V₁ = (4/3)²/12 = 4/27, V_k = 1.5²·14/9 = 7/2, V₁k = 14/9/12 = 7/54,
	// V₃ = 4/12 = 1/3, V = 37/9.
	levels := []float64{0, 1, 3}
	vc := 37.0 / 9
	if err := add("categorical", []space.Param{
		{Name: "x1", Type: space.Float, Low: 0, High: 1},
		{Name: "k", Type: space.Categorical, Choices: []any{"c0", "c1", "c3"}},
		{Name: "x3", Type: space.Float, Low: 0, High: 1},
	}, func(x []float64) float64 {
		return levels[int(x[1])]*(1+x[0]) + 2*x[2]
	}, []float64{4.0 / 27 / vc, 3.5 / vc, 1.0 / 3 / vc}, []float64{(4.0/27 + 7.0/54) / vc, (3.5 + 7.0/54) / vc, 1.0 / 3 / vc}); err != nil {
		return nil, err
	}
	return cases, nil
}

// boCase is a test function optimized by EI for a budget.
type boCase struct {
	function string
	dim      int
	budget   int
}

var boCases = []boCase{{NameHartmann6, 0, 180}, {NameStyblinskiTang, 4, 120}}

// Importance runs the benchmark.
func Importance(ctx context.Context, o ImportanceOptions) (*ImportanceResult, error) {
	if len(o.Sizes) == 0 {
		o.Sizes = []int{500, 1000, 3000}
	}
	if o.Seeds == 0 {
		o.Seeds = 1
	}
	if o.BOSeeds == 0 {
		o.BOSeeds = 3
	}
	if err := importanceDefaults(&o.Methods, &o.TruthSamples); err != nil {
		return nil, err
	}
	if o.Seeds < 1 || o.BOSeeds < -1 {
		return nil, fmt.Errorf("bench: importance: seeds %d and BO seeds %d", o.Seeds, o.BOSeeds)
	}
	for _, n := range o.Sizes {
		if n < explain.MinTrials || n > 100_000 {
			return nil, fmt.Errorf("bench: importance: size %d must lie in %d..100000", n, explain.MinTrials)
		}
	}
	cases, err := analyticCases()
	if err != nil {
		return nil, err
	}
	e, err := explain.New(explain.Config{Concurrency: 1})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	res := &ImportanceResult{TruthError: map[string]float64{}}
	bo := boCases
	if o.BOSeeds < 0 {
		bo = nil
	}
	total := len(cases)*len(o.Sizes)*o.Seeds + len(bo)*o.BOSeeds
	done := 0
	step := func() {
		done++
		if o.Progress != nil {
			o.Progress(done, total)
		}
	}
	// measure scores every method on seeds datasets of one case.
	measure := func(c importanceCase, data string, n, seeds int, dataset func(seed uint64) (*history.History, error)) error {
		rows := newRows(c.name, data, n, o.Methods)
		for s := 1; s <= seeds; s++ {
			h, err := dataset(uint64(s))
			if err != nil {
				return err
			}
			if err := score(ctx, e, h, c, rows); err != nil {
				return err
			}
			step()
		}
		res.Rows = append(res.Rows, finish(rows)...)
		return nil
	}
	for _, c := range cases {
		for _, n := range o.Sizes {
			if err := measure(c, fmt.Sprintf("uniform n=%d", n), n, o.Seeds, func(seed uint64) (*history.History, error) {
				return uniformHistory(c, n, seed)
			}); err != nil {
				return nil, err
			}
		}
	}
	for _, b := range bo {
		c, truthErr, err := boTruth(ctx, b, o.TruthSamples)
		if err != nil {
			return nil, err
		}
		if truthErr > 0 {
			res.TruthError[c.name] = truthErr
		}
		if err := measure(c, fmt.Sprintf("BO-EI %d evaluations", b.budget), b.budget, o.BOSeeds, func(seed uint64) (*history.History, error) {
			return boHistory(ctx, b, c.sp, seed)
		}); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// importanceDefaults fills the methods (gp-sobol and forest-fanova) and the
// base design of quasi-Monte Carlo truths (2^15) when unset and checks the
// latter.
func importanceDefaults(methods *[]string, truthSamples *int) error {
	if len(*methods) == 0 {
		*methods = []string{explain.ImportanceGPSobol, explain.ImportanceForest}
	}
	if *truthSamples == 0 {
		*truthSamples = 1 << 15
	}
	if *truthSamples < sobol.MinSamples || *truthSamples > sobol.MaxSamples {
		return fmt.Errorf("bench: importance: truth samples %d must lie in %d..%d", *truthSamples, sobol.MinSamples, sobol.MaxSamples)
	}
	return nil
}

func newRows(name, data string, n int, methods []string) []*ImportanceRow {
	rows := make([]*ImportanceRow, len(methods))
	for i, m := range methods {
		rows[i] = &ImportanceRow{Case: name, Data: data, N: n, Method: m, MaxTotalError: math.NaN()}
	}
	return rows
}

func finish(rows []*ImportanceRow) []ImportanceRow {
	out := make([]ImportanceRow, len(rows))
	for i, r := range rows {
		r.MaxMainError /= float64(r.Seeds)
		if !math.IsNaN(r.MaxTotalError) {
			r.MaxTotalError /= float64(r.Seeds)
		}
		out[i] = *r
	}
	return out
}

// score computes every method's importance of h and adds its errors to rows.
func score(ctx context.Context, e *explain.Engine, h *history.History, c importanceCase, rows []*ImportanceRow) error {
	names := c.sp.Names()
	for _, r := range rows {
		res, err := e.Importance(ctx, h, explain.ImportanceRequest{Method: r.Method})
		if err != nil {
			return fmt.Errorf("bench: importance %s on %s (%s): %w", r.Method, c.name, r.Data, err)
		}
		worst, worstTotal := 0.0, 0.0
		for j, name := range names {
			m := res.Main[name]
			worst = math.Max(worst, math.Abs(m.Fraction-c.main[j]))
			lo, hi := m.Fraction-1.959963984540054*m.Std, m.Fraction+1.959963984540054*m.Std
			if len(m.CI95) == 2 {
				lo, hi = m.CI95[0], m.CI95[1]
			}
			r.Params++
			if lo <= c.main[j] && c.main[j] <= hi {
				r.Covered++
			}
			if t, ok := res.Total[name]; ok {
				worstTotal = math.Max(worstTotal, math.Abs(t.Fraction-c.total[j]))
			}
		}
		r.Seeds++
		r.MaxMainError += worst
		r.WorstMain = math.Max(r.WorstMain, worst)
		if res.Total != nil {
			if math.IsNaN(r.MaxTotalError) {
				r.MaxTotalError = 0
			}
			r.MaxTotalError += worstTotal
		}
	}
	return nil
}

// uniformHistory is n uniform random configurations of the case's space
// with their exact values.
func uniformHistory(c importanceCase, n int, seed uint64) (*history.History, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x1f83d9abfb41bd6b))
	h := &history.History{Name: fmt.Sprintf("%s-uniform-%d-%d", c.name, n, seed), Source: "bench.Importance", Space: c.sp}
	for i, u := range c.sp.Sample(rng, n) {
		x := c.sp.Decode(u)
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: x, Value: c.eval(x), Completion: i})
	}
	return h, nil
}

// boTruth is the BO case's function with its indices: by symmetry for the
// additive Styblinski-Tang (every S_j = T_j = 1/d), by a quasi-Monte Carlo
// pick-freeze design of samples base points on the true function otherwise
// (its largest design error is returned).
func boTruth(ctx context.Context, b boCase, samples int) (importanceCase, float64, error) {
	f, err := Lookup(b.function, b.dim)
	if err != nil {
		return importanceCase{}, 0, err
	}
	sp, err := f.Space()
	if err != nil {
		return importanceCase{}, 0, err
	}
	c := importanceCase{name: fmt.Sprintf("%s (d=%d)", f.Name, f.Dim), sp: sp, eval: f.Eval}
	if b.function == NameStyblinskiTang {
		c.main, c.total = make([]float64, f.Dim), make([]float64, f.Dim)
		for j := range c.main {
			c.main[j], c.total[j] = 1/float64(f.Dim), 1/float64(f.Dim)
		}
		return c, 0, nil
	}
	eval := func(x [][]float64, out []float64) error {
		for i, u := range x {
			out[i] = f.Eval(sp.Decode(u))
		}
		return nil
	}
	truth, err := sobol.Estimate(ctx, eval, sp, sobol.Options{Samples: samples, Seed: 99})
	if err != nil {
		return importanceCase{}, 0, err
	}
	worst := 0.0
	for j := range truth.Main {
		c.main = append(c.main, truth.Main[j].Estimate)
		c.total = append(c.total, truth.Total[j].Estimate)
		worst = math.Max(worst, math.Max(truth.Main[j].Std, truth.Total[j].Std))
	}
	return c, worst, nil
}

// boHistory is one EI run's evaluations.
func boHistory(ctx context.Context, b boCase, sp *space.Space, seed uint64) (*history.History, error) {
	// EI over the whole space (no trust region) on the values unwarped, with
	// hyperparameters of maximum likelihood, as when the intervals were
	// measured (docs/research/importance.md).
	run, err := Run(ctx, RunOptions{Function: b.function, Dim: b.dim, Budget: b.budget, Seed: seed, Strategy: "ei",
		Config: &opt.Config{TrustRegion: "none", OutputWarp: "none", LengthscalePrior: "none"}})
	if err != nil {
		return nil, err
	}
	h := &history.History{Name: fmt.Sprintf("%s-ei-%d", b.function, seed), Source: "bench.Importance", Space: sp}
	for i, tr := range run.History {
		if tr.State != opt.Complete {
			continue
		}
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: tr.Params, Value: tr.Value, Completion: i})
	}
	if len(h.Trials) < explain.MinTrials {
		return nil, errors.New("bench: importance: the run completed too few trials")
	}
	return h, nil
}

// WriteTable prints the rows.
func (r *ImportanceResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tdata\tmethod\tseeds\tmax |ΔS| (mean)\tmax |ΔS| (worst)\tmax |ΔT|\t95% interval covers S_j\t")
	for _, row := range r.Rows {
		tot := "–"
		if !math.IsNaN(row.MaxTotalError) {
			tot = fmt.Sprintf("%.3f", row.MaxTotalError)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.3f\t%.3f\t%s\t%d/%d (%.0f%%)\t\n", row.Case, row.Data, row.Method, row.Seeds,
			row.MaxMainError, row.WorstMain, tot, row.Covered, row.Params, 100*float64(row.Covered)/float64(max(1, row.Params)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes []string
	for c, e := range r.TruthError {
		notes = append(notes, fmt.Sprintf("%s truth by quasi-Monte Carlo, largest design error %.4f", c, e))
	}
	if len(notes) > 0 {
		_, err := fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "; "))
		return err
	}
	return nil
}
