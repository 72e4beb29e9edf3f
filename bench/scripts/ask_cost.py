#!/usr/bin/env python3
"""Ask cost of a long study: xbo's service against Optuna's TPE, in one script.

For each study length T (default 1000 and 5000) the same T configurations of
Hartmann6 (d = 6, uniform in the unit cube, seeded) are loaded into

  * an `xbo serve` study on a fresh SQLite file (POST .../trials with a value),
    which then runs --asks cycles of ask, evaluate, tell over HTTP;
  * an Optuna 3.1 in-memory study with TPESampler(seed=1) (add_trials), which
    runs the same number of ask / suggest / tell cycles.

It prints the mean ask time of each (xbo: the client's wall time of the ask
request; Optuna: study.ask() and the six suggest calls, where TPE samples),
their ratio, and the cold start: the first ask of a restarted `xbo serve`
against Optuna loading the same study from its SQLite RDB storage in a new
process (load_study, ask, suggests). Debian's python3-optuna is a benchmark
baseline only, never a dependency of xbo.

    /usr/bin/python3 bench/scripts/ask_cost.py --xbo ./xbo --lengths 1000,5000
"""
import argparse
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
     [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
P = [[0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886],
     [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
     [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650],
     [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381]]
ALPHA = [1.0, 1.2, 3.0, 3.2]
NAMES = ["x%d" % (j + 1) for j in range(6)]


def hartmann6(x):
    return -sum(a * math.exp(-sum(A[i][j] * (x[j] - P[i][j]) ** 2 for j in range(6)))
                for i, a in enumerate(ALPHA))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read() or b"null")


def serve(xbo, db, port):
    proc = subprocess.Popen([xbo, "serve", "--addr", "127.0.0.1:%d" % port, "--db", db,
                             "--log-level", "warn"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    for _ in range(300):
        try:
            call(base, "GET", "/api/health")
            return proc, base
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("xbo serve did not start")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)


def xbo_run(xbo, configs, asks, workdir):
    db = os.path.join(workdir, "ask_cost_%d.db" % len(configs))
    port = free_port()
    proc, base = serve(xbo, db, port)
    try:
        space = {"objective": "minimize",
                 "params": [{"name": n, "type": "float", "low": 0, "high": 1} for n in NAMES]}
        call(base, "POST", "/api/studies", {"name": "h6", "space": space, "optimizer": {"seed": 1}})
        for x in configs:
            call(base, "POST", "/api/studies/h6/trials",
                 {"params": dict(zip(NAMES, x)), "value": hartmann6(x)})
        times = []
        for _ in range(asks):
            t0 = time.perf_counter()
            tr = call(base, "POST", "/api/studies/h6/ask", {"worker": "bench"})
            times.append(time.perf_counter() - t0)
            x = [tr["params"][n] for n in NAMES]
            call(base, "POST", "/api/studies/h6/trials/%d/tell" % tr["number"], {"value": hartmann6(x)})
    finally:
        stop(proc)
    proc, base = serve(xbo, db, port)
    try:
        t0 = time.perf_counter()
        call(base, "POST", "/api/studies/h6/ask", {"worker": "bench"})
        cold = time.perf_counter() - t0
    finally:
        stop(proc)
    return times, cold


def optuna_memory(configs, asks):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    dists = {n: optuna.distributions.FloatDistribution(0, 1) for n in NAMES}
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=1))
    study.add_trials([optuna.trial.create_trial(params=dict(zip(NAMES, x)), distributions=dists,
                                                value=hartmann6(x)) for x in configs])
    times = []
    for _ in range(asks):
        t0 = time.perf_counter()
        trial = study.ask()
        x = [trial.suggest_float(n, 0, 1) for n in NAMES]
        times.append(time.perf_counter() - t0)
        study.tell(trial, hartmann6(x))
    return times


COLD = r"""
import sys, time
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
t0 = time.perf_counter()
study = optuna.load_study(study_name="h6", storage=sys.argv[1], sampler=optuna.samplers.TPESampler(seed=1))
trial = study.ask()
for n in ["x1", "x2", "x3", "x4", "x5", "x6"]:
    trial.suggest_float(n, 0, 1)
print(time.perf_counter() - t0)
"""


def optuna_cold(configs, python, workdir):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = "sqlite:///" + os.path.join(workdir, "optuna_%d.db" % len(configs))
    dists = {n: optuna.distributions.FloatDistribution(0, 1) for n in NAMES}
    study = optuna.create_study(study_name="h6", storage=url)
    study.add_trials([optuna.trial.create_trial(params=dict(zip(NAMES, x)), distributions=dists,
                                                value=hartmann6(x)) for x in configs])
    out = subprocess.run([python, "-c", COLD, url], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xbo", default="./xbo")
    ap.add_argument("--lengths", default="1000,5000")
    ap.add_argument("--asks", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write every time to this file")
    a = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="ask_cost_")
    rows = []
    try:
        for T in [int(v) for v in a.lengths.split(",")]:
            rng = random.Random(a.seed)
            configs = [[rng.random() for _ in NAMES] for _ in range(T)]
            xt, xcold = xbo_run(a.xbo, configs, a.asks, workdir)
            ot = optuna_memory(configs, a.asks)
            ocold = optuna_cold(configs, sys.executable, workdir)
            rows.append({"T": T, "xbo": xt, "tpe": ot, "xbo_cold": xcold, "optuna_rdb_cold": ocold})
            mx, mo = sum(xt) / len(xt), sum(ot) / len(ot)
            print("T=%d: mean ask xbo %.3f s, TPE %.3f s, ratio %.2f; first ask after a restart xbo %.2f s, "
                  "Optuna RDB load + ask %.2f s, ratio %.2f" % (T, mx, mo, mx / mo, xcold, ocold, xcold / ocold),
                  flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f)


if __name__ == "__main__":
    main()
