#!/usr/bin/python3
"""Runs Optuna's own pruners on simulated learning curves and prints every decision.

For each case below, 4 workers train 40 trials concurrently through Optuna's ask-and-tell
interface (in-memory storage): at every event one worker reports its trial's next step,
asks should_prune() and obeys it (tell PRUNED), or tells COMPLETE after its last step.
The printed JSON lists every report with Optuna's decision and every tell, in order, so a
test can replay the same reports through xbo's pruners (package prune) and compare the
decisions one by one. It also lists, for the Hyperband cases, the bracket Optuna assigns
to trial numbers 0..199.

Usage: /usr/bin/python3 optuna_replay.py [seed]      (Debian python3-optuna 3.1)
"""
import json
import math
import random
import sys

import optuna
from optuna.trial import TrialState

STEPS = 27
WORKERS = 4
TRIALS = 40

CASES = [
    ("median", "minimize", {"type": "median", "n_startup_trials": 3, "n_warmup_steps": 2, "interval_steps": 2},
     lambda: optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=2, interval_steps=2)),
    ("percentile-30-min-trials", "minimize",
     {"type": "percentile", "percentile": 30, "n_startup_trials": 2, "n_min_trials": 3},
     lambda: optuna.pruners.PercentilePruner(30.0, n_startup_trials=2, n_min_trials=3)),
    ("percentile-70-maximize", "maximize", {"type": "percentile", "percentile": 70, "n_startup_trials": 4},
     lambda: optuna.pruners.PercentilePruner(70.0, n_startup_trials=4)),
    ("asha-2", "minimize", {"type": "asha", "min_resource": 1, "reduction_factor": 2},
     lambda: optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=2)),
    ("asha-3-rate-bootstrap-maximize", "maximize",
     {"type": "asha", "min_resource": 2, "reduction_factor": 3, "min_early_stopping_rate": 1, "bootstrap_count": 2},
     lambda: optuna.pruners.SuccessiveHalvingPruner(min_resource=2, reduction_factor=3,
                                                    min_early_stopping_rate=1, bootstrap_count=2)),
    ("hyperband-27", "minimize", {"type": "hyperband", "min_resource": 1, "max_resource": 27, "reduction_factor": 3},
     lambda: optuna.pruners.HyperbandPruner(min_resource=1, max_resource=27, reduction_factor=3)),
    ("hyperband-20-eta2-maximize", "maximize",
     {"type": "hyperband", "min_resource": 1, "max_resource": 20, "reduction_factor": 2, "bootstrap_count": 1},
     lambda: optuna.pruners.HyperbandPruner(min_resource=1, max_resource=20, reduction_factor=2, bootstrap_count=1)),
]


def curve(rng, maximize):
    """A noisy learning curve: value(step) for steps 1..STEPS."""
    final = rng.uniform(0.05, 0.6)
    amp = rng.uniform(0.2, 1.0)
    tau = rng.uniform(2.0, 10.0)
    pts = [final + amp * math.exp(-s / tau) + rng.gauss(0, 0.02) for s in range(1, STEPS + 1)]
    if maximize:
        pts = [1.0 - v for v in pts]
    return pts


def run(name, direction, make_pruner, seed):
    rng = random.Random(seed)
    study = optuna.create_study(study_name="replay-" + name, direction=direction, pruner=make_pruner())
    maximize = direction == "maximize"
    events = []
    started = 0
    workers = []  # [trial, curve, next step index]
    while started < TRIALS or workers:
        while len(workers) < WORKERS and started < TRIALS:
            trial = study.ask()
            started += 1
            workers.append([trial, curve(rng, maximize), 0])
        w = workers[rng.randrange(len(workers))]
        trial, pts, i = w
        step, value = i + 1, pts[i]
        trial.report(value, step)
        prune = bool(trial.should_prune())
        events.append({"trial": trial.number, "step": step, "value": value, "prune": prune})
        w[2] += 1
        if prune:
            study.tell(trial, state=TrialState.PRUNED)
            events.append({"trial": trial.number, "tell": "pruned"})
            workers.remove(w)
        elif w[2] == STEPS:
            study.tell(trial, value)
            events.append({"trial": trial.number, "tell": "complete"})
            workers.remove(w)
    out = {"name": name, "study": study.study_name, "direction": direction, "events": events}
    pruner = study.pruner
    if isinstance(pruner, optuna.pruners.HyperbandPruner):
        out["bracket_of"] = [pruner._get_bracket_id(study, _Numbered(n)) for n in range(200)]
    return out


class _Numbered:
    def __init__(self, number):
        self.number = number


def main():
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    cases = []
    for k, (name, direction, config, make) in enumerate(CASES):
        c = run(name, direction, make, seed * 100 + k)
        c["pruner"] = config
        cases.append(c)
    json.dump({"optuna": optuna.__version__, "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
