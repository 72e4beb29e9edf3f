#!/usr/bin/python3
"""Creates the Optuna fixtures of a study with pruned trials (run from this directory).

Writes optuna_pruned_rdb.sqlite3 (RDB storage, SQLite) and optuna_pruned_journal.log
(JournalStorage file) holding the same study, and optuna_pruned_expected.json with every
trial as Optuna itself reports it (state, value, parameters, intermediate values), so the
Go tests compare against Optuna's own view.

Study "median-curves" (minimize) runs 16 trials of a learning curve over x in [0, 1]:
  value(step) = (x - 0.3)^2 + 1 / (step + 1),  steps 0..5,
reported at every step under a MedianPruner (3 startup trials, 1 warm-up step); a pruned
trial raises TrialPruned, so Optuna records its last intermediate value as its value.
Trial 2 reports +inf at step 0 (which xbo cannot store) before its finite values, and
trial 1 reports step 2 twice (Optuna keeps the first value and ignores the second).

Regenerate with:  /usr/bin/python3 make_optuna_pruned.py   (Debian python3-optuna 3.1)
"""
import optuna

import make_optuna  # write(), describe()


def objective(trial):
    x = trial.suggest_float("x", 0.0, 1.0)
    value = None
    for step in range(6):
        value = (x - 0.3) ** 2 + 1.0 / (step + 1)
        if trial.number == 2 and step == 0:
            trial.report(float("inf"), step)
            continue
        if trial.number == 1 and step == 2:
            trial.report(value + 5.0, step)
        trial.report(value, step)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return value


def fill(storage):
    study = optuna.create_study(
        study_name="median-curves", storage=storage, direction="minimize",
        sampler=optuna.samplers.RandomSampler(seed=11),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=1),
    )
    study.optimize(objective, n_trials=16)
    return study


if __name__ == "__main__":
    make_optuna.write("optuna_pruned_", fill, make_optuna.describe)
