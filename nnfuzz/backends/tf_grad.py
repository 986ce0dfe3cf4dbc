"""The gradient test on a TF system (``oracle=grad``; xla-cpu/xla-gpu against tf-cpu, TF eager): the
payload's GradSpec (materialize/portable.py) says which outputs are differentiated with respect to which
inputs and weights. One step computes the outputs and, under a ``tf.GradientTape``, the gradients of the
differentiated outputs with the upstream gradients as ``output_gradients``; XLA runs the step as a
``tf.function(jit_compile=True)`` (compiled on the first call, on zeros: staged "compile"), TF eager op by
op. A value no differentiated output reaches gets zeros (``UnconnectedGradients.ZERO``), as in
backends/torch_grad.py; the float weights (non-trainable variables) are watched explicitly.
"""
from __future__ import annotations

import dataclasses
from typing import Dict

import numpy as np


@dataclasses.dataclass
class TfGradStep:
    graph: object     # materialize/tensorflow/module.py TFGraph
    spec: object      # materialize/torch/grad.py GradSpec
    fn: object        # the step: (*inputs, *upstreams) -> outputs + gradients (tf.function or plain)


def grad_step(graph, spec, jit_compile=None, entering=None) -> TfGradStep:
    """The step of ``graph`` for ``spec``: plain (TF eager) with ``jit_compile`` None, else a tf.function.
    ``entering`` (TF eager's Backend.entering; only for the plain step: a tf.function is traced once and
    runs both parts as one) is told when the step enters its forward and its backward (the tape's
    gradient), so a crash names the part."""
    from nnfuzz.materialize.tensorflow.lazy import tf
    from nnfuzz.materialize.tensorflow.module import _tf_dtype

    gir = graph.gir
    n = len(gir.inputs)

    def step(*args):
        xs, ups = list(args[:n]), list(args[n:])
        sources = [xs[gir.inputs.index(w)] if w in gir.inputs else graph.weights[w] for w in spec.wrt]
        if entering is not None:
            entering("forward")
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            for s in sources:
                tape.watch(s)
            outs = graph.compute(*xs)
        targets = [outs[gir.outputs.index(o)] for o in spec.outputs]
        if entering is not None:
            entering("backward")
        grads = tape.gradient(targets, sources, output_gradients=ups,
                              unconnected_gradients=tf.UnconnectedGradients.ZERO)
        # a gather's gradient is sparse (IndexedSlices: values at the gathered rows); dense, as torch gives it
        return list(outs) + [tf.convert_to_tensor(g) for g in grads]

    if jit_compile is None:
        return TfGradStep(graph, spec, step)
    sig = graph.input_signature + [tf.TensorSpec([int(d) for d in gir.vars[o].shape], _tf_dtype(gir.vars[o].dtype))
                                   for o in spec.outputs]
    return TfGradStep(graph, spec, tf.function(step, input_signature=sig, jit_compile=jit_compile, autograph=False))


def run_step(s: TfGradStep, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """The outputs and ``grad:<name>`` gradients of the step on ``inputs`` (``upstream:<output>`` included)."""
    from nnfuzz.materialize.tensorflow.lazy import tf
    from nnfuzz.materialize.tensorflow.module import _tf_dtype
    from nnfuzz.materialize.torch.grad import grad_name, upstream_name

    gir = s.graph.gir
    ups = [tf.constant(np.asarray(inputs[upstream_name(o)]), dtype=_tf_dtype(gir.vars[o].dtype)) for o in s.spec.outputs]
    res = s.fn(*s.graph.feed(inputs), *ups)
    values = s.graph.outputs(res[:len(gir.outputs)])
    values.update({grad_name(w): np.asarray(g.numpy()) for w, g in zip(s.spec.wrt, res[len(gir.outputs):])})
    return values


def zeros_with_upstream(gir, spec) -> Dict[str, np.ndarray]:
    """Inputs of zeros and upstream gradients of ones: the first call that makes XLA compile the step."""
    from nnfuzz.materialize.torch.grad import upstream_name

    values = {i: np.zeros([int(d) for d in gir.vars[i].shape], gir.vars[i].dtype.numpy()) for i in gir.inputs}
    values.update({upstream_name(o): np.ones([int(d) for d in gir.vars[o].shape], gir.vars[o].dtype.numpy())
                   for o in spec.outputs})
    return values
