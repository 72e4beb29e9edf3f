package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"xbo/history"
	"xbo/opt"
	"xbo/prune"
)

// The multi-fidelity comparison runs xbo with and
// without pruners, xbo's multi-fidelity proposals, and Optuna's TPE with its
// median and Hyperband pruners on learning-curve problems whose final values
// are known functions. Every method is sequential (one trial at a time), and
// every run spends the same resource: the steps (epochs) of all its trials
// added up. Objectives are evaluated in this process; the Optuna runs are
// scripts/peers.py children, as in the peers comparison. The problems are
// in curve_problems.go.

// Multi-fidelity methods: xbo without pruning, with each pruner (pruned
// trials steer proposals as failures), with multi-fidelity proposals
// (opt.Config.Resource) under the median pruner, successive halving,
// Hyperband or the model pruner (the same configuration × budget GP asked
// whether a trial can still beat the best complete one), and Optuna's TPE
// with its median and Hyperband pruners.
const (
	MFXBO              = "xbo"
	MFXBOMedian        = "xbo+median"
	MFXBOPercentile    = "xbo+percentile"
	MFXBOASHA          = "xbo+asha"
	MFXBOHyperband     = "xbo+hyperband"
	MFXBOMultiMedian   = "xbo-mf+median"
	MFXBOMultiASHA     = "xbo-mf+asha"
	MFXBOMultiHyperbnd = "xbo-mf+hyperband"
	MFXBOMultiModel    = "xbo-mf+model"
	MFTPEMedian        = "tpe+median"
	MFTPEHyperband     = "tpe+hyperband"
)

// MFMethods lists the methods in table order.
var MFMethods = []string{MFXBO, MFXBOMedian, MFXBOPercentile, MFXBOASHA, MFXBOHyperband, MFXBOMultiMedian, MFXBOMultiASHA, MFXBOMultiHyperbnd, MFXBOMultiModel, MFTPEMedian, MFTPEHyperband}

// MFPoint is the regret of the best complete trial after Spent steps.
type MFPoint struct {
	Spent  int64   `json:"spent"`
	Regret float64 `json:"regret"`
}

// MFRun is one (problem, method, seed) run.
type MFRun struct {
	Problem string  `json:"problem"`
	Method  string  `json:"method"`
	Seed    uint64  `json:"seed"`
	Trials  int     `json:"trials"`
	Pruned  int     `json:"pruned"`
	Spent   int64   `json:"spent"`
	Regret  float64 `json:"regret"` // at the end of the resource
	// Trace has a point at every completion that changed the regret.
	Trace []MFPoint `json:"trace"`
	// AskSeconds is the time all asks took.
	AskSeconds float64 `json:"ask_seconds"`
}

// record adds the regret after the latest completion to the trace when it
// changed. It can rise: the best trial is the one with the best noisy
// final value, and a new one may be truly worse than the one before.
// Recording only falls would miss those rises in the regret so far and in
// the resource to target read from it.
func (r *MFRun) record(regret float64) {
	if n := len(r.Trace); n == 0 || r.Trace[n-1].Regret != regret {
		r.Trace = append(r.Trace, MFPoint{Spent: r.Spent, Regret: regret})
	}
}

// SpentTo is the resource after which the regret was at most target
// (+Inf if it never was).
func (r *MFRun) SpentTo(target float64) float64 {
	for _, p := range r.Trace {
		if p.Regret <= target {
			return float64(p.Spent)
		}
	}
	return math.Inf(1)
}

// RegretAt is the regret once spent steps were used (+Inf before the first
// complete trial). It need not fall monotonically: the best trial is
// chosen by its noisy final value.
func (r *MFRun) RegretAt(spent int64) float64 {
	regret := math.Inf(1)
	for _, p := range r.Trace {
		if p.Spent > spent {
			break
		}
		regret = p.Regret
	}
	return regret
}

// medianSpentTo is the least resource, in steps, at which the median over
// runs of RegretAt is at most target (+Inf if it never is): where the
// median regret curve crosses the target. Unlike the median of the runs'
// SpentTo it is finite for the method whose median final regret is the
// target, whatever the number of seeds.
func medianSpentTo(runs []MFRun, target float64) float64 {
	var spends []int64
	for _, r := range runs {
		for _, p := range r.Trace {
			spends = append(spends, p.Spent)
		}
	}
	slices.Sort(spends)
	at := make([]float64, len(runs))
	for _, s := range slices.Compact(spends) {
		for i := range runs {
			at[i] = runs[i].RegretAt(s)
		}
		if _, median, _ := quartiles(at); median <= target {
			return float64(s)
		}
	}
	return math.Inf(1)
}

// MFOptions configure MultiFidelity.
type MFOptions struct {
	Problems []string // default CurveProblems
	Methods  []string // default MFMethods
	Seeds    int      // seeds 1..Seeds [5]
	// Steps is T [27]; FullTrials a run's resource in full trials [12·d + 6].
	Steps      int64
	FullTrials int
	Python     string // interpreter with Optuna [DefaultPython]
	// Config is xbo's base configuration (nil: opt's defaults).
	Config *opt.Config
	// Extend is how many times the resource xbo without pruning also runs
	// for, to measure the speed-up at each method's own final regret (0: 3;
	// 1: no extended runs).
	Extend int
	// Pruners replaces, per pruner type, the settings the xbo methods of
	// that type run with (defaultMFPruner's); its keys are the configs'
	// types, and Hyperband's max_resource must be T (Steps).
	Pruners map[string]prune.Config
	// Perfect makes every step of every curve show the trial's final value,
	// for every method, Optuna's included: the pruners and models then
	// decide with perfect information. xbo without pruning, and so the
	// target, is unchanged; the savings are a ceiling for what any model of
	// the curves could give the same decision rule.
	Perfect  bool
	Jobs     int // runs at once [GOMAXPROCS]
	Progress func(done, total int)
}

// MFSummary is one method on one problem.
type MFSummary struct {
	Method string `json:"method"`
	// Final regret at the run's whole resource: median and quartiles.
	Median float64 `json:"median"`
	Q25    float64 `json:"q25"`
	Q75    float64 `json:"q75"`
	// ToTarget is the resource, in full trials (steps / T), at which the
	// median regret over seeds reached the target (medianSpentTo; +Inf if
	// it never did); Reached counts the seeds whose regret reached it.
	ToTarget float64 `json:"to_target"`
	Reached  int     `json:"reached"`
	// Saving is xbo's (no pruning) ToTarget over this method's.
	Saving float64 `json:"saving"`
	// The saving at the method's own median final regret r: OwnTo is the
	// resource, in full trials, at which the method's median regret curve
	// reached r, XBOToOwn the resource at which xbo without pruning, run
	// for MFOptions.Extend times the resource, reached it (+Inf: not within
	// that), SpeedUp the second over the first. When xbo did not reach r,
	// SpeedUp is its whole extended resource over OwnTo, a lower bound
	// (SpeedUpAtLeast). NaN without extended runs.
	OwnTo          float64 `json:"own_to"`
	XBOToOwn       float64 `json:"xbo_to_own"`
	SpeedUp        float64 `json:"speed_up"`
	SpeedUpAtLeast bool    `json:"speed_up_at_least"`
	// Trials and Pruned are the mean numbers of trials and pruned trials.
	Trials float64 `json:"trials"`
	Pruned float64 `json:"pruned"`
	// AskSeconds is the mean time of all asks of a run.
	AskSeconds float64 `json:"ask_seconds"`
	// BeatsTPEHyperband counts the seeds on which this method's final
	// regret is strictly below Optuna TPE + Hyperband's (−1 when that
	// method was not run).
	BeatsTPEHyperband int `json:"beats_tpe_hyperband"`
}

// finiteOrNil is v, or nil for a value JSON cannot hold (NaN, ±Inf).
func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// MarshalJSON writes the summary with null for a resource never reached
// and an undefined saving (JSON has no infinity or NaN).
func (s MFSummary) MarshalJSON() ([]byte, error) {
	type plain MFSummary
	return json.Marshal(struct {
		plain
		Median   *float64 `json:"median"`
		Q25      *float64 `json:"q25"`
		Q75      *float64 `json:"q75"`
		ToTarget *float64 `json:"to_target"`
		Saving   *float64 `json:"saving"`
		OwnTo    *float64 `json:"own_to"`
		XBOToOwn *float64 `json:"xbo_to_own"`
		SpeedUp  *float64 `json:"speed_up"`
	}{plain(s), finiteOrNil(s.Median), finiteOrNil(s.Q25), finiteOrNil(s.Q75), finiteOrNil(s.ToTarget), finiteOrNil(s.Saving),
		finiteOrNil(s.OwnTo), finiteOrNil(s.XBOToOwn), finiteOrNil(s.SpeedUp)})
}

// MFRow is one problem.
type MFRow struct {
	Problem    string  `json:"problem"`
	Steps      int64   `json:"steps"`
	FullTrials int64   `json:"full_trials"`
	Target     float64 `json:"target"` // xbo's (no pruning) median final regret
	// Correlation[k] is the rank correlation of the values at step
	// CorrelationSteps[k] with the final values (FidelityCorrelation, 1000
	// random configurations).
	CorrelationSteps []int64     `json:"correlation_steps"`
	Correlation      []float64   `json:"correlation"`
	Methods          []MFSummary `json:"methods"`
}

// MarshalJSON writes the row with a null target when xbo without pruning
// was not among the methods (the target is its median final regret).
func (r MFRow) MarshalJSON() ([]byte, error) {
	type plain MFRow
	return json.Marshal(struct {
		plain
		Target *float64 `json:"target"`
	}{plain(r), finiteOrNil(r.Target)})
}

// MFResult holds every run and the table.
type MFResult struct {
	Seeds int     `json:"seeds"`
	Rows  []MFRow `json:"rows"`
	Runs  []MFRun `json:"runs"`
	// Extend and Extended: xbo without pruning run for Extend times the
	// resource, one run per problem and seed (MFOptions.Extend).
	Extend   int     `json:"extend"`
	Extended []MFRun `json:"extended"`
	// Perfect: every step showed the final value (MFOptions.Perfect).
	Perfect bool `json:"perfect"`
}

// MultiFidelity runs the comparison.
func MultiFidelity(ctx context.Context, o MFOptions) (*MFResult, error) {
	res, err := multiFidelity(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("bench: multifidelity: %w", err)
	}
	return res, nil
}

func multiFidelity(ctx context.Context, o MFOptions) (*MFResult, error) {
	if len(o.Problems) == 0 {
		o.Problems = CurveProblems
	}
	if len(o.Methods) == 0 {
		o.Methods = MFMethods
	}
	if o.Seeds == 0 {
		o.Seeds = 5
	}
	if o.Python == "" {
		o.Python = DefaultPython()
	}
	if o.Jobs == 0 {
		o.Jobs = runtime.GOMAXPROCS(0)
	}
	if o.Extend == 0 {
		o.Extend = 3
	}
	if o.Seeds < 1 || o.Seeds > 1000 || o.Jobs < 1 || o.Extend < 1 || o.Extend > 100 {
		return nil, fmt.Errorf("seeds %d must lie in 1..1000, extend %d in 1..100 and jobs %d be positive", o.Seeds, o.Extend, o.Jobs)
	}
	if err := checkMethods(o.Methods, MFMethods); err != nil {
		return nil, err
	}
	for typ, c := range o.Pruners {
		if typ == prune.None || c.Type != typ {
			return nil, fmt.Errorf("pruner settings under %q are of type %q: the key must be their type, other than %q", typ, c.Type, prune.None)
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("pruner settings for %q: %w", typ, err)
		}
	}
	problems := make([]*CurveProblem, len(o.Problems))
	for i, name := range o.Problems {
		p, err := loadCurveProblem(name, o.Steps, o.FullTrials)
		if err != nil {
			return nil, fmt.Errorf("curve problem %s: %w", name, err)
		}
		p.Perfect = o.Perfect
		if hb, ok := o.Pruners[prune.Hyperband]; ok && hb.MaxResource != p.Steps {
			return nil, fmt.Errorf("the hyperband pruner's max_resource %d must be T, the steps of a full trial (%d)", hb.MaxResource, p.Steps)
		}
		problems[i] = p
	}
	// Extended jobs run xbo without pruning for Extend times the resource.
	type job struct {
		pi, mi, seed int
		extended     bool
	}
	xi := slices.Index(o.Methods, MFXBO)
	var jobs []job
	for pi := range problems {
		for mi := range o.Methods {
			for seed := 1; seed <= o.Seeds; seed++ {
				jobs = append(jobs, job{pi, mi, seed, false})
			}
		}
		for seed := 1; xi >= 0 && o.Extend > 1 && seed <= o.Seeds; seed++ {
			jobs = append(jobs, job{pi, xi, seed, true})
		}
	}
	runs := make([]MFRun, len(jobs))
	err := parallelDo(ctx, len(jobs), o.Jobs, o.Progress, func(k int) error {
		j := jobs[k]
		p, method := problems[j.pi], o.Methods[j.mi]
		if j.extended {
			long := *p
			long.Budget *= int64(o.Extend)
			p = &long
		}
		run, err := mfRun(ctx, p, method, uint64(j.seed), o)
		if err != nil {
			return fmt.Errorf("%s, %s, seed %d: %w", p.Name, method, j.seed, err)
		}
		runs[k] = run
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &MFResult{Seeds: o.Seeds, Extend: o.Extend, Perfect: o.Perfect}
	extended := make([][]MFRun, len(problems))
	for k, j := range jobs {
		if j.extended {
			out.Extended = append(out.Extended, runs[k])
			extended[j.pi] = append(extended[j.pi], runs[k])
		} else {
			out.Runs = append(out.Runs, runs[k])
		}
	}
	for pi, p := range problems {
		row := MFRow{Problem: p.Name, Steps: p.Steps, FullTrials: p.Budget / p.Steps, Target: math.NaN(), CorrelationSteps: fidelitySteps(p.Steps)}
		if row.Correlation, err = p.FidelityCorrelation(row.CorrelationSteps, 1000, 1); err != nil {
			return nil, err
		}
		byMethod := make([][]MFRun, len(o.Methods))
		for k, j := range jobs {
			if j.pi == pi && !j.extended {
				byMethod[j.mi] = append(byMethod[j.mi], runs[k])
			}
		}
		if xi >= 0 {
			finals := make([]float64, len(byMethod[xi]))
			for s, r := range byMethod[xi] {
				finals[s] = r.Regret
			}
			_, row.Target, _ = quartiles(finals)
		}
		for mi, m := range o.Methods {
			sm := summarizeMF(m, byMethod[mi], row.Target, p.Steps)
			if extended[pi] != nil {
				sm.OwnTo, sm.XBOToOwn, sm.SpeedUp, sm.SpeedUpAtLeast = speedUp(byMethod[mi], extended[pi], sm.Median, p.Steps, p.Budget*int64(o.Extend))
			}
			row.Methods = append(row.Methods, sm)
		}
		if xi >= 0 {
			for mi := range row.Methods {
				row.Methods[mi].Saving = row.Methods[xi].ToTarget / row.Methods[mi].ToTarget
			}
		}
		ti := slices.Index(o.Methods, MFTPEHyperband)
		for mi := range row.Methods {
			row.Methods[mi].BeatsTPEHyperband = -1
			if ti < 0 {
				continue
			}
			row.Methods[mi].BeatsTPEHyperband = 0
			for s, r := range byMethod[mi] {
				if r.Regret < byMethod[ti][s].Regret {
					row.Methods[mi].BeatsTPEHyperband++
				}
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// speedUp is the saving at the regret level (a method's median final
// regret): the resource, in full trials of steps, at which the method's
// median regret curve reached it (own), the resource at which the extended
// runs' did (xbo; +Inf: not within their resource budget), and the second
// over the first; when the extended runs did not reach the level, their
// whole resource over own, a lower bound (atLeast).
func speedUp(runs, extended []MFRun, level float64, steps, budget int64) (own, xbo, speed float64, atLeast bool) {
	if math.IsNaN(level) || math.IsInf(level, 0) {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	own = medianSpentTo(runs, level) / float64(steps)
	xbo = medianSpentTo(extended, level) / float64(steps)
	if math.IsInf(xbo, 1) {
		return own, xbo, float64(budget) / float64(steps) / own, true
	}
	return own, xbo, xbo / own, false
}

func summarizeMF(method string, runs []MFRun, target float64, steps int64) MFSummary {
	s := MFSummary{Method: method, Saving: math.NaN(), ToTarget: math.NaN(), OwnTo: math.NaN(), XBOToOwn: math.NaN(), SpeedUp: math.NaN()}
	finals := make([]float64, len(runs))
	for i, r := range runs {
		finals[i] = r.Regret
		if !math.IsInf(r.SpentTo(target), 1) {
			s.Reached++
		}
		s.Trials += float64(r.Trials) / float64(len(runs))
		s.Pruned += float64(r.Pruned) / float64(len(runs))
		s.AskSeconds += r.AskSeconds / float64(len(runs))
	}
	s.Q25, s.Median, s.Q75 = quartiles(finals)
	if !math.IsNaN(target) {
		s.ToTarget = medianSpentTo(runs, target) / float64(steps)
	}
	return s
}

// mfPruner is each xbo method's pruner: the settings replace gives for its
// type, else defaultMFPruner's.
func mfPruner(method string, steps int64, replace map[string]prune.Config) (prune.Config, error) {
	c, err := defaultMFPruner(method, steps)
	if err != nil {
		return c, err
	}
	if r, ok := replace[c.Type]; ok {
		return r, nil
	}
	return c, nil
}

// defaultMFPruner is the pruner a method runs with unless MFOptions.Pruners
// replaces it (package prune): Optuna's defaults but for the percentile,
// 25, and Hyperband's maximum resource, T.
func defaultMFPruner(method string, steps int64) (prune.Config, error) {
	switch method {
	case MFXBO:
		return prune.Parse(nil)
	case MFXBOMultiModel:
		return prune.Parse([]byte(`{"type":"model"}`))
	case MFXBOMedian, MFXBOMultiMedian:
		return prune.Parse([]byte(`{"type":"median"}`))
	case MFXBOPercentile:
		return prune.Parse([]byte(`{"type":"percentile","percentile":25}`))
	case MFXBOASHA, MFXBOMultiASHA:
		return prune.Parse([]byte(`{"type":"asha"}`))
	case MFXBOHyperband, MFXBOMultiHyperbnd:
		return prune.Parse(fmt.Appendf(nil, `{"type":"hyperband","max_resource":%d}`, steps))
	}
	return prune.Config{}, fmt.Errorf("%q is not an xbo method", method)
}

// optimizerChances answers the model pruner for the one running trial of
// a sequential run with the optimizer's ContinueChance.
type optimizerChances struct {
	prune.Curves
	o  *opt.Optimizer
	id int64
}

func (c optimizerChances) ContinueChance(_ context.Context, _ int64, minRank float64) (float64, error) {
	return c.o.ContinueChance(c.id, minRank)
}

// intermediates converts pruner points to the optimizer's curve.
func intermediates(points []prune.Point) []history.Intermediate {
	curve := make([]history.Intermediate, len(points))
	for i, pt := range points {
		curve[i] = history.Intermediate{Step: pt.Step, Value: pt.Value}
	}
	return curve
}

// mfStudy names the simulated study: Hyperband draws brackets from it, the
// same name in xbo's runs and Optuna's.
const mfStudy = "bench"

func mfRun(ctx context.Context, p *CurveProblem, method string, seed uint64, o MFOptions) (MFRun, error) {
	run := MFRun{Problem: p.Name, Method: method, Seed: seed}
	noise := rand.New(rand.NewPCG(seed^0x6375727665, seed^0x9e3779b97f4a7c15))
	// The tracker scores a told final value by its noise-free f.
	tr := newTracker(&Problem{Function: p.Function}, seed)
	complete := func(x []float64, final float64) {
		tr.told(x, final)
		run.record(tr.regret)
	}
	var err error
	if strings.HasPrefix(method, "tpe") {
		err = mfOptunaRun(ctx, p, method, seed, o.Python, noise, complete, &run)
	} else {
		err = mfXBORun(ctx, p, method, seed, o, noise, complete, &run)
	}
	if err != nil {
		return run, err
	}
	run.Regret = tr.regret
	return run, nil
}

func mfXBORun(ctx context.Context, p *CurveProblem, method string, seed uint64, mo MFOptions, noise *rand.Rand, complete func([]float64, float64), run *MFRun) error {
	pruner, err := mfPruner(method, p.Steps, mo.Pruners)
	if err != nil {
		return err
	}
	cfg := opt.Config{}
	if mo.Config != nil {
		cfg = *mo.Config
	}
	cfg.Space, cfg.Seed = p.Space, seed
	if strings.HasPrefix(method, "xbo-mf+") {
		cfg.Resource = &opt.Resource{Name: "epochs", Min: 1, Max: p.Steps}
	}
	o, err := opt.New(cfg)
	if err != nil {
		return err
	}
	var curves prune.Curves
	for number := int64(0); run.Spent < p.Budget && (p.MaxTrials == 0 || run.Trials < p.MaxTrials); number++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		t, err := o.Ask()
		if err != nil {
			return err
		}
		run.AskSeconds += time.Since(start).Seconds()
		run.Trials++
		values, err := p.Curve(t.Params, noise)
		if err != nil {
			return err
		}
		points := make([]prune.Point, 0, len(values))
		pruned := false
		for i, v := range values {
			if run.Spent >= p.Budget {
				return nil // the resource ran out during this trial
			}
			run.Spent++
			points = append(points, prune.Point{Step: int64(i + 1), Value: v})
			var src prune.Source = curves
			if pruner.Type == prune.Model {
				// As the service: the report is stored, then the optimizer
				// that knows it answers the pruner.
				if err := o.Report(t.ID, intermediates(points)); err != nil {
					return err
				}
				src = optimizerChances{curves, o, t.ID}
			}
			d, err := pruner.Decide(ctx, prune.Trial{Study: mfStudy, Number: number, Curve: points}, src)
			if err != nil {
				return err
			}
			if d.Prune {
				pruned = true
				break
			}
		}
		curves = append(curves, prune.Curve{Number: number, Complete: !pruned, Points: points})
		// The optimizer gets the curve as the service gives it: every
		// trial's intermediate values, complete ones' too.
		curve := intermediates(points)
		if pruned {
			run.Pruned++
			if err := o.TellPruned(t.ID, curve); err != nil {
				return err
			}
			continue
		}
		if err := o.Report(t.ID, curve); err != nil {
			return err
		}
		final := values[len(values)-1]
		if err := o.Tell(t.ID, final); err != nil {
			return err
		}
		complete(t.Params, final)
	}
	return nil
}

// mfSpec is the first line peers.py reads for a multi-fidelity run.
type mfSpec struct {
	peerSpec
	Pruner string `json:"pruner"`
	Steps  int64  `json:"steps"`
}

func mfOptunaRun(ctx context.Context, p *CurveProblem, method string, seed uint64, python string, noise *rand.Rand, complete func([]float64, float64), run *MFRun) error {
	spec := mfSpec{peerSpec: peerSpec{Sampler: "tpe", Seed: seed, Workers: 1}, Steps: p.Steps}
	switch method {
	case MFTPEMedian:
		spec.Pruner = "median"
	case MFTPEHyperband:
		spec.Pruner = "hyperband"
	default:
		return fmt.Errorf("%q is not an Optuna method", method)
	}
	var err error
	if spec.Params, err = peerParams(p.Space); err != nil {
		return err
	}
	child, err := startPeer(ctx, python, spec)
	if err != nil {
		return err
	}
	defer child.stop()
	for {
		var msg struct {
			Params     map[string]any `json:"params"`
			Done       bool           `json:"done"`
			AskSeconds []float64      `json:"ask_seconds"`
		}
		if err := child.receive(&msg); err != nil {
			return child.fail(err)
		}
		if msg.Done {
			for _, s := range msg.AskSeconds {
				run.AskSeconds += s
			}
			break
		}
		if run.Spent >= p.Budget {
			if err := child.send(map[string]bool{"stop": true}); err != nil {
				return child.fail(err)
			}
			continue
		}
		x, err := p.Space.FromMap(msg.Params)
		if err != nil {
			return child.fail(err)
		}
		values, err := p.Curve(x, noise)
		if err != nil {
			return child.fail(err)
		}
		last := false
		if left := p.Budget - run.Spent; int64(len(values)) > left {
			values, last = values[:left], true
		}
		run.Trials++
		if err := child.send(map[string]any{"curve": values, "last": last}); err != nil {
			return child.fail(err)
		}
		var result struct {
			Used   int64 `json:"used"`
			Pruned bool  `json:"pruned"`
		}
		if err := child.receive(&result); err != nil {
			return child.fail(err)
		}
		if result.Used < 1 || result.Used > int64(len(values)) {
			return child.fail(fmt.Errorf("the optuna script used %d steps of a curve of %d", result.Used, len(values)))
		}
		run.Spent += result.Used
		switch {
		case result.Pruned:
			run.Pruned++
		case !last:
			complete(x, values[len(values)-1])
		}
	}
	if err := child.wait(); err != nil {
		return err
	}
	if run.Spent != p.Budget {
		return fmt.Errorf("the optuna run spent %d steps of %d", run.Spent, p.Budget)
	}
	return nil
}

// WriteTable prints, per problem, every method's final regret at the run's
// resource, the resource it needed to reach xbo's (no pruning) median final
// regret, and the saving against xbo without pruning.
func (r *MFResult) WriteTable(w io.Writer) error {
	if len(r.Rows) == 0 {
		return errors.New("no rows")
	}
	if r.Perfect {
		fmt.Fprintln(w, "perfect curves: every step of every trial showed its final value (a ceiling for any model of the curves)")
		fmt.Fprintln(w)
	}
	for _, row := range r.Rows {
		fmt.Fprintf(w, "%s: T = %d steps, resource %d full trials (%d steps); target regret %.3g (xbo without pruning, median final)\n",
			row.Problem, row.Steps, row.FullTrials, row.FullTrials*row.Steps, row.Target)
		fmt.Fprint(w, "rank correlation with the final value at step")
		for k, s := range row.CorrelationSteps {
			fmt.Fprintf(w, " %d: %.2f", s, row.Correlation[k])
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "method\tfinal regret [IQR]\tresource to target\treached\tsaving\tat own regret\tbeats tpe+hb\ttrials\tpruned\task s\t")
		for _, m := range row.Methods {
			to := "never"
			if !math.IsInf(m.ToTarget, 1) && !math.IsNaN(m.ToTarget) {
				to = fmt.Sprintf("%.3g", m.ToTarget)
			}
			saving := "-"
			if !math.IsNaN(m.Saving) && m.Saving > 0 && !math.IsInf(m.Saving, 0) {
				saving = fmt.Sprintf("%.2f×", m.Saving)
			}
			own := "-"
			switch {
			case math.IsNaN(m.SpeedUp) || math.IsInf(m.SpeedUp, 0):
			case m.SpeedUpAtLeast:
				own = fmt.Sprintf("≥ %.2f×", m.SpeedUp)
			default:
				own = fmt.Sprintf("%.2f×", m.SpeedUp)
			}
			beats := "-"
			if m.BeatsTPEHyperband >= 0 {
				beats = fmt.Sprintf("%d/%d", m.BeatsTPEHyperband, r.Seeds)
			}
			fmt.Fprintf(tw, "%s\t%.3g [%.2g, %.2g]\t%s\t%d/%d\t%s\t%s\t%s\t%.0f\t%.0f\t%.1f\t\n",
				m.Method, m.Median, m.Q25, m.Q75, to, m.Reached, r.Seeds, saving, own, beats, m.Trials, m.Pruned, m.AskSeconds)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "median over %d seeds. final regret: f(x̂) − f* of the best complete trial (by its noisy final value) when the resource is spent;\n", r.Seeds)
	fmt.Fprintln(w, "resource to target: the resource, in full trials (steps / T), at which the median regret over seeds reached the target (never: it did not); reached: seeds whose regret did;")
	fmt.Fprintln(w, "saving: xbo's resource to target over the method's; beats tpe+hb: seeds whose final regret is strictly below Optuna TPE + Hyperband's;")
	if r.Extend > 1 && len(r.Extended) > 0 {
		fmt.Fprintf(w, "at own regret: the saving at the method's own median final regret: the resource xbo without pruning, run for %d× the resource, needed to reach it over the method's (≥: xbo did not reach it);\n", r.Extend)
	}
	fmt.Fprintln(w, "trials, pruned: mean per run; ask s: mean seconds of all asks of a run.")
	return nil
}
