"""QDQ graphs: a float graph rewritten the way quantization tools (ONNX Runtime's quantize_static, NNCF,
TensorRT's toolkit) write quantized models: each quantizable float32 node (Conv, MatMul, Gemm, Linear,
Add, Mul, pooling, Concat, activations, data movement) reads its float inputs through
QuantizeLinear -> DequantizeLinear and its output is quantized and dequantized again, so that a system
may fuse DQ -> op -> Q into an integer kernel (QLinearConv, QLinearMatMul, QLinearAdd, ...).

Scales and zero points are calibrated, as the tools calibrate them, on the values the model will be built
with (the value-aware generator's, or the draws ``build_model`` makes from the seed): the float graph is
evaluated by the numpy reference and each quantized tensor gets the range it shows, widened or narrowed a
little at random (a narrowed range saturates some values, as a clipping calibration does). Weights are
int8 or int4, symmetric, per tensor, per output channel or (opset 21+) in blocks along the input channels
(as weight-only int4 tools write them); activations uint8 or uint16 asymmetric, int8 or int16 symmetric;
each drawn per graph among the types the campaign's systems take (``qdq_types``). A tensor read by
several nodes is quantized once (one scale shared by its readers); the data-movement ops (pooling by max, Transpose, Reshape, ...) keep their input's scale, as the
tools write them so that a system can drop their Q/DQ pair; the inputs of an Add or a Concat may share one
scale (drawn). ``mgen.quantized`` is the share of graphs made this way (docs/quantization.md).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, Optional, Tuple

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.ops.quant.spec import QRANGE

F32 = DType.float32
# Which ops are quantized, and how, is data on each op's spec (``AbsOpBase.qdq``, ``qdq_weight``): "compute"
# ops sit between DQ and Q, "same" ops (data movement) keep their input's scale, a ``qdq_weight`` names the
# weight input quantized per output channel.
QDQ_WEIGHT = 4.0  # op weight of the QDQ ops in a quantized graph's generation (1: as often as the others)
# the element types drawn per graph, with their weights (the tools' defaults first), and the first opset
# that writes each type, or blocked quantization, where it is not 13
ACT_TYPES = {DType.uint8: 0.45, DType.int8: 0.3, DType.int16: 0.15, DType.uint16: 0.1}
WEIGHT_TYPES = {DType.int8: 0.7, DType.int4: 0.3}
SINCE = {DType.int16: 21, DType.uint16: 21, DType.int4: 21, "blocked": 21}
WEIGHT_BLOCKS = (2, 4, 8, 16, 32)  # block sizes of blocked weights: those that divide the axis, as int4 tools
# write them (a shorter last block is drawn by the quant family's own QuantizeLinear and DequantizeLinear)


@dataclasses.dataclass(frozen=True)
class QParams:
    """One tensor's quantization: dtype, scale (a float, or per slice along ``axis``, or per block of
    ``block_size`` along it: a tuple in C order), zero point."""
    dtype: DType
    scale: object
    zero_point: int
    axis: Optional[int] = None
    block_size: Optional[int] = None


def qdq_types(rows, cap: Optional[int], blocked: bool = True, dtypes=None) -> frozenset:
    """The QDQ element types (and "blocked") a campaign draws: those whose QuantizeLinear and DequantizeLinear
    rows its systems were probed to take (``rows``: op name -> rows; an op not named takes all), at opsets up
    to ``cap`` (the newest at which they run QDQ graphs; None: any); "blocked" where ``blocked`` (probed too:
    fuzz/qdq_opsets.py); only types in ``dtypes`` (mgen.dtypes' set; None: any)."""
    f32, out = DType.float32, set()
    for t in (set(ACT_TYPES) | set(WEIGHT_TYPES)) & (set(dtypes) if dtypes is not None else set(DType)):
        q, dq = (rows or {}).get("QuantizeLinear"), (rows or {}).get("DequantizeLinear")
        if (q is None or ((f32,), (t,)) in q) and (dq is None or ((t,), (f32,)) in dq):
            out.add(t)
    return frozenset(k for k in out | ({"blocked"} if blocked else set()) if cap is None or SINCE.get(k, 13) <= cap)


def quantized_draw(policy, share: float, seed: int, ops) -> Optional[object]:
    """The policy to generate a QDQ graph from, when ``seed`` draws one (a ``share`` of seeds, ``ops``
    holding QuantizeLinear and DequantizeLinear); None: a plain graph. Its tensors are float32 (and the
    int64/bool an index needs) and the QDQ ops are drawn ``QDQ_WEIGHT`` times as often."""
    from nnfuzz.ops.quant.spec import DequantizeLinear, QuantizeLinear

    if share <= 0 or not {QuantizeLinear, DequantizeLinear} <= set(ops) or "float32" not in policy.dtypes:
        return None
    if np.random.default_rng([int(seed), 0x0D0]).random() >= share:
        return None
    dtypes = [d for d in ("float32", "int64", "bool") if d in policy.dtypes]
    weights = {**{c.name: QDQ_WEIGHT for c in ops if c.qdq}, **policy.op_weights}
    return dataclasses.replace(policy, dtypes=dtypes, op_weights=weights)


def insert_qdq(gir: GraphIR, seed: int, values: Tuple[Dict, Dict], types=None) -> Tuple[GraphIR, Dict]:
    """(``gir`` with QDQ around its quantizable float32 nodes, a summary {"nodes": quantized nodes,
    "pairs": Q/DQ pairs, "activations": dtype, "weights": dtype, "per_channel": bool, "blocked": bool}).
    ``values``: (weights, inputs) the model will start from, on which the scales are calibrated; ``types``:
    the element types to draw from (``qdq_types``; None: all). The placeholders are unchanged."""
    from nnfuzz.reference import evaluate

    rng = np.random.default_rng([int(seed), 0x0D1])
    with np.errstate(all="ignore"):
        env = evaluate(gir, values[0], values[1])
    w = _Writer(gir, env, rng, frozenset(ACT_TYPES) | frozenset(WEIGHT_TYPES) | {"blocked"} if types is None else types)
    for inst in gir.insts:
        w.visit(inst)
    out = GraphIR(vars=w.vars, inputs=list(gir.inputs), weights=list(gir.weights), insts=w.insts,
                  outputs=[w.cur.get(o, o) for o in gir.outputs]).check()
    return out, {"nodes": w.nodes, "pairs": w.pairs, "activations": w.act.value, "weights": w.wt.value,
                 "per_channel": w.per_channel, "blocked": w.blocked}


class _Writer:
    def __init__(self, gir: GraphIR, env, rng, types):
        self.gir, self.env, self.rng = gir, env, rng
        self.vars = dict(gir.vars)
        self.insts = []
        self.cur: Dict[str, str] = {}           # original var -> the var its readers read now
        self.dq: Dict[str, Tuple[str, QParams]] = {}  # var -> (its DQ output, its quantization)
        self.dq_outputs = set()
        self.nodes = self.pairs = 0
        self.act = _draw(rng, ACT_TYPES, types, DType.uint8)
        self.wt = _draw(rng, WEIGHT_TYPES, types, DType.int8)
        self.per_channel = bool(rng.random() < 0.5)
        self.blocked = bool(self.per_channel and "blocked" in types and rng.random() < 0.4)

    def visit(self, inst: Inst) -> None:
        ins = [self.cur.get(v, v) for v in inst.inputs]
        op = inst.op
        floats = [k for k, v in enumerate(ins) if self.vars[v].dtype is F32]
        if op.qdq is None or not floats or any(self.vars[o].dtype is not F32 for o in inst.outputs):
            self.insts.append(Inst(inst.op, ins, list(inst.outputs)))
            return
        self.nodes += 1
        shared = None
        if op.qdq_weight is None and len(floats) > 1 and self.rng.random() < 0.5:  # Add, Mul, Concat
            fresh = [inst.inputs[k] for k in floats if inst.inputs[k] not in self.dq]
            shared = self._calibrated(fresh) if fresh else None
        for k in floats:
            src = inst.inputs[k]
            if ins[k] in self.dq_outputs:
                continue  # already dequantized (the output of a quantized node)
            if src not in self.dq:
                qp = shared or self._weight_params(op, k, src) or self._calibrated([src])
                self._pair(src, ins[k], qp)
            ins[k] = self.dq[src][0]
        self.insts.append(Inst(inst.op, ins, list(inst.outputs)))
        for o in inst.outputs:
            qp = self.dq[inst.inputs[floats[0]]][1] if op.qdq == "same" else self._calibrated([o])
            if qp.axis is not None:  # a per-channel input's scale does not carry over to the output
                qp = self._calibrated([o])
            self._pair(o, o, qp)
            self.cur[o] = self.dq[o][0]

    def _pair(self, key: str, var: str, qp: QParams) -> None:
        from nnfuzz.ops.quant.spec import DequantizeLinear, QuantizeLinear

        q, dq = self._fresh(f"{key}_q"), self._fresh(f"{key}_dq")
        qop = QuantizeLinear(to=qp.dtype, scale=qp.scale, zero_point=qp.zero_point, axis=qp.axis,
                             block_size=qp.block_size)
        dqop = qop.closing()
        self.vars[q] = qop.checked_type_transfer([self.vars[var]])[0]
        self.vars[dq] = dqop.checked_type_transfer([self.vars[q]])[0]
        self.insts += [Inst(qop, [var], [q]), Inst(dqop, [q], [dq])]
        self.dq[key] = (dq, qp)
        self.dq_outputs.add(dq)
        self.pairs += 1

    def _fresh(self, hint: str) -> str:
        name, k = hint, 1
        while name in self.vars:
            k += 1
            name = f"{hint}{k}"
        return name

    def _weight_params(self, op, k: int, var: str) -> Optional[QParams]:
        """Int8 symmetric quantization of a weight read as one (the op's ``qdq_weight`` input: a Conv's, MatMul's,
        Gemm's or Linear's; per channel along its axis where the draw says so); other weights are quantized as
        activations, as the tools do."""
        if var not in self.gir.weights or op.qdq_weight is None or op.qdq_weight[0] != k:
            return None
        v = self._values(var)
        axis, top = op.qdq_weight[1], float(QRANGE[self.wt][1])
        if self.per_channel and axis is not None and v.ndim >= 2:
            axis = axis % v.ndim
            if self.blocked:  # along the input channels: the axis beside the output channels'
                qp = self._blocked(v, 1 if axis == 0 else v.ndim - 2, top)
                if qp is not None:
                    return qp
            mags = np.abs(np.moveaxis(v, axis, 0).reshape(v.shape[axis], -1)).max(axis=1)
            scales = tuple(_scale(m * self._widen() / top) for m in mags)
            return QParams(self.wt, scales, 0, axis)
        return QParams(self.wt, _scale(float(np.abs(v).max(initial=0.0)) * self._widen() / top), 0)

    def _blocked(self, v: np.ndarray, axis: int, top: float) -> Optional[QParams]:
        """Symmetric scales of ``v`` per block along ``axis``, of one of ``WEIGHT_BLOCKS`` that divide it
        (drawn; None: none does)."""
        sizes = [b for b in WEIGHT_BLOCKS if v.shape[axis] % b == 0]
        if not sizes:
            return None
        b = int(self.rng.choice(sizes))
        n = -(-v.shape[axis] // b)
        a = np.moveaxis(np.abs(v), axis, 0)
        a = np.concatenate([a, np.zeros((n * b - a.shape[0],) + a.shape[1:])]).reshape((n, b) + a.shape[1:])
        mags = np.moveaxis(a.max(axis=1), 0, axis)  # the blocked shape
        widen = self._widen()
        return QParams(self.wt, tuple(_scale(m * widen / top) for m in mags.ravel()), 0, axis, b)

    def _calibrated(self, names) -> QParams:
        """Per-tensor parameters covering the values of ``names`` (one shared scale for several)."""
        vals = [self._values(n) for n in names]
        lo = min([0.0] + [float(v.min()) for v in vals if v.size])
        hi = max([0.0] + [float(v.max()) for v in vals if v.size])
        widen = self._widen()
        qlo, qhi = QRANGE[self.act]
        if qlo < 0:  # signed: symmetric
            return QParams(self.act, _scale(max(-lo, hi) * widen / qhi), 0)
        scale = _scale((hi - lo) * widen / qhi)
        zp = int(np.clip(np.rint(-lo / scale), 0, qhi))
        return QParams(self.act, scale, zp)

    def _values(self, name: str) -> np.ndarray:
        v = np.asarray(self.env.get(name, np.zeros(0)), dtype=np.float64)
        return np.where(np.isfinite(v), v, 0.0)

    def _widen(self) -> float:
        """The calibrated range's factor: as seen, a little wider, or clipped (saturating some values), drawn
        from a continuum so that two scales are in no simple ratio (a ratio of 5/4 makes a quarter of a
        requantization's results exact ties, which no calibration gives)."""
        return float(self.rng.choice([1.0, self.rng.uniform(1.0, 1.3), self.rng.uniform(0.75, 1.0)]))


def _draw(rng, weights: Dict[DType, float], allowed, fallback: DType) -> DType:
    """One of ``weights``' types that ``allowed`` holds, by weight (``fallback`` if none)."""
    ts = [t for t in weights if t in allowed]
    if not ts:
        return fallback
    p = np.asarray([weights[t] for t in ts])
    return ts[int(rng.choice(len(ts), p=p / p.sum()))]


def _scale(s: float) -> float:
    """A usable float32 scale: positive, normal, rounded to float32."""
    if not np.isfinite(s) or s < 1e-6:
        s = 1e-6 if np.isfinite(s) and s > 0 else 1.0
    return float(np.float32(s))
