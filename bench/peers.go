package bench

import (
	"bufio"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"xbo/internal/atomicfile"
	"xbo/opt"
	"xbo/space"
)

// The peers comparison runs xbo and Optuna's samplers on the same problems,
// seeds, budgets and worker counts. Every objective is evaluated in this
// process, so every method sees the same function: an Optuna run is a python3
// child (scripts/peers.py) that sends each configuration it asks for and
// receives its value. With W workers every method keeps W trials asked and not
// yet told, telling the oldest first (a fixed, timing-free model of W
// parallel workers of equal speed).

//go:embed scripts/peers.py
var peersScript string

// Peer methods. MethodXBO is xbo's optimizer with the given configuration; the
// others are Optuna samplers (TPE with constant_liar when W > 1).
const (
	MethodXBO             = "xbo"
	MethodTPE             = "tpe"
	MethodTPEMultivariate = "tpe-multivariate"
	MethodCMAES           = "cmaes"
	MethodRandom          = "random"
)

// PeerMethods lists the methods in the order tables show them.
var PeerMethods = []string{MethodXBO, MethodTPE, MethodTPEMultivariate, MethodCMAES, MethodRandom}

// Peer problems: the suite xbo is compared with Optuna's samplers on.
const (
	ProblemBranin        = "branin"
	ProblemHartmann6     = "hartmann6"
	ProblemST4           = "styblinski-tang4"
	ProblemST8           = "styblinski-tang8"
	ProblemNoisyH6       = "noisy-hartmann6"
	ProblemSVMGrid       = "svm-grid"
	ProblemLogRegGrid    = "logreg-grid"
	ProblemLCBench       = "lcbench-phoneme"
	ProblemConditionalMx = "conditional"
	ProblemCorner        = "corner"
	// Multimodal and higher-dimensional problems (multimodal.go): Levy
	// d = 6 and 20 where the trust region's restarts are tuned, and
	// Ackley d = 10, Rosenbrock d = 10 and Styblinski-Tang d = 20 held
	// out (never looked at while tuning; reported apart).
	ProblemLevy6    = "levy6"
	ProblemLevy20   = "levy20"
	ProblemAckley10 = "ackley10"
	ProblemRosen10  = "rosenbrock10"
	ProblemST20     = "styblinski-tang20"
)

// PeerProblems lists every problem in table order.
var PeerProblems = []string{ProblemBranin, ProblemHartmann6, ProblemST4, ProblemST8, ProblemNoisyH6, ProblemSVMGrid, ProblemLogRegGrid, ProblemLCBench, ProblemConditionalMx,
	ProblemCorner, ProblemLevy6, ProblemLevy20, ProblemAckley10, ProblemRosen10, ProblemST20}

// HeldOutPeerProblems are the problems of PeerProblems kept out of tuning.
var HeldOutPeerProblems = []string{ProblemAckley10, ProblemRosen10, ProblemST20}

// Problem is an objective to minimize with its space, budget and optimum.
type Problem struct {
	Name     string
	Function *Function // Eval takes the space's natural values
	Space    *space.Space
	Budget   int
	Noise    float64 // sd of Gaussian noise added to each evaluation
}

// LoadProblem builds a peer problem; dataDir holds the shared CSVs the grid
// and LCBench problems read.
func LoadProblem(name, dataDir string) (*Problem, error) {
	p, err := loadProblem(name, dataDir)
	if err != nil {
		return nil, fmt.Errorf("bench: problem %s: %w", name, err)
	}
	return p, nil
}

// functionProblem is a peer problem made of a test function: its name and
// dimension for Lookup, its budget (0: 30·d) and noise sd.
type functionProblem struct {
	function    string
	dim, budget int
	noise       float64
}

// functionProblems are the peer problems made of test functions; the grids
// and LCBench read the shared data instead (loadProblem).
var functionProblems = map[string]functionProblem{
	ProblemBranin:        {function: NameBranin},
	ProblemHartmann6:     {function: NameHartmann6},
	ProblemNoisyH6:       {function: NameHartmann6, noise: 0.1},
	ProblemST4:           {function: NameStyblinskiTang, dim: 4},
	ProblemST8:           {function: NameStyblinskiTang, dim: 8},
	ProblemConditionalMx: {function: NameConditional},
	ProblemCorner:        {function: NameCorner},
	ProblemLevy6:         {function: NameLevy, dim: 6},
	ProblemLevy20:        {function: NameLevy, dim: 20, budget: 200},
	ProblemAckley10:      {function: NameAckley, dim: 10},
	ProblemRosen10:       {function: NameRosenbrock, dim: 10},
	ProblemST20:          {function: NameStyblinskiTang, dim: 20, budget: 200},
}

func loadProblem(name, dataDir string) (*Problem, error) {
	var f *Function
	var err error
	noise := 0.0
	budget := 0
	fp, isFunction := functionProblems[name]
	switch {
	case isFunction:
		f, err = Lookup(fp.function, fp.dim)
		budget, noise = fp.budget, fp.noise
	case name == ProblemSVMGrid:
		f, err = LoadGrid(filepath.Join(dataDir, "svm_on_grid.csv"), []string{"C", "alpha", "epsilon"}, "error")
	case name == ProblemLogRegGrid:
		f, err = LoadGrid(filepath.Join(dataDir, "logreg_on_grid.csv"), []string{"lrate_idx", "l2_reg", "batchsize", "n_epochs"}, "val_error")
	case name == ProblemLCBench:
		f, err = lcbenchProblem(filepath.Join(dataDir, "lcbench2000_phoneme.csv"))
		budget = 100
	default:
		return nil, fmt.Errorf("unknown problem (valid: %s)", strings.Join(PeerProblems, ", "))
	}
	if err != nil {
		return nil, err
	}
	s, err := f.Space()
	if err != nil {
		return nil, err
	}
	if budget == 0 {
		budget = 30 * s.Dim()
	}
	return &Problem{Name: name, Function: f, Space: s, Budget: budget, Noise: noise}, nil
}

// LoadGrid reads a full-grid table (one row per combination of the levels of
// the columns params, and the objective column value) as a function of the
// levels' indices: parameter j is an integer 0..L_j−1 for its L_j sorted
// distinct values, so every method searches the grid and nothing between. A
// configuration that appears twice is an error (the truth catalogue, which
// must read such a table, averages them instead).
func LoadGrid(path string, params []string, value string) (*Function, error) {
	t, err := readGridFile(path, params, value)
	if err != nil {
		return nil, err
	}
	if t.duplicates > 0 {
		return nil, fmt.Errorf("%s: configuration %v appears twice", path, t.firstDuplicate)
	}
	return t.function(strings.TrimSuffix(filepath.Base(path), ".csv")), nil
}

// lcbenchProblem is the LCBench-phoneme surrogate (a forest fitted to the 2,000
// evaluations, as in Moosbauer et al. 2021, section 6.2). Its optimum is not
// known in closed form: it is taken as the best of 200,000 random
// configurations, each refined by nothing, so regret is relative to that
// reference and may turn slightly negative.
func lcbenchProblem(path string) (*Function, error) {
	m, err := LoadLCBench(path, 1)
	if err != nil {
		return nil, err
	}
	eval := func(x []float64) float64 {
		v, err := m.Eval(x)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	rng := rand.New(rand.NewPCG(7, 11))
	best := math.Inf(1)
	var argmin []float64
	const reference = 200_000
	u := m.Space.Sample(rng, reference)
	mean, variance := make([]float64, reference), make([]float64, reference)
	if err := m.Forest.Predict(u, mean, variance); err != nil {
		return nil, err
	}
	for i, v := range mean {
		if v < best {
			best, argmin = v, m.Space.Decode(u[i])
		}
	}
	return &Function{Name: ProblemLCBench, Dim: m.Space.Dim(), Params: slices.Clone(m.Space.Params), Optimum: best, Argmin: [][]float64{argmin}, Eval: eval}, nil
}

// DefaultPython is Debian's /usr/bin/python3, where python3-optuna is
// installed, when it exists (a python3 earlier on PATH, e.g. pyenv's, may
// lack Optuna), and python3 from PATH otherwise.
func DefaultPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// PeerRun is one (problem, method, workers, seed) optimization.
type PeerRun struct {
	Problem string  `json:"problem"`
	Method  string  `json:"method"`
	Workers int     `json:"workers"`
	Seed    uint64  `json:"seed"`
	Regret  float64 `json:"regret"`
	// AskSeconds[i] is the time the (i+1)-th ask took.
	AskSeconds []float64 `json:"ask_seconds"`
}

// PeersOptions configure Peers.
type PeersOptions struct {
	Problems []string // default PeerProblems
	Methods  []string // default PeerMethods
	Workers  []int    // simulated parallel workers, default {1, 8}
	Seeds    int      // seeds 1..Seeds, default 10
	Budget   int      // evaluations per run; 0: each problem's own
	DataDir  string   // the shared CSVs (default ../shared/data)
	Python   string   // interpreter with Optuna (default python3)
	// Config is xbo's base configuration (nil: opt's defaults).
	Config *opt.Config
	// Jobs runs this many optimizations at once (default GOMAXPROCS).
	// Regrets do not depend on it; ask times do.
	Jobs int
	// Cache, if set, is a directory where runs are kept and read back
	// instead of run again: Optuna's by problem, method, workers, budget
	// and seed; xbo's also under a digest of the executable and Config.
	Cache    string // xbo's runs are kept under a digest of the executable and Config
	Progress func(done, total int)
}

// PeersResult holds every run and the summaries.
type PeersResult struct {
	Seeds int             `json:"seeds"`
	Rows  []PeersRow      `json:"rows"`
	Runs  []PeerRun       `json:"runs"`
	Cost  []PeerCostPoint `json:"ask_cost"`
}

// PeersRow summarizes one problem at one worker count.
type PeersRow struct {
	Problem string `json:"problem"`
	Workers int    `json:"workers"`
	Budget  int    `json:"budget"`
	// Methods in the order asked for; Wins[i] is the number of seeds on
	// which xbo's regret is strictly below method i's (ties count for
	// neither).
	Methods []StrategySummary `json:"methods"`
	Wins    []int             `json:"xbo_wins"`
}

// PeerCostPoint is the mean ask time of one method over the asks numbered
// [From, To) of its sequential runs.
type PeerCostPoint struct {
	Method  string  `json:"method"`
	From    int     `json:"from"`
	To      int     `json:"to"`
	Seconds float64 `json:"mean_seconds"`
}

// Peers runs the comparison.
func Peers(ctx context.Context, o PeersOptions) (*PeersResult, error) {
	res, err := peers(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("bench: peers: %w", err)
	}
	return res, nil
}

func peers(ctx context.Context, o PeersOptions) (*PeersResult, error) {
	if len(o.Problems) == 0 {
		o.Problems = PeerProblems
	}
	if len(o.Methods) == 0 {
		o.Methods = PeerMethods
	}
	if len(o.Workers) == 0 {
		o.Workers = []int{1, 8}
	}
	if o.Seeds == 0 {
		o.Seeds = 10
	}
	if o.DataDir == "" {
		o.DataDir = filepath.Join("..", "shared", "data")
	}
	if o.Python == "" {
		o.Python = DefaultPython()
	}
	if o.Jobs == 0 {
		o.Jobs = runtime.GOMAXPROCS(0)
	}
	if o.Seeds < 1 || o.Jobs < 1 || o.Budget < 0 || o.Budget > 100_000 {
		return nil, fmt.Errorf("seeds %d and jobs %d must be positive, budget %d in 0..100000", o.Seeds, o.Jobs, o.Budget)
	}
	if err := checkMethods(o.Methods, PeerMethods); err != nil {
		return nil, err
	}
	if err := checkWorkers(o.Workers); err != nil {
		return nil, err
	}
	problems := make([]*Problem, len(o.Problems))
	for i, name := range o.Problems {
		p, err := LoadProblem(name, o.DataDir)
		if err != nil {
			return nil, err
		}
		if o.Budget > 0 {
			p.Budget = o.Budget
		}
		problems[i] = p
	}
	jobs := sweepJobs(len(problems), len(o.Workers), len(o.Methods), o.Seeds)
	runs := make([]PeerRun, len(jobs))
	err := parallelDo(ctx, len(jobs), o.Jobs, o.Progress, func(k int) error {
		j := jobs[k]
		p, method, workers := problems[j.problem], o.Methods[j.method], o.Workers[j.workers]
		run, err := peerRun(ctx, p, method, workers, uint64(j.seed), o)
		if err != nil {
			return fmt.Errorf("%s, %s, %d workers, seed %d: %w", p.Name, method, workers, j.seed, err)
		}
		runs[k] = run
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &PeersResult{Seeds: o.Seeds, Runs: runs}
	for pi, p := range problems {
		for wi, w := range o.Workers {
			row := PeersRow{Problem: p.Name, Workers: w, Budget: p.Budget}
			regrets := make([][]float64, len(o.Methods))
			for k, j := range jobs {
				if j.problem == pi && j.workers == wi {
					regrets[j.method] = append(regrets[j.method], runs[k].Regret)
				}
			}
			xi := slices.Index(o.Methods, MethodXBO)
			for mi, m := range o.Methods {
				sum := StrategySummary{Strategy: m}
				sum.Q25, sum.Median, sum.Q75 = quartiles(regrets[mi])
				row.Methods = append(row.Methods, sum)
				wins := 0
				if xi >= 0 {
					for s := range regrets[mi] {
						if regrets[xi][s] < regrets[mi][s] {
							wins++
						}
					}
				}
				row.Wins = append(row.Wins, wins)
			}
			out.Rows = append(out.Rows, row)
		}
	}
	out.Cost = askCost(runs, o.Methods)
	return out, nil
}

// askCost averages the sequential runs' ask times over blocks of asks.
func askCost(runs []PeerRun, methods []string) []PeerCostPoint {
	edges := []int{0, 25, 50, 100, 200, 400, 800, 1600, 3200, 6400}
	var out []PeerCostPoint
	for _, m := range methods {
		for b := 0; b+1 < len(edges); b++ {
			sum, n := 0.0, 0
			for _, r := range runs {
				if r.Method != m || r.Workers != 1 {
					continue
				}
				for i := edges[b]; i < min(edges[b+1], len(r.AskSeconds)); i++ {
					sum += r.AskSeconds[i]
					n++
				}
			}
			if n > 0 {
				out = append(out, PeerCostPoint{Method: m, From: edges[b], To: edges[b+1], Seconds: sum / float64(n)})
			}
		}
	}
	return out
}

func peerRun(ctx context.Context, p *Problem, method string, workers int, seed uint64, o PeersOptions) (PeerRun, error) {
	run := PeerRun{Problem: p.Name, Method: method, Workers: workers, Seed: seed}
	var cachePath string
	if o.Cache != "" {
		tag := method
		if method == MethodXBO {
			// xbo's runs depend on its code and settings: the key names
			// the running executable's digest and the configuration.
			digest, err := xboDigest(o.Config)
			if err != nil {
				return run, err
			}
			tag += "-" + digest
		}
		cachePath = filepath.Join(o.Cache, fmt.Sprintf("%s-%s-w%d-b%d-s%d.json", p.Name, tag, workers, p.Budget, seed))
		if data, err := os.ReadFile(cachePath); err == nil {
			if err := json.Unmarshal(data, &run); err == nil && run.Problem == p.Name && run.Method == method {
				return run, nil
			}
		}
	}
	var err error
	if method == MethodXBO {
		err = xboRun(ctx, p, workers, seed, o.Config, &run)
	} else {
		err = optunaRun(ctx, p, method, workers, seed, o.Python, &run)
	}
	if err != nil {
		return run, err
	}
	if cachePath != "" {
		data, _ := json.Marshal(run)
		if err := os.MkdirAll(o.Cache, 0o755); err != nil {
			return run, err
		}
		if err := atomicfile.WriteBytes(cachePath, data); err != nil {
			return run, err
		}
	}
	return run, nil
}

var executableDigest = sync.OnceValues(func() (string, error) {
	path, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
})

// xboDigest identifies xbo's runs for the cache: a digest of the executable
// that runs them and of the base configuration.
func xboDigest(cfg *opt.Config) (string, error) {
	exe, err := executableDigest()
	if err != nil {
		return "", fmt.Errorf("cache key: %w", err)
	}
	h := sha256.New()
	io.WriteString(h, exe)
	if cfg != nil {
		fmt.Fprintf(h, "%+v", *cfg)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// tracker keeps the regret of the best observed configuration, for Run and
// the peers runs alike: with noise, the configuration with the best noisy
// value, scored without noise.
type tracker struct {
	p            *Problem
	observe      func([]float64) float64
	bestObserved float64
	regret       float64
}

func newTracker(p *Problem, seed uint64) *tracker {
	noiseRng := rand.New(rand.NewPCG(seed^0x6e6f697365, seed^0x9e3779b97f4a7c15))
	return &tracker{p: p, observe: p.Function.WithNoise(p.Noise, noiseRng), bestObserved: math.Inf(1), regret: math.Inf(1)}
}

// evaluate returns the observed value of natural values x.
func (t *tracker) evaluate(x []float64) (float64, error) {
	y := t.observe(x)
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return 0, fmt.Errorf("objective is %v at %v", y, x)
	}
	return y, nil
}

// told records a told value.
func (t *tracker) told(x []float64, y float64) {
	if y < t.bestObserved {
		t.bestObserved = y
		t.regret = t.p.Function.Eval(x) - t.p.Function.Optimum
	}
}

func xboRun(ctx context.Context, p *Problem, workers int, seed uint64, base *opt.Config, run *PeerRun) error {
	cfg := opt.Config{}
	if base != nil {
		cfg = *base
	}
	cfg.Space, cfg.Seed = p.Space, seed
	o, err := opt.New(cfg)
	if err != nil {
		return err
	}
	tr := newTracker(p, seed)
	type asked struct {
		t opt.Trial
		y float64
	}
	var pending []asked
	for told, nAsked := 0, 0; told < p.Budget; {
		for len(pending) < workers && nAsked < p.Budget {
			if err := ctx.Err(); err != nil {
				return err
			}
			start := time.Now()
			t, err := o.Ask()
			if err != nil {
				return err
			}
			run.AskSeconds = append(run.AskSeconds, time.Since(start).Seconds())
			y, err := tr.evaluate(t.Params)
			if err != nil {
				return err
			}
			pending = append(pending, asked{t, y})
			nAsked++
		}
		a := pending[0]
		pending = pending[1:]
		if err := o.Tell(a.t.ID, a.y); err != nil {
			return err
		}
		tr.told(a.t.Params, a.y)
		told++
	}
	run.Regret = tr.regret
	return nil
}

// peerSpec is the first line peers.py reads.
type peerSpec struct {
	Sampler string            `json:"sampler"`
	Seed    uint64            `json:"seed"`
	Budget  int               `json:"budget"`
	Workers int               `json:"workers"`
	Params  []json.RawMessage `json:"params"` // parents before children
}

func optunaRun(ctx context.Context, p *Problem, method string, workers int, seed uint64, python string, run *PeerRun) error {
	spec := peerSpec{Sampler: method, Seed: seed, Budget: p.Budget, Workers: workers}
	var err error
	if spec.Params, err = peerParams(p.Space); err != nil {
		return err
	}
	tr := newTracker(p, seed)
	// Values are told in ask order, oldest first, so the told sequence is
	// the asked one delayed by the workers' window.
	var queue [][]float64
	var values []float64
	run.AskSeconds, err = answerPeer(ctx, python, spec, p.Space, func(x []float64) (any, error) {
		y, err := tr.evaluate(x)
		if err != nil {
			return nil, err
		}
		queue = append(queue, x)
		values = append(values, y)
		return map[string]float64{"value": y}, nil
	})
	if err != nil {
		return err
	}
	if len(queue) != p.Budget {
		return fmt.Errorf("the optuna script asked %d configurations for a budget of %d", len(queue), p.Budget)
	}
	for i, x := range queue {
		tr.told(x, values[i])
	}
	run.Regret = tr.regret
	return nil
}

// answerPeer runs the script with spec and answers every configuration it
// asks for with answer's reply, until it says it is done; it returns the
// script's ask times.
func answerPeer(ctx context.Context, python string, spec any, sp *space.Space, answer func(x []float64) (any, error)) ([]float64, error) {
	child, err := startPeer(ctx, python, spec)
	if err != nil {
		return nil, err
	}
	defer child.stop()
	for {
		var msg struct {
			Params     map[string]any `json:"params"`
			Done       bool           `json:"done"`
			AskSeconds []float64      `json:"ask_seconds"`
		}
		if err := child.receive(&msg); err != nil {
			return nil, child.fail(err)
		}
		if msg.Done {
			return msg.AskSeconds, child.wait()
		}
		x, err := sp.FromMap(msg.Params)
		if err != nil {
			return nil, child.fail(err)
		}
		reply, err := answer(x)
		if err != nil {
			return nil, child.fail(err)
		}
		if err := child.send(reply); err != nil {
			return nil, child.fail(err)
		}
	}
}

// peerParams lists a space's parameters, parents before children, as
// peers.py reads them.
func peerParams(sp *space.Space) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, i := range sp.Order() {
		raw, err := json.Marshal(sp.Params[i])
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

// peerProcess is a running scripts/peers.py speaking JSON lines: the spec
// first, then whatever the run's protocol exchanges.
type peerProcess struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdin  io.WriteCloser
	enc    *json.Encoder
	lines  *bufio.Scanner
	stderr *strings.Builder
	done   bool
}

// startPeer starts the script with python and sends it spec.
func startPeer(ctx context.Context, python string, spec any) (*peerProcess, error) {
	ctx, cancel := context.WithCancel(ctx)
	c := &peerProcess{cmd: exec.CommandContext(ctx, python, "-c", peersScript), cancel: cancel, stderr: &strings.Builder{}}
	c.cmd.Stderr = &limitedWriter{w: c.stderr, n: 4096}
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		cancel()
		return nil, err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("starting %s: %w", python, err)
	}
	c.enc = json.NewEncoder(c.stdin)
	c.lines = bufio.NewScanner(stdout)
	c.lines.Buffer(make([]byte, 64<<10), 1<<20)
	if err := c.send(spec); err != nil {
		return nil, c.fail(err)
	}
	return c, nil
}

func (c *peerProcess) send(v any) error { return c.enc.Encode(v) }

// receive reads the script's next line into v.
func (c *peerProcess) receive(v any) error {
	if !c.lines.Scan() {
		if err := c.lines.Err(); err != nil {
			return err
		}
		return errors.New("the optuna script ended early")
	}
	if err := json.Unmarshal(c.lines.Bytes(), v); err != nil {
		return fmt.Errorf("reading the optuna script: %w", err)
	}
	return nil
}

// fail stops the script and returns err with what it wrote to stderr.
func (c *peerProcess) fail(err error) error {
	c.stop()
	if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
		return fmt.Errorf("%w (python: %s)", err, msg)
	}
	return err
}

// wait closes the script's input and waits for it to exit.
func (c *peerProcess) wait() error {
	c.stdin.Close()
	err := c.cmd.Wait()
	c.done = true
	c.cancel()
	if err != nil {
		return fmt.Errorf("%w (python: %s)", err, strings.TrimSpace(c.stderr.String()))
	}
	return nil
}

// stop kills the script unless it has exited (safe to call twice).
func (c *peerProcess) stop() {
	if c.done {
		return
	}
	c.done = true
	c.cancel()
	c.cmd.Wait()
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(b []byte) (int, error) {
	if l.n > 0 {
		k := min(len(b), l.n)
		l.w.Write(b[:k])
		l.n -= k
	}
	return len(b), nil
}

// WriteTable prints, per problem and worker count, every method's median
// [IQR] regret and xbo's paired wins, then the ask cost.
func (r *PeersResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	if len(r.Rows) == 0 {
		return errors.New("no rows")
	}
	methods := make([]string, len(r.Rows[0].Methods))
	for i, m := range r.Rows[0].Methods {
		methods[i] = m.Strategy
	}
	fmt.Fprintf(tw, "problem\tW\tbudget\t%s\t\n", strings.Join(methods, "\t"))
	for _, row := range r.Rows {
		cells := make([]string, len(row.Methods))
		for i, m := range row.Methods {
			cells[i] = fmt.Sprintf("%.3g [%.2g, %.2g]", m.Median, m.Q25, m.Q75)
			if m.Strategy != MethodXBO && slices.Contains(methods, MethodXBO) {
				cells[i] += fmt.Sprintf(" %d/%d", row.Wins[i], r.Seeds)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", row.Problem, row.Workers, row.Budget, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nmedian [25%%, 75%%] simple regret over %d seeds; n/%d after a peer: seeds on which xbo's regret is strictly lower.\n", r.Seeds, r.Seeds)
	if len(r.Cost) > 0 {
		fmt.Fprintln(w, "\nmean seconds per ask (sequential runs), by ask number:")
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		var ranges []string
		seen := map[string]bool{}
		for _, c := range r.Cost {
			k := fmt.Sprintf("%d–%d", c.From, c.To)
			if !seen[k] {
				seen[k] = true
				ranges = append(ranges, k)
			}
		}
		fmt.Fprintf(tw, "method\t%s\t\n", strings.Join(ranges, "\t"))
		for _, m := range methods {
			cells := make([]string, len(ranges))
			for i := range cells {
				cells[i] = "-"
			}
			for _, c := range r.Cost {
				if c.Method == m {
					cells[slices.Index(ranges, fmt.Sprintf("%d–%d", c.From, c.To))] = fmt.Sprintf("%.3g", c.Seconds)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t\n", m, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// checkMethods refuses a requested method that is not among the valid ones.
func checkMethods(asked, valid []string) error {
	for _, m := range asked {
		if !slices.Contains(valid, m) {
			return fmt.Errorf("unknown method %q (valid: %s)", m, strings.Join(valid, ", "))
		}
	}
	return nil
}
