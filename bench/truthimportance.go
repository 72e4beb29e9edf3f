package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"xbo/explain"
	"xbo/explain/fanova"
)

// TruthImportanceOptions configure TruthImportance: the accuracy of the
// importance methods of the explanation engine, and how often their
// intervals cover the truth, on the truth catalogue.
type TruthImportanceOptions struct {
	TruthSuiteOptions
	// Large is one more size of uniform data, in trials (default 500; −1
	// none).
	Large int
	// Methods are explain's importance methods (default gp-sobol and
	// forest-fanova).
	Methods []string
	// TruthSamples is the base design of the quasi-Monte Carlo truth of a
	// problem without exact indices (default 2^15).
	TruthSamples int
}

// TruthImportanceRow is one (problem, data, n, method), over seeds.
type TruthImportanceRow struct {
	Problem string `json:"problem"`
	HeldOut bool   `json:"heldout"`
	Data    string `json:"data"`
	N       int    `json:"n"`
	// Size says how N was chosen: "10·d", "30·d" or "n=500".
	Size   string `json:"size"`
	Method string `json:"method"`
	Seeds  int    `json:"seeds"`
	// MaxMainError is the mean over seeds of max_j |Ŝ_j − S_j|, WorstMain
	// its largest value; MaxTotalError the mean of max_j |T̂_j − T_j|
	// (methods with total effects only).
	MaxMainError  float64  `json:"max_main_error"`
	WorstMain     float64  `json:"worst_main_error"`
	MaxTotalError *float64 `json:"max_total_error,omitempty"`
	IntervalCoverage
}

// IntervalCoverage counts how many (parameter, seed) 95% intervals of main
// effects (forest-fanova: fraction ± 1.96·std across trees) and of total
// effects contain the truth.
type IntervalCoverage struct {
	MainCovered    int `json:"main_covered"`
	MainIntervals  int `json:"main_intervals"`
	TotalCovered   int `json:"total_covered"`
	TotalIntervals int `json:"total_intervals"`
}

func (c *IntervalCoverage) add(d IntervalCoverage) {
	c.MainCovered += d.MainCovered
	c.MainIntervals += d.MainIntervals
	c.TotalCovered += d.TotalCovered
	c.TotalIntervals += d.TotalIntervals
}

// TruthImportanceSummary pools the rows of one part, data kind, size and
// method.
type TruthImportanceSummary struct {
	Part   string `json:"part"`
	Data   string `json:"data"`
	Size   string `json:"size"`
	Method string `json:"method"`
	Rows   int    `json:"rows"`
	// MeanMainError is the mean over rows of their mean max |ΔS|,
	// WorstMain the largest over rows and seeds.
	MeanMainError float64 `json:"mean_max_main_error"`
	WorstMain     float64 `json:"worst_main_error"`
	IntervalCoverage
	// MinRowCoverage is the lowest main-effect coverage of a row;
	// RowsBelow85 counts rows under 0.85.
	MinRowCoverage float64 `json:"min_row_coverage"`
	RowsBelow85    int     `json:"rows_below_085"`
}

// TruthImportanceResult is the benchmark's outcome.
type TruthImportanceResult struct {
	TruthRunInfo
	Rows      []TruthImportanceRow     `json:"rows"`
	Summaries []TruthImportanceSummary `json:"summaries"`
	// TruthError is the largest design error of each quasi-Monte Carlo
	// truth, by problem.
	TruthError map[string]float64 `json:"truth_error,omitempty"`
}

// importancePoint is one line of the raw dump: one parameter's indices in
// one explanation, with the truth.
type importancePoint struct {
	pointHeader
	Method     string   `json:"method"`
	Main       *float64 `json:"main"`
	MainLower  *float64 `json:"main_lower"`
	MainUpper  *float64 `json:"main_upper"`
	MainTruth  *float64 `json:"main_truth"`
	Total      *float64 `json:"total,omitempty"`
	TotalLower *float64 `json:"total_lower,omitempty"`
	TotalUpper *float64 `json:"total_upper,omitempty"`
	TotalTruth *float64 `json:"total_truth"`
}

// impSize is one size of a data kind.
type impSize struct {
	n     int
	label string
}

// sizes are the sizes of a kind for problem dimension d.
func (o *TruthImportanceOptions) sizes(kind string, d int) []impSize {
	var out []impSize
	for _, s := range o.Sizes {
		out = append(out, impSize{s * d, fmt.Sprintf("%d·d", s)})
	}
	if kind == DataUniform && o.Large > 0 && !slices.ContainsFunc(out, func(s impSize) bool { return s.n == o.Large }) {
		out = append(out, impSize{o.Large, fmt.Sprintf("n=%d", o.Large)})
	}
	return out
}

// impKey identifies a row: problem index, kind, n, method.
type impKey struct {
	problem int
	kind    string
	n       int
	method  string
}

// impTally is one seed's scores of a row.
type impTally struct {
	maxMain, maxTotal float64
	hasTotal          bool
	IntervalCoverage
}

// TruthImportance runs the importance benchmark on the truth catalogue.
func TruthImportance(ctx context.Context, o TruthImportanceOptions) (*TruthImportanceResult, error) {
	run, err := o.prepare("importance")
	if err != nil {
		return nil, err
	}
	if o.Large == 0 {
		o.Large = 500
	}
	if err := importanceDefaults(&o.Methods, &o.TruthSamples); err != nil {
		return nil, err
	}
	if o.Large < -1 || o.Large > 100_000 || (o.Large > 0 && o.Large < explain.MinTrials) {
		return nil, fmt.Errorf("bench: importance: large size %d must be −1 or lie in %d..100000", o.Large, explain.MinTrials)
	}
	mains := make([][]float64, len(run.problems))
	totals := make([][]float64, len(run.problems))
	truthErr := make([]float64, len(run.problems))
	if err := truthPhase(ctx, run.problems, o.Workers, func(i int, p *TruthProblem) error {
		var err error
		mains[i], totals[i], truthErr[i], err = indexTruth(ctx, p, o.TruthSamples)
		return err
	}); err != nil {
		return nil, err
	}
	largest := func(p *TruthProblem, kind string) int {
		n := 0
		for _, s := range o.sizes(kind, p.Space.Dim()) {
			n = max(n, s.n)
		}
		return n
	}
	results, err := runTruthJobs(ctx, &o.TruthSuiteOptions, run, largest,
		func(j truthJob, p *TruthProblem, data *TruthData, e *explain.Engine) (map[impKey]impTally, error) {
			return o.importanceJob(ctx, e, run.points, j, p, data, mains[j.problem], totals[j.problem])
		})
	if err != nil {
		return nil, err
	}
	res := &TruthImportanceResult{TruthRunInfo: o.info(run), TruthError: map[string]float64{}}
	for i, p := range run.problems {
		if p.Main == nil {
			res.TruthError[p.Name] = truthErr[i]
		}
		for _, kind := range o.Data {
			for _, sz := range o.sizes(kind, p.Space.Dim()) {
				for _, m := range o.Methods {
					row := TruthImportanceRow{Problem: p.Name, HeldOut: p.HeldOut, Data: kind, N: sz.n, Size: sz.label, Method: m}
					var totalSum float64
					hasTotal := false
					for _, r := range results {
						t, ok := r[impKey{i, kind, sz.n, m}]
						if !ok {
							continue
						}
						row.Seeds++
						row.MaxMainError += t.maxMain
						row.WorstMain = math.Max(row.WorstMain, t.maxMain)
						row.add(t.IntervalCoverage)
						totalSum += t.maxTotal
						hasTotal = hasTotal || t.hasTotal
					}
					if row.Seeds == 0 {
						continue
					}
					row.MaxMainError /= float64(row.Seeds)
					if hasTotal {
						v := totalSum / float64(row.Seeds)
						row.MaxTotalError = &v
					}
					res.Rows = append(res.Rows, row)
				}
			}
		}
	}
	res.Summaries = summarizeImportance(res.Rows)
	return res, nil
}

// importanceJob scores every method on every size of one data set.
func (o *TruthImportanceOptions) importanceJob(ctx context.Context, engine *explain.Engine, points *pointWriter, j truthJob,
	p *TruthProblem, data *TruthData, main, total []float64) (map[impKey]impTally, error) {
	sizes := o.sizes(j.kind, p.Space.Dim())
	out := map[impKey]impTally{}
	for _, sz := range sizes {
		h := data.prefix(sz.n).history(p)
		for _, m := range o.Methods {
			res, err := engine.Importance(ctx, h, explain.ImportanceRequest{Method: m})
			if err != nil {
				return nil, fmt.Errorf("bench: importance %s on %s %s seed %d n=%d: %w", m, p.Name, j.kind, j.seed, sz.n, err)
			}
			var t impTally
			var batch []any
			for pi, name := range p.Space.Names() {
				head, err := newPointHeader(p, j, sz.n, name, res.About)
				if err != nil {
					return nil, err
				}
				pt := importancePoint{pointHeader: head, Method: m, MainTruth: finite(main[pi]), TotalTruth: finite(total[pi])}
				est, lo, hi := interval(res.Main[name])
				pt.Main, pt.MainLower, pt.MainUpper = finite(est), finite(lo), finite(hi)
				t.maxMain = math.Max(t.maxMain, math.Abs(est-main[pi]))
				t.MainIntervals++
				t.MainCovered += b2i(lo <= main[pi] && main[pi] <= hi)
				if e, ok := res.Total[name]; ok {
					est, lo, hi := interval(e)
					pt.Total, pt.TotalLower, pt.TotalUpper = finite(est), finite(lo), finite(hi)
					t.hasTotal = true
					t.maxTotal = math.Max(t.maxTotal, math.Abs(est-total[pi]))
					t.TotalIntervals++
					t.TotalCovered += b2i(lo <= total[pi] && total[pi] <= hi)
				}
				batch = append(batch, pt)
			}
			if err := points.write(batch); err != nil {
				return nil, err
			}
			out[impKey{j.problem, j.kind, sz.n, m}] = t
		}
	}
	return out, nil
}

// interval is an effect's estimate and 95% interval: the method's own, or
// the estimate ± 1.96 std where it gives none (forest-fanova).
func interval(e fanova.Effect) (est, lo, hi float64) {
	if len(e.CI95) == 2 {
		return e.Fraction, e.CI95[0], e.CI95[1]
	}
	return e.Fraction, e.Fraction - z95*e.Std, e.Fraction + z95*e.Std
}

// summarizeImportance pools rows per part, data kind, size and method.
func summarizeImportance(rows []TruthImportanceRow) []TruthImportanceSummary {
	var out []TruthImportanceSummary
	index := map[string]int{}
	for _, part := range []bool{false, true} {
		for _, r := range rows {
			if r.HeldOut != part {
				continue
			}
			s := TruthImportanceSummary{Part: "tune", Data: r.Data, Size: r.Size, Method: r.Method, MinRowCoverage: 1}
			if part {
				s.Part = "held-out"
			}
			k := strings.Join([]string{s.Part, s.Data, s.Size, s.Method}, "\x00")
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, s)
			}
			sum := &out[i]
			sum.Rows++
			sum.MeanMainError += r.MaxMainError
			sum.WorstMain = math.Max(sum.WorstMain, r.WorstMain)
			sum.add(r.IntervalCoverage)
			c := fraction(r.MainCovered, r.MainIntervals)
			sum.MinRowCoverage = math.Min(sum.MinRowCoverage, c)
			sum.RowsBelow85 += b2i(c < 0.85)
		}
	}
	for i := range out {
		out[i].MeanMainError /= float64(out[i].Rows)
	}
	return out
}

// WriteTable prints the rows and summaries of each part apart, with the
// targets, then the truths' errors and the notes.
func (r *TruthImportanceResult) WriteTable(w io.Writer) error {
	cover := func(k, n int) string {
		if n == 0 {
			return "–"
		}
		return fmt.Sprintf("%d/%d (%.0f%%)", k, n, 100*float64(k)/float64(n))
	}
	for _, part := range []string{"tune", "held-out"} {
		if !r.header(w, part) {
			continue
		}
		tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "problem\tdata\tn\tmethod\tseeds\tmax |ΔS| (mean)\tmax |ΔS| (worst)\tmax |ΔT|\tS_j covered\tT_j covered\t")
		for _, row := range r.Rows {
			if row.HeldOut != (part == "held-out") {
				continue
			}
			tot := "–"
			if row.MaxTotalError != nil {
				tot = fmt.Sprintf("%.3f", *row.MaxTotalError)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%.3f\t%.3f\t%s\t%s\t%s\t\n", row.Problem, row.Data, row.N, row.Method, row.Seeds,
				row.MaxMainError, row.WorstMain, tot, cover(row.MainCovered, row.MainIntervals), cover(row.TotalCovered, row.TotalIntervals))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s part by data (targets: max |ΔS| ≤ 0.03 on uniform data, ≤ 0.10 on optimizer data; intervals cover ≥ 85%% in every problem and data kind):\n", part)
		tw = tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "data\tsize\tmethod\trows\tmax |ΔS| (mean)\tmax |ΔS| (worst)\tS_j covered\trows' lowest\trows < 85%\tT_j covered\t")
		for _, s := range r.Summaries {
			if s.Part != part {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.3f\t%.3f\t%s\t%.2f\t%d\t%s\t\n", s.Data, s.Size, s.Method, s.Rows, s.MeanMainError, s.WorstMain,
				cover(s.MainCovered, s.MainIntervals), s.MinRowCoverage, s.RowsBelow85, cover(s.TotalCovered, s.TotalIntervals))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	notes := slices.Clone(r.Notes)
	names := make([]string, 0, len(r.TruthError))
	for n := range r.TruthError {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		notes = append(notes, fmt.Sprintf("%s: indices by quasi-Monte Carlo, largest design error %.4f", n, r.TruthError[n]))
	}
	return writeNotes(w, notes)
}
