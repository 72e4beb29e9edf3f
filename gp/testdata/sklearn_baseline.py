#!/usr/bin/python3
"""Time scikit-learn's GP against xbo/gp on the same data, in the same run.

Data: testdata/bench_train_T200_d6.csv (200 noisy Hartmann6 observations on
[0,1]^6, columns x0..x5,y) and testdata/bench_cand_1500_d6.csv (1500 uniform
candidates), written by `go test ./gp -run TestWriteBenchData -gen`.

The "Ask" of a Bayesian optimizer is one refit plus mean and standard
deviation at the 1500 candidates. scikit-learn's model:
    ConstantKernel * Matern(nu=2.5, ARD lengthscales) + WhiteKernel,
    normalize_y=True, L-BFGS-B from the default start
    (n_restarts_optimizer=0) and with 2 extra random restarts (3 runs).
xbo's: Matern52 ARD + noise on standardized y, L-BFGS from 3 starts
(BenchmarkAskCold) or 1 warm start (BenchmarkAskWarm).

Usage (from the repository root, Debian's python3-sklearn):
    /usr/bin/python3 gp/testdata/sklearn_baseline.py
It alternates the Go benchmarks and scikit-learn (median of 3 fits each) for
3 rounds and prints the per-round and median speed-ups.
"""
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REPEATS = 3
ROUNDS = 3


def load():
    train = np.loadtxt(os.path.join(HERE, "bench_train_T200_d6.csv"), delimiter=",")
    cand = np.loadtxt(os.path.join(HERE, "bench_cand_1500_d6.csv"), delimiter=",")
    return train[:, :-1], train[:, -1], cand


def sklearn_ask(x, y, cand, restarts):
    d = x.shape[1]
    kernel = ConstantKernel(1.0) * Matern(length_scale=np.ones(d), nu=2.5) + WhiteKernel(1e-3)
    gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True,
                                  n_restarts_optimizer=restarts, random_state=0)
    gp.fit(x, y)
    mean, std = gp.predict(cand, return_std=True)
    return gp, mean, std


def time_sklearn(x, y, cand, restarts):
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        gp, _, _ = sklearn_ask(x, y, cand, restarts)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), gp


def go_benchmarks():
    out = subprocess.run(
        ["go", "test", "./gp", "-run", "^$", "-bench", "^Benchmark(AskCold|AskWarm|Predict1500)$",
         "-benchtime", "5x", "-count", "1"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        m = re.match(r"Benchmark(\w+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
        if m:
            res[m.group(1)] = float(m.group(3)) * 1e-9
            lml = re.search(r"(-?[\d.]+) LML", line)
            if lml:
                res[m.group(1) + "LML"] = float(lml.group(1))
    return res, out


def main():
    x, y, cand = load()
    warnings.simplefilter("ignore", ConvergenceWarning)
    # The machine is shared: Go and scikit-learn are timed alternately in
    # ROUNDS rounds, ratios are taken within a round, and the median is kept.
    ratios = {"warm/sk1": [], "cold3/sk1": [], "cold3/sk3": []}
    for r in range(ROUNDS):
        go, raw = go_benchmarks()
        if not {"AskCold", "AskWarm"} <= go.keys():
            sys.exit("go benchmarks did not report AskCold/AskWarm:\n" + raw)
        sk1, gp1 = time_sklearn(x, y, cand, 0)
        sk3, gp3 = time_sklearn(x, y, cand, 2)
        print(f"round {r+1}: xbo warm {go['AskWarm']*1e3:.1f} ms, xbo cold3 {go['AskCold']*1e3:.1f} ms, "
              f"xbo predict-only {go.get('Predict1500', float('nan'))*1e3:.1f} ms, "
              f"sklearn 1 start {sk1*1e3:.1f} ms, sklearn 3 starts {sk3*1e3:.1f} ms")
        ratios["warm/sk1"].append(sk1 / go["AskWarm"])
        ratios["cold3/sk1"].append(sk1 / go["AskCold"])
        ratios["cold3/sk3"].append(sk3 / go["AskCold"])
    print(f"log marginal likelihood of standardized y: xbo warm {go.get('AskWarmLML')}, xbo cold3 {go.get('AskColdLML')}, "
          f"sklearn 1 start {gp1.log_marginal_likelihood_value_:.1f}, sklearn 3 starts {gp3.log_marginal_likelihood_value_:.1f}")
    print(f"sklearn 1-start kernel: {gp1.kernel_}")
    for k, v in ratios.items():
        print(f"speed-up sklearn/xbo {k:10s}: median {np.median(v):5.1f}x  (rounds: {', '.join(f'{r:.1f}' for r in v)})")


if __name__ == "__main__":
    main()
