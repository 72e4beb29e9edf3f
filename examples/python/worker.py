#!/usr/bin/env python3
"""A worker for the xbo tuning service, written on the xbo Python package.

It tunes a small logistic-regression model trained by (mini-batch) gradient
descent on a synthetic two-class data set, all in plain Python: the
hyperparameters are the learning rate, the L2 penalty, the number of epochs
and the batch mode, and the objective is the validation log loss.

    python3 -m pip install --no-index ./python   # once
    xbo serve &                                   # or: xbo serve --token T
    python3 examples/python/worker.py --study logreg --create --trials 30
    python3 examples/python/worker.py --study logreg --trials 30 &   # more workers, same study

Each worker asks the server for a configuration, trains, reports the
validation loss after every epoch (which also keeps the trial from expiring,
and lets a study created with --pruner stop unpromising trials), and tells
the final loss. Several workers may run at once, on any machines; a worker
started before the study exists waits for it (--wait). The package retries
asks and tells after 5xx answers and lost connections, with backoff; each ask
carries an Idempotency-Key, so a retried ask gets the trial the server handed
out for it instead of leaving that trial to expire.
"""

import argparse
import json
import math
import random
import sys

try:
    import xbo
except ImportError:
    sys.exit("worker.py needs the xbo package; from the xbo repository run:\n"
             "    python3 -m pip install --no-index ./python")

SPACE = [
    xbo.Float("lr", 1e-3, 3.0, log=True),
    xbo.Float("l2", 1e-6, 1e-1, log=True),
    xbo.Int("epochs", 2, 40),
    xbo.Categorical("batch", ["full", "mini"]),
]


def make_data(n=400, d=5, seed=7):
    """Two overlapping Gaussian classes; fixed seed, so every worker sees the same data."""
    rng = random.Random(seed)
    w_true = [rng.gauss(0, 1) for _ in range(d)]
    xs, ys = [], []
    for _ in range(n):
        x = [rng.gauss(0, 1) for _ in range(d)]
        z = sum(a * b for a, b in zip(w_true, x)) + rng.gauss(0, 1.0)
        xs.append(x)
        ys.append(1 if z > 0 else 0)
    split = int(0.7 * n)
    return (xs[:split], ys[:split]), (xs[split:], ys[split:])


def sigmoid(z):
    if z >= 0:
        return 1 / (1 + math.exp(-z))
    e = math.exp(z)
    return e / (1 + e)


def log_loss(w, b, xs, ys):
    total = 0.0
    for x, y in zip(xs, ys):
        p = sigmoid(sum(a * c for a, c in zip(w, x)) + b)
        p = min(max(p, 1e-12), 1 - 1e-12)
        total -= y * math.log(p) + (1 - y) * math.log(1 - p)
    return total / len(xs)


def train(params, data, on_epoch=None, seed=0):
    (xs, ys), (vx, vy) = data
    lr, l2, epochs = params["lr"], params["l2"], int(params["epochs"])
    batch = len(xs) if params["batch"] == "full" else 16
    rng = random.Random(seed)
    d = len(xs[0])
    w, b = [0.0] * d, 0.0
    order = list(range(len(xs)))
    loss = log_loss(w, b, vx, vy)
    for epoch in range(epochs):
        rng.shuffle(order)
        for start in range(0, len(order), batch):
            idx = order[start:start + batch]
            gw, gb = [0.0] * d, 0.0
            for i in idx:
                err = sigmoid(sum(a * c for a, c in zip(w, xs[i])) + b) - ys[i]
                for j in range(d):
                    gw[j] += err * xs[i][j]
                gb += err
            m = len(idx)
            w = [wj - lr * (g / m + l2 * wj) for wj, g in zip(w, gw)]
            b -= lr * gb / m
        loss = log_loss(w, b, vx, vy)
        if not math.isfinite(loss):
            raise FloatingPointError("training diverged at epoch %d" % (epoch + 1))
        if on_epoch:
            on_epoch(epoch + 1, loss)
    return loss


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default=None, help="xbo server (default $XBO_URL, then http://127.0.0.1:8080)")
    ap.add_argument("--token", default=None, help="bearer token (default $XBO_TOKEN)")
    ap.add_argument("--study", default="logreg")
    ap.add_argument("--create", action="store_true", help="create the study first (loaded if it exists with this space)")
    ap.add_argument("--strategy", default="ei", help="optimizer strategy when creating")
    ap.add_argument("--pruner", default=None, help="pruner when creating, e.g. median")
    ap.add_argument("--trials", type=int, default=20, help="trials this worker evaluates")
    ap.add_argument("--jobs", type=int, default=1, help="threads evaluating at once")
    ap.add_argument("--wait", type=float, default=60, help="seconds to wait for a study that does not exist yet")
    ap.add_argument("--worker", default=None, help="worker id shown by the server")
    args = ap.parse_args(argv)

    if args.create:
        study = xbo.create_study(args.study, SPACE, url=args.url, token=args.token,
                                 optimizer={"strategy": args.strategy}, pruner=args.pruner,
                                 load_if_exists=True, worker=args.worker)
    else:
        study = xbo.load_study(args.study, url=args.url, token=args.token, wait=args.wait, worker=args.worker)
    print("tuning %s (dashboard: %s)" % (study.name, study.url), file=sys.stderr)
    data = make_data()

    def objective(trial):
        def on_epoch(step, loss):
            trial.report(loss, step)
            if trial.should_prune():
                raise xbo.TrialPruned()

        return train(trial.params, data, on_epoch=on_epoch, seed=trial.number)

    def progress(study, trial):
        if trial.state == "complete":
            print("trial %d %s -> %.4f" % (trial.number, json.dumps(trial.params, sort_keys=True), trial.value), file=sys.stderr)
        else:
            print("trial %d %s: %s" % (trial.number, trial.state, trial.fail_reason or ""), file=sys.stderr)

    # A diverging configuration fails its trial (with the reason) and the
    # worker goes on; any other error stops it.
    study.optimize(objective, n_trials=args.trials, n_jobs=args.jobs,
                   catch=(FloatingPointError, OverflowError), callbacks=[progress])
    best = study.best_trial
    print(json.dumps({"best_trial": best.number, "value": best.value, "params": best.params}))


if __name__ == "__main__":
    main()
