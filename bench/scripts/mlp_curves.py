"""Real learning curves for `xbo bench multifidelity` (problem digits-mlp).

Trains scikit-learn's MLPClassifier with SGD on the digits data that
scikit-learn ships (1,797 8x8 images, no download), one epoch at a time,
for every configuration of a grid, and writes the validation log-loss after
each epoch: a tabular benchmark in the manner of LCBench (Zimmer et al.
2021), whose curve files this workplace cannot fetch. Every value is a real
training run's, so the curves have what real curves have and the synthetic
ones do not: noise that is correlated from epoch to epoch, divergence at
large learning rates, and over-fitting that makes some curves rise.

The grid (int parameters, so that every proposal of every optimizer is a
row of the table):

  log2_learning_rate  -12 .. -2   SGD step size 2^k (2.4e-4 .. 0.25)
  log2_batch_size       4 .. 8    16 .. 256
  log2_hidden_units     4 .. 8    16 .. 256 units per layer
  log10_alpha          -5 .. 0    L2 penalty (scikit-learn's alpha)
  num_layers            1 .. 3

Fixed: momentum 0.9 (Nesterov), constant step size, random_state 0, the
inputs scaled to [0, 1], a stratified half of the data for training (898
images) and the other half for validation (899). A network that diverges
(a non-finite loss) is given the cap 10 from that epoch on, as is any loss
above it; the cap is about four times the loss of a uniform guess (ln 10).

Usage: /usr/bin/python3 bench/scripts/mlp_curves.py [--jobs N] > out.csv
Needs Debian's python3-sklearn (a benchmark tool, never a dependency of
xbo). The run took about 15 minutes on two cores.
"""

import argparse
import csv
import itertools
import math
import multiprocessing
import os
import sys
import warnings

# One thread per worker process: the pool is the parallelism.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

EPOCHS = 27
CAP = 10.0
GRID = [
    ("log2_learning_rate", range(-12, -1)),
    ("log2_batch_size", range(4, 9)),
    ("log2_hidden_units", range(4, 9)),
    ("log10_alpha", range(-5, 1)),
    ("num_layers", range(1, 4)),
]

_data = None


def data():
    global _data
    if _data is None:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        x, y = load_digits(return_X_y=True)
        x = x / 16.0
        _data = train_test_split(x, y, test_size=0.5, stratify=y, random_state=0)
    return _data


def curve(config):
    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import log_loss
    from sklearn.neural_network import MLPClassifier

    lr2, batch2, units2, alpha10, layers = config
    xtr, xva, ytr, yva = data()
    net = MLPClassifier(
        hidden_layer_sizes=(2**units2,) * layers,
        solver="sgd",
        learning_rate="constant",
        learning_rate_init=2.0**lr2,
        batch_size=2**batch2,
        alpha=10.0**alpha10,
        momentum=0.9,
        nesterovs_momentum=True,
        random_state=0,
    )
    classes = np.unique(ytr)
    out = []
    diverged = False
    for _ in range(EPOCHS):
        loss = CAP
        if not diverged:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                net.partial_fit(xtr, ytr, classes=classes)
                p = net.predict_proba(xva)
            if np.all(np.isfinite(p)):
                loss = min(CAP, log_loss(yva, p, labels=classes))
            if not math.isfinite(loss) or loss >= CAP:
                loss, diverged = CAP, not np.all(np.isfinite(p))
        out.append(loss)
    return config, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--limit", type=int, default=0, help="only the first N configurations (a trial run)")
    args = ap.parse_args()
    configs = list(itertools.product(*(values for _, values in GRID)))
    if args.limit:
        configs = configs[: args.limit]
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow([name for name, _ in GRID] + ["loss_%d" % (t + 1) for t in range(EPOCHS)])
    with multiprocessing.Pool(args.jobs) as pool:
        for done, (config, losses) in enumerate(pool.imap(curve, configs, chunksize=4), 1):
            w.writerow(list(config) + ["%.5g" % v for v in losses])
            if done % 100 == 0:
                print("%d/%d" % (done, len(configs)), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
