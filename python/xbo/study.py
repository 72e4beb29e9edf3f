"""Studies: create, load and delete them; ask, tell and optimize."""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
import time
import uuid
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Type, Union

from ._http import DEFAULT_RETRY_FOR, Connection, XBOError, quote
from .space import objectives_of, param_types, space_document
from .trial import STATES, FrozenTrial, Trial, TrialPruned, check_attr

_log = logging.getLogger("xbo")

# A failure reason is a one-line summary, not a traceback: the server keeps
# it with the trial and the dashboard shows it in the trials table.
_MAX_REASON = 2000


def _default_worker() -> str:
    return "%s-%d" % (socket.gethostname(), os.getpid())


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a study name must be a non-empty string, not %r" % (name,))


def _check_worker(worker: Any) -> None:
    if worker is not None and (not isinstance(worker, str) or len(worker.encode()) > 200):
        raise ValueError("worker must be a string of at most 200 bytes, not %r" % (worker,))


def _pruner_document(pruner: Any) -> Optional[Dict[str, Any]]:
    if pruner is None:
        return None
    if isinstance(pruner, str):
        return {"type": pruner}
    if isinstance(pruner, dict) and isinstance(pruner.get("type"), str):
        return dict(pruner)
    raise ValueError('pruner must be a name such as "median" or a dict {"type": ..., ...}, not %r' % (pruner,))


def create_study(
    name: str,
    space: Any,
    direction: Optional[str] = None,
    url: Optional[str] = None,
    token: Optional[str] = None,
    optimizer: Optional[Dict[str, Any]] = None,
    pruner: Any = None,
    load_if_exists: bool = False,
    *,
    directions: Optional[Sequence[str]] = None,
    objective_names: Optional[Sequence[str]] = None,
    constraints: Union[int, Sequence[str], None] = None,
    constraints_func: Optional[Callable[[FrozenTrial], Sequence[float]]] = None,
    worker: Optional[str] = None,
    retries: Optional[int] = None,
    timeout: float = 300.0,
    retry_for: float = DEFAULT_RETRY_FOR,
) -> "Study":
    """Create a study on the server and return it.

    space is a list of xbo.Float / xbo.Int / xbo.Categorical, or the space
    JSON as a dict. direction is "minimize" or "maximize" (default: the
    space dict's "objective", else "minimize"). optimizer is the optimizer
    configuration ({"strategy": "ei", "seed": 1, ...}, docs/api.md) and
    pruner the pruner's ({"type": "median", ...}, or just "median").

    Several objectives: directions=["minimize", "maximize", ...] instead of
    direction, optionally objective_names=[...] (the server names them
    objective_0, objective_1, ... otherwise). Constraints (a trial is
    feasible when every constraint value is <= 0): constraints=N or a list
    of names. The server checks every tell against these counts, so they
    are fixed here. constraints_func(frozen_trial) -> [c0, c1, ...]
    computes a finished trial's constraint values when tell is not given
    them (as study.optimize never is); see Study.tell.

    With load_if_exists, an existing study of that name is loaded instead,
    provided its space, objectives and constraints are the ones given
    (ValueError otherwise): every worker may then run the same
    create_study call.
    """
    _check_name(name)
    _check_worker(worker)
    doc = space_document(space, direction, directions, objective_names, constraints)
    if constraints_func is not None and not doc.get("constraints"):
        raise ValueError(
            "constraints_func needs the study's constraints declared: create_study(..., constraints=N or [names]) "
            "(the server checks every tell against them)"
        )
    body: Dict[str, Any] = {"name": name, "space": doc}
    if optimizer is not None:
        if not isinstance(optimizer, dict):
            raise ValueError("optimizer must be a dict such as {\"strategy\": \"ei\"}, not %r" % (optimizer,))
        body["optimizer"] = optimizer
    pruner_doc = _pruner_document(pruner)
    if pruner_doc is not None:
        body["pruner"] = pruner_doc
    conn = Connection(url, token, retries=retries, timeout=timeout, retry_for=retry_for)
    try:
        # With load_if_exists a repeated create is harmless (its 409 loads
        # the study), so a lost answer may be retried.
        raw = conn.request("POST", "/api/studies", body, idempotent=load_if_exists)
    except XBOError as e:
        if e.status != 409 or not load_if_exists:
            raise
        study = Study(conn, _read_study(conn, name), worker, constraints_func)
        study._check_same_space(doc)
        return study
    return Study(conn, raw, worker, constraints_func)


def load_study(
    name: str,
    url: Optional[str] = None,
    token: Optional[str] = None,
    *,
    wait: float = 0,
    constraints_func: Optional[Callable[[FrozenTrial], Sequence[float]]] = None,
    worker: Optional[str] = None,
    retries: Optional[int] = None,
    timeout: float = 300.0,
    retry_for: float = DEFAULT_RETRY_FOR,
) -> "Study":
    """Load an existing study (constraints_func: as for create_study).

    A study that does not exist is an XBOError with status 404 and a message
    saying how to proceed, at once by default. With wait=SECONDS the call
    polls (every half second at first, every 5 s at most) until the study
    appears or the time is up, for workers started before the process that
    creates the study. (Alternatively every worker calls create_study with
    load_if_exists=True.)
    """
    _check_name(name)
    _check_worker(worker)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0:
        raise ValueError("wait must be a number of seconds >= 0, not %r" % (wait,))
    conn = Connection(url, token, retries=retries, timeout=timeout, retry_for=retry_for)
    deadline = time.monotonic() + wait
    pause = 0.5
    while True:
        try:
            return Study(conn, _read_study(conn, name), worker, constraints_func)
        except XBOError as e:
            if e.status != 404:
                raise
            left = deadline - time.monotonic()
            if left <= 0:
                hint = "waited %gs; " % wait if wait > 0 else ""
                raise XBOError(
                    404,
                    "study %r does not exist at %s (%screate it with xbo.create_study, use "
                    "create_study(..., load_if_exists=True) in every worker, or pass "
                    "load_study(name, wait=SECONDS) to wait for it)" % (name, conn.url, hint),
                ) from None
            time.sleep(min(pause, left))
            pause = min(2 * pause, 5.0)


def delete_study(
    name: str,
    url: Optional[str] = None,
    token: Optional[str] = None,
    *,
    retries: Optional[int] = None,
    timeout: float = 300.0,
    retry_for: float = DEFAULT_RETRY_FOR,
) -> None:
    """Delete a study and all its trials."""
    _check_name(name)
    Connection(url, token, retries=retries, timeout=timeout, retry_for=retry_for).request("DELETE", "/api/studies/" + quote(name))


def _read_study(conn: Connection, name: str) -> Dict[str, Any]:
    return conn.request("GET", "/api/studies/" + quote(name))


def _number(trial: Any) -> int:
    """The number of a Trial, a FrozenTrial or a trial number."""
    if isinstance(trial, (Trial, FrozenTrial)):
        return trial.number
    if isinstance(trial, int) and not isinstance(trial, bool) and trial >= 0:
        return trial
    raise ValueError("tell needs a Trial or a trial number >= 0, not %r" % (trial,))


_MAX_NOTE = 10000


def _checked_note(note: Any) -> str:
    """A note as the server takes it, or ValueError before any request."""
    if not isinstance(note, str):
        raise TypeError("a note is a str, not %r" % (note,))
    if len(note) > _MAX_NOTE:
        raise ValueError("a note has at most %d characters, not %d" % (_MAX_NOTE, len(note)))
    if "\0" in note:
        raise ValueError("a note cannot contain a NUL character")
    return note


def _reason(e: BaseException) -> str:
    text = "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def _checked_attrs(user_attrs: Any) -> Dict[str, Any]:
    if user_attrs is None:
        return {}
    if not isinstance(user_attrs, dict):
        raise ValueError("user_attrs must be a dict, not %r" % (user_attrs,))
    for k, v in user_attrs.items():
        check_attr(k, v)
    return dict(user_attrs)


def finite_value(value: Any, what: str = "the value") -> Tuple[Optional[float], Optional[str]]:
    """value as a finite float, or why it is not one ("<what> is NaN", ...)."""
    if isinstance(value, bool):
        return None, "%s is a boolean (%r), not a number" % (what, value)
    if isinstance(value, (str, bytes)) or value is None:
        return None, "%s is %r, not a number" % (what, value)
    items = _as_list(value)
    if items is not None:
        return None, "%s holds %d values, not one number" % (what, len(items))
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None, "%s %r is not a number" % (what, value)
    if math.isnan(v):
        return None, "%s is NaN" % what
    if math.isinf(v):
        return None, "%s is %s infinity" % (what, "positive" if v > 0 else "negative")
    return v, None


def _as_list(value: Any) -> Optional[List[Any]]:
    """value's items when it is a sequence of values (a list, a tuple, a
    NumPy array), else None."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__") or not hasattr(value, "__len__"):
        return None
    try:
        len(value)  # a 0-d NumPy array has __len__ but raises: it is a number
        return list(value)
    except TypeError:
        return None


def objective_values(value: Any, names: Sequence[str], what: str = "the value") -> Tuple[Optional[List[float]], Optional[str]]:
    """value as one finite float per objective (names lists the study's
    objectives), or why it is not: the counts when they differ, which
    value is NaN, ... A study with one objective takes a number or a list
    of one."""
    n = len(names)
    items = _as_list(value)
    if items is None:
        v, why = finite_value(value, what)
        if why is not None:
            return None, why
        if n > 1:
            return None, "%s is one number (%r); the study has %d objectives (%s), one value each" % (what, v, n, ", ".join(names))
        return [v], None  # type: ignore[list-item]
    if len(items) != n:
        if n == 1:
            return None, "%s holds %d values; the study has one objective" % (what, len(items))
        return None, "%s holds %d values; the study has %d objectives (%s)" % (what, len(items), n, ", ".join(names))
    out: List[float] = []
    for k, item in enumerate(items):
        v, why = finite_value(item, what if n == 1 else "%s %d (%s)" % (what, k, names[k]))
        if why is not None:
            return None, why
        out.append(v)  # type: ignore[arg-type]
    return out, None


class _Budget:
    """Hands out trial slots to optimize's threads until n_trials, the
    timeout or a stop says no more."""

    def __init__(self, n_trials: Optional[int], timeout: Optional[float], stop: threading.Event) -> None:
        self.left = n_trials
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.stop = stop
        self.lock = threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.stop.is_set():
                return False
            if self.deadline is not None and time.monotonic() >= self.deadline:
                return False
            if self.left is not None:
                if self.left <= 0:
                    return False
                self.left -= 1
            return True


class Study:
    """A study on an xbo server. Get one from create_study or load_study.

    Attributes: ``name``, ``direction`` (one objective only) and
    ``directions``, ``objective_names``, ``constraint_names`` ([] without
    constraints), ``constraints_func`` (None, or what computes a finished
    trial's constraint values), ``space`` (the space JSON), ``optimizer``
    (its stored configuration), ``pruner`` (None without one), ``note``
    (what a person wrote about the study when it was read or last set with
    set_note; "" when nothing), ``worker``
    (the name recorded with each ask), ``url`` (its dashboard page).
    Several threads may use one Study at once.
    """

    # Trials per listing request (the server's upper bound).
    _page_size = 10000

    def __init__(
        self,
        conn: Connection,
        raw: Dict[str, Any],
        worker: Optional[str] = None,
        constraints_func: Optional[Callable[[FrozenTrial], Sequence[float]]] = None,
    ) -> None:
        _check_worker(worker)
        self._conn = conn
        self.name: str = raw["name"]
        self.space: Dict[str, Any] = raw.get("space") or {}
        objectives = objectives_of(self.space)
        if len(objectives) == 1 and "objectives" not in self.space:
            # The study's direction is authoritative for one objective (a
            # space stored without "objective" is the default, minimize).
            objectives = [(None, raw.get("direction") or objectives[0][1])]
        self.directions: List[str] = [d for _, d in objectives]
        # The server's names: objective_0, ... when the space named none;
        # "value" for one unnamed objective.
        self.objective_names: List[str] = [
            n or ("value" if len(objectives) == 1 else "objective_%d" % k) for k, (n, _) in enumerate(objectives)
        ]
        self.constraint_names: List[str] = [str(c) for c in self.space.get("constraints") or []]
        if constraints_func is not None and not callable(constraints_func):
            raise TypeError("constraints_func must be callable, not %r" % (constraints_func,))
        if constraints_func is not None and not self.constraint_names:
            raise ValueError(
                "study %r declares no constraints, so constraints_func has nothing to compute; "
                "create a study with create_study(..., constraints=N or [names])" % self.name
            )
        self.constraints_func = constraints_func
        self.optimizer: Dict[str, Any] = raw.get("optimizer") or {}
        # The server stores {} (or type "none") for a study without pruner.
        pruner = raw.get("pruner") or None
        self.pruner: Optional[Dict[str, Any]] = None if pruner is None or pruner.get("type") in (None, "none") else pruner
        self._types = param_types(self.space)
        self.note: str = str(raw.get("note") or "")
        self.worker = worker or _default_worker()
        self._stop = threading.Event()

    def __repr__(self) -> str:
        if len(self.directions) > 1:
            return "Study(name=%r, directions=%r, url=%r)" % (self.name, self.directions, self.url)
        return "Study(name=%r, direction=%r, url=%r)" % (self.name, self.direction, self.url)

    @property
    def direction(self) -> str:
        """The direction of a study with one objective ("minimize" or
        "maximize"); RuntimeError with several (use ``directions``)."""
        if len(self.directions) > 1:
            raise RuntimeError(
                "study %r has %d objectives (%s): it has no single direction; use study.directions"
                % (self.name, len(self.directions), ", ".join(self.objective_names))
            )
        return self.directions[0]

    def _several(self, what: str, instead: str) -> RuntimeError:
        return RuntimeError(
            "study %r has %d objectives (%s): %s; use %s"
            % (self.name, len(self.directions), ", ".join(self.objective_names), what, instead)
        )

    @property
    def url(self) -> str:
        """The study's page in the dashboard that xbo serve shows."""
        return "%s/#study=%s" % (self._conn.url, quote(self.name))

    def _path(self, rest: str) -> str:
        return "/api/studies/%s/%s" % (quote(self.name), rest)

    def _trial_path(self, number: int, action: str = "") -> str:
        p = self._path("trials/%d" % number)
        return p + "/" + action if action else p

    def _frozen(self, raw: Dict[str, Any]) -> FrozenTrial:
        return FrozenTrial(raw, self._types)

    def _check_same_space(self, doc: Dict[str, Any]) -> None:
        wanted = objectives_of(doc)
        if [d for _, d in wanted] != self.directions:
            if len(wanted) == 1 and len(self.directions) == 1:
                raise ValueError("study %r exists with direction %r, not %r" % (self.name, self.directions[0], wanted[0][1]))
            raise ValueError("study %r exists with directions %r, not %r" % (self.name, self.directions, [d for _, d in wanted]))
        for (name, _), have in zip(wanted, self.objective_names):
            if name is not None and name != have:
                raise ValueError("study %r exists with objectives %r, not %r" % (self.name, self.objective_names, [n for n, _ in wanted]))
        if list(doc.get("constraints") or []) != self.constraint_names:
            raise ValueError(
                "study %r exists with constraints %r, not %r" % (self.name, self.constraint_names, list(doc.get("constraints") or []))
            )
        if self.space.get("params") != doc.get("params"):
            raise ValueError(
                "study %r exists with another space: %r (given: %r); choose another name or delete it first"
                % (self.name, self.space.get("params"), doc.get("params"))
            )

    # ---- ask and tell ----

    def ask(self) -> Trial:
        """A configuration to evaluate: the oldest queued trial (enqueued
        or re-queued) if any, else a new proposal of the optimizer.

        The ask is retried after a 5xx answer or a lost connection; every
        attempt carries the same new Idempotency-Key, so an attempt whose
        answer was lost does not leave a trial running for nobody: the
        next attempt receives that trial."""
        key = uuid.uuid4().hex
        raw = self._conn.request("POST", self._path("ask"), {"worker": self.worker}, headers={"Idempotency-Key": key})
        return Trial(self, raw)

    def tell(
        self,
        trial: Union[Trial, FrozenTrial, int],
        value: Any = None,
        state: Optional[str] = None,
        *,
        values: Optional[Sequence[float]] = None,
        constraints: Optional[Sequence[float]] = None,
        reason: Optional[str] = None,
        user_attrs: Optional[Dict[str, Any]] = None,
    ) -> FrozenTrial:
        """Finish a trial and return it as recorded.

        state None or "complete" needs the value: a number for one
        objective, a list of one number per objective for several (values=
        is the same argument, by Optuna's name). Values that are not finite
        numbers (NaN, infinity, None, a string), or not as many as the
        study has objectives, fail the trial with a reason ("the value is
        NaN", "the value holds 3 values; the study has 2 objectives (...)")
        instead, as Optuna does. state "failed" takes an optional reason;
        "pruned" an optional value (typically the last intermediate one). A
        live Trial's user attributes go with the tell, updated by
        user_attrs. Telling the same outcome again is accepted (so retries
        are safe).

        A study with constraints needs a complete trial's constraint values,
        one per declared constraint: constraints=[...], else the study's
        constraints_func computes them from the trial as it will be
        recorded (its params, values and user attributes). A wrong count is
        a ValueError (nothing is sent); a NaN or infinite constraint value
        fails the trial with a reason.
        """
        body = self._tell_body(trial, value, state, values, constraints, reason, user_attrs)
        return self._frozen(self._conn.request("POST", self._trial_path(_number(trial), "tell"), body))

    def _tell_body(
        self,
        trial: Union[Trial, FrozenTrial, int],
        value: Any,
        state: Optional[str],
        values: Any,
        constraints: Any,
        reason: Optional[str],
        user_attrs: Optional[Dict[str, Any]],
        what: str = "the value",
    ) -> Dict[str, Any]:
        """The tell request's body; ValueError (or constraints_func's own
        exception) when the arguments are wrong, before anything is sent."""
        number = _number(trial)
        if state not in (None, "complete", "failed", "pruned"):
            raise ValueError('state must be "complete", "failed" or "pruned", not %r' % (state,))
        if reason is not None and state != "failed":
            raise ValueError('a reason goes with state "failed" only')
        if values is not None:
            if value is not None:
                raise ValueError("give value or values, not both")
            value = values
        if constraints is not None:
            if state not in (None, "complete"):
                raise ValueError("constraint values go with a complete trial only")
            if not self.constraint_names:
                raise ValueError("trial %d: study %r declares no constraints, so it takes no constraint values" % (number, self.name))
        attrs = dict(trial.user_attrs) if isinstance(trial, Trial) else {}
        attrs.update(_checked_attrs(user_attrs))
        body: Dict[str, Any] = {}
        if attrs:
            body["user_attrs"] = attrs
        if state in (None, "complete"):
            vals, why = objective_values(value, self.objective_names, what)
            cons: Optional[List[float]] = None
            if why is None and self.constraint_names:
                if constraints is None:
                    constraints = self._constraints_of(trial, vals, attrs)  # type: ignore[arg-type]
                cons, why = self._constraint_values("trial %d" % number, constraints)
            if why is not None:
                body["state"], body["reason"] = "failed", why
                _log.warning("Trial %d failed: %s", number, why)
                return body
            assert vals is not None
            if len(vals) > 1:
                body["values"] = vals
            else:
                body["value"] = vals[0]
            if cons is not None:
                body["constraints"] = cons
        elif state == "failed":
            if value is not None:
                raise ValueError("a failed trial has no value")
            body["state"] = "failed"
            if reason:
                body["reason"] = str(reason)[:_MAX_REASON]
        else:
            body["state"] = "pruned"
            if value is not None:
                v, why = finite_value(value)
                if why is not None:
                    raise ValueError("trial %d: pruned: %s" % (number, why))
                body["value"] = v
        return body

    def _constraints_of(self, trial: Union[Trial, FrozenTrial, int], vals: List[float], attrs: Dict[str, Any]) -> Any:
        """constraints_func's answer for trial as it is about to be
        recorded: complete, with these values and user attributes."""
        if self.constraints_func is None:
            raise ValueError(
                "trial %d: study %r has constraints (%s); give tell(..., constraints=[...]) with one value each, "
                "or pass constraints_func= to create_study/load_study"
                % (_number(trial), self.name, ", ".join(self.constraint_names))
            )
        # A trial given by number is read for its parameters, which the
        # function may need.
        raw = dict(trial.raw) if isinstance(trial, (Trial, FrozenTrial)) else dict(self.trial(trial).raw)
        raw.update(state="complete", value=vals[0], values=vals, user_attrs=dict(raw.get("user_attrs") or {}, **attrs))
        return self.constraints_func(self._frozen(raw))

    def _constraint_values(self, who: str, constraints: Any) -> Tuple[Optional[List[float]], Optional[str]]:
        """One float per declared constraint, or why the trial fails (a
        value that is not finite). A wrong count or a value that is not a
        number at all is a mistake in the calling code: ValueError."""
        names = self.constraint_names
        items = _as_list(constraints)
        if items is None:
            raise ValueError(
                "%s: the constraint values must be a list of %d numbers (%s), not %r"
                % (who, len(names), ", ".join(names), constraints)
            )
        if len(items) != len(names):
            raise ValueError(
                "%s: %d constraint values for the study's %d constraints (%s)"
                % (who, len(items), len(names), ", ".join(names))
            )
        out: List[float] = []
        for j, item in enumerate(items):
            label = "constraint value %d (%s)" % (j, names[j])
            try:
                if isinstance(item, (bool, str, bytes)) or item is None:
                    raise TypeError(item)
                v = float(item)
            except (TypeError, ValueError):
                raise ValueError("%s: %s is %r, not a number" % (who, label, item)) from None
            if not math.isfinite(v):
                return None, finite_value(v, label)[1]
            out.append(v)
        return out, None

    def _report(self, number: int, step: int, value: float) -> Any:
        return self._conn.request("POST", self._trial_path(number, "report"), {"step": step, "value": value})

    def enqueue_trial(self, params: Dict[str, Any], user_attrs: Optional[Dict[str, Any]] = None) -> FrozenTrial:
        """Queue a configuration: the next ask hands it out (before any new
        proposal). Returns the pending trial."""
        body = self._trial_body(params, user_attrs)
        return self._frozen(self._conn.request("POST", self._path("trials"), body, idempotent=False))

    def add_trial(
        self,
        params: Dict[str, Any],
        value: Any,
        user_attrs: Optional[Dict[str, Any]] = None,
        *,
        constraints: Optional[Sequence[float]] = None,
    ) -> FrozenTrial:
        """Record a configuration evaluated elsewhere, with its value (a
        list of one per objective for several objectives) and, in a study
        with constraints, its constraint values, as a complete trial; the
        optimizer learns from it. Unlike tell, nothing fails: a value or
        constraint value that is not finite, or a wrong count, is a
        ValueError, and constraints_func is not called (there is no trial
        to evaluate it on)."""
        body = self._trial_body(params, user_attrs)
        vals, why = objective_values(value, self.objective_names)
        if why is not None:
            raise ValueError("add_trial: %s" % why)
        assert vals is not None
        if len(vals) > 1:
            body["values"] = vals
        else:
            body["value"] = vals[0]
        if self.constraint_names:
            if constraints is None:
                raise ValueError(
                    "add_trial: study %r has constraints (%s); give constraints=[...] with one value each"
                    % (self.name, ", ".join(self.constraint_names))
                )
            cons, why = self._constraint_values("add_trial", constraints)
            if why is not None:
                raise ValueError("add_trial: %s" % why)
            body["constraints"] = cons
        elif constraints is not None:
            raise ValueError("add_trial: study %r declares no constraints, so it takes no constraint values" % self.name)
        return self._frozen(self._conn.request("POST", self._path("trials"), body, idempotent=False))

    def _trial_body(self, params: Any, user_attrs: Any) -> Dict[str, Any]:
        if not isinstance(params, dict):
            raise ValueError("params must be a dict of parameter name -> value, not %r" % (params,))
        body: Dict[str, Any] = {"params": params}
        attrs = _checked_attrs(user_attrs)
        if attrs:
            body["user_attrs"] = attrs
        return body

    # ---- reading ----

    @property
    def best_trial(self) -> FrozenTrial:
        """The best complete (and, with constraints, feasible) trial.
        ValueError while there is none; RuntimeError in a study with
        several objectives, which has best_trials instead."""
        if len(self.directions) > 1:
            raise self._several("there is no single best trial", "study.best_trials (the Pareto front)")
        try:
            raw = self._conn.request("GET", self._path("best"))
        except XBOError as e:
            if e.status == 404:
                what = "complete and feasible" if self.constraint_names else "complete"
                raise ValueError("study %r: no trial is %s yet (%s)" % (self.name, what, e.message)) from None
            raise
        return self._frozen(raw)

    @property
    def best_value(self) -> float:
        if len(self.directions) > 1:
            raise self._several("there is no single best value", "study.best_trials (the Pareto front)")
        value = self.best_trial.value
        assert value is not None
        return value

    @property
    def best_params(self) -> Dict[str, Any]:
        if len(self.directions) > 1:
            raise self._several("there are no single best parameters", "study.best_trials (the Pareto front)")
        return self.best_trial.params

    @property
    def best_trials(self) -> List[FrozenTrial]:
        """The Pareto front, in number order: the complete trials (feasible
        ones, when the study has constraints) that no other such trial
        dominates, i.e. equals or beats in every objective and beats in
        one. With one objective: the best trials (ties included). [] while
        there is none."""
        doc = self._conn.request("GET", self._path("best_trials"))
        return [self._frozen(t) for t in doc.get("trials") or []]

    @property
    def trials(self) -> List[FrozenTrial]:
        """Every trial of the study, in number order."""
        return self.get_trials()

    def get_trials(self, states: Optional[Iterable[str]] = None) -> List[FrozenTrial]:
        """The trials in the given states (all when None), in number order."""
        query = ""
        if states is not None:
            states = [states] if isinstance(states, str) else list(states)
            for s in states:
                if s not in STATES:
                    raise ValueError("state %r is not one of %s" % (s, ", ".join(STATES)))
            query = "&state=" + ",".join(states)
        out: List[FrozenTrial] = []
        while True:
            doc = self._conn.request("GET", self._path("trials?offset=%d&limit=%d%s" % (len(out), self._page_size, query)))
            batch = doc.get("trials") or []
            out.extend(self._frozen(t) for t in batch)
            if not batch or len(out) >= int(doc.get("total", 0)):
                return out

    def trial(self, number: int) -> FrozenTrial:
        """One trial by its number."""
        return self._frozen(self._conn.request("GET", self._trial_path(number)))

    # ---- notes ----

    def set_note(self, note: str) -> None:
        """Replace the study's note ("" clears it): plain text of at most
        10,000 characters without NUL, shown by the dashboard and the
        report."""
        self.note = str(self._conn.request("PUT", self._path("note"), {"note": _checked_note(note)}).get("note") or "")

    def set_trial_note(self, trial: Union[Trial, FrozenTrial, int], note: str) -> FrozenTrial:
        """Replace a trial's note ("" clears it), in any state; its outcome
        stays. Returns the trial as stored."""
        return self._frozen(self._conn.request("PUT", self._trial_path(_number(trial), "note"), {"note": _checked_note(note)}))

    # ---- optimize ----

    def stop(self) -> None:
        """Make a running optimize() start no further trial (call it from
        a callback or the objective); running trials finish."""
        self._stop.set()

    def optimize(
        self,
        func: Callable[[Trial], Any],
        n_trials: Optional[int] = None,
        timeout: Optional[float] = None,
        n_jobs: int = 1,
        callbacks: Sequence[Callable[["Study", FrozenTrial], None]] = (),
        catch: Union[Type[Exception], Sequence[Type[Exception]]] = (),
    ) -> None:
        """Evaluate func(trial) on configurations the server proposes.

        Stops after n_trials trials (over all threads), or when timeout
        seconds have passed (no new trial starts then; running ones finish),
        or at study.stop(); with neither limit it runs until interrupted.
        n_jobs threads evaluate at once (-1: one per CPU); they suit
        objectives that release the GIL (numerical libraries, subprocesses,
        I/O). Use processes or machines for more.

        func returns the value: a number, or a list (tuple) of one number per
        objective for a study with several. A study with constraints
        computes them with its constraints_func (see tell); without one,
        optimize refuses to start. Raising xbo.TrialPruned ends the trial as
        pruned. An exception listed in catch fails the trial with its message
        as the reason, and the optimization goes on; any other exception
        fails the trial the same way and is raised again (other threads
        finish their trial first). A value that is not a finite number
        (NaN, infinity, None), or the wrong number of values, fails the
        trial with a reason and goes on.
        Each callback gets (study, frozen_trial) after each finished trial.
        """
        if not callable(func):
            raise TypeError("func must be callable, not %r" % (func,))
        if n_trials is not None and (isinstance(n_trials, bool) or not isinstance(n_trials, int) or n_trials < 0):
            raise ValueError("n_trials must be an integer >= 0 or None, not %r" % (n_trials,))
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0):
            raise ValueError("timeout must be a number of seconds >= 0 or None, not %r" % (timeout,))
        if n_jobs == -1:
            n_jobs = os.cpu_count() or 1
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
            raise ValueError("n_jobs must be an integer >= 1, or -1 for one per CPU, not %r" % (n_jobs,))
        callbacks = list(callbacks)
        for cb in callbacks:
            if not callable(cb):
                raise TypeError("callback %r is not callable" % (cb,))
        if isinstance(catch, type):
            catch = (catch,)
        catch = tuple(catch)
        for c in catch:
            if not (isinstance(c, type) and issubclass(c, BaseException)):
                raise TypeError("catch must list exception classes, not %r" % (c,))

        if self.constraint_names and self.constraints_func is None:
            raise ValueError(
                "study %r has constraints (%s): optimize computes them with constraints_func(frozen_trial); pass "
                "constraints_func= to create_study/load_study (or use ask and tell(..., constraints=[...]))"
                % (self.name, ", ".join(self.constraint_names))
            )
        self._stop.clear()
        budget = _Budget(n_trials, timeout, self._stop)
        if n_jobs == 1:
            while budget.take():
                self._run_trial(func, callbacks, catch)
            return

        errors: List[BaseException] = []

        def work() -> None:
            try:
                while budget.take():
                    self._run_trial(func, callbacks, catch)
            except BaseException as e:  # noqa: B902 - handed to the calling thread
                errors.append(e)
                self._stop.set()

        threads = [threading.Thread(target=work, name="xbo-optimize-%d" % i, daemon=True) for i in range(n_jobs)]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.2)
        except KeyboardInterrupt:
            self._stop.set()
            raise
        if errors:
            raise errors[0]

    def _record_failure(self, trial: Trial, e: BaseException) -> None:
        try:
            self.tell(trial, state="failed", reason=_reason(e))
        except Exception as tell_error:  # the original error matters more
            _log.error("Trial %d: could not record the failure: %s", trial.number, tell_error)

    def _run_trial(self, func: Callable[[Trial], Any], callbacks: List[Callable[..., None]], catch: Tuple[type, ...]) -> None:
        trial = self.ask()
        try:
            result = func(trial)
        except TrialPruned:
            frozen = self.tell(trial, state="pruned")
            _log.info("Trial %d pruned.", trial.number)
        except catch as e:  # type: ignore[misc]
            frozen = self.tell(trial, state="failed", reason=_reason(e))
            _log.warning("Trial %d failed: %s", trial.number, frozen.fail_reason)
        except BaseException as e:
            self._record_failure(trial, e)
            raise
        else:
            # Invalid values fail the trial in _tell_body and the run goes
            # on; constraints_func raising, or answering the wrong number
            # of values, is a bug in the calling code: the trial fails and
            # the error is raised, whatever catch says (it is about func).
            try:
                body = self._tell_body(trial, result, None, None, None, None, None, "the objective's value")
            except BaseException as e:
                self._record_failure(trial, e)
                raise
            frozen = self._frozen(self._conn.request("POST", self._trial_path(trial.number, "tell"), body))
            if frozen.state == "complete":
                shown = frozen.values if len(self.directions) > 1 else frozen.value
                _log.info("Trial %d finished with %s %r and parameters %r.", frozen.number,
                          "values" if len(self.directions) > 1 else "value", shown, frozen.params)
        for cb in callbacks:
            cb(self, frozen)
