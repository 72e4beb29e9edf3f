#!/usr/bin/env python3
"""Validate the extrapolation flag of PDP curves from a calibration dump.

Reads the JSON lines `xbo bench calibration --points FILE` writes (one per
compared grid point, with `terms.extrapolated` when the engine flagged the
point as resting on extrapolation beyond every uniform design of the
study's size) and reports, per data kind:

- the share of grid points flagged (on uniform data this is the false-alarm
  rate: the flag's nominal rate is 1 in 25, one chance in as many designs
  plus one that the study's own design is the worst);
- over the curves with both flagged and unflagged points, in how many the
  mean absolute error of the flagged points is larger, and the geometric
  mean of that ratio (errors relative to the truth, which the dump carries).

Standard library only; usage: extrapolation_check.py POINTS.jsonl [...].
"""
import collections
import json
import math
import sys


def main(paths):
    flagged = collections.Counter()
    total = collections.Counter()
    curves = collections.defaultdict(lambda: ([], []))
    for path in paths:
        with open(path) as f:
            for line in f:
                p = json.loads(line)
                kind = p["data"]
                err = abs(p["estimate"] - p["truth"])
                on = bool(p.get("terms", {}).get("extrapolated"))
                total[kind] += 1
                flagged[kind] += on
                key = (kind, p["problem"], p["T"], p["seed"], p["param"], p.get("surrogate"), p.get("band"))
                curves[key][0 if on else 1].append(err)
    print(f"{'data':>8} {'points':>7} {'flagged':>8} {'curves':>7} {'error larger where flagged':>27} {'geo-mean ratio':>15}")
    for kind in sorted(total):
        larger, n, logs = 0, 0, []
        for key, (on, off) in curves.items():
            if key[0] != kind or not on or not off:
                continue
            a, b = sum(on) / len(on), sum(off) / len(off)
            if a <= 0 or b <= 0:
                continue
            n += 1
            larger += a > b
            logs.append(math.log(a / b))
        share = flagged[kind] / total[kind]
        ratio = math.exp(sum(logs) / len(logs)) if logs else float("nan")
        frac = f"{larger}/{n} ({100 * larger / n:.0f}%)" if n else "–"
        print(f"{kind:>8} {total[kind]:>7} {100 * share:>7.1f}% {n:>7} {frac:>27} {ratio:>15.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: extrapolation_check.py POINTS.jsonl [...]")
    main(sys.argv[1:])
