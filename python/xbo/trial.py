"""Trials: the live Trial a worker evaluates, and FrozenTrial, a finished
(or listed) trial as plain data."""

from __future__ import annotations

import datetime
import json
import math
import re
from typing import TYPE_CHECKING, Any, Dict, Optional

from .space import typed_params

if TYPE_CHECKING:  # pragma: no cover
    from .study import Study

STATES = ("pending", "running", "complete", "failed", "pruned", "expired")


class TrialPruned(Exception):
    """Raise it from the objective to stop a trial early as pruned, e.g.
    when ``trial.should_prune()`` says so; ``study.optimize`` tells the
    server and goes on with the next trial."""


_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?$")


def parse_time(text: Any) -> Optional[datetime.datetime]:
    """An RFC 3339 time as the server writes it (up to nanoseconds, 'Z'),
    as an aware datetime; None for a missing or unreadable value."""
    if not isinstance(text, str):
        return None
    m = _TIME.match(text)
    if not m:
        return None
    base, frac, zone = m.groups()
    micro = (frac[1:] + "000000")[:6] if frac else "000000"
    if zone in (None, "Z"):
        zone = "+00:00"
    try:
        return datetime.datetime.fromisoformat("%s.%s%s" % (base, micro, zone))
    except ValueError:
        return None


class FrozenTrial:
    """A trial as the server records it.

    Attributes: ``number``, ``state`` ("pending", "running", "complete",
    "failed", "pruned" or "expired"), ``params`` (typed as declared; inactive
    conditional parameters are absent), ``value`` (None unless complete, or
    pruned with a value; the first objective's in a study with several),
    ``values`` (one per objective; ``[value]`` with one objective, None
    without a value), ``constraints`` (the constraint values of a complete
    trial in a study with constraints, else None; feasible when all are
    <= 0), ``intermediate_values`` ({step: value}),
    ``user_attrs``, ``fail_reason``, ``note`` (what a person wrote about the
    trial, "" when nothing; Study.set_trial_note), ``acquisition`` (what
    proposed it: "initial-design", "ei", "enqueued", ...), ``worker``, ``datetime_created``,
    ``datetime_start``, ``datetime_complete``, and ``raw``, the server's JSON.
    """

    __slots__ = (
        "number", "state", "params", "value", "values", "constraints", "intermediate_values", "user_attrs", "fail_reason",
        "note", "acquisition", "worker", "datetime_created", "datetime_start", "datetime_complete", "raw",
    )

    def __init__(self, raw: Dict[str, Any], types: Dict[str, str]) -> None:
        self.raw = raw
        self.number = int(raw["number"])
        self.state = str(raw.get("state", ""))
        self.params = typed_params(raw.get("params") or {}, types)
        v = raw.get("value")
        self.value = None if v is None else float(v)
        vs = raw.get("values")
        # The server lists values for several objectives only.
        self.values = [float(x) for x in vs] if vs else (None if self.value is None else [self.value])
        cs = raw.get("constraints")
        self.constraints = None if cs is None else [float(x) for x in cs]
        self.intermediate_values = {int(iv["step"]): float(iv["value"]) for iv in raw.get("intermediate") or []}
        self.user_attrs = dict(raw.get("user_attrs") or {})
        self.fail_reason = raw.get("fail_reason") or None
        self.note = str(raw.get("note") or "")
        self.acquisition = raw.get("acquisition") or None
        self.worker = raw.get("worker") or None
        self.datetime_created = parse_time(raw.get("created_at"))
        self.datetime_start = parse_time(raw.get("started_at"))
        self.datetime_complete = parse_time(raw.get("finished_at"))

    @property
    def last_step(self) -> Optional[int]:
        """The largest step with an intermediate value, or None."""
        return max(self.intermediate_values) if self.intermediate_values else None

    def __repr__(self) -> str:
        shown = "values=%r" % (self.values,) if self.values is not None and len(self.values) > 1 else "value=%r" % (self.value,)
        extra = "" if self.constraints is None else ", constraints=%r" % (self.constraints,)
        return "FrozenTrial(number=%d, state=%r, %s%s, params=%r)" % (self.number, self.state, shown, extra, self.params)


def check_attr(key: Any, value: Any) -> None:
    """A user attribute must have a string key and a JSON value without NaN."""
    if not isinstance(key, str) or not key:
        raise ValueError("a user attribute key must be a non-empty string, not %r" % (key,))
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError("user attribute %r: %r cannot be stored as JSON (%s)" % (key, value, e)) from None


class Trial:
    """A trial being evaluated: what ``study.ask()`` returns and the objective
    of ``study.optimize`` receives.

    ``number`` is its number in the study and ``params`` its configuration,
    each value of the type its parameter declares (float, int, or the
    categorical choice itself: str, int, float or bool). Finish it with
    ``study.tell`` (``study.optimize`` does it for you).
    """

    def __init__(self, study: "Study", raw: Dict[str, Any]) -> None:
        self.study = study
        self.raw = raw
        self.number = int(raw["number"])
        self.params = typed_params(raw.get("params") or {}, study._types)
        self.acquisition = raw.get("acquisition") or None
        self.user_attrs: Dict[str, Any] = dict(raw.get("user_attrs") or {})
        self._prune = False

    def report(self, value: float, step: int) -> None:
        """Record an intermediate value (e.g. the validation loss after
        ``step`` epochs). The server keeps it, pushes the trial's deadline
        further (a report is a heartbeat), and says whether the study's
        pruner would stop the trial: ``should_prune()`` returns that.
        A later report for the same step replaces the value."""
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError("trial %d: step must be an integer >= 0, not %r" % (self.number, step))
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError("trial %d: reported value %r is not a number" % (self.number, value)) from None
        if not math.isfinite(v):
            raise ValueError("trial %d: reported value %r at step %d is not finite" % (self.number, value, step))
        answer = self.study._report(self.number, step, v)
        self._prune = bool(isinstance(answer, dict) and answer.get("prune") is True)

    def should_prune(self) -> bool:
        """Whether the study's pruner decided, at the last report, that this
        trial should stop (False before any report, and when the study has
        no pruner). Stop by raising ``xbo.TrialPruned()``."""
        return self._prune

    def set_user_attr(self, key: str, value: Any) -> None:
        """Attach a JSON value to the trial; sent with the tell."""
        check_attr(key, value)
        self.user_attrs[key] = value

    def __repr__(self) -> str:
        return "Trial(number=%d, params=%r)" % (self.number, self.params)
