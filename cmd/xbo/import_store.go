package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"sort"
	"strings"

	"xbo/history"
	"xbo/importer"
	"xbo/prune"
	"xbo/store"
)

// provenanceAttr is the one user attribute `xbo import --into` adds to each
// trial: where it came from (format, source, its number, state and origin
// there). The source's own user attributes keep their names beside it, so
// code that reads trial.user_attrs["epochs"] reads what the source wrote.
const provenanceAttr = "xbo:import"

// importedAttrs are an imported trial's user attributes: the source's under
// their own names, and the provenance apart. A source attribute already
// named provenanceAttr is renamed with a warning rather than lost.
func importedAttrs(run *importer.Run, t *history.Trial, warn func(string)) map[string]any {
	attrs := make(map[string]any, len(t.UserAttrs)+1)
	for k, v := range t.UserAttrs {
		attrs[k] = v
	}
	if v, clash := attrs[provenanceAttr]; clash {
		attrs[provenanceAttr+" (source)"] = v
		warn(fmt.Sprintf("trial %d has its own user attribute %q; it is kept as %q", t.Number, provenanceAttr, provenanceAttr+" (source)"))
	}
	prov := map[string]any{"format": run.Format, "source": run.Source, "number": t.Number, "state": string(t.State)}
	if run.Name != "" {
		prov["study"] = run.Name
	}
	if t.Acquisition != "" {
		prov["origin"] = t.Acquisition
	}
	attrs[provenanceAttr] = prov
	return attrs
}

// maxNameTries bounds the suffixes tried for a free study name.
const maxNameTries = 100

// importName is the study name an import is stored under: --name when
// given (a taken name is then an error), else the source's study name
// (Optuna's), else the source's file name, or for a SMAC3 run
// "<parent directory>-<run directory>" (SMAC3 names its runs run_1, run_2,
// ... under one output directory per scenario); a taken default gets the
// first free suffix -2, -3, ...
func importDefaultName(run *importer.Run) string {
	if run.Name != "" {
		return run.Name
	}
	clean := filepath.Clean(run.Source)
	base := strings.TrimSuffix(filepath.Base(clean), filepath.Ext(clean))
	if strings.HasPrefix(run.Format, "smac") {
		if parent := filepath.Base(filepath.Dir(clean)); parent != "." && parent != string(filepath.Separator) {
			return parent + "-" + base
		}
	}
	return base
}

// importStudy stores the import under name, or, when the name was not
// chosen by the user and is taken, under the first free name-2, name-3, ...
func importStudy(ctx context.Context, st store.Store, ns store.NewStudy, trials iter.Seq2[store.ImportedTrial, error], chosen bool) (string, error) {
	base := ns.Name
	for k := 1; k <= maxNameTries; k++ {
		if k > 1 {
			ns.Name = fmt.Sprintf("%s-%d", base, k)
		}
		// A taken name is refused before the trials are read, so the
		// next name reads them from the start.
		_, err := st.ImportStudyFrom(ctx, ns, trials)
		if err == nil {
			return ns.Name, nil
		}
		if !errors.Is(err, store.ErrExists) {
			return "", err
		}
		if chosen {
			return "", fmt.Errorf("%w (choose another name with --name)", err)
		}
	}
	return "", fmt.Errorf("import: studies %q to %q-%d all exist; choose a name with --name", base, base, maxNameTries)
}

// studyAttrsWarning names the source study's attributes, which an xbo
// study has no place for, or "" when there are none.
func studyAttrsWarning(run *importer.Run) string {
	if len(run.StudyAttrs) == 0 {
		return ""
	}
	keys := make([]string, 0, len(run.StudyAttrs))
	for k := range run.StudyAttrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprintf("the source study's user attributes (%s) are not kept: an xbo study has none", strings.Join(keys, ", "))
}

// csvLossWarning names what a run holds that the trials CSV does not
// (trials.Write: no intermediate values, user attributes or times), or ""
// when it holds none of them.
func csvLossWarning(run *importer.Run) string {
	var loss csvLoss
	for i := range run.Trials {
		loss.see(&run.Trials[i])
	}
	return loss.warning()
}

// csvLoss is what of the trials seen the trials CSV does not hold.
type csvLoss struct{ attrs, times, inter bool }

func (l *csvLoss) see(t *history.Trial) {
	l.attrs = l.attrs || len(t.UserAttrs) > 0
	l.times = l.times || !t.Started.IsZero() || !t.Finished.IsZero()
	l.inter = l.inter || len(t.Intermediate) > 0
}

// warning names what was lost, or is "" when nothing was.
func (l csvLoss) warning() string {
	var lost []string
	for _, l := range []struct {
		has  bool
		what string
	}{{l.attrs, "user attributes"}, {l.times, "start and finish times"}, {l.inter, "intermediate values"}} {
		if l.has {
			lost = append(lost, l.what)
		}
	}
	if len(lost) == 0 {
		return ""
	}
	return fmt.Sprintf("the trials CSV holds no %s of the source's trials; --into keeps them in a store", strings.Join(lost, ", "))
}

// importPruner checks --pruner (JSON) for the imported study and returns it
// as stored; with none it warns when the source pruned trials, since an
// Optuna storage does not say which pruner did (a pruner is code there).
func importPruner(run *importer.Run, text string, env *cliEnv) (json.RawMessage, error) {
	if text == "" {
		if run.Counts()[history.Pruned] > 0 {
			warnNoPruner(env)
		}
		return nil, nil
	}
	pr, err := prune.Parse(json.RawMessage(text))
	if err != nil {
		return nil, usagef("--pruner: %v", err)
	}
	if pr.Type != prune.None && run.Space.MultiObjective() {
		return nil, usagef("--pruner: a study with %d objectives has no single curve to prune on", run.Space.NumObjectives())
	}
	if pr.Type == prune.Model {
		return nil, usagef("--pruner: the model pruner needs the optimizer's resource, which an import does not set; choose median, percentile, asha or hyperband")
	}
	b, err := json.Marshal(pr)
	if err != nil {
		return nil, fmt.Errorf("--pruner: %w", err)
	}
	return b, nil
}

// warnNoPruner says that an import with pruned trials gets no pruner.
func warnNoPruner(env *cliEnv) {
	fmt.Fprintf(env.stderr, "warning: the source pruned trials but does not record its pruner; the study gets none (give one with --pruner '{\"type\":\"median\"}')\n")
}
