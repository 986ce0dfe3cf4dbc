"""The ``tf`` dynamic form (docs/dynamic-shapes.md): a dynamic graph's TF function, traced once with
``None`` on the family's symbolic axes, must compute at every kept shape what TF eager computes on that
shape's static graph, bit for bit. A lowering that reads a symbolic dim as an int fails the trace; one that
takes a shape-dependent branch or writes a dim into a constant gives another result at some shape; either
way the form stays static, with the reason.
"""
from __future__ import annotations

from typing import Dict, List

import numpy as np

from nnfuzz.gir import GraphIR


def tf_form(gir: GraphIR, weights: Dict[str, np.ndarray], inputs: List[Dict[str, np.ndarray]]) -> str:
    """"dynamic" when ``gir``'s (with its family) None-dims tf.function gives TF eager's outputs of
    ``gir.at(k)`` on ``inputs[k]`` (the kept shapes, in the family's order), else why not."""
    from nnfuzz.materialize.tensorflow.lazy import tf
    from nnfuzz.materialize.tensorflow.module import TFGraph

    _producer_settings(tf)
    graph = TFGraph(gir, weights)
    fn = graph.function()
    try:
        fn.get_concrete_function()
    except Exception as e:  # noqa: BLE001 - a lowering that reads a symbolic dim: the form is static, said so
        return f"the TF function with None dims does not trace: {type(e).__name__}: {str(e)[:200]}"
    for k, feed in enumerate(inputs):
        shape = {i: list(np.shape(feed[i])) for i in gir.inputs}
        with tf.device("/CPU:0"):
            try:
                want = TFGraph(gir.at(k), weights).eager(feed)
            except Exception as e:  # noqa: BLE001 - TF eager fails at this shape: its static test says so
                return f"TF eager fails at {shape}: {type(e).__name__}: {str(e)[:200]}"
            try:
                got = graph.outputs(fn(*graph.feed(feed)))
            except Exception as e:  # noqa: BLE001 - the traced graph fails at this shape: static, said so
                return f"the TF function with None dims fails at {shape}: {type(e).__name__}: {str(e)[:200]}"
        for name in gir.outputs:
            a, b = got[name], want[name]
            if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                return f"the TF function with None dims computes {name} differently from TF eager at {shape}"
    return "dynamic"


def _producer_settings(tf) -> None:
    """The check runs in the producing process: one compute thread, and no GPU (TF would reserve its memory
    for the system under test's process)."""
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        tf.config.set_visible_devices([], "GPU")
    except RuntimeError:  # TF refuses once its runtime started in this process (a test that ran TF first)
        pass
