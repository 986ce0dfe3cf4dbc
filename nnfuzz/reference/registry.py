"""The registry of numpy evals, one per abstract op class (lookup walks the MRO, like lowerings).

An eval is ``fn(op, *arrays) -> ndarray | list[ndarray]`` for a concrete op; it may return any
dtype, ``eval_op`` casts each result to the dtype the op's ``type_transfer`` declares (floats are
computed in float64 and rounded once; integers wrap).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

import numpy as np

from nnfuzz.abstract.optable import OpTable
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import OpDefinitionError
from nnfuzz.ops import load_aspect

EVALS = OpTable("numpy eval")
evaluates = EVALS.register


def eval_for(cls) -> Optional[Callable]:
    _load()
    return EVALS.lookup(cls)


def eval_op(op, *arrays: np.ndarray) -> List[np.ndarray]:
    """The op's outputs on ``arrays``, in the dtypes and shapes its type_transfer declares."""
    fn = eval_for(type(op))
    if fn is None:
        raise OpDefinitionError(f"operator {op.name} has no numpy reference eval; register one with "
                                f"@evaluates({op.name}) from nnfuzz.reference.registry")
    ins = [AbsTensor(list(a.shape), _dtype_of(a)) for a in arrays]
    want = op.checked_type_transfer(ins)
    with np.errstate(all="ignore"):
        out = fn(op, *arrays)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != len(want):
        raise OpDefinitionError(f"numpy eval of {op!r} returned {len(outs)} outputs, type_transfer "
                                f"declares {len(want)}")
    res = []
    for k, (o, w) in enumerate(zip(outs, want)):
        o = cast(np.asarray(o), w.dtype)
        if list(o.shape) != [int(d) for d in w.shape]:
            raise OpDefinitionError(f"numpy eval of {op!r}: output {k} has shape {list(o.shape)}, "
                                    f"type_transfer says {w}")
        res.append(o)
    return res


def cast(a: np.ndarray, dtype) -> np.ndarray:
    """``a`` in ``dtype`` (a DType): floats rounded once, float-to-int truncated then wrapped,
    integers wrapped, anything to bool non-zero."""
    target = dtype.numpy()
    if a.dtype == target:
        return a
    if dtype.is_int and a.dtype.kind == "f":
        return np.trunc(a).astype(np.int64).astype(target)
    return a.astype(target)


def _dtype_of(a: np.ndarray):
    from nnfuzz.abstract.dtype import DType

    return DType.parse(str(a.dtype))


def evaluate(gir, weights: Dict[str, np.ndarray], inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Every var of ``gir`` computed by the numpy evals, by name."""
    env = {**{k: np.asarray(v) for k, v in inputs.items()}, **{k: np.asarray(v) for k, v in weights.items()}}
    for inst in gir.insts:
        outs = eval_op(inst.op, *[env[v] for v in inst.inputs])
        env.update(zip(inst.outputs, outs))
    return env


def _load() -> None:
    load_aspect("numpy")
