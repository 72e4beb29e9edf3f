package explain

import (
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"xbo/history"
)

// The configuration footprint: a 2-D map of the configurations a study
// evaluated, so that a reader sees which parts of the space were searched
// and where the good trials lie (DeepCAVE's footprint plot, Sass et al.
// 2022, draws the same question with MDS). Here the map is the principal
// component analysis of the unit-cube encoding (space.Encode: a float or
// an integer on [0, 1], on a log scale where it is searched on one; a
// level at its bin's centre; an inactive parameter at −1, so that
// configurations without it sit apart). PCA is classical MDS of the
// Euclidean distances between those encodings, so the map keeps as much
// of the spread between configurations as two axes can, and says how much
// (Explained). Uniformly drawn configurations are placed on the same axes:
// the region they cover and the trials do not is the part of the space
// never searched.

// FootprintUniform is how many uniformly drawn configurations the map
// places beside the trials.
const FootprintUniform = 300

// FootprintResult is the map: every usable trial's place, the uniform
// configurations' places, the fraction of the encodings' variance each
// axis carries, and each parameter's weight on each axis (the components'
// loadings, signed so that each axis's largest weight is positive).
type FootprintResult struct {
	Params    []string         `json:"params"`
	Trials    []FootprintPoint `json:"trials"`
	Uniform   [][2]float64     `json:"uniform"`
	Explained [2]float64       `json:"explained"`
	Loadings  [][2]float64     `json:"loadings"`
}

// FootprintPoint is one usable trial on the map, with its objective value
// (the first objective's, with several).
type FootprintPoint struct {
	Trial int64   `json:"trial"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Value float64 `json:"value"`
}

// Footprint maps the usable trials of h (at least MinTrials). The uniform
// configurations are drawn with a fixed seed, so one study's map is the
// same on every request.
func Footprint(h *history.History) (*FootprintResult, error) {
	data, err := h.Encode(MinTrials)
	if err != nil {
		return nil, err
	}
	n, d := len(data.X), h.Space.Dim()
	x := mat.NewDense(n, d, nil)
	for i, row := range data.X {
		x.SetRow(i, row)
	}
	var pc stat.PC
	if !pc.PrincipalComponents(x, nil) {
		return nil, errors.New("explain: footprint: the principal components did not converge")
	}
	var vecs mat.Dense
	pc.VectorsTo(&vecs)
	vars := pc.VarsTo(nil)
	res := &FootprintResult{Params: h.Space.Names(), Loadings: make([][2]float64, d)}
	total := 0.0
	for _, v := range vars {
		total += v
	}
	// axes[k] is component k (a zero axis when there is no second one).
	var axes [2][]float64
	for k := range axes {
		axes[k] = make([]float64, d)
		if k >= min(vecs.RawMatrix().Cols, d) {
			continue
		}
		mat.Col(axes[k], k, &vecs)
		big := 0
		for j := range axes[k] {
			if math.Abs(axes[k][j]) > math.Abs(axes[k][big]) {
				big = j
			}
		}
		if axes[k][big] < 0 {
			for j := range axes[k] {
				axes[k][j] = -axes[k][j]
			}
		}
		if total > 0 && k < len(vars) {
			res.Explained[k] = vars[k] / total
		}
		for j := range d {
			res.Loadings[j][k] = axes[k][j]
		}
	}
	// Places are measured from the trials' mean, as the components are.
	mean := make([]float64, d)
	for _, row := range data.X {
		for j, v := range row {
			mean[j] += v / float64(n)
		}
	}
	place := func(u []float64) [2]float64 {
		var p [2]float64
		for k := range axes {
			for j, v := range u {
				p[k] += (v - mean[j]) * axes[k][j]
			}
		}
		return p
	}
	for i, row := range data.X {
		p := place(row)
		t := &h.Trials[data.Index[i]]
		res.Trials = append(res.Trials, FootprintPoint{Trial: t.Number, X: p[0], Y: p[1], Value: data.Y[i]})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, u := range h.Space.Sample(rng, FootprintUniform) {
		res.Uniform = append(res.Uniform, place(u))
	}
	return res, nil
}
