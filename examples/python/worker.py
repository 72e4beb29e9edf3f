#!/usr/bin/env python3
"""A worker for the xbo tuning service, using only the Python standard library.

It tunes a small logistic-regression model trained by (mini-batch) gradient
descent on a synthetic two-class data set, all in plain Python: the
hyperparameters are the learning rate, the L2 penalty, the number of epochs
and the batch mode, and the objective is the validation log loss.

    xbo serve &                                   # or: xbo serve --token T
    python3 worker.py --study logreg --create --trials 30
    python3 worker.py --study logreg --trials 30 &   # more workers, same study

Each worker asks the server for a configuration, trains, reports the
validation loss after every epoch (which also keeps the trial from expiring),
and tells the final loss. Several workers may run at once, on any machines.
"""

import argparse
import json
import math
import os
import random
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

SPACE = {
    "objective": "minimize",
    "params": [
        {"name": "lr", "type": "float", "low": 1e-3, "high": 3.0, "log": True},
        {"name": "l2", "type": "float", "low": 1e-6, "high": 1e-1, "log": True},
        {"name": "epochs", "type": "int", "low": 2, "high": 40},
        {"name": "batch", "type": "categorical", "choices": ["full", "mini"]},
    ],
}


class APIError(Exception):
    def __init__(self, status, message):
        super().__init__("HTTP %d: %s" % (status, message))
        self.status = status
        self.message = message


class Client:
    """Minimal JSON client of the xbo HTTP API (see docs/api.md)."""

    def __init__(self, url, token=None, worker=None, retries=8):
        self.url = url.rstrip("/")
        self.token = token
        self.worker = worker or "%s-%d" % (socket.gethostname(), os.getpid())
        self.retries = retries

    def request(self, method, path, body=None, retry=False):
        data = None if body is None else json.dumps(body).encode()
        delay = 0.1
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(self.url + path, data=data, method=method)
            req.add_header("Accept", "application/json")
            if data is not None:
                req.add_header("Content-Type", "application/json")
            if self.token:
                req.add_header("Authorization", "Bearer " + self.token)
            try:
                with urllib.request.urlopen(req, timeout=60) as resp:
                    raw = resp.read()
                    return json.loads(raw) if raw else None
            except urllib.error.HTTPError as e:
                try:
                    message = json.loads(e.read()).get("error", "")
                except ValueError:
                    message = e.reason
                if e.code >= 500 and retry and attempt < self.retries:
                    time.sleep(delay)
                    delay = min(2 * delay, 5)
                    continue
                raise APIError(e.code, message) from None
            except (urllib.error.URLError, ConnectionError, socket.timeout) as e:
                # Asks are retried only when the server could not be reached
                # at all; tells and reports are idempotent and always retried.
                refused = isinstance(getattr(e, "reason", e), ConnectionRefusedError)
                if (retry or refused) and attempt < self.retries:
                    time.sleep(delay)
                    delay = min(2 * delay, 5)
                    continue
                raise

    def create_study(self, name, space, optimizer=None):
        body = {"name": name, "space": space}
        if optimizer:
            body["optimizer"] = optimizer
        return self.request("POST", "/api/studies", body)

    def ask(self, study):
        return self.request("POST", "/api/studies/%s/ask" % q(study), {"worker": self.worker})

    def tell(self, study, number, value):
        return self.request("POST", "/api/studies/%s/trials/%d/tell" % (q(study), number), {"value": value}, retry=True)

    def fail(self, study, number, reason):
        body = {"state": "failed", "reason": reason}
        return self.request("POST", "/api/studies/%s/trials/%d/tell" % (q(study), number), body, retry=True)

    def report(self, study, number, step, value):
        body = {"step": step, "value": value}
        return self.request("POST", "/api/studies/%s/trials/%d/report" % (q(study), number), body, retry=True)

    def best(self, study):
        return self.request("GET", "/api/studies/%s/best" % q(study), retry=True)


def q(name):
    return urllib.parse.quote(name, safe="")


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
    ap.add_argument("--url", default=os.environ.get("XBO_URL", "http://127.0.0.1:8080"))
    ap.add_argument("--token", default=os.environ.get("XBO_TOKEN"))
    ap.add_argument("--study", default="logreg")
    ap.add_argument("--create", action="store_true", help="create the study first (ignored if it exists)")
    ap.add_argument("--strategy", default="ei", help="optimizer strategy when creating")
    ap.add_argument("--trials", type=int, default=20, help="trials this worker evaluates")
    ap.add_argument("--worker", default=None, help="worker id shown by the server")
    args = ap.parse_args(argv)

    c = Client(args.url, args.token, args.worker)
    if args.create:
        try:
            c.create_study(args.study, SPACE, {"strategy": args.strategy})
            print("created study %r" % args.study, file=sys.stderr)
        except APIError as e:
            if e.status != 409:
                raise
    data = make_data()
    for _ in range(args.trials):
        trial = c.ask(args.study)
        number, params = trial["number"], trial["params"]
        try:
            loss = train(params, data, on_epoch=lambda step, v: c.report(args.study, number, step, v), seed=number)
        except (FloatingPointError, OverflowError) as e:
            c.fail(args.study, number, str(e))
            print("trial %d failed: %s" % (number, e), file=sys.stderr)
            continue
        c.tell(args.study, number, loss)
        print("trial %d %s -> %.4f" % (number, json.dumps(params, sort_keys=True), loss), file=sys.stderr)
    best = c.best(args.study)
    print(json.dumps({"best_trial": best["number"], "value": best["value"], "params": best["params"]}))


if __name__ == "__main__":
    main()
