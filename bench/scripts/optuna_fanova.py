#!/usr/bin/python3
"""Compare `xbo explain importance` with Optuna's FanovaImportanceEvaluator.

Both sides get the same trials CSV, written here: n uniform configurations of
d float parameters x0..x{d-1} in [0,1] and the value

    y = sum_{j<6} sin(2*pi*x_j)/(j+1) + 0.5*(x0-0.5)*(x1-0.5),

so the true main-effect ranking is x0 > x1 > ... > x5 and the rest are
irrelevant (Sobol main fractions about 0.67, 0.17, 0.075, 0.042, 0.027, 0.019).

The script times Optuna (64 trees, its defaults, main effects only: that is
all its evaluator offers) and xbo (30 trees, main effects and then also every
pair) in the same run and prints both rankings, the time ratio and the
Spearman correlation of the main-effect fractions.

Needs Debian python3-optuna (apt-get install -y python3-optuna) and Go.
Run from the repository root:

    /usr/bin/python3 bench/scripts/optuna_fanova.py --n 2000 --d 8
    /usr/bin/python3 bench/scripts/optuna_fanova.py --n 10000 --d 32   # Optuna takes minutes

Optuna may take several minutes; run it in the background.
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time


def objective(x):
    y = sum(math.sin(2 * math.pi * x[j]) / (j + 1) for j in range(min(6, len(x))))
    return y + 0.5 * (x[0] - 0.5) * (x[1] - 0.5)


def write_inputs(directory, n, d, seed):
    rng = random.Random(seed)
    names = ["x%d" % j for j in range(d)]
    rows = []
    for _ in range(n):
        x = [rng.random() for _ in range(d)]
        rows.append((x, objective(x)))
    data = os.path.join(directory, "trials.csv")
    with open(data, "w") as f:
        f.write(",".join(names) + ",value\n")
        for x, y in rows:
            f.write(",".join(repr(v) for v in x) + "," + repr(y) + "\n")
    space = os.path.join(directory, "space.json")
    with open(space, "w") as f:
        json.dump({"objective": "minimize",
                   "params": [{"name": nm, "type": "float", "low": 0, "high": 1} for nm in names]}, f)
    return names, rows, data, space


def spearman(a, b):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for pos, i in enumerate(order):
            r[i] = float(pos)
        return r
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / math.sqrt(va * vb)


def run_xbo(xbo, data, space, pairs, seed):
    cmd = [xbo, "explain", "importance", "--data", data, "--space", space, "--json", "--seed", str(seed)]
    if pairs:
        cmd.append("--pairs")
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, json.loads(out)


def run_optuna(names, rows, seed):
    import optuna
    from optuna.distributions import FloatDistribution
    from optuna.importance import FanovaImportanceEvaluator

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize")
    dists = {nm: FloatDistribution(0.0, 1.0) for nm in names}
    study.add_trials([
        optuna.trial.create_trial(params=dict(zip(names, x)), distributions=dists, value=y)
        for x, y in rows
    ])
    t0 = time.perf_counter()
    imp = FanovaImportanceEvaluator(seed=seed).evaluate(study)
    return time.perf_counter() - t0, dict(imp), optuna.__version__


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--d", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--xbo", default="", help="xbo binary (default: go build ./cmd/xbo into a temp dir)")
    ap.add_argument("--skip-optuna", action="store_true")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="xbo-fanova-")
    names, rows, data, space = write_inputs(tmp, args.n, args.d, args.seed)
    xbo = args.xbo
    if not xbo:
        xbo = os.path.join(tmp, "xbo")
        subprocess.run(["go", "build", "-o", xbo, "./cmd/xbo"], check=True)
    print("data: %s (%d trials, d = %d)" % (data, args.n, args.d))

    t_main, res_main = run_xbo(xbo, data, space, False, args.seed + 1)
    t_pairs, res_pairs = run_xbo(xbo, data, space, True, args.seed + 1)
    xf = [res_main["main"][nm]["fraction"] for nm in names]
    print("xbo: main effects %.3f s; main effects + %d pairs %.3f s (whole CLI: start, CSV, 30 trees, fANOVA)"
          % (t_main, len(res_pairs.get("pairs", {})), t_pairs))
    top_pairs = sorted(res_pairs.get("pairs", {}).items(), key=lambda kv: -kv[1]["fraction"])[:3]
    print("xbo top pairs: " + ", ".join("%s %.4f" % (k, v["fraction"]) for k, v in top_pairs))

    if args.skip_optuna:
        for nm, f in sorted(zip(names, xf), key=lambda t: -t[1]):
            print("  %-6s xbo %.4f" % (nm, f))
        return
    t_opt, imp, version = run_optuna(names, rows, args.seed)
    of = [imp[nm] for nm in names]
    # Optuna normalizes main effects to sum to one; xbo reports fractions of
    # the total variance, so compare rankings and normalized shares.
    xs = sum(xf) or 1.0
    print("optuna %s FanovaImportanceEvaluator (64 trees, main effects only): %.3f s" % (version, t_opt))
    print("%-6s %12s %12s %14s" % ("param", "xbo frac", "xbo share", "optuna share"))
    for nm, a, b in sorted(zip(names, xf, of), key=lambda t: -t[1]):
        print("%-6s %12.4f %12.4f %14.4f" % (nm, a, a / xs, b))
    rank_x = [nm for nm, _ in sorted(zip(names, xf), key=lambda t: -t[1])]
    rank_o = [nm for nm, _ in sorted(zip(names, of), key=lambda t: -t[1])]
    print("ranking xbo:    " + " > ".join(rank_x))
    print("ranking optuna: " + " > ".join(rank_o))
    relevant = min(6, args.d)
    print("top-%d rankings identical: %s; Spearman of all fractions: %.3f"
          % (relevant, rank_x[:relevant] == rank_o[:relevant], spearman(xf, of)))
    print("time ratio optuna / xbo: %.1fx (main effects only), %.1fx (xbo with all pairs)"
          % (t_opt / t_main, t_opt / t_pairs))


if __name__ == "__main__":
    sys.exit(main())
