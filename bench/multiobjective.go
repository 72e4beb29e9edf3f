package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"xbo/opt"
	"xbo/pareto"
)

// MOMethods are the methods `xbo bench multiobjective` compares: xbo's
// optimizer for several objectives (opt.NewMultiObjective with the
// optimizer's defaults: EHVI up to three objectives), uniform random search
// and Optuna's NSGA-II and (multi-objective, multivariate) TPE, run
// through scripts/peers.py.
var MOMethods = []string{"xbo", "random", "nsga2", "tpe"}

// moMethodsKnown adds to MOMethods xbo's two proposers for several
// objectives on their own, to compare them.
var moMethodsKnown = append(slices.Clone(MOMethods), "xbo-parego", "xbo-ehvi")

// MOOptions configure MultiObjective.
type MOOptions struct {
	Problems []string // default every MOProblems name
	Methods  []string // default MOMethods
	Workers  []int    // trials kept pending, default {1, 8}
	Seeds    int      // seeds FirstSeed..FirstSeed+Seeds−1, default 10
	// FirstSeed is the first seed (default 1); a held-out set of seeds
	// starts elsewhere.
	FirstSeed int
	// Budget is the evaluations per run; 0: 100, 200 for DTLZ2.
	Budget   int
	Python   string // interpreter with Optuna (default DefaultPython)
	Jobs     int    // runs at once (default GOMAXPROCS)
	Progress func(done, total int)
}

// MORun is one run: the hypervolume of its feasible trials after each
// evaluation, in tell order.
type MORun struct {
	Problem    string    `json:"problem"`
	Method     string    `json:"method"`
	Workers    int       `json:"workers"`
	Seed       int       `json:"seed"`
	HV         []float64 `json:"hypervolume"`
	Feasible   int       `json:"feasible"`
	AskSeconds []float64 `json:"ask_seconds,omitempty"`
}

// Final is the hypervolume at the end of the run.
func (r *MORun) Final() float64 {
	if len(r.HV) == 0 {
		return 0
	}
	return r.HV[len(r.HV)-1]
}

// MORow summarizes one method on one problem at one worker count.
type MORow struct {
	Problem string  `json:"problem"`
	Workers int     `json:"workers"`
	Budget  int     `json:"budget"`
	Method  string  `json:"method"`
	TrueHV  float64 `json:"true_hypervolume"`
	// Median and quartiles of the final hypervolume over seeds.
	Median float64 `json:"median"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
	// Wins counts the seeds where this method's final hypervolume exceeds
	// every other method's on the same seed.
	Wins int `json:"wins"`
	// AskMedian is the median time of an ask, in seconds (Optuna's only).
	AskMedian float64 `json:"ask_median_seconds,omitempty"`
}

// MOResult holds every run and the rows.
type MOResult struct {
	Seeds int     `json:"seeds"`
	Rows  []MORow `json:"rows"`
	Runs  []MORun `json:"runs"`
}

// MultiObjective runs every method on every problem with several
// objectives and reports the hypervolume each reaches within its budget
// (reference points in MOProblem.Reference; infeasible trials add nothing).
func MultiObjective(ctx context.Context, o MOOptions) (*MOResult, error) {
	res, err := multiObjective(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("bench: multiobjective: %w", err)
	}
	return res, nil
}

func multiObjective(ctx context.Context, o MOOptions) (*MOResult, error) {
	if len(o.Problems) == 0 {
		for _, p := range MOProblems() {
			o.Problems = append(o.Problems, p.Name)
		}
	}
	if len(o.Methods) == 0 {
		o.Methods = MOMethods
	}
	if len(o.Workers) == 0 {
		o.Workers = []int{1, 8}
	}
	if o.Seeds == 0 {
		o.Seeds = 10
	}
	if o.FirstSeed == 0 {
		o.FirstSeed = 1
	}
	if o.Python == "" {
		o.Python = DefaultPython()
	}
	if o.Jobs == 0 {
		o.Jobs = runtime.GOMAXPROCS(0)
	}
	if o.Seeds < 1 || o.Jobs < 1 || o.Budget < 0 || o.Budget > 10_000 {
		return nil, fmt.Errorf("seeds %d and jobs %d must be positive, budget %d in 0..10000", o.Seeds, o.Jobs, o.Budget)
	}
	if o.FirstSeed < 1 {
		return nil, fmt.Errorf("first seed %d must be positive", o.FirstSeed)
	}
	if err := checkMethods(o.Methods, moMethodsKnown); err != nil {
		return nil, err
	}
	if err := checkWorkers(o.Workers); err != nil {
		return nil, err
	}
	problems := make([]*MOProblem, len(o.Problems))
	budgets := make([]int, len(o.Problems))
	for i, name := range o.Problems {
		p, err := MOProblemByName(name)
		if err != nil {
			return nil, err
		}
		problems[i] = p
		budgets[i] = o.Budget
		if budgets[i] == 0 {
			budgets[i] = 100
			if len(p.Directions) > 2 {
				budgets[i] = 200
			}
		}
	}
	jobs := sweepJobs(len(problems), len(o.Workers), len(o.Methods), o.Seeds)
	runs := make([]MORun, len(jobs))
	err := parallelDo(ctx, len(jobs), o.Jobs, o.Progress, func(k int) error {
		j := jobs[k]
		p, method, workers := problems[j.problem], o.Methods[j.method], o.Workers[j.workers]
		seed := j.seed + o.FirstSeed - 1
		run := MORun{Problem: p.Name, Method: method, Workers: workers, Seed: seed}
		var err error
		switch method {
		case "random":
			err = randomMORun(p, budgets[j.problem], uint64(seed), &run)
		case "xbo", "xbo-parego", "xbo-ehvi":
			err = xboMORun(p, method, budgets[j.problem], workers, uint64(seed), &run)
		default:
			err = optunaMORun(ctx, p, method, budgets[j.problem], workers, uint64(seed), o.Python, &run)
		}
		if err != nil {
			return fmt.Errorf("%s, %s, %d workers, seed %d: %w", p.Name, method, workers, seed, err)
		}
		runs[k] = run
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &MOResult{Seeds: o.Seeds, Runs: runs}
	for pi, p := range problems {
		truth, err := p.TrueHypervolume()
		if err != nil {
			return nil, err
		}
		for _, w := range o.Workers {
			finals := map[string][]float64{}
			asks := map[string][]float64{}
			for _, r := range runs {
				if r.Problem == p.Name && r.Workers == w {
					finals[r.Method] = append(finals[r.Method], r.Final())
					asks[r.Method] = append(asks[r.Method], r.AskSeconds...)
				}
			}
			for _, m := range o.Methods {
				row := MORow{Problem: p.Name, Workers: w, Budget: budgets[pi], Method: m, TrueHV: truth}
				// Runs of a method are in seed order (jobs are).
				row.Q1, row.Median, row.Q3 = quartiles(finals[m])
				for s := range finals[m] {
					win := true
					for _, other := range o.Methods {
						if other != m && finals[other][s] >= finals[m][s] {
							win = false
						}
					}
					if win {
						row.Wins++
					}
				}
				if a := asks[m]; len(a) > 0 {
					_, row.AskMedian, _ = quartiles(a)
				}
				out.Rows = append(out.Rows, row)
			}
		}
	}
	return out, nil
}

// moTracker turns evaluations into the hypervolume trajectory.
type moTracker struct {
	p        *MOProblem
	feasible [][]float64
	run      *MORun
}

// told records one evaluation, in tell order.
func (t *moTracker) told(values, constraints []float64) error {
	if pareto.Violation(constraints) == 0 {
		t.feasible = append(t.feasible, values)
		t.run.Feasible++
	}
	hv, err := pareto.Hypervolume(t.feasible, t.p.Reference, t.p.Directions)
	if err != nil {
		return err
	}
	t.run.HV = append(t.run.HV, hv)
	return nil
}

// xboMORun runs xbo's optimizer for several objectives with its defaults
// (xbo: opt.NewMultiObjective's choice; xbo-parego, xbo-ehvi: that one),
// keeping workers trials pending and telling the oldest first.
func xboMORun(p *MOProblem, method string, budget, workers int, seed uint64, run *MORun) error {
	cfg := opt.Config{Space: p.Space, Seed: seed, Workers: 1}
	var o interface {
		Ask() (opt.Trial, error)
		Tell(id int64, values, constraints []float64) error
	}
	var err error
	switch method {
	case "xbo-parego":
		o, err = opt.NewParEGO(cfg, p.Directions)
	case "xbo-ehvi":
		o, err = opt.NewEHVI(cfg, p.Directions)
	default:
		o, err = opt.NewMultiObjective(cfg, p.Directions)
	}
	if err != nil {
		return err
	}
	tr := &moTracker{p: p, run: run}
	var pending []opt.Trial
	for asked, told := 0, 0; told < budget; {
		for len(pending) < workers && asked < budget {
			start := time.Now()
			t, err := o.Ask()
			if err != nil {
				return err
			}
			run.AskSeconds = append(run.AskSeconds, time.Since(start).Seconds())
			pending = append(pending, t)
			asked++
		}
		t := pending[0]
		pending = pending[1:]
		v, c := p.Eval(t.Params)
		if err := o.Tell(t.ID, v, c); err != nil {
			return err
		}
		if err := tr.told(v, c); err != nil {
			return err
		}
		told++
	}
	return nil
}

func randomMORun(p *MOProblem, budget int, seed uint64, run *MORun) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	tr := &moTracker{p: p, run: run}
	for range budget {
		x := p.Space.Decode(p.Space.Sample(rng, 1)[0])
		if err := tr.told(p.Eval(x)); err != nil {
			return err
		}
	}
	return nil
}

// moPeerSpec is the first line peers.py reads for several objectives.
type moPeerSpec struct {
	peerSpec
	Objectives  int `json:"objectives"`
	Constraints int `json:"constraints"`
}

func optunaMORun(ctx context.Context, p *MOProblem, method string, budget, workers int, seed uint64, python string, run *MORun) error {
	spec := moPeerSpec{peerSpec: peerSpec{Sampler: method, Seed: seed, Budget: budget, Workers: workers},
		Objectives: len(p.Directions), Constraints: p.Constraints}
	var err error
	if spec.Params, err = peerParams(p.Space); err != nil {
		return err
	}
	// Values are told in ask order, oldest first: the told sequence is the
	// asked one delayed by the workers' window.
	type told struct{ values, constraints []float64 }
	var queue []told
	run.AskSeconds, err = answerPeer(ctx, python, spec, p.Space, func(x []float64) (any, error) {
		v, c := p.Eval(x)
		queue = append(queue, told{v, c})
		reply := map[string][]float64{"values": v}
		if c != nil {
			reply["constraints"] = c
		}
		return reply, nil
	})
	if err != nil {
		return err
	}
	if len(queue) != budget {
		return fmt.Errorf("the optuna script asked %d configurations for a budget of %d", len(queue), budget)
	}
	tr := &moTracker{p: p, run: run}
	for _, t := range queue {
		if err := tr.told(t.values, t.constraints); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable prints, per problem and worker count, each method's median
// [IQR] final hypervolume, its share of the true front's and the gap to
// it (which separates methods where the reference point makes every
// share close to 100%), its wins over seeds and its median ask time.
func (r *MOResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "problem\tworkers\tbudget\tmethod\thypervolume median [IQR]\tof the true front's\tgap to it\twins of %d\task (ms)\t\n", r.Seeds)
	for _, row := range r.Rows {
		ask := "–"
		if row.AskMedian > 0 {
			ask = fmt.Sprintf("%.1f", 1000*row.AskMedian)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.4g [%.4g, %.4g]\t%.1f%%\t%.3g\t%d\t%s\t\n", row.Problem, row.Workers, row.Budget, row.Method,
			row.Median, row.Q1, row.Q3, 100*row.Median/row.TrueHV, row.TrueHV-row.Median, row.Wins, ask)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var refs []string
	for _, p := range MOProblems() {
		refs = append(refs, fmt.Sprintf("%s %v", p.Name, p.Reference))
	}
	_, err := fmt.Fprintf(w, "\nReference points: %s. Infeasible trials add no hypervolume.\n", strings.Join(refs, ", "))
	return err
}
