package importer

import (
	"xbo/history"

	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"xbo/space"
)

// SMAC3 writes, per run, runhistory.json and configspace.json into one
// directory (smac3-output/run_<seed>/ for SMAC 1, <output>/<name>/<seed>/ for
// SMAC 2). runhistory.json holds
//
//	"configs":        {"<id>": {name: value, ...}}   (only active parameters)
//	"config_origins": {"<id>": "Sobol" | "Local Search" | ...}   (optional)
//	"data": one entry per run, in one of three shapes:
//	   v1 (SMAC 1.x):  [[config_id, instance, seed, budget], [cost, time, {"__enum__": "StatusType.SUCCESS"}, start, end, info]]
//	   v2 (SMAC 2.0):  [config_id, instance, seed, budget, cost, time, status, start, end, info]
//	   v2 (SMAC 2.1+): {"config_id", "instance", "seed", "budget", "cost", "time", "cpu_time", "status", ...}
//	   with v2 status codes 0 running, 1 success, 2 crashed, 3 timeout, 4 memory out.
//
// Costs of crashed runs are usually Infinity, which Python's json writes as a
// bare literal (handled by decodeJSON). configspace.json is ConfigSpace's JSON
// format (json_format_version 0.4 or ConfigSpace 1.x): hyperparameters
// uniform_float/int, normal_float/int, beta_float/int, categorical, ordinal,
// constant; conditions EQ, NEQ, LT, GT, IN, AND, OR; forbidden clauses.

// SMACOptions tunes the SMAC3 import.
type SMACOptions struct {
	// AllBudgets imports every run of a multi-fidelity run as a trial of
	// its own, mixing values at different budgets. By default a
	// configuration's runs make one trial: its value from its highest
	// budget, its lower budgets as intermediate values, and pruned when it
	// stopped below the run's highest budget (see groupBudgets).
	AllBudgets bool
	// SeedsApart imports each seed's run of a configuration as a trial of
	// its own. By default the runs of one configuration (per instance and
	// budget) over several seeds are one trial: the mean of their values
	// (see groupSeeds).
	SeedsApart bool
}

// FindSMACRun locates the directory holding runhistory.json under dir (dir
// itself, or the only run directory below it).
func FindSMACRun(dir string) (string, error) {
	if st, err := os.Stat(dir); err != nil {
		return "", err
	} else if !st.IsDir() {
		if filepath.Base(dir) == "runhistory.json" {
			return filepath.Dir(dir), nil
		}
		return "", fmt.Errorf("%s is neither a SMAC3 run directory nor a runhistory.json", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "runhistory.json")); err == nil {
		return dir, nil
	}
	var found []string
	root := filepath.Clean(dir)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.Count(strings.TrimPrefix(path, root), string(filepath.Separator)) > 4 {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "runhistory.json" {
			found = append(found, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: no runhistory.json in it or below it", dir)
	case 1:
		return found[0], nil
	}
	sort.Strings(found)
	return "", fmt.Errorf("%s holds %d SMAC3 runs; name one of: %s", dir, len(found), strings.Join(found, ", "))
}

// ImportSMAC reads a SMAC3 run directory (see FindSMACRun).
func ImportSMAC(dir string, opts SMACOptions) (*Run, error) {
	runDir, err := FindSMACRun(dir)
	if err != nil {
		return nil, err
	}
	csPath := filepath.Join(runDir, "configspace.json")
	rhPath := filepath.Join(runDir, "runhistory.json")
	b := newBuilder("smac3", runDir)
	b.objective = space.Minimize // SMAC minimizes cost
	csData, err := os.ReadFile(csPath)
	if err != nil {
		return nil, fmt.Errorf("SMAC3 run %s: %w (xbo needs the configuration space SMAC wrote beside the run history)", runDir, err)
	}
	cs, err := parseConfigSpace(csData, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", csPath, err)
	}
	rhData, err := os.ReadFile(rhPath)
	if err != nil {
		return nil, err
	}
	if err := parseRunHistory(rhData, runDir, cs, b, opts); err != nil {
		return nil, fmt.Errorf("%s: %w", rhPath, err)
	}
	run, err := b.build()
	if err != nil {
		return nil, fmt.Errorf("SMAC3 run %s: %w", runDir, err)
	}
	return run, nil
}

// csParam is a ConfigSpace hyperparameter as imported.
type csParam struct {
	raw     *rawParam
	ordinal []string // an ordinal's sequence when imported as a categorical
}

type configSpace struct {
	params map[string]*csParam
}

func parseConfigSpace(data []byte, b *builder) (*configSpace, error) {
	doc, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	hps, ok := top["hyperparameters"].([]any)
	if !ok {
		return nil, errors.New(`no "hyperparameters" list (is this ConfigSpace's JSON format?)`)
	}
	cs := &configSpace{params: map[string]*csParam{}}
	for i, h := range hps {
		obj, ok := h.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("hyperparameter #%d is not an object", i+1)
		}
		p, err := parseHyperparameter(obj, b)
		if err != nil {
			name, _ := obj["name"].(string)
			return nil, fmt.Errorf("hyperparameter #%d %q: %w", i+1, name, err)
		}
		if err := b.addParam(p.raw); err != nil {
			return nil, err
		}
		cs.params[p.raw.name] = p
	}
	conds, _ := top["conditions"].([]any)
	for i, c := range conds {
		obj, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("condition #%d is not an object", i+1)
		}
		if err := cs.applyCondition(obj, b); err != nil {
			return nil, fmt.Errorf("condition #%d: %w", i+1, err)
		}
	}
	if forb, _ := top["forbiddens"].([]any); len(forb) > 0 {
		b.warnf("configspace.json has %d forbidden clauses; xbo spaces have none, so explanations average over forbidden configurations too", len(forb))
	}
	return cs, nil
}

func parseHyperparameter(obj map[string]any, b *builder) (*csParam, error) {
	name, ok := obj["name"].(string)
	if !ok || name == "" {
		return nil, errors.New("no name")
	}
	typ, _ := obj["type"].(string)
	rp := &rawParam{name: name}
	def, hasDef := obj["default"]
	if !hasDef {
		def, hasDef = obj["default_value"]
	}
	num := func(key string) (float64, bool, error) {
		v, present := obj[key]
		if !present || v == nil {
			return 0, false, nil
		}
		f, ok := numberOf(v)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false, fmt.Errorf("%s %v is not a finite number", key, v)
		}
		return f, true, nil
	}
	logScale := false
	if lg, present := obj["log"]; present && lg != nil {
		bv, ok := lg.(bool)
		if !ok {
			return nil, fmt.Errorf("log %v is not a boolean", lg)
		}
		logScale = bv
	}
	switch typ {
	case "uniform_float", "uniform_int", "normal_float", "normal_int", "beta_float", "beta_int":
		rp.typ = space.Float
		if strings.HasSuffix(typ, "_int") {
			rp.typ = space.Int
		}
		rp.log = logScale
		lo, hasLo, err := num("lower")
		if err != nil {
			return nil, err
		}
		hi, hasHi, err := num("upper")
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(typ, "uniform_") && (!hasLo || !hasHi) {
			return nil, errors.New("lower and upper are required")
		}
		if strings.HasPrefix(typ, "normal_") && (!hasLo || !hasHi) {
			// Old ConfigSpace: an unbounded normal. Take mu ± 3 sigma (on
			// the log scale for log parameters); observed values widen it.
			mu, hasMu, err := num("mu")
			if err != nil {
				return nil, err
			}
			sigma, hasSigma, err := num("sigma")
			if err != nil {
				return nil, err
			}
			if !hasMu || !hasSigma || sigma <= 0 {
				return nil, errors.New("a normal hyperparameter needs lower/upper or mu and a positive sigma")
			}
			lo, hi = mu-3*sigma, mu+3*sigma
			if logScale {
				lo, hi = math.Exp(lo), math.Exp(hi)
			}
			if rp.typ == space.Int {
				lo, hi = math.Floor(lo), math.Ceil(hi)
			}
			b.warnf("parameter %q: %s without bounds; imported as uniform over mu ± 3 sigma = [%v, %v]", name, typ, lo, hi)
		} else if !strings.HasPrefix(typ, "uniform_") {
			b.warnf("parameter %q: %s prior is not kept; imported as uniform over its bounds [%v, %v]", name, typ, lo, hi)
		}
		if !hasLo && !hasHi && strings.HasPrefix(typ, "beta_") {
			return nil, errors.New("lower and upper are required")
		}
		if lo > hi {
			return nil, fmt.Errorf("lower %v is above upper %v", lo, hi)
		}
		if rp.log && lo <= 0 {
			return nil, fmt.Errorf("log scale with lower %v <= 0", lo)
		}
		rp.low, rp.high = lo, hi
		if q, has, _ := num("q"); has && q > 0 {
			// ConfigSpace rounds to multiples of q: a stepped range from
			// lower when lower is one of them (build checks upper), no
			// grid xbo can hold on a log scale.
			if k := lo / q; !rp.log && strings.HasPrefix(typ, "uniform_") && math.Abs(k-math.Round(k)) < 1e-8 {
				rp.step = q
			} else {
				b.warnf("parameter %q: quantization q = %v is not kept (xbo's steps start at lower and are not on a log scale)", name, q)
			}
		}
		if hasDef && def != nil {
			if f, ok := numberOf(def); ok && f >= lo && f <= hi {
				rp.def = f
			}
		}
		return &csParam{raw: rp}, nil
	case "categorical":
		list, ok := obj["choices"].([]any)
		if !ok || len(list) == 0 {
			return nil, errors.New("no choices")
		}
		choices, err := choiceNames(list)
		if err != nil {
			return nil, err
		}
		rp.typ = space.Categorical
		rp.choices, rp.typed = choices, choiceTypes(list)
		if w, present := obj["weights"]; present && w != nil {
			b.warnf("parameter %q: choice weights are not kept (xbo samples every choice equally)", name)
		}
		if hasDef {
			if d, err := choiceName(def); err == nil && slices.Contains(choices, d) {
				rp.def = d
			}
		}
		return &csParam{raw: rp}, nil
	case "ordinal":
		list, ok := obj["sequence"].([]any)
		if !ok || len(list) == 0 {
			return nil, errors.New("no sequence")
		}
		names, err := choiceNames(list)
		if err != nil {
			return nil, err
		}
		if lo, hi, ok := consecutiveInts(list); ok && hi > lo {
			rp.typ, rp.low, rp.high = space.Int, float64(lo), float64(hi)
			if f, ok := numberOf(def); ok && hasDef {
				rp.def = f
			}
			return &csParam{raw: rp}, nil
		}
		rp.typ = space.Categorical
		rp.choices, rp.typed = names, choiceTypes(list)
		if hasDef {
			if d, err := choiceName(def); err == nil && slices.Contains(names, d) {
				rp.def = d
			}
		}
		b.warnf("parameter %q: ordinal imported as a categorical; the order %s is not kept", name, strings.Join(names, " < "))
		return &csParam{raw: rp, ordinal: names}, nil
	case "constant", "unparametrized":
		v, present := obj["value"]
		if !present {
			return nil, errors.New("constant without a value")
		}
		c, err := choiceName(v)
		if err != nil {
			return nil, err
		}
		rp.typ = space.Categorical
		rp.choices, rp.typed = []string{c}, choiceTypes([]any{v})
		rp.def = c
		return &csParam{raw: rp}, nil
	case "":
		return nil, errors.New("no type")
	}
	return nil, fmt.Errorf("unsupported hyperparameter type %q", typ)
}

func choiceNames(list []any) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, c := range list {
		n, err := choiceName(c)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("choice %q appears twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// consecutiveInts reports whether a sequence is lo, lo+1, ..., hi.
func consecutiveInts(list []any) (int, int, bool) {
	var prev int
	for i, v := range list {
		k, ok := intOf(v)
		if !ok || (i > 0 && k != prev+1) {
			return 0, 0, false
		}
		prev = k
	}
	first, _ := intOf(list[0])
	return first, prev, true
}

// applyCondition maps a ConfigSpace condition onto xbo's "parent takes one of
// these values". EQ and IN map directly; NEQ, LT and GT map when the parent
// has finitely many values (categorical, ordinal, integer) by listing the
// values that satisfy them; AND and OR map when all their parts concern the
// same parent (intersection, union). Anything else leaves the child
// unconditional, reported by name, with its default filling the trials where
// SMAC had it inactive.
func (cs *configSpace) applyCondition(obj map[string]any, b *builder) error {
	childName, _ := obj["child"].(string)
	child, ok := cs.params[childName]
	if !ok {
		return fmt.Errorf("child %q is not a hyperparameter", childName)
	}
	parent, values, why := cs.conditionValues(obj)
	if why != "" {
		child.raw.imputeDefault = true
		b.warnf("parameter %q: condition %s cannot be expressed (%s); imported as unconditional", childName, describeCondition(obj), why)
		return nil
	}
	if len(values) == 0 {
		child.raw.imputeDefault = true
		b.warnf("parameter %q: condition %s holds for no value of %q; imported as unconditional", childName, describeCondition(obj), parent.raw.name)
		return nil
	}
	child.raw.cond = &space.Condition{Parent: parent.raw.name, Values: values}
	return nil
}

// conditionValues returns the parent and the parent values under which the
// condition holds, or a reason why that is not expressible.
func (cs *configSpace) conditionValues(obj map[string]any) (*csParam, []any, string) {
	typ, _ := obj["type"].(string)
	switch typ {
	case "AND", "OR":
		parts, _ := obj["conditions"].([]any)
		if len(parts) == 0 {
			return nil, nil, typ + " without conditions"
		}
		var parent *csParam
		var acc []any
		for i, part := range parts {
			po, ok := part.(map[string]any)
			if !ok {
				return nil, nil, "malformed part"
			}
			p, vals, why := cs.conditionValues(po)
			if why != "" {
				return nil, nil, why
			}
			if parent != nil && p != parent {
				return nil, nil, fmt.Sprintf("its parts concern different parents %q and %q, and an xbo condition has one parent", parent.raw.name, p.raw.name)
			}
			parent = p
			if i == 0 {
				acc = vals
				continue
			}
			if typ == "AND" {
				acc = slices.DeleteFunc(acc, func(v any) bool { return !containsValue(vals, v) })
			} else {
				for _, v := range vals {
					if !containsValue(acc, v) {
						acc = append(acc, v)
					}
				}
			}
		}
		return parent, cs.ordered(parent, acc), ""
	}
	parentName, _ := obj["parent"].(string)
	parent, ok := cs.params[parentName]
	if !ok {
		return nil, nil, fmt.Sprintf("parent %q is not a hyperparameter", parentName)
	}
	domain, finite := cs.domain(parent)
	toValue := func(v any) (any, bool) {
		if parent.raw.typ == space.Categorical {
			n, err := choiceName(v)
			return n, err == nil
		}
		f, ok := numberOf(v)
		return f, ok
	}
	switch typ {
	case "EQ", "NEQ", "LT", "GT":
		v, ok := toValue(obj["value"])
		if !ok {
			return nil, nil, fmt.Sprintf("value %v does not fit parent %q", obj["value"], parentName)
		}
		if typ == "EQ" {
			return parent, []any{v}, ""
		}
		if !finite {
			return nil, nil, fmt.Sprintf("%s on the continuous parameter %q", typ, parentName)
		}
		var out []any
		pos := slices.IndexFunc(domain, func(d any) bool { return d == v })
		for i, d := range domain {
			keep := false
			switch typ {
			case "NEQ":
				keep = d != v
			case "LT", "GT":
				if parent.raw.typ == space.Categorical && parent.ordinal == nil {
					return nil, nil, fmt.Sprintf("%s on the unordered categorical %q", typ, parentName)
				}
				if parent.ordinal != nil {
					if pos < 0 {
						return nil, nil, fmt.Sprintf("value %v is not in the sequence of %q", v, parentName)
					}
					keep = (typ == "LT" && i < pos) || (typ == "GT" && i > pos)
				} else {
					x, y := d.(float64), v.(float64)
					keep = (typ == "LT" && x < y) || (typ == "GT" && x > y)
				}
			}
			if keep {
				out = append(out, d)
			}
		}
		return parent, out, ""
	case "IN":
		list, ok := obj["values"].([]any)
		if !ok {
			return nil, nil, "IN without values"
		}
		var out []any
		for _, x := range list {
			v, ok := toValue(x)
			if !ok {
				return nil, nil, fmt.Sprintf("value %v does not fit parent %q", x, parentName)
			}
			if !containsValue(out, v) {
				out = append(out, v)
			}
		}
		return parent, cs.ordered(parent, out), ""
	}
	return nil, nil, fmt.Sprintf("unknown condition type %q", typ)
}

// domain lists a parameter's values when there are finitely many (at most
// 10 000 for integers).
func (cs *configSpace) domain(p *csParam) ([]any, bool) {
	switch p.raw.typ {
	case space.Categorical:
		out := make([]any, len(p.raw.choices))
		for i, c := range p.raw.choices {
			out[i] = c
		}
		return out, true
	case space.Int:
		if p.raw.high-p.raw.low > 10000 {
			return nil, false
		}
		var out []any
		for k := p.raw.low; k <= p.raw.high; k++ {
			out = append(out, k)
		}
		return out, true
	}
	return nil, false
}

// ordered puts condition values in the parent's own order.
func (cs *configSpace) ordered(p *csParam, vals []any) []any {
	dom, ok := cs.domain(p)
	if !ok {
		return vals
	}
	var out []any
	for _, d := range dom {
		if containsValue(vals, d) {
			out = append(out, d)
		}
	}
	for _, v := range vals {
		if !containsValue(out, v) {
			out = append(out, v) // values outside the domain stay, and fail loudly later
		}
	}
	return out
}

func containsValue(list []any, v any) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func describeCondition(obj map[string]any) string {
	typ, _ := obj["type"].(string)
	switch typ {
	case "AND", "OR":
		parts, _ := obj["conditions"].([]any)
		descs := make([]string, 0, len(parts))
		for _, p := range parts {
			if po, ok := p.(map[string]any); ok {
				descs = append(descs, describeCondition(po))
			}
		}
		return "(" + strings.Join(descs, " "+typ+" ") + ")"
	case "IN":
		return fmt.Sprintf("IN on %q %v", obj["parent"], obj["values"])
	}
	return fmt.Sprintf("%s on %q %v", typ, obj["parent"], obj["value"])
}

// smacStatus maps a run status to a state and a name for messages.
func smacStatus(v any, v1 bool) (history.State, string, error) {
	name := ""
	switch x := v.(type) {
	case map[string]any:
		s, _ := x["__enum__"].(string)
		name = strings.TrimPrefix(s, "StatusType.")
	case string:
		name = strings.TrimPrefix(x, "StatusType.")
	default:
		code, ok := intOf(v)
		if !ok {
			return "", "", fmt.Errorf("status %v is neither a code nor a name", v)
		}
		if v1 {
			// SMAC 1 StatusType values.
			names := map[int]string{1: "SUCCESS", 2: "TIMEOUT", 3: "CRASHED", 4: "ABORT", 5: "MEMOUT", 6: "CAPPED", 7: "STOP", 8: "DONOTADVANCE", 9: "RUNNING"}
			name = names[code]
		} else {
			names := map[int]string{0: "RUNNING", 1: "SUCCESS", 2: "CRASHED", 3: "TIMEOUT", 4: "MEMORYOUT"}
			name = names[code]
		}
		if name == "" {
			return "", "", fmt.Errorf("unknown status code %d", code)
		}
	}
	switch name {
	case "SUCCESS":
		return history.Complete, name, nil
	case "RUNNING":
		return history.Running, name, nil
	case "":
		return "", "", fmt.Errorf("status %v has no name", v)
	}
	return history.Failed, name, nil
}

type smacRun struct {
	configID string
	instance any
	seed     any
	budget   float64 // 0 when none
	cost     any
	status   any
	v1       bool
}

func parseRunEntry(e any) (smacRun, error) {
	var r smacRun
	switch x := e.(type) {
	case map[string]any:
		r.configID = idString(x["config_id"])
		r.instance, r.seed = x["instance"], x["seed"]
		r.budget, _ = numberOf(x["budget"])
		r.cost, r.status = x["cost"], x["status"]
		if _, ok := x["status"]; !ok {
			return r, errors.New("no status")
		}
	case []any:
		if len(x) == 2 {
			key, ok1 := x[0].([]any)
			val, ok2 := x[1].([]any)
			if !ok1 || !ok2 || len(key) < 3 || len(val) < 3 {
				return r, errors.New("a v1 entry is [[config_id, instance, seed, budget], [cost, time, status, ...]]")
			}
			r.v1 = true
			r.configID = idString(key[0])
			r.instance, r.seed = key[1], key[2]
			if len(key) > 3 {
				r.budget, _ = numberOf(key[3])
			}
			r.cost, r.status = val[0], val[2]
			break
		}
		switch len(x) {
		case 10, 11:
			r.configID = idString(x[0])
			r.instance, r.seed = x[1], x[2]
			r.budget, _ = numberOf(x[3])
			r.cost = x[4]
			r.status = x[6]
			if len(x) == 11 { // with cpu_time after time
				r.status = x[7]
			}
		default:
			return r, fmt.Errorf("a list entry with %d fields matches no known runhistory shape", len(x))
		}
	default:
		return r, errors.New("not a list or object")
	}
	if r.configID == "" {
		return r, errors.New("no config_id")
	}
	if math.IsNaN(r.budget) || math.IsInf(r.budget, 0) {
		r.budget = 0
	}
	return r, nil
}

func idString(v any) string {
	if k, ok := intOf(v); ok {
		return strconv.Itoa(k)
	}
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// smacRunTrial turns one run into a trial numbered i, and names its status.
func smacRunTrial(i int, r smacRun, configs, origins map[string]any, cs *configSpace) (rawTrial, string, error) {
	state, statusName, err := smacStatus(r.status, r.v1)
	if err != nil {
		return rawTrial{}, "", fmt.Errorf("data entry %d: %w", i+1, err)
	}
	value := math.NaN()
	var costs []float64 // every objective's cost of a multi-objective run
	switch c := r.cost.(type) {
	case []any:
		if len(c) > space.MaxObjectives {
			return rawTrial{}, "", fmt.Errorf("data entry %d: cost has %d objectives; xbo takes at most %d", i+1, len(c), space.MaxObjectives)
		}
		if len(c) > 1 {
			costs = make([]float64, len(c))
			for k, x := range c {
				f, ok := numberOf(x)
				if !ok {
					return rawTrial{}, "", fmt.Errorf("data entry %d: cost %v is not a number", i+1, x)
				}
				costs[k] = f
			}
			value = costs[0]
		}
		if len(c) == 1 {
			value, _ = numberOf(c[0])
		}
	case nil:
	default:
		f, ok := numberOf(c)
		if !ok {
			return rawTrial{}, "", fmt.Errorf("data entry %d: cost %v is not a number", i+1, c)
		}
		value = f
	}
	cfg, ok := configs[r.configID].(map[string]any)
	if !ok {
		return rawTrial{}, "", fmt.Errorf("data entry %d: config_id %s is not in \"configs\"", i+1, r.configID)
	}
	rt := rawTrial{number: i, values: map[string]rawValue{}, value: value, state: state}
	if state == history.Complete {
		rt.objValues = costs // a failed run's cost is SMAC's crash cost, not a result
	}
	if o, ok := origins[r.configID].(string); ok {
		rt.origin = o
	}
	for name, v := range cfg {
		p, ok := cs.params[name]
		if !ok {
			return rawTrial{}, "", fmt.Errorf("config %s: %q is not a hyperparameter of configspace.json", r.configID, name)
		}
		if p.raw.typ == space.Categorical {
			c, err := p.raw.nameOf(v)
			if err != nil {
				return rawTrial{}, "", fmt.Errorf("config %s: %q: %w", r.configID, name, err)
			}
			rt.values[name] = catValue(c)
			continue
		}
		f, ok := numberOf(v)
		if !ok {
			return rawTrial{}, "", fmt.Errorf("config %s: %q: %v is not a number", r.configID, name, v)
		}
		rt.values[name] = numValue(f)
	}
	return rt, statusName, nil
}

// sortedBudgets lists the budgets in increasing order.
func sortedBudgets(budgets map[float64]int) []float64 { return slices.Sorted(maps.Keys(budgets)) }

// groupBudgets makes one trial of each configuration's runs at several
// budgets (per instance and seed), as Hyperband or BOHB ran them: the run
// at its highest budget gives the trial's state and value (and its user
// attribute "budget"), its successful runs with a finite cost are its
// intermediate values, and a configuration whose highest run succeeded
// below the study's highest budget was stopped early, so it is pruned. The
// step of a budget is the budget when every budget is a whole number, else
// its rank (0 for the lowest). It counts the failed trials by status into
// failures. With each trial it returns the index of the run that gives it
// its value.
func groupBudgets(b *builder, runs []smacRun, trialsOf []rawTrial, statuses []string, budgets map[float64]int, failures map[string]int) ([]rawTrial, []int) {
	list := sortedBudgets(budgets)
	top := list[len(list)-1]
	whole := true
	for _, bud := range list {
		whole = whole && bud >= 0 && bud <= 1<<53 && bud == math.Trunc(bud)
	}
	step := func(bud float64) int64 {
		if whole {
			return int64(bud)
		}
		k, _ := slices.BinarySearch(list, bud)
		return int64(k)
	}
	how := "the budget"
	if !whole {
		how = "the budget's rank, 0 for the lowest, because the budgets are not whole numbers"
	}
	b.warnf("the runs use %d budgets %v; each configuration (per instance and seed) is one trial: its run at its highest budget gives its value, its runs at lower budgets are its intermediate values (step = %s), and one stopped below the highest budget %v is imported as pruned (--all-budgets imports every run as a trial of its own)",
		len(list), list, how, top)
	if len(b.objectives) > 1 {
		b.warnf("the runs at lower budgets give no intermediate values: an intermediate value is one number, and the run has %d objectives", len(b.objectives))
	}
	type group struct {
		trial   int // index of the run at the highest budget so far
		runs    []int
		highest float64
	}
	var order []string
	groups := map[string]*group{}
	for i, r := range runs {
		key := fmt.Sprintf("%s\x00%v\x00%v", r.configID, r.instance, r.seed)
		g, ok := groups[key]
		if !ok {
			g = &group{trial: i, highest: r.budget}
			groups[key] = g
			order = append(order, key)
		}
		g.runs = append(g.runs, i)
		if r.budget >= g.highest {
			g.trial, g.highest = i, r.budget
		}
	}
	out := make([]rawTrial, 0, len(order))
	reps := make([]int, 0, len(order))
	for n, key := range order {
		g := groups[key]
		reps = append(reps, g.trial)
		rt := trialsOf[g.trial]
		rt.number = n
		rt.attrs = map[string]any{"budget": g.highest}
		for _, i := range g.runs {
			if len(b.objectives) > 1 {
				break // no curve of several objectives (see smacObjectives)
			}
			if v := trialsOf[i].value; trialsOf[i].state == history.Complete && !math.IsNaN(v) && !math.IsInf(v, 0) {
				rt.intermediate = withStep(rt.intermediate, step(runs[i].budget), v)
			}
		}
		switch {
		case rt.state == history.Failed:
			failures[statuses[g.trial]]++
		case rt.state == history.Complete && g.highest < top:
			rt.state = history.Pruned
		}
		out = append(out, rt)
	}
	return out, reps
}

func parseRunHistory(data []byte, runDir string, cs *configSpace, b *builder, opts SMACOptions) error {
	doc, err := decodeJSON(data)
	if err != nil {
		return err
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return errors.New("not a JSON object")
	}
	entries, ok := top["data"].([]any)
	if !ok {
		return errors.New(`no "data" list (is this a SMAC3 runhistory.json?)`)
	}
	configs, ok := top["configs"].(map[string]any)
	if !ok {
		return errors.New(`no "configs" object`)
	}
	origins, _ := top["config_origins"].(map[string]any)
	runs := make([]smacRun, len(entries))
	budgets := map[float64]int{}
	instances := map[string]bool{}
	v1 := false
	for i, e := range entries {
		r, err := parseRunEntry(e)
		if err != nil {
			return fmt.Errorf("data entry %d: %w", i+1, err)
		}
		runs[i] = r
		budgets[r.budget]++
		instances[fmt.Sprint(r.instance)] = true
		v1 = v1 || r.v1
	}
	if v1 {
		b.format = "smac3-v1"
	} else {
		b.format = "smac3-v2"
	}
	if len(instances) > 1 {
		b.warnf("the runs use %d instances; each run is imported as one trial, so a configuration appears once per instance", len(instances))
	}
	if len(budgets) > 1 && opts.AllBudgets {
		b.warnf("the runs use %d budgets %v; all are imported as trials of their own (--all-budgets), so values at different fidelities are mixed", len(budgets), sortedBudgets(budgets))
	}
	trialsOf := make([]rawTrial, len(runs))
	statuses := make([]string, len(runs))
	for i, r := range runs {
		var err error
		if trialsOf[i], statuses[i], err = smacRunTrial(i, r, configs, origins, cs); err != nil {
			return err
		}
	}
	if err := smacObjectives(b, runDir, trialsOf); err != nil {
		return err
	}
	failures := map[string]int{}
	trials, reps := trialsOf, make([]int, len(trialsOf))
	if len(budgets) <= 1 || opts.AllBudgets {
		for i, rt := range trialsOf {
			reps[i] = i
			if rt.state == history.Failed {
				failures[statuses[i]]++
			}
		}
	} else {
		trials, reps = groupBudgets(b, runs, trialsOf, statuses, budgets, failures)
	}
	if !opts.SeedsApart {
		trials = groupSeeds(b, runs, reps, trials, opts.AllBudgets || len(budgets) <= 1)
	}
	b.trials = append(b.trials, trials...)
	if len(failures) > 0 {
		var parts []string
		for name, n := range failures {
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
		sort.Strings(parts)
		b.warnf("runs that did not succeed are imported as failed trials without a value: %s", strings.Join(parts, ", "))
	}
	return nil
}

// smacObjectives declares the objectives of a multi-objective run (one
// whose successful runs' costs are lists): as many as the costs have,
// every one minimized (SMAC minimizes costs), named after the scenario's
// objectives (scenario.json beside the run history, SMAC 2) when it lists
// that many, else objective_0, objective_1, ...
func smacObjectives(b *builder, runDir string, trialsOf []rawTrial) error {
	m, first := 1, -1
	for i, rt := range trialsOf {
		if rt.state != history.Complete {
			continue
		}
		k := max(1, len(rt.objValues))
		if first >= 0 && k != m {
			return fmt.Errorf("data entry %d has %d costs but data entry %d has %d; a run's costs have one value per objective", i+1, k, first+1, m)
		}
		m, first = k, i
	}
	if m == 1 {
		return nil
	}
	names := smacScenarioObjectives(filepath.Join(runDir, "scenario.json"))
	if names != nil && len(names) != m {
		b.warnf("scenario.json names %d objectives (%s) for costs of %d values; the objectives are named objective_0, objective_1, ...", len(names), strings.Join(names, ", "), m)
		names = nil
	}
	for k := range m {
		o := space.Objective{Direction: space.Minimize}
		if names != nil {
			o.Name = names[k]
		}
		b.objectives = append(b.objectives, o)
	}
	b.warnf("the run has %d objectives, all minimized (SMAC minimizes costs)", m)
	return nil
}

// smacScenarioObjectives reads the objectives' names from SMAC 2's
// scenario.json ("objectives": a name or a list of names); nil when the
// file or the list is not there.
func smacScenarioObjectives(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	doc, err := decodeJSON(data)
	if err != nil {
		return nil
	}
	top, _ := doc.(map[string]any)
	list, ok := top["objectives"].([]any)
	if !ok {
		return nil
	}
	names := make([]string, len(list))
	for k, v := range list {
		if names[k], ok = v.(string); !ok {
			return nil
		}
	}
	return names
}
