package prune

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Settings left out take Optuna's defaults, and the stored form names them
// all, so it reads back the same.
func TestParseDefaultsAndRoundTrip(t *testing.T) {
	for doc, want := range map[string]string{
		``:                  `{"type":"none"}`,
		`null`:              `{"type":"none"}`,
		`{}`:                `{"type":"none"}`,
		`{"type":"none"}`:   `{"type":"none"}`,
		`{"type":"median"}`: `{"type":"median","n_startup_trials":5,"n_warmup_steps":0,"interval_steps":1,"n_min_trials":1}`,
		`{"type":"percentile","percentile":25,"n_warmup_steps":10,"interval_steps":5}`: `{"type":"percentile","percentile":25,"n_startup_trials":5,"n_warmup_steps":10,"interval_steps":5,"n_min_trials":1}`,
		`{"type":"asha"}`: `{"type":"asha","min_resource":1,"reduction_factor":4,"min_early_stopping_rate":0,"bootstrap_count":0}`,
		`{"type":"asha","min_resource":2,"reduction_factor":3.0,"min_early_stopping_rate":1,"bootstrap_count":4}`: `{"type":"asha","min_resource":2,"reduction_factor":3,"min_early_stopping_rate":1,"bootstrap_count":4}`,
		`{"type":"hyperband","max_resource":81}`: `{"type":"hyperband","min_resource":1,"max_resource":81,"reduction_factor":3,"bootstrap_count":0}`,
		`{"type":"median","n_startup_trials":0}`: `{"type":"median","n_startup_trials":0,"n_warmup_steps":0,"interval_steps":1,"n_min_trials":1}`,
	} {
		c, err := Parse(json.RawMessage(doc))
		if err != nil {
			t.Errorf("Parse(%s): %v", doc, err)
			continue
		}
		b, err := json.Marshal(c)
		if err != nil || string(b) != want {
			t.Errorf("Parse(%s) is stored as %s (%v), want %s", doc, b, err, want)
		}
		var back Config
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c) {
			t.Errorf("%s reads back as %+v (%v), want %+v", b, back, err, c)
		}
	}
	if c, _ := Parse(json.RawMessage(`{"type":"median"}`)); c.Percentile != 50 {
		t.Errorf("median percentile %v", c.Percentile)
	}
}

// Every bad configuration is refused with a message that names the field.
func TestParseErrorsNameTheField(t *testing.T) {
	for doc, want := range map[string]string{
		`[]`:                                                                 "pruner must be a JSON object",
		`{"n_startup_trials":3}`:                                             "type is missing",
		`{"type":3}`:                                                         "type must be a string",
		`{"type":"threshold"}`:                                               `type "threshold" is not one of none, median, percentile, asha, hyperband`,
		`{"type":"none","n_warmup_steps":1}`:                                 "n_warmup_steps does not apply to the none pruner (its settings: none)",
		`{"type":"median","percentile":30}`:                                  "percentile does not apply to the median pruner",
		`{"type":"asha","n_warmup_steps":3}`:                                 "n_warmup_steps does not apply to the asha pruner (its settings: min_resource, reduction_factor, min_early_stopping_rate, bootstrap_count)",
		`{"type":"median","n_wramup_steps":3}`:                               "n_wramup_steps does not apply to the median pruner",
		`{"type":"percentile"}`:                                              "percentile is required",
		`{"type":"percentile","percentile":101}`:                             "percentile 101 must be in [0, 100]",
		`{"type":"percentile","percentile":-1}`:                              "percentile -1 must be in [0, 100]",
		`{"type":"percentile","percentile":"50"}`:                            "percentile must be a number",
		`{"type":"median","n_startup_trials":-1}`:                            "n_startup_trials -1 must be in [0, 1000000]",
		`{"type":"median","n_startup_trials":2.5}`:                           "n_startup_trials must be an integer, not 2.5",
		`{"type":"median","n_startup_trials":"5"}`:                           `n_startup_trials must be an integer, not "5"`,
		`{"type":"median","n_startup_trials":1e12}`:                          "n_startup_trials 1000000000000 is out of range",
		`{"type":"median","n_warmup_steps":-1}`:                              "n_warmup_steps -1 must be in [0, 1000000000]",
		`{"type":"median","n_warmup_steps":2e9}`:                             "n_warmup_steps 2000000000 must be in [0, 1000000000]",
		`{"type":"median","interval_steps":0}`:                               "interval_steps 0 must be in [1, 1000000000]",
		`{"type":"median","n_min_trials":0}`:                                 "n_min_trials 0 must be in [1, 1000000]",
		`{"type":"median","n_min_trials":1e20}`:                              "n_min_trials must be an integer, not 1e20",
		`{"type":"asha","min_resource":0}`:                                   "min_resource 0 must be in [1, 1000000000]",
		`{"type":"asha","reduction_factor":1}`:                               "reduction_factor 1 must be in [2, 1000]",
		`{"type":"asha","bootstrap_count":-2}`:                               "bootstrap_count -2 must be in [0, 1000000]",
		`{"type":"asha","min_early_stopping_rate":-1}`:                       "min_early_stopping_rate -1 must be ≥ 0",
		`{"type":"asha","min_early_stopping_rate":40}`:                       "min_early_stopping_rate 40 must be ≥ 0 and put the first rung",
		`{"type":"hyperband"}`:                                               "max_resource is required for the hyperband pruner",
		`{"type":"hyperband","min_resource":10,"max_resource":9}`:            "max_resource 9 must be in [min_resource 10, 1000000000]",
		`{"type":"hyperband","max_resource":27,"min_early_stopping_rate":1}`: "min_early_stopping_rate does not apply to the hyperband pruner",
	} {
		_, err := Parse(json.RawMessage(doc))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s): %v, want ErrInvalid with %q", doc, err, want)
		}
	}
	if _, err := json.Marshal(Config{Type: "median"}); err == nil {
		t.Error("an invalid configuration was written")
	}
}

func TestModelConfig(t *testing.T) {
	c, err := Parse([]byte(`{"type":"model"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.MinResource != 1 || c.ReductionFactor != 3 || c.MinChance != 0.05 || c.MinRankCorrelation != 0.5 {
		t.Errorf("defaults %+v, want min_resource 1, reduction_factor 3, min_chance 0.05, min_rank_correlation 0.5", c)
	}
	b, err := json.Marshal(c)
	if err != nil || string(b) != `{"type":"model","min_resource":1,"reduction_factor":3,"min_chance":0.05,"min_rank_correlation":0.5}` {
		t.Errorf("marshal: %s, %v", b, err)
	}
	// A stored configuration written before the setting existed reads back
	// with its default; −1 is allowed (trust every step).
	if c, err := Parse([]byte(`{"type":"model","min_resource":1,"reduction_factor":3,"min_chance":0.05}`)); err != nil || c.MinRankCorrelation != 0.5 {
		t.Errorf("an older stored configuration: %+v, %v", c, err)
	}
	if c, err := Parse([]byte(`{"type":"model","min_rank_correlation":-1}`)); err != nil || c.MinRankCorrelation != -1 {
		t.Errorf("min_rank_correlation -1: %+v, %v", c, err)
	}
	for doc, want := range map[string]string{
		`{"type":"model","min_chance":0}`:              "min_chance 0 must be in (0, 1)",
		`{"type":"model","min_chance":1}`:              "min_chance 1 must be in (0, 1)",
		`{"type":"model","min_chance":"a"}`:            "min_chance must be a number",
		`{"type":"model","min_rank_correlation":1}`:    "min_rank_correlation 1 must be in [-1, 1)",
		`{"type":"model","min_rank_correlation":-1.5}`: "min_rank_correlation -1.5 must be in [-1, 1)",
		`{"type":"asha","min_rank_correlation":0}`:     "min_rank_correlation does not apply to the asha pruner",
		`{"type":"model","max_resource":9}`:            "max_resource does not apply to the model pruner",
		`{"type":"model","reduction_factor":1}`:        "reduction_factor 1 must be in [2, 1000]",
		`{"type":"median","min_chance":0.1}`:           "min_chance does not apply to the median pruner",
	} {
		if _, err := Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", doc, err, want)
		}
	}
}
