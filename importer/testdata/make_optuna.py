#!/usr/bin/python3
"""Creates the Optuna fixtures the importer tests read (run from this directory).

Writes optuna_rdb.sqlite3 (RDB storage, SQLite) and optuna_journal.log (JournalStorage
file) holding the same studies, and optuna_expected.json with every trial as
Optuna itself reports it, so the Go tests compare against Optuna's own view.

Study "tpe-known" (minimize) runs TPE on a known function of
  lr        log float in [1e-4, 1]
  layers    int in [1, 8]
  optimizer categorical sgd | adam | rmsprop
  momentum  float in [0, 0.99], suggested only when optimizer == "sgd"
  f = (log10(lr) + 2)^2 + 0.1 (layers - 3)^2 + c[optimizer]
      + (momentum - 0.9)^2 when optimizer == "sgd",  c = {sgd: 0.2, adam: 0, rmsprop: 0.5}
Trial 5 raises (FAIL), trial 7 reports an intermediate value and is pruned,
and one enqueued trial sets lr = 3 (outside its range, as Optuna allows).
Study "small-max" (maximize) and "two-objectives" (multi-objective) exist to
test study listing and the multi-objective refusal.

Regenerate with:  /usr/bin/python3 make_optuna.py   (Debian python3-optuna 3.1)
"""
import json
import math
import os

import optuna

COST = {"sgd": 0.2, "adam": 0.0, "rmsprop": 0.5}


def known(lr, layers, optimizer, momentum):
    v = (math.log10(lr) + 2) ** 2 + 0.1 * (layers - 3) ** 2 + COST[optimizer]
    if optimizer == "sgd":
        v += (momentum - 0.9) ** 2
    return v


def objective(trial):
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    layers = trial.suggest_int("layers", 1, 8)
    optimizer = trial.suggest_categorical("optimizer", ["sgd", "adam", "rmsprop"])
    momentum = None
    if optimizer == "sgd":
        momentum = trial.suggest_float("momentum", 0.0, 0.99)
    value = known(lr, layers, optimizer, momentum)
    if trial.number == 5:
        raise RuntimeError("simulated crash")
    if trial.number == 7:
        trial.report(value + 1.0, step=0)
        raise optuna.TrialPruned()
    return value


def fill(storage):
    study = optuna.create_study(
        study_name="tpe-known", storage=storage, direction="minimize",
        sampler=optuna.samplers.TPESampler(seed=7, n_startup_trials=10),
    )
    study.enqueue_trial({"lr": 3.0, "layers": 2, "optimizer": "adam"})
    study.optimize(objective, n_trials=40, catch=(RuntimeError,))

    small = optuna.create_study(
        study_name="small-max", storage=storage, direction="maximize",
        sampler=optuna.samplers.RandomSampler(seed=3),
    )
    small.optimize(lambda t: -(t.suggest_float("x", -2, 2) ** 2), n_trials=4)

    multi = optuna.create_study(
        study_name="two-objectives", storage=storage, directions=["minimize", "maximize"],
        sampler=optuna.samplers.RandomSampler(seed=5),
    )
    multi.optimize(lambda t: (t.suggest_float("y", 0, 1), t.suggest_float("z", 0, 1)), n_trials=3)
    return study


def describe(study):
    out = []
    for t in study.trials:
        out.append({
            "number": t.number,
            "state": t.state.name,
            "value": t.value,
            "params": t.params,
            "intermediate": [[s, v] for s, v in sorted(t.intermediate_values.items())],
        })
    return {"direction": study.direction.name, "trials": out}


def write(prefix, fill, describe):
    """Fills an RDB storage and a journal file with fill(storage), replacing
    <prefix>rdb.sqlite3, <prefix>journal.log and <prefix>expected.json (what
    describe(study) says of both studies)."""
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rdb_file, journal_file = prefix + "rdb.sqlite3", prefix + "journal.log"
    for f in (rdb_file, journal_file):
        if os.path.exists(f):
            os.remove(f)
    rdb = fill("sqlite:///" + rdb_file)
    journal = optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(journal_file))
    jstudy = fill(journal)
    expected = {"rdb": describe(rdb), "journal": describe(jstudy)}
    with open(prefix + "expected.json", "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    write("optuna_", fill, describe)
