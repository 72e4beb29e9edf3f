"""Full-grid hyperparameter tables from real scikit-learn training runs.

Writes two ground-truth tables for xbo's explanation benchmark: every
combination of every level of every hyperparameter is trained and scored, so
partial dependence and functional-ANOVA (Sobol) indices can be computed
exactly from the whole table (bench.LoadGrid reads them).

  sgd       MLPClassifier trained by solver="sgd" on load_digits; objective the
            validation log loss. Large learning rates genuinely diverge
            (weights overflow to inf/NaN, or finite but absurd losses), tiny
            ones barely move from the random initialisation (a plateau at
            2.5-2.9, worse than the ln 10 = 2.303 of a uniform guess).
            -> bench/testdata/sklearn_sgd_grid.csv        (1,512 rows)
  boosting  HistGradientBoostingClassifier on load_breast_cancer; objective
            the 5-fold CV mean log loss.
            -> bench/testdata/sklearn_boosting_grid.csv   (960 rows)

Only data sets that ship inside scikit-learn are used (no download). Every
random_state is fixed and everything runs in one process with one BLAS/OpenMP
thread, so a rerun with the same library versions writes byte-identical CSVs
(checked here: `verify` recomputes rows and compares the printed values).
The tables hold no timings for that reason.

Usage (Debian's python3-sklearn; scikit-learn 1.2.1, numpy 1.24.2 here):

  nice -n 10 /usr/bin/python3 bench/scripts/sklearn_grids.py make sgd
  nice -n 10 /usr/bin/python3 bench/scripts/sklearn_grids.py make boosting
  /usr/bin/python3 bench/scripts/sklearn_grids.py verify sgd --every 1
  /usr/bin/python3 bench/scripts/sklearn_grids.py summary sgd boosting

`make` writes bench/testdata/sklearn_<name>_grid.csv (or --out PATH) and
reports progress on stderr. `verify` recomputes every K-th training run and
compares it with the CSV string for string. `summary` prints the facts quoted
in bench/testdata/README.md (objective quantiles, diverged rows, exact
main-effect and total-effect variance fractions under uniform weights).

Run time here (2 shared cores, nice 10, one process, wall clock): sgd 6.0
min (362 s), boosting 10.8 min (646 s); see bench/testdata/README.md.
"""

import os

# One thread everywhere, set before numpy/scipy/sklearn load their BLAS/OpenMP.
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse
import csv
import itertools
import math
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.normpath(os.path.join(HERE, "..", "testdata"))

# sklearn.metrics.log_loss (1.2) clips probabilities to [eps, 1-eps] with
# eps = finfo(float64).eps, so no single prediction can cost more than
# -ln(eps) = 36.04. A network whose weights overflowed to inf/NaN has no
# probabilities at all; it is given this ceiling of the metric.
EPS = float(np.finfo(np.float64).eps)
DIVERGED_LOSS = -math.log(EPS)

# ---------------------------------------------------------------- sgd table

MOMENTUM = {0: "plain SGD (momentum 0)", 1: "heavy-ball momentum 0.9", 2: "Nesterov momentum 0.9"}
SGD_EPOCHS = 20
SGD_GRID = [
    ("learning_rate_init", [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0]),
    ("alpha", [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]),
    ("batch_size", [16, 64, 256]),
    ("momentum", [0, 1, 2]),
    ("hidden_units", [16, 64]),
]
SGD_OUT = ["val_loss", "val_error", "nonfinite_weights"]

_digits = None


def digits():
    """Stratified 50/50 split of the 1,797 digits, standardized on the train half."""
    global _digits
    if _digits is None:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
        from sklearn.preprocessing import StandardScaler

        x, y = load_digits(return_X_y=True)
        xtr, xva, ytr, yva = train_test_split(x, y, test_size=0.5, stratify=y, random_state=0)
        sc = StandardScaler().fit(xtr)
        _digits = sc.transform(xtr), sc.transform(xva), ytr, yva
    return _digits


def sgd_run(config):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import log_loss
    from sklearn.neural_network import MLPClassifier

    lr, alpha, batch, mom, units = config
    xtr, xva, ytr, yva = digits()
    net = MLPClassifier(
        hidden_layer_sizes=(units,),
        activation="relu",
        solver="sgd",
        learning_rate="constant",
        learning_rate_init=lr,
        alpha=alpha,
        batch_size=batch,
        momentum=0.0 if mom == 0 else 0.9,
        nesterovs_momentum=(mom == 2),
        max_iter=SGD_EPOCHS,
        tol=0.0,
        n_iter_no_change=SGD_EPOCHS + 1,  # never stop early: exactly SGD_EPOCHS epochs
        early_stopping=False,
        shuffle=True,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow inside diverging runs
        try:
            net.fit(xtr, ytr)
            p = net.predict_proba(xva)
        except ValueError as e:
            if "non-finite parameter weights" not in str(e):
                raise
            p = None
    if p is None or not np.all(np.isfinite(p)):
        # No probabilities: the ceiling of the clipped metric; argmax of NaN
        # scores is class 0, so the error is that of always answering 0.
        return [DIVERGED_LOSS, float(np.mean(yva != 0)), 1]
    loss = log_loss(yva, p, labels=np.arange(10))
    err = float(np.mean(net.classes_[np.argmax(p, axis=1)] != yva))
    return [float(loss), err, 0]


def sgd_rows(configs):
    for c in configs:
        yield [c], [sgd_run(c)]


# ----------------------------------------------------------- boosting table

BOOST_GRID = [
    ("learning_rate", [0.01, 0.03, 0.1, 0.3, 1.0]),
    ("max_leaf_nodes", [2, 4, 8, 16]),
    ("min_samples_leaf", [1, 4, 16, 64]),
    ("l2_regularization", [0.0, 1.0, 10.0]),
    ("max_iter", [10, 30, 100, 300]),
]
BOOST_OUT = ["val_loss", "val_error"]
BOOST_FOLDS = 5

_cancer = None


def cancer():
    global _cancer
    if _cancer is None:
        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import KFold

        x, y = load_breast_cancer(return_X_y=True)
        folds = list(KFold(BOOST_FOLDS, shuffle=True, random_state=0).split(x))
        _cancer = x, y, folds
    return _cancer


def boost_run(head):
    """One fit per fold with the largest max_iter; every smaller max_iter is
    read from staged_predict_proba, which for HistGradientBoosting without
    early stopping equals a separate fit with that max_iter bit for bit."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import log_loss

    lr, leaves, minleaf, l2 = head
    x, y, folds = cancer()
    iters = BOOST_GRID[-1][1]
    losses = np.zeros((len(iters), len(folds)))
    errors = np.zeros((len(iters), len(folds)))
    for f, (tr, va) in enumerate(folds):
        m = HistGradientBoostingClassifier(
            loss="log_loss",
            learning_rate=lr,
            max_iter=max(iters),
            max_leaf_nodes=leaves,
            max_depth=None,
            min_samples_leaf=minleaf,
            l2_regularization=l2,
            max_bins=255,
            early_stopping=False,
            random_state=0,
        ).fit(x[tr], y[tr])
        for k, p in enumerate(m.staged_predict_proba(x[va]), 1):
            if k in iters:
                i = iters.index(k)
                losses[i, f] = log_loss(y[va], p, labels=[0, 1])
                errors[i, f] = np.mean(m.classes_[np.argmax(p, axis=1)] != y[va])
    return [[float(losses[i].mean()), float(errors[i].mean())] for i in range(len(iters))]


def boost_rows(heads):
    iters = BOOST_GRID[-1][1]
    for h in heads:
        yield [tuple(h) + (n,) for n in iters], boost_run(h)


# --------------------------------------------------------------- plumbing

TABLES = {
    # name: (grid, objective columns, row generator, unit of work)
    "sgd": (SGD_GRID, SGD_OUT, sgd_rows, SGD_GRID),
    "boosting": (BOOST_GRID, BOOST_OUT, boost_rows, BOOST_GRID[:-1]),
}


def fmt(v):
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    if not math.isfinite(v):
        raise ValueError("non-finite value %r" % v)
    return repr(v)  # shortest string that round-trips the float64 exactly


def default_path(name):
    return os.path.join(TESTDATA, "sklearn_%s_grid.csv" % name)


def units(name):
    grid, _, _, unit = TABLES[name]
    return list(itertools.product(*(values for _, values in unit)))


def make(name, out):
    grid, cols, rows, _ = TABLES[name]
    work = units(name)
    t0 = time.time()
    lines = []
    for done, (configs, values) in enumerate(rows(work), 1):
        for c, v in zip(configs, values):
            lines.append([fmt(a) for a in c] + [fmt(a) for a in v])
        if done % max(1, len(work) // 20) == 0 or done == len(work):
            el = time.time() - t0
            print("%s %d/%d %.0fs elapsed, ~%.0fs to go" % (name, done, len(work), el, el / done * (len(work) - done)),
                  file=sys.stderr, flush=True)
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow([n for n, _ in grid] + cols)
        w.writerows(lines)
    print("%s: %d rows in %.1f s -> %s" % (name, len(lines), time.time() - t0, out), file=sys.stderr)


def verify(name, path, every):
    grid, cols, rows, _ = TABLES[name]
    with open(path, newline="") as fh:
        table = list(csv.reader(fh))
    header, body = table[0], table[1:]
    stored = {tuple(r[: len(grid)]): r[len(grid):] for r in body}
    work = units(name)[::every]
    bad = checked = 0
    for configs, values in rows(work):
        for c, v in zip(configs, values):
            key = tuple(fmt(a) for a in c)
            got = [fmt(a) for a in v]
            checked += 1
            if stored.get(key) != got:
                bad += 1
                print("MISMATCH", key, stored.get(key), got)
    print("%s: %d rows recomputed, %d differ" % (name, checked, bad))
    return bad == 0


def load(name, path):
    grid, cols, _, _ = TABLES[name]
    with open(path, newline="") as fh:
        r = csv.reader(fh)
        header = next(r)
        data = np.array([[float(v) for v in row] for row in r])
    names = [n for n, _ in grid]
    levels = [np.unique(data[:, header.index(n)]) for n in names]
    shape = tuple(len(l) for l in levels)
    assert len(data) == int(np.prod(shape)), "not a full grid"
    cubes = {}
    idx = tuple(np.searchsorted(levels[j], data[:, header.index(n)]) for j, n in enumerate(names))
    for c in cols:
        cube = np.full(shape, np.nan)
        cube[idx] = data[:, header.index(c)]
        assert np.all(np.isfinite(cube)), "missing or duplicate rows"
        cubes[c] = cube
    return names, levels, cubes


def effects(cube):
    """Exact first-order and total Sobol fractions of a full grid, uniform weights."""
    total = cube.var()
    d = cube.ndim
    out = []
    for j in range(d):
        others = tuple(k for k in range(d) if k != j)
        main = cube.mean(axis=others).var() / total
        # total effect: E over the others of the variance along axis j
        tot = cube.var(axis=j).mean() / total
        out.append((main, tot))
    return out


def summary(name, path):
    names, levels, cubes = load(name, path)
    v = cubes["val_loss"]
    med = float(np.median(v))
    print("== %s (%s): %d rows, levels %s" % (name, os.path.relpath(path), v.size, "x".join(str(len(l)) for l in levels)))
    print("val_loss min %.4f  q25 %.4f  median %.4f  q75 %.4f  max %.4f  mean %.4f" % (
        v.min(), np.quantile(v, 0.25), med, np.quantile(v, 0.75), v.max(), v.mean()))
    e = cubes["val_error"]
    print("val_error min %.4f  median %.4f  max %.4f" % (e.min(), np.median(e), e.max()))
    print("rows with val_loss >= 10 x median (%.3f): %d" % (10 * med, int(np.sum(v >= 10 * med))))
    if name == "sgd":
        nf = cubes["nonfinite_weights"]
        print("rows with non-finite weights (val_loss = %.4f): %d" % (DIVERGED_LOSS, int(nf.sum())))
        print("rows with val_loss > ln 10 = %.4f (worse than a uniform guess): %d" % (math.log(10), int(np.sum(v > math.log(10)))))
        lr = levels[0]
        for i, l in enumerate(lr):
            s = v[i]
            print("  learning_rate_init %-7g  median %.4f  min %.4f  non-finite %d/%d" % (
                l, np.median(s), s.min(), int(nf[i].sum()), s.size))
    best = np.unravel_index(np.argmin(v), v.shape)
    print("argmin:", ", ".join("%s=%g" % (n, levels[j][best[j]]) for j, n in enumerate(names)))
    for obj, cube in (("val_loss", v), ("log(val_loss)", np.log(v))):
        fx = effects(cube)
        print("%s variance fractions (main / total), uniform weights; sum of mains %.4f:" % (obj, sum(m for m, _ in fx)))
        for n, (m, t) in sorted(zip(names, fx), key=lambda z: -z[1][0]):
            print("  %-20s %.4f  %.4f" % (n, m, t))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("table", choices=sorted(TABLES))
    m.add_argument("--out")
    v = sub.add_parser("verify")
    v.add_argument("table", choices=sorted(TABLES))
    v.add_argument("--every", type=int, default=10, help="recompute every K-th unit of work")
    v.add_argument("--path")
    s = sub.add_parser("summary")
    s.add_argument("tables", nargs="+", choices=sorted(TABLES))
    a = ap.parse_args()
    if a.cmd == "make":
        make(a.table, a.out or default_path(a.table))
    elif a.cmd == "verify":
        sys.exit(0 if verify(a.table, a.path or default_path(a.table), a.every) else 1)
    else:
        for t in a.tables:
            summary(t, default_path(t))


if __name__ == "__main__":
    main()
