package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"xbo/opt"
)

// The pruning comparison asks what a pruner costs a study that did not name
// its resource: the same number of trials of CurveQuadratic run without a
// pruner, under ASHA with its defaults as xbo runs it (the trials it stops
// teach the configuration × budget model over the steps the curves imply),
// and under ASHA with the stopped trials treated as failures
// (opt.Config.PrunedAsFailed, how xbo treated them before). A pruner earns
// its place when it ends near the unpruned study's best while running a
// fraction of its steps.

// Pruning methods.
const (
	PruningNone     = "no pruner"
	PruningASHA     = "asha"
	PruningASHAFail = "asha, pruned as failed"
)

// PruningMethods lists the methods in table order.
var PruningMethods = []string{PruningNone, PruningASHA, PruningASHAFail}

// PruningOptions configure Pruning.
type PruningOptions struct {
	Seeds    int // seeds 1..Seeds [10]
	Trials   int // trials per run [60]
	Jobs     int // runs at once [GOMAXPROCS]
	Progress func(done, total int)
}

// PruningRun is one (method, seed) run.
type PruningRun struct {
	Method string  `json:"method"`
	Seed   uint64  `json:"seed"`
	Regret float64 `json:"regret"` // of the best complete trial
	Spent  int64   `json:"spent"`  // steps run, all trials together
	Pruned int     `json:"pruned"`
}

// PruningSummary is one method over the seeds.
type PruningSummary struct {
	Method string `json:"method"`
	// Median and quartiles of the final regret.
	Median float64 `json:"median"`
	Q25    float64 `json:"q25"`
	Q75    float64 `json:"q75"`
	// Gap is the median over seeds of this run's regret minus the unpruned
	// run's of the same seed.
	Gap float64 `json:"gap"`
	// Spent is the median fraction of the unpruned run's steps (trials·T)
	// the run spent.
	Spent float64 `json:"spent"`
	// Pruned is the mean number of pruned trials.
	Pruned float64 `json:"pruned"`
}

// PruningResult holds every run and the summaries.
type PruningResult struct {
	Trials int              `json:"trials"`
	Steps  int64            `json:"steps"`
	Runs   []PruningRun     `json:"runs"`
	Rows   []PruningSummary `json:"rows"`
}

// Pruning runs the comparison.
func Pruning(ctx context.Context, o PruningOptions) (*PruningResult, error) {
	res, err := pruning(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("bench: pruning: %w", err)
	}
	return res, nil
}

func pruning(ctx context.Context, o PruningOptions) (*PruningResult, error) {
	if o.Seeds == 0 {
		o.Seeds = 10
	}
	if o.Trials == 0 {
		o.Trials = 60
	}
	if o.Jobs == 0 {
		o.Jobs = runtime.GOMAXPROCS(0)
	}
	if o.Seeds < 1 || o.Seeds > 1000 || o.Trials < 2 || o.Trials > 10_000 || o.Jobs < 1 {
		return nil, fmt.Errorf("seeds %d must lie in 1..1000, trials %d in 2..10000 and jobs %d be positive", o.Seeds, o.Trials, o.Jobs)
	}
	p, err := loadCurveProblem(CurveQuadratic, 0, o.Trials)
	if err != nil {
		return nil, err
	}
	p.MaxTrials = o.Trials
	n := len(PruningMethods)
	runs := make([]PruningRun, n*o.Seeds)
	err = parallelDo(ctx, len(runs), o.Jobs, o.Progress, func(k int) error {
		method, seed := PruningMethods[k%n], uint64(k/n+1)
		mf, mo := MFXBOASHA, MFOptions{}
		switch method {
		case PruningNone:
			mf = MFXBO
		case PruningASHAFail:
			mo.Config = &opt.Config{PrunedAsFailed: true}
		}
		run, err := mfRun(ctx, p, mf, seed, mo)
		if err != nil {
			return fmt.Errorf("%s, seed %d: %w", method, seed, err)
		}
		runs[k] = PruningRun{Method: method, Seed: seed, Regret: run.Regret, Spent: run.Spent, Pruned: run.Pruned}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &PruningResult{Trials: o.Trials, Steps: p.Steps, Runs: runs}
	full := float64(int64(o.Trials) * p.Steps)
	for mi, m := range PruningMethods {
		var regret, gap, spent []float64
		pruned := 0
		for s := range o.Seeds {
			r := runs[s*n+mi]
			regret = append(regret, r.Regret)
			gap = append(gap, r.Regret-runs[s*n].Regret)
			spent = append(spent, float64(r.Spent)/full)
			pruned += r.Pruned
		}
		sm := PruningSummary{Method: m, Pruned: float64(pruned) / float64(o.Seeds)}
		sm.Q25, sm.Median, sm.Q75 = quartiles(regret)
		_, sm.Gap, _ = quartiles(gap)
		_, sm.Spent, _ = quartiles(spent)
		out.Rows = append(out.Rows, sm)
	}
	return out, nil
}

// WriteTable prints one line per method.
func (r *PruningResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s, %d trials of T = %d steps, %d seeds\n", CurveQuadratic, r.Trials, r.Steps, len(r.Runs)/len(PruningMethods))
	fmt.Fprintln(tw, "method\tregret median [IQR]\tgap to no pruner (median)\tsteps spent (median share)\tpruned (mean)")
	for _, s := range r.Rows {
		fmt.Fprintf(tw, "%s\t%.3g [%.3g, %.3g]\t%+.3g\t%.2f\t%.1f\n", s.Method, s.Median, s.Q25, s.Q75, s.Gap, s.Spent, s.Pruned)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("bench: pruning table: %w", err)
	}
	return nil
}
