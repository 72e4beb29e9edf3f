"""An Optuna sampler driven by xbo's optimizer.

Unmodified Optuna code tunes with xbo, and every trial is recorded in an xbo
study, so the dashboard and ``xbo explain`` describe the run while it goes::

    import optuna
    from xbo.integration.optuna import XBOSampler

    study = optuna.create_study(sampler=XBOSampler(study_name="mlp"))
    study.optimize(objective, n_trials=60)

How it maps Optuna onto xbo:

- The relative search space is Optuna's intersection search space: the
  parameters every finished trial suggested with the same distribution.
  Until one trial has finished it is empty and the first trial is sampled
  independently (by ``independent_sampler``, a RandomSampler by default).
- When the space is first non-empty, the sampler creates the xbo study with
  those parameters (or loads it, when a study of that name exists with the
  same space, e.g. on resuming), and records the Optuna trials finished so
  far in it as imported trials. From then on each trial's configuration is
  xbo's proposal (an ask); the sampler tells xbo the outcome: the value,
  intermediate values, user attributes, pruned or failed.
- Several objectives (``optuna.create_study(directions=[...])``) make an xbo
  study with those directions, and the names Optuna >= 3.2 keeps in
  ``study.metric_names`` when set. With ``constraints_func`` (Optuna's
  convention: a function of the finished trial returning its constraint
  values, feasible when all are <= 0), the sampler stores each complete or
  pruned trial's values in the trial's "constraints" system attribute, as
  Optuna's own samplers do, and tells them to xbo, whose study declares as
  many constraints as the first complete trial has (named constraint_0,
  ...). xbo's ``best_trials`` then holds feasible trials only.
- Parameters xbo cannot hold in its space (distributions with a ``step``,
  categorical choices that are None or not strings, numbers or booleans,
  or two choices written alike such as 1 and 1.0)
  and parameters outside the space are sampled independently. If the
  intersection later shrinks (a parameter is no longer suggested by every
  trial, or its range changes), the xbo study no longer describes the trials:
  the sampler warns once and samples every parameter independently.

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

try:  # Optuna >= 3.2 moved it; 3.1 has it in optuna.samplers.
    from optuna.search_space import IntersectionSearchSpace
except ImportError:  # pragma: no cover - depends on the Optuna version
    from optuna.samplers import IntersectionSearchSpace  # type: ignore[no-redef]

import xbo
from xbo._http import resolve_url

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


class XBOSampler(BaseSampler):
    """An Optuna sampler whose proposals come from an xbo study.

    Args:
        url, token: the xbo server (default $XBO_URL / $XBO_TOKEN, then
            http://127.0.0.1:8080).
        study_name: the xbo study's name (default: the Optuna study's name).
            An xbo study of that name with the same space is continued;
            one with another space is an error.
        optimizer: xbo's optimizer configuration for a new study
            ({"strategy": "ei", "seed": 1, ...}).
        independent_sampler: the Optuna sampler of the parameters outside
            xbo's space (default: RandomSampler(seed)).
        seed: seed of the default independent sampler.
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
        self._url = resolve_url(url)
        self._token = token
        self._study_name = study_name
        self._optimizer = optimizer
        self._worker = worker
        self._constraints_func = constraints_func
        self._independent = independent_sampler or RandomSampler(seed=seed)
        self._intersection = IntersectionSearchSpace()
        self._lock = threading.Lock()
        self._xbo: Optional[xbo.Study] = None
        self._space: Dict[str, BaseDistribution] = {}
        # Optuna trial id -> (xbo trial number, the params xbo proposed).
        self._links: Dict[int, Tuple[int, Dict[str, Any]]] = {}
        self._warned_shrink = False

    @property
    def xbo_study(self) -> Optional["xbo.Study"]:
        """The xbo study, once the first trial has finished (None before)."""
        return self._xbo

    def reseed_rng(self) -> None:
        self._independent.reseed_rng()

    # ---- relative sampling: xbo's proposals ----

    def infer_relative_search_space(self, study: "optuna.Study", trial: FrozenTrial) -> Dict[str, BaseDistribution]:
        with self._lock:
            inferred = {
                name: dist
                for name, dist in self._intersection.calculate(study).items()
                if not dist.single() and xbo_param(name, dist) is not None
            }
            if self._xbo is None or inferred == self._space:
                return inferred
            if not self._warned_shrink:
                self._warned_shrink = True
                warnings.warn(
                    "XBOSampler: the trials no longer share xbo study %r's parameters %s (common now: %s); "
                    "further trials are sampled independently and recorded in xbo only when they "
                    "suggest all of its parameters" % (self._xbo.name, sorted(self._space), sorted(inferred))
                )
            return {}

    def sample_relative(
        self, study: "optuna.Study", trial: FrozenTrial, search_space: Dict[str, BaseDistribution]
    ) -> Dict[str, Any]:
        if not search_space:
            return {}
        if "fixed_params" in trial.system_attrs:
            # Enqueued in Optuna: its values are given, so no xbo proposal
            # is spent; after_trial records the result.
            return {}
        xstudy = self._bind(study, search_space)
        if xstudy is None:
            return {}
        xtrial = xstudy.ask()
        params = {name: optuna_value(dist, xtrial.params[name]) for name, dist in search_space.items()}
        with self._lock:
            self._links[trial._trial_id] = (xtrial.number, params)
        study._storage.set_trial_system_attr(trial._trial_id, LINK_ATTR, xtrial.number)
        return params

    def _bind(self, study: "optuna.Study", space: Dict[str, BaseDistribution]) -> Optional["xbo.Study"]:
        """The xbo study for space: created (or loaded) on first use, with
        the finished Optuna trials recorded in it."""
        with self._lock:
            if self._xbo is not None:
                return self._xbo if space == self._space else None
            names = sorted(space)
            complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            n_constraints = None
            if self._constraints_func is not None:
                # The xbo study declares its constraints at creation: as
                # many as a finished trial has. None finished: not yet.
                if not complete:
                    return None
                n_constraints = len(self._constraints_of(complete[0]))
            directions = ["maximize" if d == optuna.study.StudyDirection.MAXIMIZE else "minimize" for d in study.directions]
            xstudy = xbo.create_study(
                self._study_name or study.study_name,
                {"params": [xbo_param(n, space[n]) for n in names]},
                directions=directions,
                # Optuna >= 3.2 names the objectives with set_metric_names.
                objective_names=getattr(study, "metric_names", None),
                constraints=n_constraints,
                url=self._url,
                token=self._token,
                optimizer=self._optimizer,
                load_if_exists=True,
                worker=self._worker,
            )
            self._xbo, self._space = xstudy, dict(space)
        # A continued xbo study may hold this Optuna study's trials already.
        known = {(t.user_attrs.get(STUDY_ATTR), t.user_attrs.get(NUMBER_ATTR)) for t in xstudy.trials}
        for finished in complete:
            if LINK_ATTR not in finished.system_attrs and (study.study_name, finished.number) not in known:
                self._record(study, finished, finished.values)
        return xstudy

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

    def _record(self, study: "optuna.Study", trial: FrozenTrial, values: Optional[Sequence[float]]) -> None:
        """Record a complete trial xbo did not propose, when it suggested
        every parameter of xbo's space from the same distribution."""
        xstudy = self._xbo
        if xstudy is None or not values or not all(math.isfinite(v) for v in values):
            return
        for name, dist in self._space.items():
            if trial.distributions.get(name) != dist:
                return
        params = {name: trial.params[name] for name in self._space}
        cons = self._constraints_of(trial) if xstudy.constraint_names else None
        xstudy.add_trial(params, list(values), user_attrs=_attrs_of(study, trial), constraints=cons)

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
            link = self._links.pop(trial._trial_id, None)
        xstudy = self._xbo
        cons: Optional[List[float]] = None
        if self._constraints_func is not None and state in (TrialState.COMPLETE, TrialState.PRUNED):
            try:
                cons = self._checked_constraints(trial, self._constraints_func(trial))
            except Exception as e:
                # The xbo trial would otherwise stay running until it expires.
                if link is not None and xstudy is not None:
                    xstudy.tell(link[0], state="failed", reason="constraints_func: %s" % e, user_attrs=_attrs_of(study, trial))
                raise
            study._storage.set_trial_system_attr(trial._trial_id, CONSTRAINTS_ATTR, tuple(cons))
        if link is None:
            if state == TrialState.COMPLETE and xstudy is not None:
                self._record(study, trial, vals)
            return
        assert xstudy is not None
        number, proposed = link
        attrs = _attrs_of(study, trial)
        for name, dist in self._space.items():
            if name not in trial.params:
                why = "the Optuna objective did not suggest %s" % name
            elif not _same_value(dist, trial.params[name], proposed[name]):
                why = "Optuna evaluated %s=%r, not xbo's proposal %r" % (name, trial.params[name], proposed[name])
            else:
                continue
            xstudy.tell(number, state="failed", reason=why, user_attrs=attrs)
            if state == TrialState.COMPLETE:
                self._record(study, trial, vals)
            return
        for step, v in sorted(trial.intermediate_values.items()):
            if math.isfinite(v):
                xstudy._report(number, int(step), float(v))
        if state == TrialState.COMPLETE:
            xstudy.tell(number, vals, constraints=cons, user_attrs=attrs)
        elif state == TrialState.PRUNED:
            xstudy.tell(number, vals[0] if vals else None, state="pruned", user_attrs=attrs)
        else:
            xstudy.tell(number, state="failed", reason="the Optuna objective failed (Optuna logs the exception)", user_attrs=attrs)
