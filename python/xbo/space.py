"""Search-space parameters: Float, Int and Categorical.

They build the space JSON document the server reads (docs/concepts.md):
``{"objective": ..., "params": [{"name", "type", ...}, ...]}``, or with
several objectives and constraints ``{"objectives": [{"name", "direction"},
...], "constraints": [names], "params": [...]}``. The server
validates the space again; the checks here catch mistakes before any request
and name the parameter.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

Scalar = Union[str, int, float, bool]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float)) and not (isinstance(v, float) and not math.isfinite(v))


class Param:
    """A hyperparameter. Use Float, Int or Categorical."""

    type = ""

    def __init__(self, name: str, condition: Optional[Tuple[str, Any]] = None, default: Any = None) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValueError("a parameter name must be a non-empty string, not %r" % (name,))
        self.name = name
        self.condition = self._condition(condition)
        self.default = default

    def _condition(self, condition: Any) -> Optional[Tuple[str, List[Scalar]]]:
        if condition is None:
            return None
        if not isinstance(condition, (tuple, list)) or len(condition) != 2:
            raise ValueError("parameter %r: condition must be a pair (parent, values), not %r" % (self.name, condition))
        parent, values = condition
        if not isinstance(parent, str) or not parent:
            raise ValueError("parameter %r: the condition's parent must be a parameter name, not %r" % (self.name, parent))
        if parent == self.name:
            raise ValueError("parameter %r: a parameter cannot be conditioned on itself" % self.name)
        if isinstance(values, (list, tuple, set, frozenset)):
            values = list(values)
        else:
            values = [values]
        if not values:
            raise ValueError("parameter %r: the condition on %r lists no values" % (self.name, parent))
        for v in values:
            if not _is_scalar(v):
                raise ValueError("parameter %r: condition value %r is not a string, number or boolean" % (self.name, v))
        return parent, values

    def to_dict(self) -> Dict[str, Any]:
        """The parameter's entry in the space JSON document."""
        d: Dict[str, Any] = {"name": self.name, "type": self.type}
        d.update(self._fields())
        if self.condition is not None:
            d["condition"] = {"parent": self.condition[0], "values": list(self.condition[1])}
        if self.default is not None:
            d["default"] = self.default
        return d

    def _fields(self) -> Dict[str, Any]:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join("%s=%r" % (k, v) for k, v in self.to_dict().items() if k != "type")
        return "%s(%s)" % (type(self).__name__, args)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))


# How far (in steps) a range may be off a whole number of steps: decimal
# steps are not exact in binary ((0.3 - 0) / 0.1 is 2.9999999999999996).
# The server and Optuna use the same tolerance.
_STEP_TOLERANCE = 1e-8


class _Numeric(Param):
    def __init__(self, name: str, low: Any, high: Any, log: bool, condition: Any, default: Any, step: Any = None) -> None:
        super().__init__(name, condition, default)
        for what, v in (("low", low), ("high", high)):
            if not _is_number(v) or not math.isfinite(v):
                raise ValueError("parameter %r: %s must be a finite number, not %r" % (name, what, v))
        if not low < high:
            raise ValueError("parameter %r: low %r must be below high %r" % (name, low, high))
        if not isinstance(log, bool):
            raise ValueError("parameter %r: log must be True or False, not %r" % (name, log))
        if log and low <= 0:
            raise ValueError("parameter %r: a log scale needs low > 0, not %r" % (name, low))
        self.low, self.high, self.log = low, high, log
        self.step = self._step(step)
        if default is not None:
            if not _is_number(default) or not low <= default <= high:
                raise ValueError("parameter %r: default %r is not a number in [%r, %r]" % (name, default, low, high))

    def _step(self, step: Any) -> Optional[Any]:
        """The step of a stepped range (None for none), checked as the
        server checks it: positive, not with log, dividing high - low."""
        if step is None:
            return None
        if not _is_number(step) or not math.isfinite(step) or step <= 0:
            raise ValueError("parameter %r: step must be a positive finite number, not %r" % (self.name, step))
        if self.log:
            raise ValueError("parameter %r: step %r cannot be combined with log=True (as in Optuna)" % (self.name, step))
        m = (self.high - self.low) / step
        if abs(m - round(m)) > _STEP_TOLERANCE * max(1.0, abs(m) / 1e7):
            raise ValueError(
                "parameter %r: (high - low) / step = (%r - %r) / %r = %r is not a whole number; "
                "high must be low plus a whole number of steps" % (self.name, self.high, self.low, step, m)
            )
        return step

    def _fields(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"low": self.low, "high": self.high}
        if self.log:
            d["log"] = True
        if self.step is not None:
            d["step"] = self.step
        return d


class Float(_Numeric):
    """A real-valued hyperparameter in [low, high], on a log scale if log,
    or with ``step`` only the values low, low + step, ..., high."""

    type = "float"

    def __init__(
        self,
        name: str,
        low: float,
        high: float,
        log: bool = False,
        *,
        step: Optional[float] = None,
        condition: Optional[Tuple[str, Any]] = None,
        default: Optional[float] = None,
    ) -> None:
        super().__init__(name, low, high, log, condition, default, step)



class Int(_Numeric):
    """An integer hyperparameter in [low, high] (both included); with
    ``step`` only low, low + step, ..., high."""

    type = "int"

    def __init__(
        self,
        name: str,
        low: int,
        high: int,
        log: bool = False,
        *,
        step: Optional[int] = None,
        condition: Optional[Tuple[str, Any]] = None,
        default: Optional[int] = None,
    ) -> None:
        for what, v in (("low", low), ("high", high), ("default", default), ("step", step)):
            if v is not None and not (isinstance(v, int) and not isinstance(v, bool)):
                raise ValueError("parameter %r: %s must be an integer, not %r" % (name, what, v))
        # A step of 1 is every integer, which goes with log as well.
        super().__init__(name, low, high, log, condition, default, None if step == 1 else step)



class Categorical(Param):
    """A hyperparameter taking one of ``choices`` (strings, numbers or booleans)."""

    type = "categorical"

    def __init__(
        self,
        name: str,
        choices: Sequence[Scalar],
        *,
        condition: Optional[Tuple[str, Any]] = None,
        default: Optional[Scalar] = None,
    ) -> None:
        super().__init__(name, condition, default)
        if isinstance(choices, (str, bytes)) or not isinstance(choices, Iterable):
            raise ValueError("parameter %r: choices must be a list, not %r" % (name, choices))
        choices = list(choices)
        if not choices:
            raise ValueError("parameter %r: choices are empty" % name)
        seen = set()
        for c in choices:
            if not _is_scalar(c):
                raise ValueError("parameter %r: choice %r is not a string, a finite number or a boolean" % (name, c))
            key = (type(c).__name__, c)
            if key in seen:
                raise ValueError("parameter %r: choice %r is listed twice" % (name, c))
            seen.add(key)
        self.choices = choices
        if default is not None and not any(type(default) is type(c) and default == c for c in choices):
            raise ValueError("parameter %r: default %r is not one of the choices %r" % (name, default, choices))

    def _fields(self) -> Dict[str, Any]:
        return {"choices": list(self.choices)}



DIRECTIONS = ("minimize", "maximize")


def _check_direction(d: Any) -> None:
    if d not in DIRECTIONS:
        raise ValueError('direction must be "minimize" or "maximize", not %r' % (d,))


def _name_list(what: str, names: Any) -> List[str]:
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise ValueError("%s must be a list of names, not %r" % (what, names))
    names = list(names)
    for n in names:
        if not isinstance(n, str) or not n.strip():
            raise ValueError("%s: %r is not a non-empty string" % (what, n))
    if len(set(names)) < len(names):
        raise ValueError("%s: %r repeats a name" % (what, names))
    return names


def _objectives_of_args(direction: Any, directions: Any, objective_names: Any) -> Optional[List[Dict[str, Any]]]:
    """The objectives that create_study's arguments declare, as space
    entries ({"direction"} or {"name", "direction"}); None when the
    arguments say nothing."""
    if direction is not None and directions is not None:
        raise ValueError("give direction (one objective) or directions (one per objective), not both")
    dirs: Optional[List[Any]] = None
    if directions is not None:
        if isinstance(directions, (str, bytes)) or not isinstance(directions, Iterable):
            raise ValueError('directions must be a list such as ["minimize", "maximize"], not %r' % (directions,))
        dirs = list(directions)
        if not dirs:
            raise ValueError("directions is empty; a study has at least one objective")
    elif direction is not None:
        dirs = [direction]
    for d in dirs or []:
        _check_direction(d)
    names = None
    if objective_names is not None:
        names = _name_list("objective_names", objective_names)
        if dirs is None:
            dirs = ["minimize"] * len(names)
        elif len(names) != len(dirs):
            raise ValueError("%d objective names for %d directions" % (len(names), len(dirs)))
    if dirs is None:
        return None
    if names is None:
        return [{"direction": d} for d in dirs]
    return [{"name": n, "direction": d} for n, d in zip(names, dirs)]


def _constraints_of_arg(constraints: Any) -> Optional[List[str]]:
    """Constraint names from create_study's constraints argument: a count
    (named constraint_0, constraint_1, ...) or a list of names."""
    if constraints is None:
        return None
    if isinstance(constraints, int) and not isinstance(constraints, bool):
        if constraints < 0:
            raise ValueError("constraints must be a count >= 0 or a list of names, not %r" % (constraints,))
        return ["constraint_%d" % j for j in range(constraints)]
    return _name_list("constraints", constraints)


def objectives_of(doc: Dict[str, Any]) -> List[Tuple[Optional[str], str]]:
    """(name or None, direction) of each objective a space document
    declares: its "objectives" list, else its single "objective"."""
    objs = doc.get("objectives")
    if isinstance(objs, list) and objs:
        return [(o.get("name") or None, o.get("direction") or "minimize") for o in objs if isinstance(o, dict)]
    return [(None, doc.get("objective") or "minimize")]


def _put_objectives(doc: Dict[str, Any], objs: List[Dict[str, Any]]) -> None:
    # One unnamed objective is written as "objective", which every server
    # version reads; named or several objectives need the list.
    if len(objs) == 1 and "name" not in objs[0]:
        doc["objective"] = objs[0]["direction"]
    else:
        doc["objectives"] = objs


def _same_objectives(given: List[Dict[str, Any]], declared: List[Tuple[Optional[str], str]]) -> bool:
    if [o["direction"] for o in given] != [d for _, d in declared]:
        return False
    return all("name" not in o or o["name"] == n for o, (n, _) in zip(given, declared))


def space_document(
    space: Any,
    direction: Optional[str],
    directions: Optional[Sequence[str]] = None,
    objective_names: Optional[Sequence[str]] = None,
    constraints: Any = None,
) -> Dict[str, Any]:
    """The space JSON document for a list of parameters or a space dict.

    direction (one objective) or directions (several), with optional
    objective_names, declare the objectives; constraints is a count or a
    list of constraint names. They override nothing silently: when a space
    dict declares them too, both must agree.
    """
    objs = _objectives_of_args(direction, directions, objective_names)
    cons = _constraints_of_arg(constraints)
    if isinstance(space, dict):
        doc = dict(space)
        if not isinstance(doc.get("params"), list) or not doc["params"]:
            raise ValueError('the space dict needs a non-empty "params" list')
        declared = "objectives" in doc or doc.get("objective") is not None
        if objs is not None and declared:
            if not _same_objectives(objs, objectives_of(doc)):
                if len(objs) == 1 and "objectives" not in doc:
                    raise ValueError("direction %r disagrees with the space's objective %r" % (objs[0]["direction"], doc.get("objective")))
                raise ValueError("the objectives given %r disagree with the space's %r" % (objs, doc.get("objectives", doc.get("objective"))))
        elif objs is not None:
            _put_objectives(doc, objs)
        elif not declared:
            doc["objective"] = "minimize"
        if cons is not None and "constraints" in doc:
            if list(doc["constraints"] or []) != cons:
                raise ValueError("the constraints given %r disagree with the space's %r" % (cons, doc["constraints"]))
        elif cons:
            doc["constraints"] = cons
        return doc
    if isinstance(space, (str, bytes)) or not isinstance(space, Iterable):
        raise TypeError("space must be a dict (the space JSON) or a list of xbo.Float/Int/Categorical, not %s" % type(space).__name__)
    params = list(space)
    if not params:
        raise ValueError("the space has no parameters")
    names = set()
    for p in params:
        if not isinstance(p, Param):
            raise TypeError("space entries must be xbo.Float, xbo.Int or xbo.Categorical, not %r" % (p,))
        if p.name in names:
            raise ValueError("parameter %r is declared twice" % p.name)
        names.add(p.name)
    doc: Dict[str, Any] = {}
    _put_objectives(doc, objs or [{"direction": "minimize"}])
    if cons:
        doc["constraints"] = cons
    doc["params"] = [p.to_dict() for p in params]
    return doc


def param_types(doc: Dict[str, Any]) -> Dict[str, str]:
    """Parameter name -> type ("float", "int", "categorical") of a space document."""
    out = {}
    for p in doc.get("params") or []:
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            out[p["name"]] = str(p.get("type", ""))
    return out


def typed_params(params: Dict[str, Any], types: Dict[str, str]) -> Dict[str, Any]:
    """Params with the Python types their declaration promises: float for
    float parameters, int for int parameters; categorical values as the
    server sent them (strings, numbers or booleans keep their JSON type)."""
    out = {}
    for name, v in params.items():
        kind = types.get(name)
        if kind == "int" and isinstance(v, float) and v.is_integer():
            v = int(v)
        elif kind == "float" and _is_number(v):
            v = float(v)
        out[name] = v
    return out
