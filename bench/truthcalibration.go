package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"xbo/explain"
	"xbo/explain/pdp"
	"xbo/history"
)

// TruthCalibrationOptions configure TruthCalibration: how well the PDP
// bands of the explanation engine cover the true PD on the truth catalogue.
type TruthCalibrationOptions struct {
	TruthSuiteOptions
	// Surrogates among "gp" and "forest" (default gp).
	Surrogates []string
	// Bands are the band estimators compared (default: the engine's
	// default band, whatever it is).
	Bands []string
	// Samples is the PDPs' Monte Carlo points (0: the engine's default);
	// TruthSamples the Monte Carlo points of a PD that is not known
	// exactly (default 50,000).
	Samples, TruthSamples int
}

// TruthCalibrationCell is one (problem, data, size, surrogate, band),
// pooled over seeds, parameters and grid points.
type TruthCalibrationCell struct {
	Problem   string `json:"problem"`
	HeldOut   bool   `json:"heldout"`
	Data      string `json:"data"`
	Trials    int    `json:"trials"`
	Surrogate string `json:"surrogate"`
	Band      string `json:"band"`
	BandCoverage
	// Where the band fails: at the first and last grid value (Ends) or
	// between them (Inside), and on flat curves (a parameter whose true PD
	// varies over less than 5% of the largest variation among the
	// problem's parameters: inert and weak ones). Covered95 counts.
	EndPoints       int     `json:"end_points"`
	EndCovered95    int     `json:"end_covered95"`
	InsidePoints    int     `json:"inside_points"`
	InsideCovered95 int     `json:"inside_covered95"`
	FlatPoints      int     `json:"flat_points"`
	FlatCovered95   int     `json:"flat_covered95"`
	TruthMaxStdErr  float64 `json:"truth_max_se"` // 0 for exact truths
	// Plateaus counts the grid points whose nearest trials (at least 3)
	// all have one value, and PlateausHeld those whose 95% band holds it.
	Plateaus     int `json:"plateaus"`
	PlateausHeld int `json:"plateaus_held"`
}

// TruthCalibrationSummary pools the cells of one part, surrogate and band.
type TruthCalibrationSummary struct {
	Part       string  `json:"part"`
	Surrogate  string  `json:"surrogate"`
	Band       string  `json:"band"`
	Cells      int     `json:"cells"`
	Points     int     `json:"points"`
	Coverage95 float64 `json:"coverage95"`
	// MinCell and MaxCell are the range of the cells' 95% coverage;
	// Below80 counts cells under 0.80.
	MinCell    float64 `json:"min_cell"`
	MaxCell    float64 `json:"max_cell"`
	Below80    int     `json:"cells_below_080"`
	Coverage68 float64 `json:"coverage68"`
	WidthRatio float64 `json:"width_ratio"`
	// Plateaus and PlateausHeld sum the cells'.
	Plateaus     int `json:"plateaus"`
	PlateausHeld int `json:"plateaus_held"`
}

// TruthCalibrationResult is the benchmark's outcome.
type TruthCalibrationResult struct {
	TruthRunInfo
	Cells     []TruthCalibrationCell    `json:"cells"`
	Summaries []TruthCalibrationSummary `json:"summaries"`
}

// calibrationPoint is one line of the raw dump: a grid point of one PDP
// with its truth.
type calibrationPoint struct {
	pointHeader
	Surrogate string   `json:"surrogate"`
	Band      string   `json:"band"`
	GridIndex int      `json:"grid_index"`
	GridValue float64  `json:"grid_value"`
	Estimate  *float64 `json:"estimate"`
	Lower     *float64 `json:"lower"`
	Upper     *float64 `json:"upper"`
	Truth     *float64 `json:"truth"`
	TruthSE   *float64 `json:"truth_se"`
	// Terms is the band's make-up at the grid point (sd of each term and
	// the variance factor), so a miss can be traced to what the band lacked.
	Terms bandTerms `json:"terms"`
}

// bandTerms are a calibrated band's terms at one grid point (zero where a
// band has none).
type bandTerms struct {
	SD            float64 `json:"sd"`
	VarianceScale float64 `json:"variance_scale,omitempty"`
	MonteCarloSD  float64 `json:"mc_sd,omitempty"`
	HyperSD       float64 `json:"hyper_sd,omitempty"`
	DiscrepancySD float64 `json:"discrepancy_sd,omitempty"`
	DoubtSD       float64 `json:"doubt_sd,omitempty"`
	// Extrapolated says whether the engine flagged the grid point as
	// resting on extrapolation (explain.Extrapolation).
	Extrapolated bool `json:"extrapolated,omitempty"`
}

// termsAt reads the band's terms at grid point g of a PDP result.
func termsAt(r *explain.PDPResult, g int) bandTerms {
	at := func(v []float64) float64 {
		if g < len(v) {
			return v[g]
		}
		return 0
	}
	t := bandTerms{SD: at(r.SD), VarianceScale: r.VarianceScale, MonteCarloSD: at(r.MonteCarloSD), HyperSD: at(r.HyperSD),
		DiscrepancySD: r.DiscrepancySD, DoubtSD: at(r.DoubtSD)}
	if e := r.Extrapolation; e != nil {
		t.Extrapolated = slices.Contains(e.Beyond, g)
	}
	return t
}

// calTally accumulates one cell within one job.
type calTally struct {
	band                                      string
	points, c95, c68                          int
	hw, ae, truthSE                           float64
	ends, endsC, inside, insideC, flat, flatC int
	plateaus, plateausHeld                    int
}

func (t *calTally) add(u *calTally) {
	t.band = u.band
	t.points += u.points
	t.c95 += u.c95
	t.c68 += u.c68
	t.hw += u.hw
	t.ae += u.ae
	t.truthSE = math.Max(t.truthSE, u.truthSE)
	t.ends += u.ends
	t.endsC += u.endsC
	t.inside += u.inside
	t.insideC += u.insideC
	t.flat += u.flat
	t.flatC += u.flatC
	t.plateaus += u.plateaus
	t.plateausHeld += u.plateausHeld
}

// calKey identifies a cell: problem index, kind, trials, surrogate, band.
type calKey struct {
	problem         int
	kind            string
	trials          int
	surrogate, band string
}

// z95 and z68 turn a 95% half-width into a standard deviation and that into
// a 68% half-width (the normal quantiles 0.975 and 0.84).
const (
	z95 = 1.959963984540054
	z68 = 0.994457883209753
)

// TruthCalibration runs the PDP band calibration on the truth catalogue.
func TruthCalibration(ctx context.Context, o TruthCalibrationOptions) (*TruthCalibrationResult, error) {
	run, err := o.prepare("calibration")
	if err != nil {
		return nil, err
	}
	if len(o.Surrogates) == 0 {
		o.Surrogates = []string{explain.SurrogateGP}
	}
	if len(o.Bands) == 0 {
		o.Bands = []string{""} // the engine's default
	}
	if o.TruthSamples == 0 {
		o.TruthSamples = 50000
	}
	if o.TruthSamples < 100 || o.Samples < 0 {
		return nil, fmt.Errorf("bench: calibration: truth samples %d (≥ 100) and samples %d (≥ 0) out of range", o.TruthSamples, o.Samples)
	}
	truths := make([]*truePD, len(run.problems))
	flat := make([][]bool, len(run.problems))
	if err := truthPhase(ctx, run.problems, o.Workers, func(i int, p *TruthProblem) error {
		t, err := pdTruth(p, o.TruthSamples)
		if err != nil {
			return err
		}
		truths[i], flat[i] = t, flatParams(p, t)
		return nil
	}); err != nil {
		return nil, err
	}
	maxSize := slices.Max(o.Sizes)
	results, err := runTruthJobs(ctx, &o.TruthSuiteOptions, run, func(p *TruthProblem, _ string) int { return maxSize * p.Space.Dim() },
		func(j truthJob, p *TruthProblem, data *TruthData, e *explain.Engine) (map[calKey]*calTally, error) {
			return o.calibrateJob(ctx, e, run.points, j, p, data, truths[j.problem], flat[j.problem])
		})
	if err != nil {
		return nil, err
	}
	res := &TruthCalibrationResult{TruthRunInfo: o.info(run)}
	for i, p := range run.problems {
		if p.PD == nil {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: true PD by Monte Carlo with %d points (largest standard error in the cells' truth_max_se)", p.Name, o.TruthSamples))
		}
		for _, kind := range o.Data {
			for _, size := range o.Sizes {
				n := size * p.Space.Dim()
				for _, sur := range o.Surrogates {
					for _, band := range o.Bands {
						key := calKey{i, kind, n, sur, band}
						sum := &calTally{}
						for _, r := range results {
							if t, ok := r[key]; ok {
								sum.add(t)
							}
						}
						if sum.points > 0 {
							res.Cells = append(res.Cells, sum.cell(p, kind, n, sur))
						}
					}
				}
			}
		}
	}
	res.Summaries = summarizeCalibration(res.Cells)
	return res, nil
}

// flatParams marks the parameters whose true PD varies over less than 5% of
// the largest variation among the problem's parameters.
func flatParams(p *TruthProblem, t *truePD) []bool {
	ranges := make([]float64, p.Space.Dim())
	for j := range ranges {
		grid, _ := p.Space.Grid(j, pdp.DefaultGridSize)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range grid {
			pd := t.at(j, v)
			lo, hi = math.Min(lo, pd), math.Max(hi, pd)
		}
		ranges[j] = hi - lo
	}
	top := slices.Max(ranges)
	flat := make([]bool, len(ranges))
	for j, r := range ranges {
		flat[j] = r <= 0.05*top
	}
	return flat
}

// calibrateJob explains every prefix size of one data set with every
// surrogate and band and compares each PDP with the truth.
func (o *TruthCalibrationOptions) calibrateJob(ctx context.Context, engine *explain.Engine, points *pointWriter, j truthJob,
	p *TruthProblem, data *TruthData, truth *truePD, flat []bool) (map[calKey]*calTally, error) {
	sp := p.Space
	out := map[calKey]*calTally{}
	for _, size := range o.Sizes {
		n := size * sp.Dim()
		h := data.prefix(n).history(p)
		for _, sur := range o.Surrogates {
			for _, band := range o.Bands {
				t := &calTally{}
				for pi, param := range sp.Params {
					res, err := engine.PDP(ctx, h, explain.PDPRequest{Params: []string{param.Name}, Samples: o.Samples,
						Band: band, Surrogate: explain.Surrogate{Kind: sur}})
					if err != nil {
						return nil, fmt.Errorf("bench: calibration %s %s seed %d n=%d %s %q: %w", p.Name, j.kind, j.seed, n, sur, band, err)
					}
					head, err := newPointHeader(p, j, n, param.Name, res.About)
					if err != nil {
						return nil, err
					}
					t.band = string(res.Band)
					var batch []any
					for g, v := range res.Grid {
						tv, se := truth.withError(pi, v)
						hw := (res.Upper[g] - res.Lower[g]) / 2
						e := math.Abs(res.Mean[g] - tv)
						in95, in68 := covers(res.Mean[g], res.Lower[g], res.Upper[g], tv, 1), covers(res.Mean[g], res.Lower[g], res.Upper[g], tv, z68/z95)
						t.points++
						t.ae += e
						t.hw += hw
						t.truthSE = math.Max(t.truthSE, se)
						t.c95 += b2i(in95)
						t.c68 += b2i(in68)
						if g == 0 || g == len(res.Grid)-1 {
							t.ends++
							t.endsC += b2i(in95)
						} else {
							t.inside++
							t.insideC += b2i(in95)
						}
						if flat[pi] {
							t.flat++
							t.flatC += b2i(in95)
						}
						batch = append(batch, calibrationPoint{pointHeader: head, Surrogate: sur, Band: t.band, GridIndex: g, GridValue: v,
							Estimate: finite(res.Mean[g]), Lower: finite(res.Lower[g]), Upper: finite(res.Upper[g]), Truth: finite(tv), TruthSE: finite(se),
							Terms: termsAt(res, g)})
					}
					if err := points.write(batch); err != nil {
						return nil, err
					}
					for g, v := range observedPlateaus(h, pi, res.Grid) {
						t.plateaus++
						t.plateausHeld += b2i(res.Lower[g] <= v && v <= res.Upper[g])
					}
				}
				out[calKey{j.problem, j.kind, n, sur, band}] = t
			}
		}
	}
	return out, nil
}

// observedPlateaus maps each grid point of parameter j (grid in natural
// values) whose nearest usable trials — at least 3, the parameter active —
// all have the same value to that value: an observed plateau, which no
// band should exclude. Nearness is on the parameter's unit-cube scale.
func observedPlateaus(h *history.History, j int, grid []float64) map[int]float64 {
	p := &h.Space.Params[j]
	unit := make([]float64, len(grid))
	for g, v := range grid {
		unit[g] = p.ToUnit(v)
	}
	groups := map[int][]float64{}
	for _, tr := range h.Trials {
		if !tr.Usable() || math.IsNaN(tr.Params[j]) {
			continue
		}
		u := p.ToUnit(tr.Params[j])
		best, bd := 0, math.Inf(1)
		for g, gu := range unit {
			if d := math.Abs(gu - u); d < bd {
				best, bd = g, d
			}
		}
		groups[best] = append(groups[best], tr.Value)
	}
	out := map[int]float64{}
	for g, vals := range groups {
		if len(vals) >= 3 && !slices.ContainsFunc(vals, func(v float64) bool { return v != vals[0] }) {
			out[g] = vals[0]
		}
	}
	return out
}

// covers says whether the band [lower, upper] around mean, each side
// shrunk by the factor (z68/z95 for the 68% band of a 95% one), holds v.
// A calibrated band may be asymmetric: the union of two models' bands.
func covers(mean, lower, upper, v, factor float64) bool {
	return mean-factor*(mean-lower) <= v && v <= mean+factor*(upper-mean)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *calTally) cell(p *TruthProblem, kind string, n int, sur string) TruthCalibrationCell {
	return TruthCalibrationCell{Problem: p.Name, HeldOut: p.HeldOut, Data: kind, Trials: n, Surrogate: sur, Band: t.band,
		BandCoverage: bandCoverage(t.points, t.c95, t.c68, t.hw, t.ae),
		EndPoints:    t.ends, EndCovered95: t.endsC, InsidePoints: t.inside, InsideCovered95: t.insideC,
		FlatPoints: t.flat, FlatCovered95: t.flatC, TruthMaxStdErr: t.truthSE, Plateaus: t.plateaus, PlateausHeld: t.plateausHeld}
}

// summarizeCalibration pools cells per part, surrogate and band.
func summarizeCalibration(cells []TruthCalibrationCell) []TruthCalibrationSummary {
	var out []TruthCalibrationSummary
	index := map[string]int{}
	hw := map[string]float64{}
	ae := map[string]float64{}
	for _, c := range cells {
		part := "tune"
		if c.HeldOut {
			part = "held-out"
		}
		k := part + "\x00" + c.Surrogate + "\x00" + c.Band
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, TruthCalibrationSummary{Part: part, Surrogate: c.Surrogate, Band: c.Band, MinCell: 1})
		}
		s := &out[i]
		n := float64(c.Points)
		s.Cells++
		s.Points += c.Points
		s.Coverage95 += c.Coverage95 * n
		s.Coverage68 += c.Coverage68 * n
		s.MinCell, s.MaxCell = math.Min(s.MinCell, c.Coverage95), math.Max(s.MaxCell, c.Coverage95)
		s.Below80 += b2i(c.Coverage95 < 0.80)
		s.Plateaus += c.Plateaus
		s.PlateausHeld += c.PlateausHeld
		hw[k] += c.WidthRatio * c.MAE * n
		ae[k] += c.MAE * n
	}
	for k, i := range index {
		s := &out[i]
		s.Coverage95 /= float64(s.Points)
		s.Coverage68 /= float64(s.Points)
		s.WidthRatio = hw[k] / math.Max(ae[k], 1e-300)
	}
	// Tune first.
	slices.SortStableFunc(out, func(a, b TruthCalibrationSummary) int { return b2i(a.Part != "tune") - b2i(b.Part != "tune") })
	return out
}

// WriteTable prints the cells and summaries of each part apart, with the
// targets, then the notes.
func (r *TruthCalibrationResult) WriteTable(w io.Writer) error {
	frac := func(k, n int) string {
		if n == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", float64(k)/float64(n))
	}
	for _, part := range []string{"tune", "held-out"} {
		var cells []TruthCalibrationCell
		for _, c := range r.Cells {
			if c.HeldOut == (part == "held-out") {
				cells = append(cells, c)
			}
		}
		if len(cells) == 0 || !r.header(w, part) {
			continue
		}
		tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "problem\tdata\tT\tsurrogate\tband\tpoints\tcover95\tcover68\thw/MAE\tMAE\tends95\tinside95\tflat95\ttruth se\t")
		for _, c := range cells {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.3g\t%s\t%s\t%s\t%.2g\t\n", c.Problem, c.Data, c.Trials, c.Surrogate, c.Band,
				c.Points, c.Coverage95, c.Coverage68, c.WidthRatio, c.MAE, frac(c.EndCovered95, c.EndPoints),
				frac(c.InsideCovered95, c.InsidePoints), frac(c.FlatCovered95, c.FlatPoints), c.TruthMaxStdErr)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s part pooled (targets for the default band: 95%% coverage in [0.90, 0.98], every cell ≥ 0.80, hw/MAE ≤ 4):\n", part)
		tw = tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "surrogate\tband\tcells\tcover95\tcells' cover95\tcells < 0.80\tcover68\thw/MAE\tplateaus held\t")
		for _, s := range r.Summaries {
			if s.Part == part {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.2f–%.2f\t%d\t%.3f\t%.2f\t%d of %d\t\n", s.Surrogate, s.Band, s.Cells, s.Coverage95, s.MinCell, s.MaxCell,
					s.Below80, s.Coverage68, s.WidthRatio, s.PlateausHeld, s.Plateaus)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return writeNotes(w, r.Notes)
}
