#!/usr/bin/python3
"""Creates the Optuna fixtures of studies with several objectives and constraints
(run from this directory).

Writes optuna_multi_rdb.sqlite3 (RDB storage, SQLite) and optuna_multi_journal.log
(JournalStorage file) holding the same studies, and optuna_multi_expected.json with
every trial as Optuna itself reports it (state, values, parameters, the constraint
values its sampler stored) and the Pareto-optimal trials by Optuna's own best_trials,
so the Go tests compare against Optuna's view.

Study "error-size" (minimize error, maximize size; metric names "error", "size")
runs NSGA-II with a constraints function over
  x, y  floats in [0, 1],  kind  categorical a | b
  error = (x - 0.2)^2 + (y - 0.7)^2 + {a: 0, b: 0.3}[kind]
  size  = x + y + {a: 0, b: 0.5}[kind]
  constraints (feasible when <= 0): x + y - 1.2 and 0.1 - x
Trial 3 raises (FAIL, no constraint values), trial 6 is pruned (Optuna stores its
constraint values all the same), and one trial added with add_trial has no constraint
values at all (no sampler saw it), so it is infeasible although no trial dominates it.
Study "three-objectives" (minimize, minimize, maximize; no names, no constraints)
runs random search over a, b in [0, 1] with values (a, (1 - a)^2 + b, 1 - a - b).
Study "constrained-loss" (one objective named "loss", minimized) runs TPE with the
constraint x - 0.5 over loss = (x - 0.8)^2, whose unconstrained optimum is infeasible.

The metric names are set with Study.set_metric_names where Optuna has it (3.2 and
later), else with the study system attribute it writes ("study:metric_names").
"feasible_best" is best_trials (best_trial for one objective) of a study holding only
the complete trials whose constraint values are all <= 0 (every complete trial when
the study has no constraints).

Regenerate with:  /usr/bin/python3 make_optuna_multi.py   (Debian python3-optuna 3.1)
"""
import optuna

import make_optuna  # write()

KIND_ERROR = {"a": 0.0, "b": 0.3}
KIND_SIZE = {"a": 0.0, "b": 0.5}


def name_metrics(study, names):
    if hasattr(study, "set_metric_names"):
        study.set_metric_names(names)
    else:
        study._storage.set_study_system_attr(study._study_id, "study:metric_names", names)


def error_size(trial):
    x = trial.suggest_float("x", 0.0, 1.0)
    y = trial.suggest_float("y", 0.0, 1.0)
    kind = trial.suggest_categorical("kind", ["a", "b"])
    if trial.number == 3:
        raise RuntimeError("simulated crash")
    if trial.number == 6:
        raise optuna.TrialPruned()
    return (x - 0.2) ** 2 + (y - 0.7) ** 2 + KIND_ERROR[kind], x + y + KIND_SIZE[kind]


def limits(trial):
    return (trial.params["x"] + trial.params["y"] - 1.2, 0.1 - trial.params["x"])


def three(trial):
    a = trial.suggest_float("a", 0.0, 1.0)
    b = trial.suggest_float("b", 0.0, 1.0)
    return a, (1 - a) ** 2 + b, 1 - a - b


def fill(storage):
    es = optuna.create_study(
        study_name="error-size", storage=storage, directions=["minimize", "maximize"],
        sampler=optuna.samplers.NSGAIISampler(seed=13, population_size=6, constraints_func=limits),
    )
    name_metrics(es, ["error", "size"])
    es.optimize(error_size, n_trials=24, catch=(RuntimeError,))
    dists = {
        "x": optuna.distributions.FloatDistribution(0.0, 1.0),
        "y": optuna.distributions.FloatDistribution(0.0, 1.0),
        "kind": optuna.distributions.CategoricalDistribution(["a", "b"]),
    }
    es.add_trial(optuna.trial.create_trial(params={"x": 0.2, "y": 0.7, "kind": "a"}, distributions=dists, values=[0.0, 0.9]))

    th = optuna.create_study(
        study_name="three-objectives", storage=storage, directions=["minimize", "minimize", "maximize"],
        sampler=optuna.samplers.RandomSampler(seed=21),
    )
    th.optimize(three, n_trials=14)

    cl = optuna.create_study(
        study_name="constrained-loss", storage=storage, direction="minimize",
        sampler=optuna.samplers.TPESampler(seed=5, n_startup_trials=5, constraints_func=lambda t: (t.params["x"] - 0.5,)),
    )
    name_metrics(cl, ["loss"])
    cl.optimize(lambda t: (t.suggest_float("x", 0.0, 1.0) - 0.8) ** 2, n_trials=15)
    return [es, th, cl]


def feasible_best(study):
    copy = optuna.create_study(directions=study.directions)
    complete = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    constrained = any("constraints" in t.system_attrs for t in study.trials)
    for t in complete:
        c = t.system_attrs.get("constraints")
        if not constrained or (c is not None and all(v <= 0 for v in c)):
            copy.add_trial(optuna.trial.create_trial(
                params=t.params, distributions=t.distributions, values=t.values,
                user_attrs={"source_number": t.number}))
    if len(study.directions) == 1:
        return [copy.best_trial.user_attrs["source_number"]]
    return sorted(t.user_attrs["source_number"] for t in copy.best_trials)


def describe(studies):
    out = {}
    for study in studies:
        attrs = study._storage.get_study_system_attrs(study._study_id)
        trials = []
        for t in study.trials:
            trials.append({
                "number": t.number,
                "state": t.state.name,
                "values": t.values,
                "params": t.params,
                "constraints": t.system_attrs.get("constraints"),
            })
        best = study.best_trials if len(study.directions) > 1 else [study.best_trial]
        out[study.study_name] = {
            "directions": [d.name for d in study.directions],
            "metric_names": attrs.get("study:metric_names"),
            "trials": trials,
            "best_trials": sorted(t.number for t in best),
            "feasible_best": feasible_best(study),
        }
    return out


if __name__ == "__main__":
    make_optuna.write("optuna_multi_", fill, describe)
