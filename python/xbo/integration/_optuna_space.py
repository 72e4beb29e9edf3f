"""The xbo space of a define-by-run Optuna study, inferred from its trials.

Optuna declares no space: each trial suggests the parameters its code path
reaches. The bridge keeps one xbo study whose space is the union of the
parameters the finished trials suggested, each with a condition inferred
from which trials suggested it:

- a parameter every (complete or pruned) trial suggested is unconditional;
- one that only some trials suggested is conditional on the first
  categorical parameter (in order of first appearance) that explains it:
  every trial that suggested it has that categorical, and exactly the trials
  whose value of it lies in the set V seen with the parameter suggested it.
  The condition is then ``(categorical, V)``: sklearn_simple's ``svc_c``
  becomes conditional on ``classifier in ["SVC"]``;
- a parameter no categorical explains, one whose distribution changes
  between trials (a dynamic range), one whose single value needs no
  sampling, and one xbo's space cannot hold (choices such as None) is left
  out, and Optuna's independent sampler samples it.

Failed trials are left out of the inference: a trial that failed half-way
suggested only some of its parameters. The inference is a pure function of
the trials, so a resumed study infers the same space.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from optuna.distributions import BaseDistribution, CategoricalDistribution

# The reason infer_space gives for a parameter that takes a single value
# (Optuna then needs no sampler for it).
SINGLE_VALUE = "it takes a single value"

# (name, distribution, condition or None); a condition is (parent, values).
Entry = Tuple[str, BaseDistribution, Optional[Tuple[str, List[Any]]]]


def _same_choice(a: Any, b: Any) -> bool:
    # 1 == True in Python, but they are distinct choices (and JSON values).
    return type(a) is type(b) and a == b


def _in(values: Sequence[Any], v: Any) -> bool:
    return any(_same_choice(v, w) for w in values)


def infer_space(
    trials: Sequence[Tuple[Dict[str, Any], Dict[str, BaseDistribution]]],
    expressible: Callable[[str, BaseDistribution], bool],
) -> Tuple[List[Entry], Dict[str, str]]:
    """The xbo space entries of trials, given as (params, distributions)
    pairs of complete and pruned trials in number order, and the parameters
    left out with the reason. expressible(name, dist) says whether xbo's
    space can hold dist."""
    order: List[str] = []
    dists: Dict[str, BaseDistribution] = {}
    left_out: Dict[str, str] = {}
    for _, distributions in trials:
        for name, dist in distributions.items():
            if name not in dists:
                order.append(name)
                dists[name] = dist
            elif dists[name] != dist and name not in left_out:
                left_out[name] = "its distribution changes between trials (%s, then %s)" % (dists[name], dist)
    for name in order:
        if name in left_out:
            continue
        if dists[name].single():
            left_out[name] = SINGLE_VALUE
        elif not expressible(name, dists[name]):
            left_out[name] = "xbo's space cannot hold %s" % (dists[name],)
    entries: List[Entry] = []
    for name in order:
        if name in left_out:
            continue
        having = [params for params, _ in trials if name in params]
        condition = None
        if len(having) < len(trials):
            condition = _explaining_condition(name, having, trials, [e for e in entries if isinstance(e[1], CategoricalDistribution)])
            if condition is None:
                left_out[name] = "only some trials suggest it and no categorical choice before it says which"
                continue
        entries.append((name, dists[name], condition))
    return entries, left_out


def _explaining_condition(
    name: str,
    having: List[Dict[str, Any]],
    trials: Sequence[Tuple[Dict[str, Any], Dict[str, BaseDistribution]]],
    categoricals: List[Entry],
) -> Optional[Tuple[str, List[Any]]]:
    for parent, _, _ in categoricals:
        if not all(parent in params for params in having):
            continue
        values: List[Any] = []
        for params in having:
            if not _in(values, params[parent]):
                values.append(params[parent])
        # Exactly the trials with one of these values suggested name.
        if all((name in params) == (parent in params and _in(values, params[parent])) for params, _ in trials):
            return parent, values
    return None


def fits(entries: Sequence[Entry], params: Dict[str, Any]) -> bool:
    """Whether a trial's params are a configuration of the space: every
    active parameter present and inside its distribution, every inactive
    one absent. Entries come parents first (a parent appears before the
    parameters conditional on it)."""
    active: Dict[str, bool] = {}
    for name, dist, condition in entries:
        on = condition is None or (active.get(condition[0], False) and _in(condition[1], params.get(condition[0])))
        active[name] = on
        if on != (name in params):
            return False
        if on and not dist._contains(dist.to_internal_repr(params[name])):
            return False
    return True
