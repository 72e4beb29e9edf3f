"""An Optuna sampler driven by xbo's optimizer.

Unmodified Optuna code tunes with xbo, and every trial is recorded in an xbo
study, so the dashboard and ``xbo explain`` describe the run while it goes::

    import optuna
    from xbo.integration.optuna import XBOSampler

    study = optuna.create_study(sampler=XBOSampler(study_name="mlp"))
    study.optimize(objective, n_trials=60)

How it maps Optuna onto xbo (define-by-run spaces):

- The xbo study's space is the union of the parameters the finished trials
  suggested, each later-appearing parameter conditional on the categorical
  choice under which it appeared (``_optuna_space.infer_space`` has the
  rules; what it leaves out, Optuna's ``independent_sampler`` samples).
  Until one trial has finished the space is empty and the first trial is
  sampled independently.
- xbo's space is fixed once a study exists, so when a finished trial shows
  a new parameter or breaks an inferred condition, the sampler makes the
  next generation of the xbo study: it deletes the study (only when every
  trial in it came from this Optuna study), creates it again under the same
  name with the new space, and records every finished Optuna trial in it
  with its true state (complete trials as evaluated elsewhere, pruned and
  failed ones enqueued, handed out and told). Spaces settle after the
  first trials of each branch, so this happens a few times early on; the
  trials proposed before keep their values and states, not their
  acquisition labels.
- Every other trial's configuration is xbo's proposal (an ask); the sampler
  tells xbo the outcome: the value, intermediate values, user attributes,
  pruned or failed. A trial evaluated with other values than xbo proposed
  (a fixed parameter) is told failed with the reason and recorded as
  evaluated.
- ``sample_relative`` accepts any space (Optuna's own tests call it with
  spaces it did not infer): parameters it names that the study's space
  lacks join it unconditionally.
- The server is asked once when the sampler is created, so a wrong URL or
  token is an error at once.
- Several objectives (``optuna.create_study(directions=[...])``) make an xbo
  study with those directions, and the names Optuna >= 3.2 keeps in
  ``study.metric_names`` when set. With ``constraints_func`` (Optuna's
  convention: a function of the finished trial returning its constraint
  values, feasible when all are <= 0), the sampler stores each complete or
  pruned trial's values in the trial's "constraints" system attribute, as
  Optuna's own samplers do, and tells them to xbo, whose study declares as
  many constraints as the first complete trial has (named constraint_0,
  ...). xbo's ``best_trials`` then holds feasible trials only.

Optuna itself is imported by this module only; ``import xbo`` works without it.
"""

from __future__ import annotations

import json
import math
import threading
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

try:
    import optuna
    from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
    from optuna.samplers import BaseSampler, RandomSampler
    from optuna.trial import FrozenTrial, TrialState
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError(
        "xbo.integration.optuna needs Optuna (pip install optuna, or Debian's python3-optuna); "
        "the rest of xbo works without it"
    ) from e

import xbo
from xbo._http import Connection, resolve_url
from xbo.integration._optuna_space import SINGLE_VALUE, Entry, fits, infer_space

__all__ = ["XBOSampler"]

# The Optuna trial's system attribute holding the number of its xbo trial,
# and the xbo trial's user attributes naming its Optuna study and trial.
LINK_ATTR = "xbo:trial"
STUDY_ATTR = "optuna_study"
NUMBER_ATTR = "optuna_trial"
# The system attribute where Optuna's samplers keep a trial's constraint
# values; the sampler writes the same, so that Optuna's tools see them.
CONSTRAINTS_ATTR = "constraints"


def _json_scalar(c: Any) -> bool:
    return isinstance(c, (str, bool, int)) or (isinstance(c, float) and math.isfinite(c))


def xbo_param(name: str, dist: BaseDistribution) -> Optional[Dict[str, Any]]:
    """The xbo space entry of an Optuna distribution, or None when xbo's
    space cannot express it exactly."""
    # Optuna moves high onto low + k·step itself, so a stepped range is
    # always one xbo accepts.
    if isinstance(dist, FloatDistribution):
        return xbo.Float(name, dist.low, dist.high, log=dist.log, step=dist.step).to_dict()
    if isinstance(dist, IntDistribution):
        return xbo.Int(name, int(dist.low), int(dist.high), log=dist.log, step=int(dist.step)).to_dict()
    if isinstance(dist, CategoricalDistribution):
        if not all(_json_scalar(c) for c in dist.choices):
            return None
        # xbo names a choice by its text too (CSV files, older servers), so
        # choices written alike (1 and 1.0, "true" and True) cannot coexist.
        if len({_choice_text(c) for c in dist.choices}) < len(dist.choices):
            return None
        return xbo.Categorical(name, list(dist.choices)).to_dict()
    return None


def _choice_text(c: Any) -> str:
    """How a server that keeps categorical choices as strings spells c."""
    if isinstance(c, bool):
        return "true" if c else "false"
    if isinstance(c, float) and c.is_integer() and abs(c) < 1e15:
        return str(int(c))
    return str(c)


def optuna_value(dist: BaseDistribution, value: Any) -> Any:
    """xbo's value of a parameter as Optuna's external value for dist."""
    if isinstance(dist, CategoricalDistribution):
        for c in dist.choices:  # the choice itself, when the server kept its JSON type
            if type(c) is type(value) and c == value:
                return c
        for c in dist.choices:  # a server that answers choices as strings
            if isinstance(value, str) and _choice_text(c) == value:
                return c
        raise ValueError("xbo proposed %r, which is not one of the choices %r" % (value, dist.choices))
    if isinstance(dist, IntDistribution):
        return min(max(int(round(float(value))), dist.low), dist.high)
    # Log-scale decoding may land an ulp outside the range, which Optuna
    # would refuse (and silently sample independently).
    return min(max(float(value), dist.low), dist.high)


def _same_value(dist: BaseDistribution, a: Any, b: Any) -> bool:
    if isinstance(dist, CategoricalDistribution):
        return type(a) is type(b) and a == b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def _attrs_of(study: "optuna.Study", trial: FrozenTrial) -> Dict[str, Any]:
    """The user attributes xbo records for an Optuna trial: where it comes
    from, and its own user attributes that JSON can hold."""
    out: Dict[str, Any] = {STUDY_ATTR: study.study_name, NUMBER_ATTR: trial.number}
    for k, v in trial.user_attrs.items():
        try:
            json.dumps(v, allow_nan=False)
        except (TypeError, ValueError):
            continue
        out[k] = v
    return out


# The states whose suggested parameters describe the space: a failed trial
# may have stopped before suggesting all of its own.
_SPACE_STATES = (TrialState.COMPLETE, TrialState.PRUNED)
# The states the sampler records in xbo.
_RECORDED_STATES = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)


class XBOSampler(BaseSampler):
    """An Optuna sampler whose proposals come from an xbo study.

    Args:
        url, token: the xbo server (default $XBO_URL / $XBO_TOKEN, then
            http://127.0.0.1:8080). It is asked once at once: a wrong URL
            or token raises xbo.XBOError here.
        study_name: the xbo study's name (default: the Optuna study's name).
            An xbo study of that name with the same space is continued;
            one with another space is replaced only when all its trials
            came from this Optuna study, else it is an error.
        optimizer: xbo's optimizer configuration for a new study
            ({"strategy": "ei", "seed": 1, ...}); seed, when given, is its
            default seed.
        independent_sampler: the Optuna sampler of the parameters outside
            xbo's space (default: RandomSampler(seed)).
        seed: seed of the default independent sampler and of xbo's optimizer.
        worker: the worker name xbo records with each trial.
        constraints_func: f(frozen_trial) -> [c0, c1, ...], the trial's
            constraint values (feasible when all are <= 0), called after
            each complete or pruned trial as Optuna's samplers do. Every
            trial must give as many as the first.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        study_name: Optional[str] = None,
        *,
        token: Optional[str] = None,
        optimizer: Optional[Dict[str, Any]] = None,
        independent_sampler: Optional[BaseSampler] = None,
        seed: Optional[int] = None,
        worker: Optional[str] = None,
        constraints_func: Optional[Callable[[FrozenTrial], Sequence[float]]] = None,
    ) -> None:
        if constraints_func is not None and not callable(constraints_func):
            raise ValueError("constraints_func must be callable, not %r" % (constraints_func,))
        if study_name is not None and (not isinstance(study_name, str) or not study_name.strip()):
            raise ValueError("study_name must be a non-empty string, not %r" % (study_name,))
        if optimizer is not None and not isinstance(optimizer, dict):
            raise ValueError("optimizer must be a dict, not %r" % (optimizer,))
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise ValueError("independent_sampler must be an Optuna sampler, not %r" % (independent_sampler,))
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError("seed must be an integer, not %r" % (seed,))
        self._url = resolve_url(url)
        self._token = token
        self._check_server()
        self._study_name = study_name
        self._optimizer = dict(optimizer) if optimizer is not None else None
        if seed is not None:
            self._optimizer = dict(self._optimizer or {})
            self._optimizer.setdefault("seed", seed)
        self._worker = worker
        self._constraints_func = constraints_func
        self._independent = independent_sampler or RandomSampler(seed=seed)
        # One lock for the xbo study's generation and every request that
        # depends on it: a new generation deletes the study other threads
        # would otherwise ask from.
        self._lock = threading.RLock()
        self._xbo: Optional[xbo.Study] = None
        self._entries: List[Entry] = []
        self._doc: List[Dict[str, Any]] = []
        self._generation = 0
        # Optuna trial id -> (generation, xbo trial number, the params xbo proposed).
        self._links: Dict[int, Tuple[int, int, Dict[str, Any]]] = {}
        self._left_out_warned: set = set()

    def _check_server(self) -> None:
        # Reads need no token on a default server, so the check is a write
        # that cannot succeed: creating a study without a name. A server
        # that accepts the token answers 400 (and creates nothing), one
        # that does not 401. One retry only: a wrong URL fails in seconds,
        # not after the 30 s of an ordinary request's retries.
        try:
            Connection(self._url, self._token, retries=1, timeout=30).request("POST", "/api/studies", {})
        except xbo.XBOError as e:
            if e.status == 400:
                return
            raise xbo.XBOError(e.status, "XBOSampler: the xbo server at %s cannot be used: %s" % (self._url, e.message)) from None
        raise xbo.XBOError(None, "XBOSampler: %s accepted a study without a name; is it an xbo server?" % self._url)

    @property
    def xbo_study(self) -> Optional["xbo.Study"]:
        """The xbo study, once the first trial has finished (None before)."""
        return self._xbo

    @property
    def generation(self) -> int:
        """How many times the xbo study was created for a new space (0 before the first)."""
        return self._generation

    def reseed_rng(self) -> None:
        self._independent.reseed_rng()

    # ---- the space ----

    def _infer(self, study: "optuna.Study", extra: Optional[FrozenTrial] = None) -> List[Entry]:
        """The space the finished trials (and extra, a trial finishing now)
        describe."""
        trials = [t for t in study.get_trials(deepcopy=False, states=_SPACE_STATES) if extra is None or t.number != extra.number]
        if extra is not None:
            trials.append(extra)
        trials.sort(key=lambda t: t.number)
        entries, left_out = infer_space([(t.params, t.distributions) for t in trials], lambda n, d: xbo_param(n, d) is not None)
        for name, why in left_out.items():
            # A single-valued parameter needs no sampler: no warning.
            if name not in self._left_out_warned and why != SINGLE_VALUE:
                self._left_out_warned.add(name)
                warnings.warn("XBOSampler: parameter %r is sampled independently: %s" % (name, why))
        return entries

    def _doc_of(self, entries: List[Entry]) -> List[Dict[str, Any]]:
        out = []
        for name, dist, condition in entries:
            d = xbo_param(name, dist)
            assert d is not None
            if condition is not None:
                d["condition"] = {"parent": condition[0], "values": list(condition[1])}
            out.append(d)
        return out

    def infer_relative_search_space(self, study: "optuna.Study", trial: FrozenTrial) -> Dict[str, BaseDistribution]:
        with self._lock:
            return {name: dist for name, dist, _ in self._infer(study)}

    # ---- relative sampling: xbo's proposals ----

    def sample_relative(
        self, study: "optuna.Study", trial: FrozenTrial, search_space: Dict[str, BaseDistribution]
    ) -> Dict[str, Any]:
        if not search_space:
            return {}
        if "fixed_params" in trial.system_attrs:
            # Enqueued in Optuna: its values are given, so no xbo proposal
            # is spent; after_trial records the result.
            return {}
        with self._lock:
            entries = self._infer(study)
            known = {name for name, _, _ in entries}
            for name, dist in search_space.items():
                if name not in known and not dist.single() and xbo_param(name, dist) is not None:
                    entries.append((name, dist, None))
            xstudy = self._ensure(study, entries)
            if xstudy is None:
                return {}
            xtrial = xstudy.ask()
            dists = {name: dist for name, dist, _ in self._entries}
            proposed = {name: optuna_value(dists[name], v) for name, v in xtrial.params.items() if name in dists}
            self._links[trial._trial_id] = (self._generation, xtrial.number, proposed)
        study._storage.set_trial_system_attr(trial._trial_id, LINK_ATTR, xtrial.number)
        return {name: optuna_value(dist, xtrial.params[name]) for name, dist in search_space.items() if name in xtrial.params}

    def _ensure(
        self,
        study: "optuna.Study",
        entries: List[Entry],
        finishing: Optional[Tuple[FrozenTrial, TrialState, Optional[List[float]], Optional[List[float]]]] = None,
    ) -> Optional["xbo.Study"]:
        """The xbo study for entries' space: the current one when its space
        is that, else a new generation with every finished trial recorded
        (and finishing, a trial whose outcome Optuna has not stored yet).
        None while the study cannot be created yet."""
        doc = self._doc_of(entries)
        if not doc or (self._xbo is not None and doc == self._doc):
            return self._xbo
        complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        n_constraints = None
        if self._constraints_func is not None:
            # The xbo study declares its constraints at creation: as many
            # as a finished trial has. None finished: not yet.
            if self._xbo is not None:
                n_constraints = len(self._xbo.constraint_names)
            elif complete:
                n_constraints = len(self._constraints_of(complete[0]))
            elif finishing is not None and finishing[3] is not None:
                n_constraints = len(finishing[3])
            else:
                return None
        name = self._study_name or study.study_name
        directions = ["maximize" if d == optuna.study.StudyDirection.MAXIMIZE else "minimize" for d in study.directions]
        create = dict(
            directions=directions,
            # Optuna >= 3.2 names the objectives with set_metric_names.
            objective_names=getattr(study, "metric_names", None),
            constraints=n_constraints,
            url=self._url,
            token=self._token,
            optimizer=self._optimizer,
            worker=self._worker,
        )
        if self._xbo is not None:
            if not self._ours(self._xbo, study):
                if "generation" not in self._left_out_warned:
                    self._left_out_warned.add("generation")
                    warnings.warn("XBOSampler: xbo study %r holds trials of other sources, so its space is not changed; "
                                  "trials that do not fit it are not recorded" % name)
                return self._xbo
            xbo.delete_study(name, url=self._url, token=self._token)
            xstudy = xbo.create_study(name, {"params": doc}, **create)
        else:
            try:
                xstudy = xbo.create_study(name, {"params": doc}, load_if_exists=True, **create)
            except ValueError:
                old = xbo.load_study(name, url=self._url, token=self._token)
                if not self._ours(old, study):
                    raise ValueError(
                        "XBOSampler: xbo study %r exists with another space and trials not from Optuna study %r; "
                        "give XBOSampler(study_name=...) another name" % (name, study.study_name)
                    ) from None
                xbo.delete_study(name, url=self._url, token=self._token)
                xstudy = xbo.create_study(name, {"params": doc}, **create)
        self._xbo, self._entries, self._doc = xstudy, list(entries), doc
        self._generation += 1
        self._replay(study, xstudy, finishing)
        return xstudy

    def _ours(self, xstudy: "xbo.Study", study: "optuna.Study") -> bool:
        """Whether every trial of xstudy came from this Optuna study: told
        with its name, or asked by this sampler and not told yet."""
        asked = {number for gen, number, _ in self._links.values() if gen == self._generation and xstudy is self._xbo}
        return all(t.user_attrs.get(STUDY_ATTR) == study.study_name or t.number in asked for t in xstudy.trials)

    def _replay(self, study: "optuna.Study", xstudy: "xbo.Study", finishing: Any) -> None:
        """Record the finished Optuna trials the xbo study does not hold
        yet (it may be a continued one), in number order."""
        known = {t.user_attrs.get(NUMBER_ATTR) for t in xstudy.trials if t.user_attrs.get(STUDY_ATTR) == study.study_name}
        todo: List[Tuple[FrozenTrial, TrialState, Optional[List[float]], Optional[List[float]]]] = []
        for t in study.get_trials(deepcopy=False, states=_RECORDED_STATES):
            if finishing is None or t.number != finishing[0].number:
                todo.append((t, t.state, list(t.values) if t.values else None, None))
        if finishing is not None:
            todo.append(finishing)
        todo.sort(key=lambda item: item[0].number)
        for trial, state, values, cons in todo:
            if trial.number not in known:
                self._record(study, trial, state, values, cons)

    def _constraints_of(self, trial: FrozenTrial) -> List[float]:
        """A finished trial's constraint values: those after_trial stored,
        else constraints_func's (a trial finished before this sampler ran)."""
        cons = trial.system_attrs.get(CONSTRAINTS_ATTR)
        if cons is None:
            assert self._constraints_func is not None
            cons = self._constraints_func(trial)
        return self._checked_constraints(trial, cons)

    def _checked_constraints(self, trial: FrozenTrial, cons: Any) -> List[float]:
        try:
            out = [float(c) for c in cons]
        except (TypeError, ValueError):
            raise ValueError("XBOSampler: constraints_func returned %r for trial %d, not a list of numbers" % (cons, trial.number)) from None
        if not all(math.isfinite(c) for c in out):
            raise ValueError("XBOSampler: constraints_func returned %r for trial %d; constraint values must be finite" % (cons, trial.number))
        xstudy = self._xbo
        if xstudy is not None and len(out) != len(xstudy.constraint_names):
            raise ValueError(
                "XBOSampler: constraints_func returned %d values for trial %d; xbo study %r has %d constraints"
                % (len(out), trial.number, xstudy.name, len(xstudy.constraint_names))
            )
        return out

    def _record(
        self,
        study: "optuna.Study",
        trial: FrozenTrial,
        state: TrialState,
        values: Optional[List[float]],
        cons: Optional[List[float]],
    ) -> None:
        """Record a finished trial xbo did not propose with its own state:
        a complete one as evaluated elsewhere, a pruned or failed one
        enqueued, handed out and told."""
        xstudy = self._xbo
        if xstudy is None:
            return
        names = [name for name, _, _ in self._entries]
        params = {name: trial.params[name] for name in names if name in trial.params}
        if not fits(self._entries, params):
            warnings.warn("XBOSampler: trial %d (%s) is not recorded in xbo study %r: its parameters %r do not fit its space"
                          % (trial.number, state.name.lower(), xstudy.name, params))
            return
        attrs = _attrs_of(study, trial)
        if state == TrialState.COMPLETE:
            if not values or not all(math.isfinite(v) for v in values):
                return
            if xstudy.constraint_names and cons is None:
                cons = self._constraints_of(trial)
            xstudy.add_trial(params, list(values), user_attrs=attrs, constraints=cons if xstudy.constraint_names else None)
            return
        queued = xstudy.enqueue_trial(params, user_attrs=attrs)
        handed = xstudy.ask()
        if handed.number != queued.number:
            # Another process enqueued before: its trial goes back by failing
            # here would lose it, so it is told nothing and expires.
            warnings.warn("XBOSampler: xbo handed out trial %d instead of the enqueued %d" % (handed.number, queued.number))
        self._tell_outcome(xstudy, handed.number, trial, state, values, cons, attrs)

    def _tell_outcome(
        self,
        xstudy: "xbo.Study",
        number: int,
        trial: FrozenTrial,
        state: TrialState,
        values: Optional[List[float]],
        cons: Optional[List[float]],
        attrs: Dict[str, Any],
    ) -> None:
        for step, v in sorted(trial.intermediate_values.items()):
            if math.isfinite(v):
                xstudy._report(number, int(step), float(v))
        if state == TrialState.COMPLETE:
            xstudy.tell(number, values, constraints=cons, user_attrs=attrs)
        elif state == TrialState.PRUNED:
            xstudy.tell(number, values[0] if values else None, state="pruned", user_attrs=attrs)
        else:
            xstudy.tell(number, state="failed", reason="the Optuna objective failed (Optuna logs the exception)", user_attrs=attrs)

    # ---- independent sampling ----

    def sample_independent(
        self, study: "optuna.Study", trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution
    ) -> Any:
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    # ---- the outcome goes to xbo ----

    def after_trial(self, study: "optuna.Study", trial: FrozenTrial, state: TrialState, values: Optional[Any]) -> None:
        self._independent.after_trial(study, trial, state, values)
        vals = [float(v) for v in values] if values else None
        with self._lock:
            link = self._links.get(trial._trial_id)
            if link is not None and link[0] != self._generation:
                link = None  # asked from an earlier generation, deleted since
            cons: Optional[List[float]] = None
            if self._constraints_func is not None and state in (TrialState.COMPLETE, TrialState.PRUNED):
                try:
                    cons = self._checked_constraints(trial, self._constraints_func(trial))
                except Exception as e:
                    # The xbo trial would otherwise stay running until it expires.
                    if link is not None and self._xbo is not None:
                        self._xbo.tell(link[1], state="failed", reason="constraints_func: %s" % e, user_attrs=_attrs_of(study, trial))
                    self._links.pop(trial._trial_id, None)
                    raise
                study._storage.set_trial_system_attr(trial._trial_id, CONSTRAINTS_ATTR, tuple(cons))
            if state in _SPACE_STATES:
                entries = self._infer(study, extra=trial)
                if entries and self._doc_of(entries) != self._doc:
                    # A new parameter, or a broken condition: a new
                    # generation, whose replay records this trial too
                    # (its xbo trial went with the old one).
                    before = self._generation
                    try:
                        self._ensure(study, entries, finishing=(trial, state, vals, cons))
                    finally:
                        self._links.pop(trial._trial_id, None)
                    if self._generation != before or self._xbo is None:
                        return
            self._links.pop(trial._trial_id, None)
            xstudy = self._xbo
            if xstudy is None or state not in _RECORDED_STATES:
                return
            if link is None:
                self._record(study, trial, state, vals, cons)
                return
            _, number, proposed = link
            attrs = _attrs_of(study, trial)
            names = [name for name, _, _ in self._entries]
            evaluated = {name: trial.params[name] for name in names if name in trial.params}
            dists = {name: dist for name, dist, _ in self._entries}
            why = None
            if set(evaluated) != set(proposed):
                why = "Optuna evaluated the parameters %s, xbo proposed %s" % (sorted(evaluated), sorted(proposed))
            else:
                for name, v in evaluated.items():
                    if not _same_value(dists[name], v, proposed[name]):
                        why = "Optuna evaluated %s=%r, not xbo's proposal %r" % (name, v, proposed[name])
                        break
            if why is not None and state != TrialState.FAIL:
                xstudy.tell(number, state="failed", reason=why, user_attrs=attrs)
                self._record(study, trial, state, vals, cons)
                return
            self._tell_outcome(xstudy, number, trial, state, vals, cons, attrs)
