"""GraphIR -> torch.nn.Module. Weights are parameters (float) or buffers (other dtypes)."""
from __future__ import annotations

from typing import Dict

import numpy as np
import torch

from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import OpDefinitionError
from nnfuzz.gir import GraphIR
from nnfuzz.materialize.torch.lowering import graph_lowerings, lowering_error
from nnfuzz.materialize.torch.ties import flip_ties
from nnfuzz.materialize.values import to_torch


ULP = {DType.float16: 2.0 ** -10, DType.bfloat16: 2.0 ** -7, DType.float32: 2.0 ** -23, DType.float64: 2.0 ** -52}
# Relative jitter per dtype for the twin: several ulps for the half types, more for float32/float64, whose
# kernels differ between systems by more than their tiny ulp (fusion, reassociation, fast-math paths).
JITTER = {DType.float16: 8 * ULP[DType.float16], DType.bfloat16: 4 * ULP[DType.bfloat16],
          DType.float32: 512 * ULP[DType.float32], DType.float64: 2.0 ** 20 * ULP[DType.float64]}


def _jitter_eps(dtype: DType, jitter, ulps, computed: bool) -> float:
    """The relative jitter of a value of ``dtype``: none without ``jitter``; ``ulps`` ulps on op
    outputs only when ``ulps`` is given; ``JITTER`` otherwise."""
    if jitter is None or (ulps is not None and not computed):
        return 0.0
    return ulps * ULP.get(dtype, 0.0) if ulps is not None else JITTER.get(dtype, 0.0)


def _jittered(t, eps: float, rng, rounding: bool):
    """``t`` moved by a random relative amount up to ``eps`` (``rounding``: by exactly ``eps``, up or
    down), plus up to ``eps / 8`` of the tensor's largest magnitude: a result of cancellation (a tiny
    difference of large values, also inside one op such as x - tanh(x)) is only as exact as its inputs."""
    u = torch.from_numpy(rng.uniform(-1.0, 1.0, size=(2,) + tuple(t.shape)))
    scale = float(t.detach().abs().nan_to_num(0.0, 0.0, 0.0).max())
    return t * (1 + eps * (torch.sign(u[0]) if rounding else u[0])) + (eps / 8) * scale * u[1]


class GraphModule(torch.nn.Module):
    def __init__(self, gir: GraphIR, weights: Dict[str, np.ndarray]):
        super().__init__()
        self.gir = gir
        for name in gir.weights:
            t = to_torch(weights[name], gir.vars[name].dtype)
            if t.is_floating_point():
                self.register_parameter(name, torch.nn.Parameter(t, requires_grad=False))
            else:
                self.register_buffer(name, t)
        self._fns = graph_lowerings(gir)

    def forward(self, *inputs):
        return self._run(inputs, check=False)

    def run_float64(self, *inputs, jitter=None, ulps=None):
        """The same graph with every float op computed in float64 and every integer op in int64
        (explicit casts still round and wrap): the high-precision twin that tells numeric noise and
        integer overflow (undefined behaviour in C++ runtimes) from real disagreements.

        ``jitter=rng`` also moves every float value (inputs, weights, each op's outputs) by a random
        relative amount up to ``JITTER[its dtype in the model]``, imitating another implementation's
        rounding at every step: where that changes a result (a comparison of near-equal values, a floor near an
        integer, an ill-conditioned op), the result is precision noise, not a bug.
        ``ulps=n`` (with ``jitter``) instead moves each op's outputs by n ulps of their dtype (up or
        down, plus the absolute part below) and leaves inputs and weights exact, as they are in every
        system: the rounding any implementation adds at each step. A result that this moves beyond the
        tolerance is not determined by the graph, only its scale (see compare).
        """
        def up(t, var, computed=False):
            if t.is_floating_point():
                eps = _jitter_eps(self.gir.vars[var].dtype, jitter, ulps, computed)
                t = t.double()
                return _jittered(t, eps, jitter, rounding=ulps is not None) if eps and t.numel() else t
            return t if t.dtype in (torch.bool, torch.int64) else t.long()

        self._jitter_runs = getattr(self, "_jitter_runs", 0) + (jitter is not None)
        made = {v for inst in self.gir.insts for v in inst.outputs}
        env = {k: up(v, k) for k, v in zip(self.gir.inputs, inputs)}
        for name in self.gir.weights:
            env[name] = up(getattr(self, name), name)
        for fn, inst in zip(self._fns, self.gir.insts):
            args = [env[v] for v in inst.inputs]
            out = fn(inst.op, *args)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            if jitter is not None and inst.inputs:
                # a near tie is as near as the inputs may have moved: in a rounding run, not at all where they are
                # the graph's inputs and weights (exact in every system: a Ceil of an input never flips there)
                moved = _jitter_eps(self.gir.vars[inst.inputs[0]].dtype, jitter, ulps, any(v in made for v in inst.inputs))
                outs = flip_ties(inst.op, args, outs, 4 * moved, side=1 if self._jitter_runs % 2 else -1, rng=jitter)
            env.update((v, up(t, v, computed=True)) for v, t in zip(inst.outputs, outs))
        return tuple(env[v] for v in self.gir.outputs)

    def run_checked(self, *inputs):
        """Like forward, but checks each op's outputs against its type_transfer (names the op on
        mismatch) and sets ``all_finite``: False when any intermediate float value is NaN/Inf."""
        self.all_finite = True
        return self._run(inputs, check=True)

    def _run(self, inputs, check: bool):
        env = dict(zip(self.gir.inputs, inputs))
        for name in self.gir.weights:
            env[name] = getattr(self, name)
        for fn, inst in zip(self._fns, self.gir.insts):
            args = [env[v] for v in inst.inputs]
            if check:
                try:
                    out = fn(inst.op, *args)
                except Exception as e:
                    raise lowering_error(inst, self.gir, e, "its requires admits inputs that torch rejects") from e
            else:
                out = fn(inst.op, *args)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            if check:
                _check_outputs(inst, outs, self.gir)
                self.all_finite = self.all_finite and all(
                    bool(torch.isfinite(t).all()) for t in outs if t.is_floating_point())
            env.update(zip(inst.outputs, outs))
        return tuple(env[v] for v in self.gir.outputs)


def _check_outputs(inst, outs, gir) -> None:
    if len(outs) != len(inst.outputs):
        raise OpDefinitionError(
            f"{inst.op!r}: torch lowering returned {len(outs)} outputs, type_transfer declares {len(inst.outputs)}"
        )
    for k, (v, t) in enumerate(zip(inst.outputs, outs)):
        want = gir.vars[v]
        got_dt = DType.parse(t.dtype)
        if list(t.shape) != [int(d) for d in want.shape] or got_dt != want.dtype:
            ins = ", ".join(str(gir.vars[x]) for x in inst.inputs)
            raise OpDefinitionError(
                f"{inst.op!r} on inputs [{ins}]: type_transfer says output {k} is {want}, "
                f"but the torch lowering produced {got_dt.short}{list(t.shape)}"
            )
