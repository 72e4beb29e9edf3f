#!/usr/bin/python3
"""Creates the Optuna fixtures of the lossless-import tests (run from this directory).

Writes optuna_attrs_rdb.sqlite3 (RDB storage, SQLite), optuna_attrs_journal.log
(JournalStorage file) holding the same study "attrs", and
optuna_attrs_expected.json with every trial as Optuna itself reports it:
state, params, value, intermediate values, user attributes, start and
completion times (isoformat, naive local time as Optuna writes them), and
whether the trial was enqueued; plus the study's user attributes.

The study: x float in [0, 1] with step 0.25, n int in [1, 4], trial 0
enqueued, trial 2 pruned after two reports, trial 3 failed, every trial with
user attributes (a number, a string, a nested object), the study with two
user attributes.

Regenerate with:  /usr/bin/python3 make_optuna_attrs.py   (Debian python3-optuna 3.1)
"""
import json
import os

import optuna


def objective(trial):
    x = trial.suggest_float("x", 0.0, 1.0, step=0.25)
    n = trial.suggest_int("n", 1, 4)
    trial.set_user_attr("epochs", 10 + trial.number)
    trial.set_user_attr("note", "run %d" % trial.number)
    trial.set_user_attr("nested", {"a": [1, 2], "b": None})
    if trial.number == 2:
        trial.report(5.0, 0)
        trial.report(4.0, 1)
        raise optuna.TrialPruned()
    if trial.number == 3:
        raise RuntimeError("simulated crash")
    return (x - 0.5) ** 2 + n


def fill(storage):
    study = optuna.create_study(study_name="attrs", storage=storage, sampler=optuna.samplers.RandomSampler(seed=11))
    study.set_user_attr("dataset", "iris")
    study.set_user_attr("budget", {"hours": 2})
    study.enqueue_trial({"x": 0.5, "n": 2})
    study.optimize(objective, n_trials=7, catch=(RuntimeError,))
    return study


def iso(t):
    return t.isoformat(timespec="microseconds") if t else None


def describe(study):
    return {
        "user_attrs": study.user_attrs,
        "trials": [
            {
                "number": t.number,
                "state": t.state.name,
                "params": t.params,
                "value": t.value,
                "intermediate": {str(k): v for k, v in t.intermediate_values.items()},
                "user_attrs": t.user_attrs,
                "datetime_start": iso(t.datetime_start),
                "datetime_complete": iso(t.datetime_complete),
                "enqueued": "fixed_params" in t.system_attrs,
            }
            for t in study.trials
        ],
    }


def main():
    for f in ("optuna_attrs_rdb.sqlite3", "optuna_attrs_journal.log"):
        if os.path.exists(f):
            os.remove(f)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rdb = fill("sqlite:///optuna_attrs_rdb.sqlite3")
    journal = fill(optuna.storages.JournalStorage(optuna.storages.JournalFileStorage("optuna_attrs_journal.log")))
    with open("optuna_attrs_expected.json", "w") as f:
        json.dump({"rdb": describe(rdb), "journal": describe(journal)}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
