"""One optimization run of an Optuna sampler, driven by `xbo bench peers`
(and by `xbo bench multiobjective`).

The objective lives in the Go process (one implementation for every method):
this script reads one JSON line with the run's settings, then for every trial
writes {"params": {...}} and reads back {"value": v}. With workers > 1 it keeps
that many trials asked and not yet told, telling the oldest first, exactly as
xbo's own runs do. It ends with {"done": true, "ask_seconds": [...]}, the time
each ask took (the sampler's work, suggest calls included).

With "pruner" in the settings (`xbo bench multifidelity`) a run is sequential
and every trial has a learning curve: after {"params": ...} it reads
{"curve": [v1, v2, ...], "last": bool} (the values at steps 1, 2, ...),
reports them one by one until the pruner says stop, tells the trial pruned or
complete (with its value at the last step), and writes {"used": steps,
"pruned": bool}. "last" marks a curve cut short by the end of the run's
resource: unless pruned, that trial is not told and the run ends. A reply
{"stop": true} ends the run.

With "objectives": m > 1 in the settings (`xbo bench multiobjective`) the
study has m minimized objectives: the reply is {"values": [...],
"constraints": [...]} (constraints feasible when ≤ 0, given to the sampler
through its constraints_func when the run has any), and the samplers are
"nsga2" (NSGA-II with Optuna's defaults) and "tpe" (TPE, which is
multi-objective in Optuna 3.1, multivariate, with the constant liar when
workers > 1).

Optuna (Debian's python3-optuna) is a benchmark baseline only, never a
dependency of xbo.
"""

import collections
import json
import sys
import time

import optuna


def constraints_of(trial):
    return trial.user_attrs["constraints"]


def mo_sampler(name, seed, workers, constrained):
    """A sampler for several objectives (and constraints)."""
    cf = constraints_of if constrained else None
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, constraints_func=cf)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=workers > 1, constraints_func=cf)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise SystemExit("unknown sampler %r for several objectives" % name)


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


def pruner_for(name, steps):
    if name == "median":
        return optuna.pruners.MedianPruner()
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1, max_resource=steps, reduction_factor=3)
    raise SystemExit("unknown pruner %r" % name)


def write(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def ask(study, params, ask_seconds):
    """Asks a trial, times the ask, sends its parameters and reads the reply."""
    start = time.perf_counter()
    trial = study.ask()
    values = suggest(trial, params)
    ask_seconds.append(time.perf_counter() - start)
    write({"params": values})
    return trial, json.loads(sys.stdin.readline())


def multifidelity(spec):
    # The study's name draws Hyperband's brackets: "bench", as xbo's runs.
    study = optuna.create_study(
        study_name="bench",
        direction="minimize",
        sampler=sampler_for(spec["sampler"], spec["seed"], 1),
        pruner=pruner_for(spec["pruner"], spec["steps"]),
    )
    ask_seconds = []
    while True:
        trial, reply = ask(study, spec["params"], ask_seconds)
        if reply.get("stop"):
            break
        curve = reply["curve"]
        used, pruned = 0, False
        for step, value in enumerate(curve, start=1):
            used = step
            trial.report(value, step)
            if trial.should_prune():
                pruned = True
                break
        if pruned:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        elif not reply.get("last"):
            study.tell(trial, curve[-1])
        write({"used": used, "pruned": pruned})
        if reply.get("last") and not pruned:
            break
    write({"done": True, "ask_seconds": ask_seconds})


def main():
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    spec = json.loads(sys.stdin.readline())
    if spec.get("pruner"):
        multifidelity(spec)
        return
    workers = spec["workers"]
    objectives = spec.get("objectives", 1)
    constrained = spec.get("constraints", 0) > 0
    if objectives > 1:
        sampler = mo_sampler(spec["sampler"], spec["seed"], workers, constrained)
        study = optuna.create_study(directions=["minimize"] * objectives, sampler=sampler)
    else:
        study = optuna.create_study(direction="minimize", sampler=sampler_for(spec["sampler"], spec["seed"], workers))
    pending = collections.deque()
    ask_seconds = []
    asked = told = 0
    while told < spec["budget"]:
        while len(pending) < workers and asked < spec["budget"]:
            trial, reply = ask(study, spec["params"], ask_seconds)
            if objectives > 1:
                if constrained:
                    trial.set_user_attr("constraints", reply["constraints"])
                pending.append((trial, reply["values"]))
            else:
                pending.append((trial, reply["value"]))
            asked += 1
        trial, value = pending.popleft()
        study.tell(trial, value)
        told += 1
    write({"done": True, "ask_seconds": ask_seconds})


if __name__ == "__main__":
    main()
