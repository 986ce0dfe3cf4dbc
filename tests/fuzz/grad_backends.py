"""Test-tier backends for ``oracle=grad``: the inductor backend's gradient path (nnfuzz/backends/torch_grad.py)
with torch eager in place of torch.compile, so a gradient test runs in milliseconds in the test's process.
``EagerGradBackend`` gives eager's gradients (every test passes); ``WrongGradBackend`` passes each float
output through a custom autograd function whose forward is the identity and whose backward doubles the
gradient: the forward matches and the backward graph is wrong, a fault no real system gives on demand."""
from __future__ import annotations

import torch

from nnfuzz.backends.inductor import InductorCpuBackend


class EagerGradBackend(InductorCpuBackend):
    name = "eagergrad-cpu"

    def warm_up(self) -> None:
        pass  # nothing compiles

    def compile(self, model_bytes: bytes):
        from nnfuzz.backends.torch_grad import compile_grad
        from nnfuzz.materialize.portable import grad_spec, unpack
        from nnfuzz.materialize.torch.module import GraphModule

        gir, weights = unpack(model_bytes)
        spec = grad_spec(model_bytes)
        if spec is not None:
            return compile_grad(self, gir, weights, spec)
        return GraphModule(gir, weights).eval(), gir  # the forward alone (localization's runs)

    def compile_grad_module(self, module):
        return module


class DoubledGrad(torch.autograd.Function):
    """The identity, with a backward that doubles the gradient (the injected fault)."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return 2 * g


class _WrongBackward(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, *xs):
        return tuple(DoubledGrad.apply(o) if o.is_floating_point() else o for o in self.inner(*xs))


class WrongGradBackend(EagerGradBackend):
    name = "wronggrad-cpu"

    def compile_grad_module(self, module):
        return _WrongBackward(module)


class SlowGradBackend(EagerGradBackend):
    """Takes 2 simulated seconds to compile each model (fuzz/inprocess.py ``take``): a test's forward and
    backward compile."""

    name = "slowgrad-cpu"

    def compile(self, model_bytes: bytes):
        from nnfuzz.fuzz import inprocess

        inprocess.take(2.0)
        return super().compile(model_bytes)
