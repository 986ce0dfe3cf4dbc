"""The registry of TensorFlow lowerings, one function per abstract op class.

A lowering is ``fn(op, *tensors) -> tensor | list[tensor]`` for a concrete op, on tensors in the
GraphIR's own layout (channels first, as in the abstract ops); a lowering that needs TF's channels-last
kernels transposes around them itself. Register with ``@tf_lowers(OpClass, ...)``; lookup walks the
MRO. An op class with no TF lowering is not offered to TF-based systems. Lowering modules must not
touch ``tf`` attributes at import time (use ``nnfuzz.materialize.tensorflow.lazy.tf`` inside functions).
"""
from __future__ import annotations

from typing import Callable, Optional

from nnfuzz.abstract.optable import OpTable
from nnfuzz.ops import load_aspect

TF_LOWERINGS = OpTable("TensorFlow lowering")
tf_lowers = TF_LOWERINGS.register

# Built-in ops TF cannot express faithfully: op name -> why (the lowering tests check this list).
NO_TF_LOWERING: dict = {}


def no_tf_lowering(op_class, reason: str) -> None:
    """Record that ``op_class`` has deliberately no TF lowering, and why."""
    NO_TF_LOWERING[op_class.name] = reason


def tf_lower_each(table: dict) -> None:
    """Register ``{OpClass: fn(x)}`` pairs whose lowering ignores the op's attributes. ``fn`` may be a
    string naming a TF function (``"math.log"``), looked up when the op first runs."""
    for cls, fn in table.items():
        TF_LOWERINGS[cls] = _by_name(fn) if isinstance(fn, str) else (lambda f: (lambda op, *xs: f(*xs)))(fn)


def _by_name(path: str) -> Callable:
    def run(op, *xs):
        from nnfuzz.materialize.tensorflow.lazy import tf

        fn = tf
        for part in path.split("."):
            fn = getattr(fn, part)
        return fn(*xs)

    run.__name__ = path
    return run


def tf_lowering_for(cls) -> Optional[Callable]:
    _load_builtin()
    return TF_LOWERINGS.lookup(cls)


def has_tf_lowering(cls) -> bool:
    return tf_lowering_for(cls) is not None


def graph_tf_lowerings(gir) -> list:
    """The TF lowering of each instruction of ``gir``, in order; an op without one is an error."""
    _load_builtin()
    return TF_LOWERINGS.for_graph(gir, "TensorFlow lowering", "tf_lowers")


def _load_builtin() -> None:
    load_aspect("tf")
