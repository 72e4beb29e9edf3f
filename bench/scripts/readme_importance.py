#!/usr/bin/python3
"""Run the README's main job several times and compare xbo's default
importance with the forest fANOVAs on the same trials.

Each run is the README's quick-start command (examples/train.py, 30 trials,
2 workers, its own SQLite file). On every run's trials it asks

  * xbo's default importance (gp-sobol, with the robust fit),
  * xbo's forest-fanova,
  * Optuna's FanovaImportanceEvaluator and its mean-decrease-impurity
    evaluator (Debian python3-optuna; the trials are added to an in-memory
    Optuna study with create_trial),

and prints, per run, each method's ranking with the default importance's
main and total fraction of the parameter both fANOVAs (xbo's and Optuna's)
rank first, and the trials the robust fit left out. The target: the default
importance never gives less than 10% (main effect) to a parameter both
fANOVAs rank first.

Run from the repository root after building ./xbo (README, "Quick start"):

    /usr/bin/python3 bench/scripts/readme_importance.py --runs 5 --out /tmp/readme-runs

A run takes about a minute on an idle 2-core machine; reuse earlier runs with
--reuse (the databases in --out are read as they are).
"""

import argparse
import json
import os
import subprocess
import sys


def run_job(xbo, out, k):
    db = os.path.join(out, "run%d.db" % k)
    if os.path.exists(db):
        os.remove(db)
    cmd = [xbo, "run", "--space", "examples/train.json", "--trials", "30", "--workers", "2", "--db", db, "--",
           "python3", "examples/train.py", "--lr", "{lr}", "--hidden", "{hidden}", "--activation", "{activation}",
           "--l2", "{l2}", "--batch-size", "{batch_size}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return db


def xbo_importance(xbo, db, method):
    out = subprocess.run([xbo, "explain", "importance", "--db", db, "--study", "train", "--method", method, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def optuna_importances(xbo, db):
    import optuna
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
    from optuna.importance import FanovaImportanceEvaluator, MeanDecreaseImpurityImportanceEvaluator
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = json.load(open("examples/train.json"))
    dists = {}
    for p in space["params"]:
        if p["type"] == "float":
            dists[p["name"]] = FloatDistribution(p["low"], p["high"], log=p.get("log", False))
        elif p["type"] == "int":
            dists[p["name"]] = IntDistribution(p["low"], p["high"], log=p.get("log", False))
        else:
            dists[p["name"]] = CategoricalDistribution(p["choices"])
    export = subprocess.run([xbo, "study", "export", "--db", db, "--name", "train", "--json"],
                            check=True, capture_output=True, text=True).stdout
    study = optuna.create_study()
    for tr in json.loads(export)["trials"]:
        if tr.get("state") != "complete":
            continue
        params = {k: v for k, v in tr["params"].items() if k in dists}
        study.add_trial(optuna.trial.create_trial(params=params, distributions=dists, value=tr["value"]))
    fanova = optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))
    mdi = optuna.importance.get_param_importances(study, evaluator=MeanDecreaseImpurityImportanceEvaluator(seed=0))
    return fanova, mdi, len(study.trials)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default="readme-runs")
    ap.add_argument("--xbo", default="./xbo")
    ap.add_argument("--reuse", action="store_true", help="read the databases already in --out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    misses = 0
    for k in range(1, args.runs + 1):
        db = os.path.join(args.out, "run%d.db" % k)
        if not (args.reuse and os.path.exists(db)):
            db = run_job(args.xbo, args.out, k)
        sobol = xbo_importance(args.xbo, db, "gp-sobol")
        forest = xbo_importance(args.xbo, db, "forest-fanova")
        fanova, mdi, n = optuna_importances(args.xbo, db)
        rank = lambda d: sorted(d, key=lambda k: -d[k])
        forest_main = {r["param"]: r["fraction"] for r in forest["ranking"]}
        first_forest, first_optuna = rank(forest_main)[0], rank(fanova)[0]
        main = {r["param"]: r["fraction"] for r in sobol["ranking"]}
        total = {r["param"]: r["total"] for r in sobol["ranking"]}
        check = sobol.get("model_check") or {}
        out = [o["trial"] for o in check.get("outliers") or []]
        print("run %d (%d trials): values %s" % (k, n, "left out: %s" % out if out else "none left out"))
        print("  gp-sobol      %s" % ", ".join("%s %.0f%% (total %.0f%%)" % (p, 100 * main[p], 100 * total[p]) for p in rank(main)))
        print("  xbo forest    %s" % ", ".join("%s %.0f%%" % (p, 100 * forest_main[p]) for p in rank(forest_main)))
        print("  optuna fanova %s" % ", ".join("%s %.0f%%" % (p, 100 * fanova[p]) for p in rank(fanova)))
        print("  optuna mdi    %s" % ", ".join("%s %.0f%%" % (p, 100 * mdi[p]) for p in rank(mdi)))
        if first_forest == first_optuna:
            ok = main[first_forest] >= 0.10
            misses += not ok
            print("  both fANOVAs rank %s first; gp-sobol gives it %.0f%%: %s" % (first_forest, 100 * main[first_forest], "ok" if ok else "BELOW 10%"))
        else:
            print("  the fANOVAs disagree (%s, %s): no target" % (first_forest, first_optuna))
    print("\n%d of %d runs below the target" % (misses, args.runs))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
