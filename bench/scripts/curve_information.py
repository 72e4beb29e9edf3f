#!/usr/bin/python3
"""How much the early epochs of the digits-mlp table say about the final loss.

For each prefix of k epochs (k = 1, 2, 3, 9) this prints Spearman's rank
correlation between the loss at epoch k and the final loss (epoch 27): over
all configurations, over the better half (by final loss) and over the
configurations that end below 0.15; then the same for a random forest that
predicts the final log-loss from the configuration and the log-losses of the
prefix, out of fold (5 folds, trained on 3,960 complete curves: far more than
any tuning run has), and for a forest given the configuration alone. If the
prefix added to the configuration does not rank the good configurations
better than the configuration alone, no model of the curves can give a
pruner the information it would need to choose between them.

Benchmark analysis only (Debian's python3-sklearn, python3-scipy); run from
the repository root: /usr/bin/python3 bench/scripts/curve_information.py
(docs/research/multifidelity.md, "How much the early epochs can tell").
"""
import numpy as np
from scipy.stats import spearmanr
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import KFold

table = np.genfromtxt("bench/curves/digits_mlp.csv", delimiter=",", skip_header=1)
config, loss = table[:, :5], table[:, 5:]
final = loss[:, -1]
half = final <= np.median(final)
good = final < 0.15


def rho(pred, mask):
    return spearmanr(pred[mask], final[mask])[0]


def out_of_fold(features):
    pred = np.zeros(len(final))
    for train, test in KFold(5, shuffle=True, random_state=0).split(features):
        forest = RandomForestRegressor(200, min_samples_leaf=2, n_jobs=2, random_state=0)
        forest.fit(features[train], np.log(final[train]))
        pred[test] = forest.predict(features[test])
    return pred


everyone = np.ones(len(final), dtype=bool)
print(f"{len(final)} configurations; better half {half.sum()}; ending below 0.15 {good.sum()}")
print("epochs  value at epoch k: all  better half  below 0.15  |  forest(configuration, prefix): all  better half  below 0.15")
for k in (1, 2, 3, 9):
    raw = loss[:, k - 1]
    pred = out_of_fold(np.hstack([config, np.log(loss[:, :k])]))
    print(f"{k:6d}  {rho(raw, everyone):22.3f}  {rho(raw, half):11.3f}  {rho(raw, good):10.3f}  |"
          f"  {rho(pred, everyone):34.3f}  {rho(pred, half):11.3f}  {rho(pred, good):10.3f}")
pred = out_of_fold(config)
print(f"forest(configuration alone): all {rho(pred, everyone):.3f}  better half {rho(pred, half):.3f}  below 0.15 {rho(pred, good):.3f}")
