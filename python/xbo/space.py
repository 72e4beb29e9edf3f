"""Search-space parameters: Float, Int and Categorical.

They build the space JSON document the server reads (README.md, "Concepts"):
``{"objective": ..., "params": [{"name", "type", ...}, ...]}``. The server
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


class _Numeric(Param):
    def __init__(self, name: str, low: Any, high: Any, log: bool, condition: Any, default: Any) -> None:
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
        if default is not None:
            if not _is_number(default) or not low <= default <= high:
                raise ValueError("parameter %r: default %r is not a number in [%r, %r]" % (name, default, low, high))

    def _fields(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"low": self.low, "high": self.high}
        if self.log:
            d["log"] = True
        return d


class Float(_Numeric):
    """A real-valued hyperparameter in [low, high], on a log scale if log."""

    type = "float"

    def __init__(
        self,
        name: str,
        low: float,
        high: float,
        log: bool = False,
        *,
        condition: Optional[Tuple[str, Any]] = None,
        default: Optional[float] = None,
    ) -> None:
        super().__init__(name, low, high, log, condition, default)



class Int(_Numeric):
    """An integer hyperparameter in [low, high] (both included)."""

    type = "int"

    def __init__(
        self,
        name: str,
        low: int,
        high: int,
        log: bool = False,
        *,
        condition: Optional[Tuple[str, Any]] = None,
        default: Optional[int] = None,
    ) -> None:
        for what, v in (("low", low), ("high", high), ("default", default)):
            if v is not None and not (isinstance(v, int) and not isinstance(v, bool)):
                raise ValueError("parameter %r: %s must be an integer, not %r" % (name, what, v))
        super().__init__(name, low, high, log, condition, default)



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



def space_document(space: Any, direction: Optional[str]) -> Dict[str, Any]:
    """The space JSON document for a list of parameters or a space dict.

    direction overrides nothing silently: when both it and the dict's
    "objective" are given they must agree.
    """
    if direction is not None and direction not in ("minimize", "maximize"):
        raise ValueError('direction must be "minimize" or "maximize", not %r' % (direction,))
    if isinstance(space, dict):
        doc = dict(space)
        if not isinstance(doc.get("params"), list) or not doc["params"]:
            raise ValueError('the space dict needs a non-empty "params" list')
        given = doc.get("objective")
        if given is not None and direction is not None and given != direction:
            raise ValueError("direction %r disagrees with the space's objective %r" % (direction, given))
        doc["objective"] = given or direction or "minimize"
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
    return {"objective": direction or "minimize", "params": [p.to_dict() for p in params]}


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
