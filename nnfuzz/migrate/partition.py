"""OPERA's value-space partitions: each parameter value of a migrated test falls into one subspace, and a
test's parameter setting is the set of (parameter, subspace) items and of their pairs
(docs/migration.md, "Prioritization", states the partitions).

* a value from a limited set (bool, string, None): each value is its own subspace;
* an integer: ``<-1``, ``-1``, ``0``, ``1``, ``>1`` (-1: an inferred dimension, 0: no padding, 1: a boundary);
* a float: ``<0``, ``0``, ``>0``, and NaN, +Inf, -Inf each on their own;
* a list: its length as a rank (``0`` .. ``5``, ``>5``) and each element's subspace, in order;
* a tensor: its dtype, intersected with its rank and the integer subspace of each dimension.
"""
from __future__ import annotations

import itertools
import json
import math
from typing import Any, FrozenSet, List, Tuple

Item = Tuple


def int_class(v: int) -> str:
    return "<-1" if v < -1 else ">1" if v > 1 else str(v)


def float_class(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    return "<0" if v < 0 else "0" if v == 0 else ">0"


def rank_class(n: int) -> str:
    return str(n) if n <= 5 else ">5"


def tensor_class(dtype: str, shape) -> str:
    return f"{dtype}|rank {rank_class(len(shape))}|" + ",".join(int_class(int(d)) for d in shape)


def subspace(value: Any) -> str:
    """The subspace of one parameter value (a JSON value, as meta.json's migration record holds it)."""
    if value is None or isinstance(value, (bool, str)):
        return json.dumps(value)
    if isinstance(value, int):
        return int_class(value)
    if isinstance(value, float):
        return float_class(value)
    if isinstance(value, list):
        return f"list rank {rank_class(len(value))}[" + ",".join(subspace(v) for v in value) + "]"
    if isinstance(value, dict) and "tensor" in value and isinstance(value.get("shape"), list):
        return tensor_class(str(value["tensor"]), value["shape"])
    return json.dumps(value, sort_keys=True, default=str)


def parameters(migration: dict) -> List[Tuple[str, str]]:
    """(parameter, subspace) of a migrated test: its attributes by name, its input tensors by position."""
    params = [(f"attr:{k}", subspace(v)) for k, v in sorted(migration.get("attributes", {}).items())]
    params += [(f"input:{i}", tensor_class(t["dtype"], t["shape"])) for i, t in enumerate(migration.get("inputs", []))]
    return params


def items(params: List[Tuple[str, str]]) -> FrozenSet[Item]:
    """The parameter setting's items: each (parameter, subspace), and each pair of them."""
    singles = [(p,) for p in params]
    pairs = [(a, b) for a, b in itertools.combinations(sorted(params), 2)]
    return frozenset(singles + pairs)
