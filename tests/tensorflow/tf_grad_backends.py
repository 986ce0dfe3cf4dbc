"""A test-tier TF system for ``oracle=grad`` whose gradients are wrong: the XLA backend's gradient path (its
reference is tf-cpu, TF eager) with each returned gradient doubled, a backward fault no real system gives on
demand. Built with ``jit_compile=False`` (backend option) it runs a plain tf.function: no XLA compile."""
from __future__ import annotations

from nnfuzz.backends.tf import XlaCpuBackend


class DoubledGradXlaBackend(XlaCpuBackend):
    name = "wrongxla-cpu"

    def run(self, compiled, inputs):
        out = super().run(compiled, inputs)
        return {k: 2 * v if k.startswith("grad:") else v for k, v in out.items()}
