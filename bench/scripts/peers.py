"""One optimization run of an Optuna sampler, driven by `xbo bench peers`.

The objective lives in the Go process (one implementation for every method):
this script reads one JSON line with the run's settings, then for every trial
writes {"params": {...}} and reads back {"value": v}. With workers > 1 it keeps
that many trials asked and not yet told, telling the oldest first, exactly as
xbo's own runs do. It ends with {"done": true, "ask_seconds": [...]}, the time
each ask took (the sampler's work, suggest calls included).

Optuna (Debian's python3-optuna) is a benchmark baseline only, never a
dependency of xbo.
"""

import collections
import json
import sys
import time

import optuna


def sampler_for(name, seed, workers):
    liar = workers > 1
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, constant_liar=liar)
    if name == "tpe-multivariate":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True, constant_liar=liar)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise SystemExit("unknown sampler %r" % name)


def suggest(trial, params):
    """Suggests every active parameter; params come parents first."""
    out = {}
    for p in params:
        cond = p.get("condition")
        if cond is not None:
            parent = cond["parent"]
            if parent not in out or out[parent] not in cond["values"]:
                continue
        name = p["name"]
        if p["type"] == "float":
            out[name] = trial.suggest_float(name, p["low"], p["high"], log=p.get("log", False))
        elif p["type"] == "int":
            out[name] = trial.suggest_int(name, int(p["low"]), int(p["high"]), log=p.get("log", False))
        else:
            out[name] = trial.suggest_categorical(name, p["choices"])
    return out


def main():
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    spec = json.loads(sys.stdin.readline())
    workers = spec["workers"]
    study = optuna.create_study(direction="minimize", sampler=sampler_for(spec["sampler"], spec["seed"], workers))
    pending = collections.deque()
    ask_seconds = []
    asked = told = 0
    while told < spec["budget"]:
        while len(pending) < workers and asked < spec["budget"]:
            start = time.perf_counter()
            trial = study.ask()
            params = suggest(trial, spec["params"])
            ask_seconds.append(time.perf_counter() - start)
            sys.stdout.write(json.dumps({"params": params}) + "\n")
            sys.stdout.flush()
            reply = json.loads(sys.stdin.readline())
            pending.append((trial, reply["value"]))
            asked += 1
        trial, value = pending.popleft()
        study.tell(trial, value)
        told += 1
    sys.stdout.write(json.dumps({"done": True, "ask_seconds": ask_seconds}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
