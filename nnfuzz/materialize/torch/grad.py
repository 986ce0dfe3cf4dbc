"""Gradients of a graph (``oracle=grad``, docs/oracles.md): which values are differentiated, the drawn
upstream gradient, torch eager's gradients and their float64 twins.

A gradient test is an ordinary test with more named values: the upstream gradient of each output enters
as an extra input ``upstream:<output>`` and the gradient of each differentiated input or weight leaves as
an extra output ``grad:<name>``. So a gradient run crosses the sandbox, is judged (float64 twins, noise
envelopes) and is saved (oracle.pkl) as outputs are. The backward is that of ``sum(output * upstream)``
over the differentiable outputs: what ``torch.autograd.grad(outputs, wrt, upstream)`` computes.

What is differentiated is cut as autograd cuts it: float inputs and weights only (integer and boolean
values have no gradient), outputs that depend on one of them through differentiable ops only (a
comparison, an argmax, a cast to an integer ends the path), and only those inputs and weights that
some such output reaches. A graph left with none has no gradient to test (``GradSpec.of`` None).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Tuple

import numpy as np

UPSTREAM, GRAD = "upstream:", "grad:"   # the prefixes of the extra inputs and outputs
UPSTREAM_STREAM = 0x6AD                  # the upstream gradient's random stream (with the test's seed)


def upstream_name(output: str) -> str:
    return UPSTREAM + output


def grad_name(var: str) -> str:
    return GRAD + var


def is_grad(name: str) -> bool:
    return name.startswith(GRAD)


@dataclasses.dataclass(frozen=True)
class GradSpec:
    """What a gradient test differentiates: ``outputs`` (each with an upstream gradient) with respect to
    ``wrt`` (graph inputs and weights, by name). The GraphIR payload's ``grad`` header (portable.py)."""

    outputs: Tuple[str, ...]
    wrt: Tuple[str, ...]

    def to_json(self) -> dict:
        return {"outputs": list(self.outputs), "wrt": list(self.wrt)}

    @classmethod
    def from_json(cls, d) -> "GradSpec":
        from nnfuzz.errors import NNFuzzError

        if not (isinstance(d, dict) and all(isinstance(d.get(k), list) and all(isinstance(x, str) for x in d[k])
                                            for k in ("outputs", "wrt"))):
            raise NNFuzzError(f"malformed gradient record {d!r}: it must be {{outputs: [names], wrt: [names]}}")
        return cls(tuple(d["outputs"]), tuple(d["wrt"]))


def float_leaves(gir) -> List[str]:
    """The graph's inputs and weights that can take a gradient (floating point)."""
    return [v for v in list(gir.inputs) + list(gir.weights) if gir.vars[v].dtype.is_float]


def draw_upstream(gir, outputs, seed: int) -> Dict[str, np.ndarray]:
    """The upstream gradient of each of ``outputs``: standard normal values of the output's dtype, drawn
    from the test's seed (recorded in oracle.pkl as ``upstream:<output>`` inputs)."""
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, UPSTREAM_STREAM])
    out = {}
    for name in outputs:
        t = gir.vars[name]
        a = rng.standard_normal([int(d) for d in t.shape])
        out[upstream_name(name)] = a.astype(t.dtype.numpy())
    return out


def _torch_of(gir, values: Dict[str, np.ndarray]):
    from nnfuzz.materialize.values import to_torch

    return {k: to_torch(np.asarray(v), gir.vars[k].dtype) for k, v in values.items()}


def backward(outs, names, leaves, upstream) -> Dict[str, object]:
    """``grad:<leaf>`` -> torch.autograd.grad of ``sum(out * upstream)`` over the outputs that carry a
    gradient (by ``names``); a leaf no output reaches is left out (None)."""
    import torch

    pairs = [(o, upstream[n]) for o, n in zip(outs, names) if n in upstream and o.requires_grad]
    if not pairs or not leaves:
        return {}
    got = torch.autograd.grad([o for o, _ in pairs], list(leaves.values()), [u.to(o.device, o.dtype) for o, u in pairs],
                              allow_unused=True)
    return {grad_name(k): g for k, g in zip(leaves, got) if g is not None}


def eager(gir, weights, inputs, seed: int) -> Tuple[Optional[GradSpec], Dict, Dict]:
    """(the spec, upstream inputs, torch eager's outputs with the gradients) of the graph on its values:
    every float input and weight requires a gradient; the spec keeps those some differentiable output
    reaches (spec None: none does)."""
    import torch

    from nnfuzz.materialize.torch.module import GraphModule
    from nnfuzz.materialize.values import to_numpy

    module = GraphModule(gir, weights).eval()
    leaves_all = float_leaves(gir)
    xs = _torch_of(gir, {i: inputs[i] for i in gir.inputs})
    with torch.enable_grad():
        for name in leaves_all:
            (xs[name] if name in xs else getattr(module, name)).requires_grad_(True)
        outs = module(*[xs[i] for i in gir.inputs])
        outputs = tuple(n for n, o in zip(gir.outputs, outs) if o.requires_grad)
        if not outputs:
            return None, {}, {}
        upstream = draw_upstream(gir, outputs, seed)
        ups = _torch_of(gir, {n: upstream[upstream_name(n)] for n in outputs})
        leaves = {n: (xs[n] if n in xs else getattr(module, n)) for n in leaves_all}
        grads = backward(outs, gir.outputs, leaves, ups)
    if not grads:
        return None, {}, {}
    spec = GradSpec(outputs, tuple(n for n in leaves_all if grad_name(n) in grads))
    values = {n: to_numpy(o.detach()) for n, o in zip(gir.outputs, outs)}
    values.update({k: to_numpy(g) for k, g in grads.items()})
    return spec, upstream, values


def twins(gir, weights, inputs, spec: GradSpec, upstream, seed: int):
    """(float64 twin values, their envelopes) of the outputs and gradients, as materialize/model.py
    ``add_twins`` makes them for outputs: the graph in float64, plain, jittered (JITTER_RUNS) and moved by
    rounding (ROUNDING_RUNS), each differentiated with the same upstream gradient."""
    import torch

    from nnfuzz.materialize.model import JITTER_RUNS, ROUNDING_RUNS, ROUNDING_ULPS, _envelope
    from nnfuzz.materialize.torch.module import GraphModule

    module = GraphModule(gir, weights).eval()
    rng = np.random.default_rng([int(seed), 64])
    ups = {n: t.double() for n, t in _torch_of(gir, {n: upstream[upstream_name(n)] for n in spec.outputs}).items()}

    def run(**kw):
        xs = _torch_of(gir, {i: inputs[i] for i in gir.inputs})
        leaves = {}
        for n in spec.wrt:
            t = (xs[n] if n in xs else getattr(module, n)).detach().double().requires_grad_(True)
            leaves[n] = t
            if n in xs:
                xs[n] = t
        saved = {n: module._parameters[n] for n in spec.wrt if n not in xs}
        try:
            module._parameters.update({n: leaves[n] for n in saved})  # the float64 leaf in the weight's place
            with torch.enable_grad():
                outs = module.run_float64(*[xs[i] for i in gir.inputs], **kw)
                grads = backward(outs, gir.outputs, leaves, ups)
        finally:
            module._parameters.update(saved)
        values = {n: o.detach().numpy() for n, o in zip(gir.outputs, outs)}
        values.update({k: g.detach().numpy() for k, g in grads.items()})
        return values

    shadow = run()
    runs = [run(jitter=rng) for _ in range(JITTER_RUNS)]
    rounding = [run(jitter=rng, ulps=ROUNDING_ULPS) for _ in range(ROUNDING_RUNS)]
    jitter = {n: np.stack([_envelope(shadow[n], [r[n] for r in rs]) for rs in (runs, rounding)])
              for n in shadow if all(n in r for r in runs + rounding)}
    return shadow, jitter


# Gradient tolerances. A gradient entry is a sum of products over every path from the output to the
# value (a weight of a matmul sums over the batch and the reduced axis), so its rounding error scales with
# the magnitude of those terms, not with the entry: entries that cancel to near zero carry the error of
# the large terms they cancel. The largest entry of the same gradient tensor bounds that scale from
# below, so the absolute tolerance of a gradient is the dtype's atol times max(1, its largest |entry|)
# (rtol stays the dtype's). The float64 twins, differentiated the same way, then tell the remaining
# noise (ill-conditioning, values near a kink) from a bug as they do for outputs.
def tolerances(base: Dict[str, tuple], expected: Dict[str, np.ndarray]) -> Dict[str, tuple]:
    """``base`` (per dtype) plus a per-name entry for each gradient in ``expected`` (verdict.compare reads
    a tolerance by output name first)."""
    out = dict(base)
    for name, want in expected.items():
        want = np.asarray(want)
        if not is_grad(name) or want.dtype.kind != "f":
            continue
        rtol, atol = base.get(str(want.dtype), (1e-3, 1e-4))
        with np.errstate(all="ignore"):
            finite = want[np.isfinite(want)].astype(np.float64)
        scale = max(1.0, float(np.abs(finite).max()) if finite.size else 1.0)
        out[name] = (rtol, atol * scale)
    return out


def with_own_error(tol: Dict[str, tuple], expected: Dict[str, np.ndarray], twin: Dict[str, np.ndarray]) -> Dict[str, tuple]:
    """``tol`` with each gradient's atol raised to twice the reference's own largest distance from its float64
    twin in that gradient. Where a whole gradient cancels (d/dx of x / x: up/x - up*x/x^2, terms of 70 giving
    0 in float16) no entry shows the terms' scale, and eager itself is 0.03 from the truth; another system's
    rounding of the same terms is as far, the other way (an xla-cpu float16 DivNoNan)."""
    out = dict(tol)
    for name, want in expected.items():
        if not is_grad(name) or name not in tol or name not in twin or np.asarray(want).dtype.kind != "f":
            continue
        with np.errstate(all="ignore"):
            off = np.abs(np.asarray(want, np.float64) - np.asarray(twin[name], np.float64))
        off = off[np.isfinite(off)]
        if off.size:
            rtol, atol = tol[name]
            out[name] = (rtol, max(atol, 2.0 * float(off.max())))
    return out
