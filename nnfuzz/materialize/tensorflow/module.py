"""GraphIR + weights -> a ``tf.Module`` whose ``tf.function`` computes the graph.

Float weights are (non-trainable) ``tf.Variable``s, as a trained model's would be, so XLA and the TFLite
converter see variables to freeze rather than constants folded in advance; other weights are constants.
"""
from __future__ import annotations

from typing import Dict, List

import numpy as np

from nnfuzz.errors import OpDefinitionError
from nnfuzz.gir import GraphIR
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import graph_tf_lowerings


def _tf_dtype(dtype):
    return getattr(tf, dtype.value)


class TFGraph:
    """The graph as a TF computation. ``function(jit_compile=...)`` gives the ``tf.function``; ``eager``
    runs op by op (the TF reference); ``module()`` the ``tf.Module`` a SavedModel is made of."""

    def __init__(self, gir: GraphIR, weights: Dict[str, np.ndarray]):
        self.gir = gir
        self._fns = graph_tf_lowerings(gir)
        self.weights = {}
        for name in gir.weights:
            dt = _tf_dtype(gir.vars[name].dtype)
            value = np.asarray(weights[name])
            if gir.vars[name].dtype.is_float:
                self.weights[name] = tf.Variable(tf.constant(value, dtype=dt), trainable=False, name=f"w_{name}")
            else:
                self.weights[name] = tf.constant(value, dtype=dt)

    @property
    def input_signature(self) -> list:
        """One TensorSpec per input: its dims, with ``None`` on the axes a dynamic graph's family makes
        symbolic (docs/dynamic-shapes.md), so the function is traced once for every shape of the family."""
        return [tf.TensorSpec(self.signature_dims(i), _tf_dtype(self.gir.vars[i].dtype), name=i)
                for i in self.gir.inputs]

    def signature_dims(self, name: str) -> list:
        """Input ``name``'s dims in the signature: ``None`` where the family has a symbol, else the size."""
        syms = self.gir.family.dims.get(name) if self.gir.family is not None else None
        return [None if syms and syms[a] is not None else int(d) for a, d in enumerate(self.gir.vars[name].shape)]

    def zeros(self) -> list:
        """Zeros of every input at the graph's own (shape 0's) dims: a first call's arguments."""
        return [tf.zeros([int(d) for d in self.gir.vars[i].shape], _tf_dtype(self.gir.vars[i].dtype))
                for i in self.gir.inputs]

    def compute(self, *inputs) -> List:
        env = dict(zip(self.gir.inputs, inputs))
        env.update(self.weights)
        for fn, inst in zip(self._fns, self.gir.insts):
            out = fn(inst.op, *[env[v] for v in inst.inputs])
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(outs) != len(inst.outputs):
                raise OpDefinitionError(f"{inst.op!r}: TF lowering returned {len(outs)} outputs, type_transfer "
                                        f"declares {len(inst.outputs)}")
            env.update(zip(inst.outputs, outs))
        return [tf.identity(env[v], name=v) for v in self.gir.outputs]

    def function(self, jit_compile: bool = False):
        return tf.function(lambda *xs: self.compute(*xs), input_signature=self.input_signature,
                           jit_compile=jit_compile, autograph=False)

    def feed(self, inputs: Dict[str, np.ndarray]) -> list:
        return [tf.constant(np.asarray(inputs[i]), dtype=_tf_dtype(self.gir.vars[i].dtype)) for i in self.gir.inputs]

    def outputs(self, results) -> Dict[str, np.ndarray]:
        return {name: np.asarray(r.numpy()) for name, r in zip(self.gir.outputs, results)}

    def eager(self, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """TF eager, op by op: the reference of the TF systems."""
        return self.outputs(self.compute(*self.feed(inputs)))

    def module(self):
        """A ``tf.Module`` with the weights as variables and ``__call__`` as the signature to save."""
        m = tf.Module()
        m.weights = [w for w in self.weights.values() if isinstance(w, tf.Variable)]
        m.__call__ = self.function()
        return m

    def save(self, path) -> None:
        """Write a SavedModel folder at ``path`` (signature ``serving_default``)."""
        m = self.module()
        tf.saved_model.save(m, str(path), signatures=m.__call__.get_concrete_function())


def check_tf_outputs(gir: GraphIR, outputs: Dict[str, np.ndarray]) -> None:
    """Each TF output has the shape and dtype type_transfer declares (names the output on mismatch)."""
    from nnfuzz.abstract.dtype import DType

    for name in gir.outputs:
        want, got = gir.vars[name], outputs[name]
        if list(got.shape) != [int(d) for d in want.shape] or DType.parse(got.dtype) != want.dtype:
            raise OpDefinitionError(f"TF model output {name}: type_transfer says {want}, TF produced "
                                    f"{got.dtype}{list(got.shape)}")


def saved_model_writer(gir_text: str, weights: Dict[str, np.ndarray]):
    """``fn(path)`` writing the graph as a SavedModel folder (a bug folder's ``model/``)."""
    def write(path) -> None:
        TFGraph(GraphIR.loads(gir_text), weights).save(path)

    return write
