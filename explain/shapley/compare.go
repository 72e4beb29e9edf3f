package shapley

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"xbo/space"
)

// outputIndex finds the named output of f ("" means the first).
func outputIndex(f Function, name string) (int, error) {
	if name == "" {
		return 0, nil
	}
	i := slices.Index(f.Outputs(), name)
	if i < 0 {
		return 0, fmt.Errorf("shapley: function has no output %q (has %v)", name, f.Outputs())
	}
	return i, nil
}

// AblationStep is one round of an ablation: the flip chosen greedily.
type AblationStep struct {
	Param string  `json:"param"`
	Index int     `json:"index"`
	From  float64 `json:"from"` // unit-cube value before the flip
	To    float64 `json:"to"`
	// Prediction is f after the flip; Contribution = f(before) − f(after)
	// for minimization (the improvement, eq. 3), the reverse when
	// maximizing; Relative divides it by the total improvement.
	Prediction   float64 `json:"prediction"`
	Contribution float64 `json:"contribution"`
	Relative     float64 `json:"relative"`
}

// Ablation is the greedy path from a source to a target configuration.
type Ablation struct {
	Output           string         `json:"output"`
	Maximize         bool           `json:"maximize,omitempty"`
	Source           []float64      `json:"source"`
	Target           []float64      `json:"target"`
	SourcePrediction float64        `json:"source_prediction"`
	TargetPrediction float64        `json:"target_prediction"`
	Steps            []AblationStep `json:"steps"`
}

// AblationOptions configures Ablate.
type AblationOptions struct {
	Output   string // output of f to ablate ("" = first)
	Maximize bool   // higher output is better (e.g. an acquisition utility)
	Space    *space.Space
	Names    []string
}

// Ablate runs the ablation analysis of Fawcett and Hoos (2016) on a model, as
// in thesis section 3: starting from source, each round flips to its target
// value the one remaining parameter whose flip improves f the most, until
// all are flipped. Parameters whose flips change nothing (equal values, or
// children switched off by their parent) come last with contribution 0.
// In a conditional space flipped parameters form a coalition, with the
// same hybrid rule as the Shapley games.
func Ablate(f Function, source, target []float64, opt AblationOptions) (*Ablation, error) {
	if f == nil {
		return nil, errors.New("shapley: ablation: nil function")
	}
	p := f.Dim()
	if p > maxMonteCarloDim {
		return nil, fmt.Errorf("shapley: ablation supports up to %d parameters", maxMonteCarloDim)
	}
	o, err := outputIndex(f, opt.Output)
	if err != nil {
		return nil, err
	}
	src, err := checkPoint("source", source, p, opt.Space)
	if err != nil {
		return nil, fmt.Errorf("ablation: %w", err)
	}
	tgt, err := checkPoint("target", target, p, opt.Space)
	if err != nil {
		return nil, fmt.Errorf("ablation: %w", err)
	}
	names, err := paramNames(p, Options{Names: opt.Names, Space: opt.Space})
	if err != nil {
		return nil, err
	}
	sign := 1.0
	if opt.Maximize {
		sign = -1
	}
	mix := newMixer(p, opt.Space)
	scratch := make([]bool, p)
	eval := func(pts [][]float64) ([]float64, error) {
		out := make([][]float64, len(f.Outputs()))
		for i := range out {
			out[i] = make([]float64, len(pts))
		}
		if err := evalChecked(f, pts, out); err != nil {
			return nil, fmt.Errorf("shapley: ablation: %w", err)
		}
		return out[o], nil
	}
	ends, err := eval([][]float64{src, tgt})
	if err != nil {
		return nil, err
	}
	res := &Ablation{Output: f.Outputs()[o], Maximize: opt.Maximize, Source: src, Target: tgt,
		SourcePrediction: ends[0], TargetPrediction: ends[1]}
	var flipped uint64
	current := slices.Clone(src)
	currentValue := ends[0]
	for round := 0; round < p; round++ {
		var cands []int
		var pts [][]float64
		for j := 0; j < p; j++ {
			if inCoalition(flipped, j) {
				continue
			}
			pt := make([]float64, p)
			mix.mix(pt, tgt, src, flipped|1<<uint(j), scratch)
			cands = append(cands, j)
			pts = append(pts, pt)
		}
		vals, err := eval(pts)
		if err != nil {
			return nil, err
		}
		best := -1
		bestGain := math.Inf(-1)
		for c := range cands {
			changed := !slices.Equal(pts[c], current)
			gain := sign * (currentValue - vals[c])
			// Flips that change nothing go last; among real flips the
			// largest improvement wins, ties to the lower index.
			if !changed {
				gain = math.Inf(-1)
			}
			if best < 0 || gain > bestGain {
				best, bestGain = c, gain
			}
		}
		j := cands[best]
		step := AblationStep{Param: names[j], Index: j, From: current[j], To: pts[best][j], Prediction: vals[best]}
		step.Contribution = sign * (currentValue - vals[best])
		flipped |= 1 << uint(j)
		current = pts[best]
		currentValue = vals[best]
		res.Steps = append(res.Steps, step)
	}
	total := sign * (res.SourcePrediction - res.TargetPrediction)
	for i := range res.Steps {
		if total != 0 {
			res.Steps[i].Relative = res.Steps[i].Contribution / total
		}
	}
	return res, nil
}

// DefaultGrid is the number of grid values per float dimension for local
// parameter importance.
const DefaultGrid = 20

// LocalImportance is local parameter importance (LPI, Biedenkapp et al.
// 2018; thesis eq. 2) for each output: Variance[j] is the variance of f
// along dimension j through θ̃, Fraction[j] = Variance[j]/Σ_l Variance[l].
type LocalImportance struct {
	Params  []string         `json:"params"`
	Point   []float64        `json:"point"`
	Grid    int              `json:"grid"`
	Outputs []LocalVariances `json:"outputs"`
}

// LocalVariances is the LPI of one output.
type LocalVariances struct {
	Output   string    `json:"output"`
	Variance []float64 `json:"variance"`
	Fraction []float64 `json:"fraction"`
}

// LPIOptions configures LPI.
type LPIOptions struct {
	Grid  int // values per float dimension (default 20)
	Space *space.Space
	Names []string
}

// LPI computes local parameter importance at x. The values of dimension j are
// a grid over its range: every level of a categorical or of an int with at
// most Grid values, otherwise Grid equidistant unit-cube values. Changing a
// parent may switch children on; they then take their explicand value when
// it has one and the middle of their range otherwise (space.Repair). A
// parameter inactive at x has no effect and variance 0.
func LPI(f Function, x []float64, opt LPIOptions) (*LocalImportance, error) {
	if f == nil {
		return nil, errors.New("shapley: lpi: nil function")
	}
	p := f.Dim()
	pt, err := checkPoint("point", x, p, opt.Space)
	if err != nil {
		return nil, fmt.Errorf("lpi: %w", err)
	}
	names, err := paramNames(p, Options{Names: opt.Names, Space: opt.Space})
	if err != nil {
		return nil, err
	}
	g := opt.Grid
	if g == 0 {
		g = DefaultGrid
	}
	if g < 2 {
		return nil, fmt.Errorf("shapley: lpi: grid %d must be at least 2", opt.Grid)
	}
	var pts [][]float64
	counts := make([]int, p)
	for j := 0; j < p; j++ {
		for _, u := range gridValues(opt.Space, j, g) {
			q := slices.Clone(pt)
			if q[j] == space.Inactive {
				// Varying a switched-off parameter changes nothing.
				pts = append(pts, q)
				counts[j]++
				continue
			}
			q[j] = u
			if opt.Space != nil {
				s := opt.Space
				vals := s.Decode(q)
				// Children switched on by the new value keep the explicand's
				// value when it has one; Decode puts the others mid-range.
				for c := range q {
					if vals[c] == vals[c] && q[c] < 0 {
						q[c] = 0.5
					}
				}
				s.Repair(q)
			}
			pts = append(pts, q)
			counts[j]++
		}
	}
	nOut := len(f.Outputs())
	out := make([][]float64, nOut)
	for o := range out {
		out[o] = make([]float64, len(pts))
	}
	if err := evalChecked(f, pts, out); err != nil {
		return nil, fmt.Errorf("shapley: lpi: %w", err)
	}
	res := &LocalImportance{Params: names, Point: pt, Grid: g}
	for o, name := range f.Outputs() {
		lv := LocalVariances{Output: name, Variance: make([]float64, p), Fraction: make([]float64, p)}
		start := 0
		total := 0.0
		for j := 0; j < p; j++ {
			v := out[o][start : start+counts[j]]
			start += counts[j]
			mean := 0.0
			for _, y := range v {
				mean += y
			}
			mean /= float64(len(v))
			ss := 0.0
			for _, y := range v {
				ss += (y - mean) * (y - mean)
			}
			lv.Variance[j] = ss / float64(len(v))
			total += lv.Variance[j]
		}
		for j := range lv.Fraction {
			if total > 0 {
				lv.Fraction[j] = lv.Variance[j] / total
			}
		}
		res.Outputs = append(res.Outputs, lv)
	}
	return res, nil
}

// gridValues lists unit-cube values of dimension j: bin centres of discrete
// parameters with at most g values, g equidistant points in [0,1] otherwise.
func gridValues(s *space.Space, j, g int) []float64 {
	if s != nil {
		pr := &s.Params[j]
		if c := pr.Cardinality(); c > 0 && (pr.Type == space.Categorical || c <= g) {
			vals := make([]float64, c)
			for k := range vals {
				if pr.Type == space.Categorical {
					vals[k] = pr.ToUnit(float64(k))
				} else {
					vals[k] = pr.ToUnit(pr.GridValue(k))
				}
			}
			return vals
		}
	}
	vals := make([]float64, g)
	for k := range vals {
		vals[k] = float64(k) / float64(g-1)
	}
	return vals
}

// Interaction holds Friedman and Popescu's H-statistic for every pair.
type Interaction struct {
	Output string      `json:"output"`
	Params []string    `json:"params"`
	Points int         `json:"points"`
	H2     [][]float64 `json:"h2"` // H²_jk, the share of the joint PD's variance due to the interaction
	H      [][]float64 `json:"h"`  // √H²_jk
}

// HOptions configures HStatistic.
type HOptions struct {
	Output  string // "" = first output
	Points  int    // sample size n (default 100); cost O(p²·n²) evaluations
	Sample  [][]float64
	Space   *space.Space
	Names   []string
	Seed    uint64
	Workers int
}

// HStatistic computes H²_jk = Σ_i [PD_jk(x_ij,x_ik) − PD_j(x_ij) − PD_k(x_ik)]²
// / Σ_i PD_jk(x_ij,x_ik)² (Friedman and Popescu 2008, eq. 44) with centred
// partial dependences estimated over the same n sample points that serve as
// evaluation points (default: n Latin-hypercube points over the space).
func HStatistic(ctx context.Context, f Function, opt HOptions) (*Interaction, error) {
	if f == nil {
		return nil, errors.New("shapley: h-statistic: nil function")
	}
	p := f.Dim()
	if p < 2 {
		return nil, errors.New("shapley: h-statistic needs at least two parameters")
	}
	if p > maxMonteCarloDim {
		return nil, fmt.Errorf("shapley: h-statistic supports up to %d parameters", maxMonteCarloDim)
	}
	o, err := outputIndex(f, opt.Output)
	if err != nil {
		return nil, err
	}
	names, err := paramNames(p, Options{Names: opt.Names, Space: opt.Space})
	if err != nil {
		return nil, err
	}
	sample := opt.Sample
	if sample == nil {
		n := opt.Points
		if n == 0 {
			n = 100
		}
		if n < 2 {
			return nil, fmt.Errorf("shapley: h-statistic: %d points", opt.Points)
		}
		sample, err = UniformBackground(opt.Space, p, n, opt.Seed)
		if err != nil {
			return nil, err
		}
	} else {
		for i, z := range sample {
			if _, err := checkPoint(fmt.Sprintf("sample point %d", i), z, p, opt.Space); err != nil {
				return nil, err
			}
		}
	}
	n := len(sample)
	mix := newMixer(p, opt.Space)
	nOut := len(f.Outputs())
	// pd(mask)[i] = (1/n) Σ_l f(x_i on mask, x_l elsewhere), centred.
	pd := func(mask uint64) ([]float64, error) {
		res := make([]float64, n)
		workers := opt.Workers
		if workers < 1 {
			workers = defaultWorkers()
		}
		bufs := make([]*buffers, workers)
		err := parallel(ctx, workers, n, func(w, i int) error {
			if bufs[w] == nil {
				bufs[w] = newBuffers(n, p, nOut)
			}
			pts, out := bufs[w].view(n)
			for l := range pts {
				mix.mix(pts[l], sample[i], sample[l], mask, bufs[w].src)
			}
			if err := evalChecked(f, pts, out); err != nil {
				return err
			}
			s := 0.0
			for _, v := range out[o] {
				s += v
			}
			res[i] = s / float64(n)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("shapley: h-statistic: %w", err)
		}
		mean := 0.0
		for _, v := range res {
			mean += v
		}
		mean /= float64(n)
		for i := range res {
			res[i] -= mean
		}
		return res, nil
	}
	single := make([][]float64, p)
	for j := range single {
		if single[j], err = pd(1 << uint(j)); err != nil {
			return nil, err
		}
	}
	res := &Interaction{Output: f.Outputs()[o], Params: names, Points: n, H2: make([][]float64, p), H: make([][]float64, p)}
	for j := range res.H2 {
		res.H2[j] = make([]float64, p)
		res.H[j] = make([]float64, p)
	}
	for j := 0; j < p; j++ {
		for k := j + 1; k < p; k++ {
			joint, err := pd(1<<uint(j) | 1<<uint(k))
			if err != nil {
				return nil, err
			}
			num, den := 0.0, 0.0
			for i := range joint {
				d := joint[i] - single[j][i] - single[k][i]
				num += d * d
				den += joint[i] * joint[i]
			}
			h2 := 0.0
			if den > 0 {
				h2 = num / den
			}
			res.H2[j][k], res.H2[k][j] = h2, h2
			res.H[j][k], res.H[k][j] = math.Sqrt(h2), math.Sqrt(h2)
		}
	}
	return res, nil
}
