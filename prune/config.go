package prune

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Pruner types.
const (
	None       = "none"
	Median     = "median"
	Percentile = "percentile"
	ASHA       = "asha"
	Hyperband  = "hyperband"
	Model      = "model"
)

// Types lists the pruner types.
var Types = []string{None, Median, Percentile, ASHA, Hyperband, Model}

// Limits of the settings. They keep every rung step and every Hyperband
// budget within int64 and the work of one decision small (at most
// log₂(MaxSteps) ≈ 30 rungs or brackets).
const (
	MaxSteps           = 1_000_000_000 // warm-up steps, interval, resources
	MaxTrialCounts     = 1_000_000     // startup trials, minimum trials, bootstrap count
	MaxReductionFactor = 1000
)

// Config is a study's pruner: its type and the settings that apply to it
// (the others are zero and never written). Parse it from a study's
// settings with Parse; its JSON form (MarshalJSON) names every setting of
// its type, defaults included, so a stored configuration reads back the
// same whatever defaults a later version has.
type Config struct {
	Type string
	// Median and percentile pruners.
	NStartupTrials int     // no pruning before this many trials are complete [5]
	NWarmupSteps   int64   // no pruning at steps below this [0]
	IntervalSteps  int64   // check once per this many steps after the warm-up [1]
	NMinTrials     int     // no pruning unless this many complete trials reported the step [1]
	Percentile     float64 // percentile pruner: the percentile to beat, in [0, 100] (median: 50)
	// Successive halving (asha) and Hyperband.
	MinResource          int64 // the first rung's step [1]
	MaxResource          int64 // hyperband: the largest step a trial runs to (required)
	ReductionFactor      int64 // η: 1/η of the trials at a rung go on [asha 4, hyperband 3]
	MinEarlyStoppingRate int   // asha: the first rung is at MinResource·η^rate [0]
	BootstrapCount       int   // trials that must reach a rung before any passes it [0]
	// Model: at the rungs MinResource·η^k [1, 3], a trial stops when the
	// optimizer's configuration × budget model gives it less than MinChance
	// of ending better than the best complete trial [0.05], at the steps
	// where the complete trials' values rank configurations as their final
	// values do: Spearman's correlation between the two has a lower 90%
	// bound of at least MinRankCorrelation [0.5; −1 trusts every step once
	// 5 trials are complete].
	MinChance          float64
	MinRankCorrelation float64
}

// settings names the JSON fields of each type, in the order they are written.
var settings = map[string][]string{
	None:       {},
	Median:     {"n_startup_trials", "n_warmup_steps", "interval_steps", "n_min_trials"},
	Percentile: {"percentile", "n_startup_trials", "n_warmup_steps", "interval_steps", "n_min_trials"},
	ASHA:       {"min_resource", "reduction_factor", "min_early_stopping_rate", "bootstrap_count"},
	Hyperband:  {"min_resource", "max_resource", "reduction_factor", "bootstrap_count"},
	Model:      {"min_resource", "reduction_factor", "min_chance", "min_rank_correlation"},
}

// ErrInvalid is wrapped by every error of Parse and Validate.
var ErrInvalid = errors.New("invalid pruner")

// Parse reads a pruner configuration: {"type": ..., settings...}. An empty
// document, null or {} is the "none" pruner. Unknown fields, settings that
// do not apply to the type, and values out of range are errors that name
// the field. Settings left out take Optuna's defaults.
func Parse(doc json.RawMessage) (Config, error) {
	trimmed := bytes.TrimSpace(doc)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return Config{Type: None}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return Config{}, fmt.Errorf("%w: pruner must be a JSON object: %v", ErrInvalid, err)
	}
	if len(fields) == 0 {
		return Config{Type: None}, nil
	}
	rawType, ok := fields["type"]
	if !ok {
		return Config{}, fmt.Errorf("%w: pruner: type is missing (one of %s)", ErrInvalid, strings.Join(Types, ", "))
	}
	var typ string
	if err := json.Unmarshal(rawType, &typ); err != nil {
		return Config{}, fmt.Errorf("%w: pruner: type must be a string, one of %s", ErrInvalid, strings.Join(Types, ", "))
	}
	allowed, ok := settings[typ]
	if !ok {
		return Config{}, fmt.Errorf("%w: pruner: type %q is not one of %s", ErrInvalid, typ, strings.Join(Types, ", "))
	}
	var names []string
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name != "type" && !slices.Contains(allowed, name) {
			return Config{}, fmt.Errorf("%w: pruner: %s does not apply to the %s pruner (its settings: %s)", ErrInvalid, name, typ, settingList(allowed))
		}
	}
	c := defaults(typ)
	for _, name := range allowed {
		raw, given := fields[name]
		if !given {
			continue
		}
		if setting, ok := c.field(name).(*float64); ok {
			// A real-valued setting; the others are whole numbers.
			var f float64
			if err := json.Unmarshal(raw, &f); err != nil {
				return Config{}, fmt.Errorf("%w: pruner: %s must be a number, not %s", ErrInvalid, name, raw)
			}
			*setting = f
			continue
		}
		v, err := integer(name, raw)
		if err != nil {
			return Config{}, err
		}
		if v < -MaxSteps || v > 10*MaxSteps {
			return Config{}, fmt.Errorf("%w: pruner: %s %d is out of range (see its limit in docs/api.md)", ErrInvalid, name, v)
		}
		c.set(name, v)
	}
	if typ == Percentile {
		if _, given := fields["percentile"]; !given {
			return Config{}, fmt.Errorf("%w: pruner: percentile is required for the percentile pruner (a number in [0, 100]; the median pruner is percentile 50)", ErrInvalid)
		}
	}
	if typ == Hyperband {
		if _, given := fields["max_resource"]; !given {
			return Config{}, fmt.Errorf("%w: pruner: max_resource is required for the hyperband pruner (the step at which a trial is fully trained, e.g. the number of epochs)", ErrInvalid)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func settingList(allowed []string) string {
	if len(allowed) == 0 {
		return "none"
	}
	return strings.Join(allowed, ", ")
}

// integer reads a setting that must be a whole number (2, 2.0 or 2e3).
func integer(name string, raw json.RawMessage) (int64, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("%w: pruner: %s must be an integer, not %s", ErrInvalid, name, raw)
	}
	if f != math.Trunc(f) || math.Abs(f) > 1e15 {
		return 0, fmt.Errorf("%w: pruner: %s must be an integer, not %s", ErrInvalid, name, raw)
	}
	return int64(f), nil
}

// defaults are Optuna's defaults for each type (except that the percentile
// has none: Parse requires it).
func defaults(typ string) Config {
	c := Config{Type: typ}
	switch typ {
	case Median, Percentile:
		c.NStartupTrials, c.IntervalSteps, c.NMinTrials = 5, 1, 1
		if typ == Median {
			c.Percentile = 50
		}
	case ASHA:
		c.MinResource, c.ReductionFactor = 1, 4
	case Hyperband:
		c.MinResource, c.ReductionFactor = 1, 3
	case Model:
		c.MinResource, c.ReductionFactor, c.MinChance, c.MinRankCorrelation = 1, 3, 0.05, 0.5
	}
	return c
}

// field returns a pointer to the setting of that JSON name (nil for an
// unknown name).
func (c *Config) field(name string) any {
	switch name {
	case "percentile":
		return &c.Percentile
	case "n_startup_trials":
		return &c.NStartupTrials
	case "n_warmup_steps":
		return &c.NWarmupSteps
	case "interval_steps":
		return &c.IntervalSteps
	case "n_min_trials":
		return &c.NMinTrials
	case "min_resource":
		return &c.MinResource
	case "max_resource":
		return &c.MaxResource
	case "reduction_factor":
		return &c.ReductionFactor
	case "min_early_stopping_rate":
		return &c.MinEarlyStoppingRate
	case "bootstrap_count":
		return &c.BootstrapCount
	case "min_chance":
		return &c.MinChance
	case "min_rank_correlation":
		return &c.MinRankCorrelation
	}
	return nil
}

// set stores an integer setting.
func (c *Config) set(name string, v int64) {
	switch p := c.field(name).(type) {
	case *int:
		*p = clampInt(v)
	case *int64:
		*p = v
	}
}

// clampInt converts a count that Parse checked to be within ±10·MaxSteps
// without overflowing a 32-bit int (Validate then names it as out of range).
func clampInt(v int64) int {
	return int(max(min(v, math.MaxInt32), math.MinInt32))
}

// Validate checks the settings against their ranges and limits.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: pruner: "+format, append([]any{ErrInvalid}, args...)...)
	}
	type bound struct {
		name      string
		v, lo, hi int64
	}
	var bounds []bound
	switch c.Type {
	case None:
		return nil
	case Median, Percentile:
		if math.IsNaN(c.Percentile) || c.Percentile < 0 || c.Percentile > 100 {
			return bad("percentile %v must be in [0, 100]", c.Percentile)
		}
		bounds = []bound{
			{"n_startup_trials", int64(c.NStartupTrials), 0, MaxTrialCounts},
			{"n_warmup_steps", c.NWarmupSteps, 0, MaxSteps},
			{"interval_steps", c.IntervalSteps, 1, MaxSteps},
			{"n_min_trials", int64(c.NMinTrials), 1, MaxTrialCounts},
		}
	case ASHA, Hyperband:
		bounds = []bound{
			{"min_resource", c.MinResource, 1, MaxSteps},
			{"reduction_factor", c.ReductionFactor, 2, MaxReductionFactor},
			{"bootstrap_count", int64(c.BootstrapCount), 0, MaxTrialCounts},
		}
	case Model:
		if math.IsNaN(c.MinChance) || c.MinChance <= 0 || c.MinChance >= 1 {
			return bad("min_chance %v must be in (0, 1)", c.MinChance)
		}
		if math.IsNaN(c.MinRankCorrelation) || c.MinRankCorrelation < -1 || c.MinRankCorrelation >= 1 {
			return bad("min_rank_correlation %v must be in [-1, 1)", c.MinRankCorrelation)
		}
		bounds = []bound{
			{"min_resource", c.MinResource, 1, MaxSteps},
			{"reduction_factor", c.ReductionFactor, 2, MaxReductionFactor},
		}
	default:
		return bad("type %q is not one of %s", c.Type, strings.Join(Types, ", "))
	}
	for _, b := range bounds {
		if b.v < b.lo || b.v > b.hi {
			return bad("%s %d must be in [%d, %d]", b.name, b.v, b.lo, b.hi)
		}
	}
	switch {
	case c.Type == ASHA && (c.MinEarlyStoppingRate < 0 || rungStep(c.MinResource, c.ReductionFactor, int64(c.MinEarlyStoppingRate)) > MaxSteps):
		return bad("min_early_stopping_rate %d must be ≥ 0 and put the first rung, min_resource·reduction_factor^rate, at most at step %d", c.MinEarlyStoppingRate, MaxSteps)
	case c.Type == Hyperband && (c.MaxResource < c.MinResource || c.MaxResource > MaxSteps):
		return bad("max_resource %d must be in [min_resource %d, %d]", c.MaxResource, c.MinResource, MaxSteps)
	}
	return nil
}

// MarshalJSON writes the type and every setting that applies to it.
func (c Config) MarshalJSON() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"type":%q`, c.Type)
	for _, name := range settings[c.Type] {
		v := c.field(name)
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&buf, `,%q:%s`, name, b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON is Parse.
func (c *Config) UnmarshalJSON(b []byte) error {
	parsed, err := Parse(b)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}
