package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"text/tabwriter"
	"time"

	"xbo/explain"
	"xbo/history"
	"xbo/space"
)

// ScaleSpace is the mixed ten-parameter space of the explanation-scale
// benchmark: log and linear floats, log and linear integers, two
// categoricals and a float active only for one optimizer.
const ScaleSpace = `{"objective": "minimize", "params": [
  {"name": "lr", "type": "float", "low": 1e-5, "high": 1, "log": true},
  {"name": "weight_decay", "type": "float", "low": 1e-6, "high": 0.01, "log": true},
  {"name": "dropout", "type": "float", "low": 0, "high": 0.8},
  {"name": "batch", "type": "int", "low": 16, "high": 512, "log": true},
  {"name": "layers", "type": "int", "low": 1, "high": 8},
  {"name": "units", "type": "int", "low": 16, "high": 1024, "log": true},
  {"name": "optimizer", "type": "categorical", "choices": ["sgd", "adam", "rmsprop"]},
  {"name": "momentum", "type": "float", "low": 0, "high": 0.99, "condition": {"parent": "optimizer", "values": ["sgd"]}},
  {"name": "activation", "type": "categorical", "choices": ["relu", "tanh"]},
  {"name": "warmup", "type": "float", "low": 0, "high": 0.3}]}`

// scaleOptimum is where the synthetic loss is lowest, in the unit encoding.
var scaleOptimum = []float64{0.65, 0.3, 0.25, 0.5, 0.45, 0.7, 0.5, 0.9, 0.25, 0.3}

// scaleLoss is a smooth synthetic validation loss on the unit encoding with
// strong, weak and interacting effects (and nothing for warmup), plus noise.
func scaleLoss(u []float64, rng *rand.Rand) float64 {
	sq := func(j int, w float64) float64 { d := u[j] - scaleOptimum[j]; return w * d * d }
	v := sq(0, 8) + sq(1, 1) + sq(2, 2) + sq(3, 1.5) + sq(4, 1) + sq(5, 0.5)
	v += 1.5 * (u[0] - scaleOptimum[0]) * (u[3] - scaleOptimum[3]) // lr × batch
	switch int(u[6] * 3) {
	case 0: // sgd, with momentum
		v += 0.3 + sq(7, 1)
	case 2:
		v += 0.15
	}
	if u[8] >= 0.5 {
		v += 0.1
	}
	return 0.5 + v + 0.01*rng.NormFloat64()
}

// ScaleHistory is a synthetic study of n trials on ScaleSpace, sampled as a
// Bayesian optimizer does: a fifth uniformly, the rest concentrated around
// the optimum (Gaussian steps of sd 0.12 in the unit cube, the best
// categorical levels more often), so the sampling bias is strong.
func ScaleHistory(n int, seed uint64) (*history.History, error) {
	if n < 1 {
		return nil, fmt.Errorf("bench: scale history of %d trials", n)
	}
	sp, err := space.Parse([]byte(ScaleSpace))
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	h := &history.History{Name: fmt.Sprintf("scale-%d", n), Source: "bench.ScaleHistory", Space: sp}
	for i := range n {
		u := make([]float64, sp.Dim())
		for j := range u {
			if i < n/5 || rng.Float64() < 0.2 {
				u[j] = rng.Float64()
			} else {
				u[j] = math.Min(math.Max(scaleOptimum[j]+0.12*rng.NormFloat64(), 0), 1)
			}
		}
		vals := sp.Decode(u)
		enc, err := sp.Encode(vals)
		if err != nil {
			return nil, err
		}
		h.Trials = append(h.Trials, history.Trial{Number: int64(i), State: history.Complete, Params: vals,
			Value: scaleLoss(enc, rng), Acquisition: "imported", Completion: i})
	}
	return h, nil
}

// ScaleRow is one study size of the explanation-scale benchmark: the time of
// the first explanation after new trials (which fits the surrogate) and of
// every further explanation of the same data, of each kind, each computed
// for the first time (the engine's result cache is not what is measured,
// its fitted surrogate is).
type ScaleRow struct {
	Trials int `json:"trials"`
	// First is the first PDP's time, surrogate fit included; Fit the fit
	// alone; ConditionedOn the trials the GP conditions on.
	First         float64 `json:"first_seconds"`
	Fit           float64 `json:"fit_seconds"`
	ConditionedOn int     `json:"conditioned_on"`
	Approximate   bool    `json:"approximate"`
	// Further holds every further kind's time, by kind.
	Further map[string]float64 `json:"further_seconds"`
	// PeakRSS is the process's peak resident memory after the row (bytes),
	// when measured by the caller (the CLI runs each size in its own
	// process).
	PeakRSS int64 `json:"peak_rss_bytes,omitempty"`
}

// ScaleKinds are the further explanations timed, in order.
var ScaleKinds = []string{"pdp", "pdp-2d", "regional", "slice", "importance", "shapley", "ablation", "lpi", "bias"}

// ExplainScale times the explanations of a synthetic study of n trials with
// a fresh engine.
func ExplainScale(ctx context.Context, n int, seed uint64, progress func(step string)) (*ScaleRow, error) {
	h, err := ScaleHistory(n, seed)
	if err != nil {
		return nil, err
	}
	e, err := explain.New(explain.Config{Concurrency: 1})
	if err != nil {
		return nil, err
	}
	row := &ScaleRow{Trials: n, Further: map[string]float64{}}
	say := func(s string) {
		if progress != nil {
			progress(s)
		}
	}
	say(fmt.Sprintf("T = %d: first PDP (fits the surrogate)", n))
	start := time.Now()
	first, err := e.PDP(ctx, h, explain.PDPRequest{Params: []string{"lr"}})
	if err != nil {
		return nil, fmt.Errorf("first PDP: %w", err)
	}
	row.First = time.Since(start).Seconds()
	row.Fit = first.Surrogate.FitSeconds
	row.ConditionedOn, row.Approximate = first.Surrogate.ConditionedOn, first.Surrogate.Approximate
	requests := map[string]any{
		"pdp":        explain.PDPRequest{Params: []string{"batch"}},
		"pdp-2d":     explain.PDPRequest{Params: []string{"lr", "batch"}},
		"regional":   explain.RegionalRequest{Param: "dropout"},
		"slice":      explain.SliceRequest{Param: "units"},
		"importance": explain.ImportanceRequest{},
		"shapley":    explain.ShapleyRequest{Point: explain.PointBest},
		"ablation":   explain.AblationRequest{Source: explain.PointLast},
		"lpi":        explain.LPIRequest{},
		"bias":       explain.BiasRequest{},
	}
	for _, kind := range ScaleKinds {
		say(fmt.Sprintf("T = %d: %s", n, kind))
		start := time.Now()
		if _, err := e.Explain(ctx, h, requests[kind]); err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		row.Further[kind] = time.Since(start).Seconds()
	}
	return row, nil
}

// WriteScaleTable prints the rows as a table, one line per size: the first
// explanation's and the fit's seconds, every kind's further explanation,
// the slowest of them and the peak memory.
func WriteScaleTable(w io.Writer, rows []*ScaleRow) error {
	if len(rows) == 0 {
		return errors.New("bench: no rows")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "T\tGP on\tfirst (s)\tfit (s)\t")
	for _, k := range ScaleKinds {
		fmt.Fprintf(tw, "%s\t", k)
	}
	fmt.Fprintf(tw, "slowest further\tpeak RSS (MiB)\t\n")
	for _, r := range rows {
		on := fmt.Sprint(r.ConditionedOn)
		if r.Approximate {
			on += " (subset)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t%.2f\t", r.Trials, on, r.First, r.Fit)
		slowest := 0.0
		for _, k := range ScaleKinds {
			fmt.Fprintf(tw, "%.2f\t", r.Further[k])
			slowest = math.Max(slowest, r.Further[k])
		}
		rss := "-"
		if r.PeakRSS > 0 {
			rss = fmt.Sprintf("%.0f", float64(r.PeakRSS)/(1<<20))
		}
		fmt.Fprintf(tw, "%.2f\t%s\t\n", slowest, rss)
	}
	return tw.Flush()
}
