"""Each node's own error: the root cause of an inconsistency, and a precision fault at its source.

With every value of a graph exposed by the system under test, each node is evaluated by the numpy
reference (nnfuzz/reference) **on the system's own inputs to that node**, in float64 and not rounded,
and the system's output is measured against it in ulps of the output dtype (at each element's own
magnitude, with a floor near zero: nnfuzz/abstract/accuracy.py). A node is at fault when that error
passes its op's accuracy budget (``AbsOpBase.accuracy``), or its output's shape, dtype or non-finite
pattern differs. An error that only grows downstream of its source is not charged to the nodes it passes
through: each of them is judged on the values it was given. So one fault gives one root cause.

A system that documents lower precision than the graph's dtypes (``Backend.precision_allowance``: e.g.
float16 computed through float32 intermediates that only the exposed outputs round) is judged with each
such input known only to within half an ulp of its dtype: the node's output may lie anywhere the op maps
that interval to (a Ceil or a cast at a rounding boundary may go either way).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np

from nnfuzz.abstract.accuracy import FLOOR, accumulated, ulp
from nnfuzz.abstract.dtype import DType

# A result off by less than this, relative to its scale, is what a narrower dtype gives (a few float32 ulps
# for float64, a bfloat16 ulp for float32): it lost precision, not its value.
PRECISION_REL = {"float64": 2.0 ** -20, "float32": 2.0 ** -7}


@dataclasses.dataclass
class NodeError:
    """One output of one node, judged on the system's own inputs. ``kind`` None: within its budget."""

    index: int
    op: str                  # the op class name
    var: str
    dtype: str
    kind: Optional[str]      # None | shape | dtype | missing | non-finite | values | precision
    ulps: float              # its own error (float outputs; integer/bool: the count of differing elements)
    budget: float
    note: str = ""
    system_op: Optional[str] = None  # the one op the system ran for this node (``name_by_model``)

    def to_meta(self, method: str = "local-error") -> dict:
        return {"op": self.op, "dtype": self.dtype, "kind": self.kind, "index": self.index, "var": self.var,
                "ulps": _finite_or_str(self.ulps), "budget": self.budget, "method": method,
                **({"system_op": self.system_op} if self.system_op else {}),
                **({"note": self.note} if self.note else {})}

    def name_by_model(self, gir, onnx_model) -> "NodeError":
        """Name the op the system ran where the node's ONNX lowering is one node (nnfuzz's Shrink, Softshrink
        and Hardshrink are each one ONNX Shrink), so one fault of the system's kernel is one root cause
        whichever of nnfuzz's ops drew it."""
        from nnfuzz.triage.onnx_nodes import single_op

        self.system_op = single_op(gir, onnx_model, self.var)
        return self


def _finite_or_str(x: float):
    return float(x) if np.isfinite(x) else str(x)


def node_errors(op, index: int, ins: List[np.ndarray], outs: Mapping[str, Optional[np.ndarray]],
                declared: Mapping[str, DType], widened: Iterable[str] = (),
                allowance: Optional[Mapping[str, float]] = None, given: Sequence[bool] = ()) -> List[NodeError]:
    """The error of each output of ``op`` (outputs by var name, None where the system gave none) given
    its inputs ``ins`` (the system's own); ``declared``: each output var's dtype in the graph;
    ``widened``: the input dtypes known only to within half an ulp (the system's precision allowance);
    ``allowance``: an absolute error a float output may have besides its budget (``quantized_next``);
    ``given``: per input, whether it is a graph input or weight (its values exact, never widened)."""
    from nnfuzz.reference.registry import eval_for

    fn = eval_for(type(op))
    if fn is None:
        raise LookupError(f"{op.name} has no numpy reference eval")
    exact = _exact(fn, op, ins)
    band = _band(fn, op, ins, set(widened)) if widened else None
    in_shapes = [a.shape for a in ins]
    out_shapes = [e.shape for e in exact]
    budget = op.accuracy.budget(in_shapes, out_shapes)
    scale_in = max((float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0)) for a in ins
                    if a.dtype.kind == "f" or str(a.dtype) == "bfloat16"), default=0.0) if budget > 0 else 0.0
    if op.accuracy.accumulates:  # a sum's roundings scale with its partial sums, up to the terms' total
        scale_in *= max(1, accumulated(op.accuracy.terms, in_shapes, out_shapes))
    res = []
    for k, (var, got) in enumerate(outs.items()):
        dt = declared[var]
        e = NodeError(index, op.name, var, dt.value, None, 0.0, budget)
        res.append(e)
        want = exact[k]
        if got is None:
            e.kind = "missing"
        elif tuple(got.shape) != tuple(want.shape):
            e.kind, e.note = "shape", f"{list(got.shape)}, the op gives {list(want.shape)}"
        elif DType.parse(str(got.dtype)) is not dt:
            e.kind, e.note = "dtype", f"{got.dtype}, the graph declares {dt.value}"
        elif not dt.is_float:
            want = _cast(want, dt)
            steps = op.accuracy.steps  # an integer on a quantization grid may be that many steps off
            picks = _picked_alike(op, k, ins, want, got, set(widened), given)
            if picks is not None:
                differ = int(np.sum(~picks))
            elif band is None and steps:
                differ = int(np.sum(np.abs(want.astype(np.int64) - got.astype(np.int64)) > steps))
            elif band is None:
                differ = int(np.sum(want != got))
            else:  # either end of the band, or the exact value between them (a Cast to bool of a widened 0),
                # in either order once cast (-0.5 and 0.0 cast to bool read True, False)
                ends = (_cast(band[0][k], dt), _cast(band[1][k], dt))
                lo = np.minimum(np.minimum(*ends), want)
                hi = np.maximum(np.maximum(*ends), want)
                differ = int(np.sum((got < lo) | (got > hi)))
            e.ulps = float(differ)
            if differ:
                e.kind, e.note = "values", f"{differ}/{got.size} elements differ" + (f" by more than {steps} "
                                                                                      "quantization step" if steps else "")
        else:
            _judge_float(e, want, got.astype(np.float64), band and (band[0][k], band[1][k]), scale_in,
                         (allowance or {}).get(var, 0.0))
    return res


def _picked_alike(op, k: int, ins: List[np.ndarray], want: np.ndarray, got: np.ndarray, widened: set,
                  given: Sequence[bool] = ()):
    """For output ``k`` of indices into a widened input (``op.indexes``: output -> input, along ``op.axis``),
    per element, whether the system's index picks the value the exact one picks; None otherwise. Equal
    values of the input, as rounded, may be unequal in the precision the system computed them (ORT's
    float16 TopK on a float32 chain): their order is unknown, and any of them is right. (Rounding keeps
    order, so values unequal once rounded were ordered the same before.) A graph input's values are exact:
    its ties keep the spec's order (bugs/kept/0092: XLA's float16 top_k of a graph input's signed zeros)."""
    i = getattr(op, "indexes", {}).get(k)
    if i is None or str(ins[i].dtype) not in widened or (i < len(given) and given[i]):
        return None
    x, axis = ins[i], op.axis
    if got.ndim < x.ndim:  # ArgMax/ArgMin without keepdims: the axis they reduced comes back as 1
        return _picked_alike(op, k, ins, np.expand_dims(want, axis), np.expand_dims(got, axis), widened,
                             given).squeeze(axis)
    n = x.shape[axis]
    inside = (got >= -n) & (got < n)
    picked = np.take_along_axis(x, np.where(inside, got, 0).astype(np.int64), axis)
    return inside & (picked == np.take_along_axis(x, want.astype(np.int64), axis))


def _judge_float(e: NodeError, want: np.ndarray, got: np.ndarray, band, scale_in: float, allow: float = 0.0) -> None:
    lo, hi = band if band else (want, want)  # (_band's lows and highs, in order)
    lo, hi = np.minimum(lo, want), np.maximum(hi, want)
    fin_w, fin_g = np.isfinite(want), np.isfinite(got)
    if band:
        fin_w = fin_w & np.isfinite(lo) & np.isfinite(hi)
    nonfinite = (fin_w != fin_g) | (~fin_w & ~fin_g & ~((np.isnan(want) & np.isnan(got)) | (want == got)))
    if band is not None:  # an interval whose ends are not finite allows any non-finite value
        nonfinite &= np.isfinite(lo) & np.isfinite(hi)
    if nonfinite.any():
        e.kind, e.ulps = "non-finite", float("inf")
        e.note = f"{int(nonfinite.sum())}/{got.size} elements finite on one side only"
        return
    both = fin_w & fin_g
    if not both.any():
        return
    w, g, lo, hi = want[both], got[both], lo[both], hi[both]
    err = np.maximum(np.maximum(lo - g, 0.0) + np.maximum(g - hi, 0.0) - allow, 0.0)
    scale = max(float(np.max(np.abs(w))), scale_in)
    # near zero, ulps are counted at a floor: FLOOR of the output's scale, and the inputs' own scale, where
    # a result that cancels (x - tanh(x), x * Phi(x) for x < 0, sin of a large x) keeps only their digits
    denom = ulp(np.maximum(np.abs(w), max(FLOOR * float(np.max(np.abs(w))), scale_in)), e.dtype)
    ulps = err / denom
    worst = int(np.argmax(ulps))
    e.ulps = float(ulps[worst])
    slack = 1.0 if e.dtype == "float64" and e.budget > 0 else 0.0  # the reference itself computes in float64
    if e.ulps > e.budget + slack:
        rel = float(np.max(err) / max(scale, np.finfo(np.float64).tiny))
        lower = rel < PRECISION_REL.get(e.dtype, 0.0)
        e.kind = "precision" if lower else "values"
        e.note = (f"{int(np.sum(ulps > e.budget + slack))}/{got.size} elements beyond {e.budget:g} ulps; worst "
                  f"{float(g[worst])!r} where the op gives {float(w[worst])!r} ({e.ulps:.3g} ulps, relative {rel:.2g})")


def _exact(fn, op, ins: List[np.ndarray]) -> List[np.ndarray]:
    with np.errstate(all="ignore"):
        out = fn(op, *ins)
    return [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]


BAND_DRAWS = 8  # moves of the widened inputs, each element up or down on its own, beside all down and all up


def _band(fn, op, ins: List[np.ndarray], widened: set):
    """(lowest, highest) of the op's outputs, element by element, over its widened inputs moved by half an
    ulp of their dtype: all down, all up, and ``BAND_DRAWS`` moves with each element's direction drawn on
    its own (two tied values may round apart: an ArgMax may pick either; fmod(x - d, x) is reachable)."""
    if not any(str(a.dtype) in widened for a in ins):
        return None
    rng = np.random.default_rng(0)  # the same band on every replay

    def moved(pick):
        out = []
        for i, a in enumerate(ins):
            dt = str(a.dtype)
            if dt in widened and (a.dtype.kind == "f" or dt == "bfloat16"):
                v = a.astype(np.float64)
                out.append(v + pick(i, v.shape) * 0.5 * ulp(v, dt))
            else:
                out.append(a)
        return [np.asarray(o, dtype=np.float64) if np.asarray(o).dtype.kind in "fiub" else np.asarray(o)
                for o in _exact(fn, op, out)]
    runs = [moved(lambda i, shape: -1.0), moved(lambda i, shape: 1.0)]
    # each input against the others (a comparison's ends: x up and y down, x down and y up), every element at
    # once: drawn directions reach them for an element only now and then (ort-cpu: float16 x >= Tanh(x), whose
    # Tanh ORT compares unrounded, was judged off by one element the draws missed)
    # (one run per distinct pattern: with two inputs, "x up, y down" is also "y down, x up")
    against = {tuple(d if i == j else -d for i in range(len(ins))) for j in range(len(ins)) for d in (-1.0, 1.0)}
    runs += [moved(lambda i, shape, t=t: t[i]) for t in sorted(against) if len(set(t)) > 1]
    runs += [moved(lambda i, shape: rng.choice([-1.0, 1.0], size=shape)) for _ in range(BAND_DRAWS)]
    with np.errstate(invalid="ignore"):
        lows = [np.minimum.reduce([r[k] for r in runs]) for k in range(len(runs[0]))]
        highs = [np.maximum.reduce([r[k] for r in runs]) for k in range(len(runs[0]))]
    return lows, highs


def _cast(a: np.ndarray, dt: DType) -> np.ndarray:
    from nnfuzz.reference.registry import cast

    return cast(np.asarray(a), dt)


@dataclasses.dataclass
class LocalErrors:
    """A graph's nodes judged one by one: the first at fault (None: none), how many were judged, and
    why some could not be (an op without a numpy eval, an eval that failed on the system's values)."""

    root: Optional[NodeError]
    judged: int
    skipped: Dict[str, str] = dataclasses.field(default_factory=dict)   # var -> why


def scan(gir, weights: Mapping[str, np.ndarray], inputs: Mapping[str, np.ndarray],
         got: Mapping[str, np.ndarray], widened: Iterable[str] = (), prefer: Iterable[str] = ()) -> LocalErrors:
    """Judge every node of ``gir`` on the system's exposed values ``got`` (by var name); graph inputs and
    weights are the given values. Stops at the first node at fault; with ``prefer`` (kinds), at the first
    node at fault of one of those kinds, else the first node at fault."""
    from nnfuzz.errors import InternalError
    from nnfuzz.reference.registry import eval_op

    env = {**{k: np.asarray(v) for k, v in inputs.items()}, **{k: np.asarray(v) for k, v in weights.items()}}
    env.update({k: np.asarray(v) for k, v in got.items() if k not in env})
    widened = tuple(widened)
    allowance = dict(quantized_next(gir))
    judged, skipped, first = 0, {}, None
    prefer = tuple(prefer)
    carried: Dict[str, int] = {}  # an unexposed quantized-tensor value -> the steps its producer may be off
    for k, inst in enumerate(gir.insts):
        missing = [v for v in inst.inputs if v not in env]
        if missing:
            skipped.update({v: f"its input {missing[0]} is missing" for v in inst.outputs})
            continue
        if any(gir.vars[v].dtype.quant_only for v in inst.outputs):  # not exposed (localize.expose_all): the
            # reference's value on the system's own inputs feeds the DequantizeLinear, which shows a wrong one
            env.update(zip(inst.outputs, eval_op(inst.op, *[env[v] for v in inst.inputs])))
            skipped.update({v: "a quantized-tensor type, not exposed: judged through its DequantizeLinear"
                            for v in inst.outputs})
            carried.update({v: inst.op.accuracy.steps for v in inst.outputs})
            continue
        steps = max([carried[v] for v in inst.inputs if v in carried], default=0)
        if steps:  # its DequantizeLinear may be off by the steps the unexposed QuantizeLinear may be
            allowance.update({v: allowance.get(v, 0.0) + steps * inst.op.largest_scale() for v in inst.outputs})
        outs = {v: (np.asarray(got[v]) if v in got else None) for v in inst.outputs}
        try:
            errs = node_errors(inst.op, k, [env[v] for v in inst.inputs], outs,
                               {v: gir.vars[v].dtype for v in inst.outputs}, widened, allowance,
                               [v in inputs or v in weights for v in inst.inputs])
        except InternalError:
            raise
        except Exception as ex:  # noqa: BLE001 - a node the reference cannot judge is recorded, not guessed
            skipped.update({v: f"{type(ex).__name__}: {str(ex).strip()[:200]}" for v in inst.outputs})
            continue
        judged += 1
        for e in errs:
            if e.kind is not None and (not prefer or e.kind in prefer):
                return LocalErrors(e, judged, skipped)
            first = first or (e if e.kind is not None else None)
    return LocalErrors(first, judged, skipped)


def quantized_next(gir) -> Dict[str, float]:
    """{var: absolute allowance} for the values every reader of which quantizes them (an op with
    ``input_allowance``, QuantizeLinear) and that are no graph output: a system may compute such a value on
    the integer grid, off by the allowance (docs/quantization.md)."""
    readers: Dict[str, list] = {}
    for inst in gir.insts:
        for v in inst.inputs:
            readers.setdefault(v, []).append(inst.op)
    out = {}
    for v, ops in readers.items():
        if v not in gir.outputs and all(hasattr(op, "input_allowance") for op in ops):
            out[v] = min(op.input_allowance() for op in ops)
    return out

