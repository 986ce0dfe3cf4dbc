"""Model and ReferenceData: a concrete graph with its weights, inputs and reference outputs (what a bug
folder's oracle.pkl holds)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, Optional

import numpy as np

from nnfuzz.gir import GraphIR
from nnfuzz.materialize.values import all_finite, random_array

JITTER_RUNS = 4  # jittered twin runs; their envelope (per element, the run furthest from the twin) is kept
ROUNDING_RUNS, ROUNDING_ULPS = 4, 2  # twin runs with every op's outputs moved by 2 ulps (rounding)


@dataclass
class ReferenceData:
    """Inputs and reference outputs (saved as oracle.pkl). ``output`` is None when the reference is undefined (NaN/Inf)."""

    input: Dict[str, np.ndarray]
    output: Optional[Dict[str, np.ndarray]]
    # the float64 twin's outputs (None if it could not run), and per output the envelopes (stacked: the
    # coarse jitter's, then the rounding-level one's) of twin runs with every value moved by some ulps of
    # its dtype: together they tell precision noise and ill-conditioning from bugs (see add_twins)
    output_f64: Optional[Dict[str, np.ndarray]] = None
    output_f64_jitter: Optional[Dict[str, np.ndarray]] = None
    # a dynamic model's bug (docs/dynamic-shapes.md): every shape's {"input", "output"}, in the family's
    # order (the fields above are the failing shape's), so that a replay runs them all
    shapes: Optional[list] = None

    def to_dict(self) -> dict:
        return {"input": self.input, "output": self.output, "output_f64": self.output_f64,
                "output_f64_jitter": self.output_f64_jitter, **({"shapes": self.shapes} if self.shapes else {})}


@dataclass
class Model:
    gir: GraphIR
    weights: Dict[str, np.ndarray]
    oracle: ReferenceData                # the inputs and reference outputs (oracle.pkl)
    onnx: object = None  # onnx.ModelProto once exported
    export: object = None  # the ExportSpec it was exported with (the opset actually used)
    spellings: Dict[str, Dict[str, str]] = field(default_factory=dict)  # drawn per node (direct path)
    timings: Dict[str, float] = field(default_factory=dict)
    # kept (not serialised) to compute the twins on demand: the GraphModule, its torch inputs, the seed
    module: object = None
    torch_inputs: list = field(default_factory=list)
    seed: int = 0
    search: Optional[dict] = None  # the value search's summary (SearchResult.summary()), if it ran
    twin_note: Optional[str] = None  # why add_twins could not compute the float64 twins (recorded in meta.json)


def random_values(gir: GraphIR, rng: np.random.Generator):
    weights = {w: random_array(gir.vars[w], rng) for w in gir.weights}
    inputs = {i: random_array(gir.vars[i], rng) for i in gir.inputs}
    return weights, inputs


def build_model(gir: GraphIR, seed: int, *, export=True, twins: bool = False, search=None,
                values: Optional[tuple] = None, start: Optional[tuple] = None) -> Model:
    """Weights and inputs, torch-eager reference outputs (checked against type_transfer), and, with
    ``export`` (an ExportSpec; True: the default one, spellings drawn from ``seed``), the ONNX model
    checked by the full checker and shape inference.

    Values are drawn from ``seed``; with ``search`` (a SearchConfig) the gradient-guided search then
    looks for values that keep every value in the graph safe, and when it finds none within its
    budget the reference is undefined (``oracle.output`` is None). ``values=(weights, inputs)``
    uses given values instead (a model rebuilt from a bug folder or another process); ``start=(weights,
    inputs)`` are the values the search starts from instead of drawn ones (value-aware generation's,
    which it checks once and keeps).
    ``twins`` also computes the float64 twins now (otherwise ``add_twins`` does when needed)."""
    import torch

    from nnfuzz.materialize.torch.module import GraphModule
    from nnfuzz.materialize.values import to_numpy, to_torch

    result = None
    t0 = time.perf_counter()
    if values is not None:
        weights, inputs = values
    else:
        weights, inputs = start if start is not None else random_values(gir, np.random.default_rng(seed))
        if search is not None and search.enabled:
            from nnfuzz.materialize.search import search_values

            result = search_values(gir, weights, inputs, search, seed)
            weights, inputs = result.weights, result.inputs
    search_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    module = GraphModule(gir, weights).eval()
    xs = [to_torch(inputs[i], gir.vars[i].dtype) for i in gir.inputs]
    with torch.no_grad():
        outs = module.run_checked(*xs)
    arrays = {name: to_numpy(o) for name, o in zip(gir.outputs, outs)}
    # NaN/Inf anywhere, even in an intermediate that a later op hides (sign(nan), nan < 1), is undefined
    # behaviour: systems legitimately differ on it, so there is no reference to compare against. So is
    # a value the search could not bring into an op's domain (an integer overflow, a cast out of range).
    finite = module.all_finite and all_finite(arrays)
    defined = finite and (result is None or result.ok)
    model = Model(gir, weights, ReferenceData(inputs, arrays if defined else None))
    model.module, model.torch_inputs, model.seed = module, xs, seed
    if result is not None:
        model.search = result.summary()
        model.timings["search_s"] = search_s
    if twins:
        add_twins(model)
    model.timings["torch_s"] = time.perf_counter() - t0
    if export:
        from nnfuzz.materialize.onnx.export import check_onnx, to_onnx
        from nnfuzz.materialize.onnx.spec import ExportSpec

        spec = ExportSpec(seed=seed) if export is True else export
        t0 = time.perf_counter()
        proto, model.export, model.spellings = to_onnx(gir, weights, module, xs, spec)
        model.timings["export_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        check_onnx(proto, [gir.vars[o] for o in gir.outputs], gir.outputs, where="generated model")
        model.timings["check_s"] = time.perf_counter() - t0
        model.onnx = proto
    return model


def add_twins(model: Model) -> Model:
    """Fill ``oracle.output_f64`` / ``output_f64_jitter`` (the float64 twin, plain and jittered).

    ``output_f64_jitter[name]`` stacks two envelopes. The first, of ``JITTER_RUNS`` runs with every
    value jittered by ``JITTER`` (how far another system's kernels may drift), sizes the allowance. The
    second, of ``ROUNDING_RUNS`` runs with each op's outputs moved by ``ROUNDING_ULPS`` ulps (the
    rounding any system adds), marks the values the graph does not determine: those that rounding
    alone moves beyond the tolerance, which compare allows a far wider margin. The first cannot show
    them: where a value jumps (an fmod by a tiny computed divisor), the large jitter lands on a few
    arbitrary points of the jump's range, which may all lie nearer the twin than a system's 1-ulp error
    lands (in ``fmod(a, fmod(a, x - tanh(x)))`` it also scrambles the inner fmod, narrowing the outer's range).

    Only needed to judge a disagreement, so campaigns call it when a backend disagrees with the
    reference. Deterministic: the jitter is drawn from the model's seed."""
    import torch

    o = model.oracle
    if o.output is None or o.output_f64 is not None:
        return model
    gir, module, xs = model.gir, model.module, model.torch_inputs
    rng = np.random.default_rng([model.seed, 64])
    try:
        with torch.no_grad():
            shadow = {n: t.numpy() for n, t in zip(gir.outputs, module.run_float64(*xs))}
            runs = [module.run_float64(*xs, jitter=rng) for _ in range(JITTER_RUNS)]
            rounding = [module.run_float64(*xs, jitter=rng, ulps=ROUNDING_ULPS) for _ in range(ROUNDING_RUNS)]
    except RuntimeError as e:  # an op whose lowering insists on its dtype: judged without the twin, and said so
        model.twin_note = f"the float64 twin could not run: {type(e).__name__}: {str(e).strip()[:300]}"
        return model
    o.output_f64 = shadow
    o.output_f64_jitter = {n: np.stack([_envelope(shadow[n], [r[k].numpy() for r in rs]) for rs in (runs, rounding)])
                           for k, n in enumerate(gir.outputs)}
    return model


def _envelope(twin: np.ndarray, runs) -> np.ndarray:
    """Per element, the jittered value furthest from the twin (any run that flips a discrete value)."""
    out = runs[0].copy()
    if out.dtype.kind == "f":
        for r in runs[1:]:
            far = np.abs(r - twin) > np.abs(out - twin)
            out[far] = r[far]
    else:
        for r in runs[1:]:
            flip = (r != twin) & (out == twin)
            out[flip] = r[flip]
    return out
