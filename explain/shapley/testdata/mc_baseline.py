"""Python baseline for BenchmarkMonteCarloP7K20000 (explain/shapley).

The same estimator as the Go code (thesis Algorithm 2, Štrumbelj–Kononenko
permutation sampling, K draws per parameter, mean/se/cb from shared draws)
written the fast way in NumPy: all 2·K·p hybrid points are built with
vectorized masks and predicted by scikit-learn's GaussianProcessRegressor in
large batches. The GP has the benchmark's size (123 observations, 7 inputs,
Matérn 3/2) with its hyperparameters fitted once, outside the timing.

Run:  python3 explain/shapley/testdata/mc_baseline.py [K]
Prints the seconds of one explanation (best of 3) and the CPU seconds.
"""
import sys
import time

import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel


def explain(gpr, x, background, K, tau, rng):
    p = x.shape[0]
    n = background.shape[0]
    pts_plus = np.empty((K * p, p))
    pts_minus = np.empty((K * p, p))
    for j in range(p):
        z = background[rng.integers(0, n, K)]
        # A random order per draw; the players before j form the coalition.
        keys = rng.random((K, p))
        before = keys < keys[:, [j]]
        plus = before.copy()
        plus[:, j] = True
        pts_plus[j * K:(j + 1) * K] = np.where(plus, x, z)
        pts_minus[j * K:(j + 1) * K] = np.where(before, x, z)
    out = {}
    preds = []
    for pts in (pts_plus, pts_minus):
        m_all, s_all = [], []
        for start in range(0, pts.shape[0], 20000):
            m, s = gpr.predict(pts[start:start + 20000], return_std=True)
            m_all.append(m)
            s_all.append(s)
        preds.append((np.concatenate(m_all), np.concatenate(s_all)))
    (mp, sp), (mm, sm) = preds
    for name, d in (("mean", mp - mm), ("se", sp - sm), ("cb", (mp - tau * sp) - (mm - tau * sm))):
        d = d.reshape(p, K)
        out[name] = (d.mean(axis=1), d.std(axis=1, ddof=1) / np.sqrt(K))
    return out


def main():
    K = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rng = np.random.default_rng(5)
    n, p = 123, 7
    X = rng.random((n, p))
    v = X.T
    y = np.sin(6 * v[0]) * v[1] + (v[2] - 0.3) ** 2 + 0.5 * v[3] * v[4] + 0.1 * v[5] + 0.05 * v[6] + 0.01 * rng.standard_normal(n)
    kernel = ConstantKernel() * Matern(length_scale=np.ones(p), nu=1.5) + WhiteKernel(1e-4)
    gpr = GaussianProcessRegressor(kernel=kernel, normalize_y=True, random_state=1).fit(X, y)
    background = rng.random((7000, p))
    x = np.array([0.31, 0.77, 0.28, 0.12, 0.9, 0.45, 0.6])
    best, best_cpu = float("inf"), float("inf")
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        explain(gpr, x, background, K, 1.0, rng)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    print(f"python sklearn+numpy, p=7, K={K}: {best:.3f} s wall, {best_cpu:.3f} cpu-s per explanation")


if __name__ == "__main__":
    main()
