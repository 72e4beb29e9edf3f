#!/usr/bin/env python3
"""Exact functional ANOVA of the Online LDA grid under two level weightings.

The grid (kappa 6 values, tau0 6, batch size S 8; ../shared/data/lda_on_grid.csv,
the row (0.5, 1024, 64) twice and averaged) is its own ground truth. Its
fractions of variance depend on the weight each level gets:

  * equal: every level weighted 1/L, the grid's own functional ANOVA
    (the "grid" column of TestOnlineLDA and TestOnlineLDARuntime in
    explain/fanova);
  * half-ends: the two end levels of every parameter weighted half an inner
    level. A random forest's fANOVA (Hutter, Hoos and Leyton-Brown 2014)
    marginalizes over the uniform measure on the encoded box; the trees split
    half-way between adjacent levels, which are evenly spaced in the encoding
    (kappa linear, tau0 and S logarithmic), so each end level owns a cell half
    as wide as an inner one.

Prints the main effects and pair interactions of perplexity and runtime, each
a fraction of the total variance, for both weightings.

    /usr/bin/python3 bench/scripts/lda_grid_anova.py [--csv PATH]
"""
import argparse
import csv
import os

import numpy as np

NAMES = ["kappa", "tau0", "S"]


def table(rows, levels, col):
    s = np.zeros([len(l) for l in levels])
    c = np.zeros_like(s)
    for r in rows:
        i = tuple(levels[j].index(float(r[NAMES[j]])) for j in range(3))
        s[i] += float(r[col])
        c[i] += 1
    if (c == 0).any():
        raise SystemExit("the grid is incomplete")
    return s / c


def anova(f, w):
    weight = np.einsum("i,j,k->ijk", *w)
    f0 = (weight * f).sum()
    var = (weight * (f - f0) ** 2).sum()
    marg = []
    for j in range(3):
        others = tuple(k for k in range(3) if k != j)
        wo = np.einsum("i,j->ij", *[w[k] for k in others])
        marg.append(np.tensordot(f, wo, axes=(others, (0, 1))))
    out = {NAMES[j]: (w[j] * (marg[j] - f0) ** 2).sum() / var for j in range(3)}
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        c = 3 - a - b
        mab = np.tensordot(f, w[c], axes=([c], [0]))
        d = mab - marg[a][:, None] - marg[b][None, :] + f0
        out[NAMES[a] + "," + NAMES[b]] = (np.outer(w[a], w[b]) * d**2).sum() / var
    return out


def weights(kind, n):
    if kind == "equal":
        return np.full(n, 1 / n)
    e = np.ones(n)
    e[0] = e[-1] = 0.5
    return e / e.sum()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=os.path.join(here, "../../../shared/data/lda_on_grid.csv"))
    args = ap.parse_args()
    with open(args.csv) as fh:
        rows = list(csv.DictReader(fh))
    levels = [sorted({float(r[n]) for r in rows}) for n in NAMES]
    print("response    weighting  " + " ".join(f"{k:>10}" for k in NAMES + ["kappa,tau0", "kappa,S", "tau0,S"]))
    for col in ["perplexity", "runtime_s"]:
        f = table(rows, levels, col)
        for kind in ["equal", "half-ends"]:
            r = anova(f, [weights(kind, len(l)) for l in levels])
            print(f"{col:<11} {kind:<10} " + " ".join(f"{v:>10.3f}" for v in r.values()))


if __name__ == "__main__":
    main()
