package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"xbo/explain"
)

// TruthSuiteOptions select what a catalogue benchmark runs: problems, data
// kinds, sizes and seeds. Zero values mean the defaults.
type TruthSuiteOptions struct {
	// Suite is SuiteTune (default), SuiteHeldOut or SuiteAll.
	Suite string
	// Problems restricts the suite to these names (default: all of it).
	Problems []string
	// Catalogue, if set, replaces LoadTruthCatalogue (tests); DataDir is
	// CatalogueOptions'.
	Catalogue []*TruthProblem
	DataDir   string
	// Data kinds (default uniform, default and lcb) and Sizes in trials per
	// dimension (default 10 and 30; the smaller a prefix of the larger).
	Data  []string
	Sizes []int
	// Seeds per cell (default 5): 1..Seeds for the tune part and
	// 1001..1000+Seeds for the held-out part.
	Seeds int
	// Cache, if set, is a directory where every data set is kept and read
	// back (delete it after changing the optimizer: the cache checks the
	// problems, not the optimizer).
	Cache string
	// Workers run data sets in parallel (default GOMAXPROCS).
	Workers int
	// Points, if set, receives one JSON object per line for every raw
	// comparison with the truth.
	Points   io.Writer
	Progress func(done, total int)
}

// truthJob is one data set: a problem under a data kind and seed.
type truthJob struct {
	problem int
	kind    string
	seed    uint64
}

// truthRun is a prepared catalogue benchmark.
type truthRun struct {
	problems []*TruthProblem
	notes    []string
	jobs     []truthJob
	points   *pointWriter
}

// prepare fills the defaults, validates the options, selects the problems
// and plans the jobs, every problem on its own part's seeds.
func (o *TruthSuiteOptions) prepare(what string) (*truthRun, error) {
	if len(o.Data) == 0 {
		o.Data = []string{DataUniform, DataDefault, DataLCB}
	}
	if len(o.Sizes) == 0 {
		o.Sizes = []int{10, 30}
	}
	if o.Seeds == 0 {
		o.Seeds = 5
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Suite == "" {
		o.Suite = SuiteTune
	}
	if o.Seeds < 1 || o.Seeds > HeldOutSeedOffset || o.Workers < 1 {
		return nil, fmt.Errorf("bench: %s: seeds %d (1..%d) and workers %d (≥ 1) out of range", what, o.Seeds, HeldOutSeedOffset, o.Workers)
	}
	if err := checkKinds(what, o.Data); err != nil {
		return nil, err
	}
	if err := checkSizes(what, o.Sizes); err != nil {
		return nil, err
	}
	r := &truthRun{}
	all := o.Catalogue
	if all == nil {
		var skipped []SkippedTable
		var err error
		if all, skipped, err = LoadTruthCatalogue(CatalogueOptions{DataDir: o.DataDir}); err != nil {
			return nil, err
		}
		// Only the suite's own absent tables are named.
		for _, s := range skipped {
			if slices.Contains(o.Problems, s.Name) {
				return nil, fmt.Errorf("bench: %s: %s", s.Name, s.Reason)
			}
			if len(o.Problems) == 0 && (o.Suite == SuiteAll || s.HeldOut == (o.Suite == SuiteHeldOut)) {
				r.notes = append(r.notes, fmt.Sprintf("%s skipped: %s", s.Name, s.Reason))
			}
		}
	}
	names := map[string]bool{}
	for _, p := range all {
		if err := p.validate(); err != nil {
			return nil, err
		}
		if names[p.Name] {
			return nil, fmt.Errorf("bench: %s: truth problem %s given twice", what, p.Name)
		}
		names[p.Name] = true
	}
	var err error
	if r.problems, err = SelectTruthProblems(all, o.Suite, o.Problems); err != nil {
		return nil, err
	}
	r.jobs = planTruthJobs(r.problems, o.Data, o.Seeds)
	if o.Points != nil {
		r.points = &pointWriter{enc: json.NewEncoder(o.Points)}
	}
	return r, nil
}

// planTruthJobs lists every (problem, kind, seed), each problem on its own
// part's seeds (TruthProblem.Seeds).
func planTruthJobs(problems []*TruthProblem, kinds []string, seeds int) []truthJob {
	var jobs []truthJob
	for i, p := range problems {
		for _, k := range kinds {
			for _, s := range p.Seeds(seeds) {
				jobs = append(jobs, truthJob{problem: i, kind: k, seed: s})
			}
		}
	}
	return jobs
}

// runTruthJobs runs f on every job's data set (of the size the job needs,
// from the cache when it holds it) with an explanation engine of its own,
// in parallel; results are by job.
func runTruthJobs[T any](ctx context.Context, o *TruthSuiteOptions, run *truthRun, size func(p *TruthProblem, kind string) int,
	f func(j truthJob, p *TruthProblem, data *TruthData, e *explain.Engine) (T, error)) ([]T, error) {
	out := make([]T, len(run.jobs))
	err := parallelDo(ctx, len(run.jobs), o.Workers, o.Progress, func(k int) error {
		j := run.jobs[k]
		p := run.problems[j.problem]
		data, err := truthData(ctx, p, j.kind, size(p, j.kind), j.seed, o.Cache)
		if err != nil {
			return err
		}
		e, err := explain.New(explain.Config{Concurrency: 1, Workers: 1})
		if err != nil {
			return err
		}
		defer e.Close()
		out[k], err = f(j, p, data, e)
		return err
	})
	return out, err
}

// TruthRunInfo says what a catalogue benchmark ran: the suite, each part's
// seeds, and notes (absent tables, where truths come from).
type TruthRunInfo struct {
	Suite        string   `json:"suite"`
	TuneSeeds    []uint64 `json:"tune_seeds,omitempty"`
	HeldOutSeeds []uint64 `json:"heldout_seeds,omitempty"`
	Notes        []string `json:"notes,omitempty"`
}

func (o *TruthSuiteOptions) info(run *truthRun) TruthRunInfo {
	info := TruthRunInfo{Suite: o.Suite, Notes: slices.Clone(run.notes)}
	info.TuneSeeds, info.HeldOutSeeds = partSeeds(run.problems, o.Seeds)
	for _, p := range run.problems {
		if p.Note != "" {
			info.Notes = append(info.Notes, p.Name+": "+p.Note)
		}
	}
	return info
}

// header prints the heading of a part ("tune" or "held-out") and reports
// whether the run had that part.
func (r *TruthRunInfo) header(w io.Writer, part string) bool {
	seeds := r.TuneSeeds
	if part == "held-out" {
		seeds = r.HeldOutSeeds
	}
	if len(seeds) == 0 {
		return false
	}
	fmt.Fprintf(w, "%s part (seeds %d..%d)\n", strings.ToUpper(part[:1])+part[1:], seeds[0], seeds[len(seeds)-1])
	return true
}

// pointHeader says which data set, explanation and parameter a line of a
// raw dump is about; About is the explanation's whole header.
type pointHeader struct {
	Problem string          `json:"problem"`
	HeldOut bool            `json:"heldout"`
	Data    string          `json:"data"`
	Trials  int             `json:"T"`
	Seed    uint64          `json:"seed"`
	Param   string          `json:"param"`
	About   json.RawMessage `json:"about"`
}

func newPointHeader(p *TruthProblem, j truthJob, n int, param string, about explain.About) (pointHeader, error) {
	b, err := json.Marshal(about)
	if err != nil {
		return pointHeader{}, fmt.Errorf("bench: about: %w", err)
	}
	return pointHeader{Problem: p.Name, HeldOut: p.HeldOut, Data: j.kind, Trials: n, Seed: j.seed, Param: param, About: b}, nil
}

// truthPhase computes something per problem in parallel (the truths) before
// the jobs.
func truthPhase(ctx context.Context, problems []*TruthProblem, workers int, f func(i int, p *TruthProblem) error) error {
	return parallelDo(ctx, len(problems), workers, nil, func(i int) error { return f(i, problems[i]) })
}

// partSeeds are the seeds each part of a run used.
func partSeeds(problems []*TruthProblem, seeds int) (tune, heldOut []uint64) {
	for _, p := range problems {
		if p.HeldOut && heldOut == nil {
			heldOut = p.Seeds(seeds)
		}
		if !p.HeldOut && tune == nil {
			tune = p.Seeds(seeds)
		}
	}
	return tune, heldOut
}

// parts are the parts present among problems, tune first.
func parts(problems []*TruthProblem) []string {
	var out []string
	for _, part := range []string{"tune", "held-out"} {
		if slices.ContainsFunc(problems, func(p *TruthProblem) bool { return p.Part() == part }) {
			out = append(out, part)
		}
	}
	return out
}

// pointWriter writes JSON lines from concurrent jobs, one whole batch at a
// time, so lines of different jobs never interleave within a batch.
type pointWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (w *pointWriter) write(batch []any) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range batch {
		if err := w.enc.Encode(v); err != nil {
			return fmt.Errorf("bench: points: %w", err)
		}
	}
	return nil
}

// finite replaces a non-finite number by nil, so a JSON line can carry it.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// fraction is k/n, NaN for n = 0.
func fraction(k, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return float64(k) / float64(n)
}

// writeNotes prints notes as a list.
func writeNotes(w io.Writer, notes []string) error {
	if len(notes) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, "Notes:"); err != nil {
		return err
	}
	for _, n := range notes {
		if _, err := fmt.Fprintf(w, "  - %s\n", n); err != nil {
			return err
		}
	}
	return nil
}
