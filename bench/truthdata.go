package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"xbo/history"
	"xbo/internal/atomicfile"
	"xbo/opt"
)

// Data kinds of the catalogue benchmarks: what produced the trials the
// explanations are computed from.
const (
	// DataUniform is space.Sample: configurations uniform under the
	// explanations' own reference measure (for a table, uniform over the
	// grid's levels, duplicates allowed).
	DataUniform = "uniform"
	// DataDefault is xbo's optimizer as a user gets it:
	// opt.New(opt.Config{Space, Seed}) with nothing else set, asked and told
	// one trial at a time.
	DataDefault = "default"
	// DataLCB is the default configuration with the LCB acquisition,
	// τ = 0.1 (concentrated near the optimum).
	DataLCB = "lcb"
	// DataEI is the setting of Moosbauer et al. 2021 in the older calibration
	// suite: EI over the whole space, without trust region or output warp.
	DataEI = "ei"
)

// TruthDataKinds lists the data kinds.
var TruthDataKinds = []string{DataUniform, DataDefault, DataLCB, DataEI}

// TruthData is one generated data set: the first N trials of a problem
// under a data kind and seed, as the trials reported them (a diverged run
// included). A smaller size is a prefix of a larger one: uniform rows are
// drawn one after another and the optimizer does not know its budget.
type TruthData struct {
	Problem string `json:"problem"`
	Kind    string `json:"kind"`
	Seed    uint64 `json:"seed"`
	N       int    `json:"n"`
	// U are the trials' unit-cube rows (space.Inactive for an inactive
	// parameter), Y what they reported and Clean the problem's Eval there
	// (the cache checks it against the problem's current definition).
	U     [][]float64 `json:"u"`
	Y     []float64   `json:"y"`
	Clean []float64   `json:"clean"`
}

// prefix is the first n trials.
func (d *TruthData) prefix(n int) *TruthData {
	return &TruthData{Problem: d.Problem, Kind: d.Kind, Seed: d.Seed, N: n, U: d.U[:n], Y: d.Y[:n], Clean: d.Clean[:n]}
}

// history is the data as a study of the problem's space.
func (d *TruthData) history(p *TruthProblem) *history.History {
	return calibrationHistory(p.Space, d.U, d.Y)
}

// truthData returns the first n trials of problem p under kind and seed,
// read from the cache directory when it holds them (a longer run counts:
// its prefix is taken) and generated, then stored there, otherwise.
func truthData(ctx context.Context, p *TruthProblem, kind string, n int, seed uint64, cache string) (*TruthData, error) {
	var path string
	if cache != "" {
		path = filepath.Join(cache, fmt.Sprintf("%s.%s.%d.json", p.Name, kind, seed))
		d, err := readTruthData(path, p, kind, seed)
		switch {
		case err == nil && d.N >= n:
			return d.prefix(n), nil
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errStaleData):
			return nil, err
		}
	}
	d, err := generateTruthData(ctx, p, kind, n, seed)
	if err != nil {
		return nil, fmt.Errorf("bench: %s %s seed %d: %w", p.Name, kind, seed, err)
	}
	if path != "" {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return nil, fmt.Errorf("bench: cache: %w", err)
		}
		b, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("bench: cache %s: %w", path, err)
		}
		if err := atomicfile.WriteBytes(path, b); err != nil {
			return nil, fmt.Errorf("bench: cache: %w", err)
		}
	}
	return d, nil
}

// errStaleData marks a cached data set that no longer matches its problem:
// it is generated again and overwritten.
var errStaleData = errors.New("stale cached data")

// readTruthData reads a cached data set and checks it against the problem:
// same name, kind and seed, rows of the space's dimension, and the
// problem's Eval at the rows equal to the stored clean values (so a changed
// problem definition regenerates its data).
func readTruthData(path string, p *TruthProblem, kind string, seed uint64) (*TruthData, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d TruthData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("bench: cache %s: %w", path, err)
	}
	if d.Problem != p.Name || d.Kind != kind || d.Seed != seed || len(d.U) != d.N || len(d.Y) != d.N || len(d.Clean) != d.N {
		return nil, fmt.Errorf("%w: %s holds %s %s seed %d with %d/%d/%d rows", errStaleData, path, d.Problem, d.Kind, d.Seed, len(d.U), len(d.Y), len(d.Clean))
	}
	for i, u := range d.U {
		if len(u) != p.Space.Dim() {
			return nil, fmt.Errorf("%w: %s row %d has %d coordinates", errStaleData, path, i, len(u))
		}
		if c := p.Eval(p.Space.Decode(u)); !(math.Abs(c-d.Clean[i]) <= 1e-12*math.Max(1, math.Abs(c))) {
			return nil, fmt.Errorf("%w: %s row %d: the problem gives %v where the cache holds %v", errStaleData, path, i, c, d.Clean[i])
		}
	}
	return &d, nil
}

// generateTruthData draws n trials. Three independent streams: the uniform
// rows or the optimizer (seeded by seed), and what the trials report
// (Observe's randomness, seeded by seed, problem and kind).
func generateTruthData(ctx context.Context, p *TruthProblem, kind string, n int, seed uint64) (*TruthData, error) {
	if n < 1 {
		return nil, fmt.Errorf("size %d must be at least 1", n)
	}
	sp := p.Space
	obs := rand.New(rand.NewPCG(seed, nameSeed(p.Name, kind, "observe")))
	d := &TruthData{Problem: p.Name, Kind: kind, Seed: seed, N: n}
	record := func(u, x []float64) (float64, error) {
		y, clean := p.observe(x, obs), p.Eval(x)
		if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(clean) || math.IsInf(clean, 0) {
			return 0, fmt.Errorf("value %v (clean %v) at %v", y, clean, x)
		}
		d.U = append(d.U, u)
		d.Y = append(d.Y, y)
		d.Clean = append(d.Clean, clean)
		return y, nil
	}
	var cfg opt.Config
	switch kind {
	case DataUniform:
		rng := rand.New(rand.NewPCG(seed, nameSeed(p.Name, kind)))
		for _, u := range sp.Sample(rng, n) {
			if _, err := record(u, sp.Decode(u)); err != nil {
				return nil, err
			}
		}
		return d, nil
	case DataDefault:
	case DataLCB:
		cfg.Strategy, cfg.Tau = "lcb", 0.1
	case DataEI:
		cfg.Strategy, cfg.TrustRegion, cfg.OutputWarp = "ei", "none", "none"
	default:
		return nil, fmt.Errorf("unknown data kind %q", kind)
	}
	// The space carries the direction: the optimizer multiplies the values
	// it is told by space.Sign(), so a maximize problem is told its values
	// as they are.
	cfg.Space, cfg.Seed = sp, seed
	o, err := opt.New(cfg)
	if err != nil {
		return nil, err
	}
	for range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tr, err := o.Ask()
		if err != nil {
			return nil, err
		}
		y, err := record(slices.Clone(tr.U), tr.Params)
		if err != nil {
			return nil, err
		}
		if err := o.Tell(tr.ID, y); err != nil {
			return nil, err
		}
	}
	return d, nil
}
