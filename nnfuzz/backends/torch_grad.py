"""The gradient test on a torch system (``oracle=grad``; inductor-cpu, inductor-gpu): the payload's GradSpec
(materialize/portable.py) says which outputs are differentiated with respect to which inputs and weights.

compile() builds the module with those weights requiring gradients, compiles it with the backend's
``compile_grad_module`` and makes the first call with a backward (on zeros, upstream ones): torch.compile
traces the forward on the first call and AOTAutograd compiles the backward graph on the first backward, so
both are staged "compile". run() calls the compiled module on the real inputs with the upstream gradients
(the ``upstream:<output>`` inputs) and returns the outputs and the ``grad:<name>`` gradients; a value no
differentiated output reaches in this run gets zeros (the reference never lists such a value). Each call
tells the worker when it enters the forward and the backward (``Backend.entering``): a crash is signed by
the part it happened in.
"""
from __future__ import annotations

import dataclasses
from typing import Dict

import numpy as np


@dataclasses.dataclass
class GradCompiled:
    fn: object        # the compiled module
    gir: object
    spec: object      # materialize/torch/grad.py GradSpec
    module: object    # the module itself (its weights are the leaves of the weight gradients)


def compile_grad(backend, gir, weights, spec) -> GradCompiled:
    """Compile ``gir`` for a gradient test on ``backend`` (an inductor backend: its torch device, its
    ``compile_grad_module``) and run it once, forward and backward, so that both graphs are compiled."""
    import torch

    from nnfuzz.materialize.torch.module import GraphModule

    torch._dynamo.reset()
    module = GraphModule(gir, weights).eval().to(backend.torch_device)
    for name in spec.wrt:
        if name in gir.weights:
            getattr(module, name).requires_grad_(True)
    compiled = GradCompiled(backend.compile_grad_module(module), gir, spec, module)
    zeros = {i: np.zeros([int(d) for d in gir.vars[i].shape], gir.vars[i].dtype.numpy()) for i in gir.inputs}
    for name in spec.outputs:
        v = gir.vars[name]
        zeros[f"upstream:{name}"] = np.ones([int(d) for d in v.shape], v.dtype.numpy())
    _call(backend, compiled, zeros)  # traces and compiles the forward, then the backward
    return compiled


def run_grad(backend, compiled: GradCompiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    return _call(backend, compiled, inputs)


def _call(backend, c: GradCompiled, inputs) -> Dict[str, np.ndarray]:
    import torch

    from nnfuzz.materialize.torch.grad import backward, grad_name, upstream_name
    from nnfuzz.materialize.values import to_numpy, to_torch

    device = backend.torch_device
    gir, spec = c.gir, c.spec
    xs = {i: to_torch(inputs[i], gir.vars[i].dtype).to(device) for i in gir.inputs}
    ups = {n: to_torch(inputs[upstream_name(n)], gir.vars[n].dtype).to(device) for n in spec.outputs}
    leaves = {}
    for name in spec.wrt:
        if name in xs:
            leaves[name] = xs[name] = xs[name].requires_grad_(True)
        else:
            leaves[name] = getattr(c.module, name)
    with torch.enable_grad(), backend._default_device():
        backend.entering("forward")  # (torch.compile traces the joint graph here and compiles the forward)
        outs = c.fn(*[xs[i] for i in gir.inputs])
        backend._sync()  # a GPU's asynchronous fault in the forward shows here, not in the backward
        backend.entering("backward")  # (the backward graph is compiled on its first call, then run)
        grads = backward(outs, gir.outputs, leaves, ups)
        values = {n: to_numpy(o.detach().cpu()) for n, o in zip(gir.outputs, outs)}
        for name in spec.wrt:
            g = grads.get(grad_name(name))
            values[grad_name(name)] = to_numpy(g.detach().cpu()) if g is not None else \
                np.zeros([int(d) for d in gir.vars[name].shape], gir.vars[name].dtype.numpy())
    backend._sync()
    return values
