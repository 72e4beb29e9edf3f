package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"xbo/opt"
)

// CompareOptions configure Compare: the simple-regret comparison of optimization
// strategies of Moosbauer et al. 2022, section 5 (budget 30·d, several seeds,
// medians), by default BO with EI against random search.
type CompareOptions struct {
	// Functions to run, as "name" or "name:dim" (default branin,
	// hartmann3, hartmann6).
	Functions []string
	// Strategies compared (default "ei" and "random"); the first is the one
	// whose wins are counted against the others.
	Strategies []string
	// Seeds is the number of repetitions, seeds 1..Seeds (default 10).
	Seeds int
	// BudgetPerDim sets the budget to BudgetPerDim·d (default 30).
	BudgetPerDim int
	// Noise is the sd of Gaussian evaluation noise (default 0).
	Noise float64
	// Workers run optimizations in parallel (default GOMAXPROCS). Results do
	// not depend on it.
	Workers int
	// Config is the base optimizer configuration (nil: opt's defaults).
	Config *opt.Config
	// Progress, if set, is called after each finished run (from one
	// goroutine at a time).
	Progress func(done, total int)
}

// CompareRun is one (function, strategy, seed) optimization.
type CompareRun struct {
	Function string    `json:"function"`
	Strategy string    `json:"strategy"`
	Seed     uint64    `json:"seed"`
	Regret   float64   `json:"regret"`
	Trace    []float64 `json:"-"`
}

// StrategySummary gives the distribution over seeds of one strategy's final
// simple regret on one function.
type StrategySummary struct {
	Strategy string  `json:"strategy"`
	Median   float64 `json:"median_regret"`
	Q25      float64 `json:"q25_regret"`
	Q75      float64 `json:"q75_regret"`
	// MedianAt are the medians after 25, 50, 75 and 100% of the budget, the
	// checkpoints of Moosbauer et al. 2022, table 1.
	MedianAt [4]float64 `json:"median_regret_at_25_50_75_100"`
}

// CompareRow summarizes one function.
type CompareRow struct {
	Function   string            `json:"function"`
	Dim        int               `json:"dim"`
	Budget     int               `json:"budget"`
	Optimum    float64           `json:"optimum"`
	Strategies []StrategySummary `json:"strategies"`
	// Wins is the number of seeds on which the first strategy's regret is
	// strictly below the second's (when there are at least two).
	Wins int `json:"wins"`
	// FirstBeatsSecond is whether the first strategy's median regret is
	// below the second's.
	FirstBeatsSecond bool `json:"first_beats_second"`
}

// CompareResult is what Compare returns; it marshals to the JSON of
// `xbo bench compare --json`.
type CompareResult struct {
	Seeds        int          `json:"seeds"`
	BudgetPerDim int          `json:"budget_per_dim"`
	Noise        float64      `json:"noise"`
	Strategies   []string     `json:"strategies"`
	Rows         []CompareRow `json:"functions"`
	Runs         []CompareRun `json:"runs"`
}

// Compare runs every strategy on every function for every seed and
// summarizes the simple regret.
func Compare(ctx context.Context, o CompareOptions) (*CompareResult, error) {
	res, err := compare(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("bench: compare: %w", err)
	}
	return res, nil
}

func compare(ctx context.Context, o CompareOptions) (*CompareResult, error) {
	if len(o.Functions) == 0 {
		o.Functions = []string{NameBranin, NameHartmann3, NameHartmann6}
	}
	if len(o.Strategies) == 0 {
		o.Strategies = []string{"ei", "random"}
	}
	if o.Seeds == 0 {
		o.Seeds = 10
	}
	if o.BudgetPerDim == 0 {
		o.BudgetPerDim = 30
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Seeds < 0 || o.BudgetPerDim < 0 || o.Workers < 0 {
		return nil, fmt.Errorf("seeds %d, budget per dimension %d and workers %d must be positive", o.Seeds, o.BudgetPerDim, o.Workers)
	}
	funcs := make([]*Function, len(o.Functions))
	dims := make([]int, len(o.Functions))
	for i, spec := range o.Functions {
		name, dim, err := ParseFunctionSpec(spec)
		if err != nil {
			return nil, err
		}
		f, err := Lookup(name, dim)
		if err != nil {
			return nil, err
		}
		funcs[i], dims[i] = f, dim
	}

	type job struct{ fi, si, seed int }
	var jobs []job
	for fi := range funcs {
		for si := range o.Strategies {
			for seed := 1; seed <= o.Seeds; seed++ {
				jobs = append(jobs, job{fi, si, seed})
			}
		}
	}
	runs := make([]CompareRun, len(jobs))
	err := parallelDo(ctx, len(jobs), o.Workers, o.Progress, func(k int) error {
		j := jobs[k]
		f := funcs[j.fi]
		r, err := Run(ctx, RunOptions{
			Function: f.Name,
			Dim:      dims[j.fi],
			Budget:   o.BudgetPerDim * f.Dim,
			Seed:     uint64(j.seed),
			Strategy: o.Strategies[j.si],
			Noise:    o.Noise,
			Config:   o.Config,
		})
		if err != nil {
			return err
		}
		runs[k] = CompareRun{Function: o.Functions[j.fi], Strategy: o.Strategies[j.si], Seed: uint64(j.seed), Regret: r.Regret, Trace: r.Trace}
		return nil
	})
	if err != nil {
		return nil, err
	}

	out := &CompareResult{Seeds: o.Seeds, BudgetPerDim: o.BudgetPerDim, Noise: o.Noise, Strategies: slices.Clone(o.Strategies), Runs: runs}
	for fi, f := range funcs {
		row := CompareRow{Function: o.Functions[fi], Dim: f.Dim, Budget: o.BudgetPerDim * f.Dim, Optimum: f.Optimum}
		bySeed := make([][]float64, len(o.Strategies)) // final regret per strategy, seed order
		for si, strat := range o.Strategies {
			var final []float64
			var traces [][]float64
			for k, j := range jobs {
				if j.fi == fi && j.si == si {
					final = append(final, runs[k].Regret)
					traces = append(traces, runs[k].Trace)
				}
			}
			bySeed[si] = slices.Clone(final)
			sum := StrategySummary{Strategy: strat}
			sum.Q25, sum.Median, sum.Q75 = quartiles(final)
			for c := range 4 {
				at := max(1, (c+1)*row.Budget/4) - 1
				vals := make([]float64, len(traces))
				for i, tr := range traces {
					vals[i] = tr[at]
				}
				_, sum.MedianAt[c], _ = quartiles(vals)
			}
			row.Strategies = append(row.Strategies, sum)
		}
		if len(o.Strategies) >= 2 {
			for i := range bySeed[0] {
				if bySeed[0][i] < bySeed[1][i] {
					row.Wins++
				}
			}
			row.FirstBeatsSecond = row.Strategies[0].Median < row.Strategies[1].Median
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// ParseFunctionSpec reads "name" or "name:dim" (e.g. "styblinski-tang:3");
// dim is 0 when not given.
func ParseFunctionSpec(spec string) (name string, dim int, err error) {
	name, dimText, hasDim := strings.Cut(strings.TrimSpace(spec), ":")
	if !hasDim {
		return name, 0, nil
	}
	dim, err = strconv.Atoi(strings.TrimSpace(dimText))
	if err != nil || dim < 1 {
		return "", 0, fmt.Errorf("function %q: dimension %q is not a positive integer", spec, dimText)
	}
	return name, dim, nil
}

// quartiles returns the 25%, 50% and 75% empirical quantiles (linear
// interpolation between order statistics, R's type 7 as in numpy's default).
func quartiles(x []float64) (q25, q50, q75 float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	s := slices.Clone(x)
	sort.Float64s(s)
	q := func(p float64) float64 {
		h := p * float64(len(s)-1)
		lo := math.Floor(h)
		if int(lo)+1 >= len(s) {
			return s[len(s)-1]
		}
		if h == lo {
			return s[int(lo)] // exact rank: no interpolation (an infinite neighbour would give NaN)
		}
		return s[int(lo)] + (h-lo)*(s[int(lo)+1]-s[int(lo)])
	}
	return q(0.25), q(0.5), q(0.75)
}

// WriteTable prints the comparison as an aligned text table.
func (r *CompareResult) WriteTable(w io.Writer) error {
	if r == nil {
		return errors.New("bench: nil comparison")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "function\td\tbudget\t")
	for _, s := range r.Strategies {
		fmt.Fprintf(tw, "median regret %s\t[q25, q75]\t", s)
	}
	if len(r.Strategies) >= 2 {
		fmt.Fprintf(tw, "%s wins\t%s better\t", r.Strategies[0], r.Strategies[0])
	}
	fmt.Fprintln(tw)
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t", row.Function, row.Dim, row.Budget)
		for _, s := range row.Strategies {
			fmt.Fprintf(tw, "%.4g\t[%.3g, %.3g]\t", s.Median, s.Q25, s.Q75)
		}
		if len(r.Strategies) >= 2 {
			verdict := "no"
			if row.FirstBeatsSecond {
				verdict = "yes"
			}
			fmt.Fprintf(tw, "%d/%d\t%s\t", row.Wins, r.Seeds, verdict)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "simple regret f(best observed) − f*, medians over %d seeds, budget %d·d evaluations\n", r.Seeds, r.BudgetPerDim)
	return err
}
