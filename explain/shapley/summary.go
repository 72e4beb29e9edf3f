package shapley

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"xbo/space"
)

// Summary is the flat JSON of `xbo explain shapley --json`:
//
//	{"point": {...}, "payout": {"mean": .., "se": .., "cb": ..},
//	 "mean": {"<param>": φ}, "se": {...}, "cb": {...},
//	 "ci95": {"mean": {"<param>": [lo, hi]}, ...}, "method": .., "tau": ..}
//
// with one key per output of the explained function (mean, se and cb for
// ShapleyMBO; the acquisition's name otherwise). Intervals of exact methods
// have zero width: the values are exact for the background used.
type Summary struct {
	Point   map[string]any
	Outputs []string
	Payout  map[string]float64
	Values  map[string]map[string]float64
	CI      map[string]map[string][2]float64
	Method  Method
	Tau     *float64
	Samples int
}

// Summarize flattens an explanation; s (optional) turns the point into
// natural values with parameter names.
func (e *Explanation) Summarize(s *space.Space) (*Summary, error) {
	if e == nil {
		return nil, errors.New("shapley: nil explanation")
	}
	sum := &Summary{Payout: map[string]float64{}, Values: map[string]map[string]float64{},
		CI: map[string]map[string][2]float64{}, Method: e.Method, Tau: e.Tau, Samples: e.Samples}
	if s != nil {
		if s.Dim() != len(e.Point) {
			return nil, fmt.Errorf("shapley: summary: space has %d parameters, explanation %d", s.Dim(), len(e.Point))
		}
		sum.Point = s.ToMap(s.Decode(e.Point))
	} else {
		sum.Point = map[string]any{}
		for j, name := range e.Params {
			sum.Point[name] = e.Point[j]
		}
	}
	for _, a := range e.Outputs {
		switch a.Output {
		case "point", "payout", "ci95", "method", "tau", "samples":
			return nil, fmt.Errorf("shapley: summary: output name %q collides with a summary key", a.Output)
		}
		sum.Outputs = append(sum.Outputs, a.Output)
		sum.Payout[a.Output] = a.Payout
		vals := map[string]float64{}
		ci := map[string][2]float64{}
		for j, name := range e.Params {
			vals[name] = a.Phi[j]
			ci[name] = [2]float64{a.Lower[j], a.Upper[j]}
		}
		sum.Values[a.Output] = vals
		sum.CI[a.Output] = ci
	}
	return sum, nil
}

// MarshalJSON writes the flat shape documented on Summary.
func (s *Summary) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"point":  s.Point,
		"payout": s.Payout,
		"ci95":   s.CI,
		"method": s.Method,
	}
	if s.Tau != nil {
		m["tau"] = *s.Tau
	}
	if s.Samples > 0 {
		m["samples"] = s.Samples
	}
	for _, o := range s.Outputs {
		m[o] = s.Values[o]
	}
	for k, v := range s.Payout {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("shapley: summary: payout %q is %v", k, v)
		}
	}
	return json.Marshal(m)
}
