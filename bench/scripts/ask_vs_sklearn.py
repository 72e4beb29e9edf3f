#!/usr/bin/python3
"""One optimizer Ask of xbo against scikit-learn's GP fit + predict, same run.

The issue's speed check: one `Ask` with T = 200 observations in d = 6, kernel
refit included, against scikit-learn's GaussianProcessRegressor fit + predict
(mean and std) on 1500 candidates, on the same data
(gp/testdata/bench_train_T200_d6.csv: 200 noisy Hartmann6 observations on
[0,1]^6; gp/testdata/bench_cand_1500_d6.csv: 1500 uniform candidates).

xbo side (Go benchmarks in opt/bench_test.go), a full Ask: refit, EI at 1500
random candidates (exact variances only where a cheap variance bound says
the EI could reach the best three), a gradient climb from the best 3, decode:
  BenchmarkAskT200D6      steady state: one L-BFGS start warm-started from
                          the previous iteration's hyperparameters
  BenchmarkAskT200D6Full  an Ask that falls on a full refit (3 starts)
scikit-learn side: the model of gp/testdata/sklearn_baseline.py
(ConstantKernel * Matern(nu=2.5, ARD) + WhiteKernel, normalize_y=True),
L-BFGS-B from 1 start and from 3 starts, then predict(return_std=True).
sklearn does strictly less work (no acquisition search), so the ratios are
conservative for xbo.

Usage, from the repository root (Debian's python3-sklearn):
    /usr/bin/python3 bench/scripts/ask_vs_sklearn.py
"""
import importlib.util
import os
import re
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BASELINE = os.path.join(ROOT, "gp", "testdata", "sklearn_baseline.py")


def load_baseline():
    spec = importlib.util.spec_from_file_location("sklearn_baseline", BASELINE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def go_benchmarks():
    proc = subprocess.run(
        ["go", "test", "./opt", "-run", "^$", "-bench", "^BenchmarkAskT200D6(Full)?$",
         "-benchtime", "20x", "-count", "1"],
        cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("go benchmarks failed:\n" + proc.stdout + proc.stderr)
    res = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"Benchmark(\w+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
        if m:
            res[m.group(1)] = float(m.group(3)) * 1e-9
    return res, proc.stdout


def main():
    base = load_baseline()
    from sklearn.exceptions import ConvergenceWarning
    warnings.simplefilter("ignore", ConvergenceWarning)
    go, raw = go_benchmarks()
    print(raw.strip())
    if not {"AskT200D6", "AskT200D6Full"} <= go.keys():
        sys.exit("go benchmarks did not report AskT200D6 / AskT200D6Full")
    x, y, cand = base.load()
    sk1, _ = base.time_sklearn(x, y, cand, 0)
    sk3, _ = base.time_sklearn(x, y, cand, 2)
    warm, full = go["AskT200D6"], go["AskT200D6Full"]
    print(f"sklearn fit+predict, 1 L-BFGS-B start : {sk1*1e3:8.1f} ms")
    print(f"sklearn fit+predict, 3 L-BFGS-B starts: {sk3*1e3:8.1f} ms")
    print(f"xbo Ask, warm start (steady state)    : {warm*1e3:8.1f} ms   sklearn(1 start)/xbo = {sk1/warm:.1f}x")
    print(f"xbo Ask, full refit (3 starts)        : {full*1e3:8.1f} ms   sklearn(3 starts)/xbo = {sk3/full:.1f}x, "
          f"sklearn(1 start)/xbo = {sk1/full:.1f}x")


if __name__ == "__main__":
    main()
