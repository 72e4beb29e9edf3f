#!/usr/bin/env python3
"""Train a small neural network in plain Python: xbo's example of a training
script to tune with `xbo run` (README, "Quick start").

The task is the classic two-moons problem: 2-D points of two interleaved
half circles with noise, 400 for training and 200 for validation, always the
same (a fixed seed). The model is a one-hidden-layer perceptron trained with
mini-batch SGD and momentum on the cross-entropy loss with L2 weight decay.
It needs only the standard library and trains in a few seconds.

After every epoch the script prints the validation loss as a JSON line
{"step": epoch, "value": loss}, which xbo run records as an intermediate
value; at the end it prints {"value": loss}, the final validation loss that
xbo minimizes. A diverged run (NaN or infinite loss) prints NaN, and xbo
run records the trial as failed.

    python3 examples/train.py --lr 0.1 --hidden 16 --activation tanh \\
        --l2 1e-4 --batch-size 32
"""

import argparse
import json
import math
import random
import sys


def two_moons(n, noise, rng):
    """n points of two interleaved half circles, labels 0 and 1."""
    points = []
    for i in range(n):
        label = i % 2
        t = math.pi * rng.random()
        if label == 0:
            x, y = math.cos(t), math.sin(t)
        else:
            x, y = 1 - math.cos(t), 0.5 - math.sin(t)
        points.append(((x + rng.gauss(0, noise), y + rng.gauss(0, noise)), label))
    return points


ACTIVATIONS = {
    # name: (function, derivative as a function of the output)
    "tanh": (math.tanh, lambda a: 1 - a * a),
    "relu": (lambda z: z if z > 0 else 0.0, lambda a: 1.0 if a > 0 else 0.0),
}


def sigmoid(z):
    if z >= 0:
        return 1 / (1 + math.exp(-z))
    e = math.exp(z)
    return e / (1 + e)


class Network:
    """2 inputs, one hidden layer, one sigmoid output."""

    def __init__(self, hidden, activation, rng):
        self.act, self.dact = ACTIVATIONS[activation]
        scale = math.sqrt(2 / 2) if activation == "relu" else math.sqrt(1 / 2)
        self.w1 = [[rng.gauss(0, scale) for _ in range(2)] for _ in range(hidden)]
        self.b1 = [0.0] * hidden
        self.w2 = [rng.gauss(0, math.sqrt(1 / hidden)) for _ in range(hidden)]
        self.b2 = 0.0

    def forward(self, x):
        h = [self.act(w[0] * x[0] + w[1] * x[1] + b) for w, b in zip(self.w1, self.b1)]
        return h, sigmoid(sum(w * a for w, a in zip(self.w2, h)) + self.b2)

    def loss(self, data):
        total = 0.0
        for x, y in data:
            p = min(max(self.forward(x)[1], 1e-12), 1 - 1e-12)
            total -= math.log(p) if y else math.log(1 - p)
        return total / len(data)


def train(args):
    data_rng = random.Random(0)  # the same data for every configuration
    train_set = two_moons(400, 0.2, data_rng)
    valid_set = two_moons(200, 0.2, data_rng)
    rng = random.Random(args.seed)
    net = Network(args.hidden, args.activation, rng)
    hidden = args.hidden
    # Momentum buffers.
    v1 = [[0.0, 0.0] for _ in range(hidden)]
    vb1 = [0.0] * hidden
    v2 = [0.0] * hidden
    vb2 = 0.0
    mu = 0.9
    loss = float("nan")
    for epoch in range(1, args.epochs + 1):
        rng.shuffle(train_set)
        for start in range(0, len(train_set), args.batch_size):
            batch = train_set[start:start + args.batch_size]
            g1 = [[0.0, 0.0] for _ in range(hidden)]
            gb1 = [0.0] * hidden
            g2 = [0.0] * hidden
            gb2 = 0.0
            for x, y in batch:
                h, p = net.forward(x)
                d = p - y  # d loss / d output logit
                gb2 += d
                for j in range(hidden):
                    g2[j] += d * h[j]
                    dh = d * net.w2[j] * net.dact(h[j])
                    g1[j][0] += dh * x[0]
                    g1[j][1] += dh * x[1]
                    gb1[j] += dh
            n = len(batch)
            for j in range(hidden):
                for k in range(2):
                    grad = g1[j][k] / n + args.l2 * net.w1[j][k]
                    v1[j][k] = mu * v1[j][k] - args.lr * grad
                    net.w1[j][k] += v1[j][k]
                vb1[j] = mu * vb1[j] - args.lr * gb1[j] / n
                net.b1[j] += vb1[j]
                v2[j] = mu * v2[j] - args.lr * (g2[j] / n + args.l2 * net.w2[j])
                net.w2[j] += v2[j]
            vb2 = mu * vb2 - args.lr * gb2 / n
            net.b2 += vb2
        try:
            loss = net.loss(valid_set)
        except (OverflowError, ValueError):
            loss = float("nan")
        if not math.isfinite(loss):
            break
        print(json.dumps({"step": epoch, "value": loss}), flush=True)
    return loss


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lr", type=float, default=0.1, help="learning rate")
    parser.add_argument("--hidden", type=int, default=16, help="hidden units")
    parser.add_argument("--activation", choices=sorted(ACTIVATIONS), default="tanh")
    parser.add_argument("--l2", type=float, default=1e-4, help="L2 weight decay")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0, help="initial weights and shuffling")
    args = parser.parse_args()
    if args.lr <= 0 or args.hidden < 1 or args.batch_size < 1 or args.epochs < 1 or args.l2 < 0:
        parser.error("lr must be positive, hidden, batch size and epochs at least 1, l2 not negative")
    loss = train(args)
    # json.dumps writes NaN for a diverged run: xbo run fails the trial.
    print(json.dumps({"value": loss}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
