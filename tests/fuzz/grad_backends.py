"""Test-tier backends for ``oracle=grad``: the inductor backend's gradient path (nnfuzz/backends/torch_grad.py)
with torch eager in place of torch.compile, so a gradient test runs in milliseconds in the test's process.
``EagerGradBackend`` gives eager's gradients (every test passes); ``WrongGradBackend`` passes each float
output through a custom autograd function whose forward is the identity and whose backward doubles the
gradient: the forward matches and the backward graph is wrong, a fault no real system gives on demand; the
backends that raise in the forward or the backward, or die in the backward, are the crashes no real system
gives on demand in the part asked for."""
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


FAULT = "injected fault: the kernel failed"  # one message, raised in the forward or in the backward


class RaisingForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        raise RuntimeError(FAULT)

    @staticmethod
    def backward(ctx, g):
        return g


class RaisingBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError(FAULT)


class DyingBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        import signal

        from nnfuzz.fuzz import inprocess

        inprocess.die(signal.SIGSEGV)  # a worker process would die here


class SegfaultingBackward(RaisingBackward):
    @staticmethod
    def backward(ctx, g):
        import os
        import signal

        os.kill(os.getpid(), signal.SIGSEGV)  # (in a worker process: a native crash in a backward kernel)


class _Through(torch.nn.Module):
    """The module with each float output passed through ``fn`` (a torch.autograd.Function)."""

    def __init__(self, inner, fn):
        super().__init__()
        self.inner, self.fn = inner, fn

    def forward(self, *xs):
        return tuple(self.fn.apply(o) if o.is_floating_point() else o for o in self.inner(*xs))


class WrongGradBackend(EagerGradBackend):
    name = "wronggrad-cpu"
    fn = DoubledGrad

    def compile_grad_module(self, module):
        return _Through(module, self.fn)


class ForwardRaisesBackend(WrongGradBackend):
    """The compiled forward raises FAULT (the forward-only runs of localization pass)."""

    name = "fwdraises-cpu"
    fn = RaisingForward


class BackwardRaisesBackend(WrongGradBackend):
    """The forward is right and the backward raises FAULT: the same message as ForwardRaisesBackend's."""

    name = "bwdraises-cpu"
    fn = RaisingBackward


class BackwardDiesBackend(WrongGradBackend):
    """The backward kills the worker (SIGSEGV), as a native crash in a backward kernel would."""

    name = "bwddies-cpu"
    fn = DyingBackward


class SlowGradBackend(EagerGradBackend):
    """Takes 2 simulated seconds to compile each model (fuzz/inprocess.py ``take``): a test's forward and
    backward compile."""

    name = "slowgrad-cpu"

    def compile(self, model_bytes: bytes):
        from nnfuzz.fuzz import inprocess

        inprocess.take(2.0)
        return super().compile(model_bytes)


class BackwardSegfaultsBackend(WrongGradBackend):
    """(In a worker process only.) The backward dies by SIGSEGV."""

    name = "bwdsegv-cpu"
    fn = SegfaultingBackward
